"""Row indexes from which an estimator reads no times although the user meant them as times:
dates kept as text (``read_csv(index_col="date")`` without ``parse_dates``) and series stacked
in a MultiIndex (a long-format panel, ``(site, date)``). Both were fitted without a word: the
text dates gave ``predict`` an index of positions, and the stacked sites were taken as one
series, each joined to the next end to end. And a time index with missing times (NaT in a
DatetimeIndex, NaN in a float index of times): the rows without a time were taken as equally
spaced samples without a word (``predict`` then fell back to positions, silently too)."""

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


def _forecaster(y):
    return ProjectionForecaster(horizon=1, embedding=2).fit(y)


@pytest.mark.parametrize("fmt", ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%d/%m/%Y %H:%M"])
def test_dates_kept_as_text_in_the_index_are_told_with_how_to_parse_them(fmt):
    y = pd.Series(Y, index=HOURS.strftime(fmt), name="OT")
    (said,) = _told(_forecaster, y)
    assert said.startswith("y's index holds dates as text (")
    assert "predict" in said and "pd.to_datetime(y.index)" in said


def test_a_filter_is_told_of_dates_kept_as_text_too_without_predict():
    y = pd.DataFrame({"a": Y}, index=HOURS.strftime("%Y-%m-%d %H:%M:%S"))
    (said,) = _told(ProjectionFilter(window=8).fit, y)
    assert said.startswith("x's index holds dates as text") and "predict" not in said


@pytest.mark.parametrize(
    "index",
    [
        pd.Index([f"r{i}" for i in range(300)]),  # row names
        pd.Index([str(i) for i in range(300)]),  # numbers as text: no date
        pd.Index([f"2024 run {i}" for i in range(300)]),
        pd.Index([f"2024-01-05_run{i}" for i in range(300)]),  # run names that start as dates
    ],
    ids=["names", "numbers", "words", "run names"],
)
def test_text_labels_that_are_no_dates_are_not_told(index):
    assert _told(_forecaster, pd.Series(Y, index=index)) == []


def test_series_stacked_in_a_multiindex_are_told_as_joined_end_to_end():
    long = pd.concat(
        {"north": pd.Series(Y[:150], index=HOURS[:150]), "south": pd.Series(Y[150:], HOURS[:150])},
        names=["site", "date"],
    )
    (said,) = _told(_forecaster, long)
    assert "level 'site' holds 2 values ('north', 'south')" in said
    assert "one series" in said and "y.xs('north', level='site')" in said


def test_a_multiindex_with_one_outer_value_is_not_told_as_stacked():
    one = pd.concat({"north": pd.Series(Y, index=HOURS)}, names=["site", "date"])
    assert not any("holds" in s for s in _told(_forecaster, one))


def test_series_interleaved_by_time_in_a_multiindex_are_told():
    # (date, site), sorted by date: the sites' readings alternate row by row
    long = (
        pd.concat(
            {
                "north": pd.Series(Y[:150], index=HOURS[:150]),
                "south": pd.Series(Y[150:], HOURS[:150]),
            },
            names=["site", "date"],
        )
        .swaplevel()
        .sort_index()
    )
    (said,) = _told(_forecaster, long)
    assert "level 'date'" in said and "level 'site' holds 2 values" in said


def test_series_stacked_with_their_dates_as_text_are_told():
    # read_csv(index_col=["site", "date"]) without parse_dates: ISO text sorts as time does
    text = pd.Series(Y[:150], index=HOURS[:150].strftime("%Y-%m-%d %H:%M:%S"))
    long = pd.concat({"north": text, "south": text}, names=["site", "date"])
    (said,) = _told(_forecaster, long)
    assert "level 'date' steps back" in said and "level 'site' holds 2 values" in said


def test_a_multiindex_of_one_level_is_no_stack_and_no_crash():
    # pd.MultiIndex.from_arrays([dates]): no other level tells series apart; the search for
    # one raised a bare StopIteration out of fit
    idx = pd.MultiIndex.from_arrays([HOURS[::-1]], names=["date"])
    assert not any("stacked" in m for m in _told(_forecaster, pd.Series(Y, index=idx)))


def test_a_time_of_day_level_or_a_single_label_is_no_stack():
    import pandas as pd

    from tssdpa.estimators.index_notes import stacked_note

    days = pd.date_range("2024-01-01", periods=30, freq="D")
    hours = pd.to_timedelta(range(24), unit="h")
    composite = pd.MultiIndex.from_product([days, hours], names=["date", "hour"])
    assert stacked_note(composite) is None  # one series: a date and a time of day
    one_site = pd.MultiIndex.from_arrays([["A"] * 30, days[::-1]], names=["site", "date"])
    assert stacked_note(one_site) is None
    sites = pd.MultiIndex.from_product([[3, 7], days], names=["site", "date"])
    what, example = stacked_note(sites)
    assert example == "y.xs(3, level='site')" and "holds 2 values (3, 7)" in what


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
