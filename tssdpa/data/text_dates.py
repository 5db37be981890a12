"""Dates written as text with the day and month as numbers (``01/05/2026 13:00``), read in the
order the column shows.

pandas reads such dates month-first: a day-first log of May 1st to 10th hourly became January
5th, ..., the days a month apart, without a word, and a day-first column of dates alone failed
at its 13th day. Both orders are tried; of those that read every date and keep the times in
order, the one with the smaller largest step is used (the other order puts a month where a
day goes, or a day where a month goes: US monthly dates 01/01, 02/01, ... read day-first are
twelve days and then a jump of a year), and which one is said wherever both parse.
"""

from __future__ import annotations

import hashlib
import threading
import warnings

import numpy as np
import pandas as pd

from tssdpa.checks import ISO_START, NUMBERED_DATE

__all__ = ["is_numbered_dates", "parse_dates"]

#: a date that starts with the day and month as numbers, in either order: 1/5/2026, 01.05.26
_NUMBERED = NUMBERED_DATE.pattern  # (the text: for pandas' str.match)

#: an ISO 8601 time that ends in its UTC offset (``2026-05-01T12:00:00.5+02:00``, ``...Z``)
_ZONED = r"^\s*\d{4}-\d{1,2}-\d{1,2}[T ].*(?:Z|[+-]\d{2}(?::?\d{2})?)\s*$"

#: the last columns parsed, by a digest of their values in order: one command reads its time
#: column for the time column's choice, the note and the sample times (seven parses of a
#: million dates took 15 s, one takes 2); the threads of ``--out-dir`` share it, under a lock
_PARSED: dict = {}
_KEEP = 4
_LOCK = threading.Lock()

_UNITS = ("s", "ms", "us", "ns")  # datetime64 resolutions, coarse to fine


def _both_orders(cells: pd.Series) -> dict:
    """``{"day": times, "month": times}``: the known cells of ``cells`` parsed day-first and
    month-first (UTC; NaT where a cell does not read so), or ``{}`` where not every known
    cell is a date with the day and month as numbers."""
    if cells.dtype != object and not pd.api.types.is_string_dtype(cells):
        return {}  # numbers: every column is asked while the time column is looked for
    text = cells.dropna()
    texts = text.map(lambda v: isinstance(v, str))
    if text.empty or not texts.head(20).all() or not text.head(20).str.match(_NUMBERED).all():
        return {}  # other text: neither hashed nor kept in the cache
    if not texts.all():
        return {}
    # a digest of the row hashes in order (their sum was the same for the rows reversed, and
    # a reversed log was given the times of the one before)
    rows = pd.util.hash_pandas_object(cells, index=False).to_numpy()
    key = (len(cells), hashlib.blake2b(rows.tobytes(), digest_size=16).digest())
    with _LOCK:
        if key in _PARSED:
            return _PARSED[key]
    parsed = {}
    if text.str.match(_NUMBERED).all():
        with warnings.catch_warnings():  # pandas' "could not infer format" / "dayfirst" notes
            warnings.simplefilter("ignore", UserWarning)
            parsed = {first: pd.to_datetime(cells, errors="coerce", utc=True,
                                            dayfirst=first == "day")
                      for first in ("day", "month")}  # fmt: skip
    with _LOCK:
        while len(_PARSED) >= _KEEP:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[key] = parsed
    return parsed


def _reads_all(t: pd.Series, cells: pd.Series) -> bool:
    """Whether ``t`` has a time wherever ``cells`` has a value (an empty cell is no date)."""
    return not (t.isna() & cells.notna()).any()


def is_numbered_dates(cells: pd.Series) -> bool:
    """Whether every value of a text column is a date written with the day and month as
    numbers, in an order that :func:`parse_dates` can read all of (empty cells aside)."""
    return any(_reads_all(t, cells) for t in _both_orders(cells).values())


def _largest_step(t: pd.Series) -> int:
    steps = np.diff(t.dropna().to_numpy(dtype="datetime64[ns]").astype(np.int64))
    return int(np.abs(steps).max()) if steps.size else 0


def _monthly(t: pd.Series) -> bool:
    """Whether the times ``t`` fall on one day of consecutive months, at one time of day."""
    t = t.dropna()
    if len(t) < 3 or t.dt.day.nunique() != 1 or (t - t.dt.normalize()).nunique() != 1:
        return False
    months = t.dt.year.to_numpy() * 12 + t.dt.month.to_numpy()
    return bool((np.diff(months) == 1).all())


def _with_iso(cells: pd.Series, t: pd.Series, name) -> pd.Series:
    """``t`` (``cells`` read in the format pandas infers from the first) with the cells it
    left unread read as ISO 8601, of any precision: Python's ``isoformat()`` leaves out a
    zero fraction (12:00:00, 12:00:00.500000), and every cell in the other precision was no
    date. ``ValueError`` naming a row of each where some ISO 8601 cells have a UTC offset and
    others not: read cell by cell, those without would be taken as UTC, hours off."""
    missed = (t.isna() & cells.notna()).to_numpy()
    if not missed.any():
        return t
    text = cells.map(lambda v: v if isinstance(v, str) else "")
    iso = text.str.match(ISO_START.pattern).to_numpy()
    zoned = text.str.match(_ZONED).to_numpy()
    if (iso & zoned).any() and (iso & ~zoned).any():
        (a, *_), (b, *_) = np.flatnonzero(iso & ~zoned), np.flatnonzero(iso & zoned)
        raise ValueError(f"time column {name!r}: data row {a + 1} ({cells.iloc[a]!r}) has no "
                         f"UTC offset, but data row {b + 1} ({cells.iloc[b]!r}) has one: "
                         "write every time with its offset (or none)")  # fmt: skip
    filled = pd.to_datetime(cells[missed], errors="coerce", utc=True, format="ISO8601")
    # pandas gives ``t`` the first cell's resolution (12:00:00: us) and refuses finer values
    # (12:00:00.123456789: ns) in it: both are held in the finer of the two
    finer = max(t.dt.unit, filled.dt.unit, key=_UNITS.index)
    t = t.dt.as_unit(finer).copy()
    t[missed] = filled.dt.as_unit(finer)
    return t


def parse_dates(cells: pd.Series, name) -> tuple[pd.Series, str | None]:
    """``(times, note)``: a text column of dates parsed as UTC datetimes (NaT where a cell is
    none), and where its day and month are numbers that parse in both orders, which order was
    used and why (None otherwise). ``ValueError`` naming the column where both orders give
    valid times, in order, with the same largest step, or days in a row one way and months
    in a row the other: which is meant matters to the times."""
    parsed = _both_orders(cells)
    valid = {first: t for first, t in parsed.items() if _reads_all(t, cells)}
    if not valid:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return _with_iso(cells, pd.to_datetime(cells, errors="coerce", utc=True), name), None
    if len(valid) == 1:
        return next(iter(valid.values())), None
    day, month = valid["day"], valid["month"]
    if day.equals(month):  # every day is the month's number: either order reads the same
        return day, None
    ordered = {f: t for f, t in valid.items() if t.dropna().is_monotonic_increasing}
    if len(ordered) == 1:
        (first, t), why = next(iter(ordered.items())), "only so are they in order"
    else:
        largest = {f: _largest_step(t) for f, t in (ordered or valid).items()}
        if largest["day"] == largest["month"]:
            raise ValueError(f"time column {name!r}: its dates ({cells.iloc[0]!r}, ...) give "
                             "times in order with the same largest step read day-first and "
                             "month-first; write them as ISO 8601 (2026-05-01 13:00)")  # fmt: skip
        first = min(largest, key=largest.get)
        t, why = valid[first], "so their largest step is the smaller"
        other = valid["month" if first == "day" else "day"]
        if _monthly(other) and other.dropna().is_monotonic_increasing:
            # 01/01 .. 12/01: twelve days of January, or the first of each month in a year
            raise ValueError(f"time column {name!r}: its dates ({cells.iloc[0]!r}, ...) are "
                             "days in a row read one way and months in a row the other; "
                             "write them as ISO 8601 (2026-05-01 13:00)")  # fmt: skip
    other = "month" if first == "day" else "day"
    note = (f"time column {name!r}: dates read {first}-first ({cells.iloc[0]!r} is "
            f"{t.iloc[0]:%Y-%m-%d}), not {other}-first: {why}")  # fmt: skip
    return t, note
