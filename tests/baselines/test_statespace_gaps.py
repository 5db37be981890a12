"""The statsmodels state-space forecasters on a series with gaps: missing samples are missing to
the Kalman filter, as in statsmodels, in the fit and in the forecasts."""

import warnings

import numpy as np
import pytest

from tssdpa import baselines as B


def _ar2_with_gaps(n=600, share=0.15, seed=0):
    rng = np.random.default_rng(seed)
    y = np.zeros(n)
    for t in range(2, n):
        y[t] = 1.2 * y[t - 1] - 0.5 * y[t - 2] + rng.standard_normal()
    gappy = y.copy()
    gappy[rng.random(n) < share] = np.nan
    gappy[[0, 399, n - 1]] = y[[0, 399, n - 1]]  # the fit's span: the first 400 samples
    return y, gappy


@pytest.mark.parametrize(
    "make",
    [
        lambda: B.ARIMAForecaster((2, 0, 0), trend="c"),
        lambda: B.ETSForecaster(trend=True, damped_trend=True),
        lambda: B.UnobservedComponentsForecaster("local linear trend"),
    ],
)
def test_interior_gaps_are_missing_to_the_kalman_filter_not_readings_held(make):
    """Filled forward, a gap was fitted as the last reading repeated (an AR(2) 1.2 / -0.5 with
    15% of its samples missing came out 1.07 / -0.37; statsmodels' own handling of the
    missing samples gives 1.17 / -0.47) and forecast from it as if it had been read (one-step
    MSE 1.62 instead of 1.35 on the test part). The fit is now statsmodels' on the
    standardised series with its gaps, and the forecast from every origin, a missing one
    included, is that of the fitted model applied to the series up to it."""
    _, gappy = _ar2_with_gaps()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = make().fit(gappy[:400])
        fitted, loc, scale = f.models_[0]
        assert (loc, scale) == (np.nanmean(gappy[:400]), np.nanstd(gappy[:400]))
        z = (gappy[:400] - loc) / scale
        ref = f._make(z).fit(disp=False, cov_type="none")
        np.testing.assert_allclose(fitted.res.params, ref.params, rtol=1e-8, atol=1e-10)
        path = f.forecast_path(gappy, horizon=3)
        gaps = np.flatnonzero(np.isnan(gappy))
        origins = [10, 399, 450, *gaps[gaps > 400][:3], 598]
        for t in origins:
            want = fitted.res.apply((gappy[: t + 1] - loc) / scale).forecast(3) * scale + loc
            np.testing.assert_allclose(path[t], want, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(f.forecast(gappy, horizon=2), path[:, 1], rtol=0, atol=0)
        np.testing.assert_allclose(f.predict(2, y=gappy[:451]), path[450, :2], rtol=1e-12)


def test_arima_forecasts_a_gappy_ar2_as_well_as_statsmodels_does():
    y, gappy = _ar2_with_gaps()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = B.ARIMAForecaster((2, 0, 0), trend="c").fit(gappy[:400])
    phi = f.models_[0][0].res.params[1:3]
    np.testing.assert_allclose(phi, [1.2, -0.5], atol=0.06)
    path = f.forecast_path(gappy, horizon=1)[400:-1, 0]
    assert np.mean((path - y[401:]) ** 2) < 1.4


@pytest.mark.parametrize(
    "make",
    [
        lambda: B.ARIMAForecaster((1, 0, 0), trend="c"),
        B.ETSForecaster,
        B.UnobservedComponentsForecaster,
    ],
)
def test_a_state_space_forecast_from_before_the_first_sample_is_nan(make):
    y = np.r_[np.full(3, np.nan), np.sin(np.arange(60) / 4) + 3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fc = make().fit(np.sin(np.arange(200) / 4) + 3.0)
    path = fc.forecast_path(y, horizon=2)
    assert np.isnan(path[:3]).all() and np.isfinite(path[3:]).all()
    assert np.isnan(fc.forecast(y, 1)[:3]).all()
    with pytest.raises(ValueError, match="y is all NaN"):
        fc.forecast_path(np.full(10, np.nan), horizon=2)
    two = np.column_stack([y, y])
    fc2 = make().fit(np.column_stack([y[3:], y[3:]]))
    two[:, 1] = np.nan
    with pytest.raises(ValueError, match="y channel 1 is all NaN"):
        fc2.forecast_path(two, horizon=2)


def test_the_first_state_space_fit_of_a_process_prints_no_convergence_warning():
    # importing statsmodels' warning classes inside the fit's catch_warnings put its "always"
    # filters ahead of the "ignore": the first fit of a process (the first ets cell of a
    # `tssdpa compare` run) printed a ConvergenceWarning with its source line on stderr
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import numpy as np\n"
        "from tssdpa.baselines.statespace import ETSForecaster\n"
        "rng = np.random.default_rng(0)\n"
        "y = np.sin(np.arange(120) / 10) + 0.1 * rng.standard_normal(120)\n"
        "ETSForecaster(trend=True, damped_trend=True, seasonal=4).fit(y)\n"  # no convergence
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert "Warning" not in run.stderr
