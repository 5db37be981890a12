"""What an estimator tells of a row index it reads no times from although it holds them:
dates kept as text (``pandas.read_csv(..., index_col="date")`` without ``parse_dates``).

Such an index was taken without a word: a forecaster's ``predict`` continued it with positions
(``RangeIndex(T, T + steps)``, never a made-up time) where the user expected the next dates,
and gaps or repeated times in it went unseen (:mod:`~tssdpa.estimators.spacing` reads datetime
and numeric indexes only). :func:`text_dates_note` says so, with how to parse them.
"""

from __future__ import annotations

import re
import sys

__all__ = ["text_dates_note"]

#: a date as text: ISO 8601 (2016-07-01, 2016-07-01T00:00) or with the day and month as
#: numbers in either order (01/07/2016 00:00, 1.7.16), as ``tssdpa.data.text_dates`` reads them
_DATE = re.compile(r"^\s*(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}([/.-])\d{1,2}\2(\d{4}|\d{2}))(\D|$)")

#: labels looked at: the first, the last and a few between (the check runs at every forecasting
#: call, and a live loop's buffer is read each tick)
_SAMPLE = 9


def text_dates_note(index, name: str = "y") -> str | None:
    """What to tell where ``index`` (a pandas row index, or None) holds dates written as text,
    else None: every one of a few labels spread over it is a string that starts as a date."""
    pd = sys.modules.get("pandas")  # a pandas index has it loaded; numpy input must not
    if pd is None or not isinstance(index, pd.Index) or isinstance(index, pd.MultiIndex):
        return None
    if len(index) == 0 or not (index.dtype == object or pd.api.types.is_string_dtype(index)):
        return None
    step = max(1, (len(index) - 1) // (_SAMPLE - 1))
    labels = list(index[::step]) + [index[-1]]
    if not all(isinstance(v, str) and _DATE.match(v) for v in labels):
        return None
    return (f"{name}'s index holds dates as text ({index[0]!r} .. {index[-1]!r}), from which "
            f"no times are read")  # fmt: skip
