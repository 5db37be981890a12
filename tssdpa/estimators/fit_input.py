"""What ``fit`` asks of its series and of a denoiser's clean ``target`` (re-exported by
:mod:`tssdpa.estimators.base`, where they were), and what a denoiser's ``fit`` and ``filter``
tell of its ``x`` (:func:`denoiser_input`)."""

from __future__ import annotations

import numpy as np

from tssdpa.checks import warn
from tssdpa.estimators.arrays import STREAM_TOLD, ArrayMeta, as_2d, check_magnitudes
from tssdpa.estimators.bool_columns import warn_bool_columns
from tssdpa.estimators.input_notes import (
    EmptyChannelWarning,
    ShortHistoryWarning,
    tell,
    user_stacklevel,
)
from tssdpa.estimators.pandas_out import times_as_positions
from tssdpa.estimators.spacing import (
    UnevenSamplingWarning,
    uneven_note,
    warn_other_step,
    warn_uneven,
)
from tssdpa.estimators.time_columns import warn_time_columns
from tssdpa.signal.missing import reading_ends, unknown_past_readings

__all__ = ["FILTER_COUNTS", "channel_named", "check_fit_input", "denoiser_input", "target_like",
           "warn_series", "without_dropout"]  # fmt: skip

#: what a denoiser counts in samples, not time (:func:`~tssdpa.estimators.spacing.warn_uneven`)
FILTER_COUNTS = "its window, cutoff, decay and other per-sample settings"
#: what a denoiser with ``tau`` (ProjectionFilter) may do instead of resampling
TAU_ADVICE = "give tau= (seconds) and it weighs the samples by their times, or "


def denoiser_input(estimator, x, stream: bool = False) -> tuple[np.ndarray, ArrayMeta]:
    """:func:`as_2d` of a denoiser's ``x`` (``fit`` and ``filter`` alike), a
    :class:`~tssdpa.estimators.bool_columns.BoolColumnWarning` for a DataFrame's true / false
    columns (not for a chunk of a stream), and an
    :class:`~tssdpa.estimators.spacing.UnevenSamplingWarning` where its time index
    (DatetimeIndex, TimedeltaIndex) is not equally spaced: the denoiser takes the rows as
    equally spaced samples. Not where it reads the index as the sample times (``tau`` set:
    ProjectionFilter), nor where it counts no samples (``counts_samples = False``:
    IdentityFilter).

    ``stream``: ``x`` is a chunk of a stream (``filter(x, zi=...)``), which may be empty, and
    the warning is given once per estimator, not once per chunk: each chunk's own counts made
    each message new (and the default filter shows each new one), so a 1,000-chunk stream
    printed 1,000 of them."""
    a, meta = as_2d(x, "x", allow_empty=stream)
    if not stream:  # a stream's chunks: its fit said so (each chunk said it again)
        warn_bool_columns("x", meta)
    tau = getattr(estimator, "tau", None)
    told = stream and estimator.__dict__.get(STREAM_TOLD, False)
    if tau is None and getattr(estimator, "counts_samples", True) and not told:
        advice = TAU_ADVICE if hasattr(estimator, "tau") else ""
        if advice and meta.timestamps is None:  # a numeric index: tau reads no index but these
            advice = "give tau= (in its units) and timestamps=x.index, and it weighs the " \
                     "samples by their times, or "  # fmt: skip
        warned = warn_uneven(estimator, meta, "x", FILTER_COUNTS, advice)
        if stream and warned:
            estimator.__dict__[STREAM_TOLD] = True
    return a, meta


def target_like(target, a: np.ndarray, like=None, readings=False) -> np.ndarray | None:
    """A denoiser's clean ``target`` as a (T, C) array shaped like the input ``a`` (or None);
    ``like``: x's :class:`ArrayMeta`, whose pandas index a pandas target's must equal (and
    whose column names a DataFrame target's must not hold in another order). ``readings``:
    NaN (unknown) past each channel's last reading of ``a``, where x is made up by filling."""
    if target is None:
        return None
    tgt, meta = as_2d(target, "target")
    if tgt.shape != a.shape:
        raise ValueError(f"target must have the shape of x {a.shape}; got {tgt.shape}")
    index = None if like is None else like.index
    # the rows are paired by position: a target indexed otherwise (another period, sorted
    # differently) was fitted against the wrong samples without a word
    if index is not None and meta.index is not None and not meta.index.equals(index):
        raise ValueError(
            "target's index is not x's: the rows would pair by position; align it first "
            "(target.reindex(x.index)) or pass numpy arrays"
        )
    # so are the channels: x's own column names in another order fitted a against b's
    # reference (other names, e.g. clean_a, clean_b, still pair by position)
    cols = None if like is None else like.columns
    if cols is not None and meta.columns is not None and not meta.columns.equals(cols):
        if sorted(map(str, meta.columns)) == sorted(map(str, cols)):
            raise ValueError(
                f"target's columns {list(meta.columns)} are x's {list(cols)} in another "
                "order: the channels would pair by position; use target[x.columns]"
            )
    # as x: a channel under 1e-150 squares to 0, so every error against it was 0 and the
    # supervised fits fell back silently (the residual correction switched off)
    check_fit_input(tgt, "target", meta)
    return unknown_past_readings(tgt, reading_ends(a)) if readings else tgt


#: a series with at least this many times more channels than samples is refused by ``fit`` as
#: channels-first (:func:`check_fit_input`)
CHANNELS_FIRST = 10


def channel_named(name: str, c: int, meta: ArrayMeta | None = None) -> str:
    """Channel ``c`` of the argument ``name`` as a user knows it: by its column label where
    ``meta`` is a DataFrame's ("y column 'OT'"), else by position ("y channel 1")."""
    if meta is not None and meta.kind == "frame":
        return f"{name} column {meta.columns[c]!r}"
    return f"{name} channel {c}"


def _reads_every_channel(estimator) -> bool:
    """Whether each channel's forecast of ``estimator`` reads the past of every channel (a
    joint pattern): its fitted choice where it made one (``channel_independent="auto"``),
    else its setting, else what the class says (:meth:`Forecaster._channels_apart`)."""
    apart = estimator.__dict__.get("channel_independent_")
    if apart is None and isinstance(getattr(estimator, "channel_independent", None), bool):
        apart = estimator.channel_independent
    return not (estimator._channels_apart() if apart is None else apart)


def warn_series(estimator, a: np.ndarray, meta: ArrayMeta) -> None:
    """What a forecasting call of ``estimator`` tells of its (T, C) series ``a`` (``meta``):
    an uneven time index (:func:`warn_uneven`), and, where each channel's forecast reads every
    channel, a channel with no finite value (:class:`EmptyChannelWarning`), since it makes
    every forecast NaN (``fit`` refuses one outright: :func:`check_fit_input`). A series with
    no finite value at all is refused (``ValueError``): its every forecast was NaN unsaid."""
    if len(a) and not np.isfinite(a).any():
        raise ValueError("y is all NaN: nothing to forecast from")
    if not warn_uneven(estimator, meta):  # (an uneven index has no one step to compare)
        warn_other_step(estimator, meta)
    need = estimator._predict_context()
    short = need is not None and len(a) < need
    if short and not getattr(type(estimator), "short_history_forecasts", False):
        warn(f"y has {len(a):,} samples, fewer than the {need:,} that the longest "
             f"pattern of {type(estimator).__name__} reads: the horizons that use it "
             "are NaN at every origin; give a longer history (the samples before y: "
             "the end of the fitted series, where y continues it)",
             ShortHistoryWarning, stacklevel=user_stacklevel())  # fmt: skip
    if a.shape[1] < 2 or not _reads_every_channel(estimator):
        return
    empty = np.flatnonzero(~np.isfinite(a).any(axis=0))
    if len(empty):
        labels = list(meta.columns) if meta.kind == "frame" else None
        found = {int(c): None if labels is None else labels[c] for c in empty}
        tell(EmptyChannelWarning(found, type(estimator).__name__))


def check_fit_input(
    a: np.ndarray, name: str, meta: ArrayMeta | None = None, flags_told: bool = False
) -> None:
    """What a ``fit`` asks of its (T, C) series beyond :func:`as_2d`, a ``ValueError`` naming
    ``name`` and the channel (by its column label where ``meta`` is a DataFrame's) otherwise:
    it has fewer than ``CHANNELS_FIRST`` times as many channels (columns) as samples (rows),
    every channel has a known sample, and none is so small (largest magnitude nonzero, below
    1e-150) that its squares underflow to 0. (Small values and a single row in a later
    ``filter`` or ``forecast`` call are fine: a signal may decay, a stream may come a sample
    at a time.) A DataFrame's column that looks like its sample times is warned of
    (:func:`~tssdpa.estimators.time_columns.warn_time_columns`), as are its columns of true /
    false values (:func:`~tssdpa.estimators.bool_columns.warn_bool_columns`) unless
    ``flags_told``: a denoiser's fit has told them reading ``x`` (:func:`denoiser_input`)."""
    rows, cols = a.shape
    # time runs down the rows: a channels-first series (one row of 2000 samples, x[None, :])
    # was fitted as 2000 channels of one sample each, ran for minutes and came back unchanged.
    # Only far wider than long: a short recording of many sensors (12 x 20, 120 x 150) fits
    if cols >= CHANNELS_FIRST * rows:
        raise ValueError(
            f"{name} has {rows} sample{'s' * (rows != 1)} (rows) of {cols} channels (columns): "
            f"time runs down the rows, one row per sample; transpose it ({name}.T) for {cols} "
            f"samples of {rows} channel{'s' * (rows != 1)}"
        )
    empty = np.flatnonzero(np.isnan(a).all(axis=0))
    if len(empty):
        raise ValueError(f"{channel_named(name, empty[0], meta)} is all NaN: nothing to fit on")
    check_magnitudes(a, name, lower=True, channel=lambda c: channel_named(name, c, meta))
    warn_time_columns(a, name, meta)
    if not flags_told:
        warn_bool_columns(name, meta)


def without_dropout(
    estimator, a: np.ndarray, meta: ArrayMeta | None = None
) -> tuple[np.ndarray, int]:
    """``(a, g)``: the (T, C) series less its last ``g`` rows, which hold no sample (a
    dropout): ``predict`` forecasts past them from the last row seen. Warned where the rows
    left are fewer than the longest pattern reads (:func:`warn_series` judged the whole
    series: a short buffer ending in a dropout forecast NaN unsaid), and where ``meta``, the
    buffer's, has a time index that ``predict`` continues by position (no step pandas infers:
    a jittered clock, missing rows; under the jitter tolerance of :func:`warn_uneven` that was
    silent)."""
    told = meta is None or (meta.timestamps is not None and uneven_note(meta.timestamps))
    if not told and times_as_positions(meta.read_index):  # (warn_uneven told an uneven one)
        kind = type(meta.read_index).__name__  # pyarrow times, dates: a DatetimeIndex
        warn(f"y's {kind} has no regular step (pandas infers no frequency "
             f"from it): the forecasts are labelled by position, from {len(a):,} (y's rows), "
             "not by time; resample y onto a regular grid (or give it one: asfreq) for times",
             UnevenSamplingWarning, stacklevel=user_stacklevel())  # fmt: skip
    if np.isfinite(a[-1]).any():  # the common case, without a pass over a long series
        return a, 0
    gap = len(a) - 1 - int(np.flatnonzero(np.isfinite(a).any(axis=1))[-1])
    need = estimator._predict_context()
    if need is not None and len(a) - gap < need <= len(a):
        warn(f"y's last {gap:,} rows hold no sample, and its {len(a) - gap:,} rows before them "
             f"are fewer than the {need:,} that the longest pattern of "
             f"{type(estimator).__name__} reads: the forecasts past them that use it are NaN; "
             "give a longer history", ShortHistoryWarning,
             stacklevel=user_stacklevel())  # fmt: skip
    return a[: len(a) - gap], gap
