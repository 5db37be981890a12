"""The non-local zero-phase filter (window "all"): the k nearest patterns of the whole series,
against its loop reference; its own-sample weight is its exact divergence; the public
entry points."""

import numpy as np
import pytest

from tssdpa.estimators.selection import sure_mse
from tssdpa.filters import ProjectionFilter, projection_filter
from tssdpa.signal import nonlocal_filter
from tssdpa.signal.nonlocal_filter import nonlocal_neighbours, patterns, run_nonlocal
from tssdpa.signal.reference import nonlocal_reference


def force_products(monkeypatch, on: bool) -> None:
    """Search complete patterns by matrix products (on) or by the k-d tree (off), whatever
    their length and number."""
    monkeypatch.setattr(nonlocal_filter, "BLAS_DIM", 1 if on else 10**9)
    monkeypatch.setattr(nonlocal_filter, "BLAS_KEYS", 0)


def rows_searched(monkeypatch, search: str) -> list:
    """Wrap ``nonlocal_filter.<search>`` to record each call: the length of its first argument
    (the queries of ``_exact_nearest``); returns that list."""
    calls, inner = [], getattr(nonlocal_filter, search)

    def spy(first, *args):
        calls.append(len(first))
        return inner(first, *args)

    monkeypatch.setattr(nonlocal_filter, search, spy)
    return calls


def both_searches(monkeypatch, P, usable, k, half):
    """``(tree, products, exact)``: :func:`nonlocal_neighbours` by the k-d tree and by the
    matrix products, and how many rows the products' run searched exactly."""
    force_products(monkeypatch, False)
    tree = nonlocal_neighbours(P, usable, k, half)
    force_products(monkeypatch, True)
    calls = rows_searched(monkeypatch, "_exact_nearest")
    return tree, nonlocal_neighbours(P, usable, k, half), sum(calls)


@pytest.fixture(params=["k-d tree", "matrix products"])
def search(request, monkeypatch):
    """Both searches of complete patterns: the k-d tree (few coordinates) and the blocked
    matrix products (long patterns among many keys), each forced for every size."""
    force_products(monkeypatch, request.param == "matrix products")
    return request.param


def wave(T=150, C=1, seed=0, gaps=True):
    rng = np.random.default_rng(seed)
    t = np.arange(T)[:, None]
    x = np.sin(2 * np.pi * t / 23 + np.arange(C)) + 0.3 * rng.normal(size=(T, C))
    if gaps:
        x[40, 0] = np.nan  # one channel missing
        x[90:93] = np.nan  # a gap in every channel
    return x


@pytest.mark.parametrize("embedding", [2, 3, 4, 7])
@pytest.mark.parametrize("channels", [1, 2])
@pytest.mark.parametrize("exclude_self", [False, True])
def test_non_local_filter_equals_its_loop_reference(embedding, channels, exclude_self, search):
    x = wave(T=100, C=channels, seed=embedding)  # the loop reference is quadratic in T
    sigmas = [0.4, 2.0, np.inf]
    ys, own = run_nonlocal(x, embedding, 9, sigmas, exclude_self)
    for s, y, w in zip(sigmas, ys, own):
        y_ref, w_ref = nonlocal_reference(x, embedding, 9, s, exclude_self)
        np.testing.assert_array_equal(np.isnan(y), np.isnan(y_ref))
        np.testing.assert_allclose(y, y_ref, rtol=0, atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(w, w_ref, rtol=0, atol=1e-12)


def test_with_every_key_it_is_the_projection_over_the_allowed_keys():
    """k at least the number of keys: exact Gaussian attention over every key but the ones
    whose patterns hold the sample itself."""
    x = wave(T=80, gaps=False)
    m, s = 5, 0.8
    y, _ = run_nonlocal(x, m, 80, [s])
    h = m // 2
    t = 40
    pat = lambda j: np.delete(x[j - h : j + h + 1, 0], h)  # noqa: E731
    keys = [j for j in range(h, 80 - h) if j == t or abs(j - t) > h]
    logw = np.array([-np.sum((pat(t) - pat(j)) ** 2) / (2 * s * s) for j in keys])
    w = np.exp(logw - logw.max())
    np.testing.assert_allclose(y[0][t, 0], np.sum(w * x[keys, 0]) / w.sum(), rtol=1e-12)


@pytest.mark.parametrize("sigma", [0.5, np.inf])
def test_own_weight_is_the_exact_derivative_of_the_output_at_the_sample(sigma):
    """Nothing in y_t but x_t's own weight depends on x_t (the patterns leave x_t out and
    the keys holding it are left out), so y_t is linear in x_t even for a large change."""
    x = wave(gaps=False)
    (y,), (own,) = run_nonlocal(x, 7, 12, [sigma])
    for t in (0, 30, 75, 149):
        bumped = x.copy()
        bumped[t, 0] += 3.0
        (yb,), _ = run_nonlocal(bumped, 7, 12, [sigma])
        assert yb[t, 0] - y[t, 0] == pytest.approx(3.0 * own[t], abs=1e-12)
    # the first and last 3 rows have incomplete patterns: not keys, so not their own either
    assert (own[3:-3] > 0).all() and (own <= 1).all() and (own[:3] == 0).all()


def test_own_weight_of_a_lone_sample_between_gaps_is_0_though_its_filled_output_moves_with_it():
    """The docstring's caveat: a row whose pattern is all missing has no key (weight 0) and
    its output is interpolated from the rows beside it, whose patterns hold x_t."""
    from tssdpa.signal.lagfilter import resolve_spec, run_nonlocal_offline

    x = np.random.default_rng(1).normal(size=(80, 1))
    x[[10, 12]] = np.nan  # sample 11 alone: its pattern (embedding 2) is x_10, x_12
    spec = resolve_spec(window="all", embedding=2, sigma=0.7, decay=None, tau=None,
                        causal=False, exclude_self=False, tol=1e-6, min_step=None,
                        dtype=np.float64, n_neighbors=6)  # fmt: skip
    (y,), (own,) = run_nonlocal_offline(x, spec)
    for t in (11, 20):
        bumped = x.copy()
        bumped[t] += 1e-6
        (yb,), _ = run_nonlocal_offline(bumped, spec)
        moved = (yb[t, 0] - y[t, 0]) / 1e-6
        if t == 11:
            assert own[t] == 0 and abs(moved) > 0.01
        else:
            assert moved == pytest.approx(own[t], abs=1e-6) and own[t] > 0


def test_sure_with_the_exact_divergence_is_unbiased_for_the_non_local_filter():
    rng = np.random.default_rng(3)
    t = np.arange(400)
    clean = np.sign(np.sin(2 * np.pi * t / 37))[:, None] * 1.0
    sure, true = [], []
    for _ in range(40):
        noisy = clean + 0.5 * rng.normal(size=clean.shape)
        (y,), (own,) = run_nonlocal(noisy, 9, 16, [2.0])
        sure.append(sure_mse(noisy, y, None, np.array([0.5]), None, None, dydx=own[:, None]))
        true.append(np.mean((y - clean) ** 2))
    diff = np.array(sure) - np.array(true)
    assert abs(diff.mean()) < 3 * diff.std(ddof=1) / np.sqrt(len(diff))
    assert np.mean(true) < 0.5 * 0.5**2  # and it denoises: half the noise power


def test_time_reversal_gives_the_reversed_output():
    x = wave(gaps=False, seed=4)
    for m in (4, 7):
        (y,), _ = run_nonlocal(x, m, 10, [0.9])
        (yr,), _ = run_nonlocal(x[::-1].copy(), m, 10, [0.9])
        np.testing.assert_allclose(yr[::-1], y, rtol=0, atol=1e-12)


def test_projection_filter_window_all_is_the_non_local_filter_with_gaps_filled():
    x = wave(C=2)
    f = ProjectionFilter(window="all", embedding=5, sigma=0.7, causal=False, n_neighbors=8)
    y = f.filter(x)
    (ref,), _ = run_nonlocal(x, 5, 8, [0.7])
    ok = ~np.isnan(ref).any(axis=1)
    np.testing.assert_allclose(y[ok], ref[ok], rtol=0, atol=1e-12)
    assert np.isfinite(y).all()  # rows without a key interpolated, as the windowed filter
    y_functional = projection_filter(
        x, window="all", embedding=5, sigma=0.7, causal=False, n_neighbors=8, axis=0, channel_axis=1
    )
    np.testing.assert_array_equal(y_functional, y)


def test_filter_does_not_change_the_input():
    x = wave()
    before = x.copy()
    ProjectionFilter(window="all", embedding=5, sigma=0.7, causal=False).filter(x)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize(
    "kw, named",
    [
        ({"causal": True}, "causal"),
        ({"causal": False, "embedding": 1}, "embedding"),
        ({"causal": False, "degree": 2}, "degree"),
        ({"causal": False, "decay": 0.9}, "decay"),
        ({"causal": False, "n_neighbors": 0}, "n_neighbors"),
        ({"causal": False, "n_neighbors": 2.5}, "n_neighbors"),
    ],
)
def test_invalid_non_local_settings_are_refused_naming_them(kw, named):
    kw = {"embedding": 5, **kw}
    with pytest.raises((TypeError, ValueError), match=named):
        ProjectionFilter(window="all", sigma=1.0, **kw).filter(wave())


def test_a_window_string_other_than_all_is_refused():
    with pytest.raises(TypeError, match="window"):
        ProjectionFilter(window="everything", sigma=1.0, causal=False).filter(wave())


def test_ties_on_quantised_data_go_to_the_earlier_key_as_in_the_reference(search):
    """Integer readings (an ADC) make many distances exactly equal: the k-d tree's order is
    replaced by (distance, key row), the reference's."""
    rng = np.random.default_rng(7)
    adc = np.round(3 * np.sin(np.arange(160) / 5.0) + rng.normal(size=160))[:, None]
    spikes = np.zeros((160, 1))
    spikes[rng.choice(160, 12, replace=False)] = 1.0  # mostly zeros: almost every distance ties
    for x, m in [(adc, 3), (adc, 4), (spikes, 5)]:
        (y,), (own,) = run_nonlocal(x, m, 6, [1.5])
        y_ref, own_ref = nonlocal_reference(x, m, 6, 1.5)
        np.testing.assert_allclose(y, y_ref, rtol=0, atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(own, own_ref, rtol=0, atol=1e-12)


def test_more_neighbours_than_keys_means_every_key(search):
    x = wave(T=60, gaps=False)
    (y_all,), _ = run_nonlocal(x, 5, 10**12, [0.8])  # no T x 10**12 array
    (y_keys,), _ = run_nonlocal(x, 5, 56, [0.8])  # 60 - 2 * 2 complete patterns
    np.testing.assert_array_equal(y_all, y_keys)


def test_a_series_without_a_complete_pattern_is_refused_naming_the_embedding():
    f = ProjectionFilter(window="all", embedding=7, sigma=1.0, causal=False)
    x = np.arange(10.0)
    x[5] = np.nan  # every 7-sample pattern of 10 samples holds sample 5
    with pytest.raises(ValueError, match="embedding 7"):
        f.filter(x)


def test_before_fit_auto_embedding_of_the_non_local_filter_is_15():
    x = wave(gaps=False)
    y = ProjectionFilter(window="all", causal=False, sigma=1.0).filter(x[:, 0])
    y15 = ProjectionFilter(window="all", embedding=15, causal=False, sigma=1.0).filter(x[:, 0])
    np.testing.assert_array_equal(y, y15)


@pytest.mark.parametrize("exclude_self", [False, True])
def test_a_long_series_takes_its_keys_from_three_tiles_as_in_the_reference(exclude_self, search):
    """Beyond 3 tiles a row's keys are its tile's and its two neighbours' (linear cost)."""
    x = wave(T=170, seed=9)
    ys, own = run_nonlocal(x, 5, 7, [0.6], exclude_self, tile=40)
    y_ref, own_ref = nonlocal_reference(x, 5, 7, 0.6, exclude_self, tile=40)
    np.testing.assert_allclose(ys[0], y_ref, rtol=0, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(own[0], own_ref, rtol=0, atol=1e-12)
    whole, _ = run_nonlocal(x, 5, 7, [0.6], exclude_self, tile=57)  # 170 <= 3 x 57: no tiles
    assert not np.allclose(whole[0], ys[0], equal_nan=True)


def test_a_long_series_of_long_patterns_is_searched_by_matrix_products_by_default(monkeypatch):
    """63-sample patterns among more than BLAS_KEYS keys (the fitted filter's longest
    embedding on a long recording) take the products' search: the k-d tree's neighbours."""
    t = np.arange(nonlocal_filter.BLAS_KEYS + 200)
    x = np.sin(2 * np.pi * t / 37) + 0.3 * np.random.default_rng(5).normal(size=t.size)
    P, usable = patterns(x[:, None], 63), np.ones(t.size, bool)
    assert P.shape[1] >= nonlocal_filter.BLAS_DIM
    calls = rows_searched(monkeypatch, "_blas_nearest")
    dist, idx = nonlocal_neighbours(P, usable, 16, 31)
    assert calls
    force_products(monkeypatch, False)
    tree_dist, tree_idx = nonlocal_neighbours(P, usable, 16, 31)
    np.testing.assert_array_equal(idx, tree_idx)
    np.testing.assert_allclose(dist, tree_dist, rtol=1e-12, atol=0)


def test_the_matrix_product_search_finds_the_k_d_trees_neighbours(monkeypatch):
    """Same distances and keys, row for row, on a repeating signal whose patterns crowd
    together (many near-ties at the k-th distance), with the key runs' tail ragged."""
    t = np.arange(3001)
    x = np.sin(2 * np.pi * t / 50) + 0.05 * np.random.default_rng(3).normal(size=t.size)
    P, usable = patterns(x[:, None], 27), np.ones(t.size, bool)
    force_products(monkeypatch, False)
    tree = nonlocal_neighbours(P, usable, 40, 13)
    force_products(monkeypatch, True)
    blas = nonlocal_neighbours(P, usable, 40, 13)
    np.testing.assert_array_equal(blas[1], tree[1])
    np.testing.assert_allclose(blas[0], tree[0], rtol=1e-12, atol=0)


def test_a_query_whose_kth_distance_reaches_the_bound_is_searched_exactly(monkeypatch):
    """A constant stretch makes every distance there 0: the matrix products' bound on the
    keys not returned is reached, and those rows go to the exact search (ties to the
    earlier key, as in the reference)."""
    x = np.r_[np.zeros(120), np.sin(np.arange(80) / 3.0)][:, None]
    force_products(monkeypatch, True)
    calls = rows_searched(monkeypatch, "_exact_nearest")
    (y,), (own,) = run_nonlocal(x, 5, 6, [1.5])
    y_ref, own_ref = nonlocal_reference(x, 5, 6, 1.5)
    assert sum(calls) > 0
    np.testing.assert_allclose(y, y_ref, rtol=0, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(own, own_ref, rtol=0, atol=1e-12)


def test_data_far_from_zero_keeps_the_products_search_and_its_neighbours(monkeypatch):
    """An offset of 1e6 leaves distances alone; the products are taken about the keys' mean,
    so their rounding stays below the gaps between distances and few queries go exact."""
    t = np.arange(3000)
    x = 1e6 + np.sin(2 * np.pi * t / 50) + 0.3 * np.random.default_rng(4).normal(size=t.size)
    P, usable = patterns(x[:, None], 9), np.ones(t.size, bool)
    tree, blas, exact = both_searches(monkeypatch, P, usable, 12, 4)
    assert exact < 0.01 * t.size  # the first and last rows' partial patterns only
    np.testing.assert_array_equal(blas[1], tree[1])
    np.testing.assert_allclose(blas[0], tree[0], rtol=1e-9, atol=0)


@pytest.mark.parametrize("scale", [1e-30, 1e30])
def test_the_products_find_the_trees_neighbours_at_any_scale(monkeypatch, scale):
    """Their rounding bound scales with the data: at 1e-30 and 1e30 they keep the tree's keys
    and distances, and few queries go to the exact search."""
    t = np.arange(2000)
    x = scale * (np.sin(2 * np.pi * t / 40) + 0.2 * np.random.default_rng(6).normal(size=t.size))
    P, usable = patterns(x[:, None], 11), np.ones(t.size, bool)
    tree, blas, exact = both_searches(monkeypatch, P, usable, 10, 5)
    assert exact < 0.01 * t.size  # the first and last rows' partial patterns only
    np.testing.assert_array_equal(blas[1], tree[1])
    np.testing.assert_allclose(blas[0], tree[0], rtol=1e-12, atol=0)
