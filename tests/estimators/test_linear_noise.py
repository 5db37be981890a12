"""The noise level of a linear signal from the floor of its spectrum
(tssdpa.estimators.linear_noise), and where noise_level uses it."""

import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import scipy.optimize
from scipy import signal
from scipy.optimize import minimize

from tssdpa.data.synthetic import make_signal
from tssdpa.estimators import linear_noise, white_noise, whittle
from tssdpa.estimators.linear_noise import linear_noise_level, neighbour_over_linear
from tssdpa.estimators.white_noise import noise_level
from tssdpa.estimators.whittle import arma_plus_noise_spectrum, fit_arma_plus_noise, periodogram


def ar_plus_noise(a, noise_sd, n=2000, seed=0):
    """(clean, noisy): a unit-variance AR process with coefficients ``a`` plus white noise."""
    rng = np.random.default_rng(seed)
    clean = signal.lfilter([1.0], np.r_[1.0, -np.asarray(a)], rng.normal(size=n + 500))[500:]
    clean = (clean - clean.mean()) / clean.std()
    return clean, clean + noise_sd * rng.normal(size=n)


def residual_bound(x):
    """noise_level without any spectral floor: the residual estimators' bound."""
    return noise_level(x[:, None], checked_floor=False)[0]


def default_level(x):
    return noise_level(x[:, None])[0]


def spectral_level(x):
    return noise_level(x[:, None], spectral=True)[0]


def test_the_spectrum_is_the_ar_filters_power_gain_times_q_plus_the_floor():
    w = np.linspace(0.01, np.pi, 50)
    a, q, s2 = np.array([1.2, -0.5]), 0.3, 0.05
    _, h = signal.freqz([1.0], np.r_[1.0, -a], worN=w)
    np.testing.assert_allclose(arma_plus_noise_spectrum(w, a, q, s2), s2 + q * np.abs(h) ** 2)
    b = [-0.7]  # an MA part: the numerator of the transfer function
    _, h = signal.freqz(np.r_[1.0, b], np.r_[1.0, -a], worN=w)
    np.testing.assert_allclose(arma_plus_noise_spectrum(w, a, q, s2, b), s2 + q * np.abs(h) ** 2)
    # a seasonal (1, 1)_12 factor: (1 - Φ B^12) in the denominator, (1 + Θ B^12) in the numerator
    phi, theta = 0.8, -0.4
    num = np.convolve(np.r_[1.0, b], np.r_[1.0, np.zeros(11), theta])
    den = np.convolve(np.r_[1.0, -a], np.r_[1.0, np.zeros(11), -phi])
    _, h = signal.freqz(num, den, worN=w)
    np.testing.assert_allclose(arma_plus_noise_spectrum(w, a, q, s2, b, (12, phi, theta)),
                               s2 + q * np.abs(h) ** 2)  # fmt: skip


def test_the_periodogram_averages_a_white_series_variance_and_its_bins_average_it():
    v = np.random.default_rng(0).normal(0.0, 2.0, size=4001)
    w, power, counts = periodogram(v)
    assert abs(power.mean() / 4.0 - 1.0) < 0.05 and (counts == 1).all()
    wb, pb, cb = periodogram(v, bins=7)
    parts = np.array_split(np.arange(len(w)), 7)
    np.testing.assert_allclose(pb, [power[p].mean() for p in parts])
    np.testing.assert_allclose(wb, [w[p].mean() for p in parts])
    assert cb.sum() == len(w)


def test_the_whittle_fit_recovers_an_ar2_plus_white_noise():
    rng = np.random.default_rng(1)
    a, q, s = np.array([1.3, -0.6]), 1.0, 1.5
    v = signal.lfilter([1.0], np.r_[1.0, -a], rng.normal(0, np.sqrt(q), 20000))
    v = v + s * rng.normal(size=v.size)
    w, power, counts = periodogram(v, bins=512)
    fit = fit_arma_plus_noise(w, power, 2, counts=counts)
    np.testing.assert_allclose(fit.a, a, atol=0.05)
    assert abs(fit.q / q - 1) < 0.2 and abs(fit.s2 / s**2 - 1) < 0.1


@pytest.mark.parametrize("unit", [1e-150, 1e100])
def test_the_whittle_fit_is_the_same_in_any_unit_and_never_overflows(unit):
    # powers near 1e200 (a series of 1e100: a glitch) overflowed in their squares, and the
    # fit raised numpy's RuntimeWarning to the user
    rng = np.random.default_rng(1)
    v = signal.lfilter([1.0], [1.0, -1.3, 0.6], rng.normal(size=4000)) + rng.normal(size=4000)
    w, power, counts = periodogram(v, bins=256)
    for ma in (False, True):
        fit = fit_arma_plus_noise(w, power, 2, counts=counts, ma=ma)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            in_unit = fit_arma_plus_noise(w, power * unit**2, 2, counts=counts, ma=ma)
        np.testing.assert_allclose(in_unit.a, fit.a, rtol=1e-6)
        np.testing.assert_allclose(in_unit.b, fit.b, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose([in_unit.q, in_unit.s2], [fit.q * unit**2, fit.s2 * unit**2],
                                   rtol=1e-6)  # fmt: skip
        assert in_unit.nll == pytest.approx(fit.nll + counts.sum() * math.log(unit**2), rel=1e-9)


def test_the_likelihood_gradient_matches_finite_differences():
    from scipy.optimize import approx_fprime

    _, x = ar_plus_noise([1.2, -0.5], 0.3)
    w, power, counts = periodogram(x, bins=64)
    seen = {}

    def spy(fun, x0, **options):  # capture the objective the fit hands the optimiser
        seen["f"] = fun
        return minimize(fun, x0, **options)

    cases = (
        (True, False, 0, [0.4, -0.3, -0.5, -1.0]),
        (False, False, 0, [0.2, 0.6, -0.2]),
        (True, True, 0, [0.4, -0.3, -0.6, -0.5, -1.0]),  # with an MA coefficient tanh(-0.6)
        (False, True, 0, [0.2, 0.6, 0.3, -0.2]),
        # a seasonal factor of period 5: Φ = tanh(1.2), Θ = tanh(-0.4)
        (True, False, 5, [0.4, -0.3, 1.2, -0.4, -0.5, -1.0]),
        (False, True, 5, [0.2, 0.6, 0.3, -0.8, 0.5, -0.2]),
    )
    for free_noise, ma, season, theta in cases:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(scipy.optimize, "minimize", spy)  # what whittle calls
            fit_arma_plus_noise(w, power, 2, s2=None if free_noise else 0.05, counts=counts,
                                ma=ma, season=season)  # fmt: skip
        f = seen["f"]
        theta = np.asarray(theta)
        numeric = approx_fprime(theta, lambda t, f=f: f(t)[0], 1e-7)
        np.testing.assert_allclose(f(theta)[1], numeric, rtol=1e-4, atol=1e-3)


def test_the_partial_autocorrelations_jacobian_matches_finite_differences():
    r = np.array([0.5, -0.3, 0.2])
    a, J = whittle._ar_from_partial(r)
    for j in range(3):
        step = np.zeros(3)
        step[j] = 1e-7
        np.testing.assert_allclose(
            J[:, j], (whittle._ar_from_partial(r + step)[0] - a) / 1e-7, atol=1e-5
        )
    # one order: x_t = r x_(t-1); two: the Yule-Walker solution of the partial correlations
    np.testing.assert_allclose(whittle._ar_from_partial(np.array([0.7]))[0], [0.7])
    np.testing.assert_allclose(
        whittle._ar_from_partial(np.array([0.5, 0.2]))[0], [0.5 - 0.2 * 0.5, 0.2]
    )


def test_the_likelihood_ratio_accepts_the_true_level_and_rejects_the_residual_bound():
    clean, x = ar_plus_noise([0.5], 10 ** (-10 / 20), n=4000)
    truth, bound = np.std(x - clean), residual_bound(x)
    w, power, counts = periodogram(x, bins=linear_noise.BINS)
    free = fit_arma_plus_noise(w, power, 1, counts=counts)
    at_truth = fit_arma_plus_noise(w, power, 1, s2=truth**2, counts=counts)
    at_bound = fit_arma_plus_noise(w, power, 1, s2=bound**2, counts=counts)
    assert bound > 1.8 * truth
    assert at_truth.nll - free.nll < linear_noise.LR_THRESHOLD < at_bound.nll - free.nll


def test_neighbour_forecasts_beat_linear_ones_on_a_chaotic_map_but_not_on_an_ar_process():
    logistic = make_signal("logistic", n=2000, seed=0)
    _, ar = ar_plus_noise([0.5], 0.1)
    assert neighbour_over_linear(logistic, 1) < 0.5
    assert neighbour_over_linear(ar, 1) > 1.0 and neighbour_over_linear(ar, 2) > 1.0


@pytest.mark.parametrize("a", [0.5, 0.9])
@pytest.mark.parametrize("snr_db", [10.0, 20.0])
def test_noise_level_of_a_rough_linear_signal_is_near_the_truth_not_its_innovations(a, snr_db):
    # the residuals' bound counts the innovations: 2.2x / 1.25x the truth at 10 dB, 6x / 2.6x
    # at 20 dB (coefficient 0.5 / 0.9)
    noise_sd = 10 ** (-snr_db / 20)
    ratios, bounds = [], []
    for seed in range(4):
        clean, noisy = ar_plus_noise([a], noise_sd, seed=seed)
        truth = np.std(noisy - clean)
        ratios.append(spectral_level(noisy) / truth)
        bounds.append(residual_bound(noisy) / truth)
    if snr_db == 10.0:
        assert max(ratios) < 1.5 and 0.7 < np.median(ratios) < 1.3
        assert all(r <= b for r, b in zip(ratios, bounds))
    else:  # barely identified at 20 dB (0.4-2.3x the truth): what it costs is tested below
        assert all(r < 0.5 * b for r, b in zip(ratios, bounds))


# seed 0 is the representative: the same fit on another draw of the noise, seeds 0-3 give error
# ratios 1.0013, 1.0000, 1.0020, 1.0011 (the bound 1.05), so seed 1 runs with -m slow only
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_the_spectral_option_leaves_a_rough_ar1_at_20_db_nearly_alone(seed):
    from tssdpa.filters import ProjectionFilter

    clean, noisy = ar_plus_noise([0.5], 0.1, seed=seed)
    y = ProjectionFilter(causal=False, noise_level="spectral").fit(noisy).filter(noisy)
    # the best linear smoother of a signal this rough is nearly the identity; with the bound
    # (the default, 6x the truth) the error is 5x the noisy series'
    assert np.mean((y - clean) ** 2) < 1.05 * np.mean((noisy - clean) ** 2)


def rough_ar2():
    """(clean, noisy): the benchmark's AR(2) (1.6, -0.8) at 20 dB, a seed of its own."""
    clean = make_signal("ar2", n=2000, seed=7)
    clean = (clean - clean.mean()) / clean.std()
    return clean, clean + 0.1 * np.random.default_rng(8).normal(size=clean.size)


def test_without_the_checked_floor_the_spectral_fit_is_not_even_run():
    _, noisy = rough_ar2()
    bound = residual_bound(noisy)
    assert default_level(noisy) < 0.9 * bound  # the default lowers this one (below)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(white_noise, "linear_noise_level", None)
        assert noise_level(noisy[:, None], checked_floor=False)[0] == bound


def test_the_default_lowers_the_bound_of_a_rough_ar2_to_the_floor_its_spectrum_identifies():
    # the bound counts the innovations (1.3-1.45x the truth on the benchmark's seeds)
    clean, noisy = rough_ar2()
    truth = np.std(noisy - clean)
    fit = linear_noise.whittle_floor(noisy, residual_bound(noisy))
    assert fit.identified and fit.rejected and fit.misfit_p >= linear_noise.MISFIT_ALPHA
    assert residual_bound(noisy) > 1.2 * truth
    assert 0.85 < default_level(noisy) / truth < 1.15


def test_where_the_floor_is_not_told_from_0_the_default_takes_the_top_of_its_interval():
    # an AR(1) of 0.5 at 20 dB: a floor of 0 fits as well as any, and the spectral option's
    # floor (its optimum, kept at a tenth of the bound) is a guess; the bound (6x the truth)
    # made SURE's output 4.6-4.8x as far from the signal as the noisy series
    from tssdpa.filters import ProjectionFilter

    clean, noisy = ar_plus_noise([0.5], 0.1)
    bound, truth = residual_bound(noisy), np.std(noisy - clean)
    fit = linear_noise.whittle_floor(noisy, bound)
    assert not fit.identified and fit.rejected
    level = default_level(noisy)
    assert max(fit.level, linear_noise.FLOOR * bound) < level < linear_noise.MIN_DROP * bound
    assert level > truth  # the top of the interval, not a guess below the truth
    errors = {}
    # a small search, 5x quicker than the default's (the level is tested, not the search): the
    # ratio is 0.17 here (0.20 with the default search), 0.05 on seeds 1 and 2
    grid = dict(window=[8, 32, "all"], embedding=[1, 7], degree=[0, 2])
    for name, given in (("default", None), ("bound", bound)):
        y = ProjectionFilter(causal=False, noise_level=given, **grid).fit(noisy).filter(noisy)
        errors[name] = np.mean((y - clean) ** 2)
    assert errors["default"] < 0.25 * errors["bound"]


def test_the_default_keeps_the_bound_where_the_spectrum_moves_between_stretches():
    rng = np.random.default_rng(0)
    clean = signal.lfilter([1.0], [1.0, -1.2, 0.5], rng.normal(size=2500))[500:]
    clean /= clean.std()
    noise = 0.1 * rng.normal(size=2000)
    noise[1000:] *= 3.0  # the noise grows halfway: no one floor fits both halves
    noisy = clean + noise
    bound = residual_bound(noisy)
    assert linear_noise.whittle_floor(noisy, bound).misfit_p < 1e-6
    assert spectral_level(noisy) < 0.8 * bound  # the option, unchecked, takes the floor
    assert default_level(noisy) == bound


def test_the_misfit_p_value_is_spread_out_where_the_spectrum_holds_and_tiny_where_it_does_not():
    a, s2 = np.array([1.2, -0.5]), 0.25
    ps = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        v = signal.lfilter([1.0], np.r_[1.0, -a], rng.normal(size=2500))[500:]
        ps.append(linear_noise.misfit_p(v + 0.5 * rng.normal(size=v.size), a, 1.0, s2))
    assert np.median(ps) > 0.25 and np.mean(np.array(ps) < 0.05) <= 0.2
    assert linear_noise.misfit_p(v, [0.3], 1.0, s2) < 1e-6  # another process's spectrum
    assert linear_noise.misfit_p(v, a, 1.0, 4.0 * s2) < 1e-6  # a floor 2x too high


def test_a_default_fit_of_a_rough_ar2_at_20_db_does_better_than_leaving_it_alone():
    from tssdpa.filters import ProjectionFilter

    # with the bound (1.3-1.45x the truth) SURE over-smooths: on the benchmark's own seed an
    # error above the noisy series' (1.05x on its test part); here 0.90x its squared error
    # with the bound given as the level, 0.70x by default
    clean, noisy = rough_ar2()
    y = ProjectionFilter(causal=False).fit(noisy).filter(noisy)
    assert np.mean((y - clean) ** 2) < 0.8 * np.mean((noisy - clean) ** 2)


@pytest.mark.data("imu/xio-fusion/sensor_data.csv.gz")
def test_the_default_keeps_the_bound_on_a_recording_where_the_spectral_option_fails():
    # the fusion recording's gyroscope Y, samples 0-1,500 at 20 dB: the spectral option's
    # floor is a tenth of the noise added (which the recording's own noise only adds to)
    from tssdpa.data import add_noise, load_imu

    df = load_imu("imu_fusion")
    col = next(c for c in df.columns if c.startswith("Gyroscope Y"))
    x = df[col].to_numpy(dtype=np.float64)[:1500]
    x = (x - x.mean()) / x.std()
    noisy = add_noise(x, "gaussian", 20.0, seed=0)
    truth = np.std(noisy - x)
    assert spectral_level(noisy) < 0.2 * truth
    assert linear_noise.whittle_floor(noisy, residual_bound(noisy)).misfit_p < 1e-6
    assert default_level(noisy) == residual_bound(noisy)


def test_at_0_db_the_bound_is_kept():
    _, noisy = ar_plus_noise([0.5], 1.0)
    assert spectral_level(noisy) == residual_bound(noisy)


@pytest.mark.parametrize("name, opts", [("lorenz", {"dt": 0.1}), ("logistic", {}), ("henon", {})])
@pytest.mark.parametrize("snr_db", [10.0, 20.0])
def test_nonlinear_signals_keep_the_residual_estimate(name, opts, snr_db):
    # the spectrum of a coarsely sampled Lorenz flow fits an AR(p) plus a floor far below its
    # noise level: the neighbour forecasts must keep it from being used
    clean = np.asarray(make_signal(name, n=2000, seed=1, **opts), dtype=float)
    clean = (clean - clean.mean()) / clean.std()
    noisy = clean + 10 ** (-snr_db / 20) * np.random.default_rng(2).normal(size=clean.size)
    assert spectral_level(noisy) == residual_bound(noisy)


def test_the_level_never_exceeds_the_bound_nor_falls_below_a_tenth_of_it():
    for seed in range(6):
        _, noisy = ar_plus_noise([0.5], 0.01, seed=seed)  # 40 dB: the floor is unidentified
        bound = residual_bound(noisy)
        level = spectral_level(noisy)
        assert linear_noise.FLOOR * bound <= level <= bound


def test_a_series_with_gaps_is_measured_on_its_longest_stretch_without_nan():
    v = np.arange(20.0)
    v[[3, 4, 12]] = np.nan
    np.testing.assert_array_equal(white_noise._longest_finite_run(v), np.arange(5.0, 12.0))
    assert white_noise._longest_finite_run(np.full(4, np.nan)).size == 0
    clean, noisy = ar_plus_noise([0.9], 0.1, n=3000)
    gappy = noisy.copy()
    gappy[200:210] = np.nan
    assert spectral_level(gappy) == pytest.approx(
        linear_noise_level(noisy[210:], residual_bound(gappy)), rel=1e-12
    )


@pytest.mark.data("imu/xio-fusion/sensor_data.csv.gz")
def test_the_fit_stays_finite_on_a_recorded_accelerometer_that_overflowed_it():
    # the accelerometer Z of the fusion recording at 20 dB, as the comparison harness builds
    # it: an unbounded line search once took exp() of a variance parameter past 1e308
    from tssdpa.data.tasks import denoise_tasks

    tasks = denoise_tasks("imu_fusion", seeds=(0,), quick=True)  # the noise seeds by position
    (task,) = [t for t in tasks if t.noise == "gaussian" and t.snr_db == 20.0]
    start, stop = task.split.bounds("train")
    v = task.noisy[start:stop][:4000, 5]
    for bound in (residual_bound(v), 0.08588118145575946):  # the second overflowed it
        level = linear_noise_level(v, bound)
        assert linear_noise.FLOOR * bound <= level <= bound


def test_a_series_met_before_gets_its_answer_again_without_the_fits(monkeypatch):
    monkeypatch.setattr(linear_noise, "_ANSWERS", OrderedDict())  # none met before
    _, noisy = rough_ar2()
    bound = residual_bound(noisy)
    first = linear_noise_level(noisy, bound)
    monkeypatch.setattr(linear_noise, "_whittle_fits", None)  # any fit now fails
    assert linear_noise_level(noisy.copy(), bound) == first
    changed = noisy.copy()
    changed[0] += 1e-9  # another series: fitted again
    with pytest.raises(TypeError):
        linear_noise_level(changed, bound)
    with pytest.raises(TypeError):
        linear_noise_level(noisy, bound, strict=False)  # another rule


@pytest.mark.parametrize("seed", [0, 1])
def test_a_sampled_oscillator_s_moving_average_part_is_not_taken_for_noise(seed):
    # an ARMA(2, 1) (a linear process of continuous time sampled at a fixed step has an MA
    # part) at 20 dB: BIC picks the ARMA(2, 1) plus noise, and the level comes down from the
    # bound (3x the truth)
    rng = np.random.default_rng(seed)
    clean = signal.lfilter([1.0, -0.5], [1.0, -1.5, 0.7], rng.normal(size=3500))[500:]
    clean = (clean - clean.mean()) / clean.std()
    noisy = clean + 0.1 * rng.normal(size=clean.size)
    bound, truth = residual_bound(noisy), np.std(noisy - clean)
    (_, order, free, _), *seasonal = linear_noise._whittle_fits(noisy, bound)
    assert not seasonal and order == 2 and len(free.b) == 1 and -0.7 < free.b[0] < -0.3
    assert bound > 2.5 * truth and default_level(noisy) < 0.75 * bound


def test_the_interval_top_is_taken_only_where_the_bound_leaves_the_signal_most_of_the_variance(
    monkeypatch,
):
    # at 0 dB a drowned nonlinear signal passes for linear and its limit can fall below the
    # truth (a pulse train: 0.66, an error 1.76x the bound's): the limit needs the bound below
    # LIMIT_BOUND_SHARE of the variance; here that share is set either side of this series'
    _, noisy = ar_plus_noise([0.5], 0.1)
    bound = residual_bound(noisy)
    share = bound**2 / np.var(noisy)
    for limit_share, takes_it in ((0.99 * share, False), (1.01 * share, True)):
        monkeypatch.setattr(linear_noise, "LIMIT_BOUND_SHARE", limit_share)
        linear_noise._ANSWERS.clear()  # answers are kept by series and bound, not the rule
        level = default_level(noisy)
        assert (level < linear_noise.MIN_DROP * bound) if takes_it else level == bound
    linear_noise._ANSWERS.clear()


def test_a_nearly_white_rough_signal_at_20_db_is_under_the_gate():
    # an AR(1) of 0.5 at 20 dB whose bound (6.4x the truth) claims 41% of the variance:
    # experiments/noise_level_probe.py's seed 2, where a gate at 40% kept the bound
    from tssdpa.data import add_noise

    z = signal.lfilter([1.0], [1.0, -0.5], np.random.default_rng(2).normal(size=2000))
    z = (z - z[:1200].mean()) / z[:1200].std()
    noisy = add_noise(z, "gaussian", 20.0, seed=2002)
    bound, truth = residual_bound(noisy), np.std(noisy - z)
    assert 0.4 < bound**2 / np.var(noisy) < linear_noise.LIMIT_BOUND_SHARE
    assert truth < default_level(noisy) < 0.5 * bound


def seasonal_arma_plus_noise(snr_db, n=2000, seed=0):
    """(clean, noisy): the fourth unseen suite's (1 - 0.6B)(1 - 0.9B^24) x = (1 - 0.5B^24) e,
    unit variance, plus white noise at ``snr_db``."""
    rng = np.random.default_rng(seed)
    num = np.r_[1.0, np.zeros(23), -0.5]
    den = np.convolve([1.0, -0.6], np.r_[1.0, np.zeros(23), -0.9])
    clean = signal.lfilter(num, den, rng.normal(size=n + 2000))[2000:]
    clean = (clean - clean.mean()) / clean.std()
    return clean, clean + 10 ** (-snr_db / 20) * rng.normal(size=n)


def test_the_period_is_the_autocorrelations_peak_past_its_first_minimum():
    clean, noisy = seasonal_arma_plus_noise(10.0)
    assert whittle.seasonal_period(clean) == 24
    assert whittle.seasonal_period(noisy) == 24
    # a smooth series' largest autocorrelation past lag 2 is lag 3: no period
    assert whittle.seasonal_period(ar_plus_noise([0.95], 0.0)[0]) is None
    assert whittle.seasonal_period(np.random.default_rng(0).normal(size=2000)) is None
    assert whittle.seasonal_period(np.zeros(500)) is None
    assert whittle.seasonal_period(np.zeros(0)) is None
    # a one-lag rise of a smooth series' autocorrelation is no minimum (it gave "period" 3)
    t = np.arange(2000)
    smooth = np.sin(2 * np.pi * t / 499) + 0.1 * np.random.default_rng(0).normal(size=t.size)
    assert whittle.seasonal_period(smooth) is None
    assert whittle.seasonal_period(1e160 * noisy) == 24  # no overflow


@pytest.mark.parametrize("seed", [0, 1])
def test_a_seasonal_arma_gets_its_noise_level_from_the_seasonal_spectrum(seed):
    # no AR(p) / ARMA(p, 1) spectrum follows the peaks at the period's harmonics: they took a
    # floor near the bound, 2x the truth at 10 dB, and SURE smoothed the signal away
    clean, noisy = seasonal_arma_plus_noise(10.0, seed=seed)
    true = np.std(noisy - clean)
    plain, (spectrum, _, free, _), *_ = linear_noise._whittle_fits(noisy, residual_bound(noisy))
    assert plain[2].seasonal == () and len(plain[0][0]) == linear_noise.BINS
    assert free.seasonal[0] == 24 and len(spectrum[0]) == (noisy.size - 1) // 2  # unbinned
    assert abs(free.seasonal[1] - 0.9) < 0.1 and abs(free.seasonal[2] + 0.5) < 0.2
    assert residual_bound(noisy) > 1.5 * true
    assert 0.8 < default_level(noisy) / true < 1.25


def test_a_series_with_a_period_the_plain_spectrum_fits_keeps_the_binned_plain_fit():
    # an AR(2) of pseudo-period 14 has a period; the seasonal factor does not pay its BIC
    _, noisy = ar_plus_noise([1.6, -0.8], 0.3, seed=2)
    assert whittle.seasonal_period(noisy) is not None
    ((spectrum, _, free, _),) = linear_noise._whittle_fits(noisy, residual_bound(noisy))
    assert free.seasonal == () and len(spectrum[0]) == linear_noise.BINS


def test_the_seasonal_factors_peaks_stay_half_a_frequency_spacing_wide():
    # a line spectrum (a sine of period 50) sampled at exactly the harmonics of 100: unbounded,
    # the factor fitted spikes at those single frequencies (Φ and Θ next to ±1)
    rng = np.random.default_rng(0)
    t = np.arange(2000)
    v = np.sin(2 * np.pi * t / 50) + 0.3 * rng.normal(size=t.size)
    w, power, counts = periodogram(v)
    limit = whittle.seasonal_limit(100, w)
    assert limit == pytest.approx(1.0 - 100 * np.pi / 2000)
    fit = fit_arma_plus_noise(w, power, 2, counts=counts, season=100)
    assert max(abs(fit.seasonal[1]), abs(fit.seasonal[2])) <= limit + 1e-12
    # fewer than about 6 cycles: no resolvable factor, and no period looked for there
    assert whittle.seasonal_limit(400, w) < whittle.MIN_SEASONAL_LIMIT
    assert whittle.seasonal_limit(5000, w) == 0.0  # never negative: a bound for tanh
    # a sine of period 400 still rising at n / (2 pi) = 318 has no peak there
    assert whittle.seasonal_period(np.sin(2 * np.pi * t / 400)) is None
    assert whittle.seasonal_period(np.sin(2 * np.pi * t / 350)) is None


def test_the_misfit_test_passes_a_true_seasonal_spectrum_as_often_as_its_level_says():
    # its peaks are narrower than a quarter's frequency spacing: the plain periodogram over
    # the spectrum at single frequencies rejected far more such series than 1% at 1%
    num = np.r_[1.0, np.zeros(23), -0.5]
    den = np.convolve([1.0, -0.6], np.r_[1.0, np.zeros(23), -0.9])
    factor = (24, 0.9, -0.5)
    ps = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        x = signal.lfilter(num, den, rng.normal(size=6000))[2000:] + 0.5 * rng.normal(size=4000)
        ps.append(linear_noise.misfit_p(x, [0.6], 1.0, 0.25, (), factor))
    assert sum(p < 0.01 for p in ps) <= 1 and np.median(ps) > 0.1
    assert linear_noise.misfit_p(x, [0.6], 1.0, 0.25, (), (24, 0.6, -0.5)) < 1e-6  # wrong Φ


@pytest.mark.data("ett/ETTh1.csv.gz")
def test_the_seasonal_and_line_free_models_may_lower_the_level_but_never_raise_it():
    # ETTh1 MULL, hours 1,500-3,000, at 20 dB: the seasonal spectrum wins BIC but fails the
    # rule's checks (its answer the bound, 4.4x the noise added), where the plain model's floor
    # passes them (2.6x); the BIC winner's answer made the error against the recording 2.2x
    # worse (checked_floor_probe.py --set recordings --without-seasonal)
    from tssdpa.data import add_noise, load_ett

    x = load_ett("ETTh1")["MULL"].to_numpy(dtype=np.float64)[1500:3000]
    noisy = add_noise((x - x.mean()) / x.std(), "gaussian", 20.0, seed=1)
    bound = residual_bound(noisy)
    fits = linear_noise._whittle_fits(noisy, bound)
    assert fits[1][2].seasonal[0] == 24  # (the third: the plain model without the daily lines)
    plain, seasonal, without_lines = (linear_noise._model_level(noisy, bound, True, *f)
                                      for f in fits)  # fmt: skip
    assert seasonal > 1.5 * plain
    # nor does the plain model without the daily lines: its spectrum ends further from this
    # recording's (the quarters' misfit), and its answer is the bound
    assert without_lines == bound > plain
    assert default_level(noisy) == plain
    # and whittle_floor describes the model whose answer that is
    assert linear_noise.whittle_floor(noisy, bound).seasonal == ()


def test_the_misfit_test_refuses_a_series_too_short_for_its_runs():
    # an empty run gave a p-value of NaN, which passed the rule's p < MISFIT_ALPHA
    v = np.random.default_rng(0).normal(size=100)
    with pytest.raises(ValueError, match="too short for the misfit test"):
        linear_noise.misfit_p(v, [0.5], 1.0, 0.1, (), (12, 0.5, 0.0))
    assert 0.0 <= linear_noise.misfit_p(v, [0.5], 1.0, 0.1) <= 1.0  # 12 values a stretch


def seasonal_ar_plus_noise(snr_db, n=2000, seed=0):
    """(clean, noisy): a unit-variance SAR(1)_12 of 0.8 (no correlation between neighbouring
    samples) plus white noise at ``snr_db``."""
    rng = np.random.default_rng(seed)
    clean = signal.lfilter([1.0], np.r_[1.0, np.zeros(11), -0.8], rng.normal(size=n + 2000))
    clean = clean[2000:] / clean[2000:].std()
    return clean, clean + 10 ** (-snr_db / 20) * rng.normal(size=n)


def test_a_seasonal_spectrum_lowers_a_bound_that_calls_most_of_the_variance_noise(monkeypatch):
    # neighbouring samples say nothing of a SAR(1)_12: the residual bound (9x the truth at
    # 20 dB) claims most of the variance, where the plain spectrum is kept out (a nearly white
    # series' spectrum says nothing of the split); a period is no white series
    clean, noisy = seasonal_ar_plus_noise(20.0)
    bound, truth = residual_bound(noisy), np.std(noisy - clean)
    assert bound**2 / np.var(noisy) > linear_noise.BOUND_SHARE
    fitted = []  # which models the rule fits: the seasonal one alone
    whittle_fits = linear_noise._whittle_fits

    def recorded(v, upper, plain=True):
        fitted.append(plain)
        return whittle_fits(v, upper, plain)

    monkeypatch.setattr(linear_noise, "_whittle_fits", recorded)
    try:
        linear_noise._ANSWERS.clear()  # answers are kept by series and bound, not the rule
        assert truth < default_level(noisy) < 0.6 * bound
        assert fitted == [False]
        # with the plain model's checks the seasonal one keeps the bound too
        monkeypatch.setattr(linear_noise, "SEASONAL_BOUND_SHARE", linear_noise.BOUND_SHARE)
        linear_noise._ANSWERS.clear()
        assert default_level(noisy) == bound
    finally:
        linear_noise._ANSWERS.clear()


def test_a_bound_that_calls_most_of_the_variance_noise_is_kept_without_a_fit_where_no_period(
    monkeypatch,
):
    _, noisy = ar_plus_noise([0.5], 1.0)  # 0 dB
    assert whittle.seasonal_period(noisy) is None
    monkeypatch.setattr(linear_noise, "_whittle_fits", None)  # any fit now fails
    try:
        linear_noise._ANSWERS.clear()
        assert default_level(noisy) == residual_bound(noisy)
    finally:
        linear_noise._ANSWERS.clear()


def drowned_pattern(period=23, n=2000):
    """(clean, noisy): a random pattern of ``period`` samples repeated exactly, plus white noise
    of its variance (0 dB)."""
    clean = np.tile(np.random.default_rng(0).normal(size=period), n // period + 1)[:n]
    clean = (clean - clean.mean()) / clean.std()
    return clean, clean + np.random.default_rng(100).normal(size=n)


def test_a_drowned_repeating_pattern_keeps_its_bound_though_its_period_is_found():
    # the seasonal model is not held back by the bound's share of the variance (0.73 here), but
    # its floor, unidentified, may not be taken by the spectral option (far below the truth),
    # and the default's interval top stays above a quarter of the variance
    clean, noisy = drowned_pattern()
    bound = residual_bound(noisy)
    assert whittle.seasonal_period(noisy) is not None
    assert bound**2 / np.var(noisy) > linear_noise.BOUND_SHARE
    assert bound < 1.3 * np.std(noisy - clean)
    assert spectral_level(noisy) == bound
    assert default_level(noisy) == bound
