"""A time index with missing times (NaT in a DatetimeIndex, NaN in a float index of times) is
told by the UnevenSamplingWarning: the estimators count samples, and the rows without a time
were taken as equally spaced samples without a word (``predict`` then fell back to positions
for its index, silently too)."""

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa import ProjectionFilter, ProjectionForecaster
from tssdpa.estimators.spacing import UnevenSamplingWarning

Y = np.sin(np.arange(300) * 0.3)
HOURS = pd.date_range("2024-01-01", periods=300, freq="h")


def _told(fit, y) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fit(y)
    return [str(w.message) for w in seen if w.category is UnevenSamplingWarning]


@pytest.mark.parametrize(
    "fit",
    [
        lambda y: ProjectionForecaster(horizon=1, embedding=2).fit(y),
        lambda y: ProjectionFilter(window=8).fit(y),
    ],
    ids=["forecaster", "filter"],
)
def test_a_missing_time_in_a_datetime_index_is_told_naming_the_row(fit):
    # e.g. dates parsed with pd.to_datetime(..., errors="coerce"), one cell unreadable
    y = pd.Series(Y, index=HOURS.where(np.arange(300) != 50, pd.NaT), name="x")
    (said,) = _told(fit, y)
    assert "DatetimeIndex has 1 missing time (NaT), the first at row 50" in said
    assert "notna()" in said  # what to do: drop (or fix) those rows


def test_a_missing_time_in_a_float_index_is_told():
    times = np.arange(300) * 0.5
    times[7] = np.nan
    (said,) = _told(ProjectionForecaster(horizon=1, embedding=2).fit, pd.Series(Y, index=times))
    assert "numeric index has 1 missing time (NaN), the first at row 7" in said


def test_an_index_without_missing_times_is_not_told():
    assert _told(ProjectionForecaster(horizon=1, embedding=2).fit, pd.Series(Y, index=HOURS)) == []
