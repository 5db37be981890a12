"""Slow, obviously correct references of the signal-tier kernels (explicit Python loops).

Every fast kernel in :mod:`tssdpa.signal` has its reference here, and the tests compare them
(and both with :func:`tssdpa.ops.projection_sdpa`'s math backend on the same embeddings):

* :func:`attend_lags_reference` for :func:`tssdpa.signal.lags.attend_lags` (and its one-row
  form :func:`tssdpa.signal.lags.attend_newest`);
* :func:`kernel_regression_reference` for :func:`tssdpa.signal.library.kernel_regression`;
* :func:`neighbours_reference`, :func:`kernel_weights_reference` and
  :func:`local_linear_reference` for :mod:`tssdpa.signal.neighbours`;
* :func:`nonlocal_reference` for :func:`tssdpa.signal.nonlocal_filter.run_nonlocal`;
* :func:`lagged_products_reference` for
  :func:`tssdpa.signal.autocorrelation.lagged_products`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from tssdpa.signal.lags import GAP_MARGIN
from tssdpa.signal.local_polynomial import (
    FAINT_WEIGHT,
    PIVOT_FLOOR,
    SPAN_WEIGHT,
    power_of_two_at_most,
)

__all__ = [
    "attend_lags_reference",
    "kernel_regression_reference",
    "kernel_weights_reference",
    "lagged_products_reference",
    "local_linear_reference",
    "neighbours_reference",
    "nonlocal_reference",
]


def attend_lags_reference(
    E: np.ndarray, V: np.ndarray, rows: tuple[int, int], lag_min: int, lag_max: int, *,
    sigma: float, decay: float | None = None, decay_origin: int = 0,
    times: np.ndarray | None = None, tau: float | None = None, exclude_self: bool = False,
    fallback: np.ndarray | None = None, degree: int = 0,
) -> np.ndarray:  # fmt: skip
    """Slow, explicit-loop version of :func:`attend_lags` (float64), for tests; ``degree`` > 0
    fits the weighted polynomial in the time offset by least squares, one row at a time, and
    where the row has no reading of its own clips it into the range of the values it weighed,
    widened by :data:`~tssdpa.signal.lags.GAP_MARGIN` of it on each side."""
    start, stop = rows
    n_emb = E.shape[1]
    out = np.full((stop - start, V.shape[1]), np.nan)
    for t in range(start, stop):
        for c in range(V.shape[1]):  # a key serves the channels it has
            weights, values, offsets = [], [], []
            for lag in range(lag_min, lag_max + 1):
                j = t - lag
                if exclude_self and lag == 0:
                    continue
                if not np.isfinite(V[j, c]):
                    continue
                q, k = E[t].astype(np.float64), E[j].astype(np.float64)
                both = np.isfinite(q) & np.isfinite(k)
                n_common = int(both.sum())
                dist = 0.0
                if n_common:
                    dist = float(np.sum((q[both] - k[both]) ** 2)) * n_emb / n_common
                logw = -dist / (2.0 * sigma**2)
                if decay is not None:
                    logw += abs(lag - decay_origin) * math.log(decay)
                if times is not None and tau is not None:
                    if not (np.isfinite(times[t]) and np.isfinite(times[j])):
                        continue
                    logw -= abs(times[t] - times[j]) / tau
                weights.append(logw)
                values.append(float(V[j, c]))
                offsets.append(float(j - t))
            if not weights:
                if fallback is not None:
                    out[t - start, c] = fallback[t - start, c]
                continue
            lw = np.array(weights)
            w = np.exp(lw - lw.max())
            if degree == 0:
                out[t - start, c] = (w * np.array(values)).sum() / w.sum()
                continue
            # weighted least squares on 1, u, .., u^p (u: the time offset in units of the
            # power of 2 at or below the farthest key of weight at least SPAN_WEIGHT), p the
            # degree or, with fewer such keys than degree + 1, the highest degree they determine
            far = np.abs(np.array(offsets))[w >= SPAN_WEIGHT]
            u = np.array(offsets) / power_of_two_at_most(int(far.max()))
            p = min(degree, far.size - 1)
            X = np.vander(u, p + 1, increasing=True)
            G = X.T @ (w[:, None] * X) + np.diag([0.0] + [1e-12 * w.sum()] * p)
            # and, with a key of weight in (0, FAINT_WEIGHT), no power whose pivot (its diagonal
            # entry less what the lower powers explain) is below PIVOT_FLOOR of its diagonal
            # entry: the powers up to the first such one
            faint = bool(np.any((w > 0) & (w < FAINT_WEIGHT)))
            for k in range(1, (p if faint else 0) + 1):
                pivot = G[k, k] - G[k, :k] @ np.linalg.solve(G[:k, :k], G[:k, k])
                if pivot < PIVOT_FLOOR * G[k, k]:
                    p = k - 1
                    break
            X, G = X[:, : p + 1], G[: p + 1, : p + 1]
            beta = np.linalg.solve(G, X.T @ (w * np.array(values)))
            out[t - start, c] = beta[0]
            if lag_min <= 0 <= lag_max and not np.isfinite(V[t, c]):  # no reading of its own:
                weighed = np.array(values)[w >= SPAN_WEIGHT]  # near the values it weighed
                pad = GAP_MARGIN * (weighed.max() - weighed.min())
                out[t - start, c] = np.clip(beta[0], weighed.min() - pad, weighed.max() + pad)
    return out


def kernel_regression_reference(queries, keys, values, sigma, null_distance=None):
    """Loop form of :func:`~tssdpa.signal.library.kernel_regression` for one ``sigma``.

    Row i is ``sum_j w_ij values[j]`` with ``w_ij ∝ exp(-||q_i - k_j||² / 2σ²)`` from
    coordinate differences, plus (``null_distance`` r) a zero-valued pseudo-key with weight
    ``exp(-r² / 2σ²)``. Returns (N, V) float64.
    """
    queries = np.asarray(queries, dtype=np.float64)
    keys = np.asarray(keys, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    out = np.empty((len(queries), values.shape[1]))
    for i, q in enumerate(queries):
        logw = [-float(np.sum((q - k) ** 2)) / (2.0 * sigma**2) for k in keys]
        vals = list(values)
        if null_distance is not None:
            logw.append(-(float(null_distance) ** 2) / (2.0 * sigma**2))
            vals.append(np.zeros(values.shape[1]))
        lw = np.array(logw)
        w = np.exp(lw - lw.max())
        out[i] = (w[:, None] * np.array(vals)).sum(axis=0) / w.sum()
    return out


def neighbours_reference(queries, keys, k, allowed):
    """The k nearest keys of each query among those ``allowed(i, j)`` says it may use, by
    sorting every exact distance: (dist (Q, k), idx (Q, k)), inf / -1 where fewer exist."""
    dist = np.full((len(queries), k), np.inf)
    idx = np.full((len(queries), k), -1)
    for i, q in enumerate(queries):
        if not np.isfinite(q).all():
            continue
        cands = [
            (float(np.sqrt(np.sum((q - key) ** 2))), j)
            for j, key in enumerate(keys)
            if np.isfinite(key).all() and allowed(i, j)
        ]
        for n, (d, j) in enumerate(sorted(cands)[:k]):
            dist[i, n], idx[i, n] = d, j
    return dist, idx


def kernel_weights_reference(dist, bandwidth=None, sigma=None):
    """Loop form of :func:`~tssdpa.signal.neighbours.kernel_weights`, in exact arithmetic: the
    logits ``-(d² - d_min²) / 2σ²`` as fractions, so no square overflows or underflows."""
    out = np.zeros_like(dist, dtype=np.float64)
    for i, row in enumerate(dist):
        finite = [d for d in row if np.isfinite(d)]
        if not finite:
            continue
        s = Fraction(sigma if sigma is not None else bandwidth * (max(finite) or 1.0))
        near = Fraction(min(finite)) ** 2
        w = []
        for d in row:
            if not np.isfinite(d):
                w.append(0.0)
                continue
            excess = (Fraction(d) ** 2 - near) / (2 * s**2)
            w.append(math.exp(-float(excess)) if excess < 800 else 0.0)  # exp(-800) is 0
        out[i] = np.array(w) / sum(w)
    return out


def local_linear_reference(weights, neighbours, queries, targets, ridge=1e-3):
    """Loop form of :func:`~tssdpa.signal.neighbours.local_linear`: for each query, the
    weighted ridge regression of its neighbours' targets on [1, neighbour - query]."""
    Q, k, D = neighbours.shape
    out = np.full((Q, targets.shape[2]), np.nan)
    for i in range(Q):
        w = weights[i]
        if w.sum() == 0:
            continue
        w = w / w.sum()
        X = neighbours[i] - queries[i]  # (k, D) offsets
        t = np.nan_to_num(targets[i])
        scale = np.sum(w[:, None] * X**2) / max(D, 1)
        # the intercept is free: centre on the weighted means, then the ridge fit of the
        # slopes by the SVD of the weighted centred offsets, s / (s² + lambda) along each
        # direction; a direction with s² below 1e-15 of the largest or the centring's
        # rounding (16 k eps size)², size the largest coordinate of the query plus that of
        # its weighted neighbours, gets no slope (ridge 0: the minimum-norm slopes)
        xm, tm = w @ X, w @ t
        U, s, Vt = np.linalg.svd(np.sqrt(w)[:, None] * (X - xm), full_matrices=False)
        size = np.abs(neighbours[i][w > 0]).max(initial=0.0) + np.abs(queries[i]).max()
        floor = max(1e-15 * (s**2).max(initial=0.0), (16.0 * k * np.finfo(float).eps * size) ** 2)
        s = np.where(s**2 > floor, s, 0.0)
        lam = ridge * (scale if scale > 0 else 1.0)
        gain = np.divide(s, s**2 + lam, out=np.zeros_like(s), where=s > 0)
        b = np.sqrt(w)[:, None] * (t - tm)
        slopes = Vt.T @ (gain[:, None] * (U.T @ b))  # (D, V)
        out[i] = tm - xm @ slopes
    return out


def nonlocal_reference(x2, embedding, n_neighbors, sigma, exclude_self=False, tile=8192):
    """Loop form of :func:`~tssdpa.signal.nonlocal_filter.run_nonlocal` for one ``sigma``:
    ``(y (T, C), own weight (T,))``.

    The pattern of row t: the samples t - m/2 .. t + m/2 (m odd: t - (m-1)/2 .. t + (m-1)/2)
    less t itself, each channel a coordinate, the two end samples weighted sqrt(1/2) for even
    m. Keys: rows j with a complete pattern and finite x_j, with j = t (unless
    ``exclude_self``) or |j - t| > m // 2, and, in a series longer than 3 ``tile``, j within
    the tile of t (rows ``b tile .. (b+1) tile - 1``, b = t // tile) or the tiles on either
    side. Distance over the query's finite coordinates,
    scaled by (all coordinates) / (used ones); the k nearest by sorting every distance;
    Gaussian weights over them.
    """
    x2 = np.asarray(x2, dtype=np.float64)
    T, C = x2.shape
    half = embedding // 2
    offsets = [o for o in range(-half, half + 1) if o != 0]
    scale = {o: (math.sqrt(0.5) if embedding % 2 == 0 and abs(o) == half else 1.0) for o in offsets}

    def pattern(t):
        return np.array([
            scale[o] * x2[t + o, c] if 0 <= t + o < T else np.nan
            for o in offsets for c in range(C)
        ])  # fmt: skip

    pats = [pattern(t) for t in range(T)]
    y, own = np.full((T, C), np.nan), np.zeros(T)
    for t in range(T):
        q = pats[t]
        fin = np.isfinite(q)
        if not fin.any():
            continue
        cands = []
        b = t // tile
        for j in range(T):
            if T > 3 * tile and not (b - 1) * tile <= j < (b + 2) * tile:
                continue
            key = pats[j]
            if not (np.isfinite(key).all() and np.isfinite(x2[j]).all()):
                continue
            if (j == t and exclude_self) or 0 < abs(j - t) <= half:
                continue
            d2 = float(np.sum((q[fin] - key[fin]) ** 2)) * len(q) / fin.sum()
            cands.append((math.sqrt(d2), j))
        near = sorted(cands)[:n_neighbors]
        if not near:
            continue
        logw = np.array([-(d**2) / (2.0 * sigma**2) if math.isfinite(sigma) else 0.0
                         for d, _ in near])  # fmt: skip
        w = np.exp(logw - logw.max())
        w /= w.sum()
        y[t] = sum(wi * x2[j] for wi, (_, j) in zip(w, near))
        own[t] = sum(wi for wi, (_, j) in zip(w, near) if j == t)
    return y, own


def lagged_products_reference(x: np.ndarray, lags: int) -> np.ndarray:
    """``sum_t x[t] x[t + l]`` per column, summed one lag at a time."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    rows = [np.sum(x[: n - l] * x[l:], axis=0) if l < n else np.zeros(x.shape[1:])
            for l in range(lags)]  # fmt: skip
    return np.array(rows)
