"""Many small symmetric positive definite systems at once, each step one vector operation.

The local polynomials of the lag kernel (:mod:`tssdpa.signal.lags`) and the robust local
quadratic of the spike rule (:mod:`tssdpa.estimators.spikes`) solve one (P, P) system per
sample, P <= 5, for thousands of samples. ``np.linalg.solve`` on such a batch calls LAPACK
once per system and spends its time on the calls (3x slower at 1,200 systems of 5 unknowns:
``experiments/bench_local_polynomial.py``); here Gaussian elimination runs over the systems
together. Without pivoting, which is stable on symmetric positive definite matrices; the
callers' ridges keep their matrices so.
"""

from __future__ import annotations

import numpy as np

__all__ = ["back_substitute", "eliminate", "solve_spd", "solve_spd_rows"]


def solve_spd(G: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``np.linalg.solve(G, rhs)`` for n symmetric positive definite systems: ``G`` (n, P, P),
    ``rhs`` (n, P, C); returns (n, P, C).

    >>> G = np.array([[[4.0, 2.0], [2.0, 3.0]]])
    >>> solve_spd(G, np.array([[[2.0], [1.0]]]))[0, :, 0]
    array([0.5, 0. ])
    """
    A = np.moveaxis(G, 0, -1).copy()  # (P, P, n): each entry a contiguous row over the systems
    b = np.moveaxis(rhs, 0, -1).copy()  # (P, C, n)
    return np.moveaxis(solve_spd_rows(A, b, [A.shape[0]])[0], -1, 0)  # (n, P, C)


def solve_spd_rows(A: np.ndarray, b: np.ndarray, sizes) -> list[np.ndarray]:
    """The systems of ``A``'s leading ``P`` x ``P`` blocks, for each ``P`` in ``sizes``, in the
    elimination's layout (the systems along the last axis, one contiguous row per entry):
    ``A`` (P, P, n) and ``b`` (P, C, n), both overwritten; returns a (P, C, n) solution per
    size, each bitwise :func:`solve_spd` of its block.

    Eliminating below the pivots treats each row of a leading block exactly as the block's own
    elimination would (the block's entries are updated from the block's entries only), so the
    largest block's elimination serves every smaller one; only the back substitutions differ.
    The local polynomials of several degrees (:func:`tssdpa.signal.lags.attend_lags`) share
    their moment matrix this way.
    """
    eliminate(A, b)
    return [back_substitute(A, b, P) for P in sizes]


def eliminate(A: np.ndarray, b: np.ndarray) -> None:
    """Gaussian elimination below the pivots of :func:`solve_spd_rows`'s systems, in place:
    ``A``'s diagonal then holds the pivots (each entry's Schur complement in its leading
    block), and :func:`back_substitute` solves any leading block."""
    top = A.shape[0]
    for k in range(top - 1):  # the lower triangle is not read again
        for i in range(k + 1, top):
            f = A[i, k] / A[k, k]
            A[i, k + 1 : top] -= f * A[k, k + 1 : top]
            b[i] -= f * b[k]


def back_substitute(A: np.ndarray, b: np.ndarray, P: int) -> np.ndarray:
    """(P, C, n) solution of the leading P x P block of systems :func:`eliminate` reduced."""
    x = np.empty_like(b[:P])
    for i in range(P - 1, -1, -1):
        acc = b[i].copy()
        for j in range(i + 1, P):
            acc -= A[i, j] * x[j]
        x[i] = acc / A[i, i]
    return x
