"""The non-local zero-phase projection filter: keys are the whole series' patterns.

The windowed filters of :mod:`tssdpa.signal.lagfilter` attend to the samples within a window
of the query. A signal that repeats -- a heartbeat, a gait cycle, a pulse train -- holds
copies of each stretch far outside any window, and averaging over them removes far more
noise than averaging over neighbours in time (non-local means, Buades, Coll & Morel 2005).
Here output ``y_t`` is the projection over the ``n_neighbors`` patterns of the whole series
nearest to the query's pattern (top-k projection SDPA, exact Gaussian weights):

    y_t = sum_j w_tj x_j,   w_tj ∝ exp(-||e_t - e_j||² / 2σ²)   over the k nearest e_j,

``e_t`` the centred (time-symmetric) embedding of length m >= 2, as for the zero-phase
windowed filter, *less the sample x_t itself*: which keys are chosen, and their weights, then
never depend on the sample being estimated, so the output is linear in x_t (with the weight
of its own pattern, at distance 0) and Stein's unbiased risk estimate, which
:meth:`~tssdpa.filters.ProjectionFilter.fit` scores candidates by, stays unbiased. With x_t
in the pattern the choice of the k nearest keys would follow x_t's noise, through a
discontinuity SURE cannot see, and SURE would prefer exactly the candidates that overfit.
Keys are the rows whose pattern has no missing sample, searched with a k-d tree or, for long
patterns among many keys (``BLAS_DIM``, ``BLAS_KEYS``), where a k-d tree prunes little, by
matrix products over blocks of queries (the fused operator's ``||k||² - 2 q·k``), the
candidates' distances then recomputed from their differences (blocks of a fixed size, never T x
T). "The whole series" holds up to ``3 TILE`` (24,576) samples; a longer one is cut into tiles
of ``TILE`` samples, and a query's keys are the patterns of its tile and the tiles on either
side (at least 8,192 samples of context each way but at the ends), so the cost grows linearly
with the series, not quadratically (``experiments/bench_nonlocal.py``). :func:`run_nonlocal`
goes tile by tile, so that the patterns, neighbours and weights it holds are those of one tile
and its keys, whatever the length: O(TILE (k C + m C)) memory besides the (T, C) input and
outputs. A query with missing samples in its pattern (the first and last m/2 rows, or near a
gap) is compared on its finite coordinates only, the squared distance scaled by D / (coordinates
used) for D coordinates, as the windowed filter does, by exact distances to every key of its
tiles: O(TILE D) each, so a series with many scattered gaps costs up to O(T TILE D). Keys at
equal computed distances go to the earlier one; distances equal only up to rounding are not
ties, so a quantised series shifted by a constant, or with its channels in another order, may
pick other keys among equally near ones (an output 0.05 apart on a unit sine in steps of 0.1).
``exclude_self`` leaves the query's own pattern out.

The slow reference is :func:`tssdpa.signal.reference.nonlocal_reference`.
"""

from __future__ import annotations

import numpy as np
import scipy  # submodules (scipy.signal etc.) load where first used: imports stay light

from tssdpa.signal import neighbours
from tssdpa.signal.embedding import centred_embedding
from tssdpa.signal.neighbours import kernel_weights, weighted_mean

__all__ = ["TILE", "library_range", "nonlocal_neighbours", "patterns", "run_nonlocal", "tiles"]

_BRUTE_ELEMS = 1 << 22  # (query, key) distances per block of the exact search
#: patterns of at least BLAS_DIM coordinates among at least BLAS_KEYS keys are searched by
#: matrix products, the rest by a k-d tree: in many dimensions a tree prunes little, and how
#: little depends on the data, while the products' cost is T x keys x D whatever the data.
#: With 63-sample patterns the products took 0.4-0.6x the tree's time from 40,000 samples on,
#: about the same at 10,000; with 31-sample ones, or at 4,000 samples (what fit scores), the
#: tree was as fast or faster, and on drifting or nearly clean data much faster
#: (experiments/bench_nonlocal.py)
BLAS_DIM = 48
BLAS_KEYS = 8192
_RUN = 8  # keys per group whose minimum :func:`_blas_nearest` ranks first
#: rows per tile of a long series: a row's keys come from its tile and the two beside it
TILE = 8192


def patterns(x2: np.ndarray, m: int) -> np.ndarray:
    """(T, D) patterns of (T, C) ``x2``: the centred embedding of length m less the sample
    itself (all its channels), NaN where the pattern leaves the series."""
    E = centred_embedding(x2, m)
    C = x2.shape[1]
    mid = (E.shape[1] // C - 1) // 2  # the block of the sample itself, in the middle
    return np.delete(E, np.s_[mid * C : (mid + 1) * C], axis=1)


def _sorted(d: np.ndarray, j: np.ndarray):
    """Each row of (n, L) distances ``d`` and key rows ``j`` in the order (distance, row): ties
    go to the earlier key, whatever order a search returned them in."""
    order = np.lexsort((j, d), axis=1)
    return np.take_along_axis(d, order, 1), np.take_along_axis(j, order, 1)


def _exact_nearest(queries, keys, key_rows, k: int, allowed: np.ndarray):
    """k nearest ``keys`` (complete; rows ``key_rows`` of the series) of each query among
    those ``allowed`` (n_q, n_k), by the distance over the query's finite coordinates scaled
    to all D of them (the windowed filter's rule for missing samples): (dist, idx) sorted by
    (distance, row), inf / -1 where fewer exist."""
    D = keys.shape[1]
    fin = np.isfinite(queries)
    q0 = np.where(fin, queries, 0.0)
    d2 = np.zeros((len(queries), len(keys)))
    with np.errstate(over="ignore"):  # inf: a key beyond float64's squares is none
        for c in range(D):  # coordinate by coordinate: memory (n_q, n_k), not x D
            diff = q0[:, c, None] - keys[None, :, c]
            d2 += np.where(fin[:, c, None], diff * diff, 0.0)
    d2 *= (D / np.maximum(fin.sum(axis=1), 1))[:, None]
    d = np.sqrt(np.where(allowed, d2, np.inf))
    # the k nearest, ties at the k-th distance included, then those in (distance, row) order
    kth = np.partition(d, k - 1, axis=1)[:, k - 1 : k]
    M = max(k, int((d <= kth).sum(axis=1).max()))
    part = np.argpartition(d, M - 1, axis=1)[:, :M] if M < d.shape[1] else None
    j = np.broadcast_to(key_rows, d.shape)
    if part is not None:
        d, j = np.take_along_axis(d, part, 1), key_rows[part]
    d, j = _sorted(d, j)
    d, j = d[:, :k], j[:, :k]
    return d, np.where(np.isfinite(d), j, -1)


def _blas_nearest(P, q, key_rows, want: int):
    """The ``want`` nearest of the (complete) patterns ``P[key_rows]`` to each complete row
    ``q`` by matrix products, in blocks of queries: ``||k||² - 2 q·k`` ranks the keys of a
    query as its squared distance does (``||q||²`` is the row's constant) -- the fused
    operator's identity. The lowest products are found from the minima of groups of ``_RUN``
    keys (group g: keys g, g + G, g + 2G, ... for G groups, so that the minima are taken
    across rows of the products, a fast reduction, not along short runs, a slow one): the
    ``want`` groups with the lowest minima hold at least ``want`` keys at or below the
    ``want``-th of those minima, so the ``want`` lowest are within those groups and the keys
    after the last whole group.

    Returns ``(d, j, floor)``: the candidates' distances recomputed from the differences (as
    the k-d tree computes them), their series rows, each (len(q), want), and per query a
    distance that every key not returned is at least as far as (the product form's rounding
    subtracted), so that a query whose k-th kept distance reaches it is searched exactly.
    """
    K = P[key_rows]  # (L, D)
    L, D = K.shape
    # centred: distances do not change, and the products' rounding, which grows with ||q||²
    # and ||k||², stays small beside them for data far from 0 (else every query goes exact)
    centre = K.mean(axis=0)
    Kc = K - centre
    kn = np.einsum("ij,ij->i", Kc, Kc)
    K_aug = np.ascontiguousarray(np.c_[-2.0 * Kc, kn].T)  # (D + 1, L): [-2 k, ||k||²]
    block = max(1, _BRUTE_ELEMS // max(L, want * D))  # G (B, L) and the differences (B, want, D)
    d, j = np.empty((len(q), want)), np.empty((len(q), want), dtype=np.intp)
    floor = np.full(len(q), np.inf)
    groups = L // _RUN
    whole = groups * _RUN
    tail = np.arange(whole, L)
    members = np.arange(_RUN) * groups  # group g's keys: g + members
    buffer = np.empty((min(block, len(q)), L))
    for a in range(0, len(q), block):
        Q = P[q[a : a + block]]  # (B, D)
        Qc = Q - centre
        B = len(Q)
        if want >= L:
            cols = np.broadcast_to(np.arange(L), (B, L))
        else:
            G = buffer[:B]
            np.matmul(np.c_[Qc, np.ones(B)], K_aug, out=G)  # ||q - k||² - ||q||²  (B, L)
            if want <= groups:  # candidates from the groups with the lowest minima (and tail)
                mins = G[:, :whole].reshape(B, _RUN, groups).min(axis=1)  # (B, groups)
                best = np.argpartition(mins, want - 1, axis=1)[:, :want]
                cols = (best[:, :, None] + members).reshape(B, -1)
                cols = np.concatenate([cols, np.broadcast_to(tail, (B, len(tail)))], axis=1)
            else:
                cols = np.broadcast_to(np.arange(L), (B, L))
            vals = np.take_along_axis(G, cols, 1)
            part = np.argpartition(vals, want - 1, axis=1)[:, :want]
            cols = np.take_along_axis(cols, part, 1)
            qn = np.einsum("ij,ij->i", Qc, Qc)
            # every other key's product form is at least the largest returned; its rounding,
            # with that of ||k||² and ||q||², is below 3 (D + 1) eps (||q||² + ||k||²)
            slack = 8.0 * (D + 1) * np.finfo(np.float64).eps * (qn + kn.max())
            low = np.take_along_axis(vals, part, 1).max(axis=1) + qn - slack
            floor[a : a + B] = np.sqrt(np.maximum(low, 0.0))
        diff = np.take(K, cols, axis=0)  # (B, want, D): the differences, in place
        np.subtract(diff, Q[:, None, :], out=diff)
        d[a : a + B] = np.sqrt(np.einsum("bwd,bwd->bw", diff, diff))
        j[a : a + B] = key_rows[cols]
    return d, j, floor


def nonlocal_neighbours(
    P: np.ndarray, usable: np.ndarray, k: int, half: int, exclude_self=False, tile: int = TILE
):
    """Each row's k nearest keys among the complete rows of (T, D) patterns ``P`` whose
    ``usable`` (T,) value is finite, leaving out the keys ``j`` with ``0 < |j - t| <= half``
    (their patterns hold the sample x_t) and, with ``exclude_self``, the row itself. Longer
    than ``3 tile`` rows, row t's keys are those of its tile of ``tile`` rows and the tiles on
    either side (:func:`library_range`).

    Returns ``(dist, idx)``, (T, min(k, keys)) each, sorted by (distance, key row), inf / -1
    where fewer exist; a row with no finite coordinate gets none. Complete rows are searched
    with a k-d tree or, for long patterns among many keys, by :func:`_blas_nearest` (the
    ``k + 2 half + 1`` nearest, then the left-out ones dropped; at most ``2 half + 1`` are,
    so k remain); rows with missing coordinates, and rows whose k-th distance reaches the
    bound on the keys the search did not return (a tie the tree may have broken differently,
    or a key within the products' rounding), by exact distances to every key.
    """
    T = P.shape[0]
    k = min(k, int((np.isfinite(P).all(axis=1) & usable).sum()))
    dist, idx = np.full((T, k), np.inf), np.full((T, k), -1)
    for s, e, lo, hi in tiles(T, tile):
        d, j = _tile_neighbours(P[lo:hi], usable[lo:hi], s - lo, e - lo, k, half, exclude_self)
        dist[s:e], idx[s:e] = d, np.where(j >= 0, j + lo, -1)
    return dist, idx


def _tile_neighbours(P, usable, s: int, e: int, k: int, half: int, exclude_self: bool):
    """:func:`nonlocal_neighbours` of rows ``s:e`` of a library's (L, D) patterns ``P``, every
    row of which is a possible key: ``(dist, idx)``, (e - s, k) each, rows of ``P``."""
    complete = np.isfinite(P).all(axis=1)
    key_rows = np.flatnonzero(complete & usable)
    dist, idx = np.full((e - s, k), np.inf), np.full((e - s, k), -1)
    kk = min(k, len(key_rows))
    if not kk:
        return dist, idx

    def allowed(q, j):  # (n_q, n_j) bool
        gap = np.abs(j - q[:, None])
        return (gap > half) | ((gap == 0) & (not exclude_self))

    q = s + np.flatnonzero(complete[s:e])
    want = min(kk + 2 * half + 1, len(key_rows))
    if P.shape[1] >= BLAS_DIM and len(key_rows) >= BLAS_KEYS:
        d, j, floor = _blas_nearest(P, q, key_rows, want)
    else:
        d, j = scipy.spatial.cKDTree(P[key_rows]).query(
            P[q], k=want, workers=neighbours.search_threads()
        )
        d, j = d.reshape(len(q), want), np.asarray(j).reshape(len(q), want)
        # a key at an infinite distance (its square overflowed float64) comes back as index
        # len(key_rows): none (it raised IndexError)
        j = np.where(j < len(key_rows), key_rows[np.minimum(j, len(key_rows) - 1)], -1)
        floor = d.max(axis=1)  # a key the tree did not return is at least this far
    d, j = _sorted(d, j)
    keep = allowed(q, j)
    # the kk nearest kept candidates: a stable sort puts the kept ones first, in order
    order = np.argsort(~keep, axis=1, kind="stable")[:, :kk]
    kept = np.take_along_axis(keep, order, 1)
    dist[q - s, :kk] = np.where(kept, np.take_along_axis(d, order, 1), np.inf)
    idx[q - s, :kk] = np.where(kept, np.take_along_axis(j, order, 1), -1)
    tied = q[(dist[q - s, kk - 1] >= floor) & (want < len(key_rows))]
    partial = s + np.flatnonzero(~complete[s:e] & np.isfinite(P[s:e]).any(axis=1))
    exact = np.concatenate([tied, partial])
    step = max(1, _BRUTE_ELEMS // len(key_rows))
    for a in range(0, len(exact), step):
        rows = exact[a : a + step]
        dist[rows - s, :kk], idx[rows - s, :kk] = _exact_nearest(
            P[rows], P[key_rows], key_rows, kk, allowed(rows, key_rows)
        )
    return dist, idx


def tiles(T: int, tile: int = TILE):
    """``(s, e, lo, hi)`` for each tile of a T-row series: its rows ``s:e`` and the rows
    ``lo:hi`` of their keys (:func:`library_range`); one tile of every row up to ``3 tile``."""
    if T <= 3 * tile:
        yield 0, T, 0, T
        return
    for s in range(0, T, tile):
        yield (s, min(T, s + tile), *library_range(s, T, tile))


def library_range(t: int, T: int, tile: int = TILE) -> tuple[int, int]:
    """The rows ``[lo, hi)`` whose patterns row ``t`` of a T-row series may use as keys: all
    of them up to ``3 tile`` rows; beyond, the tile of ``tile`` rows holding t and the tiles
    on either side, so that a pass costs O(T), not O(T^2), however long the series."""
    if T <= 3 * tile:
        return 0, T
    b = t // tile
    return max(0, (b - 1) * tile), min(T, (b + 2) * tile)


def run_nonlocal(x2, embedding: int, n_neighbors: int, sigmas, exclude_self=False, tile=TILE):
    """The non-local filter of (T, C) ``x2`` for each kernel width in ``sigmas`` (``inf``:
    the plain mean of the k nearest), sharing one neighbour search (in float64).

    Returns ``(outputs, self_weights)``: lists over ``sigmas`` of the (T, C) float64 output
    (NaN in rows with no usable key; the caller fills them) and of the (T,) weight of each
    row's own sample, which is exactly ``dy_t / dx_t`` (the divergence SURE needs: nothing
    else in ``y_t`` depends on ``x_t``).
    """
    x2 = np.asarray(x2, dtype=np.float64)
    T, half = len(x2), embedding // 2  # the pattern of t spans t - half .. t + half
    usable = np.isfinite(x2).all(axis=1)
    # keys: rows whose whole span t - half .. t + half is known
    missing = np.r_[0, np.cumsum(~usable)]
    t = np.arange(half, T - half)
    k = min(n_neighbors, int((missing[t + half + 1] == missing[t - half]).sum()))
    outs = [np.full(x2.shape, np.nan) for _ in sigmas]
    selfw = [np.zeros(T) for _ in sigmas]
    if not k:  # no key at all
        return outs, selfw
    # tile by tile, so that the neighbours, their values and weights take O(tile k C) memory
    for s, e, lo, hi in tiles(T, tile):
        a, b = max(0, lo - half), min(T, hi + half)  # the patterns of rows lo:hi need these
        P = patterns(x2[a:b], embedding)[lo - a : hi - a]
        dist, idx = _tile_neighbours(P, usable[lo:hi], s - lo, e - lo, k, half, exclude_self)
        values = x2[lo + np.maximum(idx, 0)]  # (e - s, k, C); slots without a key weigh 0
        own = idx == np.arange(s - lo, e - lo)[:, None]
        for out, own_weight, sigma in zip(outs, selfw, sigmas):
            w = kernel_weights(dist, sigma=float(sigma))
            out[s:e] = weighted_mean(w, values)
            own_weight[s:e] = (w * own).sum(axis=1)
    return outs, selfw
