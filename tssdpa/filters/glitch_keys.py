"""The patterns of a series being forecast as keys of its later origins, judged for glitches.

``ProjectionForecaster.fit`` marks the glitches of its fitted series missing
(:mod:`~tssdpa.estimators.glitches`), but ``forecast`` also keys the series it is given: once a
pattern's future is known it serves every later origin. A glitch in that future was every
later neighbour's forecast, hundreds of samples after it
(``tests/filters/test_forecaster_glitches.py``). Whether a sample is a glitch needs the samples
after it, and ``forecast_path(y)[t]`` may read ``y[:t+1]`` only. So:

* a sample farther than the fitted series' glitch reach
  (:func:`~tssdpa.estimators.glitches.glitch_reach`) from the median of the :data:`PAST`
  samples before it, carried along their trend (:func:`past_distances`), is a *candidate*: a
  glitch, or a real jump of the signal, which only the samples after it tell apart;
* a key whose pattern or future holds a candidate becomes a key :data:`GLITCH_SPAN` origins
  later than the others, once the samples that judge it are known -- and never where
  :func:`~tssdpa.estimators.glitches.glitch_mask` (with the fitted series' reach, which reads
  the samples within that span) finds the candidate a glitch.

A series without candidates is keyed as before. The first samples of a series, with fewer than
3 before them, are never candidates.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tssdpa.estimators.glitches import GLITCH_SPAN, glitch_mask, glitch_reach, trend_median
from tssdpa.signal.neighbours import causal_neighbours

__all__ = ["PAST", "glitch_candidates", "own_key_neighbours"]

#: a candidate is judged against the median of this many samples before it
PAST = 8


def past_distances(y: np.ndarray) -> np.ndarray:
    """(T, C): each sample's distance from the :data:`PAST` samples before it, their median
    carried along their trend to it (:func:`~tssdpa.estimators.glitches.trend_median`; NaN
    where fewer are known). Row t reads ``y[:t+1]`` only."""
    T, C = y.shape
    padded = np.r_[np.full((PAST, C), np.nan), y[:-1]] if T else y
    past = sliding_window_view(padded, PAST, axis=0).reshape(T * C, PAST)  # oldest first
    median = trend_median(past, PAST - np.arange(PAST)).reshape(T, C)
    return np.abs(y - median)


def glitch_candidates(y: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """(T,) bool: the rows of the (T, C) ``y`` where some channel's :func:`past_distances` is
    over ``reach`` (C,), the fitted series' glitch reach: about every glitch the centred rule
    finds is a candidate, and so is a slope whose trend the past samples miss by that much
    (judged against their plain median, which lags a slope by half its width, a smooth sine
    forecast at 1.5x the fitted amplitude had candidates at most samples and its keys came
    late; carried along the trend, at 3x none). Row t reads ``y[:t+1]`` only."""
    with np.errstate(invalid="ignore"):
        far = (past_distances(y) > reach) & (reach > 0)
    return far.any(axis=1)


def _spans(rows: np.ndarray, before: int, after: int, T: int) -> np.ndarray:
    """(T,) bool: the keys j whose span ``j - before .. j + after`` holds one of ``rows``."""
    hit = np.zeros(T + 1, dtype=np.int64)
    for g in np.flatnonzero(rows):  # key j holds g where g - after <= j <= g + before
        hit[max(0, g - after)] += 1
        hit[min(T, g + before + 1)] -= 1
    return np.cumsum(hit)[:T] > 0


def own_key_neighbours(queries, k, H, own_keys, library, y, fitted, back, reach=None, index=None,
                       candidates=None):  # fmt: skip
    """``causal_neighbours(queries, k, H, keys=own_keys, library=library, index=index)``, the
    own keys (rows of ``y`` (T, C), each usable once its future of ``H`` samples is known, NaN
    rows never) judged for glitches as the module says, with the reach of the ``fitted`` series
    (its glitches missing already; ``reach``: its :func:`~tssdpa.estimators.glitches.
    glitch_reach`, found already; ``candidates``: :func:`glitch_candidates` of ``y`` with it,
    likewise); ``back`` how far a key's pattern reaches back."""
    reach = glitch_reach(fitted) if reach is None else reach
    candidates = glitch_candidates(y, reach) if candidates is None else candidates
    if not candidates.any():
        return causal_neighbours(queries, k, H, keys=own_keys, library=library, index=index)
    T = len(y)
    glitches = candidates & glitch_mask(y, reach).any(axis=1)
    late = _spans(candidates, back, H, T)
    never = _spans(glitches, back, H, T)
    keys_now = np.where(late[:, None], np.nan, own_keys)
    keys_late = np.where((late & ~never)[:, None], own_keys, np.nan)
    dist, idx = causal_neighbours(queries, k, H, keys=keys_now, library=library, index=index)
    if not np.isfinite(keys_late).all(axis=1).any():
        return dist, idx
    d2, i2 = causal_neighbours(queries, k, H + GLITCH_SPAN, keys=keys_late)
    offset = 0 if library is None else len(library)  # own keys are numbered after the library
    d = np.concatenate([dist, d2], axis=1)
    i = np.concatenate([idx, np.where(i2 >= 0, i2 + offset, -1)], axis=1)
    order = np.argsort(d, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(d, order, axis=1), np.take_along_axis(i, order, axis=1)
