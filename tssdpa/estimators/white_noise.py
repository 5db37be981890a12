"""The level of additive white noise in a series, from the series alone or as a user gives it.

* :func:`noise_level` (per channel) and :func:`noise_scale` (one for all): residual bounds that
  leave each sample out, raised where the noise has heavy tails
  (:mod:`~tssdpa.estimators.noise_tails`) and, as an option, lowered to the floor of a linear
  signal's spectrum (:mod:`~tssdpa.estimators.linear_noise`);
* :func:`noise_levels_and_tails`: the levels and which channels' noise has heavy tails (SURE
  then weighs each sample's divergence by its own noise: ``noise_tails.tail_weights``);
* :func:`check_noise_level`: a level a user knows, checked.
"""

from __future__ import annotations

import math

import numpy as np

from tssdpa.estimators.linear_noise import linear_noise_level
from tssdpa.estimators.noise_tails import mad_scale, rms_off_slopes, with_tails
from tssdpa.estimators.selection import longest_run, repeating_channels
from tssdpa.signal.neighbours import loo_neighbours

__all__ = [
    "NEAR_MIN",
    "SPECTRAL",
    "check_noise_level",
    "noise_level",
    "noise_levels_and_tails",
    "noise_scale",
]


def noise_scale(x2: np.ndarray, spectral: bool = False) -> float:
    """One noise level for a (T, C) series: the median over channels of :func:`noise_level`
    (the channels' white-noise levels, ``spectral`` as there; NaN ignored; 1.0 for a series
    too short to say)."""
    ok = [c for c in range(x2.shape[1]) if np.isfinite(x2[:, c]).sum() >= 3]
    return float(np.median(noise_level(x2[:, ok], spectral=spectral))) if ok else 1.0


#: the variance of a standard Gaussian truncated to +-3 (its mean square within +-3 standard
#: deviations, over the share of samples there)
_TRIM3_VARIANCE = 0.9733369


def _trimmed_scale(r: np.ndarray) -> float:
    """Standard deviation of ``r`` about its median over the entries within 3 MAD-scales of
    it, corrected for the trimming. Robust to a few large residuals (busy stretches of the
    signal), and on Gaussian noise its sampling error is about two thirds of the MAD's (2%
    against 3% at 2000 samples), which matters because the smallest of several noisy
    estimates is biased low."""
    m, s = float(np.median(r)), mad_scale(r)
    if not s > 0:
        return s
    inside = r[np.abs(r - m) <= 3.0 * s]
    return float(np.sqrt(np.mean((inside - m) ** 2) / _TRIM3_VARIANCE))


_EPS = float(np.finfo(np.float64).eps)
#: an interpolator whose residual is exactly 0 at all but this share of the samples sees a
#: noise-free signal (a clean ramp, an encoder's counts: only its turns are off); a bound of 0
#: with more off (readings rounded to integers) is set aside for the other bounds, and the
#: signal is noise-free only where every bound is 0 (:func:`noise_level`)
EXACT_SHARE = 0.01

# x_t from its neighbours: (offsets, weights); Var(x_t - sum w x_{t+o}) = s^2 (1 + sum w^2)
_INTERPOLATORS = (
    ((-1,), (1.0,)),
    ((-1, 1), (0.5, 0.5)),
    ((-2, -1, 1, 2), (-1 / 6, 4 / 6, 4 / 6, -1 / 6)),
)


def _interpolator_bound(v: np.ndarray, offsets, weights):
    """``(level, core, pred, gain)``: the bound of the interpolator ``(offsets, weights)`` on
    the 1-D ``v`` -- the robust spread (:func:`_trimmed_scale`) of its residual over its noise
    gain -- with the samples it predicts, its predictions and that gain. A residual within
    rounding of 0 is 0 (the predictions are the samples there): the weights (-1/6, 4/6, 4/6,
    -1/6) sum to 1 + 2e-16, and whether a repeated value came out exact or 1e-16 off decided
    whether a staircase was kept or smoothed."""
    lo, hi = -min(min(offsets), 0), max(max(offsets), 0)
    core = v[lo : v.size - hi]
    pred = sum(w * v[lo + o : v.size - hi + o] for o, w in zip(offsets, weights))
    # rounding of the values this residual is made of, not of the series' largest (one glitch
    # of 1e13 in a unit series made every residual below 0.035 "rounding": noise of 0.01
    # passed for none, and the level came out as the floor, 1e-6 of the glitch)
    size = np.abs(core)
    for o in offsets:
        size = np.maximum(size, np.abs(v[lo + o : v.size - hi + o]))
    rounding = np.abs(core - pred) <= 16 * _EPS * size
    pred = np.where(rounding, core, pred)
    gain = math.sqrt(1.0 + sum(w * w for w in weights))
    return _trimmed_scale(core - pred) / gain, core, pred, gain


#: estimates within this fraction of the smallest are averaged (each has a sampling error of
#: 2-3% at 2000 samples, so the smallest of several is biased low by about that much)
NEAR_MIN = 0.04


def noise_level(
    x2: np.ndarray,
    k: int = 8,
    max_samples: int = 4000,
    spectral: bool = False,
    checked_floor: bool = True,
    extrapolated: bool = True,
) -> np.ndarray:
    """Standard deviation of additive white noise in each channel of a (T, C) series.

    Each estimator below is the robust spread of a residual ``x_t - f(x_{t≠j})`` that
    leaves ``x_t`` out, divided by its noise gain: a valid upper bound, tight where ``f``
    predicts the clean signal well. The smallest wins (see below):

    * polynomial interpolation from ±1, ±2 neighbours (orders 0, 1, 3), its residuals measured
      by :func:`_trimmed_scale`: tight on smooth signals;
    * the mean of ``x`` at the ``k`` nearest neighbours of the two-sided delay context
      ``(x_{t-m}..x_{t-1}, x_{t+1}..x_{t+m})`` in time-separated parts of the series, for
      m = 1, 2, 4, its residuals measured by the MAD (on chaotic maps they are heavy-tailed,
      the signal leaking in, and a trimmed standard deviation overestimates them): tight on
      signals that are rough in time but deterministic in state (chaotic maps), where every
      difference-based estimate sees the signal as noise.

    The estimates within ``NEAR_MIN`` (4%) of the smallest are averaged: the smallest of
    several noisy estimates alone would be biased low, and at 0 dB a noise level 3-5% low
    makes SURE favour filters that keep too much noise.

    Where a neighbour bound is below every interpolator's by more than ``NEAR_MIN``
    (``extrapolated``, the default), the level is its simulation-extrapolation
    (:func:`_extrapolated_level`, SIMEX) where that is lower: the neighbours are chosen by a
    noisy context, and a chaotic map magnifies the context's noise into the prediction, so
    that bound is a multiple of the level (1.4-1.7x on the Ikeda map at 10-20 dB, and SURE,
    told that, smooths the map's detail away). A series with NaN keeps its bound (a context
    across a gap is not a state), and so does a channel measured on its changes (below).

    Those robust scales measure the core of the noise. Where its tails are heavy (a Student-t
    of 3 degrees of freedom: a core of 0.75-0.9 of its standard deviation, and SURE, told
    that, keeps much of the noise), a symmetric interpolator's RMS off the signal's steep and
    sharply bent samples replaces the level where that interpolator is among the tightest
    bounds and its RMS exceeds the level by ``HEAVY_TAILS`` (5%; in
    :mod:`~tssdpa.estimators.noise_tails`, with the evidence).

    Every one of these counts the white innovations of a rough signal (an AR process, a
    diffusion) as noise. Where the series looks linear and the noise a small part of it, the
    floor of its spectrum (:func:`~tssdpa.estimators.linear_noise.linear_noise_level`, on the
    longest stretch without NaN) replaces the bound when it is clearly lower and its spectrum
    fits each quarter of the series: the fitted floor where the fit rejects a floor of 0, else
    (the floor not told from 0) the top of its confidence interval where the bound leaves most
    of the variance to the signal (``checked_floor``, the default; False: the bound).
    ``spectral`` takes the floor without those checks: on smooth real recordings it can come
    out far too low (see that module).

    A channel that repeats its readings exactly (:func:`repeating_channels`: held between
    readings, clipped, idle at an exact value) is measured on the samples that differ from the
    one before: the repeats carry no fresh noise, and counted they pull every estimate toward 0.

    A signal with no noise to see gets a small positive level, far below its values (never 0):
    where an interpolator predicts all but ``EXACT_SHARE`` of the samples exactly, and where
    every bound is 0 -- each residual exactly 0 at over half of the samples, which white noise
    of a continuous distribution never gives: a staircase on a grid, 0/1 pulses, readings held
    at set-points, the noise (if any) below the grid's step. Such a series is kept as it came.
    Readings on a grid held through dropouts (most changes followed by another,
    :data:`HELD_RUNS`: fresh readings between the holds) are measured on the samples that
    change instead, as a repeating channel.
    (Until 2026-12-05 the second case took a tenth of the data's robust spread, a level set by
    its range, not by any noise: a clean staircase 0..16 got 0.59 and its steps were smoothed
    by up to 0.42, or were kept where a residual of 1e-16 rounding passed for a level.)

    At most ``max_samples`` (the first) samples are used.
    """
    return noise_levels_and_tails(x2, k, max_samples, spectral, checked_floor, extrapolated)[0]


def noise_levels_and_tails(
    x2: np.ndarray,
    k: int = 8,
    max_samples: int = 4000,
    spectral: bool = False,
    checked_floor: bool = True,
    extrapolated: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """``(levels, heavy)``: :func:`noise_level`'s (C,) levels, and (C,) bools, the channels whose
    level was raised for its noise's heavy tails."""
    out, heavy = np.empty(x2.shape[1]), np.zeros(x2.shape[1], dtype=bool)
    repeating = repeating_channels(x2[:max_samples])
    for c in range(x2.shape[1]):
        raw = x2[:max_samples, c]
        if c in repeating:  # held readings or plateaus: measured on the samples that change
            raw = _changes(raw)
        # the samples that change are not evenly spaced: their contexts are not a state's
        how = (spectral, checked_floor, extrapolated and c not in repeating)
        s, heavy[c], exact = _level(raw, k, *how)
        if not s > 0 and not exact and c not in repeating and _held_between_fresh(raw):
            # readings on a grid held through dropouts, fresh between them: the holds made
            # every bound 0 (noise of 50 grid steps was kept as noise-free), not a clean signal
            s, heavy[c], exact = _level(_changes(raw), k, spectral, checked_floor, False)
        if not s > 0:  # constant, exact, or exact at most samples: a level in the data's
            # units, far below its values (see the docstring)
            v = raw[~np.isnan(raw)]
            s = 1e-6 * max(float(np.abs(v).max()) if v.size else 0.0, 1.0)
        out[c] = s
    return out, heavy


def _changes(raw: np.ndarray) -> np.ndarray:
    """The samples of the 1-D ``raw`` that differ from the one before (and the first)."""
    return raw[np.r_[True, raw[1:] != raw[:-1]]]


#: a series whose residual bounds are all 0 where at least this share of its changes is
#: followed by another change holds readings between stretches of fresh ones (a staircase,
#: pulses or set-points change once between repeats: 0; a sine rounded with noise below the
#: step flickers at its steps: 0.3-0.5; ETT's LULL, exact zeros and short bursts: 0.55-0.7)
HELD_RUNS = 0.8


def _held_between_fresh(raw: np.ndarray) -> bool:
    """Whether most changes of the 1-D ``raw`` are followed by another (:data:`HELD_RUNS`)."""
    a, b = raw[:-1], raw[1:]
    change = np.isfinite(a) & np.isfinite(b) & (a != b)
    n = int(change[:-1].sum())
    return n > 0 and int((change[:-1] & change[1:]).sum()) >= HELD_RUNS * n


def _neighbour_residual(v: np.ndarray, m: int, k: int) -> np.ndarray:
    """The residual of the mean of ``v`` at the ``k`` nearest neighbours of the two-sided
    delay context of ``m`` samples a side (:func:`noise_level`) on the 1-D ``v``, over its
    noise gain."""
    t = np.arange(m, v.size - m)
    context = np.stack([v[t + o] for o in range(-m, m + 1) if o], axis=1)
    _, nb = loo_neighbours(context, k, exclusion=2 * m)
    return (v[t] - v[t[nb]].mean(axis=1)) / math.sqrt(1.0 + 1.0 / k)


#: SIMEX: noise of these multiples of the bound's square is added, each this many times
SIMEX_SHARES, SIMEX_DRAWS = (0.25, 0.5, 1.0), 4
#: the residual's RMS within this many MAD scales of its median, over that scale: 1.00 for
#: Gaussian noise, about 1.25 for a Student-t of 3 degrees of freedom; the few gross misses
#: where a map folds (beyond it) are left out
TAIL_CUT = 6.0


def _extrapolated_level(v: np.ndarray, m: int, k: int, residual: np.ndarray) -> float:
    """The neighbour bound of context ``m`` of the 1-D ``v`` (the MAD scale of its
    ``residual``, :func:`_neighbour_residual`) extrapolated to no context noise
    (simulation-extrapolation, Cook & Stefanski 1994), never above that bound.

    To first order in the noise, the squared bound is ``K (s² + d²) + B`` with ``d`` the
    level of white noise added to ``v``: ``K`` >= 1 how much the context's noise, through the
    signal's slopes, adds to the prediction's, ``B`` what the neighbours miss of a clean
    signal. A line through the bound at ``d² = 0`` and at the :data:`SIMEX_SHARES` of
    ``bound²`` (Gaussian noise drawn :data:`SIMEX_DRAWS` times each, from a fixed seed) gives
    ``s² + B / K`` as its intercept over its slope: the level without the magnification,
    still an upper bound where ``B`` is not small. That is the core of the noise (its MAD
    scale); it is scaled by the residual's RMS over its MAD scale within :data:`TAIL_CUT`,
    which brings heavy-tailed noise up towards its standard deviation (the Student-t's core
    alone made SURE keep noise: up to 18% more error on the logistic and Hénon maps), light-
    tailed noise down to it (uniform noise's MAD scale is 1.28x its standard deviation), and
    Gaussian noise a little above its level where the map's misses leak into the residual.
    It costs 12 more neighbour searches of the series (0.25 -> 1.9 s for one channel of
    4,000 samples). At 0 dB
    the bound bends (the neighbours lose the map's structure) and the line comes out above
    the bound. ``experiments/extrapolated_noise_probe.py`` measures where it acts and what
    it does."""
    rng = np.random.default_rng(0)  # the same answer for the same series
    r = residual - np.median(residual)
    bound = mad_scale(r)
    d2, b2 = [0.0], [bound * bound]
    for share in SIMEX_SHARES:
        for _ in range(SIMEX_DRAWS):
            d2.append(share * bound * bound)
            noisy = v + math.sqrt(d2[-1]) * rng.standard_normal(v.size)
            b2.append(_neighbour_bound(noisy, m, k) ** 2)
    # in units of the squared bound: polyfit squares its columns again, which under- or
    # overflows for bounds near 1e-100 or 1e80
    unit = bound * bound
    slope, intercept = np.polyfit(np.array(d2) / unit, np.array(b2) / unit, 1)
    if not (slope > 0 and intercept > 0):
        return bound
    tails = math.sqrt(float(np.mean(r[np.abs(r) < TAIL_CUT * bound] ** 2))) / bound
    return min(bound, bound * math.sqrt(intercept / slope) * tails)


def _neighbour_bound(v: np.ndarray, m: int, k: int) -> float:
    """The MAD scale of :func:`_neighbour_residual`: the neighbour bound of context ``m``."""
    return mad_scale(_neighbour_residual(v, m, k))


def _level(
    raw: np.ndarray, k: int, spectral: bool, checked_floor: bool, extrapolated: bool
) -> tuple[float, bool, bool]:
    """``(level, heavy, exact)`` of the 1-D ``raw`` (NaN ignored): :func:`noise_level`'s
    bound (0 where none is positive), whether it was raised for heavy tails, and whether an
    interpolator predicts all but ``EXACT_SHARE`` of the samples exactly."""
    v = raw[~np.isnan(raw)]
    levels, symmetric = [], []  # symmetric: (robust level, tail RMS) of each such one
    exact = False
    for offsets, weights in _INTERPOLATORS:
        lo, hi = -min(min(offsets), 0), max(max(offsets), 0)
        if v.size <= lo + hi + 2:
            continue
        level, core, pred, gain = _interpolator_bound(v, offsets, weights)
        levels.append(level)
        exact = exact or float(np.mean(core != pred)) <= EXACT_SHARE
        if lo and hi:  # symmetric: v_(t-1) and v_(t+1) through their sum (see there)
            symmetric.append((level, rms_off_slopes(v, core, pred, lo) / gain))
    interpolated = [lv for lv in levels if lv > 0]
    neighbour, residuals = {}, {}  # m: the neighbour bound of context m, and its residual
    for m in (1, 2, 4):
        if v.size < 10 * (k + 2 * m + 1):
            break
        residuals[m] = _neighbour_residual(v, m, k)
        neighbour[m] = mad_scale(residuals[m])
    levels += list(neighbour.values())
    # an interpolator predicting the samples exactly (a clean line, a constant-speed
    # encoder's counts): no noise to see; the other bounds left alone took the level (74
    # on a clean ramp 0..1999) and the fit smoothed the signal away
    positive = [] if exact else [lv for lv in levels if lv > 0]
    s = min(positive, default=0.0)
    heavy = False
    if s > 0:  # the minimum of noisy estimates is biased low: average those as small
        s = float(np.mean([lv for lv in positive if lv <= (1.0 + NEAR_MIN) * s]))
        # where a neighbour bound is clearly the tightest (a signal rough in time but
        # deterministic in state): where an interpolator is about as tight, the signal is
        # smooth and that bound is not magnified
        # (on evenly spaced samples: a context across a gap of NaN is not a state)
        usable = {m: b for m, b in neighbour.items() if b > 0}
        m = min(usable, key=usable.get, default=None)
        if (extrapolated and m is not None and interpolated and v.size == raw.size
                and usable[m] < (1.0 - NEAR_MIN) * min(interpolated)):  # fmt: skip
            s = min(s, _extrapolated_level(v, m, k, residuals[m]))
        robust, s = s, with_tails(s, symmetric, NEAR_MIN)
        if spectral or checked_floor:
            s = linear_noise_level(_longest_finite_run(raw), s, strict=not spectral)
        heavy = s > robust  # raised for the tails, and not lowered again
    return s, heavy, exact


#: ``noise_level="spectral"``: estimate the level with :func:`noise_level`'s ``spectral`` option
SPECTRAL = "spectral"


def check_noise_level(value, n_channels: int | None = None, name: str = "noise_level"):
    """A noise level a user knows (a sensor's datasheet, a recording at rest): None (estimate
    it with :func:`noise_level`), ``"spectral"`` (estimate it with ``spectral=True``), one
    standard deviation > 0 for every channel, or a list of one per channel. Returns None,
    ``"spectral"`` or, for ``n_channels``, a (C,) float array; ``ValueError``
    naming ``name`` for anything else (checked before fit when ``n_channels`` is None)."""
    if value is None or (isinstance(value, str) and value == SPECTRAL):
        return value
    try:  # real numbers only: no bools, strings, bytes, complex or objects, whatever numpy takes
        raw = np.asarray(value)
        items = value if isinstance(value, (list, tuple)) else []
        real = raw.dtype.kind in "iuf" and not any(isinstance(v, bool) for v in items)
        levels = raw.astype(float) if real else np.array([np.nan])
    except Exception:  # noqa: BLE001 -- e.g. a tensor that needs grad: refused by name below
        levels = np.array([np.nan])
    if levels.ndim > 1 or levels.size == 0 or not np.all(np.isfinite(levels) & (levels > 0)):
        raise ValueError(
            f"{name} must be None, 'spectral', a number > 0 or a list of one number > 0 per "
            f"channel, got {value!r}"
        )
    if n_channels is None:
        return levels
    if levels.ndim == 1 and levels.size != n_channels:
        raise ValueError(
            f"{name} gives {levels.size} level(s) but x has {n_channels} channel(s): give one "
            "number, or one per channel"
        )
    return np.broadcast_to(levels, (n_channels,)).astype(float)


def _longest_finite_run(v: np.ndarray) -> np.ndarray:
    """The longest stretch of ``v`` without NaN (a spectrum needs evenly spaced samples)."""
    start, length = longest_run(np.isfinite(v))
    return v[start : start + length]
