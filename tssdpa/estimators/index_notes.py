"""What an estimator tells of a row index it reads no times from although it holds them:
dates kept as text (``pandas.read_csv(..., index_col="date")`` without ``parse_dates``), and
series stacked in a MultiIndex (a long-format panel, ``(site, date)`` or ``(date, site)``).

Such an index was taken without a word: a forecaster's ``predict`` continued it with positions
(``RangeIndex(T, T + steps)``, never a made-up time) where the user expected the next dates,
and gaps or repeated times in it went unseen (:mod:`~tssdpa.estimators.spacing` reads datetime
and numeric indexes only). :func:`text_dates_note` says so, with how to parse them. Stacked
series were fitted, filtered and forecast as one series, each joined to the next end to end (or
their readings interleaved row by row): :func:`stacked_note` says so.
"""

from __future__ import annotations

import sys
import warnings

from tssdpa.checks import ISO_START, TEXT_DATE

__all__ = ["stacked_note", "text_dates_note"]

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
    labels = _spread(index)
    if not all(isinstance(v, str) and TEXT_DATE.match(v) for v in labels):
        return None
    with warnings.catch_warnings():  # pandas' "could not infer format" notes
        warnings.simplefilter("ignore")
        parsed = pd.to_datetime(pd.Index(labels), format="mixed", errors="coerce")
    if parsed.isna().any():  # labels that start as dates and go on otherwise: run names
        return None
    return (f"{name}'s index holds dates as text ({index[0]!r} .. {index[-1]!r}), from which "
            f"no times are read")  # fmt: skip


def _spread(labels) -> list:
    """About _SAMPLE of ``labels``: the first, the last and some evenly between."""
    step = max(1, (len(labels) - 1) // (_SAMPLE - 1))
    return list(labels[::step]) + [labels[-1]]


def _iso_text(labels) -> bool:
    """Whether a few ``labels`` spread over them are ISO 8601 dates written as text."""
    return all(isinstance(v, str) and ISO_START.match(v) for v in _spread(labels))


def _level_name(index, level: int) -> str:
    """A MultiIndex level as ``xs(level=...)`` takes it: its name, or its number."""
    name = index.names[level]
    return repr(name) if name is not None else str(level)


def stacked_note(index, name: str = "y") -> tuple[str, str] | None:
    """``(what, example)`` where ``index`` is a MultiIndex of rows with a level of times that
    steps back or repeats, as where several series are stacked (its other level tells them
    apart; ``example`` selects the first), else None. A MultiIndex whose times rise, such as
    one series under a single outer label, is no stack."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(index, pd.MultiIndex) or len(index) < 2 or index.nlevels < 2:
        return None  # (one level: no other level tells stacked series apart)
    for level in range(index.nlevels):
        times = index.get_level_values(level)
        if times.dtype.kind in "mM":
            steps = pd.Series(times).diff().iloc[1:].dropna()
            back = int((steps <= pd.Timedelta(0)).sum())
        elif _iso_text(times):  # ISO 8601 text (read_csv without parse_dates) sorts as time
            text = times.to_numpy(dtype=object)
            back = int(sum(b <= a for a, b in zip(text[:-1], text[1:])))
        else:
            continue
        if not back:
            return None
        other = next(i for i in range(index.nlevels) if i != level)
        values = index.get_level_values(other)
        labels = values.unique()
        # a time of day beside the dates (date, hour as a timedelta) is one series' time, and
        # a single label stacks nothing: told as stacks, their advice selected one hour a day
        if values.dtype.kind == "m" or len(labels) < 2:
            return None
        labels = [v.item() if hasattr(v, "item") else v for v in labels]  # 0, not np.int64(0)
        shown = ", ".join(map(repr, labels[:3])) + (", ..." if len(labels) > 3 else "")
        tname, oname = (_level_name(index, i) for i in (level, other))
        return (f"{name}'s rows have a MultiIndex whose level {tname} steps back or repeats a "
                f"time at {back} of {len(index) - 1} rows, as where series are stacked (level "
                f"{oname} holds {len(labels)} values ({shown}))",
                f"{name}.xs({labels[0]!r}, level={oname})")  # fmt: skip
    return None
