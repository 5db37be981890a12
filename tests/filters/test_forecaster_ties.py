"""On quantised data many keys lie at the same distance from a query: which of them are its
neighbours must not depend on how many samples come after it (the forecasts are causal)."""

from __future__ import annotations

import numpy as np

from tssdpa import ProjectionForecaster
from tssdpa.signal.neighbours import causal_neighbours


def _quantised(n, seed=0, step=0.25):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    x = 3 * np.sin(t / 7) + np.sin(t / 17) + 0.5 * rng.standard_normal(n)
    return np.round(x / step) * step  # a few dozen levels: ties everywhere


def test_a_rows_neighbours_among_tied_keys_do_not_depend_on_the_rows_after_it():
    keys = _quantised(3000)[:, None]
    keys = np.hstack([keys[2:], keys[1:-1], keys[:-2]])  # patterns of 3 samples
    whole = causal_neighbours(keys, 6, 2)
    for n in (300, 1111, 2500):
        part = causal_neighbours(keys[:n], 6, 2)
        np.testing.assert_array_equal(part[1], whole[1][:n])
        np.testing.assert_array_equal(part[0], whole[0][:n])


def test_forecasts_on_quantised_data_are_those_of_every_prefix():
    """A block length from the number of keys made the tie order, so a forecast, change with
    the length of the series after its origin (a new user's gyroscope)."""
    x = _quantised(3600, seed=1)
    fc = ProjectionForecaster(horizon=3, model="mean", embedding=3, n_neighbors=8).fit(x[:1200])
    whole = fc.forecast_path(x, 3)
    for n in (1500, 2222, 3000):
        np.testing.assert_array_equal(fc.forecast_path(x[:n], 3), whole[:n])
