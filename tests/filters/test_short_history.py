"""A forecasting call on a series shorter than the longest fitted pattern is told so: those
horizons' forecasts are NaN at every origin."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tssdpa import ProjectionForecaster
from tssdpa.baselines import AutoRegForecaster
from tssdpa.estimators.input_notes import ShortHistoryWarning
from tssdpa.filters.residual import ResidualProjectionForecaster


def _series(n=700):
    return np.sin(np.arange(n) / 5) + 0.01 * np.random.default_rng(0).standard_normal(n)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ProjectionForecaster(horizon=2, model="linear", embedding=40),
        lambda: AutoRegForecaster(lags=30),
    ],  # fmt: skip
)
def test_a_history_shorter_than_the_pattern_is_told_and_its_forecasts_are_nan(make):
    y = _series()
    fc = make().fit(y)
    need = fc._predict_context()
    with pytest.warns(ShortHistoryWarning, match=f"has {need - 1} samples, fewer than the {need}"):
        path = fc.forecast_path(y[: need - 1], 2)
    assert np.isnan(path).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShortHistoryWarning)
        assert np.isfinite(fc.forecast_path(y[:need], 2)[-1]).all()  # one pattern: enough


def test_a_model_that_forecasts_from_less_is_not_told():
    y = _series()
    fc = ResidualProjectionForecaster(horizon=2).fit(y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShortHistoryWarning)
        path = fc.forecast_path(y[: fc._predict_context() - 1], 2)
    assert np.isfinite(path[-1]).all()
