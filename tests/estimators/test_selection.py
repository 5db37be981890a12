"""Hyperparameter selection: the significance-tested correction choice, grids, splits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tssdpa.estimators.noise_tails import HEAVY_TAILS, off_slopes, rms_off_slopes, tail_weights
from tssdpa.estimators.selection import (
    candidates,
    choose_correction,
    forecast_mse,
    held_message,
    heldout_mse,
    repeating_channels,
    resolution,
    sigma_candidates,
    sigma_grid,
    sure_mse,
    time_split,
)
from tssdpa.estimators.white_noise import _INTERPOLATORS, noise_level, noise_scale
from tssdpa.filters import ProjectionFilter, ProjectionForecaster


def choose_loop(resid, corrections, sigmas, z=2.0):
    """choose_correction column by column, candidate by candidate, on the finite rows only."""
    K = resid.shape[1]
    sig, alp = np.full(K, sigmas[0], dtype=float), np.zeros(K)
    for k in range(K):
        ok = np.isfinite(resid[:, k])
        r = resid[ok, k]
        best = np.sum(r**2)
        for s, c_all in zip(sigmas, corrections):
            c = np.nan_to_num(c_all[ok, k], nan=0.0)
            a = np.sum(r * c) / np.sum(c * c) if np.sum(c * c) > 0 else 0.0
            a = min(max(a, 0.0), 1.0)
            gain = r**2 - (r - a * c) ** 2
            err = np.sum((r - a * c) ** 2)
            se = np.std(gain, ddof=1) / np.sqrt(len(r))
            if err < best and gain.mean() > z * se:
                best, sig[k], alp[k] = err, s, a
    return sig, alp


def test_choose_correction_keeps_nothing_when_corrections_are_unrelated_noise():
    rng = np.random.default_rng(0)
    resid = rng.normal(size=(500, 6))
    corr = [rng.normal(scale=s, size=(500, 6)) for s in (0.1, 0.5, 1.0, 2.0, 5.0)]
    sig, alpha = choose_correction(resid, corr, [0.1, 0.2, 0.3, 0.4, 0.5])
    np.testing.assert_array_equal(alpha, np.zeros(6))
    np.testing.assert_array_equal(sig, np.full(6, 0.1))  # the first candidate by convention


def test_choose_correction_picks_the_sigma_whose_correction_explains_the_residual():
    rng = np.random.default_rng(1)
    resid = rng.normal(size=(400, 3))
    corr = [
        rng.normal(size=(400, 3)),  # unrelated
        resid + 0.01 * rng.normal(size=(400, 3)),  # the residual itself
        0.5 * resid + rng.normal(size=(400, 3)),  # related but noisy
    ]
    sig, alpha = choose_correction(resid, corr, [0.1, 0.7, 3.0])
    np.testing.assert_array_equal(sig, [0.7, 0.7, 0.7])
    np.testing.assert_allclose(alpha, 1.0, atol=0.01)


def test_choose_correction_alpha_is_the_clipped_least_squares_shrinkage():
    rng = np.random.default_rng(2)
    r = rng.normal(size=(300, 3))
    # column 0: c = 2r -> alpha 1/2 exactly; column 1: c = r/2 -> 2 clipped to 1;
    # column 2: c = -r -> negative, clipped to 0 and not kept
    c = np.column_stack([2.0 * r[:, 0], 0.5 * r[:, 1], -r[:, 2]])
    sig, alpha = choose_correction(r, [c], [1.5])
    np.testing.assert_allclose(alpha, [0.5, 1.0, 0.0], atol=1e-12)
    np.testing.assert_array_equal(sig, [1.5, 1.5, 1.5])


def test_choose_correction_ignores_nan_rows_of_the_residual():
    rng = np.random.default_rng(3)
    resid = rng.normal(size=(300, 2))
    corr = [0.6 * resid + 0.5 * rng.normal(size=(300, 2)), rng.normal(size=(300, 2))]
    nan_rows = rng.random(300) < 0.3
    with_nan = resid.copy()
    with_nan[nan_rows, 0] = np.nan  # only column 0 loses rows
    garbage = [c.copy() for c in corr]
    for c in garbage:
        c[nan_rows, 0] = 1e6  # whatever the correction says there must not matter
    garbage[1][nan_rows, 0] = np.nan
    sig, alpha = choose_correction(with_nan, garbage, [0.2, 0.9])
    keep = ~nan_rows
    s0, a0 = choose_correction(resid[keep, :1], [c[keep, :1] for c in corr], [0.2, 0.9])
    s1, a1 = choose_correction(resid[:, 1:], [c[:, 1:] for c in corr], [0.2, 0.9])
    np.testing.assert_array_equal(sig, [s0[0], s1[0]])
    np.testing.assert_allclose(alpha, [a0[0], a1[0]], rtol=1e-12)
    assert alpha[0] > 0.3 and alpha[1] > 0.3  # the test is not vacuous


def test_choose_correction_equals_a_column_by_column_reference():
    rng = np.random.default_rng(4)
    N, K = 200, 12
    resid = rng.normal(size=(N, K))
    resid[rng.random((N, K)) < 0.1] = np.nan
    # columns with a weak to strong relation to the residual: some kept, some not
    mix = np.linspace(0.0, 1.0, K)
    base = np.nan_to_num(resid)
    corr = [mix * base + s * rng.normal(size=(N, K)) for s in (0.3, 1.0, 3.0)]
    corr[1][rng.random((N, K)) < 0.05] = np.nan  # NaN corrections count as 0
    sigmas = [0.25, 0.5, 1.0]
    sig, alpha = choose_correction(resid, corr, sigmas)
    ref_sig, ref_alpha = choose_loop(resid, corr, sigmas)
    np.testing.assert_array_equal(sig, ref_sig)
    np.testing.assert_allclose(alpha, ref_alpha, rtol=1e-10, atol=1e-14)
    assert (alpha == 0).any() and (alpha > 0).any()


def test_choose_correction_needs_a_larger_gain_when_successive_errors_overlap():
    rng = np.random.default_rng(11)
    resid = rng.normal(size=(400, 1))
    corr = [0.3 * resid + rng.normal(size=(400, 1))]  # weakly informative correction
    sig, alpha = choose_correction(resid, corr, [1.0])
    assert alpha[0] > 0  # significant when the rows are independent
    sig, alpha = choose_correction(resid, corr, [1.0], overlap=np.array([25.0]))
    assert alpha[0] == 0  # 25 rows per independent error: no longer significant


def test_candidates_wraps_a_single_value_and_keeps_lists():
    assert candidates(3) == [3] and candidates(None) == [None]
    assert candidates([1, 2]) == [1, 2] and candidates(np.array([0.5])) == [0.5]


@pytest.mark.parametrize("make", [
    lambda v: ProjectionFilter(window=v),
    lambda v: ProjectionForecaster(embedding=v),
])  # fmt: skip
def test_a_candidate_array_that_is_not_1d_is_refused_naming_the_parameter(make):
    # np.array(3) (0-d) raised "len() of unsized object", naming nothing
    x = np.sin(np.arange(200) / 7)
    for value in (np.array(3), np.array([[3, 4]])):
        with pytest.raises(ValueError, match=r"(window|embedding) must be one value or a 1-D"):
            make(value).fit(x)
    with pytest.raises(ValueError, match=r"0-d array: pass its value, (window|embedding)=3$"):
        make(np.array(3)).fit(x)
    with pytest.raises(ValueError, match=r"(window|embedding) must be .* got a Series: pass"):
        make(pd.Series([3, 4])).fit(x)  # pandas' "truth value of a Series is ambiguous" before


def test_sigma_grid_and_candidates():
    grid = sigma_grid(2.0, -1, 1, 3)
    np.testing.assert_allclose(grid, [1.0, 2.0, 4.0])
    assert sigma_candidates(None, grid) == [1.0, 2.0, 4.0]
    assert sigma_candidates(0.3, grid) == [0.3]
    for bad in ([], [0.1, -1.0], "x", [[0.1]], np.inf):
        with pytest.raises(ValueError, match="sigma"):
            sigma_candidates(bad, grid)


def test_resolution_is_the_step_of_quantised_channels_and_tiny_for_continuous_ones():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3000, 3))
    x[:, 0] = np.round(x[:, 0] * 100) / 100  # two decimals, stored in binary floating point
    x[:, 1] = np.round(x[:, 1] / 0.25) * 0.25 + 1e6  # a quarter step far from zero
    x[::7, 0] = np.nan  # missing samples are ignored
    step = resolution(x)
    np.testing.assert_allclose(step[:2], [0.01, 0.25], rtol=1e-6)
    assert 0 < step[2] < 1e-4  # continuous: its smallest gap is about its range / T^2
    np.testing.assert_array_equal(resolution(np.array([[3], [7], [5]])), [2.0])  # integers
    # far from zero, a continuous channel's gaps are near the float spacing: no false step
    assert resolution(1e9 + 0.03 * rng.normal(size=(3000, 1)))[0] < 1e-4
    # a quantised channel after arithmetic (z-scored) keeps its step, rounding aside
    z = (np.round(rng.normal(size=(3000, 1)) * 7) / 7 * 3.3 - 0.123) / 1.7
    np.testing.assert_allclose(resolution(z), [3.3 / 7 / 1.7], rtol=1e-9)
    for no_step in ([[1.0], [1.0], [np.nan]], [[0.0], [0.0]], [[np.nan], [np.nan]]):
        np.testing.assert_array_equal(resolution(np.array(no_step)), [0.0])


def test_resolution_passes_over_jitter_about_a_grid_but_not_the_gaps_of_continuous_values():
    rng = np.random.default_rng(1)
    # a reading converted between units and rounded twice: grid points 0.22 apart, each a hair
    # (0.0005) either side, as ETTh2's oil temperature is recorded
    grid = np.round(np.cumsum(rng.normal(size=3000)) / 0.22) * 0.22
    jittered = grid + 0.0005 * rng.integers(0, 2, size=3000)
    np.testing.assert_allclose(resolution(jittered[:, None]), [0.2195], rtol=1e-6)
    # two interleaved grids (offsets 0 and 0.0975): the finer spacing is the step
    both = np.where(rng.random(3000) < 0.5, grid, grid + 0.0975)
    np.testing.assert_allclose(resolution(both[:, None]), [0.0975], rtol=1e-6)
    # a glitch (one sample far off) or a few levels held in turn: no grid, the smallest gap
    glitched = np.sin(np.arange(2000) / 16) + 0.2 * rng.normal(size=2000)
    glitched[700] = 1e4
    levels = np.repeat([20.0, 20.2, 25.0, 20.0], 50)
    for values in (glitched, levels, np.repeat(rng.normal(size=12), 20)):
        assert resolution(values[:, None])[0] == np.diff(np.unique(values)).min()
    # continuous values, however long or heavy-tailed, or held: no step far above their gaps
    held = np.repeat(rng.normal(size=750), 4)
    walk = np.cumsum(rng.normal(size=3000))
    for values in (
        rng.normal(size=3000),
        rng.standard_cauchy(3000),
        rng.uniform(size=50),
        held,
        walk,
    ):
        gaps = np.diff(np.unique(values))
        assert resolution(values[:, None])[0] == gaps.min()


def test_repeating_channels_are_held_or_plateau_readings_not_quantised_ones():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 6))
    x[:, 0] = np.repeat(x[::4, 0], 4)  # each reading held for 4 samples
    x[:, 1] = np.round(x[:, 1] / 0.5) * 0.5  # quantised: repeats, but on a coarse grid
    x[:, 3] = 2.0  # constant
    wave = 1.5 * np.sin(2 * np.pi * np.arange(2000) / 37)
    x[:, 4] = np.clip(wave + 0.3 * x[:, 4], -1.0, 1.0)  # clipped at its range
    x[:, 5] = np.where(np.sin(np.arange(2000) / 50) > 0, x[:, 5], 0.0)  # idle at exactly 0
    x[100:140, 0] = np.nan  # a gap: pairs with a missing sample are not counted
    found = repeating_channels(x)
    assert sorted(found) == [0, 4, 5]
    assert found[0] == (pytest.approx(0.75, abs=0.01), False)
    assert found[4][1] and found[5][1] and 0.25 < found[4][0] < 0.5
    said = held_message({0: found[0][0]}, names=["mag"])
    assert "'mag' repeats its previous value exactly at 75%" in said and "held for about 4" in said
    assert "NaN" in said
    assert repeating_channels(x[:1]) == {} and repeating_channels(np.full((5, 1), np.nan)) == {}
    flags = np.repeat(np.array([True, False] * 50), 3)[:, None]  # bool and unsigned dtypes
    assert repeating_channels(flags) == {} and resolution(flags.astype(np.uint8))[0] == 1.0
    counts = np.repeat(np.arange(100, dtype=np.uint16)[::-1], 3)[:, None]
    assert repeating_channels(counts) == {}  # integers on their grid, falling: no wrap-around


@pytest.mark.parametrize("kind", ["held", "clipped", "idle"])
def test_noise_level_of_repeated_readings_is_measured_on_the_samples_that_change(kind):
    rng = np.random.default_rng(1)
    t = np.arange(3000)
    noisy = np.sin(2 * np.pi * t / 37) + 0.3 * rng.normal(size=t.size)
    x = {
        "held": np.repeat(noisy[::3], 3),
        "clipped": np.clip(1.5 * np.sin(2 * np.pi * t / 37) + 0.3 * rng.normal(size=t.size), -1, 1),
        "idle": np.where(np.sin(t / 50) > 0, noisy, 0.0),
    }[kind]
    # the truth 0.3 (clipped: less near the limits, where the noise is cut); 0.02-0.10 before
    assert 0.2 < noise_level(x[:, None])[0] < 0.36


def test_noise_scale_recovers_white_noise_level():
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(20000) * 0.001) + 0.3 * rng.normal(size=20000)
    assert noise_scale(x[:, None]) == pytest.approx(0.3, rel=0.05)


def test_sure_is_unbiased_for_a_linear_smoother():
    # y = A x with a moving average: SURE's expectation is the true error against the clean
    rng = np.random.default_rng(1)
    n, s = 4000, 0.5
    clean = np.sin(np.arange(n) * 0.02)[:, None]
    noisy = clean + s * rng.normal(size=(n, 1))
    smooth = lambda a: np.convolve(a[:, 0], np.ones(9) / 9, mode="same")[:, None]  # noqa: E731
    probe = rng.choice([-1.0, 1.0], noisy.shape)
    eps = 1e-4
    y = smooth(noisy)
    est = sure_mse(noisy, y, smooth(noisy + eps * s * probe), np.array([s]), probe, eps)
    true = float(np.mean((y - clean) ** 2))
    assert est == pytest.approx(true, rel=0.1)


def test_heldout_and_forecast_scores_ignore_nan():
    y = np.array([[1.0], [2.0], [np.nan], [4.0]])
    assert heldout_mse(y, np.zeros((4, 1)), 1) == pytest.approx((4 + 16) / 2)
    pred = np.array([[2.0], [np.nan], [4.0], [9.0]])  # pred[t] predicts y[t + 1]
    assert forecast_mse(pred, y, 1) == pytest.approx(0.0)


def test_time_split_leaves_a_gap_of_one_window():
    a, b = time_split(1000, 50, 0.2)
    assert (a, b) == (750, 800)
    with pytest.raises(ValueError, match="too short"):
        time_split(100, 40, 0.2)
    with pytest.raises(ValueError, match="holdout"):
        time_split(1000, 50, 1.5)


@pytest.mark.parametrize("interpolator", [1, 2])  # the symmetric ones: 2 and 4 neighbours
def test_rms_off_slopes_of_white_noise_is_unbiased_by_the_choice_of_samples(interpolator):
    # the samples are chosen on statistics without v_t; under Gaussian noise they leave out
    # about 1% of the samples, too few to bias the measure
    offsets, weights = _INTERPOLATORS[interpolator]
    lo = max(offsets)
    gain = np.sqrt(1.0 + sum(w * w for w in weights))
    rng = np.random.default_rng(3)
    values = []
    for _ in range(300):
        v = rng.normal(size=2000)
        core = v[lo:-lo]
        pred = sum(w * v[lo + o : v.size - lo + o] for o, w in zip(offsets, weights))
        values.append(rms_off_slopes(v, core, pred, lo) / gain)
    assert np.mean(values) == pytest.approx(1.0, abs=0.01)
    v = rng.normal(size=400)  # too few samples to say anything of the tails
    assert np.isnan(rms_off_slopes(v, v[lo:-lo], v[lo:-lo], lo))


def test_noise_level_counts_heavy_tails_as_noise_not_only_their_core():
    rng = np.random.default_rng(4)
    t = np.arange(3000)
    clean = np.sin(2 * np.pi * t / 97)
    noise = 0.3 * rng.standard_t(3, t.size) / np.sqrt(3.0)  # standard deviation 0.3
    level = noise_level((clean + noise)[:, None])[0]
    core = 1.4826 * np.median(np.abs(noise - np.median(noise)))  # what a robust scale sees
    assert core < 0.75 * 0.3 and abs(level - 0.3) < abs(core - 0.3) / 2
    gaussian = noise_level((clean + 0.3 * rng.normal(size=t.size))[:, None])[0]
    assert gaussian == pytest.approx(0.3, rel=0.05)


@pytest.mark.parametrize("signal", ["jumps", "bursts", "peaks", "glitch"])
def test_noise_level_does_not_take_the_signal_s_jumps_bursts_or_peaks_for_noise_tails(signal):
    # the residuals' tails are the signal's: steep or sharply bent samples, left out; a lone
    # glitch (a causal fit keeps it) sits in one stretch of five
    rng = np.random.default_rng(5)
    t = np.arange(3000)
    clean = {
        "jumps": np.repeat(rng.normal(size=30), 100),
        "bursts": np.where((t % 600) < 150, 2.0 * np.sin(2 * np.pi * t / 7), 0.0),
        "peaks": 2.0 * np.exp(-(((t % 97) - 30) ** 2) / 4.0),  # 2 samples wide, every 97
        "glitch": np.where(t == 700, 30.0, 0.0),  # 300 times the noise
    }[signal]
    noisy = clean + 0.1 * rng.normal(size=t.size)
    r = noisy[1:-1] - 0.5 * (noisy[:-2] + noisy[2:])  # the two-neighbour interpolator's
    assert np.sqrt(np.mean((r - np.median(r)) ** 2) / 1.5) > HEAVY_TAILS * 0.1  # a plain RMS
    off = rms_off_slopes(noisy, noisy[1:-1], 0.5 * (noisy[:-2] + noisy[2:]), 1) / np.sqrt(1.5)
    assert off < HEAVY_TAILS * 0.1  # would not raise the level
    assert noise_level(noisy[:, None])[0] == pytest.approx(0.1, rel=0.08)


def test_heavy_tailed_noise_is_smoothed_better_than_plain_sure_does_at_its_true_level(capsys):
    # a level given is trusted as it is: plain SURE, and the local adaptation may run; the
    # estimate finds the tails, weighs SURE's divergence and does not adapt in time
    rng = np.random.default_rng(6)
    t = np.arange(1000)
    clean = (np.sin(2 * np.pi * t / 80) * (1 + (t > 500)))[:, None]  # a quiet and a busy half
    noisy = clean + 0.3 * rng.standard_t(3, (t.size, 1)) / np.sqrt(3.0)
    fits, errors = [], []
    # a small search, 6x quicker than the default's (the level is tested, not the search):
    # error ratio 0.61 (the default search's 0.60; seed 8: 0.68, 0.70), the same adaptations
    grid = dict(window=[8, 32, "all"], embedding=[1, 7], degree=[0, 2])
    for level in (None, float(np.std(noisy - clean))):
        f = ProjectionFilter(causal=False, noise_level=level, **grid).fit(noisy, verbose=True)
        fits.append(f)
        errors.append(float(np.sqrt(np.mean((np.asarray(f.filter(noisy)) - clean) ** 2))))
    assert errors[0] < 0.8 * errors[1]
    assert fits[0].local_ is None and fits[1].local_ is not None
    assert fits[0].heavy_tails_.tolist() == [True] and fits[1].heavy_tails_.tolist() == [False]
    said = capsys.readouterr().out
    assert said.count("heavy-tailed noise in channel(s) [0]") == 1  # the estimate's fit only


def test_a_fit_channel_by_channel_says_which_channels_noise_has_heavy_tails(capsys):
    rng = np.random.default_rng(6)
    t = np.arange(1000)
    clean = np.sin(2 * np.pi * t / 80)[:, None] * [1.0, 1.0]
    noise = np.column_stack([rng.normal(size=t.size), rng.standard_t(3, t.size) / np.sqrt(3)])
    quick = {"window": [16], "embedding": [1], "channel_independent": True}
    f = ProjectionFilter(causal=False, **quick).fit(clean + 0.3 * noise, verbose=True)
    assert f.heavy_tails_.tolist() == [False, True]
    assert capsys.readouterr().out.count("heavy-tailed noise in channel(s) [1]") == 1
    target = ProjectionFilter(causal=False, **quick).fit(clean + 0.3 * noise, target=clean)
    assert target.heavy_tails_ is None  # the target shows the noise: no level is estimated


def test_tail_weights_leave_a_sharp_pulses_flanks_at_the_noises_mean_share():
    # the pilot's residual at a pulse's flank is the pulse, not the noise: weighed by it, SURE
    # took a filter that keeps sharp pulses for one that keeps outliers
    rng = np.random.default_rng(8)
    t = np.arange(3000)
    clean = 5.0 * np.exp(-(((t % 50) - 25) ** 2) / 2.0)  # 2-3 samples wide, every 50
    noisy = clean + 0.1 * rng.standard_t(3, t.size) / np.sqrt(3.0)
    noisy[1010] += 3.0  # a noise outlier between two pulses
    w = tail_weights(noisy[:, None], np.array([True]))[:, 0]
    flanks = np.abs(np.gradient(clean)) > 0.5
    assert flanks.sum() > 200 and np.all(w[flanks] == 1.0)
    assert w[1010] > 100.0  # the outlier keeps its own squared noise
    assert np.mean(w[off_slopes(noisy)]) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", [9, 2])
def test_a_probe_scaled_by_the_root_of_the_tail_weights_gives_their_divergence_with_less_noise(
    seed,
):
    # what choose_settings does in a heavy-tailed channel: sum_t w_t dy_t/dx_t from one probe
    # c = sqrt(w) b, not from the +-1 probe b's terms weighed by w (an outlier's weight of a few
    # hundred multiplied the noise of its neighbours' terms). Both are unbiased; their exact
    # variances over the pairs t < j: sum (w_t J_tj + w_j J_jt)^2 and sum w_t w_j (J_tj + J_jt)^2
    rng = np.random.default_rng(seed)
    x = np.sin(np.arange(3000) * 0.02) + 0.1 * rng.standard_t(3, 3000) / np.sqrt(3.0)
    w = tail_weights(x[:, None], np.array([True]))[:, 0]

    def variances(offsets, coefficient, two_sided):
        weighed = scaled = 0.0
        for d in offsets:  # pairs (t - d, t): J_t,t-d = coefficient, J_t-d,t as two_sided
            a, b = w[d:], w[:-d]
            back = coefficient if two_sided else 0.0
            weighed += float(np.sum((a * coefficient + b * back) ** 2))
            scaled += float(np.sum(a * b * (coefficient + back) ** 2))
        return weighed, scaled

    for weighed, scaled in (variances(range(1, 5), 1 / 9, True),  # a centred moving average
                            variances(range(1, 9), 1 / 9, False)):  # a causal one  # fmt: skip
        assert scaled < 0.25 * weighed  # the spread at most half
    smooth = lambda v: np.convolve(v, np.ones(9) / 9, mode="same")  # noqa: E731
    exact = float(np.mean(w[4:-4])) / 9  # the centred average's diagonal, 1/9 inside
    probes = rng.choice([-1.0, 1.0], (200, x.size)) * np.sqrt(w)
    estimates = [float(np.mean((c * smooth(c))[4:-4])) for c in probes]
    assert abs(np.mean(estimates) - exact) < 4 * np.std(estimates) / np.sqrt(200)  # unbiased


def test_a_heavy_tailed_channels_probe_carries_its_tail_weights(monkeypatch):
    # the wiring of the test above: choose_settings scores the probed candidates of a heavy-
    # tailed channel with the probe scaled by sqrt(w), a Gaussian one's with the +-1 probe
    import tssdpa.filters.projection_fit as fitting

    probes = []
    real = fitting.sure_mse
    monkeypatch.setattr(fitting, "sure_mse", lambda *a, **k: probes.append(a[4]) or real(*a, **k))
    rng = np.random.default_rng(6)
    t = np.arange(1000)
    clean = np.sin(2 * np.pi * t / 80)[:, None] * [1.0, 1.0]
    noise = np.column_stack([rng.normal(size=t.size), rng.standard_t(3, t.size) / np.sqrt(3)])
    x = clean + 0.3 * noise
    quick = {"window": [16], "embedding": [1], "local_window": None, "channel_independent": False}
    f = ProjectionFilter(causal=False, **quick).fit(x)
    assert f.heavy_tails_.tolist() == [False, True]
    probed = [p for p in probes if p is not None]
    assert probed and all(np.array_equal(p, probed[0]) for p in probed)
    w = tail_weights(x, f.heavy_tails_)
    np.testing.assert_allclose(probed[0] ** 2, w)  # +-1 in channel 0, +-sqrt(w) in channel 1
    assert not np.all(w[:, 1] == 1.0)


def test_weighted_sure_tracks_the_error_of_a_filter_that_follows_heavy_tailed_outliers():
    # y keeps x where it is far from its neighbours' mean (an outlier), else smooths it: its
    # divergence is 1 exactly where the noise is large, which plain SURE counts at s^2
    rng = np.random.default_rng(7)
    n, s = 4000, 0.3
    clean = np.sin(np.arange(n) * 0.05)[:, None]

    def follow(a):
        smooth = np.convolve(a[:, 0], np.ones(9) / 9, mode="same")[:, None]
        return np.where(np.abs(a - smooth) > 3 * s, a, smooth)

    plain, weighted, true = [], [], []
    for _ in range(20):
        noisy = clean + s * rng.standard_t(3, (n, 1)) / np.sqrt(3.0)
        probe = rng.choice([-1.0, 1.0], noisy.shape)
        y, yp = follow(noisy), follow(noisy + 1e-4 * s * probe)
        w = tail_weights(noisy, np.array([True]))
        level = np.array([float(np.std(noisy - clean))])
        plain.append(sure_mse(noisy, y, yp, level, probe, 1e-4))
        weighted.append(sure_mse(noisy, y, yp, level, probe, 1e-4, weights=w))
        true.append(float(np.mean((y - clean) ** 2)))
    bias_plain = abs(np.mean(plain) - np.mean(true))
    bias_weighted = abs(np.mean(weighted) - np.mean(true))
    assert bias_weighted < 0.5 * bias_plain
    ones = tail_weights(noisy, np.array([False]))
    assert np.all(ones == 1.0)  # a channel with Gaussian tails: plain SURE
