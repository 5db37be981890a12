"""The analogue model of :class:`~tssdpa.filters.ProjectionForecaster`: its structures and
their forecasts from a training library plus the causal past (chosen in analogue_selection).

A *structure* is one way to forecast ``z[t+h]`` from the delay embedding
``e_t = [z_t, z_(t-τ), ..., z_(t-(E-1)τ)]`` (standardised units):

* ``model="mean"`` -- projection (Nadaraya–Watson) over the ``n_neighbors`` nearest keys with
  Gaussian weights of an adaptive width ``bandwidth`` · (distance of the k-th neighbour), or of a
  fixed ``sigma``: Simplex with a smooth kernel;
* ``model="local_linear"`` -- the weighted ridge fit of the neighbours' futures on their
  offsets from the query (S-map on a neighbourhood, the paper's projection onto a surface);
* ``model="linear"`` -- one global ridge autoregression per horizon on the same embedding
  (the direct strategy);
* ``model="recursive_linear"`` -- the one-step autoregression iterated h times (delay 1
  only): less noisy than h-step fits on a short, nearly linear series, else errors compound;
* ``model="hybrid"`` -- that linear forecast plus the projection of its residuals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy  # submodules (scipy.signal etc.) load where first used: imports stay light

from tssdpa.checks import check_choice, check_int, check_positive
from tssdpa.estimators.parallel import parallel_map
from tssdpa.filters.analogue_data import AnalogueData
from tssdpa.filters.glitch_keys import own_key_neighbours
from tssdpa.filters.library_cache import (
    fitted_reach,
    library_data,
    library_search,
    series_candidates,
)
from tssdpa.signal import neighbours
from tssdpa.signal.missing import fill_forward
from tssdpa.signal.neighbours import kernel_weights, local_linear, weighted_mean

__all__ = [
    "MODELS",
    "Structure",
    "anchor_horizons",
    "forecast",
    "saved_contenders",
    "saved_structures",
    "switch_forecasts",
]

MODELS = ("mean", "local_linear", "linear", "recursive_linear", "hybrid")
NEIGHBOUR_MODELS = ("mean", "local_linear", "hybrid")
#: relative ridges tried by default: nearly none (smooth, nearly noise-free series need
#: precise slopes) to a firm one (short or noisy series) and a strong one (1e-1, since
#: 2026-12-06): where the patterns themselves are noisy, a slope fitted to noisy offsets is
#: too steep and shrinking it forecasts better (docs/filters.md, "Analogue forecasting")
RIDGES = (1e-12, 1e-9, 1e-6, 1e-3, 1e-1)
DEFAULT_RIDGE = 1e-3  # a structure saved without one (version 0.2.0 files)
_GATHER_ELEMS = 1 << 24  # neighbours' futures gathered per block of origins in forecast()
#: fewest origins a thread of forecast() takes: on a short buffer (a control loop's) the
#: threads' start and hand-over cost more than its fits (bench_forecast_latency.py)
_MIN_BLOCK = 256
RANGE_MARGIN = 0.25  # of the range of the values known, each side (:func:`within_range`)
#: a contender replaces the fit's choice only where the latter's recent errors exceed its own
#: by this fraction (chosen on development data: ETT validation months, IMU fusion cells)
SWITCH_MARGIN = 0.1


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
        """A structure read from a (not trusted) file, checked field by field: a known model,
        integer E, τ >= 1 spanning at most ``max_span`` samples, 0 <= k <= ``max_span`` (>= 1,
        and one of bandwidth / sigma, for the neighbour models), widths > 0, a ridge >= 0."""
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
        if p["model"] == "recursive_linear" and delay != 1:
            raise ValueError(f"{where}: model 'recursive_linear' needs delay 1, got {delay}")
        neighbour_model = p["model"] in NEIGHBOUR_MODELS
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


def saved_structures(best, horizon: int, span: int) -> dict[int, Structure]:
    """The structures of a file's ``best_params_``: one per anchor horizon of ``horizon``,
    each checked against the fitted series of ``span`` samples."""
    want = anchor_horizons(horizon)
    if not isinstance(best, dict) or sorted(best) != sorted(str(h) for h in want):
        got = list(best) if isinstance(best, dict) else best
        raise ValueError(f"best_params_ must hold the horizons {want}, got {got!r}")
    return {h: Structure.from_saved(best[str(h)], f"best_params_[{h}]", span) for h in want}


def saved_contenders(saved, structures: dict[int, Structure], span: int) -> dict[int, list]:
    """A file's ``contenders_``: at some anchor horizons, two or three distinct structures
    (the fit's choice and each scoring's own), the first the anchor's own of ``structures``."""
    if not isinstance(saved, dict):
        raise ValueError(f"contenders_ must be an object, got {saved!r}")
    out = {}
    for key, c in saved.items():
        if key not in {str(h) for h in structures}:
            raise ValueError(f"contenders_ has a horizon {key!r} that is no anchor horizon")
        if not isinstance(c, list) or not 2 <= len(c) <= 3:
            raise ValueError(f"contenders_[{key}] must list two or three structures")
        found = [Structure.from_saved(p, f"contenders_[{key}][{i}]", span)
                 for i, p in enumerate(c)]  # fmt: skip
        if found[0] != structures[int(key)] or len(set(found)) < len(c):
            raise ValueError(f"contenders_[{key}] must start with best_params_[{key}] and "
                             "hold distinct structures")  # fmt: skip
        out[int(key)] = [s.as_dict() for s in found]
    return out


def nan_mean(a: np.ndarray, axis: int) -> np.ndarray:
    """``np.nanmean`` without its warning on all-NaN slices (NaN there): it runs in the
    neighbour threads, where ``warnings.catch_warnings`` is not safe (it swaps a global)."""
    if a.shape[axis] == 1:  # one channel: its value, NaN stays NaN
        return np.take(a, 0, axis=axis)
    missing = np.isnan(a)
    if not missing.any():  # the common case, without the masked copy
        return a.sum(axis=axis) / a.shape[axis]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(missing, 0.0, a).sum(axis=axis) / (~missing).sum(axis=axis)


def neighbour_forecasts(model, w, keys_nb, query_keys, targets, lin_q, coefs, ridges,
                        guarded=False):  # fmt: skip
    """Forecasts (Q, n_h, C) of one neighbour model, one per ridge in ``ridges`` for the
    models with a linear part (a list); ``w`` (Q, k) weights, keys_nb (Q, k, D), targets
    (Q, k, n_h, C). The hybrid's, by ridge: ``lin_q`` the queries' linear forecasts
    (Q, n_h, C) and ``coefs`` the fits that gave them, (D1, n_h * C) or one per query
    (Q, D1, n_h * C). ``guarded``: local-linear forecasts of a query far off its neighbours'
    cloud fall back to their mean (:func:`~tssdpa.signal.neighbours.local_linear`; in
    forecasts, not in cross-validation, which scores the model unguarded as
    :func:`within_range` is)."""
    Q, k, nh, C = targets.shape
    if model == "mean":
        return [weighted_mean(w, targets.reshape(Q, k, -1)).reshape(Q, nh, C)]
    if model == "hybrid":
        # lin_q + sum_j w_j (target_j - [1, key_j] @ coef): the weighted mean of the
        # neighbours' residuals, by linearity without forming them (Q x k x n_h C values per
        # ridge): the mean target less the fit applied to [sum_j w_j, the mean key]. Every
        # neighbour with weight has a complete key and future (keys are usable rows), so a
        # residual is never NaN where its target is not
        mean = weighted_mean(w, targets.reshape(Q, k, -1))  # (Q, n_h * C)
        design = np.concatenate([w.sum(axis=1, keepdims=True), weighted_mean(w, keys_nb)], 1)
        out = []
        for r in ridges:
            c = coefs[r]
            lin_nb = design @ c if c.ndim == 2 else np.einsum("qd,qdm->qm", design, c)
            out.append(lin_q[r] + (mean - lin_nb).reshape(Q, nh, C))
        return out
    flat = local_linear(w, keys_nb, query_keys, targets.reshape(Q, k, -1), list(ridges),
                        guarded=guarded)  # fmt: skip
    return [f.reshape(Q, nh, C) for f in flat]


def structure_weights(dist, s: Structure):
    return kernel_weights(dist[:, : s.n_neighbors], s.bandwidth, s.sigma)


def _same(a, b):  # equal, or one the other rounded to float32 (a float32 copy of the log)
    with np.errstate(over="ignore", invalid="ignore"):  # (a relative tolerance took another
        return (a == b) | (np.float32(a) == b) | (a == np.float32(b))  # log at 1e7 for it)


def training_overlap(train, y2) -> tuple[int, int]:
    """``(run, after)`` of :func:`forecast`: the longest run of leading rows of ``y2`` repeating
    ``train`` from some offset (or its float32 rounding: a float32 copy of the log; a NaN of either
    -- a glitch the fit left out -- matches any value; a prefix through y2's first finite row
    too), and the fitted rows after (ties: most)."""
    T, n = len(train), len(y2)
    finite = np.flatnonzero(np.isfinite(y2[:, 0]))
    if not len(finite):
        return 0, 0
    r, best = finite[0], (0, 0)
    starts = np.flatnonzero(_same(train[:, 0], y2[r, 0])) - r
    # a value repeated in train (quantised data): narrow the starts by the next rows (the
    # first 16 alone missed the real one, and its rows were keyed twice)
    for k in finite[1:33]:
        if len(starts) <= 16:
            break
        idx = starts + k
        keep = (idx >= T) | _same(train[np.minimum(idx, T - 1), 0], y2[k, 0])
        starts = starts[keep] if keep.any() else starts
    for start in starts[:16]:
        m = min(n, T - start) if start >= 0 else 0
        a, b = y2[:m], train[start : start + m]
        same = (_same(a, b) | np.isnan(a) | np.isnan(b)).all(axis=1)
        run = m if same.all() else int(np.argmin(same))
        best = max(best, (run, T - start - run))
    return best


def forecast(train, y, overlap, s: Structure, horizons, known=None, views=None, rows=None):
    """(T, len(horizons), C) forecasts of every origin of ``y`` with structure ``s``.

    Keys: the training patterns (always allowed) and the patterns of ``y`` that are not
    training keys already, usable from origin t once their future is known (``j <= t - H``,
    H = max(horizons)). ``overlap = (run, after)``: the first ``run`` rows of ``y`` repeat
    training rows, which go on ``after`` more; pattern j of them is a training key where
    ``j + H < run + after`` (its future inside the training series), else a key of ``y``.
    ``known``: the fitted rows whose range bounds local-linear forecasts with ``y[:t+1]``'s
    (default ``train``; a library cut to ``library_size`` still knows the whole series).
    ``views``: the :class:`~tssdpa.filters.library_cache.FittedViews` ``train`` and ``known``
    come from, which keeps what they derive between calls. ``rows``: the origins to forecast
    (default all; the others NaN), each as the whole path would: a live loop's newest alone
    costs one neighbour search whatever the length of ``y``."""
    ridge = DEFAULT_RIDGE if s.ridge is None else s.ridge  # the mean has no linear part
    recursive = s.model == "recursive_linear"  # one fit, of the next step, for every horizon
    lib = library_data(views, train, s, [1] if recursive else horizons, ridge)
    if ridge not in lib.coef:  # only a tampered file's structure can get here
        raise ValueError(f"structure {s.as_dict()} leaves no complete pattern and future of "
                         f"horizon {max(lib.horizons)} in the fitted series")  # fmt: skip
    new = AnalogueData(y, s.embedding, s.delay, horizons, None)
    # a query whose pattern spans a gap carries the last known values forward (causal); keys
    # keep the gap, so no filled pattern ever becomes a neighbour
    fill = fill_forward(y.copy(), np.full(y.shape[1], np.nan))[0] if np.isnan(y).any() else None
    q_keys = new.keys if fill is None else AnalogueData(fill, s.embedding, s.delay, [1], None).keys
    if recursive:
        out = lib.recursive(np.nan_to_num(q_keys), ridge, horizons)
    elif s.model == "linear":
        out = lib.linear(np.nan_to_num(q_keys), ridge)
    else:
        H, known = max(horizons), train if known is None else known
        lib_keys, index = library_search(views, lib, s, horizons)
        own = new.usable & (np.arange(len(y)) >= min(overlap[0], sum(overlap) - H))
        own_keys = np.where(own[:, None], new.keys, np.nan)  # judged for glitches:
        reach, candidates = None, None
        if views is not None and known is views.fitted:
            reach = fitted_reach(views, known)
            candidates = series_candidates(views, y, reach)
        todo = np.arange(len(y)) if rows is None else np.asarray(rows, dtype=int)
        queries = q_keys
        if rows is not None:  # the other origins search nothing (a NaN query has no key)
            queries = np.full_like(q_keys, np.nan)
            queries[todo] = q_keys[todo]
        dist, idx = own_key_neighbours(queries, s.n_neighbors, H, own_keys, lib_keys, y, known,
                                       (s.embedding - 1) * s.delay, reach, index,
                                       candidates)  # fmt: skip
        safe, q = np.maximum(idx, 0), np.nan_to_num(q_keys)
        shape = (len(y), len(lib.horizons), lib.C)
        out = np.empty(shape) if rows is None else np.full(shape, np.nan)
        # origins in blocks, over the threads: a long path's neighbour futures (rows, k,
        # horizons, C) are large, and the local-linear fits of many origins take a while
        threads = max(1, neighbours.THREADS)
        step = max(1, _GATHER_ELEMS // threads // (s.n_neighbors * lib.futures[0].size))
        step = min(step, max(-(-len(todo) // threads), _MIN_BLOCK))

        def origins(a):  # each block writes its own rows: no second copy of the path
            r = slice(a, a + step) if rows is None else todo[a : a + step]
            nb = safe[r]
            # the weights and the hybrid's linear part of the origins asked for only (predict
            # asks for the newest of a buffer)
            lin_q = lib.linear(q[r], ridge) if s.model == "hybrid" else None
            out[r] = neighbour_forecasts(s.model, structure_weights(dist[r], s),
                                         _gather(lib.keys, new.keys, nb), q[r],
                                         _gather(lib.futures, new.futures, nb), {ridge: lin_q},
                                         lib.coef, [ridge], guarded=True)[0]  # fmt: skip

        parallel_map(origins, list(range(0, len(todo), step)))
        if s.model == "local_linear":
            out = within_range(out, known, y)
    out[~np.isfinite(q_keys).all(axis=1)] = np.nan
    return out


def _gather(library, own, idx):
    """The rows ``idx`` of the library's rows followed by the series' own (``idx`` numbered as
    :func:`~tssdpa.signal.neighbours.causal_neighbours` numbers them), without a copy of the
    two joined: the library's is kept between calls and can be long."""
    out = library[np.minimum(idx, len(library) - 1)]
    mine = idx >= len(library)
    if mine.any():
        out[mine] = own[idx[mine] - len(library)]
    return out


def within_range(out, train, y):
    """The forecasts ``out`` (T, n_h, C) from each origin t of ``y`` (T, C), clipped per
    channel to the range of the values known at t (``train`` and ``y[:t+1]``) widened by
    RANGE_MARGIN of it each side: a plane fitted on a neighbourhood extrapolates without bound
    where the query lies off its neighbours' cloud. Why the margin, and why cross-validation
    scores the model unguarded: docs/filters.md."""
    low = np.fmin(np.nanmin(train, axis=0), np.fmin.accumulate(y, axis=0))  # (T, C)
    high = np.fmax(np.nanmax(train, axis=0), np.fmax.accumulate(y, axis=0))
    pad = RANGE_MARGIN * (high - low)
    return np.clip(out, (low - pad)[:, None, :], (high + pad)[:, None, :])


def switch_forecasts(preds, y, overlap, horizons, half_life):
    """Per origin and horizon, the forecast of the contender whose recent errors are least.

    ``preds`` (n, T, len(horizons), C): the forecasts of ``n`` structures (the first is the
    fit's choice) at every origin of ``y`` (T, C). At origin t and horizon h the errors known
    are those of the origins s <= t - h whose target ``y[s+h]`` is new (``s + h >= overlap``:
    a target inside the repeated training rows is in the library, so its error says nothing);
    each contender's squared errors are summed with weights halving every ``half_life * h``
    origins (the h-step errors of consecutive origins overlap: about one independent error
    per h origins), over the origins where every contender and the target are known
    (paired). The fit's choice is the better-informed prior: another contender's sum counts
    ``1 + SWITCH_MARGIN`` times. The forecast is that of the least sum among the contenders
    with a value at t (ties, as before any error is known: the first in order). Causal:
    ``y[t+1:]`` changes nothing at t.
    """
    n, T, _, _ = preds.shape
    handicap = np.r_[1.0, np.full(n - 1, 1.0 + SWITCH_MARGIN)][:, None]
    out = np.empty(preds.shape[1:])
    origins = np.arange(T)
    for j, h in enumerate(horizons):
        p = preds[:, :, j]  # (n, T, C)
        target = np.full(y.shape, np.nan)
        target[: max(0, T - h)] = y[h:]
        sq = ((p - target) ** 2).sum(axis=-1)  # (n, T): NaN where a value is missing
        paired = np.isfinite(sq).all(axis=0)
        paired[: max(0, overlap - h)] = False
        # discounted running sums: score[:, s] = decay * score[:, s-1] + error of origin s
        decay = 0.5 ** (1.0 / (half_life * h))
        score = scipy.signal.lfilter([1.0], [1.0, -decay], np.where(paired, sq, 0.0), axis=1)
        handicapped = np.zeros((n, T))  # at origin t: the sums up to t - h (0 before any)
        handicapped[:, h:] = score[:, : max(0, T - h)] * handicap
        rank = np.argsort(handicapped, axis=0, kind="stable")  # ties (none known): in order
        has_value = np.take_along_axis(np.isfinite(p).all(axis=-1), rank, axis=0)
        pick = rank[np.argmax(has_value, axis=0), origins]  # the best ranked with a value
        out[:, j] = p[pick, origins]
    return out
