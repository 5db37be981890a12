"""Lagged products of a series with itself, by FFT: the raw material of its autocorrelation.

The delays an embedding spaces its samples by, the period a seasonal spectrum is built on and
the season a linear forecaster reads all start from ``sum_t x[t] x[t + l]``; each caller
normalises it its own way (by lag 0, or per pair of samples). Computed here once, in
``O(n log n)``; :func:`tssdpa.signal.reference.lagged_products_reference` is its explicit sum.
"""

from __future__ import annotations

import numpy as np

__all__ = ["lagged_products"]


def lagged_products(x: np.ndarray, lags: int) -> np.ndarray:
    """``sum_t x[t] x[t + l]`` for ``l = 0 .. lags - 1`` along axis 0 (each column alone).

    ``x`` (n,) or (n, C), finite (centre it and zero its gaps first); returns (lags,) or
    (lags, C), 0 past lag ``n - 1``. Zero-padded to ``n + max(n, lags)`` samples so that no
    product wraps around the end into the lags returned.

    >>> lagged_products(np.array([1.0, 2.0, 3.0]), 4).round(12)
    array([14.,  8.,  3.,  0.])
    """
    size = x.shape[0] + max(x.shape[0], lags)
    f = np.fft.rfft(x, size, axis=0)
    return np.fft.irfft(f.real**2 + f.imag**2, size, axis=0)[:lags]
