"""One rule tells times in a user's values (``checks.times_in``), wherever they are read: a
row index read as a time axis (``checks.time_index``), a signal refused for holding times
(``estimators.time_values``) and sample times read as seconds (``checks.to_seconds``).
Expectations are written out by hand: the kind of index, the word for the times, and seconds
since 1970 (``date -u -d 2026-01-01 +%s`` is 1767225600)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from tssdpa.checks import time_index, times_in, to_seconds

DAY, HOUR = dt.date(2026, 1, 1), dt.datetime(2026, 1, 1, 1)
ONE_DAY, NEW_YEAR = dt.timedelta(1), 1767225600.0
AT_ONE = NEW_YEAR + 3600.0


def _arrow(values, dtype: str) -> pd.Index:
    pytest.importorskip("pyarrow")
    return pd.Index(pd.Index(values).astype(dtype))


#: name: (values, how time_index reads them as an index, what times_in tells of them as a
#: column (times_in), to_seconds' first two seconds or the error it raises)
CASES = {
    "datetime64": (lambda: pd.date_range("2026", periods=2, freq="h").to_numpy(),
                   "DatetimeIndex", "datetimes", [NEW_YEAR, AT_ONE]),
    "timedelta64": (lambda: pd.timedelta_range(0, periods=2, freq="s").to_numpy(),
                    "TimedeltaIndex", "timedeltas", [0.0, 1.0]),
    "tz-aware": (lambda: pd.date_range("2026", periods=2, freq="h", tz="Europe/Berlin"),
                 "DatetimeIndex", "datetimes", [NEW_YEAR - 3600.0, NEW_YEAR]),
    "pyarrow timestamps": (lambda: _arrow(pd.date_range("2026", periods=2, freq="h"),
                                          "timestamp[us][pyarrow]"),
                           "DatetimeIndex", "datetimes", [NEW_YEAR, AT_ONE]),
    "pyarrow durations": (lambda: _arrow(pd.timedelta_range(0, periods=2, freq="s"),
                                         "duration[us][pyarrow]"),
                          "TimedeltaIndex", "timedeltas", [0.0, 1.0]),
    "dates": (lambda: [DAY, DAY], "DatetimeIndex", "dates", [NEW_YEAR, NEW_YEAR]),
    "datetimes": (lambda: [HOUR, HOUR], "DatetimeIndex", "datetimes", [AT_ONE, AT_ONE]),
    "Timestamps of two zones": (
        lambda: [pd.Timestamp(HOUR, tz="UTC"), pd.Timestamp(HOUR, tz="Asia/Tokyo")],
        "Index", "datetimes", [AT_ONE, AT_ONE - 9 * 3600.0]),
    "datetime64 objects": (lambda: [np.datetime64("2026-01-01"), np.datetime64("2026-01-02")],
                           "DatetimeIndex", "datetimes", [NEW_YEAR, NEW_YEAR + 86400.0]),
    "timedeltas": (lambda: [ONE_DAY, pd.Timedelta(1, "s")], "TimedeltaIndex", "timedeltas",
                   [86400.0, 1.0]),
    "timedelta64 objects": (lambda: [np.timedelta64(1, "s"), np.timedelta64(2, "s")],
                            "TimedeltaIndex", "timedeltas", [1.0, 2.0]),
    "periods": (lambda: [pd.Period("2026-01", "M"), pd.Period("2026-02", "M")],
                "Index", None, TypeError),
    "date strings": (lambda: ["2026-01-01", "2026-01-02"], "Index", None,
                     [NEW_YEAR, NEW_YEAR + 86400.0]),
    "labels": (lambda: ["a", "b"], "Index", None, TypeError),
    "numbers": (lambda: [1.0, 2.0], "Index", None, [1.0, 2.0]),
    "numbers and pd.NA": (lambda: [1.0, pd.NA], "Index", None, [1.0, np.nan]),
    "integers and pd.NA": (lambda: [3, pd.NA], "Index", None, [3.0, np.nan]),
    "nothing": (lambda: [None, None], "Index", None, [np.nan, np.nan]),
    "dates and datetimes": (lambda: [DAY, HOUR], "DatetimeIndex", "dates", [NEW_YEAR, AT_ONE]),
    "datetimes and dates": (lambda: [HOUR, DAY], "DatetimeIndex", "dates", [AT_ONE, NEW_YEAR]),
    "timedeltas and datetimes": (lambda: [ONE_DAY, HOUR], "Index", "timedeltas", TypeError),
    "a number then a datetime": (lambda: [1.0, HOUR], "Index", "datetimes", [0.0, AT_ONE]),
    "a number then a date": (lambda: [1.0, DAY], "Index", "dates", [0.0, NEW_YEAR]),
    "a number then a timedelta": (lambda: [1, ONE_DAY], "Index", "timedeltas", TypeError),
    "text then a Timestamp": (lambda: ["a", pd.Timestamp(0)], "Index", "datetimes", TypeError),
    "a number and NaT": (lambda: [1.0, pd.NaT], "Index", "datetimes", [0.0, np.nan]),
    "NaN and datetime64 NaT": (lambda: [np.nan, np.datetime64("NaT")], "DatetimeIndex",
                               "datetimes", [np.nan, np.nan]),
    "NaT alone": (lambda: [pd.NaT, pd.NaT], "DatetimeIndex", "datetimes", [np.nan, np.nan]),
    "a datetime and None": (lambda: [HOUR, None], "DatetimeIndex", "datetimes", [AT_ONE, np.nan]),
    "a date and NaT": (lambda: [DAY, pd.NaT], "DatetimeIndex", "dates", [NEW_YEAR, np.nan]),
    "NaT and a date": (lambda: [pd.NaT, DAY], "DatetimeIndex", "dates", [np.nan, NEW_YEAR]),
    "a timedelta and None": (lambda: [ONE_DAY, None], "TimedeltaIndex", "timedeltas",
                             [86400.0, np.nan]),
    "a timedelta and NaT": (lambda: [ONE_DAY, pd.NaT], "TimedeltaIndex", "timedeltas",
                            [86400.0, np.nan]),
    "a timedelta and NaN": (lambda: [ONE_DAY, np.nan], "TimedeltaIndex", "timedeltas",
                            [86400.0, np.nan]),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_an_index_a_column_and_sample_times_are_told_their_times_by_one_rule(case):
    make, index_kind, held, seconds = CASES[case]
    values = make()
    listed = isinstance(values, list)  # Python objects: an object Index, Series and array
    index = pd.Index(values, dtype=object) if listed else pd.Index(values)
    column = pd.Series(values, dtype=object) if listed else pd.Series(index.array)
    assert type(time_index(index)).__name__ == index_kind
    assert times_in(column) == held
    times = np.array(values, dtype=object) if listed else values
    if seconds is TypeError:
        with pytest.raises(TypeError, match="timestamps must be numbers"):
            to_seconds(times)
    else:
        np.testing.assert_allclose(to_seconds(times)[:2], seconds, rtol=0, atol=1e-6)


def test_a_fit_and_a_predict_read_an_index_of_dates_as_times_once_each(monkeypatch):
    """An object index of dates is read as the DatetimeIndex it holds in one C pass per read:
    each check and output of a call read it again (3 times a fit, 5 a ``predict(y=...)``);
    the call's ArrayMeta reads it once (a fit once more: what ``predict`` returns is recorded
    from the series itself)."""
    import sys

    from tssdpa import checks
    from tssdpa.baselines import AutoRegForecaster

    reads, read = [], checks.time_index

    def counted(index):
        reads.append(type(index).__name__)
        return read(index)

    for module in [m for name, m in sys.modules.items() if name.startswith("tssdpa")]:
        if getattr(module, "time_index", None) is read:  # each module's own name for it
            monkeypatch.setattr(module, "time_index", counted)
    days = pd.Index([DAY + dt.timedelta(i) for i in range(60)], dtype=object)
    y = pd.Series(np.sin(np.arange(60) / 5.0), index=days)
    fc = AutoRegForecaster(lags=2).fit(y)
    assert len(reads) == 2
    reads.clear()
    out = fc.predict(3, y=y)
    assert len(reads) == 1
    assert out.index.equals(pd.date_range(DAY + dt.timedelta(60), periods=3, freq="D"))
