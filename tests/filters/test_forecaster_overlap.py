"""A series that repeats the fitted one is recognised as such to float32 rounding."""

from __future__ import annotations

import numpy as np

from tssdpa import ProjectionForecaster
from tssdpa.filters.analogues import training_overlap


def _noisy_sine(n=1400, seed=0):
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n) / 15) + 0.05 * rng.standard_normal(n)


def test_a_float32_copy_of_the_log_forecasts_as_the_log_itself():
    """The fitted rows of a buffer were found by exact equality: a float32 copy of the same
    log was a new series, its fitted rows keyed a second time, and its forecasts inside and
    after them moved by as much as the forecast error."""
    x = _noisy_sine()
    fc = ProjectionForecaster(horizon=2).fit(x[:800])
    y = x.astype(np.float32)
    assert training_overlap(x[:800, None], np.asarray(y, np.float64)[:, None]) == (800, 0)
    a, b = fc.forecast_path(x, 2), fc.forecast_path(y, 2)
    np.testing.assert_allclose(b, a, atol=1e-4)  # (float32 rounding, 1e-7, carried through)


def test_a_different_series_is_not_taken_for_the_fitted_one():
    x = _noisy_sine()
    other = x[:800] + 1e-4  # every value off by far more than float32 rounding
    assert training_overlap(x[:800, None], other[:, None])[0] == 0


def test_another_log_on_a_large_offset_is_not_taken_for_the_fitted_one():
    """A tolerance relative to the values (2^-22 of 1e7: 2.4) took another log of a sine on
    an offset of 1e7 for the fitted one, and its own patterns never became keys."""
    rng = np.random.default_rng(1)
    t = np.arange(400)
    train = 1e7 + np.sin(t / 10) + 0.3 * rng.standard_normal(400)
    other = 1e7 + np.sin(t / 10) + 0.3 * rng.standard_normal(400)
    assert training_overlap(train[:, None], other[:, None])[0] == 0
