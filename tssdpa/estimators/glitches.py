"""Glitches in a recording: rare samples far out of line with those around them.

A glitch -- one sample hundreds of noise levels out, a logger's dropout to 0 -- is not noise a
kernel filter can average away. In the non-local filter (``window="all"``) the glitch's row is
a key like any other (its pattern leaves the sample itself out, so it looks ordinary), and
every row that takes it as a neighbour averages the glitch's value in: one glitch of 300
standard deviations among 1,500 samples made that filter so much worse that the zero-phase fit
fell back on windowed ones (pulse train at 10 dB: 0.475 of the noise away from the glitch,
against 0.331 without it; ``experiments/channel_units_probe.py --glitch``). Marked missing, it
is neither a key nor scored, and the filter fills its sample from the others.

An entry is a glitch where it is more than ``GLITCH_REACH`` times its channel's typical
distance from the median of the ``2 GLITCH_HALF + 1`` samples around it (the 99th percentile
of those distances over the channel, or its median step over ``GLITCH_REACH`` where that is
more; where the window is cut -- the ends, gaps -- and on a trend, the median of its values
carried along the trend to the sample: :func:`_along_the_trend`; and again without the
glitches found before it: :func:`_cleared_without_the_others`), and off the line of the two
samples on either side of it (a turn of a clean signal is on one). Large values that recur in
more than 1 sample in 100 (a gait's heel strikes, a pulse train's pulses, impulsive noise at
a rate of 2%) set that typical distance themselves and are not glitches; nor is anything in a
channel that sits on its running median almost everywhere and does not move (held readings,
steps, an event flag), whose typical distance is 0. On the shared recordings (the IMUs, the
four ETT tables) the rule finds 4 samples, all in ETTm2 ``OT``: a 0 among readings of 13.3,
21.5 among 42-44, and 47.9 and 47.2 among 30.5.
Frequent large values that are single samples off the curve of their neighbours (impulsive
noise) are :mod:`~tssdpa.estimators.spikes`, which :func:`glitches_missing` also sets missing.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tssdpa.estimators.input_notes import (
    CausalGlitchWarning,
    GlitchWarning,
    RecurringSpikesWarning,
    SpikeWarning,
    tell,
)
from tssdpa.estimators.recurring import recurring
from tssdpa.estimators.spikes import spike_channels, spike_mask

__all__ = [
    "GLITCHES",
    "GLITCH_HALF",
    "GLITCH_REACH",
    "check_spike_channels",
    "fitted_spike_channels",
    "glitch_mask",
    "glitch_reach",
    "trend_median",
    "glitches_marked",
    "glitches_missing",
]

#: the values of ``ProjectionFilter(glitches=...)``
GLITCHES = ("missing", None)
GLITCH_HALF = 4  # the running median's half-width: it passes over up to 4 glitches in a row
GLITCH_REACH = 30.0
_ROWS = 1 << 15  # rows per block of the running median
_WIDTH = 2 * GLITCH_HALF + 1  # the running median's window
_TO_CENTRE = GLITCH_HALF - np.arange(_WIDTH)  # from each position of a centred window
#: a window is on a trend where this share of its steps go one way (:func:`_on_a_trend`)
TREND_SHARE = 7 / 8
#: with a given reach, whether a sample is a glitch depends on the samples this near it (its
#: window, the windows of the flagged samples in it, and the line through two on each side)
GLITCH_SPAN = 2 * _WIDTH


def glitch_mask(x2: np.ndarray, reach: np.ndarray | None = None) -> np.ndarray:
    """(T, C) bool: the glitches of the (T, C) series ``x2`` (NaN entries are not); ``reach``
    (C,) how far from its running median a sample is one, by default :func:`glitch_reach` of
    ``x2`` itself. Given, whether a sample is a glitch depends only on the samples within
    :data:`GLITCH_SPAN` of it (runs of glitches longer than a window aside), so that a
    forecaster can judge a new series causally.

    >>> x = np.sin(np.arange(200) / 5.0)[:, None] + 0.01 * np.cos(np.arange(200))[:, None]
    >>> x[50] += 30.0
    >>> np.flatnonzero(glitch_mask(x))
    array([50])
    """
    x2 = np.asarray(x2, dtype=np.float64)
    distance, cut = _distances(x2)
    reach = _reach(x2, distance) if reach is None else np.asarray(reach, dtype=np.float64)
    return _flagged(x2, distance, cut, reach)


def glitch_reach(x2: np.ndarray) -> np.ndarray:
    """(C,) how far from the running median of its window a sample of each channel of the
    (T, C) ``x2`` is a glitch: ``GLITCH_REACH`` typical distances (0: none can be)."""
    x2 = np.asarray(x2, dtype=np.float64)
    return _reach(x2, _distances(x2)[0])


def trend_median(windows: np.ndarray, to_centre: np.ndarray) -> np.ndarray:
    """(n,) the median of the (n, w) ``windows`` of samples at the distances ``to_centre``
    (w,) from theirs, carried along their trend where they are on one
    (:func:`_along_the_trend`); their plain median where the trend has too few steps and 3
    values or more are known; else NaN."""
    median = _along_the_trend(windows, to_centre)
    plain = np.isnan(median) & (np.isfinite(windows).sum(axis=1) >= 3)
    if plain.any():
        median[plain] = np.nanmedian(windows[plain], axis=1)
    return median


def _distances(x2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distance, cut)`` (T, C): each sample's distance from the running median of its
    window, and whether an end or a gap cuts that window."""
    T, C = x2.shape
    padded = np.r_[np.full((GLITCH_HALF, C), np.nan), x2, np.full((GLITCH_HALF, C), np.nan)]
    distance = np.empty((T, C))
    cut = np.zeros((T, C), dtype=bool)  # whose window an end or a gap cuts
    # all-NaN windows and channels give NaN; they are left out of nanmedian / nanquantile
    # rather than silenced with warnings.catch_warnings, which swaps the process's filters and,
    # with fits in threads (the batch), can leave them changed for good
    for a in range(0, T, _ROWS):  # in blocks of rows: the windows take 9x their memory
        b = min(T, a + _ROWS)
        around = sliding_window_view(padded[a : b + 2 * GLITCH_HALF], 2 * GLITCH_HALF + 1,
                                     axis=0)  # (b - a, C, 9)  # fmt: skip
        # a partition is ~10x faster than nanmedian; the windows holding NaN (the ends, gaps),
        # those with a value at all, take _along_the_trend
        median = np.partition(around, GLITCH_HALF, axis=2)[..., GLITCH_HALF]
        missing = np.isnan(around)
        holed = missing.any(axis=2)
        cut[a:b] = holed
        if holed.any():
            median[holed] = np.nan
            some = holed & ~missing.all(axis=2)
            if some.any():
                median[some] = _along_the_trend(around[some])
        distance[a:b] = np.abs(x2[a:b] - median)
    if T >= _WIDTH:  # at the ends, the 9 samples nearest: a run of 3 glitches among the 5-7 of
        # a cut window set its median (a logger's first 3 readings at 0 on a signal at 5:
        # the clean first sample flagged, or the first glitch missed)
        ends = np.r_[0:GLITCH_HALF, T - GLITCH_HALF : T]
        starts = _window_starts(ends, T)
        windows = x2[starts[:, None] + np.arange(_WIDTH)].transpose(0, 2, 1)  # (8, C, 9)
        to_centre = np.repeat((ends - starts)[:, None] - np.arange(_WIDTH), C, axis=0)
        median = _along_the_trend(windows.reshape(-1, _WIDTH), to_centre).reshape(-1, C)
        distance[ends] = np.abs(x2[ends] - median)
    return distance, cut


def _reach(x2: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """:func:`glitch_reach` from the running-median ``distance`` of :func:`_distances`."""
    C = x2.shape[1]
    typical = np.full(C, np.nan)
    known = ~np.isnan(distance).all(axis=0)
    if known.any():
        typical[known] = np.nanquantile(distance[:, known], 0.99, axis=0)
        # a channel on its running median at 99% of its samples (a clean step, an event flag)
        # has a typical distance of 0 however long it is: interpolated, the 99th percentile of
        # 100-200 samples took a share of its one or two largest distances, and a clean square
        # wave's last sample, starting a new level, or an event's 2 samples of 200 were glitches
        on_median = np.nanquantile(distance[:, known], 0.99, axis=0, method="lower") == 0
        typical[known] = np.where(on_median, 0.0, typical[known])
        # a glitch is at least one typical step off: on a clean trend (a ramp, a counter) the
        # running median passes through nearly every sample, the 99th percentile of the
        # distances is 0 or set by the few cut windows, and a glitch went unseen or a reading
        # at an end was taken for one (as a floor on its own, 30 steps, it hid glitches of
        # hundreds of noise levels on smooth, finely sampled signals)
        steps = np.abs(np.diff(x2, axis=0))
        for c in np.flatnonzero(known):  # (a channel read every other sample has no step)
            finite = steps[np.isfinite(steps[:, c]), c]
            if finite.size:
                typical[c] = max(typical[c], float(np.median(finite)) / GLITCH_REACH)
    return GLITCH_REACH * typical


def _flagged(x2, distance, cut, reach) -> np.ndarray:
    """:func:`glitch_mask` from :func:`_distances` and the channels' ``reach``."""
    T, C = x2.shape
    with np.errstate(invalid="ignore"):
        mask = (distance > reach) & (reach > 0)
    if mask.any():
        mask &= ~_cleared_without_the_others(x2, mask, distance, reach)
    if mask.any():  # a glitch is off the line of the two samples on either side of it; a
        # turn of a clean signal (an encoder stopping, turning back) is on one of them. A line
        # counts only through two samples their whole window judged no glitch: not through
        # flagged ones (the ends of a run of glitches are on the line of the others), nor cut
        # ones (a cut window holds too few samples to pass over a run at an end or a gap)
        p = np.r_[np.full((2, C), np.nan), x2, np.full((2, C), np.nan)]  # x2[t] is p[t + 2]
        f = np.r_[np.ones((2, C), bool), mask | cut, np.ones((2, C), bool)]
        on_a_line = np.zeros_like(mask)
        for a, b in ((slice(1, T + 1), slice(0, T)), (slice(3, T + 3), slice(4, T + 4))):
            with np.errstate(invalid="ignore"):
                on = np.abs(x2 - (2 * p[a] - p[b])) <= reach
            on_a_line |= on & ~f[a] & ~f[b]
        mask &= ~on_a_line
    return mask


def _cleared_without_the_others(x2, mask, distance, reach) -> np.ndarray:
    """(T, C) bool: the flagged entries of ``mask`` that are within ``reach`` (C,) of the
    running median of their window once the glitches found before them are out of it (taken,
    like an end's or a gap's, along the trend: :func:`_along_the_trend`). A glitch moves the
    median of its neighbours' windows a rank; on a steep, nearly noise-free trend a rank is a
    step of the trend, 30 typical distances and more, and up to 4 neighbours on one side were
    flagged with it. The flagged entries are judged again from the farthest (``distance`` over
    ``reach``) on, each without those kept before it: the glitch goes first and stays, its
    neighbours then are on the trend; each of a run of glitches is off the samples around
    it whichever goes first. (All the others out at once, a run of falsely flagged neighbours
    left each other too few samples to say.)"""
    T = len(x2)
    cleared, kept = np.zeros_like(mask), np.zeros_like(mask)
    rows, cols = np.nonzero(mask)
    for i in np.argsort(-(distance[rows, cols] / reach[cols]), kind="stable"):
        r, c = rows[i], cols[i]
        at = _window_starts(np.array([r]), T)[0] + np.arange(_WIDTH)  # its window's positions
        inside = (at >= 0) & (at < T)
        out = np.zeros(at.size, dtype=bool)
        out[inside] = kept[at[inside], c]
        if out.any():  # else its window is the one that flagged it
            window = np.full(at.size, np.nan)
            window[inside & ~out] = x2[at[inside & ~out], c]
            median = _along_the_trend(window[None], r - at)[0]
            if np.isnan(median) and np.isfinite(window).sum() >= 3:  # too few steps for a
                median = np.nanmedian(window)  # trend; with itself and 2 more, a plain median
            with np.errstate(invalid="ignore"):  # NaN (2 samples or fewer): it stays flagged
                cleared[r, c] = abs(x2[r, c] - median) <= reach[c]
        kept[r, c] = not cleared[r, c]
    return cleared


def _window_starts(rows: np.ndarray, T: int) -> np.ndarray:
    """The first position of each row's window: ``GLITCH_HALF`` before it, moved inward at
    the ends of a series of at least ``_WIDTH`` samples (the nearest 9), else cut there."""
    starts = rows - GLITCH_HALF
    return np.clip(starts, 0, T - _WIDTH) if T >= _WIDTH else starts


def _on_a_trend(steps: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """Whether windows of these steps (..., 8) lie on a trend: at least :data:`TREND_SHARE` of
    their known steps go the way of their median step ``slope`` (...), which is not 0 (white
    noise: 7 windows in 100)."""
    known = (~np.isnan(steps)).sum(axis=-1)
    with np.errstate(invalid="ignore"):
        agree = (np.sign(steps) == np.sign(slope)[..., None]).sum(axis=-1)
    return (slope != 0) & (agree >= TREND_SHARE * known)


def _along_the_trend(windows: np.ndarray, to_centre=None) -> np.ndarray:
    """(n,) the running median of the (n, 9) windows that hold NaN (the edges of gaps) or are
    not centred on their sample (the ends; ``to_centre``: (9,) or (n, 9), each position's
    distance to the sample, by default that of a centred window): on a trend
    (:func:`_on_a_trend`), of the values carried to the sample along the median of the known
    steps, else of the values. The plain median of a window to one side of its sample is off
    it by a few steps: on a steep, nearly noise-free
    trend many noise levels, and the last samples of an accelerating ramp were taken for
    glitches. A window with fewer than two steps gets NaN: no verdict. (A whole window's
    plain median needs no such care: on a trend it is the sample itself, and carrying the
    values along an uneven trend -- quantised readings -- scatters them: ETTm2 ``OT``'s
    typical distance grew by a quarter, and three of its dropouts went unseen.)"""
    steps = np.diff(windows, axis=1)
    # readings between gaps, with fewer than two steps: their spread over several lags is
    # the signal's as much as a glitch's; no verdict
    judged = (~np.isnan(steps)).sum(axis=1) >= 2
    slope = np.zeros(len(windows))
    slope[judged] = np.nanmedian(steps[judged], axis=1)
    trend = _on_a_trend(steps, slope)
    carried = windows + np.where(trend, slope, 0.0)[:, None] * (
        _TO_CENTRE if to_centre is None else to_centre)  # fmt: skip
    median = np.full(len(windows), np.nan)  # (all-NaN rows are not given to nanmedian)
    median[judged] = np.nanmedian(carried[judged], axis=1)
    return median


def fitted_spike_channels(filt, x2: np.ndarray) -> list[bool] | None:
    """``spike_channels_`` of ``filt`` fitted on (T, C) ``x2``: per channel whether it has
    impulsive noise (:func:`~tssdpa.estimators.spikes.spike_channels`), None where none has or
    ``filt`` is causal. Decided under ``glitches=None`` too, so that ``glitches="missing"``
    set after the fit treats the spikes as it treats the glitches."""
    if filt.causal:
        return None
    channels = spike_channels(x2)
    return channels.tolist() if channels.any() else None


def check_spike_channels(filt, channels):
    """A loaded ``spike_channels_``: None or a list of ``n_channels_`` bools, at least one
    True; ``ValueError`` naming it else."""
    if channels is None:
        return None
    n = getattr(filt, "n_channels_", None)
    if (not isinstance(channels, list) or not all(isinstance(c, bool) for c in channels)
            or len(channels) != n or not any(channels)):  # fmt: skip
        raise ValueError(f"spike_channels_ must be None or a list of {n} bools (one True at "
                         f"least), got {channels!r}")  # fmt: skip
    return channels


def glitches_missing(filt, x2: np.ndarray, start: int = 0, fit: bool = False) -> np.ndarray:
    """``x2`` with its glitches, and the spikes of the channels ``filt`` found impulsive noise
    in when fitted (``spike_channels_``, :mod:`~tssdpa.estimators.spikes`), set to NaN where the
    zero-phase ``filt`` treats them as missing (``glitches="missing"``; a causal filter cannot
    look at the sample after, and keeps them), else ``x2`` itself; where there are some, a
    :class:`~tssdpa.estimators.input_notes.GlitchWarning` or
    :class:`~tssdpa.estimators.input_notes.SpikeWarning` at the caller's caller, its samples
    counted from ``start`` (the row of the caller's series where ``x2`` begins).

    ``fit``: ``x2`` is the block a causal ``filt`` is fitted on, offline: its glitches are set
    to NaN too (:class:`~tssdpa.estimators.input_notes.CausalGlitchWarning`). Kept, three
    glitches of 1e4 in a unit sine raised the noise level to 516 (heavy tails), and the fit
    chose a 128-sample moving average that erased the sine and spread each glitch."""
    if filt.glitches is None:
        return x2
    if filt.causal:
        return glitches_marked(x2, start, note=CausalGlitchWarning) if fit else x2
    x2 = glitches_marked(x2, start)
    channels = getattr(filt, "spike_channels_", None)
    if not channels:
        return x2
    spikes = spike_mask(x2, channels)
    if spikes.any():
        known = np.isfinite(x2).sum(axis=0)
        found = {int(c): (int(spikes[:, c].sum()), float(spikes[:, c].sum() / known[c]))
                 for c in np.flatnonzero(spikes.any(axis=0))}  # fmt: skip
        tell(SpikeWarning(found))
        x2 = np.where(spikes, np.nan, x2)
    return x2


def glitches_marked(x2: np.ndarray, start: int = 0, note=GlitchWarning,
                    keep_recurring=False) -> np.ndarray:  # fmt: skip
    """``x2`` with its glitches (:func:`glitch_mask`) set to NaN, told as a ``note`` naming each
    channel's count and first sample (counted from ``start``); ``x2`` itself where it has
    none. ``keep_recurring`` (a forecaster's fit): a channel's flagged samples that recur at
    one period are kept (:mod:`~tssdpa.estimators.recurring`), told as such."""
    mask = glitch_mask(x2)
    if keep_recurring and mask.any():
        kept = recurring(mask)
        if kept:
            tell(RecurringSpikesWarning({c: (len(r), p) for c, (r, p) in kept.items()}))
            for c, (rows, _) in kept.items():
                mask[rows, c] = False
    if not mask.any():
        return x2
    found = {int(c): (int(mask[:, c].sum()), start + int(np.argmax(mask[:, c])))
             for c in np.flatnonzero(mask.any(axis=0))}  # fmt: skip
    tell(note(found))
    return np.where(mask, np.nan, x2)
