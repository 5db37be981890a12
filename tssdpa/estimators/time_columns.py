"""A DataFrame given to ``fit`` with a column of sample times beside its signals
(:class:`TimeColumnWarning`): every column is a channel, so the times were embedded and
forecast as a signal without a word (pyEDM's frames start with ``Time``: a forecaster given
one forecast worse, and ``forecast`` returned a forecast of ``Time``)."""

from __future__ import annotations

import numpy as np

from tssdpa.checks import LibraryWarning, named_as_times, warn
from tssdpa.estimators.input_notes import user_stacklevel

__all__ = ["TimeColumnWarning", "time_columns", "warn_time_columns"]

#: the largest spread of a column's steps, relative to its step, that still reads as even: a
#: counter (1, 2, 3, ...) or a float clock (0.0, 0.1, ...) is even to rounding; a measured
#: signal, even a smooth monotone one, is not
EVEN = 1e-6


class TimeColumnWarning(LibraryWarning):
    """A DataFrame given to ``fit`` has a column that looks like its sample times (named as
    times, or rising by one step at every row, like a counter): it is fitted as a channel."""


def _counts_rows(v: np.ndarray) -> bool:
    """Whether the column ``v`` rises by the same step at every row (an index-like counter)."""
    if len(v) < 3 or not np.isfinite(v).all():
        return False
    steps = np.diff(v)
    step = float(np.median(steps))
    return step > 0 and float(np.ptp(steps)) <= EVEN * step


def time_columns(a: np.ndarray, columns) -> dict:
    """``{label: why}`` of the columns of the (T, C) values ``a`` of a DataFrame with the
    column labels ``columns`` that look like sample times: named as the CLI's time columns are
    (:func:`named_as_times`; a datetime column is refused by ``as_2d`` before this), or an
    index-like counter. Only beside
    another column: a lone column is the signal, whatever it holds."""
    if a.shape[1] < 2:
        return {}
    found = {}
    for c, label in enumerate(columns):
        if named_as_times(label, a[:, c]):
            found[label] = "is named as sample times"
        elif _counts_rows(a[:, c]):
            found[label] = "rises by the same step at every row, like a counter of samples"
    return found


def warn_time_columns(a: np.ndarray, name: str, meta) -> None:
    """A :class:`TimeColumnWarning` naming the columns of the DataFrame ``name`` (values ``a``,
    :class:`~tssdpa.estimators.arrays.ArrayMeta` ``meta``) that look like its sample times
    (:func:`time_columns`). Not refused: a ramp may be a real channel."""
    if meta is None or meta.kind != "frame":
        return
    found = time_columns(a, list(meta.columns))
    if not found:
        return
    said = "; ".join(f"column {label!r} {why}" for label, why in found.items())
    first = next(iter(found))
    warn(
        f"{name} {said}: every column of a DataFrame is a channel, so it is fitted as a "
        f"signal with the others; if it holds the sample times, make it the index "
        f"({name}.set_index({first!r})) or drop it ({name}.drop(columns={first!r}))",
        TimeColumnWarning,
        stacklevel=user_stacklevel(),
    )
