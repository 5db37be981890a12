"""Many small SPD systems solved together (tssdpa.signal.spd) against LAPACK and a 40-digit
solution."""

from __future__ import annotations

import numpy as np
import pytest

from tssdpa.signal.spd import solve_spd, solve_spd_rows


@pytest.mark.parametrize("P", [1, 3, 5])
def test_the_vectorised_elimination_is_as_accurate_as_lapack_down_to_rows_with_one_key(P):
    """The lag kernel's local polynomials: weighted moments of the time offsets (a Hankel matrix)
    with the fit's tiny ridge on the slopes. Where keys are many both solvers agree; a row
    with a few keys is singular but for the ridge (conditions up to ~1e12), where both err up
    to the 4th digit: there the elimination's errors against a 40-digit solution are no
    larger than LAPACK's (at most and in the median)."""
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(P)
    u = np.linspace(-1, 1, 41)
    w = rng.random((200, 41))
    w[:60] *= rng.random((60, 41)) < 0.05  # sparse rows: 0-6 keys
    w[0, :] = 0.0
    w[0, 7] = 0.3  # one key
    w = w[w.sum(axis=1) > 0]
    moments = w @ u[:, None] ** np.arange(2 * P - 1)
    G = moments[:, np.add.outer(np.arange(P), np.arange(P))]
    G[:, np.arange(1, P), np.arange(1, P)] += 1e-12 * moments[:, :1]
    rhs = np.stack([(w * v) @ u[:, None] ** np.arange(P) for v in rng.normal(size=(2, 1, 41))],
                   axis=2)  # fmt: skip
    full, lapack_full = solve_spd(G, rhs), np.linalg.solve(G, rhs)
    dense = slice(-140, None)  # every unknown, where keys are many
    np.testing.assert_allclose(full[dense], lapack_full[dense], rtol=1e-10, atol=1e-12)
    got, lapack = full[:, 0, :], lapack_full[:, 0, :]  # the value the kernel keeps

    def first(g, r):
        return float(mpmath.lu_solve(mpmath.matrix(g.tolist()), mpmath.matrix(r.tolist()))[0])

    with mpmath.workdps(40):
        exact = np.array([[first(g, r[:, c]) for c in range(r.shape[1])] for g, r in zip(G, rhs)])
    err, lapack_err = np.abs(got - exact), np.abs(lapack - exact)
    tiny = 1e-13 * np.abs(exact).max()
    for stat in (np.max, np.median):  # row by row either may be the closer one
        assert stat(err) <= 2 * stat(lapack_err) + tiny


def test_the_leading_blocks_solved_with_one_elimination_equal_their_own_solves_bitwise():
    """Local polynomials of several degrees share one moment matrix: each lower degree's system
    is a leading block of the highest's, and its solution must not depend on the others."""
    rng = np.random.default_rng(0)
    u = np.linspace(-1, 1, 33)
    w = rng.random((300, 33))
    w[:40] *= rng.random((40, 33)) < 0.1  # rows with a few keys: ill-conditioned blocks
    w = w[w.sum(axis=1) > 0]
    moments = w @ u[:, None] ** np.arange(9)
    G = moments[:, np.add.outer(np.arange(5), np.arange(5))]
    G[:, np.arange(1, 5), np.arange(1, 5)] += 1e-12 * moments[:, :1]
    rhs = rng.normal(size=(len(w), 5, 3))
    sizes = [3, 5, 1, 2]
    A, b = np.moveaxis(G, 0, -1).copy(), np.moveaxis(rhs, 0, -1).copy()  # systems last
    for P, got in zip(sizes, solve_spd_rows(A, b, sizes)):
        assert got.shape == (P, 3, len(w))
        want = solve_spd(G[:, :P, :P].copy(), rhs[:, :P].copy())
        np.testing.assert_array_equal(np.moveaxis(got, -1, 0), want)
