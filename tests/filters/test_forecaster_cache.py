"""A fitted forecaster keeps what its forecasts derive from the fitted series between calls
(tssdpa/filters/library_cache.py): the outputs are those of a fresh build, bit for bit, and
nothing stale survives a refit, a copy or a pickle; ``predict(steps, y=buffer)`` forecasts the
buffer's last origin as its path does."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from tssdpa import ProjectionForecaster
from tssdpa.filters.library_cache import fitted_views

#: every model, and the default search (per-anchor structures, contenders)
EVERY_MODEL = [
    {"model": "mean", "embedding": 4},
    {"model": "local_linear", "embedding": 3},
    {"model": "hybrid", "embedding": 3},
    {"model": "linear", "embedding": 12},
    {"model": "recursive_linear", "embedding": 6},
    {},
]


def _series(n=900, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return np.sin(t / 9) + 0.4 * np.sin(t / 23) ** 3 + 0.03 * rng.standard_normal(n)


def _cold(fc):
    """A copy of ``fc`` that builds its views at its first call (a pickle drops them)."""
    fresh = pickle.loads(pickle.dumps(fc))
    assert "_fitted_views" not in fresh.__dict__
    return fresh


@pytest.mark.parametrize("params", EVERY_MODEL)
def test_repeated_calls_give_the_forecasts_of_a_fresh_build(params):
    x = _series()
    y = x[500:].copy()
    y[200] += 6.0  # a glitch in the series forecast: its keys are judged with the reach
    fc = ProjectionForecaster(horizon=4, **params).fit(x[:500])
    first = fc.forecast_path(y)
    assert "_fitted_views" in fc.__dict__
    for buffer in (y, y[150:260], y[-40:]):
        np.testing.assert_array_equal(fc.forecast_path(buffer), _cold(fc).forecast_path(buffer))
    np.testing.assert_array_equal(fc.forecast_path(y), first)
    np.testing.assert_array_equal(fc.predict(9), _cold(fc).predict(9))


def test_a_refit_forecasts_from_its_own_series_not_the_last_fits():
    x, other = _series(seed=0), 2.0 * _series(seed=1)[::-1]
    fc = ProjectionForecaster(horizon=3, model="local_linear", embedding=3).fit(x[:500])
    fc.forecast_path(x[500:])  # views of the first fit built
    fc.fit(other[:500])
    fresh = ProjectionForecaster(horizon=3, model="local_linear", embedding=3).fit(other[:500])
    np.testing.assert_array_equal(fc.forecast_path(other[500:]), fresh.forecast_path(other[500:]))


def test_copies_build_their_own_views():
    x = _series()
    fc = ProjectionForecaster(horizon=2, model="mean", embedding=3).fit(x[:600])
    fc.forecast_path(x[600:])
    for other in (copy.copy(fc), copy.deepcopy(fc)):
        assert "_fitted_views" not in other.__dict__
        np.testing.assert_array_equal(other.forecast_path(x[600:]), fc.forecast_path(x[600:]))


def test_a_linear_model_keeps_its_coefficients_not_its_embeddings():
    """A long linear pattern's embedding of the library is hundreds of MB on a long log:
    kept between calls it would stay in memory for as long as the estimator."""
    x = _series()
    fc = ProjectionForecaster(horizon=2, model="linear", embedding=40).fit(x[:600])
    fc.forecast_path(x[600:])
    kept = [v for k, v in fitted_views(fc).items.items() if k[0] == "data"]
    assert kept and all(lib.keys is None and lib.futures is None and lib.coef for lib in kept)


def test_the_kept_items_stay_within_their_memory_bound(monkeypatch):
    from tssdpa.filters import library_cache

    x = _series()
    fc = ProjectionForecaster(horizon=6, model="local_linear", embedding=3).fit(x[:600])
    whole = fc.forecast_path(x[600:], 6)
    bounded = _cold(fc)
    monkeypatch.setattr(library_cache, "MAX_BYTES", 60_000)  # a few items fit
    np.testing.assert_array_equal(bounded.forecast_path(x[600:], 6), whole)
    views = fitted_views(bounded)
    assert 0 < views.nbytes <= 60_000
    np.testing.assert_array_equal(bounded.forecast_path(x[600:], 6), whole)


@pytest.mark.parametrize("params", EVERY_MODEL)
def test_the_forecasts_after_a_buffer_are_its_last_origins_in_the_path(params):
    x = _series(1100)
    x[760] += 5.0  # a glitch in the buffer: its keys are judged as in the path
    fc = ProjectionForecaster(horizon=4, **params).fit(x[:600])
    for end in (640, 781, 1100):
        buf = x[end - 200 : end]
        # the newest origin alone: its local fits in another batch than the path's (rounding)
        np.testing.assert_allclose(fc.predict(4, y=buf), fc.forecast_path(buf, 4)[-1],
                                   rtol=1e-9, atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(fc.predict(2, y=buf), fc.forecast_path(buf, 2)[-1],
                                   rtol=1e-9, atol=1e-12)  # fmt: skip
