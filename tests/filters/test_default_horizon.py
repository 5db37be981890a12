"""A forecaster fitted for a horizon forecasts that horizon when none is named.

``ProjectionForecaster(horizon=5).fit(y).forecast(y)`` returned the 1-step forecasts (the
default was 1 whatever the fit), while the learned forecaster's ``forecast_path`` defaulted to
its trained horizon: one call, two meanings, and a 5-step user scored 1-step forecasts."""

import numpy as np
import pytest

from tssdpa.baselines import AutoRegForecaster
from tssdpa.filters import ProjectionForecaster, ResidualProjectionForecaster


def _series(n=600):
    t = np.arange(n)
    return np.sin(t / 7.0) + 0.3 * np.sin(t / 3.1) + 0.01 * np.random.default_rng(0).normal(size=n)


@pytest.mark.parametrize(
    "make",
    [lambda: ProjectionForecaster(horizon=5), lambda: ResidualProjectionForecaster(horizon=5)],
    ids=["projection", "residual"],
)
def test_forecast_and_path_default_to_the_fitted_horizon(make):
    y = _series()
    fc = make().fit(y[:500])
    np.testing.assert_array_equal(fc.forecast(y), fc.forecast(y, horizon=5))
    path = fc.forecast_path(y)
    assert path.shape == (600, 5)
    np.testing.assert_array_equal(path, fc.forecast_path(y, horizon=5))
    assert not np.allclose(fc.forecast(y, horizon=1)[100:], fc.forecast(y)[100:])


def test_a_forecaster_of_any_horizon_defaults_to_one_step():
    y = _series()
    fc = AutoRegForecaster(lags=4).fit(y[:500])
    np.testing.assert_array_equal(fc.forecast(y), fc.forecast(y, horizon=1))
    assert fc.forecast_path(y).shape == (600, 1)
