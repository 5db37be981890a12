"""The cross-validated choice of the :class:`~tssdpa.filters.analogues.Structure` of each
horizon of :class:`~tssdpa.filters.ProjectionForecaster`.

:func:`choose_structures` scores every candidate by leave-one-out error on the training
series (or forward on its last part, ``holdout``; see :func:`drift_holdout`), with the keys
that share samples with the query excluded (``|j - t| <= (E-1)τ + h``), and keeps per horizon
the simplest candidate whose paired error is within two standard errors of the best (a
stricter form of the one-standard-error rule, since the best of several hundred candidates
looks better than it is): a linear process keeps the linear model unless a nonlinear one is
clearly better; among the global linear models near the best, the lowest error. All the
(k, bandwidth, model) candidates of one (E, τ) share its search.

A series that changed regime (``holdout="auto"`` of the forecaster) is scored both ways, and
the candidate kept is the one least worse than the best under either (:func:`minimax_regret`):
which regime the future resembles is unknown at fit time.
"""

from __future__ import annotations

import numpy as np

from tssdpa.estimators.parallel import parallel_map
from tssdpa.estimators.selection import query_rows
from tssdpa.filters.analogue_data import AnalogueData
from tssdpa.filters.analogues import (
    NEIGHBOUR_MODELS,
    Structure,
    anchor_horizons,
    nan_mean,
    neighbour_forecasts,
    structure_weights,
)
from tssdpa.signal.neighbours import causal_neighbours, loo_neighbours

__all__ = ["choose_structures", "drift_holdout", "no_structure"]

#: simplest first, for the choice among candidates that are about as good as the best (the
#: recursive model fits one set of coefficients for every horizon, the direct one a set each)
_MODEL_RANK = {"recursive_linear": 0, "linear": 1, "hybrid": 2, "mean": 3, "local_linear": 4}
#: the global linear models, scored without a neighbour search
_LINEAR_MODELS = ("linear", "recursive_linear")
#: ``holdout="auto"``: score forward on the last DRIFT_HOLDOUT of the series where the spread
#: of that part differs from the rest's by more than a factor DRIFT_RATIO
DRIFT_HOLDOUT, DRIFT_RATIO = 0.25, 2.0
#: the long linear patterns are not scored where, at every anchor, the linear models of the
#: neighbour embeddings are more than LINEAR_FAR_BEHIND times the best error: a longer
#: pattern improved the linear model's error by at most 7.5x over the development fits
#: (``experiments/long_linear_gain.py``), so it could not come near the best there
LINEAR_FAR_BEHIND = 100.0


def _spread(v: np.ndarray) -> np.ndarray:
    """Per-channel standard deviation of (T, C) ``v`` over its known entries (NaN where a
    channel has fewer than two), without numpy's warnings on empty channels."""
    sd = np.sqrt(nan_mean((v - nan_mean(v, axis=0)) ** 2, axis=0))
    return np.where((~np.isnan(v)).sum(axis=0) >= 2, sd, np.nan)


def drift_holdout(z: np.ndarray) -> tuple[float | None, float]:
    """What ``holdout="auto"`` means for the (T, C) series ``z``: ``(holdout, ratio)``.

    ``ratio`` is the standard deviation of the last DRIFT_HOLDOUT of the series over that of
    the rest, the channel furthest from 1 (0 or inf where one part is flat and the other is
    not; channels flat or missing in both parts are left out, 1 where none is left). Beyond a
    factor DRIFT_RATIO either way the series has changed regime -- a machine that went quiet,
    a sensor that started to move -- and leave-one-out over the whole series would choose
    for the regime that dominates the squared errors, not the one the forecasts start from;
    then ``holdout`` is DRIFT_HOLDOUT (score forward on the recent part, as a validation
    split does), else None (leave-one-out).
    """
    cut = int(round(len(z) * (1.0 - DRIFT_HOLDOUT)))
    head, tail = _spread(z[:cut]), _spread(z[cut:])
    known = np.isfinite(head) & np.isfinite(tail) & ((head > 0) | (tail > 0))
    with np.errstate(divide="ignore"):
        ratio = tail[known] / head[known]  # 0 / inf where one part is flat
        distance = np.abs(np.log(ratio))
    r = float(ratio[np.argmax(distance)]) if ratio.size else 1.0
    drifted = r > DRIFT_RATIO or r < 1.0 / DRIFT_RATIO
    return (DRIFT_HOLDOUT if drifted else None), r


def no_structure(z: np.ndarray, rows: int, library_size: int | None, holdout=None) -> str:
    """The error of a fit on the (T, C) ``z`` that scored no candidate structure, whose
    library (``library_size``) kept ``rows`` of its rows, scored forward on the last
    ``holdout`` (None: leave-one-out): what is known, and what to change."""
    complete = np.isfinite(z).all(axis=1)
    known = int(complete.sum())
    what = (f"y has {len(z)} samples, {known} of them "
            f"{'known' if z.shape[1] == 1 else 'with every channel known'}")  # fmt: skip
    # the library, not the series, is too short (a missing tail is no library row)
    cut = library_size is not None and known and rows <= np.flatnonzero(complete)[-1]
    if cut:
        what = f"the library (library_size={library_size}) keeps {rows} of y's {len(z)} rows"
    msg = f"{what}: too few complete patterns and futures for any candidate structure"
    if cut:
        msg += (" (leave-one-out leaves out the keys within a pattern and a horizon of each "
                "query); a larger library_size")  # fmt: skip
    if z.shape[1] > 1 and known < len(z):  # (no gaps: the series is too short)
        msg += "; fill the gaps or fit each channel on its own (channel_independent=True)"
    # forward scoring needs more rows (keys known before each query, linear parts fitted
    # before the holdout): 12-17 samples that leave-one-out fits were refused unexplained
    if holdout:
        msg += (f"; scored forward on the last {holdout:g} of y (holdout={holdout!r}): "
                "holdout=None scores leave-one-out over all of it")  # fmt: skip
    return msg


def choose_structures(z, horizon, candidates, *, max_queries, holdout=None, both=False,
                      verbose=False):  # fmt: skip
    """Leave-one-out (or, with ``holdout``, forward) choice of a structure per anchor horizon.

    ``candidates``: dict of lists -- ``embedding``, ``delay``, ``n_neighbors`` (a function of
    the embedding's dimension D), ``width`` (a list of ``("bandwidth", s)`` or
    ``("sigma", s)``), ``model``, ``ridge`` (relative ridges of the linear parts), and
    ``linear_embedding`` (longer embeddings tried for the linear model alone, which is
    cheap), ``linear_ladder`` (longer still, in order, until two in a row improve no score); both
    at delay 1, where ``delay`` holds 1; both left out where the linear models are far behind
    the best (LINEAR_FAR_BEHIND), unless the series is scored both ways.
    Every candidate is scored on the same query times, so candidates are compared on paired
    errors. Returns ``(best {anchor: Structure}, rows of cv results, contenders)``; each row
    names its ``scoring`` and whether it is ``chosen``.

    ``holdout`` (a fraction) scores forward instead: the queries are the last ``holdout`` of
    the series, each forecast only from keys whose future is known before it, and the linear
    parts are fitted on the rows before the holdout -- what a validation split does, for
    series whose behaviour drifts.

    ``both`` (with ``holdout``) scores both ways and keeps the candidate whose larger relative
    excess over the best of either scoring is least (:func:`minimax_regret`): for a series
    that changed regime, where the future may look like its recent part or like the rest.
    ``contenders`` then holds, per anchor where they differ, that choice followed by each
    scoring's own (:meth:`_Scores.simplest_near_best`): the structures the forecasts switch
    among once errors are known (:func:`~tssdpa.filters.analogues.switch_forecasts`); empty
    otherwise.
    """
    anchors = anchor_horizons(horizon)
    # scored both ways, the minimax rule pairs the candidates both scorings reached: the long
    # linear patterns are kept in both, as one scoring leaving them out would move the pick
    prune = not (holdout and both)
    forward = _score_all(z, anchors, candidates, max_queries, holdout, prune) if holdout else None
    loo = (_score_all(z, anchors, candidates, max_queries, None, prune)
           if both or not holdout else None)  # fmt: skip
    contenders = {}
    if forward is not None and loo is not None:
        chosen = {h: minimax_regret(i, loo, forward) for i, h in enumerate(anchors)}
        for i, h in enumerate(anchors):
            picks = [chosen[h], loo.simplest_near_best(i), forward.simplest_near_best(i)]
            picks = list(dict.fromkeys(s for s in picks if s is not None))  # distinct, in order
            if len(picks) > 1:
                contenders[h] = picks
    else:
        scores = forward or loo
        chosen = {h: scores.simplest_near_best(i) for i, h in enumerate(anchors)}
    if verbose:
        for i, (h, s) in enumerate(chosen.items()):
            # the choice's own error, then the best's: the simplest near the best is chosen,
            # and the best alone read as the choice's (its cv_results_ row said otherwise)
            how = ", ".join(
                f"{x.scoring} MSE {x.mses[x.structures.index(s)][i]:.4g}, best {x.best[i]:.4g}"
                for x in (loo, forward)
                if x and s in x.structures
            )
            print(f"horizon {h}: {s.as_dict() if s else None}  ({how})")
            for c in contenders.get(h, [])[1:]:
                print(f"    or online: {c.as_dict()}")
    # each row says whether its structure is the one kept at its anchor: the simplest near
    # the best is kept, so the row of lowest mse is often not it (scikit-learn's rank_)
    n = len(anchors)
    rows = [{**row, "chosen": x.structures[k // n] == chosen[row["horizon"]]}
            for x in (loo, forward) if x for k, row in enumerate(x.rows)]  # fmt: skip
    return chosen, rows, contenders


def _score_all(z, anchors, candidates, max_queries, holdout, prune=True) -> _Scores:
    """Every candidate's per-query squared errors: leave-one-out (``holdout`` None) or
    forward on the last ``holdout`` of ``z``; with ``prune``, none of the long linear patterns
    where the linear models are far behind (LINEAR_FAR_BEHIND)."""
    T = len(z)
    delays = candidates["delay"]
    ladder, missed = list(candidates.get("linear_ladder", [])), 0
    # the season is scored after the ladder (its score must not stop the ladder) and even
    # where the linear models are far behind
    season = list(candidates.get("linear_season", []))
    lin_only = [E for E in [*candidates.get("linear_embedding", []), *ladder, *season] if E > 0]
    # the long patterns are autoregressions on consecutive samples (their lengths count
    # samples: 48, two weeks of hourly data), at delay 1: as the recursive model's, only
    # where 1 is a candidate delay. Delays given without 1 leave them out (every candidate
    # keeps a given delay); at τ = 3 the ladder's 336 would span 1005 samples, and the
    # longest span drops the early queries of every candidate
    if not set(_LINEAR_MODELS) & set(candidates["model"]) or 1 not in delays:
        lin_only = []  # no queries lost to them
    span = max([(max(candidates["embedding"]) - 1) * max(delays)] + [E - 1 for E in lin_only])
    last = T - 1 - max(anchors)
    span = min(span, max(0, last - 20))  # a short series: fewer rows are complete queries
    cut = None
    if holdout:
        cut = min(max(int(round(T * (1.0 - holdout))), span + max(anchors) + 20), last - 9)
    # a grid from the start (or the holdout's cut), less the times before the longest
    # pattern: a longer candidate drops early queries but does not move the others
    lo = 0 if cut is None else cut
    grid = query_rows(lo, last, max_queries)
    queries = grid[grid >= span] if cut is None else grid
    scores = _Scores(anchors, "leave-one-out" if cut is None else "forward")
    for delay in delays:
        since_better = 0
        for E in candidates["embedding"]:
            if (E - 1) * delay + max(anchors) + 2 >= T:
                break
            data = _data(z, E, delay, anchors, candidates["ridge"], cut)
            if data is None:
                break
            improved = _score_embedding(data, queries, E, delay, candidates, scores, cut)
            since_better = 0 if improved else since_better + 1
            if since_better >= 3 and len(candidates["embedding"]) > 3:
                break  # three embeddings in a row without a better score: stop growing E
    lin_only = [
        E for E in lin_only if E > max(candidates["embedding"]) and E + max(anchors) < T - 1
    ]
    if prune and scores.linear_far_behind(LINEAR_FAR_BEHIND):
        lin_only = [E for E in lin_only if E in season]

    def linear_errors(E):
        data = _data(z, E, 1, anchors, candidates["ridge"], cut)
        if data is None:
            return None
        return _linear_errors(data, queries, E, 1, anchors, candidates["model"], cut)

    # the lengths off the ladder are all scored: computed in parallel, recorded in order; the
    # ladder's in turn, as it stops once two of its lengths in a row improve no score
    free = [i for i, E in enumerate(lin_only) if E not in ladder]
    done = dict(zip(free, parallel_map(linear_errors, [lin_only[i] for i in free])))
    stopped = False
    for i, E in enumerate(lin_only):
        if stopped and E not in season:
            continue
        errors = done[i] if i in done else linear_errors(E)
        if errors is not None:
            better = scores.record_all(errors)
            missed = 0 if better else missed + (E in ladder)
        stopped = stopped or missed >= 2  # two ladder patterns in a row without a better score
    return scores


def _data(z, E, delay, anchors, ridges, cut):
    """The :class:`AnalogueData` of one (E, τ), its linear parts fitted on the rows before
    ``cut`` when scoring forward; None when too few rows are complete."""
    if cut is None:
        data = AnalogueData(z, E, delay, anchors, ridges)
        return data if data.usable.sum() >= 4 else None
    head = AnalogueData(z[:cut], E, delay, anchors, ridges) if cut > E * delay + 4 else None
    if head is None or head.usable.sum() < 4:
        return None
    data = AnalogueData(z, E, delay, anchors, None)
    data.coef = head.coef
    return data


def _complexity(s: Structure) -> tuple:
    """How simple ``s`` is, simplest least: its model, then (neighbour models) a shorter
    pattern, more neighbours, a wider kernel, a larger ridge.

    The global linear models rank by model alone, so that among those near the best the lower
    error is kept: a longer linear pattern nests the shorter (zero coefficients), its few
    coefficients are fitted on every row, and it does not change which keys are neighbours,
    as a longer pattern of a neighbour model does. Ranked by length, the shortest linear
    pattern near the best was kept though 5% worse (Lorenz-96, 8 steps ahead: 6 samples,
    where 24 forecast better)."""
    if s.model in _LINEAR_MODELS:
        return (_MODEL_RANK[s.model], 0, 0, 0.0, 0.0)
    width = s.bandwidth if s.bandwidth is not None else (s.sigma or 0.0)
    return (_MODEL_RANK[s.model], s.embedding, -s.n_neighbors, -width, -(s.ridge or 0.0))


class _Scores:
    """Per-query squared errors of every candidate at every anchor, for the paired
    two-standard-error rule."""

    def __init__(self, anchors, scoring: str):
        self.anchors, self.scoring = anchors, scoring
        self.rows: list[dict] = []
        self.structures: list[Structure] = []
        self.errors: list[np.ndarray] = []  # (Q, n_anchor) float32 per candidate
        self.mses: list[np.ndarray] = []  # (n_anchor,) per candidate
        self.best = np.full(len(anchors), np.inf)

    def record(self, structure: Structure, sq: np.ndarray, mse=None) -> bool:
        """Keep ``structure``'s per-query squared errors ``sq`` (Q, n_anchor) and their mean
        ``mse`` (computed here if not given: :func:`_scored` computes it in a worker thread);
        True if it improved any anchor's best."""
        if mse is None:
            mse = nan_mean(sq, axis=0)  # an all-NaN column: no score
        scored = np.nan_to_num(mse, nan=np.inf)  # an overflow (inf) still counts as a score
        self.mses.append(scored)
        self.structures.append(structure)
        self.errors.append(sq.astype(np.float32, copy=False))
        params = structure.as_dict()
        for i, h in enumerate(self.anchors):
            self.rows.append({"horizon": h, **params, "scoring": self.scoring,
                              "mse": float(mse[i])})  # fmt: skip
        better = scored < self.best
        self.best = np.where(better, mse, self.best)
        return bool(better.any())

    def linear_far_behind(self, factor: float) -> bool:
        """True where at every anchor the best global linear model's error is more than
        ``factor`` times the best error (a linear model without a score counts as behind)."""
        linear = [m for s, m in zip(self.structures, self.mses) if s.model in _LINEAR_MODELS]
        best_linear = np.min(linear, axis=0) if linear else np.full(len(self.anchors), np.inf)
        with np.errstate(invalid="ignore"):  # factor inf, best 0: NaN, never behind
            return bool(np.all(best_linear > factor * self.best))

    def record_all(self, errors) -> bool:
        """:meth:`record` each (structure, squared errors[, their mean]) in turn; True if any
        improved."""
        improved = False
        for item in errors:
            improved |= self.record(*item)
        return improved

    def near(self, i, top: int, z: float = 2.0, slack: float = 0.05) -> list[int]:
        """The candidates whose error at anchor i is not worse than candidate ``top``'s by
        more than ``z`` standard errors of the paired difference, nor by more than ``slack``
        relative.

        The relative cap matters for heavy-tailed errors: a candidate whose excess error sits
        in a few queries has a paired standard error about as large as its mean excess, so
        the standard-error rule alone would call a candidate 1000x worse "near"."""
        ref = self.errors[top][:, i].astype(np.float64)
        cap = (1.0 + slack) * self.mses[top][i]
        out = []
        for c, e in enumerate(self.errors):
            if not self.mses[c][i] <= cap:
                continue
            d = e[:, i] - ref
            d = d[np.isfinite(d)]
            if len(d) and d.mean() <= z * d.std() / np.sqrt(len(d)):
                out.append(c)
        return out

    def simplest_near_best(self, i) -> Structure | None:
        """The simplest candidate :meth:`near` the lowest error at anchor i (ties: the lower
        error); None where no candidate has a score."""
        mse = np.array([m[i] for m in self.mses])
        if not np.isfinite(mse).any():
            return None
        eligible = self.near(i, int(np.argmin(mse)))
        pick = min(eligible, key=lambda c: (_complexity(self.structures[c]), mse[c]))
        return self.structures[pick]


def _scored(structure: Structure, sq: np.ndarray) -> tuple:
    """``(structure, sq as float32, mean of sq per anchor)`` for :meth:`_Scores.record`: the
    mean and the conversion done where ``sq`` is computed (in the candidates' threads), not
    in the loop that records every candidate in turn."""
    return structure, sq.astype(np.float32), nan_mean(sq, axis=0)


def minimax_regret(i, a: _Scores, b: _Scores) -> Structure | None:
    """The choice at anchor i from two scorings of the same candidates (a candidate one of
    them stopped short of is left out): the one whose larger excess over each scoring's best,
    ``max(mse_a / best_a, mse_b / best_b)``, is least (ties: the simpler). Where no candidate
    has a finite score in both at i, the choice of the scoring that has one.

    No simplicity band here: the band guards one scoring against a candidate that looks best
    by chance, and a candidate must look good in both scorings to win this rule."""
    index_b = {s: c for c, s in enumerate(b.structures)}
    pairs = [(ca, index_b[s]) for ca, s in enumerate(a.structures) if s in index_b]
    pairs = [(ca, cb) for ca, cb in pairs if np.isfinite(a.mses[ca][i] + b.mses[cb][i])]
    if not pairs:  # one scoring has no finite score at i: the other's own choice
        return a.simplest_near_best(i) or b.simplest_near_best(i)
    tiny = np.finfo(float).tiny  # a perfect best (0) makes every other candidate's excess inf
    best_a = max(min(a.mses[ca][i] for ca, _ in pairs), tiny)
    best_b = max(min(b.mses[cb][i] for _, cb in pairs), tiny)

    def regret(pair):
        with np.errstate(over="ignore"):  # an error over a perfect best's tiny: inf, as meant
            return max(a.mses[pair[0]][i] / best_a, b.mses[pair[1]][i] / best_b)

    pick = min(pairs, key=lambda p: (regret(p), _complexity(a.structures[p[0]])))
    return a.structures[pick[0]]


def _linear_at(data, queries, anchors, E, delay, cut, recursive=False, fits=False):
    """The global ridge fits' forecasts of ``queries`` as they are scored, by ridge: by fits
    that left out every row sharing samples with the query (blocked, as the neighbours
    leave them out: ``|j - t| <= (E-1)τ + h``); scoring forward, by the fit on the rows before
    the holdout, which never saw the queries. ``recursive``: their one-step parts iterated.
    ``fits``: ``(forecasts, the fits that gave them)``, by ridge -- (D1, n_anchor * C) when
    scoring forward, one per query (Q, D1, n_anchor * C) when blocked -- which a hybrid
    applies to the query's neighbours."""
    if cut is not None:
        keys = np.nan_to_num(data.keys[queries])
        if recursive:
            return {r: data.recursive(keys, r, anchors) for r in data.coef}
        forecasts = {r: data.linear(keys, r) for r in data.coef}
        return (forecasts, data.coef) if fits else forecasts
    gap = (E - 1) * delay + max(anchors)
    data.block_moments(gap)  # once, before the ridges' threads share them
    ridges = list(data.coef)
    got = parallel_map(lambda r: data.blocked_linear(r, queries, gap, fits, recursive), ridges)
    if not fits:
        return dict(zip(ridges, got))
    return {r: g[0] for r, g in zip(ridges, got)}, {r: g[1] for r, g in zip(ridges, got)}


def _linear_errors(data, queries, E, delay, anchors, models, cut=None, lin_q=None) -> list:
    """:func:`_scored` (Structure, squared errors, their mean) of the global linear models
    among ``models`` at the queries, as :func:`_linear_at` forecasts them (``lin_q``: the
    direct fits' forecasts, where the caller has them already). The recursive model is scored
    with delay 1 only, and at horizon 1, where it is the direct model, only when that is no
    candidate."""
    keys, out = data.keys[queries], []
    incomplete = ~np.isfinite(keys).all(1)
    kinds = {}
    if "linear" in models:
        kinds["linear"] = lin_q or _linear_at(data, queries, anchors, E, delay, cut)
    if "recursive_linear" in models and delay == 1:
        kinds["recursive_linear"] = _linear_at(data, queries, anchors, E, delay, cut, True)
    for model, forecasts in kinds.items():
        for ridge, pred in forecasts.items():
            sq = nan_mean((data.futures[queries] - pred) ** 2, axis=2)
            sq[incomplete] = np.nan
            if model == "recursive_linear" and "linear" in kinds:
                sq[:, 0] = np.nan  # anchors[0] is 1
            out.append(_scored(Structure(E, delay, 0, None, None, model, ridge), sq))
    return out


def _score_embedding(data, queries, E, delay, candidates, scores, cut=None) -> bool:
    """Score every (k, width, model) of one embedding; True if any anchor's best improved."""
    improved = False
    models = [m for m in candidates["model"] if m in NEIGHBOUR_MODELS]
    with_linear = "linear" in candidates["model"]
    if not models:
        return scores.record_all(
            _linear_errors(data, queries, E, delay, scores.anchors, candidates["model"], cut)
        )
    D = data.keys.shape[1]
    truth = data.futures[queries]  # (Q, n_anchor, C)
    keys = np.where(data.usable[:, None], data.keys, np.nan)  # unusable rows are no keys
    ridges = list(data.coef)
    n_keys = int(data.usable.sum())
    ks = sorted({min(k, n_keys - 1) for k in candidates["n_neighbors"](D)})
    excl = (E - 1) * delay + max(scores.anchors)
    if cut is None:
        dist, idx = loo_neighbours(keys, max(ks), excl, rows=queries)
    else:  # forward: only keys whose future is known at the query's time
        only = np.full_like(keys, np.nan)
        only[queries] = data.keys[queries]
        dist, idx = causal_neighbours(only, max(ks), max(scores.anchors), keys=keys)
        dist, idx = dist[queries], idx[queries]
    safe = np.maximum(idx, 0)
    query_keys = np.nan_to_num(data.keys[queries])
    # the linear parts as the queries are scored (_linear_at), and the fits that gave them: a
    # hybrid's neighbour residuals are against the same fit as its query's linear part, as at
    # forecast time
    lin_q, coefs = {}, {}
    if "hybrid" in models:
        lin_q, coefs = _linear_at(data, queries, scores.anchors, E, delay, cut, fits=True)
    elif with_linear:
        lin_q = _linear_at(data, queries, scores.anchors, E, delay, cut)
    if set(_LINEAR_MODELS) & set(candidates["model"]):
        errors = _linear_errors(data, queries, E, delay, scores.anchors, candidates["model"],
                                cut, lin_q if with_linear else None)  # fmt: skip
        improved |= scores.record_all(errors)

    nb_keys_all, targets_all = keys[safe], data.futures[safe]  # (Q, max k, D), (Q, max k, ..)

    def errors_of(task):
        """:func:`_scored` (Structure, squared errors, their mean) of every (model, ridge) with
        k neighbours and one width."""
        k, (kind, value) = task
        out = []
        nb_keys, targets = nb_keys_all[:, :k], targets_all[:, :k]
        s0 = Structure(E, delay, k, value if kind == "bandwidth" else None,
                       value if kind == "sigma" else None, "mean")  # fmt: skip
        w = structure_weights(dist[:, :k], s0)
        for model in models:
            if model == "local_linear" and len(ks) > 1 and k == ks[0] and k <= D + 1:
                continue  # a slope per dimension needs more than D + 1 neighbours
            preds = neighbour_forecasts(model, w, nb_keys, query_keys, targets, lin_q, coefs,
                                        ridges)  # fmt: skip
            for r, pred in zip([None] if model == "mean" else ridges, preds):
                s = Structure(**{**s0.as_dict(), "model": model, "ridge": r})
                out.append(_scored(s, nan_mean((pred - truth) ** 2, axis=2)))
        return out

    # the (k, width) pairs are independent: over the cores, recorded in the order of a loop
    for errors in parallel_map(
        errors_of, [(k, width) for k in ks for width in candidates["width"]]
    ):
        improved |= scores.record_all(errors)
    return improved
