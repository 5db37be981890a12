"""Choosing hyperparameters from data: the one place every estimator's ``fit`` scores with.

* scales and grids: :func:`resolution`, :func:`lattice_step`, :func:`sigma_grid`,
  :func:`candidates` (the noise level: :mod:`~tssdpa.estimators.white_noise`); what
  white-noise scores cannot judge:
  :func:`repeating_channels`;
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

from tssdpa.checks import check_fraction, check_number, check_positive

__all__ = [
    "CANDIDATE_LISTS",
    "FitScoresView",
    "candidates",
    "check_fade",
    "check_no_empty_list",
    "choose_correction",
    "correction_sigmas",
    "fade_radius",
    "forecast_mse",
    "held_message",
    "heldout_mse",
    "lattice_step",
    "longest_run",
    "query_rows",
    "repeating_channels",
    "resolution",
    "search",
    "sigma_candidates",
    "sigma_grid",
    "SURE_EPS",
    "sure_mse",
    "sure_probe",
    "time_split",
]


#: the types of a parameter given as candidates (a range was refused, "embedding must be an
#: int, got range", though a list and np.arange were taken)
CANDIDATE_LISTS = (list, tuple, range, np.ndarray)


def candidates(value) -> list:
    """A parameter given as one value or as candidates (:data:`CANDIDATE_LISTS`) → a list."""
    return list(value) if isinstance(value, CANDIDATE_LISTS) else [value]


def check_no_empty_list(est, names) -> None:
    """``ValueError`` naming the first parameter of ``est`` in ``names`` given as an empty
    list of candidates (there would be nothing to choose from), as a pandas Series or a
    tensor, or as an array that is not 1-D (``np.array(3)`` raised "len() of unsized
    object", naming nothing)."""
    for name in names:
        value = getattr(est, name)
        if hasattr(value, "shape") and not isinstance(value, (np.ndarray, np.generic)):
            # a Series or a tensor of candidates: "value in choices" raised pandas' "truth
            # value of a Series is ambiguous", naming nothing
            raise ValueError(f"{name} must be one value or a list / 1-D array of candidates, "
                             f"got a {type(value).__name__}: pass {name}=list(...)")  # fmt: skip
        if isinstance(value, np.ndarray) and value.ndim == 0:
            raise ValueError(f"{name} must be one value or a 1-D array of candidates, got a "
                             f"0-d array: pass its value, {name}={value.item()!r}")  # fmt: skip
        if isinstance(value, np.ndarray) and value.ndim != 1:
            raise ValueError(f"{name} must be one value or a 1-D array of candidates, got an "
                             f"array of shape {value.shape}")  # fmt: skip
        if isinstance(value, CANDIDATE_LISTS) and len(value) == 0:
            raise ValueError(f"{name} is an empty list of candidates")


def longest_run(mask: np.ndarray) -> tuple[int, int]:
    """``(start, length)`` of the longest run of True in the 1-D ``mask`` ((0, 0) if none)."""
    edges = np.flatnonzero(np.diff(np.r_[0, np.asarray(mask, dtype=np.int8), 0]))
    if not len(edges):
        return 0, 0
    starts, ends = edges[::2], edges[1::2]
    k = int(np.argmax(ends - starts))
    return int(starts[k]), int(ends[k] - starts[k])


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


def lattice_step(x2: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """(C,) the step of the lattice each channel of the (T, C) series ``x2`` sits on, found
    from its changes between samples; 0 where none is found. ``noise``: the channels'
    white-noise levels (C,), which bound the steps looked for.

    A calibrated sensor's axis mixes the counts of several quantised readings (an IMU
    gyroscope: each axis a linear combination of three), so its values sit a hair either side
    of a grid's points, a cluster of distinct values at each, and :func:`resolution`, which
    looks at the gaps between values, sees a hair. Its changes ``x_t - x_(t-1)`` are whole
    steps plus a hair: their phases ``2 pi dx / s`` line up at the step ``s`` (the mean
    resultant length ``R(s)`` near 1), where the changes of a continuous series spread them
    (``R`` about ``1 / sqrt(n)``). The candidates are the changes themselves between
    :data:`LATTICE_RANGE` times the noise level (whole multiples of the step on a lattice),
    ``R`` over the changes of that size or more (the repeats of a slow signal, changes of a
    hair, line up at any step); the step is the smallest candidate within 10% of the best
    ``R`` (a multiple of the step lines up its even multiples too), refined as the median of
    the changes within a quarter of it. Found where the best ``R`` is above
    :data:`LATTICE_R` and the chance level of a Rayleigh test over the candidates, and ``R``
    peaks there: at :data:`LATTICE_PEAK` times the step it is at most half (the many small
    changes of heavy-tailed noise, Student-t of 1.5-2 degrees of freedom or impulses on
    Gaussian noise, line up the better the wider the step, and passed for a lattice of about
    3 noise levels without this test).
    """
    x2 = np.asarray(x2, dtype=float)
    out = np.zeros(x2.shape[1])
    for c in range(x2.shape[1]):
        level = float(noise[c])
        d = np.diff(x2[:, c])
        d = d[np.isfinite(d)]
        if not level > 0 or not math.isfinite(level):
            continue
        size = np.abs(d)
        moves = d[size >= LATTICE_RANGE[0] * level]
        size = size[(size >= LATTICE_RANGE[0] * level) & (size <= LATTICE_RANGE[1] * level)]
        if size.size < LATTICE_MIN_MOVES:
            continue
        steps = np.unique(np.quantile(size, np.linspace(0.0, 1.0, 256)))
        r = np.empty(steps.size)
        for k in range(0, steps.size, 32):  # (32, moves) phases at a time
            phase = np.exp(2j * np.pi * moves[None, :] / steps[k : k + 32, None])
            r[k : k + 32] = np.abs(phase.mean(axis=1))
        chance = math.sqrt(math.log(steps.size / 1e-6) / moves.size)
        if r.max() < max(LATTICE_R, chance):
            continue
        s = float(steps[np.flatnonzero(r >= 0.9 * r.max())[0]])
        near = size[np.abs(size - s) <= 0.25 * s]
        s = float(np.median(near)) if near.size else s
        # a lattice's alignment peaks at its step (a quarter wider, a whole step is 0.8 of
        # a turn off), where changes concentrated near 0 -- heavy-tailed noise, whose level
        # their tails raise -- line up the better the wider the step
        wider = abs(np.exp(2j * np.pi * moves / (LATTICE_PEAK * s)).mean())
        if wider <= 0.5 * abs(np.exp(2j * np.pi * moves / s).mean()):
            out[c] = s
    return out


#: :func:`lattice_step` looks for steps between these multiples of the noise level (below the
#: lower, the noise spreads the values over many steps and the lattice does not matter; a
#: lattice's rounding alone gives a level of 0.29 steps)
LATTICE_RANGE = (1 / 16, 4.0)
#: ... where the changes line up to a mean resultant length of at least this (continuous
#: series of 2,000 samples: 0.04-0.09; calibrated IMU axes as recorded: 0.56-1.0)
LATTICE_R = 0.3
#: ... out of at least this many changes of the candidates' size
LATTICE_MIN_MOVES = 32
#: ... and at most half as well at this multiple of the step (a peak, not a rising slope)
LATTICE_PEAK = 1.25


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
        # numbers only: asarray(dtype=float) read "1.5" and True as widths (one an edited
        # config.json held loaded and fitted)
        for s in candidates(sigma):
            check_number(s, name)
        cands = [float(s) for s in np.atleast_1d(np.asarray(sigma, dtype=float))]
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be > 0 (a float or a list of floats), got {sigma!r}"
        ) from None
    if not cands or any(not (s > 0 and math.isfinite(s)) for s in cands):
        raise ValueError(f"{name} must be > 0 (a float or a list of floats), got {sigma!r}")
    return cands


#: SURE's perturbation ``x + eps * noise * probe``: ``eps`` of the noise level
SURE_EPS = 1e-4


def sure_probe(shape, random_state, weights=None) -> np.ndarray:
    """SURE's random probe of ``shape``: +-1 drawn from ``random_state``, times the square root
    of ``weights`` where given (:func:`~tssdpa.estimators.noise_tails.tail_weights`, for noise
    with heavy tails). A probe scaled by ``sqrt(w)`` gives the
    weighted divergence ``sum_t w_t dy_t/dx_t`` (:func:`sure_mse`) as unbiased as weighing the
    +-1 probe's terms; its variance, ``sum_(t<j) w_t w_j (J_tj + J_jt)^2`` against
    ``sum_(t<j) (w_t J_tj + w_j J_jt)^2``, is never larger for a symmetric J and was lower on
    the one-sided filters tried -- an outlier's weight (a few hundred times the mean) no
    longer multiplies its neighbours' terms."""
    probe = np.random.default_rng(int(random_state)).choice([-1.0, 1.0], shape)
    return probe if weights is None else probe * np.sqrt(weights)


def sure_mse(x, y, y_perturbed, noise, probe, eps, dydx=None, weights=None) -> float:
    """Monte-Carlo SURE of a denoiser: an unbiased estimate of ``mean((y - clean)^2)``.

    ``y`` is the output on ``x``, ``y_perturbed`` the output on ``x + eps * noise * probe``
    (``probe`` random ±1, or ±``sqrt(w)`` for the divergence weighted by ``w``, which
    ``weights`` then leaves out; ``noise`` the per-channel noise level). For additive white noise
    ``mean((y - x)^2) - noise^2 + 2 noise^2 div`` has the expectation of the error against the
    clean signal; the divergence ``div`` is estimated from the one probe, or given exactly as
    ``dydx`` (``dy_t / dx_t`` per entry, broadcast against ``y``; then ``y_perturbed``,
    ``probe`` and ``eps`` are not used). NaN entries ignored. ``weights`` (broadcast against
    ``y``, mean 1 per channel) weigh each entry's divergence, ``noise^2`` taking the place of
    that entry's own squared noise: for heavy-tailed noise
    (:func:`~tssdpa.estimators.noise_tails.tail_weights`).
    """
    if dydx is None:
        ok = ~(np.isnan(y) | np.isnan(x) | np.isnan(y_perturbed))
        div_term = noise * probe * (y_perturbed - y) / eps  # noise^2 * dy/dx per entry
    else:
        ok = ~(np.isnan(y) | np.isnan(x))
        div_term = noise**2 * np.broadcast_to(dydx, y.shape)
    if weights is not None:
        div_term = weights * div_term
    per_entry = (y - x) ** 2 - noise**2 + 2.0 * div_term
    return float(np.mean(per_entry[ok])) if ok.any() else np.inf


def query_rows(lo: int, last: int, n: int) -> np.ndarray:
    """``n`` rows of ``lo .. last`` (all where there are fewer) spread over it: one drawn in
    each of ``n`` equal strata (seeded: the same rows at every fit). A regular grid aliased
    with a period: 1,000 rows of 2,400 fall on 7 residues of 12, none of them the row before a
    weekly spike in hourly data (residue 3), so no score saw the spike as a target."""
    if last - lo + 1 <= n:
        return np.arange(lo, last + 1)
    edges = np.linspace(lo, last + 1, n + 1).astype(int)  # n strata of one row or more
    return np.random.default_rng(0).integers(edges[:-1], edges[1:])


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
    import pandas as pd  # for cv_results_ only: a second to import

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


# the kernel widths and fade of the residual forecaster and filter (tssdpa.filters.residual*)
def correction_sigmas(sigma, dim):
    """Kernel-width candidates in standardised units: ``sqrt(dim) * 2**-8 .. 1`` by default."""
    return sigma_candidates(sigma, sigma_grid(math.sqrt(dim), -8, 0, 9))


def check_fade(value):
    """``fade`` of the residual forecaster and filter: None, or a positive number."""
    if value is not None:
        check_positive(value, "fade")


def fade_radius(fade, nearest, dim):
    """Distance of the zero-valued pseudo-pattern, or None (no fade).

    When every holdout pattern has an (almost) exact copy in the library (periodic or quantised
    data) the largest nearest distance is ~0 and a radius proportional to it would switch off
    every correction for the slightest noise; there is nothing to calibrate it on, so no fade."""
    if fade is None or not nearest > 1e-6 * math.sqrt(dim):
        return None
    return fade * nearest
