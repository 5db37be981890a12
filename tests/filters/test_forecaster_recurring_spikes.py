"""A forecaster's fit keeps spikes that recur at one period (signal to forecast), leaves rare
glitches out, and with ``glitches=None`` keeps every sample."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tssdpa import ProjectionForecaster
from tssdpa.estimators.input_notes import ForecastGlitchWarning, RecurringSpikesWarning
from tssdpa.estimators.recurring import recurring
from tssdpa.filters.analogue_data import seasonal_length


def _weekly_load(n=2400, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    spikes = t % 168 == 100  # a one-hour job every week
    return 10 + np.sin(2 * np.pi * t / 24) + rng.normal(0, 0.1, n) + 50.0 * spikes, spikes


def _mask(rows, n=3000):
    m = np.zeros((n, 1), dtype=bool)
    m[rows, 0] = True
    return m


def _found(rows):
    return {c: (len(r), p) for c, (r, p) in recurring(_mask(rows)).items()}


def test_spikes_at_one_period_recur_and_one_missed_is_allowed():
    assert _found(np.arange(100, 3000, 168)) == {0: (18, 168)}
    assert _found(np.delete(np.arange(100, 3000, 168), 4)) == {0: (17, 168)}


def test_a_stray_glitch_stays_out_and_a_gap_of_weeks_breaks_nothing():
    weekly = np.arange(100, 3000, 168)
    got = recurring(_mask(np.sort(np.r_[weekly, 1000])))
    np.testing.assert_array_equal(got[0][0], weekly)  # the stray at 1000 is not kept
    gap = weekly[(weekly < 900) | (weekly > 1800)]  # five weeks missing
    assert _found(gap) == {0: (len(gap), 168)}


def test_glitches_at_random_times_bursts_and_a_few_do_not_recur():
    rng = np.random.default_rng(0)
    random_times = [np.sort(rng.choice(3000, k, replace=False)) for k in (6, 12, 30) * 100]
    assert sum(bool(recurring(_mask(r))) for r in random_times) <= 3
    assert not recurring(_mask(np.arange(500, 510)))  # adjacent: a burst
    assert not recurring(_mask([100, 268, 436, 604]))  # four: too few to tell


def test_a_weekly_spike_is_kept_as_signal_and_said_so():
    y, spikes = _weekly_load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fc = ProjectionForecaster(horizon=2, model="linear", embedding=169).fit(y)
    kinds = {type(w.message) for w in caught}
    assert RecurringSpikesWarning in kinds and ForecastGlitchWarning not in kinds
    assert "recurring every 168 samples" in str(
        next(w.message for w in caught if isinstance(w.message, RecurringSpikesWarning))
    )
    np.testing.assert_array_equal(fc.train_[:, 0], y)  # nothing left out
    # the pattern that spans a week forecasts the next spike (left out, it never could)
    later, later_spikes = _weekly_load(3000)
    pred = fc.forecast(later, 1)
    at = np.flatnonzero(later_spikes)[-3:] - 1
    assert np.all(np.abs(pred[at] - later[at + 1]) < 5.0)


def test_a_rare_glitch_is_still_left_out():
    y, _ = _weekly_load()
    y = y - 50.0 * (np.arange(len(y)) % 168 == 100)  # no weekly spike
    y[700] += 80.0
    with pytest.warns(ForecastGlitchWarning):
        fc = ProjectionForecaster(horizon=2, model="mean", embedding=3).fit(y)
    assert np.isnan(fc.train_[700, 0])


def test_glitches_none_keeps_every_sample():
    y, _ = _weekly_load()
    y = y - 50.0 * (np.arange(len(y)) % 168 == 100)
    y[700] += 80.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ForecastGlitchWarning)
        fc = ProjectionForecaster(horizon=2, model="mean", embedding=3, glitches=None).fit(y)
    np.testing.assert_array_equal(fc.train_[:, 0], y)


def test_an_unknown_glitches_value_is_refused_naming_it():
    with pytest.raises(ValueError, match="glitches"):
        ProjectionForecaster(glitches="drop").fit(np.sin(np.arange(300) / 5))


def test_the_default_fit_scores_a_pattern_that_spans_the_season():
    """The long linear ladder stopped growing before 168 (64 and 96 improved no score), so
    the default fit saw no week and forecast none of its spikes."""
    y, _ = _weekly_load(3000)
    fc = ProjectionForecaster(horizon=1).fit(y[:2400])
    pred = fc.forecast(y, 1)
    at = np.flatnonzero(np.arange(3000) % 168 == 100)
    at = at[at > 2400] - 1
    assert np.all(np.abs(pred[at] - y[at + 1]) < 5.0)


def test_the_seasonal_length_is_the_highest_autocorrelation_peak_plus_one():
    t = np.arange(3000)
    assert seasonal_length(np.sin(2 * np.pi * t / 60)[:, None], 48, 200) == 61
    noise = np.random.default_rng(0).standard_normal((3000, 1))
    assert seasonal_length(noise, 48, 200) is None  # no peak above 0.3
    assert seasonal_length(np.sin(2 * np.pi * t / 60)[:, None], 48, 55) is None  # beyond reach
