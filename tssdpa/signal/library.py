"""Kernel regression over a fixed key library: projection SDPA without time structure.

The residual hybrids (and, later, every library-based estimator) attend from query patterns to
a *library* of training patterns whose values are known: Nadaraya–Watson regression, i.e.
:func:`tssdpa.ops.projection_sdpa` with no mask. Squared distances come from the float64
expansion ``||q||² + ||k||² - 2 q·k`` (one matrix product per block of queries, shared by
every kernel width); the loop reference with coordinate differences is
:func:`tssdpa.signal.reference.kernel_regression_reference`.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "far_gaps",
    "kernel_regression",
    "nearest_distance",
    "nearest_where_lost",
    "squared_distance_blocks",
]

_QUERY_BLOCK = 1024
_BLOCK_ELEMS = 2**22  # query rows per block: at most this many (row, key) distances


def squared_distance_blocks(queries: np.ndarray, keys: np.ndarray):
    """Yield ``(start, d2)``: float64 squared distances (n, M) for blocks of ``queries`` (N, D).

    Memory is O(block · M) with block · M <= 2**22.
    """
    k = np.ascontiguousarray(keys, dtype=np.float64)
    k2 = (k * k).sum(-1)
    block = max(1, min(_QUERY_BLOCK, _BLOCK_ELEMS // max(len(k), 1)))
    for s0 in range(0, len(queries), block):
        q = np.ascontiguousarray(queries[s0 : s0 + block], np.float64)
        d2 = (q * q).sum(-1, keepdims=True) + k2 - 2.0 * (q @ k.T)
        yield s0, np.maximum(d2, 0.0, out=d2)


def _softmax_rows(logits: np.ndarray) -> np.ndarray:
    w = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def far_gaps(queries: np.ndarray, keys: np.ndarray, valid=None):
    """``(gap, unit)`` for queries whose every squared distance overflows float64: ``gap``
    (n, M) each key's squared distance less the nearest usable one's, in units of ``unit**2``
    (n, 1), ``unit`` the largest coordinate the query compares (inf: not a usable key).

    ``queries`` (n, D); ``keys`` (M, D) shared or (n, M, D) per query; NaN coordinates are
    compared where both are finite, rescaled by D / (count in common), as the lag kernel does;
    ``valid`` (n, M) bool, optional. Where the keys share their coordinates in common (no NaN)
    the query's own square, common to every key, is left out: ``|k|² - 2 q·k``, so a query
    1e17 times farther than the keys are apart still tells them apart (the plain differences
    round them equal, and the row took their uniform mean)."""
    n, D = queries.shape
    M = keys.shape[-2]
    gap, unit = np.full((n, M), np.inf), np.ones((n, 1))
    for i in range(n):
        q = np.asarray(queries[i], dtype=np.float64)
        k = np.asarray(keys[i] if keys.ndim == 3 else keys, dtype=np.float64)
        fin = np.isfinite(q)[None, :] & np.isfinite(k)
        use = np.ones(M, dtype=bool) if valid is None else np.asarray(valid[i], dtype=bool)
        big = max(np.abs(np.where(fin, q, 0.0)).max(), np.abs(np.where(fin, k, 0.0)).max())
        unit[i] = big if 0.0 < big < np.inf else 1.0
        qs, ks = np.where(fin, q / unit[i], 0.0), np.where(fin, k / unit[i], 0.0)
        cnt = fin.sum(axis=1)
        g = (ks * (ks - 2.0 * qs)).sum(axis=1)  # over the coordinates in common
        if (fin[use] == fin[use][:1]).all():  # the same coordinates: |q|² is common to all
            d = g * (D / max(int(cnt[use][0]), 1)) if use.any() else g
        else:
            d = (D / np.maximum(cnt, 1)) * ((qs * qs).sum(axis=1) + g)
        d = np.where(cnt > 0, d, 0.0)  # nothing in common: distance 0 (lag kernel)
        d = np.where(use, d, np.inf)
        gap[i] = d - d.min() if use.any() else d
    return gap, unit


def nearest_where_lost(logits: np.ndarray, sq: np.ndarray, sigma, valid=None, unit=None) -> None:
    """Rows of the (n, M) Gaussian ``logits`` ``-sq / 2σ²`` with no finite one -- a ``sigma``
    far below the distances: every logit overflowed to -inf, or was 0/0 = NaN once σ²
    underflowed -- recomputed in place from the row's nearest key, ``-(sq - min sq) / 2σ²``.
    The softmax is the same, but keeps its largest logit 0: such a row had no weight at all
    (a NaN estimate) where the narrow kernel's limit is its nearest keys.

    ``sq``: the squared distances (a row with a NaN one, from a query or key with NaN, keeps
    its logits). ``sigma``: a float, or one per row (n, 1). ``valid`` (n, M) bool, optional:
    the keys a row has (a row with none keeps its logits; the others stay -inf). ``unit``
    (n, 1), optional: ``sq`` is in units of ``unit**2`` (:func:`far_gaps`), for rows whose
    squares overflowed; without it such a row (every key at inf) would have no nearest
    key. Other rows keep their logits (and their rounding).
    """
    lost = ~np.isfinite(logits.max(axis=1)) & ~np.isnan(sq).any(axis=1)
    if valid is not None:
        lost &= valid.any(axis=1)
    lost = np.flatnonzero(lost)
    if lost.size:
        sq = sq[lost]
        keys = None if valid is None else valid[lost]
        near = (sq if keys is None else np.where(keys, sq, np.inf)).min(axis=1, keepdims=True)
        gap = sq - near  # (inf - inf = NaN where every key's square overflowed: see unit)
        s = np.asarray(sigma, dtype=np.float64)
        s = s[lost] if s.ndim else s
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # 1/σ² capped
            scale = np.minimum(0.5 / s / s, np.finfo(np.float64).max)  # (0 · inf was NaN)
            if unit is not None:  # 0.5 (unit / σ)², inf past float64: the others -inf
                u = unit[lost]
                scale = np.where(u == 1.0, scale, 0.5 * np.square(u / s))
            out = np.where(gap > 0, -gap * scale, 0.0)
        logits[lost] = out if keys is None else np.where(keys, out, -np.inf)


def kernel_regression(queries, keys, values, sigmas, columns=None, null_distance=None):
    """Projection (Nadaraya–Watson) estimate of ``values`` (M, V) at ``queries`` (N, D).

    Row i of the output for a given sigma is ``sum_j w_ij values[j]`` with
    ``w_ij = softmax_j(-||q_i - k_j||^2 / 2 sigma^2)``: projection SDPA of Sanger's paper with
    the keys' values. Squared distances are computed in float64 once per block of queries and
    shared by every sigma; wide values (more than 256 columns, e.g. a 720-step residual path of
    7 channels) are averaged in float32, whose rounding (~1e-7 relative) is far below any
    forecast error.

    ``columns`` (one bool mask over V per sigma) limits each sigma to those value columns; the
    others are NaN. ``null_distance`` r adds a pseudo-key with value 0 at distance r from
    every query (weight ``exp(-r^2 / 2 sigma^2)``): a query with keys well within r is barely
    affected, while a query farther than r from every key (a pattern never seen in training)
    gets an estimate shrunk towards 0 instead of its nearest key's value. Returns a list of
    (N, V) float64 arrays, one per sigma.
    """
    sigmas = [float(s) for s in sigmas]
    if columns is None:
        columns = [np.ones(values.shape[1], bool)] * len(sigmas)
    vs = []
    for cols in columns:
        sub = values[:, cols]
        dtype = np.float32 if sub.shape[1] > 256 else np.float64
        vs.append(np.ascontiguousarray(sub, dtype=dtype))
    outs = [np.full((len(queries), values.shape[1]), np.nan) for _ in sigmas]
    for s0, d2 in squared_distance_blocks(queries, keys):  # d2: (n, M)
        for out, s, cols, v in zip(outs, sigmas, columns, vs):
            if v.shape[1] == 0:
                continue
            # s * s, not s**2, which raised OverflowError past 1e154 (there: uniform weights)
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                logits = d2 / (-2.0 * (s * s))
            sq = d2
            if null_distance is not None:  # the pseudo-key's column is dropped after normalising
                r = np.float64(null_distance)
                with np.errstate(over="ignore"):  # a radius past 1e154: -inf, no weight
                    null_logit, null_sq = -0.5 * np.square(r / s), np.square(r)
                null = np.full_like(logits[:, :1], null_logit)
                logits = np.concatenate([logits, null], axis=-1)
                sq = None  # built below only where a row lost every logit: rare, a copy of d2
            if not np.isfinite(logits.max(axis=1)).all():
                if sq is None:
                    sq = np.concatenate([d2, np.full_like(null, null_sq)], axis=-1)
                unit = None
                q = queries[s0 : s0 + len(d2)]
                over = np.flatnonzero(~np.isfinite(sq).any(axis=1) & np.isfinite(q).all(axis=1))
                if over.size:  # every key's square overflowed: the gaps between them
                    sq, unit = sq.copy(), np.ones((len(sq), 1))
                    sq_o, unit[over] = far_gaps(q[over], np.asarray(keys))
                    if null_distance is not None:  # its radius's square overflowed too: out
                        sq_o = np.concatenate([sq_o, np.full((len(over), 1), np.inf)], axis=-1)
                    sq[over] = sq_o
                nearest_where_lost(logits, sq, s, unit=unit)
            w = _softmax_rows(logits)
            if null_distance is not None:
                w = w[:, :-1]
            out[s0 : s0 + len(d2), cols] = w.astype(v.dtype) @ v
    return outs


def nearest_distance(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """(N,) Euclidean distance from each query (N, D) to its nearest key (M, D)."""
    out = np.empty(len(queries))
    for s0, d2 in squared_distance_blocks(queries, keys):
        out[s0 : s0 + len(d2)] = np.sqrt(d2.min(axis=-1))
    return out
