"""The neighbour engine against explicit loops: exact kNN under exclusion and causality,
adaptive Gaussian weights, the local-linear fit, and top-k projection as projection SDPA."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from tssdpa import projection_sdpa
from tssdpa.signal import neighbours as neighbours_module
from tssdpa.signal.neighbours import (
    causal_neighbours,
    kernel_weights,
    local_linear,
    loo_neighbours,
    weighted_mean,
)
from tssdpa.signal.reference import (
    kernel_weights_reference,
    local_linear_reference,
    neighbours_reference,
)


def keys_with_gaps(n, d, seed=0):
    rng = np.random.default_rng(seed)
    keys = rng.normal(size=(n, d))
    keys[[3, 17, n - 2]] = np.nan  # incomplete patterns are neither keys nor queries
    return keys


def assert_same_neighbours(got, want):
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("exclusion", [0, 3, 40])
def test_leave_one_out_neighbours_skip_the_exclusion_window(exclusion):
    keys = keys_with_gaps(120, 3)
    got = loo_neighbours(keys, 6, exclusion)
    want = neighbours_reference(keys, keys, 6, lambda i, j: abs(i - j) > exclusion)
    assert_same_neighbours(got, want)


@pytest.mark.parametrize("lag", [1, 4])
@pytest.mark.parametrize("block", [7, 1000])
def test_causal_neighbours_use_only_the_library_and_the_past(lag, block):
    library = keys_with_gaps(50, 2, seed=1)
    keys = keys_with_gaps(90, 2, seed=2)
    got = causal_neighbours(keys, 5, lag, library=library, block=block)
    everything = np.concatenate([library, keys])
    want = neighbours_reference(keys, everything, 5, lambda t, j: j < 50 or j - 50 <= t - lag)
    assert_same_neighbours(got, want)


@pytest.mark.parametrize("search", ["loo", "causal"])
def test_on_quantised_keys_the_neighbours_are_the_references_up_to_which_tied_key_is_kept(
    search,
):
    """Ties are not broken by row (the docstrings say so): the distances are the reference's,
    every key returned is at its distance, and the keys nearer than the k-th are the
    reference's; only which keys tied at the k-th distance are kept may differ."""
    keys = np.round(np.random.default_rng(5).normal(size=(150, 2)))  # many exact ties
    if search == "loo":
        got = loo_neighbours(keys, 5, 2)
        want = neighbours_reference(keys, keys, 5, lambda i, j: abs(i - j) > 2)
    else:
        got = causal_neighbours(keys, 5, 1, block=16)
        want = neighbours_reference(keys, keys, 5, lambda t, j: j <= t - 1)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert (got[1] != want[1]).any()  # some kept tied keys are not the reference's
    for i, (dist, idx, ridx) in enumerate(zip(got[0], got[1], want[1])):
        found = idx >= 0
        np.testing.assert_allclose(np.hypot(*(keys[idx[found]] - keys[i]).T), dist[found])
        if found.any():
            nearer = dist < dist[found].max()
            assert set(idx[nearer]) == set(ridx[nearer])


def test_causal_neighbours_without_a_library_start_with_no_neighbour():
    keys = np.random.default_rng(3).normal(size=(30, 2))
    dist, idx = causal_neighbours(keys, 3, 2)
    assert np.isinf(dist[:2]).all() and (idx[:2] == -1).all()  # nothing in the past yet
    assert np.isfinite(dist[2, 0]) and np.isinf(dist[2, 1])  # one key: row 0
    assert (idx[5:] <= np.arange(5, 30)[:, None] - 2).all()


@pytest.mark.parametrize("kw", [dict(bandwidth=0.5), dict(bandwidth=3.0), dict(sigma=0.7)])
def test_kernel_weights_follow_the_definition(kw):
    dist, _ = loo_neighbours(keys_with_gaps(60, 2), 5, 1)
    dist[0, 2:] = np.inf  # a query with only two neighbours
    dist[1] = np.inf  # and one with none
    w = kernel_weights(dist, **kw)
    np.testing.assert_allclose(w, kernel_weights_reference(dist, **kw), rtol=1e-12)
    has_keys = np.isfinite(dist).any(axis=1)
    np.testing.assert_allclose(w[has_keys].sum(axis=1), 1.0)
    assert (w[~has_keys] == 0).all() and not has_keys[1]


@pytest.mark.parametrize("kw", [dict(sigma=1e-160), dict(sigma=1e-300), dict(bandwidth=1e-300)])
def test_a_width_too_narrow_for_float64_weights_the_nearest_neighbours_alone(kw):
    # d^2 / 2σ^2 overflowed for every neighbour: all weights 0 (NaN forecasts), with warnings
    dist = np.array([[0.5, 0.5, 0.9, np.inf], [0.1, 0.2, 0.3, 0.4], [0.0, 0.0, 1.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = kernel_weights(dist, **kw)
    want = [[0.5, 0.5, 0, 0], [1, 0, 0, 0], [0.5, 0.5, 0, 0]]  # the limit as the width -> 0
    np.testing.assert_array_equal(w, want)
    narrow = {k: 1e-100 for k in kw}  # still representable: the same weights
    np.testing.assert_array_equal(kernel_weights(dist, **narrow), want)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
@pytest.mark.parametrize("kw", [dict(bandwidth=0.8), dict(sigma=0.7)])
def test_kernel_weights_do_not_depend_on_the_unit_of_the_distances(kw, scale):
    # d² overflows at 1e200 and underflows at 1e-200: both rows took the uniform mean
    dist, _ = loo_neighbours(keys_with_gaps(60, 2), 5, 1)
    dist[0, 2:] = np.inf  # a query with only two neighbours
    scaled = {k: v * scale if k == "sigma" else v for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = kernel_weights(dist * scale, **scaled)
    np.testing.assert_allclose(w, kernel_weights(dist, **kw), rtol=1e-12)
    np.testing.assert_allclose(w, kernel_weights_reference(dist * scale, **scaled), rtol=1e-12)


def test_a_fixed_sigma_far_below_distances_too_large_to_square_weighs_the_nearest_keys():
    dist = np.array([[1e200, 1e200, 2e200, np.inf], [3e200, 1e300, 2e307, 2e307]])
    want = [[0.5, 0.5, 0, 0], [1, 0, 0, 0]]
    np.testing.assert_array_equal(kernel_weights(dist, sigma=1.0), want)
    np.testing.assert_array_equal(kernel_weights_reference(dist, sigma=1.0), want)


def test_a_sigma_far_below_the_distances_weighs_the_nearest_neighbour_not_none():
    """At the narrowest sigma the filters take (1e-154) every logit -d²/2σ² beyond d = 1.3
    overflowed to -inf: the row had no weight, and the non-local filter's output was NaN
    (then interpolated) on 196 of 200 samples. Now its nearest neighbour, as at 1e-6."""
    from tssdpa.signal.nonlocal_filter import run_nonlocal

    dist, _ = loo_neighbours(keys_with_gaps(60, 2) * 50.0, 5, 1)
    dist[0, 2:] = np.inf  # a query with only two neighbours
    dist[1] = np.inf  # and one with none
    with np.errstate(over="raise", invalid="raise"):
        w = kernel_weights(dist, sigma=1e-154)
    nearest = np.zeros_like(w)
    nearest[np.isfinite(dist[:, 0]), 0] = 1.0  # sorted by distance, no ties
    np.testing.assert_array_equal(w, nearest)
    x = np.random.default_rng(0).normal(size=(200, 1)) * 10
    narrow, _ = run_nonlocal(x, 4, 8, [1e-154], exclude_self=True)
    np.testing.assert_array_equal(narrow[0], run_nonlocal(x, 4, 8, [1e-6], exclude_self=True)[0][0])


def test_top_k_projection_is_projection_sdpa_over_the_nearest_keys():
    rng = np.random.default_rng(4)
    keys, values = rng.normal(size=(80, 3)), rng.normal(size=(80, 2))
    queries = rng.normal(size=(10, 3))
    everything = np.concatenate([keys, queries])
    dist, idx = causal_neighbours(queries, 7, 0, library=keys, keys=np.full((0, 3), np.nan))
    got = weighted_mean(kernel_weights(dist, bandwidth=0.8), values[idx])
    # the same: attention over all keys, masked to the 7 nearest, one sigma per query
    allowed = np.zeros((10, 80), bool)
    np.put_along_axis(allowed, idx, True, axis=1)
    sigma = 0.8 * dist[:, -1:]
    t = torch.from_numpy
    want = projection_sdpa(
        t(queries)[None], t(keys)[None], t(values)[None], attn_mask=t(allowed)[None],
        sigma=t(sigma)[None], backend="math",
    )[0].numpy()  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert everything.shape == (90, 3)


def test_local_linear_is_weighted_ridge_least_squares():
    rng = np.random.default_rng(5)
    Q, k, D, V = 12, 9, 3, 2
    neighbours, queries = rng.normal(size=(Q, k, D)), rng.normal(size=(Q, D))
    targets = rng.normal(size=(Q, k, V))
    w = rng.uniform(size=(Q, k))
    w /= w.sum(axis=1, keepdims=True)
    w[0] = 0.0  # no weight: no estimate
    got = local_linear(w, neighbours, queries, targets, ridge=0.05)
    want = local_linear_reference(w, neighbours, queries, targets, ridge=0.05)
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-9)
    assert np.isnan(got[0]).all()


def test_local_linear_is_exact_on_a_linear_surface():
    rng = np.random.default_rng(6)
    neighbours, queries = rng.normal(size=(5, 20, 2)), rng.normal(size=(5, 2))
    targets = (2.0 + neighbours @ np.array([1.5, -0.5]))[:, :, None]
    w = np.full((5, 20), 1 / 20)
    got = local_linear(w, neighbours, queries, targets, ridge=1e-12)
    np.testing.assert_allclose(got[:, 0], 2.0 + queries @ np.array([1.5, -0.5]), rtol=1e-8)


def test_guarded_local_linear_gives_the_weighted_mean_only_far_off_a_thin_cloud():
    """Neighbours on a thin slab (spread 1e-5 across it) with targets that follow that thin
    direction steeply: a query 0.1 across is far off the cloud and the slope moves the
    estimate by some 70 target deviations -- the weighted mean, guarded; a query on the
    slab, and any query unguarded, get the plane."""
    rng = np.random.default_rng(7)
    k = 30
    along = rng.normal(size=(2, k))
    across = 1e-5 * rng.normal(size=k)
    keys = np.stack([along[0], along[1], across], axis=1)[None].repeat(2, axis=0)  # (2, k, 3)
    targets = (keys[:, :, :2].sum(axis=2) + 1e3 * keys[:, :, 2])[:, :, None]  # (2, k, 1)
    queries = np.array([[0.1, 0.2, 0.0], [0.1, 0.2, 0.1]])
    w = np.full((2, k), 1 / k)
    free = local_linear(w, keys, queries, targets, ridge=1e-12)
    guarded = local_linear(w, keys, queries, targets, ridge=1e-12, guarded=True)
    np.testing.assert_allclose(free[:, 0], [0.3, 0.3 + 100.0], rtol=0.03)  # the plane (ridge)
    np.testing.assert_allclose(guarded[0], free[0], rtol=1e-12)
    np.testing.assert_allclose(guarded[1], w[1] @ targets[1], rtol=1e-12)


def test_local_linear_keeps_its_precision_on_a_tight_ill_conditioned_neighbourhood():
    # keys of a smooth flow: offsets of 1e-3 from the query, spread along a 2-d surface of a
    # 10-d embedding (the other directions 1e-6 thin). The normal equations with an absolute
    # 1e-12 on the diagonal acted there as a relative ridge of about 1e-5 and missed the
    # surface; the exact minimiser at ridge 1e-12 (the loop's SVD solve) reproduces it.
    rng = np.random.default_rng(7)
    Q, k, D = 6, 40, 10
    basis = np.linalg.qr(rng.normal(size=(D, D)))[0]
    along = rng.normal(size=(Q, k, 2)) * 1e-3
    thin = rng.normal(size=(Q, k, D - 2)) * 1e-6
    offsets = np.concatenate([along, thin], axis=2) @ basis.T
    queries = rng.normal(size=(Q, D))
    neighbours = queries[:, None, :] + offsets
    value = lambda p: np.sin(p @ basis[:, 0]) + np.cos(2.0 * (p @ basis[:, 1]))  # noqa: E731
    targets = value(neighbours)[:, :, None]
    w = np.full((Q, k), 1.0 / k)
    got = local_linear(w, neighbours, queries, targets, ridge=1e-12)[:, 0]
    want = local_linear_reference(w, neighbours, queries, targets, ridge=1e-12)[:, 0]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    # a locally linear fit of a smooth surface errs by its curvature times the offsets^2
    np.testing.assert_allclose(got, value(queries), rtol=0, atol=1e-5)


def test_local_linear_without_ridge_on_too_few_neighbours_takes_the_minimum_norm_slope():
    rng = np.random.default_rng(8)
    Q, k, D = 4, 3, 6  # 3 neighbours cannot determine 6 slopes
    neighbours, queries = rng.normal(size=(Q, k, D)), rng.normal(size=(Q, D))
    targets = rng.normal(size=(Q, k, 1))
    w = rng.uniform(0.2, 1.0, size=(Q, k))
    got = local_linear(w, neighbours, queries, targets, ridge=0.0)
    want = local_linear_reference(w, neighbours, queries, targets, ridge=0.0)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-8)


@pytest.mark.parametrize("point", [[1 / 3, 2 / 3, 0.3], [84.1, -7.7, 0.01], [1e-3, 5e3, -2.0]])
def test_local_linear_without_ridge_on_identical_neighbours_is_the_weighted_mean_of_their_targets(
    point,
):
    """Neighbours that all coincide spread in no direction, but centring them on their
    weighted mean left rounding, on which ridge 0 fitted a slope: fast and reference were
    up to 1.09 apart (and 84 on random degenerate neighbourhoods), neither the mean.
    Directions spread less than rounding get no slope, in both."""
    rng = np.random.default_rng(11)
    Q, k, V = 5, 6, 2
    neighbours = np.broadcast_to(np.array(point), (Q, k, 3)).copy()
    queries = np.array(point) + rng.normal(size=(Q, 3))
    targets = rng.normal(size=(Q, k, V))
    w = rng.uniform(0.05, 1.0, size=(Q, k))
    mean = np.einsum("qk,qkv->qv", w / w.sum(axis=1, keepdims=True), targets)
    got = local_linear(w, neighbours, queries, targets, ridge=0.0)
    want = local_linear_reference(w, neighbours, queries, targets, ridge=0.0)
    np.testing.assert_allclose(got, mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(want, mean, rtol=0, atol=1e-12)


def test_local_linear_without_ridge_on_degenerate_neighbourhoods_equals_the_reference():
    """Identical neighbours but a few, some of weight 0, in 1 to 4 dimensions and at scales
    1e-3 to 1e3: fewer distinct weighted neighbours than D + 1, the minimum-norm fit."""
    for seed in range(200):
        rng = np.random.default_rng(seed)
        D, k = int(rng.integers(1, 5)), int(rng.integers(1, 8))
        base = rng.normal(size=(1, 1, D)) * 10 ** rng.uniform(-3, 3)
        neighbours = np.tile(base, (1, k, 1))
        moved = int(rng.integers(0, k + 1))
        neighbours[:, :moved] += rng.normal(size=(1, moved, D)) * (rng.random() < 0.5)
        w = rng.random((1, k)) * (rng.random((1, k)) < 0.7)
        queries, targets = base[:, 0] + rng.normal(size=(1, D)), rng.normal(size=(1, k, 2))
        got = local_linear(w, neighbours, queries, targets, ridge=0.0)
        want = local_linear_reference(w, neighbours, queries, targets, ridge=0.0)
        scale = max(1.0, float(np.nanmax(np.abs(want), initial=0.0)))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-11 * scale, err_msg=f"{seed}")


def test_local_linear_with_a_ridge_below_rounding_on_too_few_neighbours_is_the_minimum_norm_fit():
    # along the directions the 3 neighbours do not span, the cross moments are rounding:
    # divided by a ridge of 1e-16 they were an error as large as the estimate itself
    rng = np.random.default_rng(8)
    Q, k, D = 4, 3, 6
    neighbours, queries = rng.normal(size=(Q, k, D)), rng.normal(size=(Q, D))
    targets = rng.normal(size=(Q, k, 1))
    w = rng.uniform(0.2, 1.0, size=(Q, k))
    got = local_linear(w, neighbours, queries, targets, ridge=1e-16)
    want = local_linear_reference(w, neighbours, queries, targets, ridge=0.0)
    np.testing.assert_allclose(got, want, rtol=1e-8)


def test_local_linear_solves_by_elimination_only_where_every_ridge_clears_the_rounding(
    monkeypatch,
):
    # elimination where every ridge exceeds 10 D^2 eps (the default ridges up to D = 21),
    # otherwise one eigendecomposition for all the ridges, never both
    calls = []
    solve, eigh = neighbours_module.solve_spd, np.linalg.eigh
    monkeypatch.setattr(neighbours_module, "solve_spd",
                        lambda *a: calls.append("elimination") or solve(*a))  # fmt: skip
    monkeypatch.setattr(np.linalg, "eigh", lambda a: calls.append("eigh") or eigh(a))
    rng = np.random.default_rng(10)
    for D, ridges, path in [(4, [1e-12, 1e-3], "elimination"), (21, [1e-12], "elimination"),
                            (4, [0.0, 1e-3], "eigh"), (22, [1e-12, 1e-3], "eigh")]:  # fmt: skip
        calls.clear()
        neighbours, queries = rng.normal(size=(3, 40, D)), rng.normal(size=(3, D))
        local_linear(np.ones((3, 40)), neighbours, queries, rng.normal(size=(3, 40, 1)), ridges)
        assert calls == [path], (D, ridges)


def test_local_linear_over_a_list_of_ridges_gives_each_ridges_own_fit():
    # ridges well above the Gram matrix's rounding are solved by elimination, the others
    # (0, and 1e-12 in 30 dimensions) in its eigenbasis: one call with both gives what the
    # loop reference gives for each ridge alone, including a neighbourhood too small to
    # determine the slopes (3 neighbours, 6 dimensions), where only the ridge keeps the
    # system solvable
    rng = np.random.default_rng(9)
    ridges = [1e-3, 0.0, 1e-12, 1e-6]
    for Q, k, D in [(10, 12, 4), (5, 3, 6), (4, 40, 30)]:
        neighbours, queries = rng.normal(size=(Q, k, D)), rng.normal(size=(Q, D))
        targets = rng.normal(size=(Q, k, 2))
        w = rng.uniform(0.2, 1.0, size=(Q, k))
        got = local_linear(w, neighbours, queries, targets, ridge=ridges)
        assert len(got) == len(ridges)
        for r, g in zip(ridges, got):
            want = local_linear_reference(w, neighbours, queries, targets, ridge=r)
            # a singular neighbourhood's slopes along its missing directions are rounding
            # divided by the ridge: the answer is determined to about 1e-16 / ridge
            atol = 1e-9 if k > D or r == 0 else max(1e-9, 1e-15 / r)
            np.testing.assert_allclose(g, want, rtol=1e-7, atol=atol, err_msg=f"ridge {r}")
