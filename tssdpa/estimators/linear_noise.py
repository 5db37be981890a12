"""The white-noise level of a series whose signal is a linear Gaussian process.

:func:`~tssdpa.estimators.white_noise.noise_level` measures residuals that leave each sample
out: upper bounds, tight where the signal is predictable from its neighbours. A signal driven
by white innovations of its own (an AR process, a diffusion) keeps an unpredictable part that
those residuals count as noise, and SURE then smooths the signal away (an AR(1) of
coefficient 0.5 at 20 dB: a level 6x the truth, an output 5x worse than the noisy series).

Where the signal is linear the spectrum tells the two apart: an AR(p) plus white noise has the
spectrum ``s^2 + q / |1 - sum_k a_k e^(-ikw)|^2``, whose floor ``s^2`` is fitted here by Whittle's
likelihood (:func:`~tssdpa.estimators.whittle.fit_arma_plus_noise`; p = 1-4, and for p >= 2 an
ARMA(p, 1) too, the model by BIC: a linear process of continuous time sampled at a fixed step has a
moving-average part, which an AR(p) mimics with a floor far too high); where the periodogram has
spectral lines (:func:`~tssdpa.estimators.whittle.spectral_lines`: sines, whose peaks those spectra
bend to, taking the spectrum beside them for noise) the same models are fitted again without them,
and the lower of the two answers taken. Where the series has a period
(:func:`~tssdpa.estimators.whittle.seasonal_period`) the same models times a seasonal (1, 1) factor
of that period are fitted too, on the whole periodogram, and where one beats the plain models by BIC
the rule below is applied to it as well and the lower of the two answers taken (a seasonal ARMA at
20 dB: the bound 5.5-6x the truth, the plain spectra no lower; :func:`_whittle_fits`,
:func:`_linear_noise_level` say why only lower) -- where the bound calls most of the series noise,
the seasonal answer alone. Second-order statistics cannot tell a nonlinear signal from a linear one
(a coarsely sampled Lorenz flow fits an AR(p) plus a floor at 0.44 of its true noise level), so
:func:`linear_noise_level` lowers the upper bound to the fitted floor only where all of these hold:

* the series is linear as far as forecasting can tell: the mean of the k nearest patterns'
  futures does not forecast it better than a least-squares autoregression, at 1 and 2 steps
  (:func:`neighbour_over_linear`);
* the noise is a small part of the series (the fitted floor below a quarter of its variance):
  there over-smoothing destroys most, while at low SNR the bound is loose by little and a
  level too low costs much (0.85 of the truth made smooth series' errors 1.1-2x larger);
* the bound leaves at least half of the variance to the signal: a series it calls mostly
  noise is nearly white, and its spectrum says nothing of the split (the Ikeda map at 0 dB
  fits an AR(2) with no noise at all, its neighbour forecasts drowned). The default rule
  (below) exempts the seasonal model: a series with a period is no white one, and a seasonal
  process whose neighbouring samples say little of each other (a SAR(1)_12) has a bound that
  claims most of its variance (9x the noise level at 20 dB) where the seasonal spectrum puts the
  noise far lower. Its checks keep a drowned repeating signal at 0 dB out (the floor above a
  quarter of the variance; unidentified, its interval's top there too), while the spectral
  option, which takes a floor it cannot tell from 0, keeps this check;
* the fit rejects the bound (twice the log-likelihood ratio above 3.84, a chi-square test at
  5%), and its floor is at least 25% below it: a smooth nonlinear signal the AR(p) spectrum
  fits imperfectly can pull the floor some 20% low (Lorenz-96 at 10 dB: 0.81 of the bound,
  which was within 5% of the truth).

Where the floor is identified its maximum-likelihood value is used (the top of its
confidence interval is 3-4x the noise level for an AR(1) of 0.5 at 20 dB, whose floor the fit
cannot identify: see the strict rule below), but never below a tenth of the bound.

Those conditions alone are the option ``noise_level="spectral"``
(``noise_level(spectral=True)``): on the fusion recording's gyroscope Y at 20 dB they all held
and the floor came out at a tenth of the true level on the first 1,500 samples
(``tests/estimators/test_linear_noise.py``), where the residual bound was within 12%. The
default (``strict``, :func:`~tssdpa.estimators.white_noise.noise_level` unless told
``checked_floor=False``) takes the floor only where two more hold:

* the floor is identified: the fit rejects a floor of 0 as it rejects the bound. An AR(1) of 0.5 at
  20 dB fits as well with no floor at all, and its maximum-likelihood floor is a guess (0.1-2.3x the
  truth over seeds; as the level, at 10 dB, errors up to 1.4x the bound's). Where it is not, but the
  bound is rejected, the default takes the top of the floor's 95% confidence interval
  (:func:`_upper_limit`) where that is plausible as above (below 0.75 of the bound, a small part of
  the variance) and the bound leaves at least 55% of the variance to the signal
  (``LIMIT_BOUND_SHARE``; at 0 dB a drowned nonlinear signal passes for linear; again not for the
  seasonal model): the largest level the spectrum allows. Until 2026-12-07 the bound was kept there,
  at 6x the truth for that AR(1), and SURE's output was 4.6-4.8x as far from the signal as the noisy
  series. The limit is the model's: a signal outside it (an ARMA(1, 1), which an AR(1) plus noise
  cannot tell from one) can get a limit below the truth, and at 10 dB an error up to 1.37x the
  bound's (docs/filters.md, "The checked floor");
* the fitted spectrum is the spectrum of each quarter of the series (:func:`misfit_p`: the
  periodogram of each quarter over the fitted spectrum -- a seasonal one's tapered, over its
  expectation --, in 8 runs of frequencies, a chi-square test at ``MISFIT_ALPHA``). A recording's
  spectrum has shoulders and notches no AR(4) follows, and moves as the recording goes from rest to
  motion: the fusion recording's stretches whose unchecked floor is far too low have p-values below
  1e-10. Quarters, not halves: heavy-tailed noise bunched in a stretch of a smooth nonlinear signal
  (Lorenz-96 at 10 dB, Student-t noise, seed 3) passed as halves (p 0.18) with a floor of half the
  truth.

``experiments/checked_floor_probe.py`` measures what the default does (docs/filters.md, "Rough
signals").
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from typing import NamedTuple

import numpy as np
import scipy  # submodules (scipy.stats) load where first used: imports stay light

from tssdpa.estimators.parallel import one_blas_thread
from tssdpa.estimators.whittle import (
    WhittleFit,
    arma_plus_noise_spectrum,
    fit_arma_plus_noise,
    line_frequencies,
    periodogram,
    seasonal_period,
    tapered_expectation,
)
from tssdpa.signal.neighbours import loo_neighbours

__all__ = ["FloorFit", "linear_noise_level", "misfit_p", "neighbour_over_linear",
           "whittle_floor"]  # fmt: skip

MAX_ORDER = 4  # AR orders tried (chosen by BIC)
NOISE_SHARE = 0.25  # the fitted level's square must be below this share of the variance
LR_THRESHOLD = 3.84 / 2  # half the 95% point of chi-square(1): a log-likelihood difference
MIN_DROP = 0.75  # the fitted level must be below this fraction of the bound
BOUND_SHARE = 0.5  # and the bound's square below this share of the variance
LIMIT_BOUND_SHARE = 0.45  # at most this share to take the top of an unidentified floor's interval
# the seasonal model's: none (``checked_floor_probe.py --set seasonal --plain-bound-share``)
SEASONAL_BOUND_SHARE = SEASONAL_LIMIT_BOUND_SHARE = math.inf
FLOOR = 0.1  # the fitted level is at least this fraction of the bound
BINS = 256  # the periodogram's means over this many runs are fitted (seasonal models: all)
MIN_SAMPLES = 200  # shorter stretches without NaN keep the bound
UPPER_STEPS = 10  # bisection steps of the confidence limit: the level to within 0.5%
ZERO_FLOOR = 1e-12  # the noise variance (over the periodogram's mean) tested as "no floor"
MISFIT_ALPHA = 0.01  # the strict rule needs the spectrum's misfit p-value at least this
MISFIT_PARTS, MISFIT_BANDS = 4, 8  # stretches of the series, runs of frequencies in each


def neighbour_over_linear(v: np.ndarray, h: int, m: int = 4, k: int = 8, p: int = 8) -> float:
    """The ``h``-step forecast error of the mean future of the ``k`` nearest ``m``-sample
    patterns (never those within ``m + h`` samples in time: left out) over that of a
    least-squares AR(``p``) (in-sample, which favours it slightly: a series is called linear
    a little more readily). Below 1 the series has structure a linear model misses."""
    t = np.arange(max(m, p) - 1, v.size - h)
    keys = np.stack([v[t - i] for i in range(m)], axis=1)
    _, nb = loo_neighbours(keys, k, exclusion=m + h)
    ok = (nb >= 0).all(axis=1)
    neighbour = v[t[np.maximum(nb, 0)] + h].mean(axis=1)
    X = np.column_stack([np.ones(t.size)] + [v[t - i] for i in range(p)])
    coef, *_ = np.linalg.lstsq(X, v[t + h], rcond=None)
    err_nb = np.mean((v[t + h] - neighbour)[ok] ** 2)
    err_lin = np.mean((v[t + h] - X @ coef)[ok] ** 2)
    return float(err_nb / err_lin) if err_lin > 0 else math.inf


class FloorFit(NamedTuple):
    """:func:`whittle_floor`'s answer for one series."""

    level: float  #: the white-noise level at the fitted floor (unconditioned)
    rejected: bool  #: the fit rejects the bound (its floor fixed there fits worse, LR > 3.84)
    identified: bool  #: the fit rejects a floor of 0 the same way: there is a floor to see
    misfit_p: float  #: p-value of the fitted spectrum on the quarters (:func:`misfit_p`)
    seasonal: tuple = ()  #: the model's seasonal factor ``(s, Φ, Θ)``, or none


#: the last answers of :func:`linear_noise_level`, by (the series' bytes' digest, its length,
#: the bound, strict): a fit measures a channel several times over (the joint fit, the
#: channel alone, its scale), and the Whittle fits are the dearest part of a noise level
_ANSWERS: OrderedDict = OrderedDict()
_ANSWERS_LOCK = threading.Lock()
MAX_ANSWERS = 256


def linear_noise_level(v: np.ndarray, upper: float, strict: bool = True) -> float:
    """The noise level of the gap-free series ``v`` given the residual estimators' ``upper`` bound:
    the floor of the Whittle AR(p) or ARMA(p, 1) (times a seasonal factor) + noise fit where the
    conditions of the module's docstring hold, else ``upper`` (never more). ``strict`` (the default
    rule of :func:`~tssdpa.estimators.white_noise.noise_level`) adds two: the fitted spectrum fits
    each quarter of the series (``misfit_p`` at least ``MISFIT_ALPHA``), and the floor is identified
    -- else, where the bound leaves enough of the variance to the signal (``LIMIT_BOUND_SHARE``; the
    seasonal model needs not), the top of the floor's confidence interval (:func:`_upper_limit`);
    ``noise_level="spectral"`` leaves them out. A series met before (the same values, bound and
    rule) gets its answer again without the fits."""
    v = np.ascontiguousarray(v, dtype=np.float64)
    key = (hashlib.blake2b(v.tobytes(), digest_size=16).digest(), v.size, float(upper), strict)
    with _ANSWERS_LOCK:
        if key in _ANSWERS:
            _ANSWERS.move_to_end(key)
            return _ANSWERS[key]
    level = _linear_noise_level(v, upper, strict)
    with _ANSWERS_LOCK:
        _ANSWERS[key] = level
        while len(_ANSWERS) > MAX_ANSWERS:
            _ANSWERS.popitem(last=False)
    return level


def _linear_noise_level(v: np.ndarray, upper: float, strict: bool) -> float:
    if not upper > 0 or v.size < MIN_SAMPLES:
        return upper
    # a bound that calls most of v noise leaves only the seasonal model's answer to take, and
    # only for the strict rule: the spectral option takes a floor the fit cannot tell from 0 (a
    # drowned repeating pattern at 0 dB: far below the truth)
    seasonal_only = _seasonal_only(v, upper)
    if seasonal_only and (not strict or upper**2 > SEASONAL_BOUND_SHARE * float(np.var(v))
                          or seasonal_period(v) is None):  # fmt: skip
        return upper
    if any(neighbour_over_linear(v, h) < 1.0 for h in (1, 2)):  # stops at the first
        return upper
    with one_blas_thread(always=True):
        # the seasonal model (where it beats the plain one's BIC) and the plain one without
        # the spectral lines may lower the level, never raise it: they are there for the
        # peaks the plain spectrum can only mimic with a floor far too high. A seasonal fit
        # can win BIC and still fail the rule's checks (a floor not 25% below the bound, the
        # quarters' misfit) while the plain fit passes them: on ETTh1 stretches taking the
        # BIC winner's answer (the bound) threw the plain floor away and made the error up
        # to 2.2x worse (``checked_floor_probe.py --set recordings --without-seasonal`` at
        # 2823736)
        fits = _whittle_fits(v, upper, plain=not seasonal_only)
        return min((_model_level(v, upper, strict, *f) for f in fits), default=upper)


def _seasonal_only(v: np.ndarray, upper: float) -> bool:
    """The bound calls most of ``v`` noise (``BOUND_SHARE``): the plain model's answer is not
    taken (its fits on the whole periodogram still decide by BIC whether the seasonal one is)."""
    return upper**2 > BOUND_SHARE * float(np.var(v))


def _model_level(v: np.ndarray, upper: float, strict: bool, spectrum, order: int,
                 free: WhittleFit, fixed: WhittleFit) -> float:  # fmt: skip
    """:func:`linear_noise_level`'s answer from one model's fits (:func:`_whittle_fits`)."""
    # where the spectrum cannot tell (a rough signal at high SNR) the floor's optimum can
    # be 0: keep it within a factor 10 of the bound (20 dB), as it also scales sigma's grid
    level = max(math.sqrt(free.s2), FLOOR * upper)
    rejected = fixed.nll - free.nll > LR_THRESHOLD
    if not (rejected and _plausible(level, v, upper)):
        return upper
    # the strict checks last: they cost more fits, and most series stop above
    if strict:
        identified, p = _floor_checks(v, spectrum, order, free)
        if p < MISFIT_ALPHA:
            return upper
        if not identified:
            # the top of the plain model's interval only where the bound rules out an SNR
            # below about 1 dB: at 0 dB a drowned nonlinear signal passes for linear (a pulse
            # train: a limit of 0.66 of the truth, an error 1.76x the bound's)
            limit = SEASONAL_LIMIT_BOUND_SHARE if free.seasonal else LIMIT_BOUND_SHARE
            if upper**2 > limit * float(np.var(v)):
                return upper
            level = _upper_limit(spectrum, order, free, fixed, upper)  # >= FLOOR * upper
            if not _plausible(level, v, upper):
                return upper
    return level


def _plausible(level: float, v: np.ndarray, upper: float) -> bool:
    """The noise is a small part of ``v`` at ``level`` (NOISE_SHARE of its variance) and
    ``level`` is clearly below the bound (MIN_DROP)."""
    return level**2 <= NOISE_SHARE * float(np.var(v)) and level < MIN_DROP * upper


def _upper_limit(spectrum, order: int, free: WhittleFit, fixed: WhittleFit, upper: float):
    """The largest noise level the fit does not reject (twice the log-likelihood ratio of the
    noise held there against ``free`` at most 3.84): the top of the floor's 95% confidence
    interval, by bisection in log between ``free``'s floor (or a tenth of the bound) and the
    bound ``upper``, which ``fixed`` shows rejected.

    For a floor the spectrum sees but cannot tell from 0 (a rough signal at high SNR): the
    maximum-likelihood floor is a guess there (0.1-2.3x the truth over seeds, an AR(1) of 0.5
    at 20 dB), and the bound, which counts the signal's innovations as noise, made SURE smooth
    the signal away (an output 5x worse than the noisy series); the limit lies between them,
    where the spectrum's own evidence puts it: above the truth with 95% confidence where the
    signal is of the model's kind, and possibly below it where it is not (an ARMA(1, 1) at
    10 dB: 0.3-0.7 of the truth; ``experiments/checked_floor_probe.py``). The quarters' misfit
    test (:func:`misfit_p`) has judged the free fit, not the fit at the limit."""
    w, power, counts = spectrum
    lo = 2.0 * math.log(max(math.sqrt(free.s2), FLOOR * upper))
    hi = 2.0 * math.log(upper)
    starts = [fixed.theta, free.theta[:-1]]  # the spectrum's shape: free's, or the bound's
    for _ in range(UPPER_STEPS):
        mid = 0.5 * (lo + hi)
        fits = [fit_arma_plus_noise(w, power, order, s2=math.exp(mid), start=s, counts=counts,
                                    **_family(free)) for s in starts]  # fmt: skip
        best = min(fits, key=lambda f: f.nll)
        starts[0] = best.theta
        if best.nll - free.nll > LR_THRESHOLD:
            hi = mid
        else:
            lo = mid
    return math.sqrt(math.exp(lo))


def misfit_p(v: np.ndarray, a, q: float, s2: float, b=(), seasonal=(),
             parts: int = MISFIT_PARTS, bands: int = MISFIT_BANDS, lines=()) -> float:  # fmt: skip
    """The p-value of the ARMA(``a``, ``b``, ``q``) (times a ``seasonal`` factor ``(s, Φ,
    Θ)``) + white noise (``s2``) spectrum as the spectrum of each of ``parts`` equal stretches
    of ``v``: each stretch's periodogram over the spectrum is near 1 on average in each of
    ``bands`` runs of frequencies (the ratios are independent exponentials of mean 1 where the
    model holds: a run of ``n`` sums to ``n +- sqrt(n)``); the runs' squared standardised sums
    add up to a chi-square of ``parts * bands`` degrees of freedom. A spectrum the model cannot
    follow (a recording's shoulders and notches) or one that moves between the stretches (a
    recording at rest, then in motion) is rejected. A seasonal spectrum's peaks can be
    narrower than a stretch's frequency spacing: there the tapered periodogram is compared
    with its expectation (:func:`~tssdpa.estimators.whittle.tapered_expectation`). ``lines``:
    the frequencies (radians per sample) of sines the fit left out
    (:func:`~tssdpa.estimators.whittle.line_frequencies`), whose power no ARMA spectrum
    describes: the tapered periodogram is compared there too (a sine leaks little beyond the
    taper's main lobe, two frequency spacings each side; into the plain periodogram's values
    it leaks as the inverse square of the distance, and a strong sine failed the true
    spectrum), and each stretch's values within two spacings of a line are left out; where
    fewer than ``bands`` are left the p-value is 0: nothing is left to judge the fit by."""
    stat = 0.0
    lines = np.asarray(lines, dtype=float)
    for part in np.array_split(v, parts):
        if seasonal or lines.size:
            power, expected = tapered_expectation(part, a, q, s2, b, seasonal)
            spacing = 2.0 * math.pi / part.size
            w = spacing * np.arange(1, (part.size - 1) // 2 + 1)[::2]  # the values it keeps
        else:
            w, power, _ = periodogram(part)
            expected = arma_plus_noise_spectrum(w, a, q, s2, b)
        if power.size < bands:  # an empty run: a p-value of NaN, which no test rejects
            raise ValueError(f"v of {len(v)} samples is too short for the misfit test: "
                             f"{parts} stretches of {bands} runs of frequencies each")  # fmt: skip
        if lines.size:
            far = np.abs(w[:, None] - lines[None, :]).min(axis=1) > 2.0 * spacing
            if far.sum() < bands:
                return 0.0
            power, expected = power[far], expected[far]
        for run in np.array_split(power / expected, bands):
            stat += (run.sum() - run.size) ** 2 / run.size
    return float(scipy.stats.chi2.sf(stat, parts * bands))


def whittle_floor(v: np.ndarray, upper: float) -> FloorFit:
    """The Whittle AR(p) or ARMA(p, 1) (times a seasonal factor) + noise fit to the gap-free
    ``v`` whose answer :func:`linear_noise_level`'s default rule takes (:func:`_whittle_fits`:
    the plain model chosen by BIC, up to ``MAX_ORDER``, or the seasonal one or the plain one
    without the spectral lines where its answer is lower; the free fit started from the bound's
    optimum too), compared with the same model's fits with the noise fixed at the bound
    ``upper`` and at 0 (a likelihood-ratio test each, twice the log-likelihood ratio above
    3.84), and its :func:`misfit_p`. ``upper`` must be positive (:func:`linear_noise_level`
    checks). Where the bound calls most of ``v`` noise the rule takes the seasonal model's
    answer alone, or keeps the bound; where there is no seasonal model to take, this reports the
    plain model (whose answer the rule does not take)."""
    fits = _whittle_fits(v, upper, plain=not _seasonal_only(v, upper))
    fits = fits or _whittle_fits(v, upper)
    # min keeps the first of equals: the plain model where both answers are the same
    spectrum, order, free, fixed = min(fits, key=lambda f: _model_level(v, upper, True, *f))
    identified, p = _floor_checks(v, spectrum, order, free)
    # a level above the bound fails linear_noise_level's MIN_DROP
    return FloorFit(level=math.sqrt(free.s2), rejected=fixed.nll - free.nll > LR_THRESHOLD,
                    identified=identified, misfit_p=p, seasonal=free.seasonal)  # fmt: skip


def _whittle_fits(v: np.ndarray, upper: float, plain: bool = True) -> list:
    """The models fitted, each as ``((w, power, counts), order, free, fixed)``: the periodogram
    fitted, the AR order, the free fit and the fit with the noise at ``upper``. First the model
    chosen by BIC among the AR(p) and (p >= 2) ARMA(p, 1) plus noise, on the periodogram binned
    (``BINS``); then, where ``v`` has a period
    (:func:`~tssdpa.estimators.whittle.seasonal_period`) and the same models times a seasonal
    (1, 1) factor of that period beat them by BIC on the whole periodogram (bins would smear the
    narrow peaks at the period's harmonics), the best of those; then, where the periodogram has
    spectral lines (:func:`~tssdpa.estimators.whittle.spectral_lines`), the plain model again on
    the binned periodogram without them. A seasonal ARMA's spectrum lies outside the AR(p) /
    ARMA(p, 1) spectra, which mimic it with a floor far too high (at 20 dB the level was the
    bound, 5.5-6x the truth: ``experiments/noise_level_probe.py --fit --series seasonal_arma``);
    so do sines, whose peaks those spectra bend to, taking the spectrum beside them for noise (a
    sine over an AR(1) at 20 dB kept the bound, over 1.5x the noise level). The lines stay in
    the first fit and the seasonal one: a seasonal spectrum's peaks can be as narrow as a
    sine's, and they are what its factor describes, while a recording's spectrum is no ARMA plus
    lines, and without its lines the plain fit can end further from it (a first version that
    replaced the fit: ETTh1 stretches kept the bound, up to 2.2x the error; docs/filters.md,
    "Spectral lines"). ``plain`` False: the seasonal model alone, where it wins."""
    fits = []
    if plain:
        binned = periodogram(v, BINS)
        fits.append((binned, *_best_model(binned, upper)[1:]))
    season = seasonal_period(v)
    if season is not None:
        whole = periodogram(v)
        seasonal = _best_model(whole, upper, season)
        if seasonal[0] < _best_model(whole, upper)[0]:
            fits.append((whole, *seasonal[1:]))
    if plain:
        binned = periodogram(v, BINS, drop_lines=True)
        if _lines_left_out(v, binned):
            fits.append((binned, *_best_model(binned, upper)[1:]))
    return fits


def _lines_left_out(v: np.ndarray, spectrum) -> bool:
    """Whether ``spectrum`` (``(w, power, counts)`` of ``v``) left out spectral lines: fewer
    frequencies counted than the periodogram has (bins or not, it counts them all)."""
    return float(np.sum(spectrum[2])) < (v.size - 1) // 2


def _family(fit: WhittleFit) -> dict:
    """The model of ``fit`` as :func:`fit_arma_plus_noise`'s ``ma`` and ``season``."""
    return {"ma": len(fit.b) > 0, "season": fit.seasonal[0] if fit.seasonal else 0}


def _bic(fit: WhittleFit, order: int, counts) -> float:
    """BIC / 2 of a free fit: its AR, MA and seasonal coefficients, ``q`` and ``s2``."""
    return fit.nll + 0.5 * (order + len(fit.b) + 2 * bool(fit.seasonal) + 2) * math.log(
        float(np.sum(counts))
    )


def _best_model(spectrum, upper: float, season: int = 0):
    """``(BIC / 2, order, free, fixed)`` of the AR(p) or (p >= 2) ARMA(p, 1) plus noise (times
    the seasonal factor of period ``season`` > 0) of least BIC, p up to ``MAX_ORDER``: its
    free fit (from the bound's optimum too) and its fit with the noise at ``upper``."""
    w, power, counts = spectrum
    best = None
    for order in range(1, MAX_ORDER + 1):
        for ma in (False, True) if order >= 2 else (False,):
            fixed = fit_arma_plus_noise(w, power, order, s2=upper**2, counts=counts, ma=ma,
                                        season=season)  # fmt: skip
            # from the bound's optimum too: the free fit must not end worse than the fixed one
            warm = np.r_[fixed.theta, math.log(upper**2 / float(np.mean(power)))]
            free = min((fit_arma_plus_noise(w, power, order, start=start, counts=counts, ma=ma,
                                            season=season)
                        for start in (None, warm)), key=lambda f: f.nll)  # fmt: skip
            bic = _bic(free, order, counts)
            if best is None or bic < best[0]:
                best = (bic, order, free, fixed)
    return best


def _floor_checks(v: np.ndarray, spectrum, order: int, free) -> tuple[bool, float]:
    """``(identified, misfit p-value)`` of the free fit ``free`` (:func:`_whittle_fits`)."""
    w, power, counts = spectrum
    # a floor of 0 (numerically: far below the spectrum's mean), from the default start and
    # from the free fit's spectrum shape (AR, MA, seasonal): the better of the two, so that a
    # floor is not called seen for want of a good fit without it
    none = ZERO_FLOOR * float(np.mean(power))
    zeros = [fit_arma_plus_noise(w, power, order, s2=none, start=start, counts=counts,
                                 **_family(free)) for start in (None, free.theta[:-1])]  # fmt: skip
    zero = min(zeros, key=lambda f: f.nll)
    return zero.nll - free.nll > LR_THRESHOLD, misfit_p(
        v, free.a, free.q, free.s2, free.b, free.seasonal,
        lines=line_frequencies(v) if _lines_left_out(v, spectrum) else (),
    )  # fmt: skip
