"""pyEDM's Simplex and S-map in numpy, every step of a forecast path in one pass.

pyEDM (the reference, :mod:`tssdpa.baselines.edm`) builds a k-d tree and searches it once per
step ``Tp``: a 720-step path on ETT is 720 calls, and S-map solves one least-squares problem
per origin and step. The functions here compute the same forecasts for many steps at once.
``tests/baselines/test_edm.py`` checks them against pyEDM itself.

The library for step ``h`` is what pyEDM uses: the training rows ``r`` with a complete state
vector (``r >= (embedding - 1) * delay``) whose target ``r + h`` is in the training series.
Every row is a state vector ``(x[r], x[r - delay], ..., x[r - (E - 1) delay])``.

Simplex (``simplex_steps``)
    For step ``h``: the ``k`` library rows nearest to the origin's state, ties broken like
    pyEDM (the later row first), weights ``exp(-d / max(d_min, 1e-6))``. Only the last rows
    differ between steps, so the rows valid for every step are searched once (k-d tree), and
    the others (fewer than the largest step) are merged in one at a time, from the largest
    step down. Exact for every step.

S-map (``smap_steps``)
    A linear model with intercept fitted by weighted least squares to the library states,
    weights ``exp(-theta d / mean d)`` over the ``n_neighbors`` nearest (pyEDM's default:
    every library row but the farthest). The forecast is a weighted sum of library targets,
    ``a(origin) @ Y``, so one fit serves several steps in one matrix product if they share a
    library: steps are grouped 1, 2, 3-4, 5-8, ... and each group uses the library of its
    largest step. A single step, and the largest step of each group, are therefore exactly
    pyEDM's; step ``h`` inside a group misses fewer than ``h`` of the latest training rows
    that pyEDM would also use. That handicaps S-map a little: over 96-step paths on ETTh1 OT,
    RMSE 1.0-1.4% above pyEDM's (``experiments/bench_edm_engines.py``). Where several rows tie
    for the farthest, the one left out may not be the one pyEDM's tree leaves out.

    The fits go through the normal equations (one matrix product per block of origins);
    origins whose scaled normal matrix has a condition number above 1e7 are solved by SVD
    with ``numpy.linalg.lstsq``'s cutoff, as pyEDM does, so the rounding of the normal
    equations stays near the eighth digit (relative 1e-8).
"""

from __future__ import annotations

import numpy as np
import scipy  # submodules (scipy.signal etc.) load where first used: imports stay light

from tssdpa.signal.embedding import delay_embedding

__all__ = ["simplex_steps", "smap_steps"]

#: float64 values per block of origins in S-map's largest arrays (distances, weights, the
#: neighbours' states and targets): bounds the memory of long libraries
_BLOCK_ELEMS = 1 << 23


def _tree(data: np.ndarray) -> scipy.spatial.cKDTree:
    """pyEDM's k-d tree: the same leaf size gives the same rows where distances tie (S-map
    keeps the tree's order; Simplex orders ties itself)."""
    return scipy.spatial.cKDTree(data, leafsize=20, compact_nodes=True, balanced_tree=True)


def states(x: np.ndarray, embedding: int, delay: int) -> np.ndarray:
    """(T, E) state vectors of a 1-D series, pyEDM's order: row ``t`` is ``x[t], x[t - delay],
    ...``; rows before ``(embedding - 1) * delay`` are NaN."""
    return delay_embedding(x[:, None], embedding, delay=delay)


def _nearest(tree: scipy.spatial.cKDTree, rows: np.ndarray, q: np.ndarray, k: int):
    """The ``k`` rows nearest to each query, in pyEDM's order (distance, then the later row
    first): (distances, rows), each (Q, k), padded with ``inf`` / -1 where fewer exist."""
    n = len(rows)
    out_d = np.full((len(q), k), np.inf)
    out_r = np.full((len(q), k), -1, dtype=np.int64)
    if n == 0 or len(q) == 0:
        return out_d, out_r
    todo = np.arange(len(q))
    kq = min(k + 1, n)  # one more than needed: a tie at the k-th distance shows
    while len(todo):
        d, i = tree.query(q[todo], k=kq)
        d, i = d.reshape(len(todo), kq), i.reshape(len(todo), kq)
        # a query is settled when every row tied with its k-th distance was returned
        settled = (kq == n) | (d[:, min(k, kq) - 1] < d[:, -1])
        r = rows[i]
        order = np.lexsort((-r, d), axis=-1)[:, :k]
        take = np.take_along_axis
        m = order.shape[1]
        out_d[todo[settled], :m] = take(d, order, axis=-1)[settled]
        out_r[todo[settled], :m] = take(r, order, axis=-1)[settled]
        todo = todo[~settled]
        kq = min(2 * kq, n)
    return out_d, out_r


def simplex_steps(
    train: np.ndarray, y: np.ndarray, embedding: int, delay: int, n_neighbors: int, steps
) -> np.ndarray:
    """Simplex forecasts ``steps[j]`` ahead from every origin of ``y``: (len(y), len(steps)).

    ``train`` (the library) and ``y`` are 1-D and finite; origins whose state vector is not
    complete in ``y`` are NaN.
    """
    steps = [int(h) for h in steps]
    n, T, k = len(train), len(y), int(n_neighbors)
    shift = (embedding - 1) * delay
    out = np.full((T, len(steps)), np.nan)
    if T <= shift:
        return out
    lib_states = states(train, embedding, delay)
    q = states(y, embedding, delay)[shift:]  # (Q, E)
    hmax, hmin = max(steps), min(steps)
    # rows valid for every step, searched once; the later ones join as the step shrinks
    common = np.arange(shift, n - hmax)
    tree = _tree(lib_states[common]) if len(common) else None
    dist, rows = _nearest(tree, common, q, k)
    late = np.arange(max(shift, n - hmax), n - hmin)  # row n - 1 - h joins at step h
    if len(late):
        late_tree = _tree(lib_states[late])
        d_late, i_late = late_tree.query(q, k=len(late))
        d_late = d_late.reshape(len(q), len(late))
        late_dist = np.empty_like(d_late)
        np.put_along_axis(late_dist, i_late.reshape(len(q), len(late)), d_late, axis=-1)
    column = {h: j for j, h in enumerate(steps)}
    slots = np.arange(k)
    for h in range(hmax, hmin - 1, -1):
        r_new = n - 1 - h
        if r_new >= shift and h < hmax:
            d_new = late_dist[:, r_new - late[0], None]  # (Q, 1)
            # the new row is later than every row held, so it goes before equal distances
            pos = np.sum(dist < d_new, axis=1, keepdims=True)
            prev = np.maximum(slots - 1, 0)
            dist = np.where(slots < pos, dist, np.where(slots == pos, d_new, dist[:, prev]))
            rows = np.where(slots < pos, rows, np.where(slots == pos, r_new, rows[:, prev]))
        if h in column:
            out[shift:, column[h]] = _simplex_projection(dist, rows, train, h)
    return out


def _simplex_projection(dist: np.ndarray, rows: np.ndarray, train: np.ndarray, h: int):
    """pyEDM's Simplex.Project: weights exp(-d / max(d_min, 1e-6)) over the finite slots."""
    finite = np.isfinite(dist)
    d_min = np.where(finite, dist, np.inf).min(axis=1)
    d_min = np.fmax(np.where(np.isfinite(d_min), d_min, 1.0), 1e-6)
    with np.errstate(invalid="ignore"):
        w = np.where(finite, np.exp(-dist / d_min[:, None]), 0.0)
    values = np.where(finite, train[np.where(finite, rows, 0) + h], 0.0)
    total = w.sum(axis=1)
    proj = np.sum(w * values, axis=1) / np.where(total > 0, total, 1.0)
    return np.where(total > 0, proj, np.nan)


def step_groups(steps) -> list[list[int]]:
    """Steps sharing one S-map library: 1, 2, 3-4, 5-8, ... (the largest at most twice the
    smallest, so step ``h`` misses fewer than ``h`` of pyEDM's library rows)."""
    groups: dict[int, list[int]] = {}
    for h in sorted({int(h) for h in steps}):
        groups.setdefault((h - 1).bit_length(), []).append(h)
    return list(groups.values())


def smap_steps(
    train: np.ndarray,
    y: np.ndarray,
    embedding: int,
    delay: int,
    theta: float,
    n_neighbors: int | None,
    steps,
) -> np.ndarray:
    """S-map forecasts ``steps[j]`` ahead from every origin of ``y``: (len(y), len(steps)).

    Each group of :func:`step_groups` uses the library of its largest step (see the module
    docstring); ``None`` neighbours: every library row but the farthest, pyEDM's default.
    """
    steps = [int(h) for h in steps]
    T, E = len(y), int(embedding)
    shift = (E - 1) * delay
    out = np.full((T, len(steps)), np.nan)
    if T <= shift:
        return out
    q = states(y, E, delay)[shift:]  # (Q, E)
    groups = step_groups(steps)
    # every group's library is a prefix of the first (shortest steps) group's
    lib = np.arange(shift, len(train) - max(groups[0]))
    X = states(train, E, delay)[lib]  # (N, E)
    Xt = np.concatenate([np.ones((len(lib), 1)), X], axis=1)  # (N, E + 1): intercept first
    outer = (Xt[:, :, None] * Xt[:, None, :]).reshape(len(lib), -1)  # (N, (E + 1)^2)
    sizes = [len(train) - max(g) - shift for g in groups]  # library rows of each group
    targets = [train[lib[: sizes[i], None] + np.asarray(g)] for i, g in enumerate(groups)]
    columns = [[steps.index(h) for h in g] for g in groups]
    trees = [None if n_neighbors is None else _tree(X[:size]) for size in sizes]
    m_max = len(lib) if n_neighbors is None else int(n_neighbors)
    # per origin: distances and weights (m), or the neighbours' outer products and targets
    width = E + 1 if n_neighbors is None else (E + 1) ** 2 + max(map(len, groups))
    block = max(1, _BLOCK_ELEMS // (m_max * width))
    for b0 in range(0, len(q), block):
        qb = q[b0 : b0 + block]
        qt = np.concatenate([np.ones((len(qb), 1)), qb], axis=1)
        d_all = None
        if n_neighbors is None:  # distances to every row, by hand, once for every group
            d_all = np.sqrt(((qb[:, None, :] - X[None]) ** 2).sum(-1))  # (B, N)
        for size, Y, cols, tree in zip(sizes, targets, columns, trees):
            if tree is None:
                d, idx = d_all[:, :size], None
                keep = np.ones_like(d, dtype=bool)  # every row but the farthest
                keep[np.arange(len(qb)), np.argmax(d, axis=1)] = False
            else:
                m = min(int(n_neighbors), size)
                d, idx = tree.query(qb, k=m)
                d, idx = d.reshape(len(qb), m), idx.reshape(len(qb), m)
                keep = np.ones_like(d, dtype=bool)
            got = _smap_solve(d, keep, idx, Xt[:size], outer[:size], Y, qt, theta)
            out[shift + b0 : shift + b0 + len(qb), cols] = got
    return out


def _smap_solve(d, keep, idx, Xt, outer, Y, qt, theta):
    """(B, S) forecasts of one block of origins: the weighted least-squares fit on the rows
    ``keep`` (of ``idx`` when given, else of the whole library) at distances ``d``."""
    B, E1 = qt.shape
    mean_d = np.where(keep, d, 0.0).sum(1) / keep.sum(1)
    if theta == 0:
        w = keep.astype(float)
    else:
        # mean_d = 0: every state equals the origin's, so weight them alike (pyEDM's weights
        # are NaN there, and its solver fails)
        rate = theta / np.where(mean_d > 0, mean_d, np.inf)
        w = np.where(keep, np.exp(-rate[:, None] * d), 0.0)
    w2 = w * w
    rows = Xt if idx is None else Xt[idx]  # (N, E + 1) or (B, m, E + 1)
    # the normal equations, G = X~' W^2 X~ per origin, in one matrix product per block
    if idx is None:
        G = (w2 @ outer).reshape(B, E1, E1)
    else:
        G = np.einsum("bm,bmf->bf", w2, outer[idx]).reshape(B, E1, E1)
    scale = 1.0 / np.sqrt(np.maximum(np.diagonal(G, axis1=1, axis2=2), np.finfo(float).tiny))
    lam, V = np.linalg.eigh(G * scale[:, :, None] * scale[:, None, :])
    # they square the condition number: where it passes 1e7 (scaled), the rounding of G could
    # show in the 9th digit, so those origins are solved as lstsq does, by SVD
    good = lam[:, 0] > 1e-7 * lam[:, -1]
    # zeros, not empty: the rows of the SVD's origins go through the product below before
    # they are replaced, and uninitialised memory there overflowed (RuntimeWarnings)
    v = np.zeros((B, E1))
    v[good] = scale[good] * np.einsum(
        "bef,bf,bgf,bg->be", V[good], 1.0 / lam[good], V[good], (scale * qt)[good]
    )
    bad = np.flatnonzero(~good)
    if len(bad):
        A = w[bad, :, None] * (rows[None] if idx is None else rows[bad])  # (b, m, E + 1)
        U, s, Vt = np.linalg.svd(A, full_matrices=False)
        cut = np.finfo(float).eps * max(A.shape[1:]) * s[:, :1]  # lstsq's rcond=None
        s_inv = np.where(s > cut, 1.0 / np.where(s > cut, s, 1.0), 0.0)
        # the forecast q~' A^+ (w y) weights target r by w_r (A^+' q~)_r, and
        # A^+' q~ = U diag(1/s) V' q~ (for full rank, w_r (X~ G^+ q~)_r as above)
        z = np.einsum("bfe,be->bf", Vt, qt[bad]) * s_inv
        a_bad = w[bad] * np.einsum("bmf,bf->bm", U, z)
    # the forecast is a weighted sum of library targets: a_r = w_r^2 (X~ v)_r
    if idx is None:
        a = w2 * (v @ Xt.T)
        if len(bad):
            a[bad] = a_bad
        return a @ Y
    a = w2 * np.einsum("bme,be->bm", rows, v)
    if len(bad):
        a[bad] = a_bad
    return np.einsum("bm,bms->bs", a, Y[idx])
