"""Tests for tssdpa.filters.residual: linear model + projection of its residual.

The fast paths (the vectorised library / correction code) are checked against slow
explicit-loop references (kernel regression itself: tests/signal/test_library.py); the
statistical behaviour (a correction only where it pays, on chaotic vs linear data) against the
plain linear baselines it wraps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tssdpa.baselines import AutoRegForecaster, WienerFIRFilter
from tssdpa.data.synthetic import ar2, lorenz
from tssdpa.filters import ProjectionFilter, ResidualProjectionFilter, ResidualProjectionForecaster
from tssdpa.signal.reference import kernel_regression_reference

# ------------------------------------------------------------------------------ helpers
#: a short sigma grid for the tests that do not exercise the default one (fit cost ~ its size)
SIGMAS = [0.05, 0.2, 0.8]


def logistic_map(n, seed=0, r=3.9):
    """Noise-free chaotic logistic map x[t+1] = r x[t] (1 - x[t]) from a seeded start."""
    rng = np.random.default_rng(seed)
    x = np.empty(n)
    x[0] = 0.2 + 0.6 * rng.random()
    for t in range(1, n):
        x[t] = r * x[t - 1] * (1.0 - x[t - 1])
    return x


def square_wave(n, seed=0, noise=0.3):
    """(clean, noisy): a square wave of period ~314 samples plus white Gaussian noise."""
    rng = np.random.default_rng(seed)
    clean = np.sign(np.sin(np.arange(n) * 0.02 + rng.uniform(0, 6)))
    return clean, clean + noise * rng.standard_normal(n)


def step_mse(pred, y, h):
    """MSE of pred[t] (predicting y[t+h]) over the origins whose target is known."""
    return float(np.nanmean((pred[:-h] - y[h:]) ** 2))


def tail_mse(est, clean, n):
    """MSE of a filter output against the clean signal from sample n on (the test part)."""
    return float(np.mean((est[n:] - clean[n:]) ** 2))


def pattern(z, t, lags):
    """Delay pattern newest first: [z[t], z[t-1], ..., z[t-lags+1]] (rows of z concatenated)."""
    return np.concatenate([np.atleast_1d(z[t - l]) for l in range(lags)])


@pytest.fixture(scope="module")
def two_channel():
    return np.column_stack([logistic_map(500, seed=1), lorenz(500, seed=2)])


# ------------------------------------------------------------------- forecaster: reference
def reference_forecaster_path(fc, y_train, y, origins):
    """Rebuild the library with explicit loops and the forecast at ``origins`` by hand."""
    a_tr = y_train.reshape(len(y_train), -1)
    a = y.reshape(len(y), -1)
    C, H, L = a.shape[1], fc.horizon, fc.embedding
    ci = fc.channel_independent
    z_tr = (a_tr - fc.mean_) / fc.scale_
    z = (a - fc.mean_) / fc.scale_
    base_tr = fc.base_.forecast_path(a_tr, horizon=H)  # (T, H, C)
    base = fc.base_.forecast_path(a, horizon=H)

    def keys_at(zz, t):
        if ci:
            return np.stack([pattern(zz[:, c], t, L) for c in range(C)])  # (C, L)
        return pattern(zz, t, L)[None, :]  # (1, L * C), channels interleaved per lag

    # library: every training origin j with a complete pattern and an H-step base forecast
    K, R = [], []
    for j in range(len(a_tr) - H):
        if j < L - 1 or not np.isfinite(base_tr[j]).all():
            continue
        K.append(keys_at(z_tr, j))
        R.append(a_tr[j + 1 : j + H + 1] - base_tr[j])
    K, R = np.array(K), np.array(R)
    np.testing.assert_allclose(fc.library_[0], K, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fc.library_[1], R, rtol=1e-12, atol=1e-12)

    sigma = float(np.unique(fc.sigma_)[0])
    out = []
    for t in origins:
        q = keys_at(z, t)
        est = np.empty((H, C))
        for g in range(q.shape[0]):
            chans = slice(None) if not ci else slice(g, g + 1)
            vals = R[:, :, chans].reshape(len(R), -1)
            null = None if fc.fade is None else fc.null_distance_[g]
            e = kernel_regression_reference(q[g][None], K[:, g], vals, sigma, null)[0]
            est[:, chans] = e.reshape(H, -1)
        out.append(base[t] + fc.alpha_ * est)
    return np.array(out)


@pytest.mark.parametrize(
    "case",
    ["autoreg-1d", "dlinear-1d", "autoreg-2ch-joint", "autoreg-2ch-independent"],
)
def test_forecaster_equals_slow_reference(case, two_channel):
    if case.endswith("1d"):
        y = logistic_map(500, seed=3)
    else:
        y = two_channel
    base = "dlinear" if case.startswith("dlinear") else "autoreg"
    fc = ResidualProjectionForecaster(
        base=base,
        base_params={} if base == "dlinear" else {"lags": 6},
        embedding=5,
        horizon=3,
        lookback=24,
        sigma=0.3,
        channel_independent=case.endswith("independent"),
    ).fit(y[:400])
    np.testing.assert_array_equal(fc.sigma_, 0.3)
    assert (fc.alpha_ > 0).any(), "the test needs a correction that is actually used"
    origins = [30, 101, 399, 400, 450, 496]
    path = fc.forecast_path(y, horizon=3)
    ref = reference_forecaster_path(fc, y[:400], y, origins)
    got = path[origins] if y.ndim == 2 else path[origins][:, :, None]
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-12)


def test_forecaster_origins_without_a_full_pattern_get_the_base_forecast():
    y = logistic_map(400, seed=4)
    fc = ResidualProjectionForecaster(base_params={"lags": 2}, embedding=10, horizon=2).fit(y[:300])
    assert (fc.alpha_ > 0).all()
    path = fc.forecast_path(y, horizon=2)
    base = fc.base_.forecast_path(y, horizon=2)
    # origins 1..8 have a base forecast (lags 2) but no complete 10-sample pattern
    np.testing.assert_array_equal(path[:9], base[:9])
    assert np.isnan(path[0]).all() and np.isfinite(path[1:]).all()
    assert not np.allclose(path[9:], base[9:])


# ------------------------------------------------------------------- forecaster: causality
@pytest.mark.parametrize("base", ["autoreg", "dlinear"])
def test_forecast_from_an_origin_uses_only_the_past(base):
    y = lorenz(600, seed=0)
    fc = ResidualProjectionForecaster(
        base=base,
        base_params={"lags": 8} if base == "autoreg" else {},
        embedding=8,
        horizon=5,
        lookback=32,
    ).fit(y[:450])
    assert (fc.alpha_ > 0).any()
    full = fc.forecast_path(y, horizon=5)
    rng = np.random.default_rng(0)
    for t in (40, 449, 520):
        # the same origin seen with nothing after it ...
        # (AutoReg's BLAS products may round differently with fewer rows: ~1e-12 relative)
        np.testing.assert_allclose(
            fc.forecast_path(y[: t + 1], horizon=5)[t], full[t], rtol=1e-9, atol=1e-9
        )
        # ... and with a very different future
        changed = y.copy()
        changed[t + 1 :] = 100.0 * rng.normal(size=len(y) - t - 1)
        np.testing.assert_allclose(
            fc.forecast_path(changed, horizon=5)[: t + 1],
            full[: t + 1],
            rtol=1e-9,
            atol=1e-9,
        )


def test_forecast_predict_and_shorter_paths_are_consistent():
    y = logistic_map(500, seed=5)
    fc = ResidualProjectionForecaster(base_params={"lags": 4}, embedding=6, horizon=4, sigma=SIGMAS)
    fc.fit(y[:350])
    assert (fc.alpha_ > 0).any()
    path = fc.forecast_path(y, horizon=4)
    for h in (1, 2, 3, 4):
        np.testing.assert_allclose(
            fc.forecast_path(y, horizon=h), path[:, :h], rtol=1e-12, equal_nan=True
        )
        np.testing.assert_allclose(
            fc.forecast(y, horizon=h), path[:, h - 1], rtol=1e-12, equal_nan=True
        )
    np.testing.assert_allclose(fc.predict(4), path[349], rtol=1e-12)
    np.testing.assert_allclose(fc.predict(2), path[349, :2], rtol=1e-12)


# ------------------------------------------------------------------ forecaster: accuracy
@pytest.mark.parametrize("series", ["logistic", "lorenz"])
def test_hybrid_beats_its_autoreg_base_on_a_noise_free_chaotic_series(series):
    ratios = []
    for seed in (0, 1, 2):  # one test block can be an easy stretch for the linear model
        y = logistic_map(1500, seed=seed) if series == "logistic" else lorenz(1200, seed=seed)
        n = int(0.7 * len(y))
        fc = ResidualProjectionForecaster(base_params={"lags": 8}, embedding=8, horizon=1)
        fc.fit(y[:n])
        plain = AutoRegForecaster(lags=8).fit(y[:n])
        hybrid = step_mse(fc.forecast(y, horizon=1)[n:], y[n:], 1)
        linear = step_mse(plain.forecast(y, horizon=1)[n:], y[n:], 1)
        assert fc.alpha_[0, 0] > 0.5
        ratios.append(hybrid / linear)
    # measured on Lorenz (seeds 0, 1, 2): 0.86, 0.25 and 0.23 of the AR(8) error
    assert max(ratios) < 1.0
    assert np.median(ratios) < 0.5


def test_hybrid_on_a_linear_ar2_mostly_keeps_the_linear_forecast():
    zero, total = 0, 0
    for seed in range(4):
        y = ar2(2000, seed=seed)
        n = 1400
        fc = ResidualProjectionForecaster(base_params={"lags": 2}, embedding=8, horizon=5).fit(
            y[:n]
        )
        plain = AutoRegForecaster(lags=2).fit(y[:n])
        path = fc.forecast_path(y, horizon=5)
        lin = plain.forecast_path(y, horizon=5)
        for h in range(1, 6):
            hyb_mse = step_mse(path[n:, h - 1], y[n:], h)
            lin_mse = step_mse(lin[n:, h - 1], y[n:], h)
            assert hyb_mse <= 1.05 * lin_mse, (seed, h, hyb_mse, lin_mse)
            if fc.alpha_[h - 1, 0] == 0:  # alpha 0 gives back the linear model exactly
                np.testing.assert_array_equal(path[:, h - 1], lin[:, h - 1])
        zero += int((fc.alpha_ == 0).sum())
        total += fc.alpha_.size
    assert zero >= 0.6 * total, f"only {zero} of {total} alpha_ entries are 0 on linear data"


# ------------------------------------------------------------------ forecaster: channels
@pytest.mark.parametrize("channel_independent", [False, True])
def test_multichannel_shapes(channel_independent, two_channel):
    y = two_channel
    fc = ResidualProjectionForecaster(
        base_params={"lags": 4},
        embedding=6,
        horizon=3,
        sigma=SIGMAS,
        channel_independent=channel_independent,
    ).fit(y[:350])
    assert fc.sigma_.shape == (3, 2) and fc.alpha_.shape == (3, 2)
    assert np.all((fc.alpha_ >= 0) & (fc.alpha_ <= 1))
    assert fc.library_[0].shape[1:] == ((2, 6) if channel_independent else (1, 12))
    assert fc.library_[1].shape[1:] == (3, 2)
    path = fc.forecast_path(y, horizon=3)
    assert path.shape == (500, 3, 2)
    assert np.isfinite(path[5:]).all()
    assert fc.forecast(y, horizon=2).shape == (500, 2)
    assert fc.predict(3).shape == (3, 2)
    one = ResidualProjectionForecaster(
        base_params={"lags": 4}, embedding=6, horizon=3, sigma=SIGMAS
    )
    one.fit(y[:350, 0])
    assert one.forecast_path(y[:, 0], horizon=3).shape == (500, 3)
    assert one.predict(2).shape == (2,)
    assert one.sigma_.shape == (3, 1) and one.alpha_.shape == (3, 1)


def test_channel_independent_autoreg_hybrid_equals_separate_fits(two_channel):
    y = two_channel
    kw = dict(base_params={"lags": 4}, embedding=6, horizon=3, sigma=SIGMAS)
    joint = ResidualProjectionForecaster(channel_independent=True, **kw).fit(y[:350])
    sep = [ResidualProjectionForecaster(**kw).fit(y[:350, c]) for c in range(2)]
    expected = np.stack([m.forecast_path(y[:, c], horizon=3) for c, m in enumerate(sep)], -1)
    np.testing.assert_allclose(joint.forecast_path(y, horizon=3), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(joint.alpha_, np.column_stack([m.alpha_ for m in sep]), rtol=1e-12)
    np.testing.assert_array_equal(joint.sigma_, np.column_stack([m.sigma_ for m in sep]))


def test_forecaster_accepts_pandas_and_get_params_round_trips():
    idx = pd.date_range("2024-01-01", periods=300, freq="h")
    s = pd.Series(logistic_map(300, seed=6), index=idx, name="x")
    fc = ResidualProjectionForecaster(base_params={"lags": 3}, embedding=4, horizon=2, sigma=SIGMAS)
    fc.fit(s)
    path = fc.forecast_path(s, horizon=2)
    # a DataFrame on the Series' index, a column per horizon (a bare array before 2026-12-05)
    assert isinstance(path, pd.DataFrame) and path.shape == (300, 2)
    assert path.index.equals(idx) and list(path.columns) == [1, 2]
    np.testing.assert_array_equal(path.to_numpy(), fc.forecast_path(s.to_numpy(), horizon=2))
    again = fc.set_params(sigma=0.5)
    assert isinstance(again, ResidualProjectionForecaster) and again.sigma == 0.5
    assert again.get_params()["base_params"] == {"lags": 3}
    assert "ResidualProjectionForecaster(" in repr(fc)


# --------------------------------------------------------------------- forecaster: errors
def test_forecaster_bad_arguments_raise_at_fit_naming_them():
    y = logistic_map(200)
    ResidualProjectionForecaster(base="nope", embedding=0)  # __init__ only stores
    cases = [
        ({"base": "nope"}, ValueError, "base"),
        ({"base_params": [("lags", 3)]}, TypeError, "base_params"),
        ({"base_params": {"lookback": 8}, "base": "dlinear"}, ValueError, "base_params"),
        ({"base_params": {"lags": 0}}, ValueError, "lags"),
        ({"holdout": "x"}, TypeError, "holdout"),
        ({"fade": "x"}, TypeError, "fade"),
        ({"sigma": "x"}, ValueError, "sigma"),
        ({"sigma": [[0.1, 0.2]]}, ValueError, "sigma"),
    ]
    cases += [({"sigma": bad}, ValueError, "sigma") for bad in (0, -1.0, [], [0.1, np.nan])]
    cases += [({"sigma": bad}, ValueError, "sigma") for bad in (np.inf, [0.5, 0.0])]
    cases += [({"holdout": bad}, ValueError, "holdout") for bad in (0, 1, -0.2, 1.5, np.nan)]
    names = ("embedding", "horizon", "lookback", "library_size", "max_holdout_origins")
    cases += [({name: 0}, ValueError, name) for name in names]
    cases += [({"embedding": 2.5}, TypeError, "embedding")]
    for kwargs, exc, name in cases:
        with pytest.raises(exc, match=name):
            ResidualProjectionForecaster(**kwargs).fit(y)
    with pytest.raises(ValueError, match="fit"):
        ResidualProjectionForecaster().forecast_path(y)
    fc = ResidualProjectionForecaster(base_params={"lags": 3}, embedding=4, horizon=2).fit(y)
    with pytest.raises(ValueError, match="horizon"):
        fc.forecast_path(y, horizon=3)
    with pytest.raises(ValueError, match="horizon"):
        fc.forecast(y, horizon=0)
    with pytest.raises(ValueError, match="steps"):
        fc.predict(0)
    with pytest.raises(ValueError, match="channel"):
        fc.forecast_path(np.column_stack([y, y]), horizon=1)


def test_renamed_forecaster_arguments_still_work_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="deprecated"):
        fc = ResidualProjectionForecaster(lags=6, window=500)
    assert (fc.embedding, fc.library_size) == (6, 500)
    with pytest.warns(DeprecationWarning, match="deprecated|library size"):
        f = ResidualProjectionFilter(taps=12, window=300)  # the spelling before 0.2
    assert (f.window, f.library_size) == (12, 300)
    with pytest.warns(DeprecationWarning, match="taps"):
        f = ResidualProjectionFilter(taps=12)
    assert (f.window, f.library_size) == (12, 20000)


def test_forecaster_too_short_series_raise():
    y = logistic_map(200)
    with pytest.raises(ValueError, match="3 samples"):
        ResidualProjectionForecaster().fit(y[:2])
    with pytest.raises(ValueError, match="holdout"):  # the AutoReg base cannot be fitted
        ResidualProjectionForecaster(base_params={"lags": 8}, embedding=8, horizon=5).fit(y[:20])
    with pytest.raises(ValueError, match="holdout"):  # no complete pattern in the library
        ResidualProjectionForecaster(base_params={"lags": 2}, embedding=50, horizon=1).fit(y[:60])
    with pytest.raises(ValueError, match="holdout"):  # the DLinear base cannot be fitted
        ResidualProjectionForecaster(base="dlinear", lookback=64, horizon=5).fit(y[:60])


# ------------------------------------------------------------------------- no mutation
def test_fit_and_forecast_do_not_mutate_their_inputs():
    y = logistic_map(300, seed=7)
    y[[50, 120]] = np.nan  # exercise the missing-value filling
    y2 = np.column_stack([y, logistic_map(300, seed=8)])
    df = pd.DataFrame(y2, columns=["a", "b"])
    for data in (y, y2, pd.Series(y), df):
        before = data.copy()
        fc = ResidualProjectionForecaster(
            base_params={"lags": 3}, embedding=4, horizon=2, sigma=SIGMAS
        )
        fc.fit(data)
        fc.forecast_path(data, horizon=2)
        fc.forecast(data, horizon=1)
        fc.predict(2)
        if isinstance(data, np.ndarray):
            np.testing.assert_array_equal(data, before)
        else:
            pd.testing.assert_frame_equal(pd.DataFrame(data), pd.DataFrame(before))


def test_filter_fit_and_filter_do_not_mutate_their_inputs():
    clean, noisy = square_wave(800, seed=1)
    noisy[[10, 400]] = np.nan
    for x, target in (
        (noisy, clean),
        (pd.Series(noisy), pd.Series(clean)),
        (pd.DataFrame({"a": noisy, "b": noisy[::-1]}), pd.DataFrame({"a": clean, "b": clean})),
    ):
        x0, t0 = x.copy(), target.copy()
        f = ResidualProjectionFilter(window=8, embedding=4, sigma=SIGMAS).fit(x, target=target)
        f.filter(x)
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, x0)
            np.testing.assert_array_equal(target, t0)
        else:
            pd.testing.assert_frame_equal(pd.DataFrame(x), pd.DataFrame(x0))
            pd.testing.assert_frame_equal(pd.DataFrame(target), pd.DataFrame(t0))


# ---------------------------------------------------------------------------------- filter
def reference_filter(f, x_train, target_train, x):
    """Rebuild the filter's library and its output on ``x`` (1-D) with explicit loops."""
    m = f.embedding
    ahead = 0 if f.causal else m // 2

    def keys(lin):
        z = (lin - f.mean_[0]) / f.scale_[0]
        T = len(z)
        # [z[t+ahead], ..., z[t+ahead-m+1]], the ends repeated past the edges
        return np.array([z[np.clip(t + ahead - np.arange(m), 0, T - 1)] for t in range(T)])

    plain = WienerFIRFilter(window=f.window, causal=f.causal, ridge=f.ridge)
    plain.fit(x_train, target=target_train)
    lin_tr = plain.filter(x_train)
    rows = slice(max(0, len(x_train) - f.library_size), len(x_train))
    K = keys(lin_tr)[rows]
    R = (target_train - lin_tr)[rows, None]
    np.testing.assert_allclose(f.library_[0][0], K, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(f.library_[0][1], R, rtol=1e-10, atol=1e-10)
    lin = plain.filter(x)
    null = None if f.fade is None else f.null_distance_[0]
    return lin + f.alpha_[0] * kernel_regression_reference(keys(lin), K, R, f.sigma_[0], null)[:, 0]


@pytest.mark.parametrize("causal", [True, False])
def test_filter_equals_slow_reference(causal):
    clean, noisy = square_wave(1400, seed=2)
    f = ResidualProjectionFilter(window=12, causal=causal, embedding=6, library_size=400)
    f.fit(noisy[:1000], target=clean[:1000])
    assert f.alpha_[0] > 0, "the test needs a correction that is actually used"
    out = f.filter(noisy[1000:])
    ref = reference_filter(f, noisy[:1000], clean[:1000], noisy[1000:])
    np.testing.assert_allclose(out, ref, rtol=1e-8, atol=1e-10)


def test_filter_needs_the_clean_target():
    clean, noisy = square_wave(400)
    with pytest.raises(ValueError, match="target"):
        ResidualProjectionFilter().fit(noisy)
    with pytest.raises(ValueError, match="shape"):
        ResidualProjectionFilter().fit(noisy, target=clean[:300])


def test_filter_bad_inputs():
    clean, noisy = square_wave(400)
    cases = [({"sigma": bad}, ValueError, "sigma") for bad in (0, -1.0, [], [0.2, np.nan])]
    cases += [({"holdout": bad}, ValueError, "holdout") for bad in (0, 1, 2.0)]
    cases += [({"ridge": -1.0}, ValueError, "ridge"), ({"ridge": "x"}, TypeError, "ridge")]
    cases += [({name: 0}, ValueError, name) for name in ("window", "embedding", "library_size")]
    for kwargs, exc, name in cases:
        with pytest.raises(exc, match=name):
            ResidualProjectionFilter(**kwargs).fit(noisy, target=clean)
    with pytest.raises(ValueError, match="fitted"):
        ResidualProjectionFilter().filter(noisy)
    with pytest.raises(ValueError, match="too few"):
        ResidualProjectionFilter(window=16, embedding=8).fit(noisy[:30], target=clean[:30])
    f = ResidualProjectionFilter(window=8, embedding=4).fit(noisy, target=clean)
    with pytest.raises(ValueError, match="x has 2 channel"):
        f.filter(np.column_stack([noisy, noisy]))


def test_causal_filter_output_at_t_uses_only_samples_up_to_t():
    clean, noisy = square_wave(1200, seed=3)
    f = ResidualProjectionFilter(window=12, embedding=6, causal=True)
    f.fit(noisy[:900], target=clean[:900])
    assert f.alpha_[0] > 0
    out = f.filter(noisy)
    rng = np.random.default_rng(0)
    for t in (0, 5, 300, 950, 1198):
        changed = noisy.copy()
        changed[t + 1 :] = 50.0 * rng.normal(size=len(noisy) - t - 1)
        np.testing.assert_allclose(f.filter(changed)[: t + 1], out[: t + 1], rtol=1e-12)
        np.testing.assert_allclose(f.filter(noisy[: t + 1]), out[: t + 1], rtol=1e-12)


def test_zero_phase_filter_keeps_the_shape_and_looks_ahead():
    clean, noisy = square_wave(1200, seed=3)
    f = ResidualProjectionFilter(window=12, embedding=6, causal=False)
    f.fit(noisy[:900], target=clean[:900])
    assert f.causal is False
    out = f.filter(noisy)
    assert out.shape == noisy.shape and np.isfinite(out).all()
    changed = noisy.copy()
    changed[601:] += 5.0
    assert not np.allclose(f.filter(changed)[600], out[600])  # two-sided: sees t+1 onwards


@pytest.mark.parametrize("causal", [True, False])
def test_filter_beats_wiener_fir_and_the_noisy_input_on_a_square_wave(causal):
    for seed in range(2):
        clean, noisy = square_wave(3000, seed=seed)
        n = 2000
        f = ResidualProjectionFilter(window=16, embedding=8, causal=causal)
        f.fit(noisy[:n], target=clean[:n])
        w = WienerFIRFilter(window=16, causal=causal).fit(noisy[:n], target=clean[:n])

        hybrid = tail_mse(f.filter(noisy), clean, n)
        linear = tail_mse(w.filter(noisy), clean, n)
        assert hybrid <= 1.05 * linear
        assert hybrid < tail_mse(noisy, clean, n)
        assert hybrid < 0.5 * linear  # measured ~0.1-0.2: edges are where the FIR is weak


@pytest.mark.parametrize("causal", [True, False])
def test_filter_is_within_5_percent_of_wiener_fir_on_ar2_plus_white_noise(causal):
    for seed in range(2):
        rng = np.random.default_rng(100 + seed)
        clean = ar2(3000, seed=seed)
        noisy = clean + rng.standard_normal(3000)
        n = 2000
        f = ResidualProjectionFilter(window=16, embedding=8, causal=causal)
        f.fit(noisy[:n], target=clean[:n])
        w = WienerFIRFilter(window=16, causal=causal).fit(noisy[:n], target=clean[:n])
        hybrid = tail_mse(f.filter(noisy), clean, n)
        linear = tail_mse(w.filter(noisy), clean, n)
        assert hybrid <= 1.05 * linear, (seed, hybrid, linear)
        if f.alpha_[0] == 0:  # alpha 0 gives back the Wiener FIR exactly
            np.testing.assert_array_equal(f.filter(noisy), w.filter(noisy))


def test_multichannel_filter_equals_per_channel_fits():
    clean0, noisy0 = square_wave(1200, seed=4)
    clean1, noisy1 = square_wave(1200, seed=5, noise=0.5)
    clean, noisy = np.column_stack([clean0, clean1]), np.column_stack([noisy0, noisy1])
    f = ResidualProjectionFilter(window=12, embedding=6, sigma=SIGMAS)
    f.fit(noisy[:900], target=clean[:900])
    assert f.alpha_.shape == (2,) and f.sigma_.shape == (2,) and len(f.library_) == 2
    out = f.filter(noisy)
    assert out.shape == (1200, 2)
    for c in range(2):
        one = ResidualProjectionFilter(window=12, embedding=6, sigma=SIGMAS)
        one.fit(noisy[:900, c], target=clean[:900, c])
        assert one.alpha_[0] == f.alpha_[c] and one.sigma_[0] == f.sigma_[c]
        np.testing.assert_allclose(out[:, c], one.filter(noisy[:, c]), rtol=1e-12, atol=1e-12)


def test_filter_pandas_in_pandas_out():
    clean, noisy = square_wave(800, seed=6)
    idx = pd.date_range("2024-01-01", periods=800, freq="min")
    s = pd.Series(noisy, index=idx, name="sig")
    f = ResidualProjectionFilter(window=8, embedding=4, sigma=SIGMAS)
    f.fit(s, target=pd.Series(clean, index=idx))
    out = f.filter(s)
    assert isinstance(out, pd.Series) and out.index.equals(idx) and out.name == "sig"
    np.testing.assert_array_equal(out.to_numpy(), f.filter(noisy))
    df = pd.DataFrame({"a": noisy, "b": noisy[::-1]}, index=idx)
    g = ResidualProjectionFilter(window=8, embedding=4, sigma=SIGMAS)
    g.fit(df, target=pd.DataFrame({"a": clean, "b": clean[::-1]}, index=idx))
    out_df = g.filter(df)
    assert isinstance(out_df, pd.DataFrame)
    assert out_df.index.equals(idx) and list(out_df.columns) == ["a", "b"]


@pytest.mark.parametrize("fade", [2.0, None])
def test_forecast_for_a_pattern_far_from_the_library_falls_back_to_the_linear_base(fade):
    y = logistic_map(1500, seed=3)
    fc = ResidualProjectionForecaster(base_params={"lags": 4}, embedding=4, horizon=2, fade=fade)
    fc.fit(y[:1000])
    assert (fc.alpha_ > 0).all(), "the test needs corrections that are used"
    shifted = y[:1100] + 50.0  # a level never seen in training: patterns far from every key
    got = fc.forecast_path(shifted, horizon=2)[1000:]
    base = fc.base_.forecast_path(shifted, horizon=2)[1000:]
    if fade is None:  # the nearest training pattern's residual is added, however far it is
        assert np.max(np.abs(got - base)) > 1e-3
    else:
        np.testing.assert_allclose(got, base, rtol=0, atol=1e-12)


def test_filter_for_a_pattern_far_from_the_library_falls_back_to_the_wiener_fir():
    clean, noisy = square_wave(2000, seed=4)
    f = ResidualProjectionFilter(window=12, embedding=6).fit(noisy[:1500], target=clean[:1500])
    assert f.alpha_[0] > 0
    far = noisy[1500:] + 100.0
    np.testing.assert_allclose(f.filter(far), f.base_.filter(far), rtol=0, atol=1e-9)


@pytest.mark.parametrize("cls", [ResidualProjectionForecaster, ResidualProjectionFilter])
def test_fade_must_be_positive_or_none(cls):
    clean, noisy = square_wave(600)
    fit = (lambda e: e.fit(noisy)) if cls is ResidualProjectionForecaster else (
        lambda e: e.fit(noisy, target=clean)
    )  # fmt: skip
    for bad, exc in ((0.0, ValueError), (-1.0, ValueError), (float("inf"), ValueError),
                     (True, TypeError)):  # fmt: skip
        with pytest.raises(exc, match="fade"):
            fit(cls(fade=bad))
    assert fit(cls(fade=None, sigma=SIGMAS)).fade is None


def test_predict_uses_the_end_of_the_fitted_series_only():
    y = logistic_map(1500, seed=2)
    fc = ResidualProjectionForecaster(base_params={"lags": 4}, embedding=4, horizon=3).fit(y)
    full = fc.forecast_path(y, horizon=3)[-1]
    np.testing.assert_allclose(fc.predict(3), full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fc.predict(2), full[:2], rtol=1e-10, atol=1e-12)


def test_filter_rejects_a_non_finite_target():
    clean, noisy = square_wave(600, seed=1)
    clean = clean.copy()
    clean[10] = np.nan
    with pytest.raises(ValueError, match="target"):
        ResidualProjectionFilter(window=8, embedding=4).fit(noisy, target=clean)


def test_fade_is_off_when_holdout_patterns_repeat_exactly():
    t = np.arange(3000)
    clean = np.sin(2 * np.pi * t / 16) ** 3  # exactly periodic: every pattern is in the library
    noisy = clean + 0.2 * np.random.default_rng(0).standard_normal(3000)
    fc = ResidualProjectionForecaster(base_params={"lags": 4}, embedding=8, horizon=2).fit(clean)
    assert fc.null_distance_ == [None]
    f = ResidualProjectionFilter(window=8, embedding=4).fit(noisy, target=clean)
    assert np.isfinite(f.null_distance_).all()  # noisy keys: the radius is calibrated


def test_an_fir_length_that_looks_like_an_old_library_size_is_flagged():
    clean, noisy = square_wave(3000)
    with pytest.warns(UserWarning, match="library_size"):
        ResidualProjectionFilter(window=2000, embedding=4, sigma=SIGMAS).fit(noisy, target=clean)


def test_an_unknown_base_parameter_is_refused_naming_it_and_the_base():
    # it was Python's "__init__() got an unexpected keyword argument 'lags'"
    y = np.sin(np.arange(400) / 7)
    with pytest.raises(ValueError, match=r"base_params: unknown parameter\(s\) \['lags'\] for "
                       r"base='dlinear'; valid: lookback"):  # fmt: skip
        ResidualProjectionForecaster(base="dlinear", base_params={"lags": 3}).fit(y)


@pytest.mark.parametrize("cls", [ResidualProjectionFilter, WienerFIRFilter])
def test_a_target_whose_squares_underflow_is_refused_naming_it(cls):
    # at 1e-200 every squared error against the target was 0: the hybrid's residual
    # correction was switched off without a word (alpha 0); refused as such an x is
    clean, noisy = square_wave(600, seed=1)
    with pytest.raises(ValueError, match="target channel 0 is at most 1e-200 in magnitude"):
        cls(window=8).fit(noisy, target=clean * 1e-200)
    assert cls(window=8).fit(noisy, target=clean * 1e-140).filter(noisy).shape == noisy.shape


@pytest.mark.parametrize("cls", [ResidualProjectionFilter, WienerFIRFilter, ProjectionFilter])
def test_a_pandas_target_indexed_unlike_x_is_refused_not_paired_by_position(cls):
    # a target of another period (or sorted otherwise) was fitted against the wrong samples
    clean, noisy = square_wave(600, seed=1)
    x = pd.Series(noisy, index=pd.date_range("2024-01-01", periods=600, freq="s"))
    shifted = pd.Series(clean, index=x.index + pd.Timedelta("1h"))
    with pytest.raises(ValueError, match="target's index is not x's"):
        cls().fit(x, target=shifted)
    reversed_ = pd.Series(clean[::-1], index=x.index[::-1])  # the same rows, read backwards
    with pytest.raises(ValueError, match="target's index is not x's"):
        cls().fit(x, target=reversed_)
    aligned = pd.Series(clean, index=x.index)  # the same index, or plain numpy: fitted
    assert cls().fit(x, target=aligned).filter(x).shape == x.shape
    assert cls().fit(x, target=clean).filter(x).shape == x.shape


@pytest.mark.parametrize("cls", [ResidualProjectionFilter, WienerFIRFilter, ProjectionFilter])
def test_a_dataframe_target_with_x_columns_in_another_order_is_refused(cls):
    # each channel was fitted against the other's clean reference without a word
    clean, noisy = square_wave(600, seed=1)
    x = pd.DataFrame({"a": noisy, "b": -noisy})
    swapped = pd.DataFrame({"b": -clean, "a": clean})
    with pytest.raises(ValueError, match=r"target's columns \['b', 'a'\] are x's"):
        cls().fit(x, target=swapped)
    # the columns are tested, not the search: the projection filter's narrowed to one window
    kw = {"window": [16], "embedding": [1]} if cls is ProjectionFilter else {}
    assert cls(**kw).fit(x, target=swapped[["a", "b"]]).filter(x).shape == x.shape
    named = pd.DataFrame({"clean_a": clean, "clean_b": -clean})  # other names: by position
    assert cls(**kw).fit(x, target=named).filter(x).shape == x.shape


@pytest.mark.parametrize("fitted_fade, later_fade", [(None, 2.0), (2.0, None)])
def test_fade_changed_after_fit_leaves_the_filter_output_as_fitted(fitted_fade, later_fade):
    # fitted without fade, then fade=2.0: the filter read its 0 as a fade radius and faded
    # every correction out (three times the error), where the forecaster kept its fit
    clean, noisy = square_wave(1200, seed=1)
    f = ResidualProjectionFilter(fade=fitted_fade).fit(noisy[:900], target=clean[:900])
    before = f.filter(noisy)
    np.testing.assert_array_equal(f.set_params(fade=later_fade).filter(noisy), before)


def _lorenz_pair_stopping_at(stop: int):
    """(y (3000, 2), its first 1500 rows with channel 0 missing from ``stop`` on, the
    forecaster's settings): two copies of a Lorenz coordinate, forecast 3 steps ahead."""
    x = np.asarray(lorenz(3000)).reshape(3000, -1)[:, 0]
    y = np.column_stack([x, x])
    train = y[:1500].copy()
    train[stop:, 0] = np.nan
    return y, train, dict(base_params={"lags": 8}, embedding=8, horizon=3, channel_independent=True)


def test_a_channel_stopping_early_is_scored_on_its_readings_not_on_its_filled_tail():
    # the holdout scored forecasts of channel 0's last reading held for 200 samples: every
    # correction lost there, alpha 0, forecasts 15 times worse than a fit on its readings
    y, train, kw = _lorenz_pair_stopping_at(1300)
    fc = ResidualProjectionForecaster(**kw).fit(train)
    assert (fc.alpha_[:, 0] > 0).all()
    path = fc.forecast_path(y, 3)
    mse = np.mean((path[1600:2990, 2, 0] - y[1603:2993, 0]) ** 2)
    assert mse < 5e-4  # on the readings alone 1.7e-4; scored on the filled tail 2.1e-3


@pytest.mark.parametrize("cls", [ResidualProjectionFilter, WienerFIRFilter])
def test_a_supervised_fit_ends_at_x_last_reading_not_on_its_filled_tail(cls):
    # x stopped at 800 of 1200 with the target known: its held last reading was fitted to
    # the moving target (the FIR 3 times worse than on the readings, worse than x itself)
    # and the holdout, all in the tail, switched the correction off (25 times worse)
    clean, noisy = square_wave(2400, seed=0)
    x = noisy[:1200].copy()
    x[800:] = np.nan
    stopped = cls().fit(x, target=clean[:1200]).filter(noisy)
    readings = cls().fit(noisy[:800], target=clean[:800]).filter(noisy)

    def mse(y):
        return np.mean((y[1500:] - clean[1500:]) ** 2)

    assert mse(stopped) < 1.1 * mse(readings)


def test_a_channel_whose_readings_stop_too_early_is_refused_naming_it():
    """A channel of x whose readings end before the head can hold a window and an embedding
    names the channel and where it stops (the series' own length is long enough)."""
    rng = np.random.default_rng(0)
    clean = np.column_stack([np.sin(np.arange(200) / 5.0)] * 2)
    x = clean + 0.1 * rng.standard_normal(clean.shape)
    x[30:, 1] = np.nan
    with pytest.raises(ValueError, match=r"x channel 1 stops at sample 29 of 200 .*window=16"):
        ResidualProjectionFilter().fit(x, target=clean)


def test_a_channel_stopping_before_the_holdout_gets_its_correction_chosen_on_its_own_readings():
    # channel 0 stops at 1000 of 1500 samples, before the holdout (the last 375): it had no
    # residual to score there, alpha came out 0 (the correction silently off) and its 3-step
    # MSE was 2.1e-3; chosen on the last quarter of its own readings 1.4e-4, as a fit of its
    # 1000 readings alone (1.4e-4)
    y, train, kw = _lorenz_pair_stopping_at(1000)
    fc = ResidualProjectionForecaster(**kw).fit(train)
    assert (fc.alpha_[:, 0] > 0).all()
    path = fc.forecast_path(y, 3)
    assert np.mean((path[1600:2990, 2, 0] - y[1603:2993, 0]) ** 2) < 5e-4
    # too few readings to choose it on: said, and off
    train[20:, 0] = np.nan
    with pytest.warns(UserWarning, match="channel 0 stops at sample 19"):
        fc = ResidualProjectionForecaster(**kw).fit(train)
    assert (fc.alpha_[:, 0] == 0).all()


def test_a_channel_that_starts_late_keeps_its_missing_head_out_of_the_scale_and_library():
    # channel 1 starts at 500 of 1500: its head, filled with its first reading, entered its
    # mean (-0.009 against -1.79 of its readings), its scale (6.82 against 7.76) and its
    # library (1490 patterns, 500 of them the copied reading, against the 990 of its readings)
    x = np.asarray(lorenz(3000)).reshape(3000, -1)[:, 0]
    train = np.column_stack([x, x])[:1500]
    train[:500, 1] = np.nan
    kw = dict(base_params={"lags": 8}, embedding=8, horizon=3, channel_independent=True)
    fc = ResidualProjectionForecaster(**kw).fit(train)
    alone = ResidualProjectionForecaster(**kw).fit(train[500:, [1]])  # its readings alone
    np.testing.assert_allclose([fc.mean_[1], fc.scale_[1]], [x[500:1500].mean(), x[500:1500].std()])
    keys = fc.library_[0][:, 1]
    keys = keys[np.isfinite(keys).all(axis=1)]
    assert keys.shape == alone.library_[0][:, 0].shape == (990, 8)
    np.testing.assert_allclose(keys, alone.library_[0][:, 0], rtol=1e-12)
    # and its AutoReg base from its first reading: its forecasts are those of the fit alone
    # (3-step MSE 1.3e-4; 2.8e-3 with the filled head in the library and scale, 1.7e-3 in the base)
    y = np.column_stack([x, x])
    got = fc.forecast_path(y, 3)[1500:, :, 1]
    np.testing.assert_allclose(got, alone.forecast_path(y[:, [1]], 3)[1500:, :, 0], rtol=1e-9)
    # a start in the holdout: no pattern of its own there to choose its correction on
    train[:1300, 1] = np.nan
    with pytest.warns(UserWarning, match=r"channel\(s\) \[1\] start at sample\(s\) \[1300\], "
                      "too late to choose a correction before the holdout"):  # fmt: skip
        fc = ResidualProjectionForecaster(**kw).fit(train)
    assert (fc.alpha_[:, 1] == 0).all() and (fc.alpha_[:, 0] > 0).all()
    with pytest.warns(UserWarning, match=r"\[1300\], .*every channel's stays off"):
        fc = ResidualProjectionForecaster(**{**kw, "channel_independent": False}).fit(train)
    assert (fc.alpha_ == 0).all()  # the joint pattern holds channel 1: none before 1300


def test_a_channel_stopping_early_leaves_the_other_channels_their_whole_library(tmp_path):
    # channel_independent: the library kept only the rows where every channel had a residual,
    # so channel 1, complete, lost all but 50 rows to channel 0 stopping at 60 of 1500: its
    # alpha came out 0 and its 3-step MSE was 2.1e-3 against 1.2e-4 with channel 0 complete
    y, train, kw = _lorenz_pair_stopping_at(60)
    complete = ResidualProjectionForecaster(**kw).fit(y[:1500])
    fc = ResidualProjectionForecaster(**kw).fit(train)
    np.testing.assert_array_equal(fc.alpha_[:, 1], complete.alpha_[:, 1])
    path = fc.forecast_path(y, 3)
    np.testing.assert_allclose(path[:, :, 1], complete.forecast_path(y, 3)[:, :, 1], rtol=1e-12)
    fc.save(tmp_path / "e")  # its library's rows past channel 0's end: NaN in channel 0's
    again = ResidualProjectionForecaster.load(tmp_path / "e")
    np.testing.assert_array_equal(again.forecast_path(y, 3), path)


def test_a_univariate_series_stopping_before_the_holdout_gets_its_correction_on_its_readings():
    # the last 500 of 1500 samples missing: no residual in the holdout, alpha 0, 3-step MSE
    # 2.1e-3; chosen on the last quarter of its 1000 readings: 1.4e-4
    x = np.asarray(lorenz(3000)).reshape(3000, -1)[:, 0]
    train = x[:1500].copy()
    train[1000:] = np.nan
    fc = ResidualProjectionForecaster(base_params={"lags": 8}, embedding=8, horizon=3)
    fc.fit(train)
    assert (fc.alpha_ > 0).all()
    path = fc.forecast_path(x, 3)
    assert np.mean((path[1600:2990, 2] - x[1603:2993]) ** 2) < 5e-4


def test_a_joint_pattern_with_a_channel_stopping_before_the_holdout_says_so():
    # every channel's correction came out off (alpha 0), silently: the holdout's joint
    # patterns hold channel 0's last reading
    x = np.asarray(lorenz(1500)).reshape(1500, -1)[:, 0]
    train = np.column_stack([x, x])
    train[1000:, 0] = np.nan
    fc = ResidualProjectionForecaster(base_params={"lags": 8}, embedding=8, horizon=3)
    with pytest.warns(UserWarning, match="channel 0 stops at sample 999.*channel_independent"):
        fc.fit(train)


@pytest.mark.parametrize("channel_independent", [False, True])
def test_a_channel_stopping_before_the_newest_library_size_rows_still_has_library_size_patterns(
    channel_independent,
):
    # the library was the newest library_size rows of the series: channel 0 stopping at 250
    # of 400 left it none of the newest 50, and fit said "y is too short" of 400 samples
    y = np.column_stack([logistic_map(400, seed=1), 100 * logistic_map(400, seed=2)])
    y[250:, 0] = np.nan
    kw = dict(base_params={"lags": 4}, embedding=4, horizon=3, library_size=50)
    fc = ResidualProjectionForecaster(channel_independent=channel_independent, **kw).fit(y)
    keys, resid = fc.library_
    known = np.isfinite(keys).all(axis=2) & np.isfinite(resid).all(axis=1)[:, : keys.shape[1]]
    assert (known.sum(axis=0) == 50).all()  # each pattern group: its newest 50 known rows
    assert np.isfinite(fc.forecast_path(y, 3)[300:]).all()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_residual_filter_query_beyond_float64_squares_takes_its_nearest_keys_residual():
    # a channel of spread 1e-6 (standardised x 1e11) and a reading of 9e149: the patterns
    # that hold it lie 1e155 from every key, whose squared distances overflow float64. The
    # narrow kernel's limit is the nearest key (as the lag kernel's): those rows took the
    # uniform mean of the library's residuals (-3e-23 where they are +-1e-6)
    rng = np.random.default_rng(0)
    t = np.arange(1500)
    clean = 1e-6 * np.sign(np.sin(t / 15))
    noisy = clean + 3e-7 * rng.normal(size=1500)
    f = ResidualProjectionFilter(window=8, embedding=3, fade=None).fit(noisy, clean)
    assert f.alpha_[0] > 0.5
    z = noisy.copy()
    z[700] = 9e149
    corr = (f.filter(z) - f.base_.filter(z)) / f.alpha_[0]
    keys, resid = f.library_[0]
    queries = f._keys(f.base_._filter_1d(z, 0), 0)
    far = np.flatnonzero(np.abs(queries).max(axis=1) > 1.4e154)  # squares past float64
    far = far[np.abs(f.base_.filter(z)[far]) < 1.0]  # where the base leaves the digits
    assert far.size >= 2
    # so far out, the nearest key is the one farthest along the query's direction
    nearest = np.argmax(keys @ (queries[far] / np.abs(queries[far]).max(axis=1)[:, None]).T, 0)
    np.testing.assert_allclose(corr[far], resid[nearest, 0], rtol=1e-6)
