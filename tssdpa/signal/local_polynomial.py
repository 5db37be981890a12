"""The lag kernel's local polynomials: weighted least squares in the time offset, per row.

:func:`local_polynomial` solves, for every query row of :func:`tssdpa.signal.lags.attend_lags`,
the normal equations of the polynomial of degree p in the offset ``j - t`` of its keys,
weighted by the kernel, and evaluates it at the row's own time (offset 0). Its loop form is
:func:`tssdpa.signal.reference.attend_lags_reference` (``degree`` > 0), and the ONNX step
(:mod:`tssdpa.filters.onnx_export`) unrolls the same equations.

A row's fit depends on its keys alone, not on the rows computed beside it: for a causal filter
a stream of steps, chunks and the one-shot filter give the same bits, its moments summed row
by row in one order (:func:`row_dot`, ``rowwise``; elsewhere BLAS, faster). Two rules keep the
fit off what the rounding alone decides:

* a power of the offset is fitted only where the keys determine it beyond rounding
  (:data:`PIVOT_FLOOR`, in a row that weighs a faint key: :data:`FAINT_WEIGHT`), else the
  row fits the highest degree they do, as it does with fewer keys of weight than the degree
  needs;
* the offsets are measured in units of a power of 2 (the window's, or a shorter one: see
  :data:`SPAN_WEIGHT`), so that rescaling is exact.
"""

from __future__ import annotations

import numpy as np

from tssdpa.signal.spd import back_substitute, eliminate

__all__ = [
    "FAINT_WEIGHT",
    "PIVOT_FLOOR",
    "SPAN_WEIGHT",
    "local_polynomial",
    "offset_powers",
    "power_of_two_at_most",
    "row_dot",
]

#: a local polynomial measures each row's time offsets in units of the power of 2 at or below
#: its farthest key of at least this weight, relative to the row's largest (1)
SPAN_WEIGHT = 1e-12
#: a local polynomial fits a power of the time offset only where the keys determine it beyond
#: rounding: where its elimination pivot (the weighted energy of the power that the lower ones
#: do not explain) is at least this share of its diagonal entry. Below, the rounding of the
#: moments, amplified by the pivot's inverse, decides the fit: exclude_self and a narrow kernel
#: put a row's slope on keys of 1e-11 of its heaviest one's weight, and a stream and the
#: one-shot filter, which round in another order, were 6e-4 of the range apart
PIVOT_FLOOR = 1e-6
#: :data:`PIVOT_FLOOR` holds in a row that weighs some key below this share of its heaviest
#: one's weight (0 is no key): a power resting on such keys is lost in the rounding of the heavy
#: ones. A row without one (the uniform kernel, sigma=inf, whose keys all weigh 1; a wide one)
#: has small pivots only where the powers are near-collinear over the window (u^6 of a causal
#: one: 2e-7 of its diagonal), which its fit at offset 0 does not amplify: it fits its degree
#: (the floor made a causal Savitzky-Golay filter of degree 6-8 one of a lower degree, 3-30%
#: of the range off scipy's, where a stream and the one-shot filter agreed to 2e-11 at 7)
FAINT_WEIGHT = 1e-3


def power_of_two_at_most(n: int) -> int:
    """The largest power of 2 <= ``n`` (1 for ``n`` <= 1)."""
    return 1 << max(0, int(n).bit_length() - 1)


def offset_powers(lags: np.ndarray, degree: int) -> np.ndarray:
    """(L, 2·degree + 1) powers of the scaled time offset ``(j - t) / 2^floor(log2 max|j - t|)``
    of each key (scaled so that the normal equations stay well conditioned; by a power of 2,
    so that :func:`local_polynomial`'s rescaling of a row, by another, is exact)."""
    u = -lags / power_of_two_at_most(int(np.abs(lags).max()))
    return u[:, None].astype(np.float64) ** np.arange(2 * degree + 1)


def row_dot(a: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(n,) ``a @ u`` of (n, L) ``a`` and (L,) ``u``, each row summed alone in one order.

    Not a matrix product: BLAS sums a one-row product (gemv) in another order than a block's
    (gemm), and a local polynomial of high degree amplifies the moments' rounding by its
    conditioning (a stream of one-row steps was 3e-4 of the range off the one-shot filter at
    degree 8, exclude_self, after a constant stretch). einsum's loop reduces each row
    of ``a`` alone, whatever ``n``, where the rows are contiguous (a strided or column-ordered
    block would be summed in another order: such a block is copied first).
    """
    return np.einsum("nl,l->n", np.ascontiguousarray(a), u)


def local_polynomial(ws, vals, powers, degrees, rowwise: bool = False):
    """Weighted least-squares polynomials of each degree in ``degrees`` in the time offset, per
    row, evaluated at offset 0: for each (n, L) weights in ``ws`` (each row's largest 1), a list
    of (n, C) values, one per degree. ``vals`` list of (n, L); ``powers`` from
    :func:`offset_powers`. The moments are shared by the degrees, and the systems of every
    weights are solved together (one call's overhead). ``rowwise``: the moments by
    :func:`row_dot`, so that a row gives the same bits however many are computed with it (a
    stream of steps and the one-shot filter); else by BLAS, 4-8x faster on the fit's blocks."""
    top = max(degrees) + 1
    starts = np.cumsum([0] + [len(w) for w in ws])  # each weights' rows among all
    # the systems along the last axis, the layout the elimination works in
    moments = np.empty((2 * top - 1, starts[-1]))  # sum_l w u^k
    rhs = np.empty((top, len(vals), starts[-1]))  # sum_l w u^k v
    columns = np.ascontiguousarray(powers[:, : 2 * top - 1].T)  # (2P - 1, L): u^k of each key
    reach = np.abs(powers[:, 1])  # |u| of each key
    farthest = np.flatnonzero(reach == reach.max())
    weighed = np.empty(starts[-1], dtype=np.int64)  # keys of weight >= SPAN_WEIGHT per row
    for w, a, b in zip(ws, starts[:-1], starts[1:]):
        w = w.astype(np.float64, copy=False)
        weighed[a:b] = (w >= SPAN_WEIGHT).sum(axis=1)
        if rowwise:
            for k in range(2 * top - 1):
                moments[k, a:b] = row_dot(w, columns[k])
        else:
            moments[:, a:b] = (w @ columns.T).T
        for c, v in enumerate(vals):
            wv = w * v
            if rowwise:
                for k in range(top):
                    rhs[k, c, a:b] = row_dot(wv, columns[k])
            else:
                rhs[:, c, a:b] = (wv @ columns[:top].T).T
        # each row's offsets in units of the power of 2 at or below its farthest key of
        # weight >= SPAN_WEIGHT: the fit is the same in any unit, but the ridge below is not,
        # and in the window's unit a row whose keys fill a small part of it (the first rows of
        # a long window, the edge of a gap) has moments u^k so small that the ridge bends its
        # fit (a stream and the one-shot filter, whose window is capped at the series'
        # length, differed). Powers of 2 rescale exactly; the cut-off keeps float32 and
        # float64, whose weights underflow at different lags, on one unit. Rows that weigh a
        # key at the window's end (most) have the window's unit already.
        short = ~(w[:, farthest] >= SPAN_WEIGHT).any(axis=1)
        if short.any():
            rows = np.flatnonzero(short)
            span = np.where(w[rows] >= SPAN_WEIGHT, reach, 0.0).max(axis=1)
            inv = 2.0 ** -np.floor(np.log2(np.where(span > 0, span, 1.0)))
            unit = inv[None, :] ** np.arange(2 * top - 1)[:, None]  # (2P - 1, rows)
            moments[:, a + rows] *= unit
            rhs[:, :, a + rows] *= unit[:top, None, :]
    G = moments[np.add.outer(np.arange(top), np.arange(top))]  # Hankel (P, P, n)
    # a tiny ridge on the slope terms (rows with enough keys round as they always did)
    diagonal = np.arange(1, top)
    G[diagonal, diagonal] += 1e-12 * moments[0]
    ok = moments[0] > 0  # rows without weight have no fit: solved as the identity, then NaN
    if not ok.all():
        G[:, :, ~ok] = np.eye(top)[:, :, None]
        rhs[:, :, ~ok] = 0.0
    # a lower degree's system is a leading block of the highest's. A row whose keys cannot
    # determine the degree fits the highest degree they do (one key: the mean): with fewer
    # keys of weight than degree + 1 (a stream's first rows, a gap's edge) the ridge alone
    # decided it, and where a power's pivot is below PIVOT_FLOOR of its diagonal in a row
    # weighing a faint key the rounding of the moments did (see PIVOT_FLOOR, FAINT_WEIGHT)
    fits = [degree + 1 for degree in degrees]
    floor = PIVOT_FLOOR * G.diagonal()  # (rows, P); after the elimination, the pivots
    eliminate(G, rhs)
    limit = np.clip(weighed, 1, top)
    below = np.flatnonzero((G.diagonal() < floor).any(axis=1))  # the few rows below it
    for w, a, b in zip(ws, starts[:-1], starts[1:]) if below.size else ():
        r = below[(below >= a) & (below < b)]  # of those, the rows weighing faint keys
        r = r[((w[r - a] > 0) & (w[r - a] < FAINT_WEIGHT)).any(axis=1)]
        first = np.argmax(G.diagonal()[r] < floor[r], axis=1)  # the first power below
        limit[r] = np.minimum(limit[r], np.maximum(first, 1))
    values = [back_substitute(G, rhs, P)[0] for P in fits]  # (C, rows), at offset 0
    fewer = np.flatnonzero(limit < top)  # (few) rows: their block's back substitution
    for value, P in zip(values, fits):
        for p in np.unique(limit[fewer]).tolist() if fewer.size else ():
            if p < P:
                r = fewer[limit[fewer] == p]
                value[:, r] = back_substitute(G[:, :, r], rhs[:, :, r], p)[0]
        value[:, ~ok] = np.nan
    return [[x[:, a:b].T.copy() for x in values] for a, b in zip(starts[:-1], starts[1:])]
