"""Wavelet shrinkage denoising (PyWavelets) with Donoho–Johnstone's universal threshold."""

from __future__ import annotations

import numpy as np

from tssdpa.baselines._base import BaseDenoiser

__all__ = ["WaveletDenoiser"]


class WaveletDenoiser(BaseDenoiser):
    """Discrete wavelet shrinkage: ``wavedec`` → threshold details → ``waverec`` (offline).

    The noise level is estimated from the finest detail coefficients as
    ``sigma = median(|d1|) / 0.6745`` and the universal threshold is
    ``scale * sigma * sqrt(2 log n)``.

    Parameters
    ----------
    wavelet : str
        Any PyWavelets discrete wavelet name (``"db4"``, ``"sym8"``, ...).
    level : int or None
        Decomposition depth; ``None`` = the largest useful level.
    mode : {"soft", "hard"}
        Thresholding rule.
    scale : float
        Multiplier on the universal threshold (1.0 = the textbook rule).
    """

    causal = False

    def __init__(
        self, wavelet: str = "db4", level: int | None = None, mode: str = "soft", scale: float = 1.0
    ):
        import pywt

        if wavelet not in pywt.wavelist(kind="discrete"):
            raise ValueError(f"wavelet must be a discrete PyWavelets wavelet; got {wavelet!r}")
        if mode not in ("soft", "hard"):
            raise ValueError(f"mode must be 'soft' or 'hard'; got {mode!r}")
        if not float(scale) > 0:
            raise ValueError(f"scale must be positive; got {scale!r}")
        if level is not None and int(level) < 1:
            raise ValueError(f"level must be >= 1 or None; got {level!r}")
        self.wavelet, self.level, self.mode, self.scale = wavelet, level, mode, float(scale)

    def _filter_1d(self, x, channel):
        import pywt

        w = pywt.Wavelet(self.wavelet)
        maxlev = pywt.dwt_max_level(len(x), w.dec_len)
        if maxlev < 1:
            return x.copy()
        level = maxlev if self.level is None else min(int(self.level), maxlev)
        coeffs = pywt.wavedec(x, w, level=level, mode="symmetric")
        sigma = np.median(np.abs(coeffs[-1])) / 0.6745
        thr = self.scale * sigma * np.sqrt(2.0 * np.log(len(x)))
        coeffs[1:] = [pywt.threshold(d, thr, mode=self.mode) for d in coeffs[1:]]
        return pywt.waverec(coeffs, w, mode="symmetric")[: len(x)]
