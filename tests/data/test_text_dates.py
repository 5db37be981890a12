"""Dates with the day and month as numbers are read in the order that keeps the times in
order with the smaller largest step (tssdpa.data.text_dates).

The first rule (the order whose steps are most often the median step) read US monthly dates
day-first (January 1st to 12th, then a jump of a year: calendar months are never regular) and
refused irregular logs of the first twelve days of a month as ambiguous."""

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa.data.tables import find_time_column
from tssdpa.data.text_dates import parse_dates

_RNG = np.random.default_rng(0)
_IRREGULAR = pd.Timestamp("2026-05-01") + pd.to_timedelta(
    np.sort(_RNG.uniform(0, 5 * 86400, 200)).round(), unit="s"
)
CASES = {
    "day-first hourly": (pd.date_range("2026-05-01", periods=240, freq="h"), "%d/%m/%Y %H:%M"),
    "US monthly": (pd.date_range("2024-01-01", periods=24, freq="MS"), "%m/%d/%Y"),
    "irregular day-first": (_IRREGULAR, "%d/%m/%Y %H:%M:%S"),
    "irregular US": (_IRREGULAR, "%m/%d/%Y %H:%M:%S"),
    "two-digit years": (pd.date_range("2026-05-01", periods=100, freq="h"), "%d.%m.%y %H:%M"),
}


@pytest.mark.parametrize("case", CASES)
def test_dates_are_read_in_the_order_that_gives_the_times_they_were_written_from(case):
    times, fmt = CASES[case]
    cells = pd.Series(list(times.strftime(fmt)), dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas' format notes are not for the user
        parsed, note = parse_dates(cells, "when")
    want = times.tz_localize("UTC").floor("min" if "%S" not in fmt else "s")
    assert (parsed.to_numpy() == want.to_numpy()).all()
    first = "day" if fmt.startswith("%d") else "month"
    assert note.startswith(f"time column 'when': dates read {first}-first")


def test_an_empty_cell_leaves_the_column_found_and_read_day_first():
    hours = pd.date_range("2026-05-01", periods=48, freq="h").strftime("%d/%m/%Y %H:%M")
    frame = pd.DataFrame({"when": list(hours), "a": np.arange(48.0)}, dtype=object)
    frame.loc[5, "when"] = None
    frame["a"] = frame["a"].astype(float)
    assert find_time_column(frame) == "when"
    parsed, note = parse_dates(frame["when"], "when")
    assert "day-first" in note and parsed.isna().sum() == 1
    assert parsed[4] == pd.Timestamp("2026-05-01 04:00", tz="UTC")


def test_the_same_dates_in_another_order_are_parsed_anew_not_taken_from_the_last_column():
    # the parse cache was keyed by the sum of the rows' hashes: a log reversed got the times of
    # the one before, in order, and passed the check of steps backwards
    from tssdpa.data.tables import sample_times

    hours = pd.date_range("2026-05-01", periods=60, freq="h").strftime("%d/%m/%Y %H:%M")
    forward = pd.DataFrame({"when": list(hours), "a": np.arange(60.0)})
    backward = forward.iloc[::-1].reset_index(drop=True)

    class Tau:
        tau = 3600.0

    assert (np.diff(sample_times(Tau(), forward, "when")) > 0).all()
    with pytest.raises(ValueError, match="steps backwards"):
        sample_times(Tau(), backward, "when")


def test_columns_parsed_side_by_side_in_threads_each_get_their_own_times():
    from concurrent.futures import ThreadPoolExecutor

    columns = [
        pd.Series(list(pd.date_range(f"2026-05-{d:02d}", periods=30, freq="h").strftime(
            "%d/%m/%Y %H:%M")), dtype=object)
        for d in range(1, 10)
    ]  # fmt: skip
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda c: parse_dates(c, "when")[0].iloc[0].day, columns * 4))
    assert got == list(range(1, 10)) * 4


@pytest.mark.parametrize("fmt", ["%d/%m/%Y", "%m/%d/%Y"])
def test_twelve_days_that_read_as_twelve_months_the_other_way_are_refused(fmt):
    # 01/05 .. 12/05: May 1st to 12th, or the 5th of each month; the smaller step is no
    # evidence (a review's case: US monthly dates within a year were read as daily)
    days = pd.date_range("2026-05-01", periods=12, freq="D").strftime(fmt)
    with pytest.raises(ValueError, match="days in a row read one way and months in a row"):
        parse_dates(pd.Series(list(days), dtype=object), "when")


@pytest.mark.parametrize("zone", [None, "UTC", "Europe/Berlin"])
def test_iso_times_whose_cells_differ_in_precision_are_all_read(zone):
    # Python's isoformat() leaves out a zero fraction: 12:00:00, 12:00:00.500000, 12:00:01.
    # pandas took the first cell's format for every cell and read the others as no date, so
    # a tau filter refused the column ("data row 2 is no number or date") and the notes of
    # its gaps were silent; across a daylight-saving change the offsets differ too
    times = pd.date_range("2026-03-29 01:58", periods=400, freq="500ms", tz=zone)
    cells = pd.Series([t.isoformat() for t in times.to_pydatetime()], dtype=object)
    assert cells[0].endswith(":00") and "." in cells[1]
    assert zone != "Europe/Berlin" or {"+01:00", "+02:00"} == {c[-6:] for c in cells}
    parsed, note = parse_dates(cells, "time")
    want = times.tz_localize("UTC") if zone is None else times.tz_convert("UTC")
    assert note is None and (parsed.to_numpy() == want.to_numpy()).all()


def test_iso_times_with_and_without_an_offset_in_one_column_are_refused_naming_both():
    # read with the first cell's format, the other kind were no dates; read cell by cell, the
    # ones without an offset would be taken as UTC, hours from the others, without a word
    cells = pd.Series(["2026-10-24T23:00:00+02:00", "2026-10-24T23:15:00+02:00",
                       "2026-10-24 23:30:00", "2026-10-24T23:45:00+02:00"])  # fmt: skip
    for column in (cells, cells[::-1].reset_index(drop=True)):
        with pytest.raises(ValueError, match=r"time column 'time': data row \d \('2026-10-24 "
                           r"23:30:00'\) has no UTC offset, but data row \d \('2026-10-24T23:"
                           r"\d\d:00\+02:00'\) has one"):  # fmt: skip
            parse_dates(column, "time")
    cells[2] = "soon"  # a cell that is no date is still named as such (by the caller)
    parsed, _ = parse_dates(cells, "time")
    assert parsed.isna().tolist() == [False, False, True, False]


@pytest.mark.parametrize("fraction", ["123456789", "100000001"])
def test_iso_times_whose_later_cells_hold_nanoseconds_are_read_to_the_nanosecond(fraction):
    # pandas gave the column the first cell's resolution (us, from 12:00:00) and refused the
    # nanoseconds of the cells read after it: TypeError, a traceback for tssdpa filter
    cells = pd.Series(["2026-01-01 12:00:00", f"2026-01-01 12:00:00.{fraction}"] * 3)
    parsed, note = parse_dates(cells, "t")
    want = pd.to_datetime(list(cells), utc=True, format="ISO8601")
    assert note is None and (parsed.to_numpy() == want.to_numpy()).all()
    assert parsed[1] - parsed[0] == pd.Timedelta(int(fraction), unit="ns")
