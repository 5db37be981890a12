"""Whittle fits of ARMA plus white-noise spectra, the tools of
:mod:`tssdpa.estimators.linear_noise`'s noise floor: the periodogram and its spectral lines
(sines, which no ARMA spectrum describes), the spectrum of an AR(p) or ARMA(p, 1) -- times a
seasonal (1, 1)_s factor where the series has a period -- plus white noise, its
maximum-likelihood fit, and the series' period.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
import scipy  # submodules (scipy.optimize) load where first used: imports stay light

from tssdpa.signal.autocorrelation import lagged_products

__all__ = ["WhittleFit", "arma_plus_noise_spectrum", "fit_arma_plus_noise", "line_frequencies",
           "periodogram", "seasonal_limit", "seasonal_period", "spectral_lines",
           "tapered_expectation"]  # fmt: skip


def _ar_from_partial(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AR coefficients ``a`` (``x_t = sum_k a_k x_(t-k) + e_t``) from partial
    autocorrelations ``r`` in (-1, 1) (Durbin-Levinson): every such ``a`` is stationary.
    Returns ``(a, J)`` with the Jacobian ``J[k, j] = da_k / dr_j``."""
    p = len(r)
    a, J = np.zeros(0), np.zeros((0, p))
    for k, rk in enumerate(r):
        # a' = [a - r_k reverse(a), r_k]
        J_new = np.zeros((k + 1, p))
        J_new[:k] = J - rk * J[::-1]
        J_new[:k, k] = -a[::-1]
        J_new[k, k] = 1.0
        a, J = np.concatenate([a - rk * a[::-1], [rk]]), J_new
    return a, J


def arma_plus_noise_spectrum(w, a, q: float, s2: float, b=(), seasonal=()) -> np.ndarray:
    """The spectral density (per unit of ``w`` / 2 pi) of an ARMA process with AR coefficients
    ``a`` (``x_t = sum_k a_k x_(t-k) + e_t + sum_k b_k e_(t-k)``), MA coefficients ``b`` and
    innovation variance ``q``, plus white noise of variance ``s2``, at angular frequencies
    ``w``; ``seasonal`` ``(s, Φ, Θ)`` multiplies the ARMA part by a seasonal (1, 1)_s factor
    ``|1 + Θ e^(-isw)|^2 / |1 - Φ e^(-isw)|^2``."""
    k = np.arange(1, len(a) + 1)
    gain = np.abs(1.0 - np.exp(-1j * np.outer(w, k)) @ np.asarray(a, dtype=float)) ** 2
    kb = np.arange(1, len(b) + 1)
    ma = np.abs(1.0 + np.exp(-1j * np.outer(w, kb)) @ np.asarray(b, dtype=float)) ** 2
    if seasonal:
        season, phi, theta = seasonal
        e = np.exp(-1j * season * np.asarray(w))
        ma = ma * np.abs(1.0 + theta * e) ** 2 / np.abs(1.0 - phi * e) ** 2
    return s2 + q * ma / gain


#: a periodogram value is a spectral line where it exceeds the median of the LINE_WINDOW values
#: centred on it by more than chance allows at level LINE_ALPHA over all the values tested
#: (Bonferroni: :func:`_line_ratio`); LINE_ALPHA 0 finds none
LINE_ALPHA, LINE_WINDOW = 0.01, 31


@functools.lru_cache(maxsize=64)
def _line_ratio(tested: int, alpha: float, window: int) -> float:
    """The ratio ``c`` of a value to the median of ``window`` values around it that ``tested``
    values of a smooth spectrum exceed with probability ``alpha`` in all: each value over the
    spectrum is an exponential of mean 1, and so is each of the window's, whose median (the
    j-th smallest, j its middle) is a sum of independent exponentials of means ``1 / (window -
    i)``, i < j (Renyi), so that ``P(I > c M) = E[exp(-c M)] = prod (window - i) / (window - i
    + c)`` (the value itself in its window only lowers that chance)."""
    rates = window - np.arange((window + 1) // 2)

    def excess(log_c):
        return float(np.sum(np.log(rates / (rates + math.exp(log_c))))) - math.log(alpha / tested)

    return math.exp(scipy.optimize.brentq(excess, -10.0, 30.0))


def spectral_lines(power: np.ndarray) -> np.ndarray:
    """Where the periodogram values ``power`` (at consecutive Fourier frequencies) hold a
    spectral line -- a sine, whose power sits in one or two values, not a spectrum's smooth
    peak: each value more than :func:`_line_ratio` times the median of the LINE_WINDOW values
    centred on it, which a smooth spectrum's values exceed with probability LINE_ALPHA in all,
    and the values on either side of one (a sine between two Fourier frequencies leaks into
    both). The first and last LINE_WINDOW // 2 values are never lines: no window is centred on
    them, and one further in sits far below the low-frequency end of a steep spectrum (AR(1)s
    of 0.95, 300 samples: "lines" at the lowest frequencies of most). A boolean mask like
    ``power``."""
    m, half = power.size, LINE_WINDOW // 2
    line = np.zeros(m, dtype=bool)
    if m <= 2 * half or LINE_ALPHA <= 0:
        return line
    around = scipy.ndimage.median_filter(power, size=LINE_WINDOW, mode="nearest")[half:-half]
    ratio = _line_ratio(m - 2 * half, LINE_ALPHA, LINE_WINDOW)
    line[half:-half] = power[half:-half] > around * ratio
    return line | np.r_[line[1:], False] | np.r_[False, line[:-1]]


def periodogram(v: np.ndarray, bins: int | None = None, drop_lines: bool = False):
    """``(w, I, counts)``: the periodogram ``|sum_t v_t e^(-iwt)|^2 / n`` of the centred series
    at the Fourier frequencies strictly between 0 and pi; with ``bins``, its means over that
    many runs of neighbouring frequencies (at their mean frequency), ``counts`` the number of
    frequencies in each (all 1 without). A spectrum that varies little within a run gives
    the same Whittle likelihood from the means, for a fraction of the work. ``drop_lines``
    leaves out the frequencies of :func:`spectral_lines` (before the runs): sines, which no
    ARMA spectrum describes -- fitted with them, an AR(p) plus noise bends to their peaks and
    takes the spectrum between for noise."""
    v = v - v.mean()
    n = v.size
    m = (n - 1) // 2
    w = 2.0 * np.pi * np.arange(1, m + 1) / n
    power = (np.abs(np.fft.rfft(v)) ** 2 / n)[1 : m + 1]
    if drop_lines:
        keep = ~spectral_lines(power)
        w, power = w[keep], power[keep]
    if bins is None or bins >= w.size:
        return w, power, np.ones(w.size)
    parts = np.array_split(np.arange(w.size), bins)
    counts = np.array([len(p) for p in parts], dtype=float)
    return (np.array([w[p].mean() for p in parts]), np.array([power[p].mean() for p in parts]),
            counts)  # fmt: skip


def line_frequencies(v: np.ndarray) -> np.ndarray:
    """The Fourier frequencies of ``v`` (radians per sample) that :func:`periodogram` leaves out
    with ``drop_lines``: those of its :func:`spectral_lines`."""
    w, power, _ = periodogram(v)
    return w[spectral_lines(power)]


class WhittleFit(NamedTuple):
    """:func:`fit_arma_plus_noise`'s answer."""

    nll: float  #: the negative log Whittle likelihood
    a: np.ndarray  #: AR coefficients
    b: np.ndarray  #: MA coefficients (none, or one)
    q: float  #: innovation variance
    s2: float  #: white-noise variance
    theta: np.ndarray  #: the optimiser's parameters (a ``start`` for another fit)
    seasonal: tuple = ()  #: ``(s, Φ, Θ)`` of a seasonal (1, 1)_s factor, or none


def fit_arma_plus_noise(w, power, order: int, s2=None, start=None, counts=None,
                        ma: bool = False, season: int = 0) -> WhittleFit:  # fmt: skip
    """Whittle fit of an AR(``order``) -- with ``ma`` an ARMA(``order``, 1), with ``season`` > 0
    times a seasonal (1, 1) factor of that period -- plus white noise to the periodogram ``(w,
    power)`` (``counts``: how many frequencies each entry averages, as :func:`periodogram`
    gives).

    ``s2`` None fits the noise variance too, else holds it fixed. The likelihood is
    ``sum(counts (log S + I / S))``. Parameters (``theta``): partial autocorrelations
    ``tanh(theta[:order])``, with ``ma`` the MA coefficient ``tanh(.)`` (invertible), with
    ``season`` the seasonal ``Φ = tanh(.)`` and ``Θ = tanh(.)``, then ``q = m exp(.)`` and
    (free noise only) ``s2 = m exp(.)``, ``m`` the periodogram's mean. The gradient is
    analytic (checked against finite differences in the tests).

    Why an MA part: a linear process of continuous time sampled at a fixed step (a damped
    oscillator driven by white noise, a sensor's second-order response) is an ARMA(p, p - 1),
    whose moving-average part an AR(p) plus noise can only mimic by a floor far too high. The
    floor of an ARMA(p, 1) plus noise is identified for p >= 2 only (at p = 1 a share of the
    noise passes for the MA part and back):
    :func:`~tssdpa.estimators.linear_noise._whittle_fits` tries it there.
    """
    E = np.exp(-1j * np.outer(w, np.arange(1, order + 1)))  # (F, order)
    counts = np.ones(len(w)) if counts is None else counts
    # in units of the periodogram's mean: a series of 1e100 has powers near 1e200, whose
    # squares overflowed (a RuntimeWarning to the user); the likelihood only shifts by a
    # constant, added back below, so fits of one periodogram still compare
    scale = float(np.mean(power))
    power, free = power / scale, s2 is None
    s2 = None if free else s2 / scale
    seasonal = season > 0
    iq = order + ma + 2 * seasonal  # where log q sits in theta; log s2 (free noise) follows it
    cos_w, cos_s, sin_s = np.cos(w), np.cos(season * np.asarray(w)), np.sin(season * np.asarray(w))

    def unpack(th):
        r = np.tanh(th[:order])
        a, J = _ar_from_partial(r)
        b = np.tanh(th[order : order + ma])
        phi, theta = np.tanh(th[order + ma : iq]) if seasonal else (0.0, 0.0)
        noise = math.exp(th[iq + 1]) if free else s2
        return a, J * (1.0 - r * r), b, phi, theta, math.exp(th[iq]), noise  # J: da / dtheta

    def nll_and_grad(th):
        a, J, b, phi, theta, q, noise = unpack(th)
        z = 1.0 - E @ a  # (F,)
        g = np.abs(z) ** 2
        m = 1.0 + 2.0 * b[0] * cos_w + b[0] ** 2 if ma else 1.0  # |1 + b e^(-iw)|^2
        k = 1.0  # the seasonal factor: none without a season (no work at every step)
        if seasonal:
            # |1 + Θ e^(-isw)|^2 and |1 - Φ e^(-isw)|^2 as sums of squares: 1 - 2Φ cos + Φ^2
            # cancels to 0 at the harmonics for Φ near 1
            ms = (1.0 + theta * cos_s) ** 2 + (theta * sin_s) ** 2
            gs = (1.0 - phi * cos_s) ** 2 + (phi * sin_s) ** 2
            k = ms / gs
        S = noise + q * m * k / g
        u = counts * (S - power) / S**2  # d nll / dS
        # dS/da_k = 2 q m k Re(conj(z) E_k) / g^2
        grad_a = (u * 2.0 * q * m * k / g**2) @ np.real(np.conj(z)[:, None] * E)
        grad = [grad_a @ J]
        if ma:  # dm/db = 2 cos w + 2 b, db/dtheta = 1 - b^2
            grad.append([np.sum(u * q * k / g * (2.0 * cos_w + 2.0 * b[0])) * (1.0 - b[0] ** 2)])
        if seasonal:  # d(1/gs)/dΦ = (2 cos sw - 2 Φ) / gs^2, dms/dΘ = 2 cos sw + 2 Θ
            d_phi = np.sum(u * q * m / g * ms * (2.0 * cos_s - 2.0 * phi) / gs**2)
            d_theta = np.sum(u * q * m / g * (2.0 * cos_s + 2.0 * theta) / gs)
            grad.append([d_phi * (1.0 - phi**2), d_theta * (1.0 - theta**2)])
        grad.append([np.sum(u * q * m * k / g)])
        if free:
            grad.append([np.sum(u) * noise])
        return float(np.sum(counts * (np.log(S) + power / S))), np.concatenate(grad)

    if start is None:
        start = np.zeros(iq + 1 + free)
        start[iq] = math.log(0.5)
        if seasonal:  # Φ = 0.5: from Φ = Θ = 0 both move alike at first
            start[iq - 2] = math.atanh(0.5)
        if free:
            start[iq + 1] = math.log(0.5)
    # bounds: tanh saturates beyond +-10, and the variances stay within e^+-30 of the
    # periodogram's mean (math.exp overflows near e^710 in a wild line search)
    limit = np.r_[np.full(iq, 10.0), np.full(1 + free, 30.0)]
    if seasonal:
        limit[iq - 2 : iq] = math.atanh(seasonal_limit(season, w))
    res = scipy.optimize.minimize(nll_and_grad, np.clip(start, -limit, limit), jac=True,
                                  method="L-BFGS-B", bounds=list(zip(-limit, limit)))  # fmt: skip
    a, _, b, phi, theta, q, noise = unpack(res.x)
    nll = res.fun + float(np.sum(counts)) * math.log(scale)
    factor = (season, float(phi), float(theta)) if seasonal else ()
    return WhittleFit(nll, a, b, q * scale, noise * scale, res.x, factor)


#: a period is an autocorrelation at least this high and this far above the smallest
#: autocorrelation at any shorter lag
MIN_PEAK = 0.2
#: the seasonal coefficients' largest size (:func:`seasonal_limit`) at the longest period
#: tried, on the whole periodogram: periods up to n / (2 pi), 6 cycles or more
MIN_SEASONAL_LIMIT = 0.5


def seasonal_limit(season: int, w) -> float:
    """The largest ``|Φ|``, ``|Θ|`` of a seasonal factor of period ``season`` fitted at the
    frequencies ``w``: ``1 - season dw / 2`` (``dw`` their spacing; 0 at least), where the
    factor's peaks and notches at the period's harmonics (half-width ``(1 - |Φ|) / season``)
    are still half a spacing wide. Narrower, they fit single periodogram values: Mackey-Glass
    (quasi-period about 50, 2,000 samples) took spikes at exactly the harmonics of 100 (Φ and
    Θ next to ±1), a large BIC gain for a line spectrum the model does not describe."""
    w = np.asarray(w, dtype=float)
    dw = float(w[1] - w[0]) if w.size > 1 else float(w[0]) if w.size else math.pi
    return max(0.0, 1.0 - 0.5 * season * dw)


def seasonal_period(v: np.ndarray, shortest: int = 3) -> int | None:
    """The period of ``v``: the lag, from ``shortest`` to n / (2 pi) (where
    :func:`seasonal_limit` on the whole periodogram is ``MIN_SEASONAL_LIMIT``), of the largest
    autocorrelation that is at least ``MIN_PEAK``, at least that far above the smallest
    autocorrelation at a shorter lag and no lower than the next lag's: a peak, not the slow
    decay of a smooth series (whose largest autocorrelation past lag 2 is lag 3: the SIR
    epidemic, where a seasonal spectrum of "period" 3 won BIC as mere extra freedom) nor a
    rise still going on at n / (2 pi). None where there is no such lag. Where the signal
    repeats nearly exactly the peaks at multiples of its period are as high, and the noise
    picks one of them (a noisy sawtooth: often a multiple)."""
    longest = int(v.size * (1.0 - MIN_SEASONAL_LIMIT) / math.pi)
    if longest < shortest:
        return None
    v = v - v.mean()
    size = float(np.max(np.abs(v)))
    if not 0.0 < size < math.inf:
        return None
    v = v / size  # the squares of 1e160 overflow
    acf = lagged_products(v, longest + 2)
    acf = acf / acf[0]
    falling = acf[:-1] >= acf[1:]  # (longest + 1,) no lower than the next lag's
    acf = acf[:-1]
    lags = np.arange(acf.size)
    prominent = acf - np.minimum.accumulate(acf) >= MIN_PEAK
    peak = (lags >= shortest) & (acf >= MIN_PEAK) & prominent & falling
    if not peak.any():
        return None
    return int(lags[peak][np.argmax(acf[peak])])


def tapered_expectation(part: np.ndarray, a, q: float, s2: float, b=(), seasonal=()):
    """``(power, expected)``: the periodogram of the Hann-tapered ``part`` (centred) at every
    other Fourier frequency strictly between 0 and pi, and its expectation under the
    :func:`arma_plus_noise_spectrum` of ``(a, q, s2, b, seasonal)``: the spectrum's
    autocovariance (its inverse transform on a grid 16x finer) times the taper's
    autocorrelation. Where the spectrum has peaks narrower than ``part``'s frequency spacing (a
    seasonal factor of Φ near 1) the plain periodogram over the spectrum at single
    frequencies is no exponential of mean 1 (at the true spectrum of a seasonal ARMA of Φ 0.9,
    2,000 samples, :func:`~tssdpa.estimators.linear_noise.misfit_p` rejected far more series
    than its level); the tapered periodogram over its expectation is, from the second
    frequency on (centring the stretch leaks into the first), and every other value is nearly
    independent of the next (the taper correlates neighbours)."""
    n = part.size
    taper = np.hanning(n)
    taper /= math.sqrt(float(np.sum(taper**2)))
    m = (n - 1) // 2
    power = np.abs(np.fft.rfft((part - part.mean()) * taper)[1 : m + 1]) ** 2
    fine = 16 * n
    w = 2.0 * np.pi * np.arange(fine // 2 + 1) / fine
    acov = np.fft.irfft(arma_plus_noise_spectrum(w, a, q, s2, b, seasonal), fine)[:n]
    kernel = acov * np.correlate(taper, taper, "full")[n - 1 :]  # (n,) lags 0 .. n - 1
    expected = 2.0 * np.real(np.fft.fft(kernel)[1 : m + 1]) - kernel[0]
    return power[::2], expected[::2]
