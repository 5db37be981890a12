"""Wavelet shrinkage denoising (PyWavelets) with Donoho–Johnstone's universal threshold."""

from __future__ import annotations

import numpy as np

from tssdpa.checks import check_choice, check_int, check_positive
from tssdpa.estimators.base import Denoiser

__all__ = ["WaveletDenoiser"]


class WaveletDenoiser(Denoiser):
    """Discrete wavelet shrinkage: ``wavedec`` → threshold details → ``waverec`` (offline).

    The noise level is estimated from the finest detail coefficients as
    ``sigma = median(|d1|) / 0.6745`` and the universal threshold is
    ``scale * sigma * sqrt(2 log n)``.

    Parameters
    ----------
    wavelet : str
        Any PyWavelets discrete wavelet name (``"db4"``, ``"sym8"``, ...).
    level : int or None
        Decomposition depth; ``None`` = the largest useful level (``pywt.dwt_max_level``),
        which also caps a larger one. A series too short for one level (fewer than twice the
        wavelet's filter length less one: 14 samples for ``"db4"``) comes back unfiltered.
    mode : {"soft", "hard"}
        Thresholding rule.
    scale : float
        Multiplier on the universal threshold (1.0 = the textbook rule).
    """

    uses_target = False
    causal = False

    def __init__(
        self, wavelet: str = "db4", level: int | None = None, mode: str = "soft", scale: float = 1.0
    ):
        self._store(locals())

    def _validate_params(self):
        import pywt

        # a str first: `in` a list with an array raised numpy's "ambiguous" error
        if not isinstance(self.wavelet, str) or self.wavelet not in pywt.wavelist(kind="discrete"):
            raise ValueError(f"wavelet must be a discrete PyWavelets wavelet; got {self.wavelet!r}")
        check_choice(self.mode, "mode", ("soft", "hard"))
        check_positive(self.scale, "scale")
        if self.level is not None:
            check_int(self.level, "level")

    def _filter_1d(self, x, channel):
        import pywt

        w = pywt.Wavelet(self.wavelet)
        maxlev = pywt.dwt_max_level(len(x), w.dec_len)
        if maxlev < 1:
            return x.copy()
        level = maxlev if self.level is None else min(int(self.level), maxlev)
        coeffs = pywt.wavedec(x, w, level=level, mode="symmetric")
        sigma = np.median(np.abs(coeffs[-1])) / 0.6745
        thr = float(self.scale) * sigma * np.sqrt(2.0 * np.log(len(x)))
        coeffs[1:] = [pywt.threshold(d, thr, mode=self.mode) for d in coeffs[1:]]
        return pywt.waverec(coeffs, w, mode="symmetric")[: len(x)]
