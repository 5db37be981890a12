"""The lag kernel: fast path against its explicit-loop reference, truncation, embeddings."""

from __future__ import annotations

import numpy as np
import pytest

from tssdpa.signal.embedding import delay_embedding
from tssdpa.signal.lags import (
    GAP_MARGIN,
    SIGMA_BATCH,
    attend_lags,
    attend_newest,
    decay_logits,
    iir_truncation_lag,
)
from tssdpa.signal.reference import attend_lags_reference

RNG = np.random.default_rng(1234)


@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("exclude_self", [False, True])
@pytest.mark.parametrize("mode", ["plain", "decay", "times", "twosided"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fast_kernel_matches_reference(m, exclude_self, mode, dtype):
    rng = np.random.default_rng(m * 10 + exclude_self)
    C = 2
    x = rng.normal(size=(80, C))
    x[7, 1] = np.nan
    x[30:33] = np.nan
    pad = np.full((9, C), np.nan)
    full = np.concatenate([pad, x, pad])
    E = delay_embedding(full, m)
    times = np.concatenate(
        [np.full(9, np.nan), np.cumsum(rng.uniform(0.2, 2, 80)), np.full(9, np.nan)]
    )
    kw = dict(sigma=0.8, exclude_self=exclude_self, fallback=full[9:89] if exclude_self else None)
    lag_min, lag_max = 0, 8
    if mode == "decay":
        kw["decay"] = 0.85
    elif mode == "times":
        kw.update(times=times, tau=2.5)
    elif mode == "twosided":
        kw["decay"] = 0.9
        lag_min = -8
    fast = attend_lags(
        E.astype(dtype),
        full.astype(dtype),
        (9, 89),
        lag_min,
        lag_max,
        block_elems=64,
        **{**kw, "times": None if "times" not in kw else times.astype(dtype)},
    )
    ref = attend_lags_reference(E, full, (9, 89), lag_min, lag_max, **kw)
    assert np.array_equal(np.isnan(fast), np.isnan(ref))
    tol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(np.nan_to_num(fast), np.nan_to_num(ref), atol=tol, rtol=tol)


def test_threads_give_same_result():
    x = RNG.normal(size=(5000, 1))
    full = np.concatenate([np.full((15, 1), np.nan), x])
    a = attend_lags(full, full, (15, 5015), 0, 15, sigma=0.5, block_elems=1024)
    b = attend_lags(full, full, (15, 5015), 0, 15, sigma=0.5, block_elems=1024, n_threads=2)
    np.testing.assert_array_equal(a, b)


def test_delay_embedding_layout():
    x = np.arange(10.0).reshape(5, 2)
    e = delay_embedding(x, 2)
    np.testing.assert_array_equal(e[3], [6, 7, 4, 5])
    assert np.isnan(e[0, 2:]).all()
    centred = delay_embedding(x, 3, offset=1)
    np.testing.assert_array_equal(centred[2], [6, 7, 4, 5, 2, 3])


@pytest.mark.parametrize("n", [0, 1, 9])
@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("delay", [1, 2])
def test_a_delay_embedding_of_any_offset_is_a_new_array_of_the_lagged_samples(n, m, delay):
    """Row t: x[t + o - i d] for i < m, NaN outside x. An offset below 0 or beyond m - 1 (a
    window wholly in the future) or an empty x raised from the padding, and with m = 1 the
    result was a read-only view of it."""
    x = np.random.default_rng(n).normal(size=(n, 2))
    for offset in (-2, 0, m - 1, m + 2):
        want = np.full((n, 2 * m), np.nan)
        for t in range(n):
            for i in range(m):
                if 0 <= t + offset - i * delay < n:
                    want[t, 2 * i : 2 * i + 2] = x[t + offset - i * delay]
        got = delay_embedding(x, m, offset=offset, delay=delay)
        np.testing.assert_array_equal(got, want)
        got[...] = 0.0  # a new array: writable


@pytest.mark.parametrize("decay", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("tol", [1e-3, 1e-8])
def test_iir_truncation_lag_is_minimal(decay, tol):
    k = iir_truncation_lag(decay, tol)
    assert decay**k / (1 - decay) <= tol
    assert k == 1 or decay ** (k - 1) / (1 - decay) > tol


@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("exclude_self", [False, True])
@pytest.mark.parametrize("mode", ["plain", "decay", "times"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("degree", [0, 1, 2])
def test_one_row_kernel_rounds_like_the_last_row_of_attend_lags(
    m, exclude_self, mode, dtype, degree
):
    rng = np.random.default_rng(m + 7 * exclude_self)
    K, C = 9, 2
    x = rng.normal(size=(K + m - 1, C)).astype(dtype)
    times = np.cumsum(rng.uniform(0.2, 2, K + m - 1))
    decay = 0.85 if mode == "decay" else None
    tau = 2.5 if mode == "times" else None
    E = delay_embedding(x, m)
    fast = attend_lags(
        E,
        x,
        (len(x) - 1, len(x)),
        0,
        K - 1,
        sigma=0.8,
        degree=degree,
        decay=decay,
        times=times.astype(dtype) if tau else None,
        tau=tau,
        exclude_self=exclude_self,
        rowwise=True,  # as the causal filter runs it
    )
    t = times.astype(dtype)[m - 1 :]
    one = attend_newest(
        x,
        m,
        decay_logits(np.arange(K - 1, -1, -1), decay, np.dtype(dtype)),
        0.8,
        elapsed=t[-1] - t if tau else None,
        tau=tau,
        exclude_self=exclude_self,
        degree=degree,
    )
    assert one.dtype == fast.dtype
    np.testing.assert_array_equal(one, fast[0])
    if dtype == np.float64:  # and the loop form's last row
        want = attend_lags_reference(
            E, x, (len(x) - 1, len(x)), 0, K - 1, sigma=0.8, degree=degree, decay=decay,
            times=times if tau else None, tau=tau, exclude_self=exclude_self,
        )  # fmt: skip
        np.testing.assert_allclose(one, want[0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("degree", [1, 2])
@pytest.mark.parametrize("mode", ["plain", "decay", "times", "twosided"])
def test_local_polynomial_kernel_matches_reference(degree, mode):
    rng = np.random.default_rng(degree * 7)
    C = 2
    x = np.cumsum(rng.normal(size=(80, C)), axis=0) * 0.2
    x[30:33] = np.nan
    pad = np.full((9, C), np.nan)
    full = np.concatenate([pad, x, pad])
    E = delay_embedding(full, 2)
    times = np.concatenate(
        [np.full(9, np.nan), np.cumsum(rng.uniform(0.2, 2, 80)), np.full(9, np.nan)]
    )
    kw = dict(sigma=0.9, degree=degree)
    lag_min = 0
    if mode == "decay":
        kw["decay"] = 0.85
    elif mode == "times":
        kw.update(times=times, tau=2.5)
    elif mode == "twosided":
        lag_min = -8
    fast = attend_lags(E, full, (9, 89), lag_min, 8, block_elems=64, **kw)
    ref = attend_lags_reference(E, full, (9, 89), lag_min, 8, **kw)
    np.testing.assert_allclose(fast, ref, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("degree", [2, 4])
@pytest.mark.parametrize("exclude_self", [False, True])
def test_a_local_polynomial_whose_keys_fill_a_small_part_of_the_window_matches_reference(
    degree, exclude_self
):
    """A window of 300 lags over 60 samples (and a gap): each row's offsets are measured in
    the unit of its own farthest key, in the kernel and in the reference alike (the
    reference once kept the window's unit and was 1.03 off the kernel and least squares)."""
    rng = np.random.default_rng(degree)
    x = np.cumsum(rng.normal(size=(60, 1)), axis=0) * 0.2
    x[30:33] = np.nan
    full = np.concatenate([np.full((300, 1), np.nan), x])
    E = delay_embedding(full, 1)
    kw = dict(sigma=np.inf, degree=degree, exclude_self=exclude_self)
    fast = attend_lags(E, full, (300, 360), 0, 299, block_elems=64, **kw)
    ref = attend_lags_reference(E, full, (300, 360), 0, 299, **kw)
    first = degree + exclude_self  # the first row with enough keys for the polynomial; the
    # rows before fit the degree their keys determine, in both
    np.testing.assert_allclose(fast, ref, rtol=1e-8, atol=1e-9)
    t = np.arange(first, 30)
    lsq = [np.polyval(np.polyfit(np.arange(r + 1 - exclude_self), x[: r + 1 - exclude_self, 0],
                                 degree), r) for r in t]  # fmt: skip
    np.testing.assert_allclose(fast[t, 0], lsq, rtol=0, atol=1e-6)


@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("mode", ["plain", "times", "twosided"])
def test_a_row_with_fewer_keys_of_weight_than_its_degree_needs_fits_the_highest_they_determine(
    degree, mode
):
    """Leaving the sample out of a window of degree + 1 lags gives each row ``degree`` keys,
    and fewer at the start and beside a gap: a degree-p polynomial is not determined there,
    and the ridge on its slopes alone decided it (0.34 off the line through two keys at
    degree 2, 0.75 at degree 3). Such a row fits the highest degree its keys determine, down
    to the mean of one key: the kernel of degree - 1, and the reference, give the same."""
    rng = np.random.default_rng(degree)
    x = np.cumsum(rng.normal(size=(50, 2)), axis=0) * 0.3
    x[20:22, 0] = np.nan
    x[33:36] = np.nan
    pad = np.full((8, 2), np.nan)
    full = np.concatenate([pad, x, pad])
    E = delay_embedding(full, 2)
    times = np.concatenate([np.full(8, np.nan), np.repeat(np.arange(25.0), 2), np.full(8, np.nan)])
    kw = dict(sigma=0.8, exclude_self=True)
    lag_min = -degree if mode == "twosided" else 0  # two-sided: degree keys either side
    if mode == "times":  # repeated timestamps: the offsets are still the lags
        kw.update(times=times, tau=3.0)
    got = attend_lags(E, full, (8, 58), lag_min, degree, degree=degree, block_elems=64, **kw)
    ref = attend_lags_reference(E, full, (8, 58), lag_min, degree, degree=degree, **kw)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    if mode != "twosided":
        lower = attend_lags(E, full, (8, 58), 0, degree, degree=degree - 1, block_elems=64, **kw)
        np.testing.assert_allclose(got, lower, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("degree", [1, 2])
def test_a_power_its_keys_determine_only_to_rounding_is_not_fitted(degree):
    """A row of three keys, one at distance 0 and two far out (weights 1 and 1e-11): the
    slope rests on the faint keys, whose share of the moments is below rounding (the pivot
    is below PIVOT_FLOOR of its diagonal). The kernel and the reference fit the mean there,
    as they fit the highest degree a row's keys determine when it has too few of them."""
    E = np.array([[0.0], [7.0], [7.0], [0.0]])  # keys 0-2, the query 3
    V = np.array([[1.0], [-5.0], [9.0], [0.0]])
    kw = dict(sigma=1.0, exclude_self=True)
    got = attend_lags(E, V, (3, 4), 0, 3, degree=degree, **kw)
    mean = attend_lags(E, V, (3, 4), 0, 3, degree=0, **kw)
    ref = attend_lags_reference(E, V, (3, 4), 0, 3, degree=degree, **kw)
    np.testing.assert_array_equal(got, mean)
    np.testing.assert_allclose(ref, mean, rtol=1e-12)
    # with the far keys nearer (1e-3 of the weight) the slope is fitted, in both
    E[1:3] = 3.7
    got = attend_lags(E, V, (3, 4), 0, 3, degree=degree, **kw)
    assert abs(got[0, 0] - attend_lags(E, V, (3, 4), 0, 3, degree=0, **kw)[0, 0]) > 1e-3
    ref = attend_lags_reference(E, V, (3, 4), 0, 3, degree=degree, **kw)
    np.testing.assert_allclose(got, ref, rtol=1e-9)


@pytest.mark.parametrize(("W", "degree"), [(9, 6), (16, 7), (16, 8)])
def test_a_causal_uniform_window_fits_its_full_degree_as_savitzky_golay_does(W, degree):
    """sigma=inf weighs every key 1, so no power rests on faint keys: the pivots of u^6..u^8
    over a causal window (down to 1e-9 of their diagonal) are the powers' near-collinearity,
    not rounding. PIVOT_FLOOR made these rows fit a lower degree, 3-50% of the range off
    scipy's causal Savitzky-Golay filter, in the kernel and the reference alike."""
    from scipy.signal import savgol_coeffs

    n = 120
    x = np.cumsum(np.random.default_rng(2).normal(size=(n, 1)), axis=0)
    full = np.concatenate([np.full((W - 1, 1), np.nan), x])
    got = attend_lags(full, full, (W - 1, W - 1 + n), 0, W - 1, sigma=np.inf, degree=degree)
    ref = attend_lags_reference(full, full, (W - 1, W - 1 + n), 0, W - 1, sigma=np.inf,
                                degree=degree)  # fmt: skip
    h = savgol_coeffs(W, degree, pos=W - 1, use="dot")  # the fit at the window's newest sample
    want = np.array([h @ x[t - W + 1 : t + 1, 0] for t in range(W - 1, n)])
    tol = 1e-4 * np.ptp(x)  # the ridge (1e-12 of the weight) bends degree 8 by 1e-5
    np.testing.assert_allclose(got[W - 1 :, 0], want, rtol=0, atol=tol)
    np.testing.assert_allclose(ref[W - 1 :, 0], want, rtol=0, atol=tol)


@pytest.mark.parametrize("seed", [1, 5, 8])
def test_a_local_polynomial_row_does_not_depend_on_the_rows_computed_beside_it(seed):
    """A narrow kernel on a random walk: many rows weigh one near key and a few faint ones
    (1e-11 of it). BLAS sums a row's moments in an order that depends on the rows in its
    block; the powers those faint keys alone determine amplified that rounding (blocks of
    one row and of 100 were 2.5e-5 apart): such powers are not fitted (PIVOT_FLOOR)."""
    x = np.cumsum(np.random.default_rng(seed).normal(size=(100, 2)), axis=0)
    full = np.concatenate([np.full((49, 2), np.nan), x])
    E = delay_embedding(full, 3)
    kw = dict(sigma=0.1, degree=2, exclude_self=True)
    whole = attend_lags(E, full, (49, 149), 0, 49, **kw)
    for rows_per_block in (1, 2, 7):
        got = attend_lags(E, full, (49, 149), 0, 49, block_elems=50 * rows_per_block, **kw)
        np.testing.assert_allclose(got, whole, rtol=0, atol=1e-10 * np.abs(x).max())


@pytest.mark.parametrize("lag_min", [0, -8])
def test_a_polynomial_at_a_sample_without_its_reading_stays_within_the_values_it_weighed(lag_min):
    # across a long gap the keys lie on one side: a quadratic fitted there extrapolated
    # without bound (a sine of amplitude 1 filled with values beyond -100)
    rng = np.random.default_rng(3)
    t = np.arange(80)
    x = np.stack([np.sin(t / 6), np.cos(t / 5)], axis=1) + 0.2 * rng.normal(size=(80, 2))
    x[55:, 0] = np.nan  # a trailing gap in one channel
    x[20:34, 1] = np.nan  # a gap longer than the causal window in the other
    pad = np.full((9, 2), np.nan)
    full = np.concatenate([pad, x, pad])
    E = delay_embedding(full, 2)
    kw = dict(sigma=0.9, degree=2)
    fast = attend_lags(E, full, (9, 89), lag_min, 8, block_elems=64, **kw)
    ref = attend_lags_reference(E, full, (9, 89), lag_min, 8, **kw)
    np.testing.assert_allclose(fast, ref, rtol=1e-8, atol=1e-10)
    gap = np.isnan(x) & np.isfinite(fast)
    assert gap[:, 0].sum() >= 5 and gap[:, 1].sum() >= 5
    lo, hi = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
    pad = GAP_MARGIN * (hi - lo)
    assert ((fast >= lo - pad) & (fast <= hi + pad))[gap].all()


def test_a_peak_inside_a_short_gap_keeps_its_height():
    # the margin: clipped to the values weighed alone, a quadratic across 5 missing samples
    # at a sine's crest was flattened to 0.90 (the crest 1.0)
    x = np.sin(np.arange(120) / 6)[:, None]
    crest = int(np.argmax(x[:, 0]))
    x[crest - 2 : crest + 3] = np.nan
    pad = np.full((7, 1), np.nan)
    full = np.concatenate([pad, x, pad])
    E = delay_embedding(full, 1)
    y = attend_lags(E, full, (7, 127), -7, 7, sigma=np.inf, degree=2)
    assert abs(y[crest, 0] - 1.0) < 0.02


@pytest.mark.parametrize("degree", [0, 2, 3])
def test_the_uniform_kernel_is_a_savitzky_golay_filter(degree):
    from scipy.signal import savgol_filter

    x = np.random.default_rng(3).normal(size=(200, 1))
    W = 6  # two-sided: 2W - 1 = 11 samples
    full = np.concatenate([np.full((W - 1, 1), np.nan), x, np.full((W - 1, 1), np.nan)])
    got = attend_lags(full, full, (W - 1, W - 1 + 200), -(W - 1), W - 1, sigma=np.inf,
                      degree=degree)  # fmt: skip
    want = savgol_filter(x[:, 0], 2 * W - 1, degree, mode="interp")
    inner = slice(W - 1, 200 - W + 1)  # savgol_filter fits the edges differently
    # equal up to the tiny ridge (1e-9) that keeps the normal equations solvable
    np.testing.assert_allclose(got[inner, 0], want[inner], rtol=1e-6, atol=1e-8)


def _gappy_table(gaps: bool):
    """(E, full): a two-channel series of 150 samples after 7 NaN rows and its embeddings of 3;
    with ``gaps``, 5% of the samples missing (keys that lack one channel: the rows that weigh
    them go channel by channel)."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(150, 2))
    if gaps:
        x[rng.random(x.shape) < 0.05] = np.nan
    full = np.concatenate([np.full((7, 2), np.nan), x])
    return delay_embedding(full, 3), full


def test_a_sweep_equals_one_call_per_configuration():
    E, full = _gappy_table(gaps=False)
    configs = [(0.5, 0), (2.0, 1), (np.inf, 2), (0.5, 0)]
    many = attend_lags(E, full, (7, 157), 0, 7, configs=configs, decay=0.9, block_elems=50)
    for (s, p), got in zip(configs, many):
        one = attend_lags(E, full, (7, 157), 0, 7, sigma=s, degree=p, decay=0.9, block_elems=50)
        np.testing.assert_array_equal(got, one)


@pytest.mark.parametrize("gaps", [False, True])
def test_the_sigmas_of_a_sweep_solved_together_equal_one_sweep_per_sigma(gaps):
    """Several sigmas with the same degrees: their local polynomials are solved in batches of
    SIGMA_BATCH, bitwise as each sigma's alone. (Calls with other highest degrees may differ in
    the last bits: the moments' matrix product is as wide as twice the highest degree.)"""
    E, full = _gappy_table(gaps)
    sigmas = (0.3, 1.0, np.inf, 2.0, 0.7, 5.0)
    assert len(sigmas) > SIGMA_BATCH  # a full batch and a partial one
    configs = [(s, p) for s in sigmas for p in (0, 2, 4)]
    many = attend_lags(E, full, (7, 157), 0, 7, configs=configs, decay=0.9, block_elems=50)
    for sigma in {s for s, _ in configs}:
        mine = [i for i, (s, _) in enumerate(configs) if s == sigma]
        alone = attend_lags(E, full, (7, 157), 0, 7, configs=[configs[i] for i in mine],
                            decay=0.9, block_elems=50)  # fmt: skip
        for i, one in zip(mine, alone):
            np.testing.assert_array_equal(many[i], one)


@pytest.mark.parametrize(
    ("dtype", "sigma"), [(np.float32, 1e-20), (np.float32, 1e-100), (np.float64, 1e-154)]
)
@pytest.mark.parametrize("exclude_self", [False, True])
@pytest.mark.parametrize("decay", [None, 0.9])
def test_a_kernel_narrower_than_its_dtype_reaches_weighs_the_nearest_key(
    dtype, sigma, exclude_self, decay
):
    """0.5/σ² overflowed float32 below σ = 3.8e-20 (0 · inf: every output NaN), and in either
    dtype a key farther than the logit's reach went to -inf with the rest: a row without the
    sample itself as a key returned its fallback (the step NaN). Now the nearest key, as with
    a width just above the data's spacing; the step still rounds like the last row."""
    rng = np.random.default_rng(9)
    x = rng.normal(size=(60, 2)) * [1.0, 50.0]
    full = np.concatenate([np.full((5, 2), np.nan), x])
    E = delay_embedding(full, 2)
    kw = dict(exclude_self=exclude_self, decay=decay, fallback=full[5:] if exclude_self else None)
    with np.errstate(over="raise", invalid="raise"):  # no such warning either
        fast = attend_lags(E.astype(dtype), full.astype(dtype), (5, 65), 0, 4, sigma=sigma, **kw)
    want = attend_lags_reference(E, full, (5, 65), 0, 4, sigma=1e-3, **kw)
    np.testing.assert_allclose(fast[1:], want[1:], rtol=1e-6)  # row 0: its only key, itself
    one = attend_newest(
        full[-6:].astype(dtype),
        2,
        decay_logits(np.arange(4, -1, -1), decay, np.dtype(dtype)),
        sigma,
        exclude_self=exclude_self,
    )
    np.testing.assert_array_equal(one, fast[-1])


def test_a_float32_tau_filter_far_from_its_first_sample_keeps_its_time_steps():
    """The filters' times were rounded to float32 after taking off the first sample's: 1e5 s
    later a 10 ms step was 7.8 ms wide, and the whole-series filter drifted from float64
    (and from the per-sample step, which rounds its own differences). Now the differences
    are taken in float64 and rounded: float32 agrees with float64 to float32 rounding."""
    from tssdpa.signal.lagfilter import resolve_spec, run_causal, step_newest

    rng = np.random.default_rng(0)
    T = 400
    times = np.r_[0.0, 1e5 + np.cumsum(rng.uniform(0.008, 0.012, T - 1))]
    x = (np.sin(np.arange(T) / 10) + 0.3 * rng.normal(size=T))[:, None]
    ys = {}
    for dtype in (np.float64, np.float32):
        spec = resolve_spec(window=8, embedding=2, sigma=0.5, decay=None, tau=0.03,
                            causal=True, exclude_self=False, tol=1e-6, min_step=None,
                            dtype=dtype)  # fmt: skip
        state = np.full((spec.history + 1, 1), np.nan)
        ys[dtype], state, hist_times = run_causal(
            x[:-1], state, spec, times[:-1], np.full(spec.history, np.nan)
        )
        last, _ = step_newest(spec, (state, hist_times), x[-1], times[-1])
        whole, _, _ = run_causal(x, np.full_like(state, np.nan), spec, times,
                                 np.full(spec.history, np.nan))  # fmt: skip
        np.testing.assert_allclose(last, whole[-1], rtol=0, atol=1e-6)
    np.testing.assert_allclose(ys[np.float32], ys[np.float64], rtol=0, atol=2e-6)


@pytest.mark.parametrize(("dtype", "sigma"), [(np.float32, 1e-20), (np.float64, 1e-154)])
@pytest.mark.parametrize("lag_min", [0, -4])
@pytest.mark.parametrize("tau", [None, 2.0])
def test_a_channel_without_its_sample_under_too_narrow_a_kernel_takes_its_nearest_key(
    dtype, sigma, lag_min, tau
):
    """Where one channel misses its sample, its keys are the ones that have it; the row's
    nearest key (which had only the other channel) kept logit 0 and every key of this channel
    overflowed to -inf: NaN (filled from its neighbours by the filters, 1.6 off on unit data).
    Now each channel is weighed from its own nearest key, as with a width just above the
    data's spacing."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 2)) * [1.0, 10.0]
    x[20:23, 0] = np.nan
    full = np.concatenate([np.full((5, 2), np.nan), x, np.full((5, 2), np.nan)])
    E = delay_embedding(full, 2)
    times = np.r_[np.full(5, np.nan), np.cumsum(rng.uniform(0.5, 1.5, 60)), np.full(5, np.nan)]
    kw = dict(times=times if tau else None, tau=tau)
    with np.errstate(over="raise", invalid="raise"):
        fast = attend_lags(E.astype(dtype), full.astype(dtype), (5, 65), lag_min, 4,
                           sigma=sigma, **kw)  # fmt: skip
    want = attend_lags_reference(E, full, (5, 65), lag_min, 4, sigma=1e-3, **kw)
    np.testing.assert_allclose(fast[1:], want[1:], rtol=1e-6)


@pytest.mark.parametrize("causal", [True, False])
def test_the_truncated_iir_filter_is_within_tol_of_the_infinite_one_only_with_the_sample_itself(
    causal,
):
    """FilterSpec's docstring: within tol times the range when the sample itself is a key;
    with exclude_self a narrow kernel leaves little kept weight, and the bound tol / kept
    weight allows (and here reaches) far more."""
    from tssdpa.signal.lagfilter import resolve_spec, run_offline

    rng = np.random.default_rng(0)
    T = 600
    x = (np.sign(np.sin(np.arange(T) * 2 * np.pi / 150)) + 0.01 * rng.normal(size=T))[:, None]
    x[::7] += rng.normal(size=(len(x[::7]), 1)) * 0.5
    for exclude_self in (False, True):
        kw = dict(embedding=3, sigma=0.05, decay=0.9, tau=None, causal=causal, tol=1e-6,
                  min_step=None, dtype=np.float64, exclude_self=exclude_self)  # fmt: skip
        y_iir = run_offline(x, resolve_spec(window=None, **kw))
        err = np.abs(y_iir - run_offline(x, resolve_spec(window=T, **kw))).max()
        if exclude_self:
            assert err > 0.1
        else:
            assert err <= 1e-6 * np.ptp(x)


def test_row_dot_sums_a_strided_block_as_its_contiguous_rows():
    """Each row summed in one order whatever the block's memory layout: a column-ordered or
    strided block gave other bits than its rows taken alone."""
    from tssdpa.signal.local_polynomial import row_dot

    rng = np.random.default_rng(0)
    a = rng.normal(size=(40, 33)) * 10.0 ** rng.integers(-6, 6, (40, 33))
    u = rng.normal(size=33)
    want = np.array([row_dot(r[None].copy(), u)[0] for r in a])
    np.testing.assert_array_equal(row_dot(np.asfortranarray(a), u), want)
    np.testing.assert_array_equal(row_dot(np.hstack([a, a])[:, :33], u), want)
