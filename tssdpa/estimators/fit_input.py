"""What ``fit`` asks of its series and of a denoiser's clean ``target`` (re-exported by
:mod:`tssdpa.estimators.base`, where they were), and what a denoiser's ``fit`` and ``filter``
tell of its ``x`` (:func:`denoiser_input`)."""

from __future__ import annotations

import numpy as np

from tssdpa.estimators.arrays import MAGNITUDES, STREAM_TOLD, ArrayMeta, as_2d, peak_magnitudes
from tssdpa.estimators.spacing import warn_uneven
from tssdpa.signal.missing import reading_ends, unknown_past_readings

__all__ = ["FILTER_COUNTS", "check_fit_input", "denoiser_input", "target_like"]

#: what a denoiser counts in samples, not time (:func:`~tssdpa.estimators.spacing.warn_uneven`)
FILTER_COUNTS = "its window, cutoff, decay and other per-sample settings"
#: what a denoiser with ``tau`` (ProjectionFilter) may do instead of resampling
TAU_ADVICE = "give tau= (seconds) and it weighs the samples by their times, or "


def denoiser_input(estimator, x, stream: bool = False) -> tuple[np.ndarray, ArrayMeta]:
    """:func:`as_2d` of a denoiser's ``x`` (``fit`` and ``filter`` alike), with an
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
    tau = getattr(estimator, "tau", None)
    told = stream and estimator.__dict__.get(STREAM_TOLD, False)
    if tau is None and getattr(estimator, "counts_samples", True) and not told:
        advice = TAU_ADVICE if hasattr(estimator, "tau") else ""
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
    check_fit_input(tgt, "target")
    return unknown_past_readings(tgt, reading_ends(a)) if readings else tgt


#: a series with at least this many times more channels than samples is refused by ``fit`` as
#: channels-first (:func:`check_fit_input`)
CHANNELS_FIRST = 10


def check_fit_input(a: np.ndarray, name: str) -> None:
    """What a ``fit`` asks of its (T, C) series beyond :func:`as_2d`, a ``ValueError`` naming
    ``name`` and the channel otherwise: it has fewer than ``CHANNELS_FIRST`` times as many
    channels (columns) as samples (rows), every channel has a known sample, and none is so
    small (largest magnitude nonzero, below 1e-150) that its squares underflow to 0. (Small
    values and a single row in a later ``filter`` or ``forecast`` call are fine: a signal may
    decay, a stream may come a sample at a time.)"""
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
        raise ValueError(f"{name} channel {empty[0]} is all NaN: nothing to fit on")
    peak = peak_magnitudes(a)
    tiny = np.flatnonzero((peak > 0) & (peak < MAGNITUDES[0]))
    if len(tiny):
        c = int(tiny[0])
        raise ValueError(
            f"{name} channel {c} is at most {peak[c]:.3g} in magnitude, below "
            f"{MAGNITUDES[0]:g} where squares underflow float64: rescale it (e.g. other units)"
        )
