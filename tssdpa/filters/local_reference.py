"""The local adaptation written sample by sample: the slow reference of
:func:`tssdpa.filters.projection_local.local_mixture` for the tests."""

from __future__ import annotations

import numpy as np

from tssdpa.filters.projection_local import LOCAL_TEMPERATURE, _candidates, _skipped, by_row

__all__ = ["local_mixture_naive"]


def local_mixture_naive(
    x2, y, divergence, noise, width, channels=None, temperature=LOCAL_TEMPERATURE
):
    """:func:`~tssdpa.filters.projection_local.local_mixture` written sample by sample."""
    x2, y = np.asarray(x2, dtype=np.float64), np.asarray(y, dtype=np.float64)
    T = x2.shape[0]
    out, div = y.copy(), np.broadcast_to(by_row(divergence, T)[:, None], y.shape).copy()
    for c in range(x2.shape[1]):
        if _skipped(x2, y, c, channels):
            continue
        s2 = float(noise[c]) ** 2
        Y, D = _candidates(x2[:, c], y[:, c], divergence)  # (K, T) each
        for t in range(T):
            lo, hi = max(0, t - width // 2), min(T, t + width // 2 + 1)
            risk = [np.mean((Y[k, lo:hi] - x2[lo:hi, c]) ** 2 - s2 + 2 * s2 * D[k, lo:hi])
                    for k in range(len(Y))]  # fmt: skip
            logw = [-(hi - lo) * (v - min(risk)) / (temperature * s2) for v in risk]
            w = np.exp(logw) / np.sum(np.exp(logw))
            out[t, c] = float(w @ Y[:, t])
            div[t, c] = float(w @ D[:, t])
    return out, div
