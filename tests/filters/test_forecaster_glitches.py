"""A glitch in the series a ProjectionForecaster is fitted on is left out of the fit.

One sample of 1e20 among a sine's made ``predict`` return 2.5e19, and a 1e6 went into a
forecast 500 samples later (the key whose future it was), without a word.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tssdpa import ProjectionForecaster
from tssdpa.estimators.input_notes import ForecastGlitchWarning


def _sine(n: int = 1000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n) / 20) + 0.1 * rng.standard_normal(n)


# 1e20 in the default run; the others (a value a logger might write) under -m slow
@pytest.mark.parametrize(
    "value",
    [
        pytest.param(1e3, marks=pytest.mark.slow),
        1e20,
        pytest.param(-9999.0, marks=pytest.mark.slow),
    ],
)
def test_a_glitch_is_left_out_of_the_fit_and_told(value):
    x = _sine()
    glitched, missing = x.copy(), x.copy()
    glitched[500], missing[500] = value, np.nan
    with pytest.warns(
        ForecastGlitchWarning, match="y channel 0 has 1 glitch .the first at sample 500"
    ):
        fc = ProjectionForecaster(horizon=2).fit(glitched[:800])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the sample missing: nothing to tell
        ref = ProjectionForecaster(horizon=2).fit(missing[:800])
    assert fc.best_params_ == ref.best_params_
    np.testing.assert_array_equal(fc.predict(2), ref.predict(2))
    # forecasts of the part after the fit, from the glitched series as given
    np.testing.assert_array_equal(fc.forecast(glitched, 1)[800:], ref.forecast(glitched, 1)[800:])
    assert np.all(np.abs(fc.predict(2) - np.sin(np.arange(800, 802) / 20)) < 0.3)
    assert glitched[500] == value  # the input is not changed


def test_forecasts_far_from_a_glitch_do_not_weigh_it_as_a_key():
    # the mean of the nearest patterns' futures: the glitch was the future of a key that
    # queries long after it took as a neighbour, through the fitted rows of the series
    x = _sine()
    x[300] = 1e6
    with pytest.warns(ForecastGlitchWarning):
        fc = ProjectionForecaster(horizon=1, model="mean").fit(x[:800])
    pred = fc.forecast(x, 1)
    err = np.abs(pred[:-1] - np.sin(np.arange(1, 1000) / 20))
    far = np.abs(np.arange(999) - 300) > 20
    assert np.nanmax(err[far]) < 1.0


def test_a_series_without_glitches_fits_as_before_without_a_note():
    x = _sine(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fc = ProjectionForecaster(horizon=1).fit(x)
    assert np.array_equal(fc.train_, x[:, None])


def test_a_channel_independent_fit_tells_each_glitch_once_of_its_own_channel():
    # a second pass over a channel, its first glitches gone, found one more (a review's case)
    rng = np.random.default_rng(296)
    y = np.sin(np.arange(400) / 8) + 0.1 * rng.standard_normal(400)
    k = rng.integers(1, 6)
    pos = rng.integers(0, 400, k)
    y[pos] += rng.choice([-1, 1], k) * 10 ** rng.uniform(0, 6, k)
    x = np.column_stack([np.cos(np.arange(400) / 9), y])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fc = ProjectionForecaster(horizon=4, embedding=3, delay=1, channel_independent=True).fit(x)
    told = [str(w.message) for w in seen if issubclass(w.category, ForecastGlitchWarning)]
    assert len(told) == 1 and told[0].startswith("y channel 1 has")
    # the channel models fitted on the series the parent keeps, glitches and all marked
    for c, m in enumerate(fc.channel_models_):
        np.testing.assert_array_equal(m.train_[:, 0], fc.train_[:, c])


def test_forecasts_over_the_fitted_rows_after_a_glitch_are_those_with_the_sample_missing():
    # the fitted series with NaN at the glitch still matches the series given (its rows are
    # not keyed a second time as new ones); past the origins whose own pattern holds it
    y = _sine(800, seed=4)
    y[400] = 1e6
    missing = y.copy()
    missing[400] = np.nan
    with pytest.warns(ForecastGlitchWarning):
        fc = ProjectionForecaster(horizon=1, embedding=4, delay=1, model="mean").fit(y)
    a = fc.forecast_path(y, 1)[410:]
    b = fc.forecast_path(missing, 1)[410:]
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
