"""Dates written as text with the day and month as numbers (``01/05/2026 13:00``), read in the
order the column shows.

pandas reads such dates month-first: a day-first log of May 1st to 10th hourly became January
5th, ..., the days a month apart, without a word, and a day-first column of dates alone failed
at its 13th day. Both orders are tried; the one whose times are all valid, increasing and
regular is used, and which one is said wherever both parse.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

__all__ = ["is_numbered_dates", "parse_dates"]

#: a date that starts with the day and month as numbers, in either order: 1/5/2026, 01.05.26
_NUMBERED = re.compile(r"^\s*\d{1,2}([/.-])\d{1,2}\1(\d{4}|\d{2})(\D|$)")


def is_numbered_dates(cells: pd.Series) -> bool:
    """Whether every value of a text column is a date written with the day and month as
    numbers, in an order that :func:`parse_dates` can read all of."""
    text = cells.dropna()
    if text.empty or not all(isinstance(v, str) and _NUMBERED.match(v) for v in text):
        return False
    return any(not _parse(cells, first).isna().any() for first in ("day", "month"))


def _parse(cells: pd.Series, first: str) -> pd.Series:
    return pd.to_datetime(cells, errors="coerce", utc=True, dayfirst=first == "day")


def _regular_share(t: pd.Series) -> float:
    """The share of the steps that are the median step (1 for a regular log)."""
    steps = np.diff(t.to_numpy(dtype="datetime64[ns]").astype(np.int64))
    return float(np.mean(steps == np.median(steps))) if steps.size else 1.0


def parse_dates(cells: pd.Series, name) -> tuple[pd.Series, str | None]:
    """``(times, note)``: a text column of dates parsed as UTC datetimes (NaT where a cell is
    none), and where its day and month are numbers that parse in both orders, which order was
    used and why (None otherwise). ``ValueError`` naming the column where both orders give
    valid, increasing times and neither is more regular: which is meant matters to the times."""
    if not is_numbered_dates(cells):
        return pd.to_datetime(cells, errors="coerce", utc=True), None
    parsed = {first: _parse(cells, first) for first in ("day", "month")}
    valid = {first: t for first, t in parsed.items() if not t.isna().any()}
    if len(valid) == 1:
        return next(iter(valid.values())), None
    day, month = valid["day"], valid["month"]
    if day.equals(month):  # every day is the month's number: either order reads the same
        return day, None
    ordered = {f: t for f, t in valid.items() if t.is_monotonic_increasing}
    if len(ordered) == 1:
        (first, t), why = next(iter(ordered.items())), "only so are they in order"
    else:
        shares = {f: _regular_share(t) for f, t in (ordered or valid).items()}
        if shares["day"] == shares["month"]:
            raise ValueError(f"time column {name!r}: its dates ({cells.iloc[0]!r}, ...) read "
                             "day-first and month-first alike; write them as ISO 8601 "
                             "(2026-05-01 13:00)")  # fmt: skip
        first = max(shares, key=shares.get)
        t, why = valid[first], "only so are they evenly spaced"
    other = "month" if first == "day" else "day"
    note = (f"time column {name!r}: dates read {first}-first ({cells.iloc[0]!r} is "
            f"{t.iloc[0]:%Y-%m-%d}), not {other}-first: {why}")  # fmt: skip
    return t, note
