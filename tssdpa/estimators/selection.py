"""Choosing hyperparameters from data: the one place every estimator's ``fit`` scores with.

* scales and grids: :func:`noise_scale`, :func:`resolution`, :func:`sigma_grid`,
  :func:`candidates`; what white-noise scores cannot judge: :func:`repeating_channels`;
* scores of one candidate: :func:`sure_mse` (Stein's unbiased risk estimate, no clean signal
  needed), :func:`heldout_mse` (error against a target on a held-out tail),
  :func:`forecast_mse` (rolling-origin h-step error);
* choices: :func:`search` (score every candidate, keep the best, report ``cv_results_``),
  :func:`choose_correction` (kernel width and shrinkage of a correction, kept only when its
  gain is significant);
* splits: :func:`time_split` (train | gap | validation tail, for trained models).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from tssdpa.checks import check_fraction
from tssdpa.estimators.linear_noise import linear_noise_level
from tssdpa.estimators.noise_tails import rms_off_slopes, with_tails
from tssdpa.signal.neighbours import loo_neighbours

__all__ = [
    "SPECTRAL",
    "FitScoresView",
    "candidates",
    "check_no_empty_list",
    "check_noise_level",
    "choose_correction",
    "forecast_mse",
    "held_message",
    "heldout_mse",
    "longest_run",
    "noise_level",
    "noise_scale",
    "repeating_channels",
    "resolution",
    "search",
    "sigma_candidates",
    "sigma_grid",
    "sure_mse",
    "time_split",
]


def candidates(value) -> list:
    """A parameter given as one value or as a list / tuple / array of candidates → a list."""
    return list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]


def check_no_empty_list(est, names) -> None:
    """``ValueError`` naming the first parameter of ``est`` in ``names`` given as an empty
    list of candidates (there would be nothing to choose from)."""
    for name in names:
        value = getattr(est, name)
        if isinstance(value, (list, tuple, np.ndarray)) and len(value) == 0:
            raise ValueError(f"{name} is an empty list of candidates")


def noise_scale(x2: np.ndarray, spectral: bool = False) -> float:
    """One noise level for a (T, C) series: the median over channels of :func:`noise_level`
    (the channels' white-noise levels, ``spectral`` as there; NaN ignored; 1.0 for a series
    too short to say)."""
    ok = [c for c in range(x2.shape[1]) if np.isfinite(x2[:, c]).sum() >= 3]
    return float(np.median(noise_level(x2[:, ok], spectral=spectral))) if ok else 1.0


def _mad_scale(r: np.ndarray) -> float:
    return float(np.median(np.abs(r - np.median(r))) / 0.6745)


#: the variance of a standard Gaussian truncated to +-3 (its mean square within +-3 standard
#: deviations, over the share of samples there)
_TRIM3_VARIANCE = 0.9733369


def _trimmed_scale(r: np.ndarray) -> float:
    """Standard deviation of ``r`` about its median over the entries within 3 MAD-scales of
    it, corrected for the trimming. Robust to a few large residuals (busy stretches of the
    signal), and on Gaussian noise its sampling error is about two thirds of the MAD's (2%
    against 3% at 2000 samples), which matters because the smallest of several noisy
    estimates is biased low."""
    m, s = float(np.median(r)), _mad_scale(r)
    if not s > 0:
        return s
    inside = r[np.abs(r - m) <= 3.0 * s]
    return float(np.sqrt(np.mean((inside - m) ** 2) / _TRIM3_VARIANCE))


# x_t from its neighbours: (offsets, weights); Var(x_t - sum w x_{t+o}) = s^2 (1 + sum w^2)
_INTERPOLATORS = (
    ((-1,), (1.0,)),
    ((-1, 1), (0.5, 0.5)),
    ((-2, -1, 1, 2), (-1 / 6, 4 / 6, 4 / 6, -1 / 6)),
)


#: estimates within this fraction of the smallest are averaged (each has a sampling error of
#: 2-3% at 2000 samples, so the smallest of several is biased low by about that much)
NEAR_MIN = 0.04


def noise_level(
    x2: np.ndarray, k: int = 8, max_samples: int = 4000, spectral: bool = False
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

    Those robust scales measure the core of the noise. Where its tails are heavy (a Student-t
    of 3 degrees of freedom: a core of 0.75-0.9 of its standard deviation, and SURE, told
    that, keeps much of the noise), a symmetric interpolator's RMS off the signal's steep and
    sharply bent samples replaces the level where that interpolator is among the tightest
    bounds and its RMS exceeds the level by ``HEAVY_TAILS`` (5%; in
    :mod:`~tssdpa.estimators.noise_tails`, with the evidence).

    Every one of these counts the white innovations of a rough signal (an AR process, a
    diffusion) as noise. With ``spectral``, where the series looks linear and the noise a small
    part of it, the floor of its spectrum (:func:`~tssdpa.estimators.linear_noise.
    linear_noise_level`, on the longest stretch without NaN) replaces the bound when it is
    clearly lower -- not the default: on smooth real recordings it can come out far too low
    (see that module).

    A channel that repeats its readings exactly (:func:`repeating_channels`: held between
    readings, clipped, idle at an exact value) is measured on the samples that differ from the
    one before: the repeats carry no fresh noise, and counted they pull every estimate toward 0.

    At most ``max_samples`` (the first) samples are used. Falls back to a tenth of the robust
    spread of the data where every residual is 0 (a constant series gives a small positive
    level, never 0).
    """
    out = np.empty(x2.shape[1])
    repeating = repeating_channels(x2[:max_samples])
    for c in range(x2.shape[1]):
        raw = x2[:max_samples, c]
        if c in repeating:  # held readings or plateaus: measured on the samples that change
            raw = raw[np.r_[True, raw[1:] != raw[:-1]]]
        v = raw[~np.isnan(raw)]
        levels, tails = [], []
        for offsets, weights in _INTERPOLATORS:
            lo, hi = -min(min(offsets), 0), max(max(offsets), 0)
            if v.size <= lo + hi + 2:
                continue
            core = v[lo : v.size - hi]
            pred = sum(w * v[lo + o : v.size - hi + o] for o, w in zip(offsets, weights))
            gain = math.sqrt(1.0 + sum(w * w for w in weights))
            levels.append(_trimmed_scale(core - pred) / gain)
            if lo and hi:  # symmetric: v_(t-1) and v_(t+1) through their sum (see there)
                tails.append(rms_off_slopes(v, core, pred, lo) / gain)
        for m in (1, 2, 4):
            if v.size < 10 * (k + 2 * m + 1):
                break
            t = np.arange(m, v.size - m)
            context = np.stack([v[t + o] for o in range(-m, m + 1) if o], axis=1)
            _, nb = loo_neighbours(context, k, exclusion=2 * m)
            levels.append(_mad_scale(v[t] - v[t[nb]].mean(axis=1)) / math.sqrt(1.0 + 1.0 / k))
        positive = [lv for lv in levels if lv > 0]
        s = min(positive, default=0.0)
        if s > 0:  # the minimum of noisy estimates is biased low: average those as small
            s = float(np.mean([lv for lv in positive if lv <= (1.0 + NEAR_MIN) * s]))
            s = with_tails(s, levels[1 : 1 + len(tails)], tails, NEAR_MIN)
            if spectral:
                s = linear_noise_level(_longest_finite_run(raw), s)
        if not s > 0 and v.size:
            s = 0.1 * _mad_scale(v) or 0.1 * float(np.std(v))
        if not s > 0:  # constant: any width gives the same output; keep it in the data's units
            s = 1e-6 * max(float(np.abs(v).max()) if v.size else 0.0, 1.0)
        out[c] = s
    return out


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


def longest_run(mask: np.ndarray) -> tuple[int, int]:
    """``(start, length)`` of the longest run of True in the 1-D ``mask`` ((0, 0) if none)."""
    edges = np.flatnonzero(np.diff(np.r_[0, np.asarray(mask, dtype=np.int8), 0]))
    if not len(edges):
        return 0, 0
    starts, ends = edges[::2], edges[1::2]
    k = int(np.argmax(ends - starts))
    return int(starts[k]), int(ends[k] - starts[k])


def _longest_finite_run(v: np.ndarray) -> np.ndarray:
    """The longest stretch of ``v`` without NaN (a spectrum needs evenly spaced samples)."""
    start, length = longest_run(np.isfinite(v))
    return v[start : start + length]


def resolution(x2: np.ndarray) -> np.ndarray:
    """(C,) the step of the grid each channel of the (T, C) series ``x2`` is recorded on: the
    smallest gap between its distinct finite values, 0 where it has fewer than two.

    A quantised channel (an ADC's counts, a logger keeping two decimals) has a step of one
    least significant bit; a continuous one, a gap far below its noise (about its range over
    T squared). Gaps within 64 units in the last place of the channel's largest magnitude are
    rounding, not steps (decimals stored in binary floating point: 0.07 * 3 is not 0.21), and
    are passed over.

    Values can also sit a hair either side of their grid points (a reading converted between
    units and rounded twice: ETTh2's oil temperature comes in pairs 0.0005 apart, the pairs
    0.1-0.2 apart). Gaps below ``JITTER_SHARE`` of the gaps' upper quartile are then passed
    over too, where the rest form a grid: ``MIN_GRID_POINTS`` points or more, at most one
    jitter gap per point, the values filling at least ``GRID_FILL`` of the points between
    their smallest and largest on a grid of the smallest remaining gap, and the samples
    revisiting them (two or more per point on average). Continuous values do none of this:
    their smallest remaining gap is near ``JITTER_SHARE`` of the quartile, which they fill to
    about that share, and each value is one sample; a glitch far from them moves neither the
    quartile nor the rule.

    >>> resolution(np.array([[0.1], [0.3], [0.7], [0.3]]))
    array([0.2])
    >>> grid = np.repeat(np.arange(20) * 0.2, 2) + np.tile([0.0, 0.0005], 20)  # jitter pairs
    >>> resolution(grid[:, None])
    array([0.1995])
    """
    x2 = np.asarray(x2, dtype=float)
    out = np.zeros(x2.shape[1])
    for c in range(x2.shape[1]):
        v = x2[:, c][np.isfinite(x2[:, c])]
        if v.size < 2:
            continue
        gaps = np.diff(np.unique(v))
        gaps = gaps[gaps > 64.0 * np.spacing(float(np.abs(v).max()))]
        if not gaps.size:
            continue
        out[c] = float(gaps.min())
        # the gaps between points of the grid; a quantile, which one glitch does not move
        steps = gaps[gaps >= JITTER_SHARE * float(np.quantile(gaps, 0.75))]
        points = steps.size + 1  # the grid points the values sit at
        grid = (
            points >= MIN_GRID_POINTS
            and gaps.size - steps.size <= points  # about one jitter gap per point at most
            and points * steps.min() >= GRID_FILL * gaps.sum()
            and 2 * points <= v.size
        )
        if steps.min() > out[c] and grid:
            out[c] = float(steps.min())
    return out


#: gaps between distinct values below this share of their upper quartile are jitter about a
#: grid point, where the rest form a grid (:func:`resolution`)
JITTER_SHARE = 1 / 8
#: ... of at least this many points, with at most as many jitter gaps as points,
MIN_GRID_POINTS = 16
#: ... that the values fill to at least this share of its points
GRID_FILL = 0.25


#: a channel repeating its previous value exactly at this share of its samples or more, while
#: off any coarse grid, holds its readings or sits at exact values (:func:`repeating_channels`)
REPEAT_SHARE = 0.25
#: ... and sits at exact values where at least this share of its repeats are of one value or
#: of its smallest or largest
PLATEAU_SHARE = 0.8


def repeating_channels(x2: np.ndarray) -> dict[int, tuple[float, bool]]:
    """``{channel: (share, plateau)}`` for the channels of the (T, C) series ``x2`` that repeat
    their previous value exactly at ``share >= REPEAT_SHARE`` of their pairs of successive
    samples without being on a grid that would explain it. ``plateau`` where nearly all the
    repeats are of one value or of the channel's extremes (a sensor clipped at its range, a
    signal idle at an exact value), else the readings look held (a sensor read more slowly than
    it was logged, each reading forward-filled until the next).

    A continuous reading never repeats by chance, and a quantised one repeats because its
    steps are coarse: a channel counts only where its step (:func:`resolution`) is below a
    thousandth of its typical change between samples that differ. Constant channels do not
    count. SURE and the residual noise estimates assume white noise in every sample, and
    repeated samples do not have it (held ones share theirs, exact ones have none): on them
    the estimates fall toward 0, so :func:`noise_level` measures such a channel on the samples
    that change.
    """
    x2 = np.asarray(x2, dtype=float)
    out = {}
    step = resolution(x2)
    for c in range(x2.shape[1]):
        a, b = x2[:-1, c], x2[1:, c]
        pair = np.isfinite(a) & np.isfinite(b)
        same = pair & (a == b)
        moves = np.abs(b - a)[pair & ~same]
        if moves.size == 0 or step[c] >= 1e-3 * float(np.median(moves)):
            continue
        share = float(same.sum() / pair.sum())
        if share >= REPEAT_SHARE:
            values, counts = np.unique(a[same], return_counts=True)
            ends = counts[(values == np.nanmin(x2[:, c])) | (values == np.nanmax(x2[:, c]))]
            fixed = max(int(counts.max()), int(ends.sum()))
            out[c] = (share, bool(fixed >= PLATEAU_SHARE * same.sum()))
    return out


def held_message(held: dict[int, float], names=None) -> str:
    """What :func:`repeating_channels` found held (``{channel: share}``), for a person;
    ``names`` the channels' names (else "x channel i")."""
    said = [f"{'x channel ' + str(c) if names is None else repr(names[c])} repeats its previous "
            f"value exactly at {s:.0%} of its samples (each value held for about "
            f"{1 / (1 - s):.1f} samples)" for c, s in held.items()]  # fmt: skip
    return ("; ".join(said) + ": a sensor read more slowly than it was logged? The noise "
            "level is measured on the samples that change, but held samples share their "
            "noise, which SURE takes for signal: the fit removes little of it (next to nothing "
            "where a value is held for 4 samples or more). Mark the repeats as missing (NaN "
            "where a sample equals the one before: the filter fills them from the samples "
            "around), or filter the readings alone and hold them again, or fit with a "
            "target.")  # fmt: skip


def sigma_grid(scale: float, low: float, high: float, n: int) -> np.ndarray:
    """Kernel-width candidates ``scale * 2**linspace(low, high, n)``.

    ``scale`` carries the units: the noise level times ``sqrt(dimension)`` for a filter on
    raw data, ``sqrt(dimension)`` for standardised patterns.
    """
    return scale * 2.0 ** np.linspace(low, high, n)


def sigma_candidates(sigma, default: np.ndarray, name: str = "sigma") -> list[float]:
    """``sigma`` given as None (use ``default``), a float or a list → a list of floats > 0."""
    if sigma is None:
        return [float(s) for s in default]
    try:
        if np.ndim(sigma) > 1:
            raise ValueError
        cands = [float(s) for s in np.atleast_1d(np.asarray(sigma, dtype=float))]
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be > 0 (a float or a list of floats), got {sigma!r}"
        ) from None
    if not cands or any(not (s > 0 and math.isfinite(s)) for s in cands):
        raise ValueError(f"{name} must be > 0 (a float or a list of floats), got {sigma!r}")
    return cands


def sure_mse(x, y, y_perturbed, noise, probe, eps, dydx=None) -> float:
    """Monte-Carlo SURE of a denoiser: an unbiased estimate of ``mean((y - clean)^2)``.

    ``y`` is the output on ``x``, ``y_perturbed`` the output on ``x + eps * noise * probe``
    (``probe`` random ±1, ``noise`` the per-channel noise level). For additive white noise
    ``mean((y - x)^2) - noise^2 + 2 noise^2 div`` has the expectation of the error against the
    clean signal; the divergence ``div`` is estimated from the one probe, or given exactly as
    ``dydx`` (``dy_t / dx_t`` per entry, broadcast against ``y``; then ``y_perturbed``,
    ``probe`` and ``eps`` are not used). NaN entries ignored.
    """
    if dydx is None:
        ok = ~(np.isnan(y) | np.isnan(x) | np.isnan(y_perturbed))
        div_term = noise * probe * (y_perturbed - y) / eps  # noise^2 * dy/dx per entry
    else:
        ok = ~(np.isnan(y) | np.isnan(x))
        div_term = noise**2 * np.broadcast_to(dydx, y.shape)
    per_entry = (y - x) ** 2 - noise**2 + 2.0 * div_term
    return float(np.mean(per_entry[ok])) if ok.any() else np.inf


def heldout_mse(y, target, start: int) -> float:
    """Mean squared error of ``y`` against ``target`` from row ``start`` on (NaN ignored)."""
    err = (y - target)[start:]
    ok = ~np.isnan(err)
    return float(np.mean(err[ok] ** 2)) if ok.any() else np.inf


def forecast_mse(pred, y, h: int) -> float:
    """Mean squared error of ``pred[t]`` (a forecast of ``y[t + h]``) over the known targets."""
    err = pred[:-h] - y[h:]
    ok = ~np.isnan(err)
    return float(np.mean(err[ok] ** 2)) if ok.any() else np.inf


class FitScoresView:
    """The deprecated ``fit_scores_`` of a search estimator: the rows of ``cv_results_``."""

    @property
    def fit_scores_(self):
        """Deprecated: the rows of ``cv_results_`` as dicts; use ``cv_results_``."""
        warnings.warn(
            "fit_scores_ is deprecated, use cv_results_ (a DataFrame)", DeprecationWarning, 2
        )
        return self.cv_results_.to_dict("records")


def search(grid: Iterable[dict], score: Callable[[dict], float]):
    """Score every candidate of ``grid`` (dicts of parameters); the lowest score wins (the
    first one on ties). Returns ``(best_params, cv_results)``: the winning dict and a
    DataFrame with one row per candidate, its parameters and its score ``mse``.

    Raises ``ValueError`` when no candidate gets a finite score.
    """
    rows, best, best_score = [], None, np.inf
    for params in grid:
        mse = score(params)
        rows.append({**params, "mse": mse})
        if mse < best_score:
            best, best_score = params, mse
    if best is None:
        raise ValueError("no candidate gave a finite score (is the series nearly all NaN?)")
    return dict(best), pd.DataFrame(rows)


def choose_correction(resid, corrections, sigmas, z=2.0, overlap=None):
    """Per column of ``resid`` (N, K): the sigma and shrinkage alpha in [0, 1] minimising the
    squared error of ``resid - alpha * correction`` (alpha in closed form). NaN rows ignored.

    A correction is kept only when its mean gain in squared error exceeds ``z`` standard errors,
    so on data where the linear model is already optimal the choice is ``alpha = 0`` rather
    than a correction fitted to noise in the holdout. ``overlap`` (K,) >= 1 counts how many
    successive rows share each error (h-step errors from origins 1 apart overlap by h - 1
    steps); the variance of the mean gain is multiplied by it, as for an m-dependent series,
    so long horizons need a larger holdout to earn a correction."""
    ok = np.isfinite(resid)
    n = np.maximum(ok.sum(axis=0), 1)
    m = np.ones(resid.shape[1]) if overlap is None else np.maximum(np.asarray(overlap, float), 1)
    r = np.where(ok, resid, 0.0)
    best_err = np.sum(r**2, axis=0)  # alpha = 0
    best_sigma = np.full(r.shape[1], sigmas[0])
    best_alpha = np.zeros(r.shape[1])
    for s, c in zip(sigmas, corrections):
        c = np.where(ok, np.nan_to_num(c, nan=0.0), 0.0)
        cc = np.sum(c * c, axis=0)
        alpha = np.clip(np.sum(r * c, axis=0) / np.where(cc > 0, cc, 1.0), 0.0, 1.0)
        gain = r**2 - (r - alpha * c) ** 2  # per row; 0 on NaN rows
        mean = gain.sum(axis=0) / n
        var = np.where(ok, (gain - mean) ** 2, 0.0).sum(axis=0) / np.maximum(n - 1, 1)
        err = np.sum((r - alpha * c) ** 2, axis=0)
        better = (err < best_err) & (mean > z * np.sqrt(var * m / n))
        best_err = np.where(better, err, best_err)
        best_sigma = np.where(better, s, best_sigma)
        best_alpha = np.where(better, alpha, best_alpha)
    return best_sigma, best_alpha


def time_split(T: int, gap: int, holdout: float, name: str = "x") -> tuple[int, int]:
    """Split T samples in time: training ``[0, a)``, validation ``[b, T)``, with ``gap``
    samples between them (``b - a = gap``, the length of one training example: no training
    example then touches the validation part).

    The validation part is the last ``holdout`` fraction of the samples (at least ``gap``);
    examples are cut from each part separately, so they never overlap.
    """
    holdout = check_fraction(holdout, "holdout")
    n_val = max(gap, int(round(T * holdout)))
    b = T - n_val
    a = b - gap
    if a < gap:
        raise ValueError(
            f"{name} has {T} samples: too short for a training part, a gap of {gap} samples "
            f"and a validation part of {n_val} samples"
        )
    return a, b
