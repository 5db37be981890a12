"""Classical baselines: interface contract, correctness against scipy/statsmodels, validation."""

import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import signal

from tssdpa import baselines as B

DENOISERS = [
    B.IdentityFilter(),
    B.ButterworthFilter(0.2, 2),
    B.ButterworthFilter(0.1, 4, zero_phase=True),
    B.SavitzkyGolayFilter(11, 2),
    B.SavitzkyGolayFilter(11, 2, zero_phase=False),
    B.ScipyWienerFilter(9),
    B.MedianFilter(5),
    B.MedianFilter(5, causal=True),
    B.MovingAverageFilter(4),
    B.WienerFIRFilter(8),
    B.WienerFIRFilter(9, causal=False),
    B.KalmanSmoother(),
    B.KalmanSmoother("local linear trend", smoother=True),
    B.WaveletDenoiser(),
]
FORECASTERS = [
    B.NaiveForecaster(),
    B.SeasonalNaiveForecaster(12),
    B.AutoRegForecaster(3),
    B.ARIMAForecaster((1, 0, 0), trend="c"),
    B.ETSForecaster(trend=True, damped_trend=True),
    B.UnobservedComponentsForecaster(),
    B.DLinearForecaster(lookback=24, horizon=6, moving_average=5),
]


@pytest.fixture(scope="module")
def series():
    rng = np.random.default_rng(0)
    t = np.arange(400)
    clean = np.column_stack([np.sin(2 * np.pi * t / 100), np.cos(2 * np.pi * t / 160)])
    return clean, clean + 0.3 * rng.standard_normal(clean.shape)


@pytest.mark.parametrize("f", DENOISERS, ids=lambda f: repr(f)[:40])
def test_denoiser_contract(f, series):
    clean, noisy = series
    before = noisy.copy()
    f = f.clone()  # fresh copy
    assert f.fit(noisy[:200], target=clean[:200]) is f
    y = f.filter(noisy)
    assert y.shape == noisy.shape and np.all(np.isfinite(y))
    np.testing.assert_array_equal(noisy, before)  # input never mutated
    assert isinstance(f.causal, bool) and isinstance(f.get_params(), dict)
    # 1-D, pandas and torch inputs come back in kind; a 1-D series is one channel, so a
    # filter fitted per channel takes it only when fitted on one channel
    one = f.clone().fit(noisy[:200, 0], target=clean[:200, 0])
    y1 = one.filter(noisy[:, 0])
    assert y1.shape == (400,)
    np.testing.assert_allclose(y1, y[:, 0], atol=1e-8)
    ys = one.filter(pd.Series(noisy[:, 0], name="a"))
    assert isinstance(ys, pd.Series) and ys.name == "a"
    yt = f.filter(torch.tensor(noisy, dtype=torch.float32))
    assert isinstance(yt, torch.Tensor) and yt.dtype == torch.float32 and yt.shape == (400, 2)


@pytest.mark.parametrize("f", DENOISERS, ids=lambda f: repr(f)[:40])
def test_denoiser_causality(f, series):
    """A causal filter's output up to t must not change when the future changes."""
    _, noisy = series
    f = f.clone().fit(noisy[:200], target=series[0][:200])
    a = f.filter(noisy[:300])
    b = noisy[:300].copy()
    b[250:] += 5.0
    bb = f.filter(b)
    same = np.allclose(a[:250], bb[:250], atol=1e-9)
    assert same == f.causal or (not f.causal and same)


@pytest.mark.parametrize("f", DENOISERS[1:], ids=lambda f: repr(f)[:40])
def test_denoisers_reduce_noise(f, series):
    clean, noisy = series
    f = f.clone().fit(noisy[:200], target=clean[:200])
    y = f.filter(noisy)
    assert np.mean((y - clean) ** 2) < np.mean((noisy - clean) ** 2)


def test_butterworth_matches_scipy(series):
    _, x = series
    sos = signal.butter(3, 0.2, output="sos")
    np.testing.assert_allclose(
        B.ButterworthFilter(0.2, 3, zero_phase=True).filter(x),
        signal.sosfiltfilt(sos, x, axis=0),
        atol=1e-10,
    )
    zi = signal.sosfilt_zi(sos)[:, :, None] * x[0]
    ref, _ = signal.sosfilt(sos, x, axis=0, zi=zi)
    np.testing.assert_allclose(B.ButterworthFilter(0.2, 3).filter(x), ref, atol=1e-10)


@pytest.mark.parametrize("order, shortest", [(2, 10), (3, 13), (4, 16)])
def test_a_zero_phase_butterworth_refuses_a_series_too_short_for_its_padding_naming_the_length(
    order, shortest
):
    # this test pinned padding a series too short for scipy with its length less one: the
    # slow filter's start-up transient was then the output (order 4, cutoff 0.1: a 2-sample
    # ramp 0, 1 gave -0.98, -0.98, a 5-sample one 0..4 gave -1.22..-0.70); scipy's rule holds
    x = np.sin(np.arange(shortest) / 3.0)
    sos = signal.butter(order, 0.1, output="sos")
    f = B.ButterworthFilter(0.1, order, zero_phase=True)
    for n in (2, shortest - 1):
        says = f"x has {n} samples: .* order {order} needs more than its edge padding of "
        with pytest.raises(ValueError, match=says + str(shortest - 1)):
            f.filter(x[:n])
        with pytest.raises(ValueError, match="padlen"):
            signal.sosfiltfilt(sos, x[:n])
    np.testing.assert_allclose(f.filter(x), signal.sosfiltfilt(sos, x))  # scipy's own
    assert np.isfinite(B.ButterworthFilter(0.1, order).filter(x[:2])).all()  # causal: defined


def test_savgol_causal_fits_polynomial_exactly():
    t = np.arange(100, dtype=float)
    x = 0.5 * t**2 - 3 * t + 1
    y = B.SavitzkyGolayFilter(7, 2, zero_phase=False).filter(x)
    np.testing.assert_allclose(y[10:], x[10:], atol=1e-6)


def test_the_causal_savgol_fits_its_first_windows_with_the_first_sample_repeated_before_it():
    x = np.cos(np.arange(30) / 3.0) + np.arange(30) / 10
    y = B.SavitzkyGolayFilter(7, 2, zero_phase=False).filter(x)
    padded = np.r_[np.full(6, x[0]), x]
    for t in range(10):
        fit = np.polynomial.polynomial.Polynomial.fit(np.arange(7), padded[t : t + 7], 2)
        assert y[t] == pytest.approx(fit(6), abs=1e-10)


def test_centred_sliding_windows_repeat_the_ends_and_an_even_one_reaches_further_ahead():
    from scipy import ndimage

    x = 5 + np.cos(np.arange(40) / 2.0)  # falling at the start: zeros there change the median
    median = B.MedianFilter(5).filter(x)
    np.testing.assert_array_equal(median, ndimage.median_filter(x, 5, mode="nearest"))
    assert median[0] != signal.medfilt(x, 5)[0]  # scipy's medfilt pads with zeros
    impulse = np.zeros(12)
    impulse[6] = 4.0
    # window 4 at t: t-1 .. t+2, so the impulse at 6 reaches t = 4 .. 7
    np.testing.assert_allclose(  # up to the rounding of the running sum
        B.MovingAverageFilter(4, causal=False).filter(impulse),
        np.r_[[0] * 4, [1] * 4, [0] * 4],
        rtol=0,
        atol=1e-12,
    )
    # a step at 6: t = 5 is the first window (4 .. 7) holding two of its samples (ndimage: 6)
    step = np.r_[[0.0] * 6, [4.0] * 6]
    assert np.flatnonzero(B.MedianFilter(4).filter(step))[0] == 5


def test_wiener_fir_recovers_known_filter():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(3000)
    h = np.array([0.5, 0.3, -0.2, 0.1])
    s = signal.lfilter(h, [1.0], x)
    f = B.WienerFIRFilter(4, ridge=0.0).fit(x, target=s)
    np.testing.assert_allclose(f.coef_[0], h, atol=1e-3)  # edge padding differs


def test_wiener_fir_ignores_missing_target_samples_instead_of_fitting_nan_taps():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(3000)
    h = np.array([0.5, 0.3, -0.2, 0.1])
    s = signal.lfilter(h, [1.0], x)
    gappy = s.copy()
    gappy[[10, 500, 501, 2000]] = np.nan
    f = B.WienerFIRFilter(4, ridge=0.0).fit(x, target=gappy)
    np.testing.assert_allclose(f.coef_[0], h, atol=1e-3)
    assert np.isfinite(f.filter(x)).all()
    with pytest.raises(ValueError, match="target channel 0 has 3 finite samples"):
        B.WienerFIRFilter(4).fit(x[:10], target=np.r_[s[:3], np.full(7, np.nan)])


def test_the_wiener_fir_ridge_penalises_the_mean_squared_error_and_even_centred_windows_add_a_tap():
    rng = np.random.default_rng(3)
    s = np.sin(np.arange(300) / 7)
    x = s + 0.5 * rng.standard_normal(300)
    f = B.WienerFIRFilter(6, ridge=0.1).fit(x, target=s)
    # row t holds x[t], ..., x[t-5], the series' first value repeated before it
    X = np.stack([np.r_[np.full(k, x[0]), x[: 300 - k]] for k in range(6)], axis=1)
    Xc, sc = X - X.mean(0), s - s.mean()
    h = np.linalg.solve(Xc.T @ Xc / 300 + 0.1 * np.eye(6), Xc.T @ sc / 300)  # (1/n) sum + ridge
    np.testing.assert_allclose(f.coef_[0], h, atol=1e-12)
    even, odd = (B.WienerFIRFilter(w, causal=False).fit(x, target=s) for w in (8, 9))
    assert len(even.coef_[0]) == 9
    np.testing.assert_array_equal(even.filter(x), odd.filter(x))


def test_a_wiener_fir_fitted_without_a_target_on_too_short_an_x_names_x():
    with pytest.raises(ValueError, match=r"^x channel 0 has 20 finite samples; the filter has 29"):
        B.WienerFIRFilter(30).fit(np.sin(np.arange(20.0)))
    with pytest.raises(ValueError, match=r"^target channel 0 has 20 finite samples"):
        B.WienerFIRFilter(30).fit(np.arange(20.0), target=np.sin(np.arange(20.0)))
    # x stopping early cut the target short: "target channel 0 has 20 finite samples"
    x = np.r_[np.arange(20.0), np.full(80, np.nan)]
    with pytest.raises(ValueError, match=r"^x channel 0 stops at sample 19 of 100 .*: 20 samples"):
        B.WienerFIRFilter(30).fit(x, target=np.sin(np.arange(100.0)))


@pytest.mark.parametrize("causal", [True, False])
def test_a_wiener_fir_fitted_without_a_target_takes_no_equation_from_a_missing_sample(causal):
    # filled, a missing tail was 100 equations predicting the last reading from itself
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(300) / 5.0) + 0.3 * rng.standard_normal(300)
    gappy = x.copy()
    gappy[200:] = np.nan
    f = B.WienerFIRFilter(8, causal=causal).fit(gappy)
    g = B.WienerFIRFilter(8, causal=causal).fit(x[:200])
    np.testing.assert_allclose(f.coef_[0], g.coef_[0], rtol=1e-9, atol=1e-12)
    assert f.intercept_[0] == pytest.approx(g.intercept_[0], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("causal", [True, False])
def test_a_one_tap_wiener_fir_without_a_target_is_refused_naming_window(causal):
    x = np.sin(np.arange(100) / 5.0)
    with pytest.raises(ValueError, match="window=1 without a target leaves no tap"):
        B.WienerFIRFilter(1, causal=causal).fit(x)  # it returned the training mean throughout
    np.testing.assert_allclose(B.WienerFIRFilter(1, causal=causal).fit(x, 2 * x).coef_[0], 2, 1e-4)


def test_kalman_handles_missing_values(series):
    clean, noisy = series
    x = noisy.copy()
    x[50:60] = np.nan
    f = B.KalmanSmoother(smoother=True).fit(x[:200])
    y = f.filter(x)
    assert np.all(np.isfinite(y))
    # NaN filling for the other filters
    y2 = B.ButterworthFilter(0.1).filter(x)
    assert np.all(np.isfinite(y2))


@pytest.mark.parametrize("smoother", [False, True])
def test_the_kalman_smoother_refuses_an_all_nan_channel_like_the_other_denoisers(smoother, series):
    _, noisy = series
    f = B.KalmanSmoother(smoother=smoother).fit(noisy[:200])
    x = noisy.copy()
    x[:, 1] = np.nan  # the smoother returned 0.0 for every sample of it
    with pytest.raises(ValueError, match="x channel 1 is all NaN"):
        f.filter(x)
    with pytest.raises(ValueError, match="channel 1 is all NaN"):
        B.ButterworthFilter(zero_phase=smoother).filter(x)


def test_wavelet_matches_manual_universal_threshold():
    import pywt

    rng = np.random.default_rng(3)
    x = np.sin(np.linspace(0, 8, 512)) + 0.2 * rng.standard_normal(512)
    c = pywt.wavedec(x, "db4", level=3, mode="symmetric")
    thr = np.median(np.abs(c[-1])) / 0.6745 * np.sqrt(2 * np.log(512))
    c[1:] = [pywt.threshold(d, thr, "soft") for d in c[1:]]
    np.testing.assert_allclose(
        B.WaveletDenoiser("db4", level=3).filter(x),
        pywt.waverec(c, "db4", mode="symmetric"),
        atol=1e-12,
    )


def test_a_wavelet_level_beyond_the_largest_useful_one_is_capped_and_a_short_series_kept():
    x = np.sin(np.arange(100) / 4.0) + 0.3 * np.random.default_rng(0).standard_normal(100)
    capped = B.WaveletDenoiser(level=99).filter(x)  # db4 on 100 samples: 3 levels
    np.testing.assert_array_equal(capped, B.WaveletDenoiser(level=3).filter(x))
    np.testing.assert_array_equal(capped, B.WaveletDenoiser().filter(x))
    np.testing.assert_array_equal(B.WaveletDenoiser().filter(x[:13]), x[:13])  # db4: 8 taps
    assert not np.array_equal(B.WaveletDenoiser().filter(x[:14]), x[:14])


@pytest.mark.parametrize("f", FORECASTERS, ids=lambda f: type(f).__name__)
def test_forecaster_contract(f):
    rng = np.random.default_rng(2)
    t = np.arange(300)
    y = np.column_stack([np.sin(t / 6.0), np.cos(t / 9.0)]) + 0.05 * rng.standard_normal((300, 2))
    before = y.copy()
    f = f.clone()
    assert f.fit(y[:200]) is f
    P = f.forecast_path(y, horizon=4)
    assert P.shape == (300, 4, 2)
    np.testing.assert_array_equal(y, before)
    np.testing.assert_allclose(f.forecast(y, horizon=3), P[:, 2], equal_nan=True)
    assert f.predict(5).shape == (5, 2)
    # causality: entry t uses y[:t+1] only
    cut = 250
    P2 = f.forecast_path(y[: cut + 1], horizon=4)
    np.testing.assert_allclose(P2[cut], P[cut], rtol=1e-6, atol=1e-8)
    # 1-D in, (T, H) out
    f1 = f.clone().fit(y[:200, 0])
    assert f1.forecast_path(y[:, 0], horizon=2).shape == (300, 2)


def test_state_space_rolling_matches_statsmodels():
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    rng = np.random.default_rng(5)
    y = np.cumsum(rng.standard_normal(250)) * 0.1 + np.sin(np.arange(250) / 4)
    f = B.ARIMAForecaster((1, 1, 0)).fit(y[:150])
    P = f.forecast_path(y, horizon=5)
    fitted, loc, scale = f.models_[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in (20, 160, 240):
            ref = fitted.res.apply((y[: t + 1] - loc) / scale).forecast(5) * scale + loc
            np.testing.assert_allclose(P[t], ref, atol=1e-8)
    assert isinstance(fitted.res.model, SARIMAX)


def test_an_arima_without_a_trend_or_differencing_reverts_to_the_training_mean_not_to_zero():
    rng = np.random.default_rng(0)
    e, y = rng.standard_normal(400), np.zeros(400)
    for t in range(1, 400):
        y[t] = 0.5 * y[t - 1] + e[t]
    y += 10.0
    f = B.ARIMAForecaster((1, 0, 0), trend=None).fit(y[:300])
    fitted, loc, scale = f.models_[0]
    assert loc == pytest.approx(y[:300].mean()) and scale == pytest.approx(y[:300].std())
    # 50 steps ahead an AR(1) with phi near 0.5 has forgotten the origin: the training mean
    # (SARIMAX(trend=None) on the raw series, no constant, gives 7.5 here)
    assert f.forecast_path(y, horizon=50)[-1, -1] == pytest.approx(y[:300].mean(), abs=1e-6)


def _ar2(n: int, seed: int) -> np.ndarray:
    """y_t = 1.5 y_{t-1} - 0.7 y_{t-2} + e_t from zeros, unit white e."""
    e = np.random.default_rng(seed).standard_normal(n)
    y = np.zeros(n)
    for t in range(2, n):
        y[t] = 1.5 * y[t - 1] - 0.7 * y[t - 2] + e[t]
    return y


def test_autoreg_matches_statsmodels_apply():
    from statsmodels.tsa.ar_model import AutoReg

    y = _ar2(400, seed=6)
    f = B.AutoRegForecaster(2).fit(y[:300])
    res = AutoReg(y[:300], lags=2, trend="c").fit()
    P = f.forecast_path(y, horizon=3)
    ref = res.apply(y[:351]).forecast(3)
    np.testing.assert_allclose(P[350], ref, atol=1e-8)
    assert np.all(np.isnan(P[0]))  # not enough history


def test_an_autoregression_on_a_huge_offset_forecasts_as_on_the_signal_alone():
    y = _ar2(600, seed=6)
    want = B.AutoRegForecaster(8).fit(y[:450]).forecast_path(y, horizon=3)
    got = B.AutoRegForecaster(8).fit(y[:450] + 1e9).forecast_path(y + 1e9, horizon=3) - 1e9
    np.testing.assert_allclose(got, want, atol=1e-4)  # float64 holds 1e9 to 1.2e-7


@pytest.mark.parametrize("individual", [False, True])
def test_dlinear_on_a_huge_offset_forecasts_as_on_the_signal_alone(individual):
    rng = np.random.default_rng(7)
    t = np.arange(600)
    y = np.sin(0.3 * t) + 0.5 * np.sin(0.71 * t) ** 3 + 0.1 * rng.standard_normal(600)
    kw = dict(lookback=48, horizon=3, individual=individual)
    want = B.DLinearForecaster(**kw).fit(y[:450]).forecast_path(y, horizon=3)
    got = B.DLinearForecaster(**kw).fit(y[:450] + 1e9).forecast_path(y + 1e9, horizon=3) - 1e9
    np.testing.assert_allclose(got, want, atol=1e-4)  # float64 holds 1e9 to 1.2e-7


def test_dlinear_recovers_linear_map():
    rng = np.random.default_rng(7)
    y = np.zeros(2000)
    e = rng.standard_normal(2000)
    for t in range(2, 2000):
        y[t] = 1.6 * y[t - 1] - 0.8 * y[t - 2] + e[t]
    f = B.DLinearForecaster(lookback=8, horizon=1, moving_average=3, ridge=0.0).fit(y[:1500])
    W, b = f.weights_[0]
    # with no penalty the decomposed linear model is ordinary least squares on the window
    from statsmodels.tsa.ar_model import AutoReg

    ols = AutoReg(y[:1500], lags=8, trend="c").fit().params
    np.testing.assert_allclose(W[::-1, 0], ols[1:], atol=1e-6)
    np.testing.assert_allclose(W[-2:, 0], [-0.8, 1.6], atol=0.1)
    with pytest.raises(ValueError, match="horizon"):
        f.forecast_path(y, horizon=2)


def test_moving_average_matrix_matches_dlinear_padding():
    x = np.arange(10, dtype=float) ** 2
    A = B.moving_average_matrix(10, 5)
    pad = np.concatenate([[x[0]] * 2, x, [x[-1]] * 2])
    ref = np.convolve(pad, np.ones(5) / 5, mode="valid")
    np.testing.assert_allclose(A @ x, ref)


def test_an_even_dlinear_moving_average_is_refused_naming_it():
    """An even kernel has no centre: the padding averaged one more sample ahead than behind,
    a trend half a sample early (DLinear's own series_decomp returns one sample too few)."""
    y = np.sin(np.arange(400) * 0.1)
    with pytest.raises(ValueError, match="moving_average must be odd.*got 4: take 3 or 5"):
        B.DLinearForecaster(lookback=24, horizon=6, moving_average=4).fit(y)
    with pytest.raises(ValueError, match="window must be odd"):
        B.moving_average_matrix(10, 4)
    B.DLinearForecaster(lookback=24, horizon=6, moving_average=1).fit(y)  # no trend: fine


def test_a_dlinear_saved_with_an_even_moving_average_still_loads_and_forecasts(tmp_path):
    # its fitted linear map is what forecasts; refusing the even window at load (as at fit)
    # left a model saved before 2026-12-05 unusable ('moving_average must be odd')
    y = np.sin(np.arange(400) * 0.1)
    fc = B.DLinearForecaster(lookback=24, horizon=6, moving_average=5).fit(y)
    fc.save(tmp_path / "m")
    config = tmp_path / "m" / "config.json"
    config.write_text(config.read_text().replace('"moving_average": 5', '"moving_average": 4'))
    loaded = B.DLinearForecaster.load(tmp_path / "m")
    assert loaded.moving_average == 4
    np.testing.assert_array_equal(loaded.forecast_path(y, 6), fc.forecast_path(y, 6))


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: B.ButterworthFilter(cutoff=1.5), "cutoff"),
        (lambda: B.ButterworthFilter(order=0), "order"),
        (lambda: B.SavitzkyGolayFilter(5, 5), "polyorder"),
        (lambda: B.MedianFilter(window=0), "window"),
        (lambda: B.WienerFIRFilter(ridge=-1), "ridge"),
        (lambda: B.KalmanSmoother(level="nope"), "level"),
        (lambda: B.WaveletDenoiser("nope"), "wavelet"),
        (lambda: B.AutoRegForecaster(lags=0), "lags"),
        (lambda: B.ARIMAForecaster(order=(1, 0)), "order"),
        # statsmodels' own errors named no argument ("Seasonal periodicity must be ...")
        (lambda: B.ARIMAForecaster(seasonal_order=(1, 0, 0, 1)), "seasonal_order"),
        (lambda: B.ARIMAForecaster(seasonal_order=(0, 1, 0, 0)), "seasonal_order"),
        # a time trend's intercept varies with time; the forecasts beyond one step used its
        # first value (off by 0.1-1.7 against statsmodels' own)
        (lambda: B.ARIMAForecaster(trend="ct"), "trend must be one of"),
        (lambda: B.ETSForecaster(damped_trend=True), "damped_trend"),
        # y has 400 samples: statsmodels' own error named no argument
        (lambda: B.ETSForecaster(seasonal=201), "seasonal=201 needs two full seasons"),
        # it said "seasonal=24 needs two full seasons to fit: y has 30 samples" of 400
        (lambda: B.ETSForecaster(seasonal=24, max_fit_samples=30), "max_fit_samples=30 holds"),
        (lambda: B.DLinearForecaster(normalize="x"), "normalize"),
    ],
)
def test_bad_arguments_raise_at_fit_naming_the_argument(make, match):
    est = make()  # the constructor only stores (scikit-learn semantics)
    y = np.sin(np.arange(400) * 0.1)
    with pytest.raises(ValueError, match=match):
        est.fit(y)


@pytest.mark.parametrize(
    "cls, old, new",
    [
        (B.SavitzkyGolayFilter, "window_length", "window"),
        (B.MedianFilter, "kernel_size", "window"),
        (B.ScipyWienerFilter, "mysize", "window"),
        (B.WienerFIRFilter, "taps", "window"),
        (B.DLinearForecaster, "kernel_size", "moving_average"),
        (B.KalmanSmoother, "max_fit", "max_fit_samples"),
        (B.ARIMAForecaster, "max_fit", "max_fit_samples"),
    ],
)
def test_renamed_arguments_still_work_with_a_deprecation_warning(cls, old, new):
    with pytest.warns(DeprecationWarning, match=new):
        est = cls(**{old: 21})
    assert getattr(est, new) == 21 and new in est.get_params() and old not in est.get_params()


def test_clone_is_unfitted_and_set_params_returns_self():
    f = B.WienerFIRFilter(window=8).fit(np.sin(np.arange(300) * 0.1))
    g = f.clone()
    assert g.get_params() == f.get_params() and not hasattr(g, "coef_")
    assert f.set_params(window=4) is f and f.window == 4


def test_bad_inputs():
    with pytest.raises(ValueError, match="x must be"):
        B.MedianFilter().filter(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="fitted"):
        B.WienerFIRFilter().filter(np.zeros(10))
    with pytest.raises(ValueError, match="fitted"):
        B.AutoRegForecaster().forecast(np.zeros(10))
    f = B.NaiveForecaster().fit(np.zeros((10, 2)))
    with pytest.raises(ValueError, match="channel"):
        f.forecast_path(np.zeros((10, 3)))
    with pytest.raises(ValueError, match="horizon"):
        f.forecast_path(np.zeros((10, 2)), horizon=0)
    with pytest.raises(ValueError, match="unknown parameter"):
        B.MedianFilter().set_params(bogus=1)


def test_dlinear_per_step_ridge_equals_one_fit_per_penalty_step_by_step():
    y = np.sin(np.arange(600) * 0.2) + 0.3 * np.random.default_rng(0).normal(size=600)
    ridges = [0.0, 1e-2, 1.0, 100.0]
    mixed = B.DLinearForecaster(lookback=16, horizon=4, moving_average=5, ridge=ridges).fit(y)
    path = mixed.forecast_path(y, horizon=4)
    for h, r in enumerate(ridges):
        one = B.DLinearForecaster(lookback=16, horizon=4, moving_average=5, ridge=r).fit(y)
        np.testing.assert_allclose(path[:, h], one.forecast_path(y, horizon=4)[:, h], rtol=1e-10)
    with pytest.raises(ValueError, match="ridge: give one penalty or one per step"):
        B.DLinearForecaster(lookback=16, horizon=4, ridge=[1.0, 2.0]).fit(y)
    with pytest.raises(ValueError, match="ridge"):
        B.DLinearForecaster(lookback=16, horizon=2, ridge=[1.0, -2.0]).fit(y)


def test_seasonal_naive_refuses_a_series_shorter_than_its_period():
    # it fitted, then forecast NaN everywhere: no value one season earlier
    with pytest.raises(ValueError, match="fewer than period=24"):
        B.SeasonalNaiveForecaster().fit(np.sin(np.arange(20.0)))
    assert np.isfinite(B.SeasonalNaiveForecaster(period=5).fit(np.arange(20.0)).predict(3)).all()


def test_the_kalman_smoother_refuses_a_single_sample_naming_it():
    # statsmodels failed with "'shape' elements cannot be negative"
    with pytest.raises(ValueError, match="x has 1 sample"):
        B.KalmanSmoother().fit(np.ones(1))


def test_savgol_zero_phase_refuses_an_even_window_and_filters_a_short_series():
    # an even window was made odd (8 -> 7) silently (scipy's own even window is half a sample
    # off centre: not zero-phase), and a series shorter than the window came back unfiltered
    x = np.cumsum(np.random.default_rng(0).normal(size=80))
    with pytest.raises(ValueError, match="window must be odd for zero_phase=True"):
        B.SavitzkyGolayFilter(8, 2).filter(x)
    causal = B.SavitzkyGolayFilter(8, 2, zero_phase=False).filter(x)  # a trailing fit: any length
    assert np.isfinite(causal).all()
    short = x[:9]
    np.testing.assert_allclose(
        B.SavitzkyGolayFilter(11, 2).filter(short),
        signal.savgol_filter(short, 11, 2, mode="nearest"),
    )
    assert not np.allclose(B.SavitzkyGolayFilter(11, 2).filter(short), short)


def test_a_wiener_fir_filter_refuses_a_window_or_causality_changed_after_fit():
    # causal=False applied the causal taps centred (the output read the future); another
    # window was numpy's matmul error
    x = np.sin(np.arange(300) / 10) + 0.3 * np.random.default_rng(0).normal(size=300)
    f = B.WienerFIRFilter(window=5).fit(x)
    before = f.filter(x)
    for name, value in (("causal", False), ("window", 7)):
        f.set_params(**{name: value})
        with pytest.raises(ValueError, match=f"{name}={value!r} .*changed after fit"):
            f.filter(x)
        f.set_params(causal=True, window=5)
    np.testing.assert_array_equal(f.filter(x), before)


_LEADING_NAN = np.r_[np.full(3, np.nan), np.sin(np.arange(60) / 4) + 3.0]


@pytest.mark.parametrize(
    "make",
    [
        B.NaiveForecaster,
        lambda: B.SeasonalNaiveForecaster(period=2),
        lambda: B.AutoRegForecaster(lags=2),
        lambda: B.DLinearForecaster(lookback=4, horizon=2),
    ],
)
def test_a_forecast_from_before_the_first_sample_is_nan_not_read_from_the_future(make):
    # the leading NaN took the first sample's value, and those origins were forecast from it
    fc = make().fit(np.sin(np.arange(200) / 4) + 3.0)
    y = _LEADING_NAN
    path = fc.forecast_path(y, horizon=2)
    assert np.isnan(path[:3]).all() and np.isnan(fc.forecast(y, 1)[:3]).all()
    for t in range(3, 12):  # every later origin reads y[:t+1] only
        np.testing.assert_allclose(fc.forecast_path(y[: t + 1], horizon=2)[t], path[t], rtol=1e-12)


@pytest.mark.parametrize(
    "filt",
    [
        B.ButterworthFilter(0.3, 2, zero_phase=False),
        B.SavitzkyGolayFilter(5, 2, zero_phase=False),
        B.MovingAverageFilter(3),
        B.MedianFilter(3, causal=True),
        B.KalmanSmoother(smoother=False),  # it handles NaN itself, and gave 0 there
    ],
)
def test_a_causal_filter_gives_nan_before_the_first_sample(filt):
    x = _LEADING_NAN
    if filt.trainable:
        filt.fit(x[3:])
    y = filt.filter(x)
    assert np.isnan(y[:3]).all() and np.isfinite(y[3:]).all()
    for t in range(3, 12):  # output t reads x[:t+1] only
        np.testing.assert_allclose(filt.filter(x[: t + 1])[t], y[t], rtol=1e-12)


def test_channels_that_start_apart_are_forecast_from_their_own_first_sample():
    # each channel's own model: NaN until that channel starts; a model whose patterns hold
    # every channel (the residual hybrid's joint keys): NaN until both have
    from tssdpa.filters.residual import ResidualProjectionForecaster

    t = np.arange(300)
    train = np.stack([np.sin(t / 5), np.cos(t / 7)], 1)
    y = train.copy()
    y[:3, 0], y[:6, 1] = np.nan, np.nan
    ar = B.AutoRegForecaster(lags=2).fit(train).forecast(y, 1)
    assert np.isnan(ar[:3, 0]).all() and np.isfinite(ar[3:, 0]).all()
    assert np.isnan(ar[:6, 1]).all() and np.isfinite(ar[6:, 1]).all()
    for independent, first in ((False, 6), (True, 3)):
        fc = ResidualProjectionForecaster(horizon=1, embedding=4, lookback=48,
                                          channel_independent=independent).fit(train)  # fmt: skip
        out = fc.forecast(y, 1)
        assert np.isnan(out[:first, 0]).all() and np.isfinite(out[first:, 0]).all()


def test_the_kalman_smoother_refuses_a_channel_stopping_after_one_reading_naming_it():
    x = np.cumsum(np.random.default_rng(0).standard_normal(100))
    table = np.column_stack([x, x])
    table[1:, 1] = np.nan  # statsmodels failed with "'shape' elements cannot be negative"
    with pytest.raises(ValueError, match="x channel 1 stops at sample 0 of 100"):
        B.KalmanSmoother().fit(table)


def test_the_kalman_fit_takes_the_last_samples_up_to_a_channels_last_one():
    # the last max_fit_samples were all missing: statsmodels' "'shape' elements cannot be
    # negative", naming nothing
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(200) / 5) + 0.2 * rng.standard_normal(200)
    x[150:] = np.nan
    k = B.KalmanSmoother(max_fit_samples=50).fit(x)
    y = k.filter(x)
    assert np.isfinite(y[:150]).all()
    np.testing.assert_allclose(k.models_[0][1], np.std(x[100:150]), rtol=1e-12)


def test_a_simplex_library_too_small_for_n_neighbors_names_n_neighbors():
    with pytest.raises(ValueError, match=r"needs at least 500 \(n_neighbors=500\)"):
        B.SimplexForecaster(2, n_neighbors=500).fit(np.sin(np.arange(200) / 5))


@pytest.mark.parametrize(
    "cls",
    [B.AutoRegForecaster, B.ARIMAForecaster, B.ETSForecaster, B.UnobservedComponentsForecaster],
)
def test_a_missing_tail_is_not_fitted_as_the_last_reading_held(cls):
    """A channel whose recording stops early, fitted with the rest of a longer table: the
    model is the one fitted up to its last reading. Filled forward, the tail was a constant
    the model was fitted on; where it held the last max_fit_samples, ARIMA's one-step RMSE on
    an AR(2) went from 0.99 to 3.07."""
    rng = np.random.default_rng(0)
    y = np.zeros(700)
    for i in range(2, 700):
        y[i] = 1.6 * y[i - 1] - 0.8 * y[i - 2] + rng.normal()
    gappy = np.column_stack([y, y])
    gappy[300:, 0] = np.nan  # channel 0 stops at 300; channel 1 goes on
    kw = {} if cls is B.AutoRegForecaster else {"max_fit_samples": 300}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = cls(**kw).fit(gappy).forecast(np.column_stack([y, y]), horizon=1)
        cut = cls(**kw).fit(y[:300]).forecast(y, horizon=1)
        whole = cls(**kw).fit(y).forecast(y, horizon=1)
    np.testing.assert_allclose(np.asarray(both)[:, 0], np.asarray(cut), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.asarray(both)[:, 1], np.asarray(whole), rtol=1e-7, atol=1e-9)


def test_dlinear_fits_a_channel_up_to_its_last_reading_not_on_its_missing_tail_filled():
    # filled forward, channel 0's last 100 samples were windows forecasting a constant
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(400) * 0.3) + 0.05 * rng.standard_normal(400)
    train = np.column_stack([x[:300], x[:300]])
    train[200:, 0] = np.nan
    test = np.column_stack([x[300:], x[300:]])
    both = B.DLinearForecaster(24, 4, individual=True).fit(train).forecast_path(test, 4)
    cut = B.DLinearForecaster(24, 4).fit(x[:200]).forecast_path(x[300:], 4)
    whole = B.DLinearForecaster(24, 4).fit(x[:300]).forecast_path(x[300:], 4)
    np.testing.assert_allclose(both[:, :, 0], cut, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(both[:, :, 1], whole, rtol=1e-9, atol=1e-12)
    train[27:, 0] = np.nan  # 27 readings: fewer than lookback + horizon
    with pytest.raises(ValueError, match="y channel 0 stops at sample 26 of 300"):
        B.DLinearForecaster(24, 4).fit(train)


def test_a_channel_that_starts_late_is_fitted_from_its_first_reading():
    """Its missing head, filled back with the first reading, was fitted as data: 300 copies
    of it in the EDM library (700 states for 400 readings), ARIMA's standardisation 0.157 /
    2.70 (its readings: -0.039 / 3.55), DLinear's weights off by up to 0.057, AutoReg's
    coefficients [1.60197, -0.80349] (its readings: [1.60126, -0.80418])."""
    rng = np.random.default_rng(0)
    y = np.zeros(700)
    for i in range(2, 700):
        y[i] = 1.6 * y[i - 1] - 0.8 * y[i - 2] + rng.normal()
    late = np.column_stack([y, y])
    late[:300, 1] = np.nan
    alone = y[300:]
    fc = B.AutoRegForecaster(lags=2).fit(late)
    ar = B.AutoRegForecaster(lags=2)
    np.testing.assert_allclose(fc.models_[1][1], ar.fit(alone).models_[0][1], rtol=1e-10)
    np.testing.assert_allclose(fc.models_[0][1], ar.fit(y).models_[0][1])
    dl = B.DLinearForecaster(24, 4, individual=True).fit(late).weights_[1]
    for got, want in zip(dl, B.DLinearForecaster(24, 4).fit(alone).weights_[0]):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(B.SimplexForecaster(engine="numpy").fit(late).library_[1], alone)
    arima = B.ARIMAForecaster().fit(late).models_[1]
    np.testing.assert_allclose(arima[1:], [alone.mean(), alone.std()])
    late[:695, 1] = np.nan  # 5 readings: too few, named with where they are
    with pytest.raises(ValueError, match=r"^y channel 1 has readings from sample 695 to 699 "
                       r"of 700 only \(the rest is missing\): its 5 reading\(s\) are too "
                       "few"):  # fmt: skip
        B.AutoRegForecaster(lags=2).fit(late)
    with pytest.raises(ValueError, match=r"^y channel 1 has readings from sample 695 .*: lookback "
                       r"\+ horizon = 28 samples of it are needed"):  # fmt: skip
        B.DLinearForecaster(24, 4).fit(late)


def test_a_channel_stopping_too_early_to_fit_is_named_and_a_residual_base_fits_up_to_it():
    """With the filled tail gone, a channel of 1 reading is too short for the model: a
    ValueError naming the channel (ARIMA raised IndexError, the CLI's exit 1), and
    projection_residual's AutoReg base is fitted up to the last reading as AutoReg is."""
    from tssdpa.filters.residual import ResidualProjectionForecaster

    rng = np.random.default_rng(0)
    y = np.zeros(700)
    for i in range(2, 700):
        y[i] = 1.6 * y[i - 1] - 0.8 * y[i - 2] + rng.normal()
    short = np.column_stack([y, y])
    short[1:, 0] = np.nan
    with pytest.raises(ValueError, match="y channel 0 stops at sample 0 of 700"):
        B.ARIMAForecaster().fit(short)
    late = np.column_stack([y[:400], y[:400]])
    late[:330, 1] = np.nan  # absent from the head the sigma is chosen on: the filled head
    assert np.isfinite(ResidualProjectionForecaster(horizon=1).fit(late).predict(1)).all()
    gappy = y.copy()
    gappy[300:] = np.nan
    res = ResidualProjectionForecaster(horizon=1).fit(gappy)
    np.testing.assert_allclose(
        res.base_.models_[0][1], B.AutoRegForecaster().fit(y[:300]).models_[0][1], rtol=1e-10
    )


def test_the_scipy_wiener_baseline_pads_with_zeros_as_scipy_does():
    # its docstring's figures: a constant 1 comes back 0.97 at the ends with the default
    # window, 0.87 with window=21, where the other sliding-window baselines repeat the end values
    y = B.ScipyWienerFilter(window=21).fit(np.ones(50)).filter(np.ones(50))
    assert round(float(y[0]), 2) == 0.87 and y[0] < y[1] < y[10] == 1.0
    assert round(float(B.ScipyWienerFilter().fit(np.ones(50)).filter(np.ones(50))[0]), 2) == 0.97
    np.testing.assert_array_equal(
        B.MovingAverageFilter(21).fit(np.ones(50)).filter(np.ones(50)), 1.0
    )


def test_the_scipy_wiener_end_pull_shrinks_with_length_and_where_scipy_gives_nan_x_comes_back():
    # scipy's noise estimate, the mean local variance, falls with the length: 200 samples
    ends = [B.ScipyWienerFilter(w).filter(np.ones(200))[[0, -1]] for w in (5, 21)]
    np.testing.assert_allclose(ends, [[0.99333] * 2, [0.96667] * 2], atol=1e-5)
    with np.errstate(divide="ignore", invalid="ignore"):  # scipy's 0/0 inside the constant
        np.testing.assert_array_equal(ends[0], signal.wiener(np.ones(200), 5)[[0, -1]])
        # window 1: every local variance, hence scipy's noise estimate, is 0, and scipy's NaN
        x = np.sin(np.arange(50.0))
        assert np.isnan(signal.wiener(x, 1)).all()
    np.testing.assert_array_equal(B.ScipyWienerFilter(1).filter(x), x)


def test_a_moving_average_keeps_its_digits_on_a_large_offset():
    # a running sum of the values themselves grew to 1e14, and its differences lost the
    # noise's digits: 0.006 off np.convolve here (1.7% of the output's spread)
    x = 1e9 + np.random.default_rng(0).standard_normal(100_000)
    for causal in (True, False):
        f = B.MovingAverageFilter(8, causal=causal)
        y = f.fit(x).filter(x)
        want = np.convolve(f._padded(x), np.ones(8) / 8, "valid")
        np.testing.assert_allclose(y - 1e9, want - 1e9, rtol=0, atol=1e-6)


def test_a_causal_moving_average_reads_no_later_sample_even_through_its_rounding():
    # its running sum was of the deviations from the whole series' mean: a jump to 1e9 later
    # moved the earlier outputs by 2e-5 (and a drift cost digits: 7e-4 off on 0 .. 1e9)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(2000)
    jumped = x.copy()
    jumped[1000:] = 1e9
    f = B.MovingAverageFilter(5)
    np.testing.assert_array_equal(f.filter(jumped)[:1000], f.filter(x)[:1000])
    drift = np.linspace(0.0, 1e9, 100_000) + rng.standard_normal(100_000)
    for causal in (True, False):
        g = B.MovingAverageFilter(8, causal=causal)
        want = np.convolve(g._padded(drift), np.ones(8) / 8, "valid")
        np.testing.assert_allclose(g.filter(drift), want, rtol=0, atol=1e-4)


def test_an_array_given_for_one_value_is_refused_or_taken_not_a_numpy_error():
    # an array for the wavelet raised numpy's "truth value ... is ambiguous", and a 0-d ridge
    # "len() of unsized object", naming nothing
    x = np.sin(np.arange(200) / 7)
    with pytest.raises(ValueError, match="wavelet must be a discrete PyWavelets wavelet"):
        B.WaveletDenoiser(wavelet=np.array(["db4", "db2"])).filter(x)
    fc = B.DLinearForecaster(lookback=16, horizon=2, ridge=np.array(0.5)).fit(x)
    want = B.DLinearForecaster(lookback=16, horizon=2, ridge=0.5).fit(x)
    np.testing.assert_array_equal(fc.predict(3), want.predict(3))
