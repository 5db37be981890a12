"""Glitches that recur at one period are signal to a forecaster, not glitches.

A load with a one-hour spike every week (a scheduled job), a valve that opens every 200
samples: each spike is far out of line with the samples around it, so the glitch rule
(:mod:`~tssdpa.estimators.glitches`, for rare values: under 1 in 100 samples) flags every one,
and a forecaster that left them out of its fit never forecast one -- where the seasonal naive
forecast gets them exactly (a new user's case: the spikes of the test weeks forecast at 10.9
for a truth of 60.8). A forecaster's fit keeps a channel's flagged samples where they recur:

* at least :data:`MIN_RECURRING` of them,
* their period ``P`` -- the median spacing of consecutive ones -- at least :data:`MIN_PERIOD`
  samples (a cluster of adjacent ones is a burst, not a rhythm),
* and every spacing within ``max(1, P / 50)`` samples of a whole number (1 to
  :data:`MAX_SKIPPED` + 1) of periods (one missed or too weak to be flagged is allowed).

Glitches at random times pass all three by chance rarely: with 5 of them at the shortest period
the spacings land near a multiple about 1 time in 60, fewer with more or a longer period.
A filter (denoising) keeps its rule: a periodic interference is noise to it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIN_PERIOD", "MIN_RECURRING", "recurring"]

MIN_RECURRING = 5
MIN_PERIOD = 8
MAX_SKIPPED = 3


def recurring(mask: np.ndarray) -> dict[int, tuple[int, int]]:
    """``{channel: (count, period)}``: the channels of the (T, C) glitch ``mask`` whose flagged
    samples recur at one period (the module's rule)."""
    found = {}
    for c in range(mask.shape[1]):
        rows = np.flatnonzero(mask[:, c])
        if len(rows) < MIN_RECURRING:
            continue
        gaps = np.diff(rows)
        period = float(np.median(gaps))
        if period < MIN_PERIOD:
            continue
        k = np.rint(gaps / period)
        near = np.abs(gaps - k * period) <= max(1.0, period / 50)
        if ((k >= 1) & (k <= MAX_SKIPPED + 1) & near).all():
            found[c] = (len(rows), int(round(period)))
    return found
