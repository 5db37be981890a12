"""Whether observed noise has Gaussian tails -- what the sliding SURE of the local adaptation
(:mod:`tssdpa.filters.projection_local`) assumes.

Stein's identity, on which SURE rests, holds for Gaussian noise. Under heavy-tailed noise a
window's SURE terms follow its few large errors, and with a target the adaptation that lowered
the error on the fitted part raised it on new data (``experiments/local_target_noise_probe.py``:
Student-t noise of 3 degrees of freedom on the fusion IMU, up to +24%). A fit with a target
sees the noise itself, ``x - target``, and tests its tails: the ratio of its RMS to its MAD
scale (1.4826 times the median absolute deviation) is 1 for Gaussian noise, with a standard
deviation of about ``1 / sqrt(n)`` over n samples (0.096 at 100 samples, 0.015 at 4,000), and
about 1.5 for Student-t noise of 3 degrees of freedom, 1.7 for Gaussian noise with 2% of its
samples hit by outliers of 10 times its level (``experiments/noise_tails_probe.py``).

A fit without a target sees only ``x``: :func:`rms_off_slopes` measures the noise with its
tails where the signal leaks little into the residuals, and :func:`with_tails` raises the
robust level of :func:`~tssdpa.estimators.white_noise.noise_level` to it where the tails are heavy;
there SURE weighs each sample's divergence by its own squared noise (:func:`tail_weights`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "HEAVY_TAILS",
    "MIN_TAIL_SAMPLES",
    "PILOT_WIDTH",
    "STRETCHES",
    "TAIL_SDS",
    "gaussian_tails",
    "mad_scale",
    "off_slopes",
    "rms_off_slopes",
    "tail_ratio",
    "tail_weights",
    "with_tails",
]

#: the ratio may exceed 1 by this many of its standard deviations (``1 / sqrt(n)``): Gaussian
#: noise is called heavy-tailed in 3e-4 of 20,000 draws at 100 samples and in none from 200 on;
#: at 4, 1.3e-3 at 100 samples (``experiments/noise_tails_probe.py``)
TAIL_SDS = 5.0


def mad_scale(r: np.ndarray) -> float:
    """The MAD scale of the 1-D ``r``: its median absolute deviation about the median over
    0.6745 (the standard deviation, for Gaussian samples)."""
    return float(np.median(np.abs(r - np.median(r))) / 0.6745)


def tail_ratio(r: np.ndarray) -> np.ndarray:
    """(C,) RMS over MAD scale of each column of (T, C) ``r`` about its median, over the finite
    entries (NaN where a column has none or its MAD is 0)."""
    r = np.asarray(r, dtype=np.float64)
    out = np.full(r.shape[1], np.nan)
    for c in range(r.shape[1]):
        v = r[np.isfinite(r[:, c]), c]
        if v.size:
            v = v - np.median(v)
            mad = mad_scale(v)
            out[c] = np.sqrt(np.mean(v * v)) / mad if mad > 0 else np.nan
    return out


def gaussian_tails(r: np.ndarray) -> np.ndarray:
    """(C,) bools: whether each column of (T, C) noise samples ``r`` is within ``TAIL_SDS``
    standard deviations of Gaussian tails (:func:`tail_ratio` at most ``1 + TAIL_SDS /
    sqrt(n)``, n its finite entries; False where the ratio is undefined).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> gaussian_tails(np.column_stack([rng.normal(size=2000), rng.standard_t(3, 2000)]))
    array([ True, False])
    """
    n = np.isfinite(r).sum(axis=0)
    ratio = tail_ratio(r)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nan_to_num(ratio, nan=np.inf) <= 1.0 + TAIL_SDS / np.sqrt(np.maximum(n, 1))


#: the level with its tails (:func:`rms_off_slopes`) replaces the robust one where it is more
#: than this factor above it: under Gaussian noise it was at most 1.018 times it over the
#: development series (none raised of 195), under Student-t noise of 3 degrees of freedom
#: 1.050 or more in 90% of the 93 it was considered in (87 levels raised;
#: ``experiments/noise_level_probe.py --tails``)
HEAVY_TAILS = 1.05


def rms_off_slopes(v: np.ndarray, core: np.ndarray, pred: np.ndarray, lo: int) -> float:
    """RMS about the median of the residuals ``core - pred`` (``core = v[lo : v.size - lo]``) at the
    samples where the signal is neither steep nor sharply bent (the median over ``STRETCHES``
    stretches of their mean squares); NaN where fewer than ``MIN_TAIL_SAMPLES`` such samples
    remain.

    The robust scales of :func:`~tssdpa.estimators.white_noise.noise_level` measure the core of
    the noise: under Gaussian noise its standard deviation, under heavy-tailed noise less
    (Student-t of 3 degrees of freedom: 0.75-0.9 of it, and SURE, told that, keeps much of the
    noise). A plain RMS counts the tails but also the signal that leaks into the residuals where
    it is steep (a jump, a fast swing) or sharply bent (a peak). Those samples are left out: the
    ones whose central difference ``v_(t+1) - v_(t-1)`` or bends ``v_(t+k+1) + v_(t-k-1) -
    v_(t+k) - v_(t-k)`` (k = 1, 3) are beyond 3 MAD-scales of their medians. None involves
    ``v_t``, so a noise outlier at ``t`` is kept (its neighbours, whose residuals it spills
    into, are not); under Gaussian noise the choice leaves out about 1% of the samples, too few
    to bias the measure (within 1% over 300 draws, ``tests/estimators/test_selection.py``). A
    bend sharper than the sampling shows (a cusp) passes for noise: 3 |sin(pi t / 60)|^0.5 under
    white noise of 0.1 gives 0.114."""
    m = v.size - 8  # the samples with 4 neighbours each side: v[4 : 4 + m]
    if m < MIN_TAIL_SAMPLES:
        return math.nan
    keep = off_slopes(v)[4:-4]
    if keep.sum() < MIN_TAIL_SAMPLES:
        return math.nan
    r = (core - pred)[4 - lo : 4 - lo + m][keep]
    r = r - np.median(r)
    # the median of the mean squares of STRETCHES stretches: a glitch or two of a causal fit's
    # block sits in at most two of them (one of 300 standard deviations in 1,500 samples made
    # the plain mean square 60x the noise's); under Gaussian noise it is the mean square, under
    # Student-t of 3 degrees of freedom 0.95 of it on average
    means = [float(np.mean(part * part)) for part in np.array_split(r, STRETCHES)]
    return float(np.sqrt(np.median(means)))


def off_slopes(v: np.ndarray) -> np.ndarray:
    """(T,) bools: the samples of the 1-D ``v`` (NaN allowed) where the signal is neither steep
    nor sharply bent, as far as statistics that leave ``v_t`` out can tell -- its central
    difference ``v_(t+1) - v_(t-1)`` and bends ``v_(t+k+1) + v_(t-k-1) - v_(t+k) - v_(t-k)``
    (k = 1, 3) within 3 MAD-scales of their medians; False within 4 samples of an end and
    where a statistic meets a missing sample (the missing sample itself may be True). Under
    heavy-tailed noise a second outlier within 4 samples also excludes one (Student-t of 3
    degrees of freedom on a sine: 6.7% of the samples, 7.5% of the largest 1% of the noise;
    Gaussian: 0.8%)."""
    keep = np.zeros(v.size, dtype=bool)
    m = v.size - 8
    if m < 1:
        return keep
    at = lambda k: v[4 + k : 4 + k + m]  # noqa: E731 -- v_(t+k) for the samples 4 .. T-5
    slope = at(1) - at(-1)
    bends = (at(2) + at(-2) - at(1) - at(-1), at(4) + at(-4) - at(3) - at(-3))
    inner = np.ones(m, dtype=bool)
    for stat in (slope, *bends):
        ok = np.isfinite(stat)
        if not ok.any():
            return keep
        med = np.median(stat[ok])
        with np.errstate(invalid="ignore"):
            inner &= ok & (np.abs(stat - med) <= 3.0 * mad_scale(stat[ok]))
    keep[4 : 4 + m] = inner
    return keep


#: fewer samples than this say too little of the noise's tails to raise a level
MIN_TAIL_SAMPLES = 500
#: :func:`rms_off_slopes` takes the median mean square of this many stretches of its samples
STRETCHES = 5


def with_tails(s: float, symmetric, near: float) -> float:
    """The level ``s`` raised to a symmetric interpolator's RMS off the slopes
    (:func:`rms_off_slopes`) where that interpolator is among the tightest bounds (its robust
    level within a fraction ``near`` of ``s``: its residuals are mostly noise) and the RMS
    exceeds ``HEAVY_TAILS * s`` (the noise has heavy tails). ``symmetric``: a (robust level,
    RMS off the slopes) pair per symmetric interpolator. The lowest such RMS is taken."""
    raised = [q for lv, q in symmetric
              if lv <= (1.0 + near) * s and q > HEAVY_TAILS * s]  # fmt: skip
    return min(raised) if raised else s


#: the pilot of :func:`tail_weights`: the median of the samples within this window but the
#: centre (a lone outlier moves its neighbours' medians little, and its own not at all)
PILOT_WIDTH = 5


def tail_weights(x2: np.ndarray, heavy: np.ndarray) -> np.ndarray:
    """(T, C) weights of each entry's divergence in SURE
    (:func:`~tssdpa.estimators.selection.sure_mse`): 1 in the channels not marked ``heavy``;
    in the others ``e_t^2 / mean(e^2)``, ``e`` the residual of ``x_t`` from the median of its
    ``PILOT_WIDTH - 1`` nearest neighbours in time (1 where ``x`` is missing, and where the
    signal is steep or sharply bent, :func:`off_slopes`: there the pilot's residual is the
    signal's as much as the noise's -- a pulse's flanks -- and weighed by it SURE took a filter
    that keeps sharp pulses for one that keeps outliers; the mean is over the other samples).

    SURE's divergence term rests on Stein's identity, ``E[e_t y_t] = s^2 E[dy_t/dx_t]``, exact
    for Gaussian noise only. To first order in the noise, for any noise, ``E[e_t y_t] =
    E[e_t^2 dy_t/dx_t]``: each sample's divergence counts with its own squared noise. Under
    Gaussian noise that is ``s^2`` on average wherever the divergence is; under heavy tails it
    is not: a kernel filter follows an outlier (its pattern is near no other but itself), so its
    divergence is high exactly where ``e_t^2`` is large, and SURE with ``s^2`` everywhere takes
    it for a filter that removes the noise. The pilot's residual stands in for ``e``; the
    weights have mean 1, so a filter whose divergence does not depend on the sample (a linear
    smoother away from the ends) scores as before."""
    x2 = np.asarray(x2, dtype=np.float64)
    out = np.ones(x2.shape)
    half = PILOT_WIDTH // 2
    for c in np.flatnonzero(heavy):
        v = x2[:, c]
        padded = np.pad(v, half, constant_values=np.nan)  # the ends: fewer neighbours
        windows = np.lib.stride_tricks.sliding_window_view(padded, PILOT_WIDTH)
        windows = np.delete(windows, half, axis=1)  # x_t itself left out
        seen = np.isfinite(windows).any(axis=1)
        pilot = np.full(v.shape, np.nan)
        pilot[seen] = np.nanmedian(windows[seen], axis=1)
        e2 = (v - pilot) ** 2
        # where the signal is steep or sharply bent the pilot's residual is signal as much as
        # noise (a pulse's flanks): those samples keep weight 1, the noise's mean share
        ok = np.isfinite(e2) & off_slopes(v)
        mean = float(np.mean(e2[ok])) if ok.any() else 0.0
        if mean > 0:
            out[ok, c] = e2[ok] / mean
    return out
