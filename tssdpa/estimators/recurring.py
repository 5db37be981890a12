"""Glitches that recur at one period are signal to a forecaster, not glitches.

A load with a one-hour spike every week (a scheduled job), a valve that opens every 200
samples: each spike is far out of line with the samples around it, so the glitch rule
(:mod:`~tssdpa.estimators.glitches`, for rare values: under 1 in 100 samples) flags every one,
and a forecaster that left them out of its fit never forecast one -- where the seasonal naive
forecast gets them exactly (a new user's case; ``tests/filters/
test_forecaster_recurring_spikes.py`` has its like, which fails on the code before). A
forecaster's fit keeps a channel's flagged samples where they recur:

* their period ``P`` -- the median spacing of consecutive flagged samples -- at least
  :data:`MIN_PERIOD` samples (a cluster of adjacent ones is a burst, not a rhythm);
* the flagged samples on one phase of it (within ``max(1, P / 50)`` samples of the most
  common ``t mod P``) at least :data:`MIN_RECURRING` and at least half of the channel's;

and only those: a stray glitch off the phase is still left out, and weeks missing from the
record (a gap of many periods) break nothing. Glitches at random times pass rarely: the
flagged samples of a channel are at most 1 in 100 (else they are not glitches), so ``P`` is
some 70 samples or more, and a phase window holds about 3 / P of them below P = 100 and about
1 / 25 above.
A filter (denoising) keeps its rule: a periodic interference is noise to it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIN_PERIOD", "MIN_RECURRING", "recurring"]

MIN_RECURRING = 5
MIN_PERIOD = 8


def recurring(mask: np.ndarray) -> dict[int, tuple[np.ndarray, int]]:
    """``{channel: (rows, period)}``: the flagged samples of each channel of the (T, C) glitch
    ``mask`` that recur at one period and phase (the module's rule), where there are."""
    found = {}
    for c in range(mask.shape[1]):
        rows = np.flatnonzero(mask[:, c])
        if len(rows) < MIN_RECURRING:
            continue
        period = int(round(float(np.median(np.diff(rows)))))
        if period < MIN_PERIOD:
            continue
        tol = max(1, period // 50)  # phases are whole samples
        phase = rows % period
        # the phase with the most flagged samples within tol of it (circularly)
        counts = np.bincount(phase, minlength=period)
        near = sum(np.roll(counts, shift) for shift in range(-tol, tol + 1))
        d = np.abs(phase - int(np.argmax(near)))
        on = np.minimum(d, period - d) <= tol
        if on.sum() >= max(MIN_RECURRING, len(rows) / 2):
            found[c] = (rows[on], period)
    return found
