"""Linear and order-statistic denoisers from scipy.signal, plus the least-squares Wiener FIR.

Design (coefficients, windows) happens in the constructor or in ``fit``; ``filter`` only applies
it, as in scipy's ``butter`` / ``sosfilt`` split.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import signal

from tssdpa.baselines._base import BaseDenoiser, check_positive_int

__all__ = [
    "IdentityFilter",
    "ButterworthFilter",
    "SavitzkyGolayFilter",
    "ScipyWienerFilter",
    "MedianFilter",
    "MovingAverageFilter",
    "WienerFIRFilter",
]


class IdentityFilter(BaseDenoiser):
    """Returns its input (NaN filled): the "no filtering" reference row."""

    def __init__(self, causal: bool = True):
        self.causal = bool(causal)

    def _filter_1d(self, x, channel):
        return x


class ButterworthFilter(BaseDenoiser):
    """Butterworth low-pass, causal (``sosfilt``) or zero-phase (``sosfiltfilt``).

    Parameters
    ----------
    cutoff : float
        Cut-off as a fraction of the Nyquist frequency, in (0, 1).
    order : int
        Filter order (for ``zero_phase`` the effective order doubles).
    zero_phase : bool
        ``False``: causal ``sosfilt`` with steady-state initial conditions scaled by the first
        sample (no start-up transient). ``True``: offline ``sosfiltfilt``.
    """

    def __init__(self, cutoff: float = 0.1, order: int = 4, zero_phase: bool = False):
        if not 0.0 < float(cutoff) < 1.0:
            raise ValueError(f"cutoff must be in (0, 1) (fraction of Nyquist); got {cutoff!r}")
        self.cutoff = float(cutoff)
        self.order = check_positive_int(order, "order")
        self.zero_phase = bool(zero_phase)
        self.causal = not self.zero_phase
        self.sos_ = signal.butter(self.order, self.cutoff, btype="low", output="sos")
        self.zi_ = signal.sosfilt_zi(self.sos_)

    def _filter_1d(self, x, channel):
        if self.zero_phase:
            default = 3 * (
                2 * len(self.sos_)
                + 1
                - min((self.sos_[:, 2] == 0).sum(), (self.sos_[:, 5] == 0).sum())
            )
            if len(x) > default:
                return signal.sosfiltfilt(self.sos_, x)
            return signal.sosfiltfilt(self.sos_, x, padlen=max(len(x) - 1, 0))
        y, _ = signal.sosfilt(self.sos_, x, zi=self.zi_ * x[0])
        return y


class SavitzkyGolayFilter(BaseDenoiser):
    """Savitzky–Golay polynomial smoother.

    Zero-phase uses :func:`scipy.signal.savgol_filter` (centred window); the causal version fits
    the polynomial to the trailing ``window_length`` samples and evaluates it at the newest one
    (:func:`scipy.signal.savgol_coeffs` with ``pos=window_length - 1``).
    """

    def __init__(self, window_length: int = 11, polyorder: int = 2, zero_phase: bool = True):
        self.window_length = check_positive_int(window_length, "window_length", 2)
        self.polyorder = check_positive_int(polyorder, "polyorder", 0)
        if self.polyorder >= self.window_length:
            raise ValueError(
                f"polyorder must be < window_length; got {polyorder} >= {window_length}"
            )
        self.zero_phase = bool(zero_phase)
        self.causal = not self.zero_phase
        if not self.zero_phase:
            # savgol_coeffs(use="conv") gives h with y[n] = sum_k h[k] x[n-k]
            self.coeffs_ = signal.savgol_coeffs(
                self.window_length, self.polyorder, pos=self.window_length - 1, use="conv"
            )

    def _filter_1d(self, x, channel):
        w = self.window_length
        if self.zero_phase:
            if len(x) < w:
                return x.copy()
            w = w if w % 2 == 1 else w - 1
            return signal.savgol_filter(x, w, min(self.polyorder, w - 1), mode="interp")
        padded = np.concatenate([np.full(w - 1, x[0]), x])
        return signal.lfilter(self.coeffs_, [1.0], padded)[w - 1 :]


class ScipyWienerFilter(BaseDenoiser):
    """Local adaptive Wiener filter :func:`scipy.signal.wiener` (offline, centred window).

    ``noise=None`` lets scipy estimate the noise power as the mean local variance.
    """

    causal = False

    def __init__(self, mysize: int = 5, noise: float | None = None):
        self.mysize = check_positive_int(mysize, "mysize")
        if noise is not None and not float(noise) > 0:
            raise ValueError(f"noise must be positive or None; got {noise!r}")
        self.noise = None if noise is None else float(noise)

    def _filter_1d(self, x, channel):
        with np.errstate(divide="ignore", invalid="ignore"):
            y = signal.wiener(x, self.mysize, self.noise)
        return np.where(np.isfinite(y), y, x)


class MedianFilter(BaseDenoiser):
    """Running median: centred (``medfilt``-like, edges replicated) or trailing (causal)."""

    def __init__(self, kernel_size: int = 5, causal: bool = False):
        self.kernel_size = check_positive_int(kernel_size, "kernel_size")
        self.causal = bool(causal)

    def _filter_1d(self, x, channel):
        k = self.kernel_size
        if self.causal:
            padded = np.concatenate([np.full(k - 1, x[0]), x])
        else:
            left = (k - 1) // 2
            padded = np.concatenate([np.full(left, x[0]), x, np.full(k - 1 - left, x[-1])])
        return np.median(sliding_window_view(padded, k), axis=1)


class MovingAverageFilter(BaseDenoiser):
    """Boxcar average over ``window`` samples, trailing (causal) or centred."""

    def __init__(self, window: int = 5, causal: bool = True):
        self.window = check_positive_int(window, "window")
        self.causal = bool(causal)

    def _filter_1d(self, x, channel):
        k = self.window
        if self.causal:
            padded = np.concatenate([np.full(k - 1, x[0]), x])
        else:
            left = (k - 1) // 2
            padded = np.concatenate([np.full(left, x[0]), x, np.full(k - 1 - left, x[-1])])
        c = np.concatenate([[0.0], np.cumsum(padded)])
        return (c[k:] - c[:-k]) / k


class WienerFIRFilter(BaseDenoiser):
    """Optimal linear FIR (Wiener) filter fitted by least squares on the training split.

    Solves ``min_h sum_t (s[t] - sum_k h[k] x[t-k] - b)^2 + ridge * ||h||^2`` per channel, where
    ``x`` is the noisy training series and ``s`` the clean target given to ``fit`` (when no target
    is given, the filter is fitted to predict ``x`` itself from its *other* taps, which is the
    best the data allow without ground truth). Causal taps are ``k = 0 .. taps-1``; zero-phase
    (``causal=False``) taps are centred, ``k = -(taps//2) .. taps//2``.
    """

    trainable = True

    def __init__(self, taps: int = 16, causal: bool = True, ridge: float = 1e-6):
        self.taps = check_positive_int(taps, "taps")
        self.causal = bool(causal)
        if not float(ridge) >= 0:
            raise ValueError(f"ridge must be >= 0; got {ridge!r}")
        self.ridge = float(ridge)

    def _lags(self):
        if self.causal:
            return 0, self.taps - 1  # look-ahead 0, look-back taps-1
        half = self.taps // 2
        return half, half

    def _design(self, x):
        ahead, back = self._lags()
        padded = np.concatenate([np.full(back, x[0]), x, np.full(ahead, x[-1])])
        # row t holds x[t+ahead], ..., x[t-back] (newest first)
        return sliding_window_view(padded, ahead + back + 1)[:, ::-1]

    def _fit(self, a, target):
        from tssdpa.baselines._base import fill_missing

        a = fill_missing(a, self.causal)
        ahead, _ = self._lags()
        self.coef_, self.intercept_ = [], []
        for c in range(a.shape[1]):
            X = self._design(a[:, c])
            if target is not None:
                s = target[:, c]
                mask = np.ones(X.shape[1], bool)
            else:  # self-supervised: predict x[t] from the other taps
                s = a[:, c]
                mask = np.ones(X.shape[1], bool)
                mask[ahead] = False
            Xm = X[:, mask]
            mx, ms = Xm.mean(0), s.mean()
            Xc = Xm - mx
            G = Xc.T @ Xc + self.ridge * len(Xc) * np.eye(Xc.shape[1])
            h = np.linalg.solve(G, Xc.T @ (s - ms))
            full = np.zeros(X.shape[1])
            full[mask] = h
            self.coef_.append(full)
            self.intercept_.append(ms - mx @ h)

    def _filter_1d(self, x, channel):
        if channel >= len(self.coef_):
            raise ValueError(f"x has more channels than the fitted filter ({len(self.coef_)})")
        return self._design(x) @ self.coef_[channel] + self.intercept_[channel]
