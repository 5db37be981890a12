"""Linear and order-statistic denoisers from scipy.signal, plus the least-squares Wiener FIR.

Design (coefficients, windows) happens in ``fit`` (or on first use for the filters that learn
nothing from data); ``filter`` only applies it, as in scipy's ``butter`` / ``sosfilt`` split.
``window`` is the FIR length everywhere (scipy's ``window_length``, ``kernel_size``,
``mysize`` and the Wiener FIR's ``taps`` are accepted as deprecated names).
"""

from __future__ import annotations

import numpy as np
import scipy  # submodules (scipy.signal etc.) load where first used: imports stay light
from numpy.lib.stride_tricks import sliding_window_view

from tssdpa.checks import check_choice, check_fraction, check_int, check_positive
from tssdpa.estimators.base import Denoiser
from tssdpa.estimators.persistence import require_floats, saved_channels
from tssdpa.signal.lowpass import sosfiltfilt_padlen
from tssdpa.signal.missing import fill_missing, reading_ends, stops_early, unknown_past_readings


class _ZeroPhaseOption(Denoiser):
    """A filter with a ``zero_phase`` switch: causal unless it is on."""

    uses_target = False  # Butterworth, Savitzky-Golay: a fixed design

    @property
    def causal(self) -> bool:
        return not self.zero_phase

    def _validate_params(self):
        check_choice(self.zero_phase, "zero_phase", (True, False))  # "False" read as True


class IdentityFilter(Denoiser):
    """Returns its input (NaN filled; causal: NaN before a channel's first sample): the "no
    filtering" reference row.

    Parameters
    ----------
    causal : bool
        ``True``: a missing sample takes the last one before it (NaN before a channel's first
        sample). ``False``: gaps interpolated linearly, the leading ones take the first sample.
    """

    uses_target = False
    counts_samples = False  # nothing to count: an uneven DatetimeIndex is not warned of

    def __init__(self, causal: bool = True):
        self.causal = causal

    def _validate_params(self):
        check_choice(self.causal, "causal", (True, False))

    def _filter_1d(self, x, channel):
        return x


class ButterworthFilter(_ZeroPhaseOption):
    """Butterworth low-pass, causal (``sosfilt``) or zero-phase (``sosfiltfilt``).

    Parameters
    ----------
    cutoff : float
        Cut-off as a fraction of the Nyquist frequency, in (0, 1).
    order : int
        Filter order (for ``zero_phase`` the effective order doubles).
    zero_phase : bool
        ``False``: causal ``sosfilt`` with steady-state initial conditions scaled by the first
        sample (no start-up transient). ``True``: offline ``sosfiltfilt`` with scipy's default
        padding; a series no longer than that padding (15 samples at ``order=4``, 9 at
        ``order=2``) is refused, as scipy refuses it.
    """

    def __init__(self, cutoff: float = 0.1, order: int = 4, zero_phase: bool = False):
        self._store(locals())

    def _validate_params(self):
        super()._validate_params()
        check_fraction(self.cutoff, "cutoff (a fraction of Nyquist)")
        check_int(self.order, "order")

    def _fit(self, a, target):
        self.sos_ = scipy.signal.butter(self.order, float(self.cutoff), btype="low", output="sos")
        self.zi_ = scipy.signal.sosfilt_zi(self.sos_)

    def _filter_1d(self, x, channel):
        if self.zero_phase:
            # padded with fewer samples than scipy's rule (the series' length less one, as it
            # was) the start-up transient of the slow filter is the output: a 2-sample ramp
            # 0, 1 came back -0.98, -0.98, a 5-sample one 0..4 as -1.22..-0.70 (order 4,
            # cutoff 0.1)
            pad = sosfiltfilt_padlen(self.sos_)
            if len(x) <= pad:
                raise ValueError(f"x has {len(x)} samples: a zero-phase Butterworth filter of "
                                 f"order {self.order} needs more than its edge padding of "
                                 f"{pad}; give a longer series, or zero_phase=False")  # fmt: skip
            return scipy.signal.sosfiltfilt(self.sos_, x)
        y, _ = scipy.signal.sosfilt(self.sos_, x, zi=self.zi_ * x[0])
        return y


class SavitzkyGolayFilter(_ZeroPhaseOption):
    """Savitzky–Golay polynomial smoother.

    Zero-phase uses :func:`scipy.signal.savgol_filter` (centred window); the causal version fits
    the polynomial to the trailing ``window`` samples and evaluates it at the newest one
    (:func:`scipy.signal.savgol_coeffs` with ``pos=window - 1``); the first ``window - 1``
    outputs, whose windows reach back before the series, fit it with the first sample
    repeated there (as the other trailing filters do). ``window`` is scipy's
    ``window_length``, odd for the zero-phase filter (scipy fits an even window half a sample
    off centre); a series shorter than it is filtered with scipy's ``mode="nearest"`` (its end
    values repeated) instead of ``"interp"``, which needs a full window.

    Parameters
    ----------
    window : int
        Samples the polynomial is fitted to, at least 2 (formerly ``window_length``); odd for
        ``zero_phase=True``.
    polyorder : int
        Degree of the polynomial, at least 0 and below ``window``.
    zero_phase : bool
        ``True``: the centred, offline :func:`scipy.signal.savgol_filter`. ``False``: causal,
        fitted to the trailing ``window`` samples.
    """

    _renamed_params = {"window_length": "window"}

    def __init__(self, window: int = 11, polyorder: int = 2, zero_phase: bool = True):
        self._store(locals())

    def _validate_params(self):
        super()._validate_params()
        check_int(self.window, "window", 2)
        check_int(self.polyorder, "polyorder", 0)
        if self.polyorder >= self.window:
            raise ValueError(f"polyorder must be < window; got {self.polyorder} >= {self.window}")
        if self.zero_phase and self.window % 2 == 0:  # it was made window - 1 silently
            raise ValueError(f"window must be odd for zero_phase=True (an even window centres "
                             f"the fit half a sample off), got {self.window}")  # fmt: skip

    def _fit(self, a, target):
        if not self.zero_phase:
            # savgol_coeffs(use="conv") gives h with y[n] = sum_k h[k] x[n-k]
            self.coeffs_ = scipy.signal.savgol_coeffs(
                self.window, self.polyorder, pos=self.window - 1, use="conv"
            )

    def _filter_1d(self, x, channel):
        w = self.window
        if self.zero_phase:
            # an even window was made odd (w - 1) and a short series came back unfiltered
            mode = "interp" if len(x) >= w else "nearest"
            return scipy.signal.savgol_filter(x, w, self.polyorder, mode=mode)
        padded = np.concatenate([np.full(w - 1, x[0]), x])
        return scipy.signal.lfilter(self.coeffs_, [1.0], padded)[w - 1 :]


class ScipyWienerFilter(Denoiser):
    """Local adaptive Wiener filter :func:`scipy.signal.wiener` (offline, centred window).

    ``window`` is scipy's ``mysize``; ``noise=None`` lets scipy estimate the noise power as the
    mean local variance. As scipy's, it pads the series with zeros: within ``window // 2``
    samples of either end an offset pulls the output toward 0 (a constant 1 of 50 samples
    comes back as 0.97 at the ends with the default window, 0.87 with ``window=21``; less on
    a longer series, whose mean local variance is smaller: 0.993 and 0.967 on 200 samples),
    where the other sliding-window baselines repeat the end values. Kept so, as the function
    it names, in the committed comparisons. Where scipy's output is NaN (0/0: its noise
    estimate is 0 with ``window=1`` or an all-zero series) the input comes back instead.

    Parameters
    ----------
    window : int
        Length of the centred window (scipy's ``mysize``, formerly so named here).
    noise : float or None
        The noise power (variance), > 0; ``None``: scipy's estimate, the mean local variance.
    """

    causal = False
    uses_target = False
    _renamed_params = {"mysize": "window"}

    def __init__(self, window: int = 5, noise: float | None = None):
        self.window = window
        self.noise = noise

    def _validate_params(self):
        check_int(self.window, "window")
        if self.noise is not None:
            check_positive(self.noise, "noise")

    def _filter_1d(self, x, channel):
        noise = None if self.noise is None else float(self.noise)
        with np.errstate(divide="ignore", invalid="ignore"):
            y = scipy.signal.wiener(x, self.window, noise)
        return np.where(np.isfinite(y), y, x)


class _SlidingWindowFilter(Denoiser):
    """A statistic of the ``window`` samples trailing (causal) or centred on each sample,
    the series' end values repeated at its edges."""

    uses_target = False

    def _validate_params(self):
        check_int(self.window, "window")
        check_choice(self.causal, "causal", (True, False))

    def _padded(self, x):
        k = self.window
        if self.causal:
            return np.concatenate([np.full(k - 1, x[0]), x])
        left = (k - 1) // 2
        return np.concatenate([np.full(left, x[0]), x, np.full(k - 1 - left, x[-1])])


class MedianFilter(_SlidingWindowFilter):
    """Running median over ``window`` samples (scipy's ``kernel_size``): centred or trailing
    (causal), the end values repeated beyond the series' edges (centred and odd:
    ``scipy.ndimage.median_filter(mode="nearest")``; :func:`scipy.signal.medfilt` pads with
    zeros instead). An even centred window holds ``window // 2`` samples after each one and
    ``window // 2 - 1`` before it.

    Parameters
    ----------
    window : int
        Samples in each median (scipy's ``kernel_size``, formerly so named here).
    causal : bool
        ``True``: the trailing ``window`` samples. ``False`` (default): centred.
    """

    _renamed_params = {"kernel_size": "window"}

    def __init__(self, window: int = 5, causal: bool = False):
        self.window = window
        self.causal = causal

    def _filter_1d(self, x, channel):
        return np.median(sliding_window_view(self._padded(x), self.window), axis=1)


class MovingAverageFilter(_SlidingWindowFilter):
    """Boxcar average over ``window`` samples, trailing (causal) or centred, the end values
    repeated beyond the series' edges. An even centred window holds ``window // 2`` samples
    after each one and ``window // 2 - 1`` before it (pandas' ``rolling(center=True)`` and
    ``scipy.ndimage.uniform_filter1d`` hold the extra one before).

    Parameters
    ----------
    window : int
        Samples in each average.
    causal : bool
        ``True`` (default): the trailing ``window`` samples. ``False``: centred.
    """

    def __init__(self, window: int = 5, causal: bool = True):
        self.window = window
        self.causal = causal

    def _filter_1d(self, x, channel):
        # running sums block by block, each of the deviations from the block's first padded
        # sample: a sum of the values themselves grew with the offset (1e9 + unit noise over
        # 1e5 samples: 0.006 off np.convolve), one of the deviations from the series' mean
        # still with a drift (7e-4 on 0 .. 1e9), and that mean put later samples into the
        # causal filter's earlier outputs (2e-5 off where the series jumped to 1e9 later)
        k, padded = self.window, self._padded(x)
        out = np.empty(len(x))
        for s in range(0, len(x), _BLOCK):
            seg = padded[s : s + _BLOCK + k - 1]  # the windows of outputs s .. s + _BLOCK - 1
            c = np.concatenate([[0.0], np.cumsum(seg - seg[0])])
            out[s : s + _BLOCK] = seg[0] + (c[k:] - c[:-k]) / k
        return out


#: outputs per running sum of :class:`MovingAverageFilter` (its digits last this long)
_BLOCK = 4096


class WienerFIRFilter(Denoiser):
    """Optimal linear FIR (Wiener) filter fitted by least squares on the training split.

    Solves ``min_h (1/n) sum_t (s[t] - sum_k h[k] x[t-k] - b)^2 + ridge * ||h||^2`` per
    channel over its ``n`` equations (the mean squared error: ``ridge`` weighs alike on any
    training length), where ``x`` is the noisy training series and ``s`` the clean target
    given to ``fit`` (when no target is given, the filter is fitted to predict ``x`` itself
    from its *other* taps, which is the best the data allow without ground truth).
    ``window`` is the FIR length (formerly ``taps``): causal taps are ``k = 0 .. window-1``;
    zero-phase (``causal=False``) taps are centred, ``k = -(window//2) .. window//2``, so an
    even window has ``window + 1`` of them (the same filter as ``window + 1``).

    Parameters
    ----------
    window : int
        FIR length (formerly ``taps``).
    causal : bool
        ``True``: trailing taps ``0 .. window-1``. ``False``: centred taps (zero-phase).
    ridge : float
        L2 penalty on the taps, >= 0, on the mean squared error.
    """

    trainable = True
    _renamed_params = {"taps": "window"}
    _structural_params = ("window", "causal")  # the taps' number and placement

    def __init__(self, window: int = 16, causal: bool = True, ridge: float = 1e-6):
        self._store(locals())

    def _validate_params(self):
        check_int(self.window, "window")
        check_choice(self.causal, "causal", (True, False))
        check_positive(self.ridge, "ridge", allow_zero=True)

    def _lags(self):
        if self.causal:
            return 0, self.window - 1  # look-ahead 0, look-back window-1
        half = self.window // 2
        return half, half

    def _design(self, x):
        ahead, back = self._lags()
        padded = np.concatenate([np.full(back, x[0]), x, np.full(ahead, x[-1])])
        # row t holds x[t+ahead], ..., x[t-back] (newest first)
        return sliding_window_view(padded, ahead + back + 1)[:, ::-1]

    def _fit(self, a, target):
        if target is None and self.window == 1:  # it fitted no tap: every output the mean
            raise ValueError("window=1 without a target leaves no tap to fit (x[t] itself is "
                             "left out): give the clean target, or window >= 2")  # fmt: skip
        raw, a = a, fill_missing(a, self.causal)
        ahead, _ = self._lags()
        self.coef_, self.intercept_ = [], []
        ends = reading_ends(raw)
        if target is not None:  # past x's last reading its inputs are made up: no equation
            target = unknown_past_readings(target, ends)
        for c in range(a.shape[1]):
            X = self._design(a[:, c])
            if target is not None:
                s = target[:, c]
                mask = np.ones(X.shape[1], bool)
            else:  # self-supervised: predict x[t] from the other taps
                s = raw[:, c]  # a missing x[t] is no equation (filled, it was made up)
                mask = np.ones(X.shape[1], bool)
                mask[ahead] = False
            # a missing target sample is no equation (the input's gaps were filled above)
            known = np.isfinite(s)
            if known.sum() <= mask.sum() and target is not None and ends[c] < len(a):
                raise ValueError(  # x cut the target short, not the target itself
                    f"{stops_early('x', c, int(ends[c]), len(a))}: {int(known.sum())} samples "
                    f"with a target are left for the filter's {int(mask.sum())} taps"
                )
            if known.sum() <= mask.sum():
                # without a target, x is what was too short (it named a target not given)
                raise ValueError(
                    f"{'x' if target is None else 'target'} channel {c} has "
                    f"{int(known.sum())} finite samples; the filter "
                    f"has {int(mask.sum())} taps to fit"
                )
            Xm, s = X[known][:, mask], s[known]
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

    # persistence: the taps of every channel
    _fitted_schema = {"n_channels_": (int,)}
    _array_schema = ("coef_", "intercept_")

    def _set_state(self, fitted, arrays):
        C = saved_channels(fitted)
        coef, intercept = require_floats(arrays, "coef_", "intercept_")
        super()._set_state(fitted, {})
        ahead, back = self._lags()
        if coef.shape != (C, ahead + back + 1) or intercept.shape != (C,):
            raise ValueError(
                f"coef_ must be (n_channels_={C}, {ahead + back + 1}) with intercept_ ({C},); "
                f"got {coef.shape} and {intercept.shape}"
            )
        self.coef_, self.intercept_ = list(coef), list(intercept)
