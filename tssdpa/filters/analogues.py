"""The analogue model of :class:`~tssdpa.filters.ProjectionForecaster`: structures, their
cross-validated choice, and forecasts from a training library plus the causal past.

A *structure* is one way to forecast ``z[t+h]`` from the delay embedding
``e_t = [z_t, z_(t-τ), ..., z_(t-(E-1)τ)]`` (standardised units):

* ``model="mean"`` -- projection (Nadaraya–Watson) over the ``n_neighbors`` nearest keys with
  Gaussian weights of an adaptive width ``bandwidth`` · (distance of the k-th neighbour), or of a
  fixed ``sigma``: Simplex with a smooth kernel;
* ``model="local_linear"`` -- the weighted ridge fit of the neighbours' futures on their
  offsets from the query (S-map on a neighbourhood, the paper's projection onto a surface);
* ``model="linear"`` -- one global ridge autoregression per horizon on the same embedding;
* ``model="hybrid"`` -- that linear forecast plus the projection of its residuals.

:func:`choose_structures` scores every candidate by leave-one-out error on the training
series (or forward on its last part, ``holdout``; see :func:`drift_holdout`), with the keys
that share samples with the query excluded (``|j - t| <= (E-1)τ + h``), and keeps per horizon
the simplest candidate whose paired error is within two standard errors of the best (a
stricter form of the one-standard-error rule, since the best of several hundred candidates
looks better than it is): a linear process keeps the linear model unless a nonlinear one is
clearly better. All the (k, bandwidth, model) candidates of one (E, τ) share its search.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from tssdpa.checks import check_choice, check_int, check_positive
from tssdpa.signal import neighbours
from tssdpa.signal.embedding import delay_embedding
from tssdpa.signal.neighbours import (
    causal_neighbours,
    kernel_weights,
    local_linear,
    loo_neighbours,
    weighted_mean,
)

__all__ = [
    "MODELS",
    "Structure",
    "anchor_horizons",
    "choose_structures",
    "default_delays",
    "drift_holdout",
]

MODELS = ("mean", "local_linear", "linear", "hybrid")
#: simplest first, for the choice among candidates that are about as good as the best
_MODEL_RANK = {"linear": 0, "hybrid": 1, "mean": 2, "local_linear": 3}
_NEIGHBOUR_MODELS = ("mean", "local_linear", "hybrid")
#: relative ridges tried by default: nearly none (smooth, nearly noise-free series need
#: precise slopes) to a firm one (short or noisy series)
RIDGES = (1e-12, 1e-9, 1e-6, 1e-3)
DEFAULT_RIDGE = 1e-3  # a structure saved without one (version 0.2.0 files)
_GATHER_ELEMS = 1 << 24  # neighbours' futures gathered per block of origins in forecast()
#: ``holdout="auto"``: score forward on the last DRIFT_HOLDOUT of the series where the spread
#: of that part differs from the rest's by more than a factor DRIFT_RATIO
DRIFT_HOLDOUT, DRIFT_RATIO = 0.25, 2.0


@dataclass(frozen=True)
class Structure:
    """One analogue forecaster: embedding E, delay τ, k neighbours, kernel width, model and
    the relative ridge of its linear fits (None for the weighted mean, which has none)."""

    embedding: int
    delay: int
    n_neighbors: int
    bandwidth: float | None  # adaptive width (times the k-th neighbour's distance)
    sigma: float | None  # fixed width (standardised units), when given instead
    model: str
    ridge: float | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)  # flat fields: no deep copy needed

    @classmethod
    def from_saved(cls, p, where: str, max_span: int) -> Structure:
        """A structure read from a file, checked field by field (a file is not trusted): a
        known model, integer E, τ >= 1 whose pattern spans at most ``max_span`` samples (the
        fitted series), 0 <= k <= ``max_span`` (>= 1 for the neighbour models, which need
        exactly one of bandwidth and sigma), positive finite widths, a finite ridge >= 0."""
        if not isinstance(p, dict):
            raise ValueError(f"{where} must be an object, got {p!r}")
        fields = cls.__dataclass_fields__
        unknown = sorted(set(p) - set(fields))
        missing = sorted(f for f in fields if f != "ridge" and f not in p)
        if unknown or missing:
            raise ValueError(f"{where}: unknown fields {unknown}, missing fields {missing}")
        check_choice(p["model"], f"{where}.model", MODELS)
        E = check_int(p["embedding"], f"{where}.embedding")
        delay = check_int(p["delay"], f"{where}.delay")
        if (E - 1) * delay + 1 > max_span:
            raise ValueError(f"{where}: a pattern of {(E - 1) * delay + 1} samples is longer "
                             f"than the fitted series ({max_span})")  # fmt: skip
        neighbour_model = p["model"] in _NEIGHBOUR_MODELS
        k = check_int(p["n_neighbors"], f"{where}.n_neighbors", minimum=int(neighbour_model))
        if k > max_span:
            raise ValueError(f"{where}.n_neighbors {k} exceeds the fitted series ({max_span})")
        widths = {n: p[n] for n in ("bandwidth", "sigma") if p[n] is not None}
        if neighbour_model and len(widths) != 1:
            raise ValueError(f"{where}: model {p['model']!r} needs exactly one of bandwidth "
                             f"and sigma, got {widths or 'neither'}")  # fmt: skip
        widths = {n: check_positive(v, f"{where}.{n}") for n, v in widths.items()}
        ridge = p.get("ridge")
        ridge = None if ridge is None else check_positive(ridge, f"{where}.ridge", allow_zero=True)
        return cls(E, delay, k, widths.get("bandwidth"), widths.get("sigma"), p["model"], ridge)


def anchor_horizons(H: int, n: int = 12) -> list[int]:
    """The horizons at which a structure is chosen: every horizon up to ``n``, beyond that
    1, H and geometric steps between; every other horizon uses the structure of its nearest
    anchor (in log scale). Scoring an extra anchor is cheap next to the neighbour search."""
    if H <= n:
        return list(range(1, H + 1))
    return sorted({int(round(v)) for v in np.geomspace(1, H, n)})


def nearest_anchor(h: int, anchors: list[int]) -> int:
    return min(anchors, key=lambda a: (abs(np.log(a) - np.log(h)), a))


def default_delays(z: np.ndarray, max_embedding: int) -> list[int]:
    """1, and for a finely sampled signal the lag where its autocorrelation first falls below
    1/e (capped so that the longest embedding spans at most a tenth of the series)."""
    x = np.nan_to_num(z[:, 0] - np.nanmean(z[:, 0]))
    n = len(x)
    cap = max(1, n // (10 * max(max_embedding - 1, 1)))
    f = np.fft.rfft(x, 2 * n)
    acf = np.fft.irfft(f * np.conj(f))[: min(n, 4 * cap + 2)]
    acf = acf / acf[0] if acf[0] > 0 else acf
    below = np.flatnonzero(acf < np.exp(-1))
    tau = int(below[0]) if len(below) else 1
    return sorted({1, max(1, min(tau, cap))})


def _nan_mean(a: np.ndarray, axis: int) -> np.ndarray:
    """``np.nanmean`` without its warning on all-NaN slices (NaN there): it runs in the
    neighbour threads, where ``warnings.catch_warnings`` is not safe (it swaps a global)."""
    missing = np.isnan(a)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(missing, 0.0, a).sum(axis=axis) / (~missing).sum(axis=axis)


def _spread(v: np.ndarray) -> np.ndarray:
    """Per-channel standard deviation of (T, C) ``v`` over its known entries (NaN where a
    channel has fewer than two), without numpy's warnings on empty channels."""
    sd = np.sqrt(_nan_mean((v - _nan_mean(v, axis=0)) ** 2, axis=0))
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


class AnalogueData:
    """Embeddings, futures and global linear fits of one series for one (E, τ).

    ``futures[:, i]`` is ``z[t + horizons[i]]`` (NaN past the end); :meth:`linear` applies the
    ridge coefficients of each horizon fitted on the rows whose embedding and futures are all
    known (the training library), one fit per relative ridge in ``ridges`` (None: a series
    to forecast from, which borrows the training fit).
    """

    def __init__(self, z, embedding, delay, horizons, ridges):
        self.keys = delay_embedding(z, embedding, delay=delay)  # (T, E*C)
        T, C = z.shape
        self.C = C
        self.horizons = list(horizons)
        fut = np.full((T, len(self.horizons), C), np.nan)
        for i, h in enumerate(self.horizons):
            if h < T:
                fut[: T - h, i] = z[h:]
        self.futures = fut
        self.usable = np.isfinite(self.keys).all(1) & np.isfinite(fut).all(axis=(1, 2))
        self.coef, self._inverse = {}, {}
        if ridges is None or not self.usable.any():  # a series to forecast from borrows the
            return  # training fit; one without a complete row has no fit (the caller skips it)
        X = self._design(self.keys[self.usable])
        Y = fut[self.usable].reshape(len(X), -1)
        G0, XtY = X.T @ X, X.T @ Y
        for ridge in ridges:
            G = G0.copy()
            G[np.diag_indices_from(G)] += ridge * np.trace(G0) / G.shape[0] + 1e-12
            self.coef[ridge] = np.linalg.solve(G, XtY)
            self._inverse[ridge] = np.linalg.inv(G)

    def leverages(self, ridge, rows) -> np.ndarray:
        """The ridge fit's hat matrix diagonal at ``rows`` of the library (only where asked)."""
        X = self._design(self.keys[rows])
        return ((X @ self._inverse[ridge]) * X).sum(axis=1)

    @staticmethod
    def _design(keys):
        return np.concatenate([np.ones((len(keys), 1)), keys], axis=1)

    def linear(self, keys, ridge) -> np.ndarray:
        """(N, n_horizons, C) global linear forecasts from embeddings ``keys``."""
        pred = self._design(keys) @ self.coef[ridge]
        return pred.reshape(len(keys), len(self.horizons), self.C)


def _neighbour_forecasts(model, w, keys_nb, query_keys, targets, resid, lin_q, ridges):
    """Forecasts (Q, n_h, C) of one neighbour model, one per ridge in ``ridges`` for the
    models with a linear part (a list); targets / resid (Q, k, n_h, C), ``resid`` and
    ``lin_q`` dicts by ridge for the hybrid."""
    Q, k, nh, C = targets.shape
    if model == "mean":
        return [weighted_mean(w, targets.reshape(Q, k, -1)).reshape(Q, nh, C)]
    if model == "hybrid":
        return [
            lin_q[r] + weighted_mean(w, resid[r].reshape(Q, k, -1)).reshape(Q, nh, C)
            for r in ridges
        ]
    flat = local_linear(w, keys_nb, query_keys, targets.reshape(Q, k, -1), list(ridges))
    return [f.reshape(Q, nh, C) for f in flat]


def _weights(dist, s: Structure):
    return kernel_weights(dist[:, : s.n_neighbors], s.bandwidth, s.sigma)


def choose_structures(z, horizon, candidates, *, max_queries, holdout=None, verbose=False):
    """Leave-one-out (or, with ``holdout``, forward) choice of a structure per anchor horizon.

    ``candidates``: dict of lists -- ``embedding``, ``delay``, ``n_neighbors`` (a function of
    the embedding's dimension D), ``width`` (a list of ``("bandwidth", s)`` or
    ``("sigma", s)``), ``model``, ``ridge`` (relative ridges of the linear parts), and
    ``linear_embedding`` (longer embeddings tried for the linear model alone, which is
    cheap), ``linear_ladder`` (longer still, in order, until two in a row improve no score).
    Every candidate is scored on the same query times, so candidates are compared on paired
    errors. Returns ``(best {anchor: Structure}, rows of cv results)``.

    ``holdout`` (a fraction) scores forward instead: the queries are the last ``holdout`` of
    the series, each forecast only from keys whose future is known before it, and the linear
    parts are fitted on the rows before the holdout -- what a validation split does, for
    series whose behaviour drifts.
    """
    anchors = anchor_horizons(horizon)
    T = len(z)
    delays = candidates["delay"]
    ladder, missed = list(candidates.get("linear_ladder", [])), 0
    lin_only = [E for E in [*candidates.get("linear_embedding", []), *ladder] if E > 0]
    lin_only = lin_only if "linear" in candidates["model"] else []  # no queries lost to them
    span = max([(max(candidates["embedding"]) - 1) * max(delays)] + [E - 1 for E in lin_only])
    last = T - 1 - max(anchors)
    span = min(span, max(0, last - 20))  # a short series: fewer rows are complete queries
    cut = None
    if holdout:
        cut = min(max(int(round(T * (1.0 - holdout))), span + max(anchors) + 20), last - 9)
    # a grid from the start (or the holdout's cut), less the times before the longest
    # pattern: a longer candidate drops early queries but does not move the others
    lo = 0 if cut is None else cut
    grid = np.unique(np.linspace(lo, last, max(1, min(max_queries, last - lo + 1))).astype(int))
    queries = grid[grid >= span] if cut is None else grid
    scores = _Scores(anchors, len(queries))
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
    for E in lin_only:
        if E > max(candidates["embedding"]) and E - 1 + max(anchors) + 2 < T:
            data = _data(z, E, 1, anchors, candidates["ridge"], cut)
            if data is not None:
                better = _score_linear(data, queries, E, 1, scores, cut)
                missed = 0 if better else missed + (E in ladder)
        if missed >= 2:
            break  # two ladder patterns in a row without a better score: stop growing
    chosen = {h: scores.simplest_near_best(i) for i, h in enumerate(anchors)}
    if verbose:
        how = "leave-one-out" if cut is None else "forward"
        for i, (h, s) in enumerate(chosen.items()):
            print(f"horizon {h}: {s.as_dict()}  ({how} MSE {scores.best[i]:.4g} at best)")
    return chosen, scores.rows


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
    width = s.bandwidth if s.bandwidth is not None else (s.sigma or 0.0)
    return (_MODEL_RANK[s.model], s.embedding, -s.n_neighbors, -width, -(s.ridge or 0.0))


class _Scores:
    """Per-query squared errors of every candidate at every anchor, for the paired
    two-standard-error rule."""

    def __init__(self, anchors, n_queries):
        self.anchors = anchors
        self.rows: list[dict] = []
        self.structures: list[Structure] = []
        self.errors: list[np.ndarray] = []  # (Q, n_anchor) float32 per candidate
        self.mses: list[np.ndarray] = []  # (n_anchor,) per candidate
        self.best = np.full(len(anchors), np.inf)

    def record(self, structure: Structure, sq: np.ndarray) -> bool:
        mse = _nan_mean(sq, axis=0)  # an all-NaN column: no score
        self.mses.append(np.nan_to_num(mse, nan=np.inf))
        self.structures.append(structure)
        self.errors.append(sq.astype(np.float32))
        for i, h in enumerate(self.anchors):
            self.rows.append({"horizon": h, **structure.as_dict(), "mse": float(mse[i])})
        better = np.nan_to_num(mse, nan=np.inf) < self.best
        self.best = np.where(better, mse, self.best)
        return bool(better.any())

    def simplest_near_best(self, i, z: float = 2.0, slack: float = 0.05) -> Structure | None:
        """The simplest candidate whose error at anchor i is not worse than the lowest by
        more than ``z`` standard errors of the paired difference, nor by more than ``slack``
        relative (ties: the lower error).

        The relative cap matters for heavy-tailed errors: a candidate whose excess error sits
        in a few queries has a paired standard error about as large as its mean excess, so
        the standard-error rule alone would call a candidate 1000x worse "near"."""
        mse = np.array([m[i] for m in self.mses])
        if not np.isfinite(mse).any():
            return None
        top = self.errors[int(np.argmin(mse))][:, i].astype(np.float64)
        eligible = []
        for c, e in enumerate(self.errors):
            d = e[:, i] - top
            d = d[np.isfinite(d)]
            near = mse[c] <= (1.0 + slack) * mse.min()
            if near and len(d) and d.mean() <= z * d.std() / np.sqrt(len(d)):
                eligible.append(c)
        pick = min(eligible, key=lambda c: (_complexity(self.structures[c]), mse[c]))
        return self.structures[pick]


def _score_linear(data, queries, E, delay, scores, cut=None) -> bool:
    """Exact leave-one-out error of the global ridge fit: residual / (1 - leverage); scoring
    forward (``cut``), the plain error of the fit on the rows before the holdout."""
    keys, ok, improved = data.keys[queries], data.usable[queries], False
    for ridge in data.coef:
        err = data.futures[queries] - data.linear(np.nan_to_num(keys), ridge)
        if cut is None:
            leverage = np.full(len(queries), np.nan)
            leverage[ok] = 1.0 - data.leverages(ridge, queries[ok])
            err = err / leverage[:, None, None]
        else:
            err[~np.isfinite(keys).all(1)] = np.nan  # an incomplete pattern
        s = Structure(E, delay, 0, None, None, "linear", ridge)
        improved |= scores.record(s, _nan_mean(err**2, axis=2))
    return improved


def _score_embedding(data, queries, E, delay, candidates, scores, cut=None) -> bool:
    """Score every (k, width, model) of one embedding; True if any anchor's best improved."""
    improved = False
    if "linear" in candidates["model"]:
        improved |= _score_linear(data, queries, E, delay, scores, cut)
    models = [m for m in candidates["model"] if m in _NEIGHBOUR_MODELS]
    if not models:
        return improved
    D = data.keys.shape[1]
    truth = data.futures[queries]  # (Q, n_anchor, C)
    keys = np.where(data.usable[:, None], data.keys, np.nan)  # unusable rows are no keys
    ridges = list(data.coef)
    lin_all = {r: data.linear(np.nan_to_num(data.keys), r) for r in ridges}
    resid = {r: data.futures - lin_all[r] for r in ridges}
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
    lin_q = {r: lin[queries] for r, lin in lin_all.items()}

    def errors_of(k):
        """(Structure, squared errors) of every (width, model, ridge) with k neighbours."""
        out = []
        nb_keys = keys[safe[:, :k]]
        targets = data.futures[safe[:, :k]]
        res_nb = {r: resid[r][safe[:, :k]] for r in ridges}
        for kind, value in candidates["width"]:
            s0 = Structure(E, delay, k, value if kind == "bandwidth" else None,
                           value if kind == "sigma" else None, "mean")  # fmt: skip
            w = _weights(dist[:, :k], s0)
            for model in models:
                if model == "local_linear" and len(ks) > 1 and k == ks[0] and k <= D + 1:
                    continue  # a slope per dimension needs more than D + 1 neighbours
                preds = _neighbour_forecasts(
                    model, w, nb_keys, query_keys, targets, res_nb, lin_q, ridges
                )
                for r, pred in zip([None] if model == "mean" else ridges, preds):
                    s = Structure(**{**s0.as_dict(), "model": model, "ridge": r})
                    out.append((s, _nan_mean((pred - truth) ** 2, axis=2)))
        return out

    # the neighbour counts are independent numpy work that releases the GIL: spread them over
    # the cores; the scores are recorded in the same order as a plain loop would
    if neighbours.THREADS > 1 and len(ks) > 1:
        with ThreadPoolExecutor(min(neighbours.THREADS, len(ks))) as pool:
            results = list(pool.map(errors_of, ks))
    else:
        results = [errors_of(k) for k in ks]
    for res in results:
        for s, sq in res:
            improved |= scores.record(s, sq)
    return improved


def _carry_forward(y: np.ndarray) -> np.ndarray:
    """(T, C) ``y`` with each NaN replaced by the last finite value before it (leading NaN
    stay: nothing is known yet)."""
    t = np.where(np.isfinite(y), np.arange(len(y))[:, None], 0)
    np.maximum.accumulate(t, axis=0, out=t)
    return y[t, np.arange(y.shape[1])]


def forecast(train, y, overlap, s: Structure, horizons):
    """(T, len(horizons), C) forecasts of every origin of ``y`` with structure ``s``.

    The keys are the training series' patterns (always allowed: what ``fit`` saw) and the
    patterns of ``y`` after its first ``overlap`` rows (which repeat training rows), each
    usable from origin t once its future is known (``j <= t - max(horizons)``).
    """
    ridge = DEFAULT_RIDGE if s.ridge is None else s.ridge  # the mean has no linear part
    lib = AnalogueData(train, s.embedding, s.delay, horizons, [ridge])
    new = AnalogueData(y, s.embedding, s.delay, horizons, None)
    # a query whose pattern spans a gap carries the last known values forward (causal); keys
    # keep the gap, so no filled pattern ever becomes a neighbour
    gaps = np.isnan(y).any()
    q_keys = (
        AnalogueData(_carry_forward(y), s.embedding, s.delay, [1], None).keys if gaps else new.keys
    )
    lin_q = lib.linear(np.nan_to_num(q_keys), ridge)
    if s.model == "linear":
        out = lin_q
    else:
        H = max(horizons)
        lib_keys = np.where(lib.usable[:, None], lib.keys, np.nan)
        own = new.usable.copy()
        own[:overlap] = False
        own_keys = np.where(own[:, None], new.keys, np.nan)
        dist, idx = causal_neighbours(q_keys, s.n_neighbors, H, keys=own_keys, library=lib_keys)
        all_keys = np.concatenate([lib.keys, new.keys])
        all_fut = np.concatenate([lib.futures, new.futures])
        all_lin = np.concatenate([lib.linear(np.nan_to_num(lib.keys), ridge), lin_q])
        safe, w, q = np.maximum(idx, 0), _weights(dist, s), np.nan_to_num(q_keys)
        out = np.empty_like(lin_q)
        # origins in blocks: a long path's neighbour futures (rows, k, horizons, C) are large
        step = max(1, _GATHER_ELEMS // (s.n_neighbors * all_fut[0].size))
        for a in range(0, len(q), step):
            r, nb = slice(a, a + step), safe[a : a + step]
            out[r] = _neighbour_forecasts(
                s.model, w[r], all_keys[nb], q[r], all_fut[nb],
                {ridge: all_fut[nb] - all_lin[nb]}, {ridge: lin_q[r]}, [ridge],
            )[0]  # fmt: skip
    out[~np.isfinite(q_keys).all(axis=1)] = np.nan
    return out
