"""Tests for tssdpa.filters.residual: linear model + projection of its residual.

The fast paths (blocked torch kernel regression, the vectorised library / correction code) are
checked against slow explicit-loop references; the statistical behaviour (a correction only
where it pays, on chaotic vs linear data) against the plain linear baselines it wraps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tssdpa.filters.residual as residual
from tssdpa.baselines import AutoRegForecaster, WienerFIRFilter
from tssdpa.data.synthetic import ar2, lorenz
from tssdpa.filters.residual import (
    ResidualProjectionFilter,
    ResidualProjectionForecaster,
    _choose,
    kernel_regression,
)

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


def nw_loop(queries, keys, values, sigma, null=None):
    """Nadaraya–Watson with explicit loops over queries and keys (max-shifted log weights).

    ``null``: a pseudo-key with value 0 at that distance from every query."""
    out = np.empty((len(queries), values.shape[1]))
    for i, q in enumerate(queries):
        logw = [-np.sum((q - k) ** 2) / (2.0 * sigma**2) for k in keys]
        vals = list(values)
        if null is not None:
            logw.append(-(null**2) / (2.0 * sigma**2))
            vals.append(np.zeros(values.shape[1]))
        top = max(logw)
        num, den = np.zeros(values.shape[1]), 0.0
        for lw, v in zip(logw, vals):
            w = np.exp(lw - top)
            num += w * v
            den += w
        out[i] = num / den
    return out


def nw_rows(queries, keys, values, sigma, null=None):
    """Nadaraya–Watson, one query at a time (keys vectorised): for longer reference runs."""
    out = np.empty((len(queries), values.shape[1]))
    for i, q in enumerate(queries):
        logw = -np.sum((keys - q) ** 2, axis=1) / (2.0 * sigma**2)
        top = logw.max() if null is None else max(logw.max(), -(null**2) / (2.0 * sigma**2))
        w = np.exp(logw - top)
        extra = 0.0 if null is None else np.exp(-(null**2) / (2.0 * sigma**2) - top)
        out[i] = w @ values / (w.sum() + extra)
    return out


def choose_loop(resid, corrections, sigmas, z=2.0):
    """_choose written column by column, candidate by candidate, on the finite rows only."""
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


def pattern(z, t, lags):
    """Delay pattern newest first: [z[t], z[t-1], ..., z[t-lags+1]] (rows of z concatenated)."""
    return np.concatenate([np.atleast_1d(z[t - l]) for l in range(lags)])


@pytest.fixture(scope="module")
def two_channel():
    return np.column_stack([logistic_map(500, seed=1), lorenz(500, seed=2)])


# ---------------------------------------------------------------------- kernel regression
@pytest.mark.parametrize("block", [7, 1024])
def test_kernel_regression_equals_explicit_nadaraya_watson_loop(monkeypatch, block):
    monkeypatch.setattr(residual, "_QUERY_BLOCK", block)
    rng = np.random.default_rng(0)
    n = 30 if block == 7 else 1100  # both more queries than one block, and a ragged last block
    q = rng.normal(size=(n, 3))
    k = rng.normal(size=(25, 3))
    v = rng.normal(size=(25, 2))
    sigmas = [0.3, 1.0, 4.0]
    outs = kernel_regression(q, k, v, sigmas)
    assert len(outs) == len(sigmas)
    ref = nw_loop if n <= 100 else nw_rows
    for out, s in zip(outs, sigmas):
        assert out.shape == (n, 2)
        np.testing.assert_allclose(out, ref(q, k, v, s), rtol=1e-10, atol=1e-12)


def test_kernel_regression_blocking_does_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(50, 4)), rng.normal(size=(40, 4)), rng.normal(size=(40, 3))
    whole = kernel_regression(q, k, v, [0.5, 2.0])
    monkeypatch.setattr(residual, "_QUERY_BLOCK", 7)
    blocked = kernel_regression(q, k, v, [0.5, 2.0])
    for a, b in zip(whole, blocked):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_kernel_regression_limits_are_nearest_neighbour_and_plain_mean():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(40, 3)), rng.normal(size=(30, 3)), rng.normal(size=(30, 2))
    tiny, huge = kernel_regression(q, k, v, [1e-3, 1e6])
    nearest = np.argmin(((q[:, None, :] - k[None, :, :]) ** 2).sum(-1), axis=1)
    # logits of -1e5 and below: only a numerically stable softmax gives the nearest key
    np.testing.assert_allclose(tiny, v[nearest], atol=1e-12)
    np.testing.assert_allclose(huge, np.broadcast_to(v.mean(0), huge.shape), atol=1e-9)


def test_kernel_regression_of_wide_values_is_accurate_to_float32_rounding():
    # more than 256 value columns (a long multichannel residual path) are averaged in float32
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(40, 3)), rng.normal(size=(30, 3)), rng.normal(size=(30, 300))
    for s, out in zip([0.1, 1.0], kernel_regression(q, k, v, [0.1, 1.0])):
        assert out.dtype == np.float64 and out.shape == (40, 300)
        np.testing.assert_allclose(out, nw_rows(q, k, v, s), rtol=0, atol=5e-6)


def test_kernel_regression_is_translation_invariant():
    # distances from |q|^2 + |k|^2 - 2 q.k: keys far from the origin must not lose precision
    rng = np.random.default_rng(6)
    q, k, v = rng.normal(size=(40, 3)), rng.normal(size=(30, 3)), rng.normal(size=(30, 2))
    near = kernel_regression(q, k, v, [0.05, 0.3])
    far = kernel_regression(q + 100.0, k + 100.0, v, [0.05, 0.3])
    for a, b in zip(near, far):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-8)


def test_kernel_regression_accepts_float32_queries():
    # keys and values are converted to float64; queries (e.g. float32 features) must be too
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(10, 3)), rng.normal(size=(12, 3)), rng.normal(size=(12, 1))
    (out,) = kernel_regression(q.astype(np.float32), k, v, [0.7])
    np.testing.assert_allclose(out, nw_loop(q.astype(np.float32), k, v, 0.7), rtol=1e-10)


# --------------------------------------------------------------------------------- _choose
def test_choose_keeps_nothing_when_corrections_are_unrelated_noise():
    rng = np.random.default_rng(0)
    resid = rng.normal(size=(500, 6))
    corr = [rng.normal(scale=s, size=(500, 6)) for s in (0.1, 0.5, 1.0, 2.0, 5.0)]
    sig, alpha = _choose(resid, corr, [0.1, 0.2, 0.3, 0.4, 0.5])
    np.testing.assert_array_equal(alpha, np.zeros(6))
    np.testing.assert_array_equal(sig, np.full(6, 0.1))  # the first candidate by convention


def test_choose_picks_the_sigma_whose_correction_explains_the_residual():
    rng = np.random.default_rng(1)
    resid = rng.normal(size=(400, 3))
    corr = [
        rng.normal(size=(400, 3)),  # unrelated
        resid + 0.01 * rng.normal(size=(400, 3)),  # the residual itself
        0.5 * resid + rng.normal(size=(400, 3)),  # related but noisy
    ]
    sig, alpha = _choose(resid, corr, [0.1, 0.7, 3.0])
    np.testing.assert_array_equal(sig, [0.7, 0.7, 0.7])
    np.testing.assert_allclose(alpha, 1.0, atol=0.01)


def test_choose_alpha_is_the_clipped_least_squares_shrinkage():
    rng = np.random.default_rng(2)
    r = rng.normal(size=(300, 3))
    # column 0: c = 2r -> alpha 1/2 exactly; column 1: c = r/2 -> 2 clipped to 1;
    # column 2: c = -r -> negative, clipped to 0 and not kept
    c = np.column_stack([2.0 * r[:, 0], 0.5 * r[:, 1], -r[:, 2]])
    sig, alpha = _choose(r, [c], [1.5])
    np.testing.assert_allclose(alpha, [0.5, 1.0, 0.0], atol=1e-12)
    np.testing.assert_array_equal(sig, [1.5, 1.5, 1.5])


def test_choose_ignores_nan_rows_of_the_residual():
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
    sig, alpha = _choose(with_nan, garbage, [0.2, 0.9])
    keep = ~nan_rows
    s0, a0 = _choose(resid[keep, :1], [c[keep, :1] for c in corr], [0.2, 0.9])
    s1, a1 = _choose(resid[:, 1:], [c[:, 1:] for c in corr], [0.2, 0.9])
    np.testing.assert_array_equal(sig, [s0[0], s1[0]])
    np.testing.assert_allclose(alpha, [a0[0], a1[0]], rtol=1e-12)
    assert alpha[0] > 0.3 and alpha[1] > 0.3  # the test is not vacuous


def test_choose_equals_a_column_by_column_reference():
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
    sig, alpha = _choose(resid, corr, sigmas)
    ref_sig, ref_alpha = choose_loop(resid, corr, sigmas)
    np.testing.assert_array_equal(sig, ref_sig)
    np.testing.assert_allclose(alpha, ref_alpha, rtol=1e-10, atol=1e-14)
    assert (alpha == 0).any() and (alpha > 0).any()


# ------------------------------------------------------------------- forecaster: reference
def reference_forecaster_path(fc, y_train, y, origins):
    """Rebuild the library with explicit loops and the forecast at ``origins`` by hand."""
    a_tr = y_train.reshape(len(y_train), -1)
    a = y.reshape(len(y), -1)
    C, H, L = a.shape[1], fc.horizon, fc.lags
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
            e = nw_loop(q[g][None], K[:, g], vals, sigma, null)[0]
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
        lags=5,
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
    fc = ResidualProjectionForecaster(base_params={"lags": 2}, lags=10, horizon=2).fit(y[:300])
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
        lags=8,
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
    fc = ResidualProjectionForecaster(base_params={"lags": 4}, lags=6, horizon=4, sigma=SIGMAS)
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
    y = logistic_map(1500, seed=0) if series == "logistic" else lorenz(1200, seed=0)
    n = int(0.7 * len(y))
    fc = ResidualProjectionForecaster(base_params={"lags": 8}, lags=8, horizon=1).fit(y[:n])
    plain = AutoRegForecaster(lags=8).fit(y[:n])
    hybrid = step_mse(fc.forecast(y, horizon=1)[n:], y[n:], 1)
    linear = step_mse(plain.forecast(y, horizon=1)[n:], y[n:], 1)
    assert fc.alpha_[0, 0] > 0.5
    # measured: ~1/60 of the AR(8) error on the logistic map, ~1/4.5 on Lorenz
    assert hybrid < 0.5 * linear


def test_hybrid_on_a_linear_ar2_mostly_keeps_the_linear_forecast():
    zero, total = 0, 0
    for seed in range(4):
        y = ar2(2000, seed=seed)
        n = 1400
        fc = ResidualProjectionForecaster(base_params={"lags": 2}, lags=8, horizon=5).fit(y[:n])
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
        lags=6,
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
    one = ResidualProjectionForecaster(base_params={"lags": 4}, lags=6, horizon=3, sigma=SIGMAS)
    one.fit(y[:350, 0])
    assert one.forecast_path(y[:, 0], horizon=3).shape == (500, 3)
    assert one.predict(2).shape == (2,)
    assert one.sigma_.shape == (3, 1) and one.alpha_.shape == (3, 1)


def test_channel_independent_autoreg_hybrid_equals_separate_fits(two_channel):
    y = two_channel
    kw = dict(base_params={"lags": 4}, lags=6, horizon=3, sigma=SIGMAS)
    joint = ResidualProjectionForecaster(channel_independent=True, **kw).fit(y[:350])
    sep = [ResidualProjectionForecaster(**kw).fit(y[:350, c]) for c in range(2)]
    expected = np.stack([m.forecast_path(y[:, c], horizon=3) for c, m in enumerate(sep)], -1)
    np.testing.assert_allclose(joint.forecast_path(y, horizon=3), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(joint.alpha_, np.column_stack([m.alpha_ for m in sep]), rtol=1e-12)
    np.testing.assert_array_equal(joint.sigma_, np.column_stack([m.sigma_ for m in sep]))


def test_forecaster_accepts_pandas_and_get_params_round_trips():
    idx = pd.date_range("2024-01-01", periods=300, freq="h")
    s = pd.Series(logistic_map(300, seed=6), index=idx, name="x")
    fc = ResidualProjectionForecaster(base_params={"lags": 3}, lags=4, horizon=2, sigma=SIGMAS)
    fc.fit(s)
    path = fc.forecast_path(s, horizon=2)
    assert isinstance(path, np.ndarray) and path.shape == (300, 2)
    np.testing.assert_array_equal(path, fc.forecast_path(s.to_numpy(), horizon=2))
    again = fc.set_params(sigma=0.5)
    assert isinstance(again, ResidualProjectionForecaster) and again.sigma == 0.5
    assert again.get_params()["base_params"] == {"lags": 3}
    assert "ResidualProjectionForecaster(" in repr(fc)


# --------------------------------------------------------------------- forecaster: errors
def test_forecaster_bad_inputs():
    y = logistic_map(200)
    with pytest.raises(ValueError, match="base"):
        ResidualProjectionForecaster(base="nope")
    with pytest.raises(TypeError, match="base_params"):
        ResidualProjectionForecaster(base_params=[("lags", 3)])
    for bad in (0, -1.0, [], [0.1, np.nan], np.inf, [0.5, 0.0]):
        with pytest.raises(ValueError, match="sigma"):
            ResidualProjectionForecaster(sigma=bad)
    for bad in (0, 1, -0.2, 1.5, np.nan):
        with pytest.raises(ValueError, match="holdout"):
            ResidualProjectionForecaster(holdout=bad)
    for name in ("lags", "horizon", "lookback", "window", "max_holdout_origins"):
        with pytest.raises(ValueError, match=name):
            ResidualProjectionForecaster(**{name: 0})
    with pytest.raises(ValueError, match="fit"):
        ResidualProjectionForecaster().forecast_path(y)
    fc = ResidualProjectionForecaster(base_params={"lags": 3}, lags=4, horizon=2).fit(y)
    with pytest.raises(ValueError, match="horizon"):
        fc.forecast_path(y, horizon=3)
    with pytest.raises(ValueError, match="horizon"):
        fc.forecast(y, horizon=0)
    with pytest.raises(ValueError, match="steps"):
        fc.predict(3)
    with pytest.raises(ValueError, match="channel"):
        fc.forecast_path(np.column_stack([y, y]), horizon=1)


def test_forecaster_too_short_series_raise():
    y = logistic_map(200)
    with pytest.raises(ValueError, match="3 samples"):
        ResidualProjectionForecaster().fit(y[:2])
    with pytest.raises(ValueError, match="holdout"):  # the AutoReg base cannot be fitted
        ResidualProjectionForecaster(base_params={"lags": 8}, lags=8, horizon=5).fit(y[:20])
    with pytest.raises(ValueError, match="holdout"):  # no complete pattern in the library
        ResidualProjectionForecaster(base_params={"lags": 2}, lags=50, horizon=1).fit(y[:60])
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
        fc = ResidualProjectionForecaster(base_params={"lags": 3}, lags=4, horizon=2, sigma=SIGMAS)
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
        f = ResidualProjectionFilter(taps=8, embedding=4, sigma=SIGMAS).fit(x, target=target)
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

    plain = WienerFIRFilter(taps=f.taps, causal=f.causal, ridge=f.ridge)
    plain.fit(x_train, target=target_train)
    lin_tr = plain.filter(x_train)
    rows = slice(max(0, len(x_train) - f.window), len(x_train))
    K = keys(lin_tr)[rows]
    R = (target_train - lin_tr)[rows, None]
    np.testing.assert_allclose(f.library_[0][0], K, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(f.library_[0][1], R, rtol=1e-10, atol=1e-10)
    lin = plain.filter(x)
    null = None if f.fade is None else f.null_distance_[0]
    return lin + f.alpha_[0] * nw_rows(keys(lin), K, R, f.sigma_[0], null)[:, 0]


@pytest.mark.parametrize("causal", [True, False])
def test_filter_equals_slow_reference(causal):
    clean, noisy = square_wave(1400, seed=2)
    f = ResidualProjectionFilter(taps=12, causal=causal, embedding=6, window=400)
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
    for bad in (0, -1.0, [], [0.2, np.nan]):
        with pytest.raises(ValueError, match="sigma"):
            ResidualProjectionFilter(sigma=bad)
    for bad in (0, 1, 2.0):
        with pytest.raises(ValueError, match="holdout"):
            ResidualProjectionFilter(holdout=bad)
    with pytest.raises(ValueError, match="ridge"):
        ResidualProjectionFilter(ridge=-1.0)
    for name in ("taps", "embedding", "window"):
        with pytest.raises(ValueError, match=name):
            ResidualProjectionFilter(**{name: 0})
    with pytest.raises(ValueError, match="fitted"):
        ResidualProjectionFilter().filter(noisy)
    with pytest.raises(ValueError, match="too few"):
        ResidualProjectionFilter(taps=16, embedding=8).fit(noisy[:30], target=clean[:30])
    f = ResidualProjectionFilter(taps=8, embedding=4).fit(noisy, target=clean)
    with pytest.raises(ValueError, match="channels"):
        f.filter(np.column_stack([noisy, noisy]))


def test_causal_filter_output_at_t_uses_only_samples_up_to_t():
    clean, noisy = square_wave(1200, seed=3)
    f = ResidualProjectionFilter(taps=12, embedding=6, causal=True)
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
    f = ResidualProjectionFilter(taps=12, embedding=6, causal=False)
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
        f = ResidualProjectionFilter(taps=16, embedding=8, causal=causal)
        f.fit(noisy[:n], target=clean[:n])
        w = WienerFIRFilter(taps=16, causal=causal).fit(noisy[:n], target=clean[:n])

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
        f = ResidualProjectionFilter(taps=16, embedding=8, causal=causal)
        f.fit(noisy[:n], target=clean[:n])
        w = WienerFIRFilter(taps=16, causal=causal).fit(noisy[:n], target=clean[:n])
        hybrid = tail_mse(f.filter(noisy), clean, n)
        linear = tail_mse(w.filter(noisy), clean, n)
        assert hybrid <= 1.05 * linear, (seed, hybrid, linear)
        if f.alpha_[0] == 0:  # alpha 0 gives back the Wiener FIR exactly
            np.testing.assert_array_equal(f.filter(noisy), w.filter(noisy))


def test_multichannel_filter_equals_per_channel_fits():
    clean0, noisy0 = square_wave(1200, seed=4)
    clean1, noisy1 = square_wave(1200, seed=5, noise=0.5)
    clean, noisy = np.column_stack([clean0, clean1]), np.column_stack([noisy0, noisy1])
    f = ResidualProjectionFilter(taps=12, embedding=6, sigma=SIGMAS)
    f.fit(noisy[:900], target=clean[:900])
    assert f.alpha_.shape == (2,) and f.sigma_.shape == (2,) and len(f.library_) == 2
    out = f.filter(noisy)
    assert out.shape == (1200, 2)
    for c in range(2):
        one = ResidualProjectionFilter(taps=12, embedding=6, sigma=SIGMAS)
        one.fit(noisy[:900, c], target=clean[:900, c])
        assert one.alpha_[0] == f.alpha_[c] and one.sigma_[0] == f.sigma_[c]
        np.testing.assert_allclose(out[:, c], one.filter(noisy[:, c]), rtol=1e-12, atol=1e-12)


def test_filter_pandas_in_pandas_out():
    clean, noisy = square_wave(800, seed=6)
    idx = pd.date_range("2024-01-01", periods=800, freq="min")
    s = pd.Series(noisy, index=idx, name="sig")
    f = ResidualProjectionFilter(taps=8, embedding=4, sigma=SIGMAS)
    f.fit(s, target=pd.Series(clean, index=idx))
    out = f.filter(s)
    assert isinstance(out, pd.Series) and out.index.equals(idx) and out.name == "sig"
    np.testing.assert_array_equal(out.to_numpy(), f.filter(noisy))
    df = pd.DataFrame({"a": noisy, "b": noisy[::-1]}, index=idx)
    g = ResidualProjectionFilter(taps=8, embedding=4, sigma=SIGMAS)
    g.fit(df, target=pd.DataFrame({"a": clean, "b": clean[::-1]}, index=idx))
    out_df = g.filter(df)
    assert isinstance(out_df, pd.DataFrame)
    assert out_df.index.equals(idx) and list(out_df.columns) == ["a", "b"]


# ------------------------------------------------------------------------------ harness
def test_both_classes_are_registered_in_the_comparison_harness():
    from tssdpa.compare.registry import get_method

    fc = get_method("projection_residual", "forecast")
    assert fc.factory is ResidualProjectionForecaster and fc.family == "projection"
    for name, causal in (("projection_residual", True), ("projection_residual_zp", False)):
        spec = get_method(name, "denoise")
        assert spec.factory is ResidualProjectionFilter
        assert spec.causal is causal and spec.fixed == {"causal": causal}
        assert spec.build({}).causal is causal


def test_residual_forecaster_runs_through_the_harness():
    from tssdpa.compare import forecast_tasks
    from tssdpa.compare.harness import evaluate_forecaster
    from tssdpa.compare.registry import get_method

    task = forecast_tasks("ar2", seeds=(0,), n=400, horizons=(1, 3), lookback=16)[0]
    rows, _ = evaluate_forecaster(get_method("projection_residual", "forecast"), task, budget=1)
    assert [r["horizon"] for r in rows] == [1, 3]
    assert all(np.isfinite(r["mse"]) and r["n_origins"] > 0 for r in rows)


@pytest.mark.parametrize("name", ["projection_residual", "projection_residual_zp"])
def test_residual_filter_runs_through_the_harness(name):
    from tssdpa.compare import denoise_tasks
    from tssdpa.compare.harness import evaluate_denoiser
    from tssdpa.compare.registry import get_method

    task = denoise_tasks("sinusoids", seeds=(0,), settings=[("gaussian", 10.0)], n=400)[0]
    spec = get_method(name, "denoise")
    row, _ = evaluate_denoiser(spec, task, budget=1)
    assert np.isfinite(row["rmse"]) and np.isfinite(row["snr_gain_db"])
    assert row["causal"] == spec.causal


def test_kernel_regression_null_distance_equals_a_zero_valued_pseudo_key():
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(9, 3)), rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    for null in (0.5, 2.0, 10.0):
        (got,) = kernel_regression(q, k, v, [0.8], null_distance=null)
        np.testing.assert_allclose(got, nw_loop(q, k, v, 0.8, null), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fade", [2.0, None])
def test_forecast_for_a_pattern_far_from_the_library_falls_back_to_the_linear_base(fade):
    y = logistic_map(1500, seed=3)
    fc = ResidualProjectionForecaster(base_params={"lags": 4}, lags=4, horizon=2, fade=fade)
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
    f = ResidualProjectionFilter(taps=12, embedding=6).fit(noisy[:1500], target=clean[:1500])
    assert f.alpha_[0] > 0
    far = noisy[1500:] + 100.0
    np.testing.assert_allclose(f.filter(far), f.base_.filter(far), rtol=0, atol=1e-9)


@pytest.mark.parametrize("cls", [ResidualProjectionForecaster, ResidualProjectionFilter])
def test_fade_must_be_positive_or_none(cls):
    for bad in (0.0, -1.0, float("inf"), True):
        with pytest.raises(ValueError, match="fade"):
            cls(fade=bad)
    assert cls(fade=None).fade is None


def test_choose_needs_a_larger_gain_when_successive_errors_overlap():
    rng = np.random.default_rng(11)
    resid = rng.normal(size=(400, 1))
    corr = [0.3 * resid + rng.normal(size=(400, 1))]  # weakly informative correction
    sig, alpha = _choose(resid, corr, [1.0])
    assert alpha[0] > 0  # significant when the rows are independent
    sig, alpha = _choose(resid, corr, [1.0], overlap=np.array([25.0]))
    assert alpha[0] == 0  # 25 rows per independent error: no longer significant


def test_forecaster_argument_errors_name_the_argument():
    for kwargs, name in [
        ({"base_params": {"lookback": 8}, "base": "dlinear"}, "base_params"),
        ({"base_params": {"lags": 0}}, "lags"),
        ({"holdout": "x"}, "holdout"),
        ({"fade": "x"}, "fade"),
        ({"sigma": "x"}, "sigma"),
        ({"sigma": [[0.1, 0.2]]}, "sigma"),
    ]:
        with pytest.raises(ValueError, match=name):
            ResidualProjectionForecaster(**kwargs)
    with pytest.raises(ValueError, match="ridge"):
        ResidualProjectionFilter(ridge="x")


def test_predict_uses_the_end_of_the_fitted_series_only():
    y = logistic_map(1500, seed=2)
    fc = ResidualProjectionForecaster(base_params={"lags": 4}, lags=4, horizon=3).fit(y)
    full = fc.forecast_path(y, horizon=3)[-1]
    np.testing.assert_allclose(fc.predict(3), full, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fc.predict(2), full[:2], rtol=1e-10, atol=1e-12)


def test_filter_rejects_a_non_finite_target():
    clean, noisy = square_wave(600, seed=1)
    clean = clean.copy()
    clean[10] = np.nan
    with pytest.raises(ValueError, match="target"):
        ResidualProjectionFilter(taps=8, embedding=4).fit(noisy, target=clean)


def test_fade_is_off_when_holdout_patterns_repeat_exactly():
    t = np.arange(3000)
    clean = np.sin(2 * np.pi * t / 16) ** 3  # exactly periodic: every pattern is in the library
    noisy = clean + 0.2 * np.random.default_rng(0).standard_normal(3000)
    fc = ResidualProjectionForecaster(base_params={"lags": 4}, lags=8, horizon=2).fit(clean)
    assert fc.null_distance_ == [None]
    f = ResidualProjectionFilter(taps=8, embedding=4).fit(noisy, target=clean)
    assert np.isfinite(f.null_distance_).all()  # noisy keys: the radius is calibrated
