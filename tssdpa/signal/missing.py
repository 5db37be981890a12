"""Missing samples (NaN): how every filter fills what it cannot compute.

Two families, one per kind of model:

* outputs of the projection filters, which never average a NaN value but may have values
  with no usable key (a key serves the channels it has, so one channel of a row may be
  defined and another not): :func:`fill_forward` (streaming), :func:`fill_backward` (offline
  start), :func:`fill_between` (zero-phase, time-symmetric), each channel on its own;
* inputs of the linear models and forecasters, which need a complete series:
  :func:`fill_missing` (carry forward when causal, interpolate when offline).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "check_not_all_missing",
    "fill_backward",
    "fill_between",
    "fill_forward",
    "fill_missing",
    "reading_ends",
    "reading_span",
    "reading_spans",
    "recent_rows",
    "reading_starts",
    "stops_early",
    "unknown_past_readings",
]


def check_not_all_missing(x2: np.ndarray, name: str = "x", complete: int = 0) -> None:
    """Offline filtering of (T, C) ``x2`` needs a finite value of every channel somewhere (a
    key serves the channels it has), or with ``complete`` (the random-feature recursion,
    whose keys need every channel of a whole pattern) ``complete`` consecutive samples with
    every channel finite."""
    if np.isnan(x2).all():
        raise ValueError(f"{name} is all NaN: nothing to filter")
    known = ~np.isnan(x2)
    complete = int(complete)  # True: one complete sample
    if complete:
        rows = known.all(axis=1).astype(np.int64)
        run = (
            np.convolve(rows, np.ones(complete, np.int64), "valid")
            if len(rows) >= complete
            else rows[:0]
        )
        if not (run == complete).any():
            raise ValueError(f"{name} has no {complete} consecutive sample(s) with every channel "
                             f"finite: a key of recurrent='features' needs a whole pattern "
                             f"(embedding={complete})")  # fmt: skip
    empty = np.flatnonzero(~known.any(axis=0))
    if empty.size:
        raise ValueError(f"{name} channel {int(empty[0])} is all NaN: nothing to filter it from")


def fill_forward(y: np.ndarray, hold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Give every undefined value of (T, C) ``y`` (NaN) its channel's last defined value.

    ``hold`` (C,) is the last defined output of each channel before ``y`` (NaN when there is
    none yet): values before a channel's first defined one take it. Channel by channel, since
    a key serves the channels it has: one channel may be defined where another is not.
    Works in place; returns ``(y, new_hold)``.
    """
    T = y.shape[0]
    if T == 0:
        return y, hold
    undefined = np.isnan(y)
    if undefined.any():
        idx = np.where(undefined, -1, np.arange(T)[:, None])  # (T, C)
        np.maximum.accumulate(idx, axis=0, out=idx)
        src = np.take_along_axis(y, np.maximum(idx, 0), axis=0)
        src = np.where(idx < 0, hold, src)
        y[undefined] = src[undefined]
    return y, np.array(y[-1], dtype=np.float64)


def fill_backward(y: np.ndarray) -> np.ndarray:
    """Offline: each channel's leading undefined values take its first defined one (in
    place)."""
    undefined = np.isnan(y)
    for c in np.flatnonzero(undefined.any(axis=0) & ~undefined.all(axis=0)):
        first = int(np.argmin(undefined[:, c]))
        y[:first, c] = y[first, c]
    return y


def fill_between(y: np.ndarray) -> np.ndarray:
    """Zero-phase: each channel's undefined values are interpolated linearly (in sample index)
    between its nearest defined values on either side, constant beyond the first / last one
    (in place).

    Time-symmetric, so the zero-phase filter of the reversed series stays the reversed output.
    """
    undefined = np.isnan(y)
    rows = np.arange(y.shape[0])
    for c in np.flatnonzero(undefined.any(axis=0) & ~undefined.all(axis=0)):
        gap = undefined[:, c]
        y[gap, c] = np.interp(rows[gap], rows[~gap], y[~gap, c])
    return y


def fill_missing(a: np.ndarray, causal: bool, name: str | None = None) -> np.ndarray:
    """Fill NaN per column of (T, C) ``a``: carry the last value forward (causal) or
    interpolate linearly (offline); leading NaN take the first finite value.

    A column with no finite value raises ``ValueError`` (there is nothing to fill it from),
    naming the argument ``name`` where given. Returns ``a`` itself when it has no NaN, else a
    filled copy.
    """
    if not np.isnan(a).any():
        return a
    out = a.copy()
    t = np.arange(len(a))
    for c in range(a.shape[1]):
        col = out[:, c]
        ok = np.isfinite(col)
        if not ok.any():
            who = f"channel {c}" if name is None else f"{name} channel {c}"
            who = name if name is not None and a.shape[1] == 1 else who
            raise ValueError(f"{who} is all NaN: nothing to fill it from")
        if causal:
            idx = np.where(ok, t, 0)
            np.maximum.accumulate(idx, out=idx)
            first = np.argmax(ok)
            idx[:first] = first
            out[:, c] = col[idx]
        else:
            out[:, c] = np.interp(t, t[ok], col[ok])
    return out


def reading_ends(a: np.ndarray) -> list[int]:
    """One past each channel's last finite sample of the (T, C) ``a`` (0 for a channel with
    none): a model is fitted up to there, not on a missing tail filled forward."""
    finite = np.isfinite(a)
    return [int(a.shape[0] - np.argmax(finite[::-1, c])) if finite[:, c].any() else 0
            for c in range(a.shape[1])]  # fmt: skip


def reading_starts(a: np.ndarray) -> list[int]:
    """Each channel's first finite sample of the (T, C) ``a`` (T for a channel with none): a
    model is fitted from there, not on a missing head filled back with the first reading."""
    finite = np.isfinite(a)
    return [int(np.argmax(finite[:, c])) if finite[:, c].any() else a.shape[0]
            for c in range(a.shape[1])]  # fmt: skip


def newest_known(a: np.ndarray, n: int) -> np.ndarray:
    """The newest ``n`` rows of (T, C) ``a`` up to its last complete row (every channel
    known): a missing tail after it is left out (``a[-n:]`` held no reading of a series whose
    last ``n`` rows or more are missing)."""
    complete = np.flatnonzero(np.isfinite(a).all(axis=1))
    end = int(complete[-1]) + 1 if len(complete) else len(a)
    return a[max(0, end - n) : end]


def unknown_past_readings(values: np.ndarray, ends) -> np.ndarray:
    """(T, C) ``values`` with NaN (unknown) past each channel's ``ends``
    (:func:`reading_ends` of the input): there the input is its last reading held, made up,
    and a fit against ``values`` learnt to map a constant onto them (or scored it)."""
    return np.where(np.arange(len(values))[:, None] < np.asarray(ends), values, np.nan)


def stops_early(name: str, channel: int, end: int, n: int) -> str:
    """The start of a fit's error about ``channel`` of the series ``name`` (``n`` samples)
    whose readings end at ``end`` (:func:`reading_ends`): what is left up to there is what
    was too short, which the series' length does not show."""
    return f"{name} channel {channel} stops at sample {end - 1} of {n} (the rest is missing)"


def reading_spans(a: np.ndarray) -> list[tuple[int, int]]:
    """Each channel's ``(first reading, one past its last)`` of the (T, C) ``a``
    (:func:`reading_starts`, :func:`reading_ends`): the part a model is fitted on."""
    return list(zip(reading_starts(a), reading_ends(a)))


def reading_span(name: str, channel: int, start: int, end: int, n: int) -> str:
    """:func:`stops_early`, for readings that may also start late (at :func:`reading_starts`)."""
    if start == 0:
        return stops_early(name, channel, end, n)
    return (f"{name} channel {channel} has readings from sample {start} to {end - 1} of {n} "
            "only (the rest is missing)")  # fmt: skip


def recent_rows(history: np.ndarray, context: int | None) -> np.ndarray:
    """The trailing ``context`` rows of (T, C) ``history`` that one forecast origin reads
    (all of it for None), reaching back to each channel's last known sample before them: a
    gap at the end is carried forward from it, as over the whole series."""
    if context is None:
        return history
    start = max(0, len(history) - context)
    for c in range(history.shape[1]):
        known = np.flatnonzero(np.isfinite(history[: start + 1, c]))
        if known.size:
            start = min(start, int(known[-1]))
    return history[start:]
