"""Nearest-neighbour key libraries: top-k projection, adaptive bandwidth, local-linear fits.

Projection SDPA over a whole history costs O(N) per query; restricted to the k keys nearest to
each query (the only ones with a non-negligible Gaussian weight at a bandwidth that follows the
local density) it costs O(k log N) with a k-d tree and O(N k) memory, never N x N:

* :func:`loo_neighbours` -- each key's k nearest *other* keys, skipping those within an
  exclusion radius in time (keys that overlap the query's own window), for cross-validation;
* :func:`causal_neighbours` -- each query row's k nearest among a fixed library (always
  allowed) and the rows of its own series at least ``lag`` steps in its past: exactly causal,
  with k-d trees over time blocks and brute force inside the newest block;
* :func:`kernel_weights` -- ``exp(-d² / 2σ_i²)`` with ``σ_i = bandwidth · d_k(i)`` (the
  distance of the query's k-th neighbour: adaptive) or a fixed ``σ``;
* :func:`weighted_mean` and :func:`local_linear` -- the projection (Nadaraya–Watson) and its
  first-order form, kernel-weighted ridge least squares on the neighbourhood (S-map's idea).

Every function has an explicit-loop reference in :mod:`tssdpa.signal.reference`. Distances
are Euclidean; a key or query with a NaN coordinate is never a neighbour and gets no estimate.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import scipy  # submodules (scipy.signal etc.) load where first used: imports stay light

from tssdpa.signal.spd import solve_spd

__all__ = [
    "THREADS",
    "block_edges",
    "causal_neighbours",
    "kernel_weights",
    "library_index",
    "local_linear",
    "loo_neighbours",
    "search_threads",
    "weighted_mean",
]

_BRUTE_ELEMS = 1 << 22  # (query, key) distances per brute-force block
#: threads for neighbour searches (k-d tree queries) and for the forecaster's and the filter's
#: searches over their candidates (``tssdpa.estimators.parallel``); read at each call, so
#: ``tssdpa.signal.neighbours.THREADS = 1`` limits them
THREADS = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
#: set in the worker threads of ``tssdpa.estimators.parallel.parallel_map``
_POOL = threading.local()


#: fewer queries than this search a k-d tree in one thread (bench_forecast_latency.py)
_MIN_THREADED_QUERIES = 256


def search_threads() -> int:
    """Threads for one k-d tree query: ``THREADS``, but inside a worker of
    :func:`~tssdpa.estimators.parallel.parallel_map` that worker's share of them
    (``THREADS // workers``, at least 1): the pool already keeps the cores busy, and a tree
    query over ``THREADS`` threads in each of ``THREADS`` workers would run ``THREADS**2``."""
    return getattr(_POOL, "threads", None) or THREADS


def _finite_rows(a: np.ndarray) -> np.ndarray:
    return np.isfinite(a).all(axis=1)


def _merge(dist, idx, new_d, new_i, k):
    """Keep the k smallest of two sorted-or-not candidate sets per row (inf = none)."""
    d = np.concatenate([dist, new_d], axis=1)
    i = np.concatenate([idx, new_i], axis=1)
    if d.shape[1] > k:
        part = np.argpartition(d, k - 1, axis=1)[:, :k]
        d = np.take_along_axis(d, part, axis=1)
        i = np.take_along_axis(i, part, axis=1)
    order = np.argsort(d, axis=1, kind="stable")
    return np.take_along_axis(d, order, axis=1), np.take_along_axis(i, order, axis=1)


def _tree_query(tree, rows_of_tree, queries, k):
    """k nearest (distances, row numbers) of ``queries`` in ``tree`` (inf / -1 pad)."""
    kk = min(k, tree.n)
    # a few queries (a short buffer's) finish before more threads would have started
    workers = search_threads() if len(queries) >= _MIN_THREADED_QUERIES else 1
    d, i = tree.query(queries, k=kk, workers=workers)
    d = np.asarray(d, dtype=np.float64).reshape(len(queries), kk)
    rows = rows_of_tree[np.asarray(i).reshape(len(queries), kk)]
    if kk < k:
        d = np.pad(d, ((0, 0), (0, k - kk)), constant_values=np.inf)
        rows = np.pad(rows, ((0, 0), (0, k - kk)), constant_values=-1)
    return d, rows


def _brute(queries, keys, k, allowed=None):
    """k nearest by exact distances; ``allowed`` (n_q, n_k) bool masks keys per query."""
    d2 = np.zeros((len(queries), len(keys)))
    for c in range(keys.shape[1]):  # coordinate by coordinate: memory (n_q, n_k), not x D
        diff = queries[:, c, None] - keys[None, :, c]
        d2 += diff * diff
    if allowed is not None:
        d2 = np.where(allowed, d2, np.inf)
    kk = min(k, keys.shape[0])
    part = np.argpartition(d2, kk - 1, axis=1)[:, :kk] if kk else np.zeros((len(d2), 0), int)
    d = np.sqrt(np.take_along_axis(d2, part, axis=1))
    if kk < k:
        d = np.pad(d, ((0, 0), (0, k - kk)), constant_values=np.inf)
        part = np.pad(part, ((0, 0), (0, k - kk)), constant_values=-1)
    return d, np.where(np.isfinite(d), part, -1)


def loo_neighbours(keys: np.ndarray, k: int, exclusion: int, rows=None):
    """For each key row ``r`` in ``rows`` (default: all), its k nearest keys ``j`` with
    ``|j - r| > exclusion`` (never itself).

    ``keys`` (N, D); rows with NaN are neither queries nor neighbours. Returns
    ``(dist (Q, k), idx (Q, k))`` sorted by distance, ``inf`` / ``-1`` where fewer exist.
    Keys at equal distances (duplicated patterns, quantised data) come in the k-d tree's
    order, not by row: the distances are those of the reference, but which of several tied
    keys fills the last places may differ from it (deterministic for the same input).
    """
    N = keys.shape[0]
    rows = np.arange(N) if rows is None else np.asarray(rows)
    dist = np.full((len(rows), k), np.inf)
    idx = np.full((len(rows), k), -1)
    ok = _finite_rows(keys)
    key_rows = np.flatnonzero(ok)
    qok = ok[rows]
    if not len(key_rows) or not qok.any():
        return dist, idx
    tree = scipy.spatial.cKDTree(keys[key_rows])
    want = k + 2 * exclusion + 1
    q = rows[qok]
    d, j = _tree_query(tree, key_rows, keys[q], want)
    keep = (np.abs(j - q[:, None]) > exclusion) & (j >= 0)
    # the k nearest kept candidates: a stable sort puts the kept ones first, in distance order
    order = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    d = np.where(np.take_along_axis(keep, order, 1), np.take_along_axis(d, order, 1), np.inf)
    j = np.where(np.isfinite(d), np.take_along_axis(j, order, 1), -1)
    short = np.isinf(d[:, -1]) & (keep.sum(axis=1) < min(k, len(key_rows)))
    if short.any():  # too many candidates fell inside the exclusion window: search them all
        for s0 in range(0, int(short.sum()), max(1, _BRUTE_ELEMS // len(key_rows))):
            sub = np.flatnonzero(short)[s0 : s0 + max(1, _BRUTE_ELEMS // len(key_rows))]
            allowed = np.abs(key_rows[None, :] - q[sub, None]) > exclusion
            bd, bi = _brute(keys[q[sub]], keys[key_rows], k, allowed)
            d[sub], j[sub] = bd, np.where(bi >= 0, key_rows[np.maximum(bi, 0)], -1)
    dist[qok], idx[qok] = d, j
    return dist, idx


def library_index(library: np.ndarray):
    """``(tree, rows)``: a k-d tree over the rows of ``library`` (N, D) without NaN, and their
    row numbers (``tree`` None where there are none) -- for :func:`causal_neighbours` to search
    a fixed library built once (a fitted forecaster's, between calls)."""
    rows = np.flatnonzero(_finite_rows(library))
    return (scipy.spatial.cKDTree(library[rows]) if len(rows) else None), rows


def block_edges(n: int) -> list[int]:
    """The edges of :func:`causal_neighbours`' time blocks over ``n`` key rows: each block as
    long as 8 sqrt of the rows before it (128 to 4096), which balances tree searches (~T n /
    block) and exact distances (~T block). Fixed by position: a row's blocks, so its
    neighbours among tied keys (quantised data), never depend on how many rows come after it
    -- a block length from the number of keys made a forecast change with the length of the
    series after its origin (a new user's gyroscope)."""
    edges = [0]
    while edges[-1] < n:
        edges.append(edges[-1] + int(min(max(128, 8 * np.sqrt(edges[-1])), 4096)))
    edges[-1] = n
    return edges if n else [0, 0]


def causal_neighbours(
    queries: np.ndarray,
    k: int,
    lag: int,
    *,
    keys: np.ndarray | None = None,
    library: np.ndarray | None = None,
    block: int | None = None,
    index=None,
):
    """For each query row ``t`` its k nearest keys among all rows of ``library`` (always
    allowed) and the rows ``j <= t - lag`` of ``keys`` (default: the queries themselves).

    Returns ``(dist (T, k), idx (T, k))`` sorted by distance; ``idx`` numbers the library
    rows first (``0 .. L-1``) and the key rows after them (``L + j``); ``inf`` / ``-1`` where
    fewer keys exist. Key rows are searched with one k-d tree per time block (of ``block``
    rows, by default :func:`block_edges`: the blocks entirely in a query's past) plus exact
    distances inside the block that contains ``t - lag``: exact for every query,
    O(T (T / block) log block + T block) work. Keys at equal distances come in the trees' and
    blocks' order, not by row: which of several tied keys fills the last places may differ
    from the reference's and with ``block``, the distances never do; with the default blocks
    it never depends on the rows after the query. ``index``: the
    :func:`library_index` of ``library``, built already (the same neighbours, without the
    tree's build).
    """
    keys = queries if keys is None else keys
    T = queries.shape[0]
    L = 0 if library is None else library.shape[0]
    dist = np.full((T, k), np.inf)
    idx = np.full((T, k), -1)
    qok = _finite_rows(queries)
    if not qok.any():
        return dist, idx
    if L:
        tree, lib_rows = library_index(library) if index is None else index
        if tree is not None:
            q = np.flatnonzero(qok)
            dist[q], idx[q] = _tree_query(tree, lib_rows, queries[q], k)
    n = keys.shape[0]
    kok = _finite_rows(keys)
    edges = block_edges(n) if block is None else [*range(0, n, block), n]
    for s, e in zip(edges[:-1], edges[1:]):
        rows = s + np.flatnonzero(kok[s:e])
        if not len(rows):
            continue
        # queries that see the whole block (t - lag >= e - 1) use its tree
        q = np.flatnonzero(qok & (np.arange(T) - lag >= e - 1))
        if len(q):
            d, i = _tree_query(scipy.spatial.cKDTree(keys[rows]), rows + L, queries[q], k)
            dist[q], idx[q] = _merge(dist[q], idx[q], d, i, k)
        # queries whose newest allowed key falls inside the block: exact distances, masked
        q = np.flatnonzero(qok & (np.arange(T) - lag >= s) & (np.arange(T) - lag < e - 1))
        step = max(1, _BRUTE_ELEMS // len(rows))
        for q0 in range(0, len(q), step):
            qs = q[q0 : q0 + step]
            allowed = rows[None, :] <= (qs[:, None] - lag)
            d, i = _brute(queries[qs], keys[rows], k, allowed)
            i = np.where(i >= 0, rows[np.maximum(i, 0)] + L, -1)
            dist[qs], idx[qs] = _merge(dist[qs], idx[qs], d, i, k)
    return dist, idx


def kernel_weights(dist: np.ndarray, bandwidth: float | None = None, sigma=None) -> np.ndarray:
    """Normalised Gaussian weights (Q, k) of neighbours at distances ``dist`` (inf = none).

    Adaptive (``bandwidth``): ``σ_i = bandwidth · d_k(i)``, the distance of the query's
    farthest usable neighbour, so the kernel follows the local density of the keys (a query
    whose neighbours all coincide with it weights them equally). Fixed (``sigma``): one width.
    A row with no usable neighbour is all zeros.
    """
    finite = np.isfinite(dist)
    d = np.where(finite, dist, 0.0)
    if sigma is None:
        ref = d.max(axis=1, keepdims=True)
        s = bandwidth * np.where(ref > 0, ref, 1.0)
    else:
        s = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (len(d), 1))
    # The logits relative to the nearest key, -(d² - d_min²) / 2σ², as two ratios to σ: the
    # softmax is the same, its largest logit is 0, and neither d² nor σ² is formed, so
    # distances of 1e200 (d² overflows) or 1e-200 (d² underflows) weigh as at 1 -- they took
    # the uniform mean -- and a σ far below the distances leaves the nearest keys alone.
    near = np.where(finite, d, np.inf).min(axis=1, keepdims=True)
    near = np.where(np.isfinite(near), near, 0.0)  # a row without keys: all -inf below
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # a width near 0
        logw = -0.5 * ((d - near) / s) * ((d + near) / s)
    logw = np.where(d == near, 0.0, logw)  # 0 x inf where d / σ overflows at the nearest
    w = np.exp(np.where(finite, logw, -np.inf))
    tot = w.sum(axis=1, keepdims=True)
    return np.divide(w, tot, out=np.zeros_like(w), where=tot > 0)


def _finite(a: np.ndarray) -> np.ndarray:
    # unused slots (weight 0) may hold NaN; one check is cheaper than always copying
    return np.nan_to_num(a) if np.isnan(a).any() else a


def weighted_mean(weights: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``sum_j w_ij targets[i, j]``: (Q, k) weights, (Q, k, V) targets -> (Q, V); NaN for a
    row without weight."""
    out = np.matmul(weights[:, None, :], _finite(targets))[:, 0, :]
    out[weights.sum(axis=1) == 0] = np.nan
    return out


def rounding_floor(w, neighbours, queries) -> np.ndarray:
    """(Q, 1): the squared spread the centring of a neighbourhood leaves as rounding, below
    which :func:`local_linear` resolves no direction: ``(16 k eps size)²``, ``size`` the
    largest coordinate of the query plus that of its neighbours of weight > 0 (rows of ``w``
    (Q, k)), so that offsets from the query, or from the neighbours' mean, are covered."""
    k = w.shape[1]
    used = np.where((w > 0)[:, :, None], np.abs(neighbours), 0.0)
    size = used.max(axis=(1, 2), initial=0.0) + np.abs(queries).max(axis=1, initial=0.0)
    return ((16.0 * k * np.finfo(np.float64).eps) * size)[:, None] ** 2


#: :func:`local_linear`'s ``guarded``: a query whose leverage (its squared distance from its
#: neighbours' weighted mean, in units of their spread along each direction, the ridge added)
#: exceeds OFF_CLOUD_LEVERAGE, and whose slope moves the estimate more than OFF_CLOUD_SHIFT
#: weighted standard deviations of the targets, gets their weighted mean
OFF_CLOUD_LEVERAGE, OFF_CLOUD_SHIFT = 1e6, 25.0


def local_linear(weights, neighbours, queries, targets, ridge=1e-3, guarded=False):
    """Kernel-weighted local-linear estimate at each query: the intercept of the weighted
    ridge fit ``targets ≈ a + B (neighbour - query)`` over its neighbourhood.

    ``ridge`` may be a list: then a list of estimates, one per ridge, sharing the moments.

    ``weights`` (Q, k), ``neighbours`` (Q, k, D), ``queries`` (Q, D), ``targets`` (Q, k, V).
    The slope penalty is ``ridge`` times the mean weighted second moment of the offsets (so
    it is scale-free); the intercept is not penalised. A neighbourhood too small or degenerate
    to fit a slope (fewer than D + 1 weighted neighbours) falls back towards the weighted mean
    through the ridge (with ``ridge`` 0: the minimum-norm slope, no slope along a direction
    the neighbours spread less than rounding in (:func:`rounding_floor`): all of them
    identical give the weighted mean of their targets). Returns (Q, V); NaN for a row
    without weight.

    The intercept is eliminated by centring on the weighted means, rather than solved with
    the slopes in the normal equations in [1, offset] with a fixed 1e-12 on the diagonal: the
    keys of a smooth flow lie within about 1e-3 of the query and near a low-dimensional
    surface of the embedding, and that fixed term, large against offsets of 1e-3, acted as a
    ridge of about 1e-6 and cost most of the precision a small ridge can give (on a clean
    Lorenz series, a one-step error about 3x larger). Ridges above ``10 D² eps``
    (every default ridge up to D = 21) keep the centred system safely positive definite; it
    is then solved by elimination over all queries and ridges at once
    (:func:`~tssdpa.signal.spd.solve_spd`), faster than the eigendecomposition per query that
    smaller ridges need (``experiments/bench_local_linear.py``).

    ``guarded``: the weighted mean of the targets where the query lies far off its
    neighbours' cloud along a direction they barely spread in and the slope along it moves
    the estimate far (:data:`OFF_CLOUD_LEVERAGE`, :data:`OFF_CLOUD_SHIFT`): on a smooth,
    clean flow the neighbours lie near a thin surface and the ridge chosen is tiny, and a
    query whose newest sample is held (repeated) met slopes that only rounding bounded.
    """
    Q, k, D = neighbours.shape
    tot = weights.sum(axis=1, keepdims=True)
    w = np.divide(weights, tot, out=np.zeros_like(weights), where=tot > 0)  # (Q, k), rows sum 1
    keys = _finite(neighbours)
    t = _finite(targets)  # (Q, k, V)
    # the unpenalised intercept, eliminated by centring on the weighted means
    key_mean = np.matmul(w[:, None, :], keys)[:, 0, :]  # (Q, D)
    off_mean = key_mean - _finite(queries)  # the weighted mean offset from the query
    t_mean = np.matmul(w[:, None, :], t)[:, 0, :]  # (Q, V)
    centred = keys - key_mean[:, None, :]  # (Q, k, D)
    wc = (centred * w[:, :, None]).transpose(0, 2, 1)  # (Q, D, k)
    gram = np.matmul(wc, centred)  # the centred weighted Gram matrix (Q, D, D)
    cross = np.matmul(wc, t - t_mean[:, None, :])  # (Q, D, V)
    # the offsets' mean weighted second moment: their variance plus their squared mean
    scale = (np.trace(gram, axis1=1, axis2=2) + (off_mean**2).sum(axis=1)) / max(D, 1)
    scale = np.where(scale > 0, scale, 1.0)  # (Q,)
    ridges = [float(r) for r in (ridge if isinstance(ridge, (list, tuple)) else [ridge])]
    distinct = sorted(set(ridges))
    # the estimate at offset 0 is t_mean - B^T off_mean with slopes
    # B = (gram + ridge scale I)^-1 cross, i.e. t_mean - u^T cross, u = (..)^-1 off_mean.
    # Where every ridge lifts the eigenvalues well above the Gram matrix's rounding (about
    # D eps of its largest eigenvalue, which is at most D scale), elimination over all
    # queries and ridges at once; otherwise every ridge in one eigenbasis. There, eigenvalues
    # below 1e-15 of the largest, or below the centring's rounding (rounding_floor: all
    # neighbours identical left rounding alone), are not resolved (0), and a direction whose
    # eigenvalue plus ridge is still below that gets no slope (ridge 0: the minimum-norm
    # slope): the cross moments along it are rounding too, which a tiny ridge would amplify
    u = {}
    if distinct and distinct[0] > 10 * D**2 * np.finfo(float).eps:
        R, diag = len(distinct), np.arange(D)
        A = np.broadcast_to(gram, (R, Q, D, D)).copy()
        A[:, :, diag, diag] += np.multiply.outer(distinct, scale)[:, :, None]
        rhs = np.broadcast_to(off_mean[:, :, None], (R, Q, D, 1)).reshape(R * Q, D, 1)
        u = dict(zip(distinct, solve_spd(A.reshape(R * Q, D, D), rhs).reshape(R, Q, D)))
    elif distinct:
        lam, vec = np.linalg.eigh(gram)
        floor = np.maximum(1e-15 * lam[:, -1:], rounding_floor(w, keys, _finite(queries)))
        lam = np.where(lam > floor, lam, 0.0)
        mean_along = np.matmul(vec.transpose(0, 2, 1), off_mean[:, :, None])  # (Q, D, 1)
        for r in distinct:
            denom = lam + r * scale[:, None]
            gain = np.divide(1.0, denom, out=np.zeros_like(lam), where=denom > floor)
            u[r] = np.matmul(vec, gain[:, :, None] * mean_along)[:, :, 0]
    empty = tot[:, 0] == 0
    if guarded:  # the targets' weighted standard deviations (Q, V)
        spread = np.sqrt(np.matmul(w[:, None, :], (t - t_mean[:, None, :]) ** 2)[:, 0, :])
    outs = []
    for r in ridges:
        shift = np.matmul(u[r][:, None, :], cross)[:, 0, :]  # (Q, V)
        out = t_mean - shift
        if guarded:
            far = (off_mean * u[r]).sum(axis=1) > OFF_CLOUD_LEVERAGE  # (Q,)
            off = far[:, None] & (np.abs(shift) > OFF_CLOUD_SHIFT * spread)
            out = np.where(off, t_mean, out)
        out[empty] = np.nan
        outs.append(out)
    return outs if isinstance(ridge, (list, tuple)) else outs[0]
