"""Names moved or renamed in 0.2 keep working for one release, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
import torch

import tssdpa


@pytest.mark.parametrize(
    "module, names",
    [
        ("tssdpa.functional", ["projection_sdpa", "projection_weights", "FUSED_MAX_LOGIT_ERROR"]),
        ("tssdpa.naive", ["projection_sdpa_math", "squared_distances", "masked_softmax"]),
        ("tssdpa.compare.protocols", ["denoise_tasks", "forecast_tasks", "DenoiseTask"]),
        ("tssdpa.filters.systems", ["DenoisingSystem", "ForecastingSystem", "train_system"]),
    ],
)
def test_old_module_paths_import_with_a_warning(module, names):
    sys.modules.pop(module, None)
    with pytest.warns(DeprecationWarning, match="deprecated"):
        mod = importlib.import_module(module)
    assert all(hasattr(mod, n) for n in names)


@pytest.mark.parametrize(
    "package, name, new",
    [
        ("tssdpa.baselines", "BaseDenoiser", "tssdpa.estimators.Denoiser"),
        ("tssdpa.baselines", "BaseForecaster", "tssdpa.estimators.Forecaster"),
        ("tssdpa.filters", "DenoisingSystem", "tssdpa.models.DenoisingSystem"),
        ("tssdpa.filters", "ForecastingSystem", "tssdpa.models.ForecastingSystem"),
    ],
)
def test_moved_names_resolve_to_their_new_home(package, name, new):
    with pytest.warns(DeprecationWarning):
        old = getattr(importlib.import_module(package), name)
    mod, _, attr = new.rpartition(".")
    assert old is getattr(importlib.import_module(mod), attr)


def test_decay_with_timestamps_still_means_tau_in_time_structure():
    from tssdpa.ops import time_structure

    t = torch.arange(4.0)
    want = time_structure(4, 4, tau=2.0, timestamps=(t, t))
    with pytest.warns(DeprecationWarning, match="tau"):
        got = time_structure(4, 4, decay=2.0, timestamps=(t, t))
    torch.testing.assert_close(got[1], want[1])
    assert (got[1] <= 0).all()  # weights fall with the time gap


def test_fit_scores_is_a_deprecated_view_of_cv_results():
    x = np.sin(np.arange(300) * 0.1) + 0.1 * np.random.default_rng(0).normal(size=300)
    f = tssdpa.ProjectionFilter(window=8, embedding=1, degree=0, sigma=[0.1, 0.3]).fit(x)
    with pytest.warns(DeprecationWarning, match="cv_results_"):
        scores = f.fit_scores_
    assert [s["sigma"] for s in scores] == [0.1, 0.3]
    fc = tssdpa.ProjectionForecaster(embedding=3, sigma=[0.5, 1.0], model="mean").fit(x)
    with pytest.warns(DeprecationWarning, match="cv_results_"):
        assert {s["sigma"] for s in fc.fit_scores_} == {0.5, 1.0}
