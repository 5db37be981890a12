"""The residual hybrids as harness methods: registered, buildable, evaluated end to end."""

from __future__ import annotations

import numpy as np
import pytest

from tssdpa.compare import evaluate_denoiser, evaluate_forecaster, get_method
from tssdpa.data import denoise_tasks, forecast_tasks
from tssdpa.filters import ResidualProjectionFilter, ResidualProjectionForecaster


def test_both_classes_are_registered_in_the_comparison_harness():
    fc = get_method("projection_residual", "forecast")
    assert fc.factory is ResidualProjectionForecaster and fc.family == "projection"
    for name, causal in (("projection_residual", True), ("projection_residual_zp", False)):
        spec = get_method(name, "denoise")
        assert spec.factory is ResidualProjectionFilter
        assert spec.causal is causal and spec.fixed == {"causal": causal}
        assert spec.build({}).causal is causal


def test_residual_forecaster_runs_through_the_harness():
    task = forecast_tasks("ar2", seeds=(0,), n=400, horizons=(1, 3), lookback=16)[0]
    rows, _ = evaluate_forecaster(get_method("projection_residual", "forecast"), task, budget=1)
    assert [r["horizon"] for r in rows] == [1, 3]
    assert all(np.isfinite(r["mse"]) and r["n_origins"] > 0 for r in rows)


@pytest.mark.parametrize("name", ["projection_residual", "projection_residual_zp"])
def test_residual_filter_runs_through_the_harness(name):
    task = denoise_tasks("sinusoids", seeds=(0,), settings=[("gaussian", 10.0)], n=400)[0]
    spec = get_method(name, "denoise")
    row, _ = evaluate_denoiser(spec, task, budget=1)
    assert np.isfinite(row["rmse"]) and np.isfinite(row["snr_gain_db"])
    assert row["causal"] == spec.causal
