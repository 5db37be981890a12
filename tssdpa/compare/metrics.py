"""Error metrics for denoising and forecasting. NaN in the estimate are counted, never hidden;
NaN in the truth (a gap in the recording) are no sample to score and are left out."""

from __future__ import annotations

import numpy as np

__all__ = ["mse", "rmse", "mae", "snr_db", "snr_improvement_db", "horizon_errors"]


def _pair(truth, est, name="estimate"):
    t = np.asarray(truth, dtype=np.float64)
    e = np.asarray(est, dtype=np.float64)
    if t.shape != e.shape:
        raise ValueError(f"{name} must have the shape of truth {t.shape}; got {e.shape}")
    if t.size == 0:
        raise ValueError("truth must not be empty")
    return t, e


def _known(t: np.ndarray, e: np.ndarray):
    """The entries of truth ``t`` and estimate ``e`` where the truth is known: a missing truth
    made every error NaN, so that one gap in a user's series scored every configuration alike
    (inf) and the first was chosen, whatever the others did."""
    known = ~np.isnan(t)
    return t[known], e[known]


def mse(truth, est) -> float:
    """Mean squared error over the known truth (NaN if the estimate has NaN there, or no
    truth is known)."""
    t, e = _known(*_pair(truth, est))
    return float(np.mean((e - t) ** 2)) if t.size else float("nan")


def rmse(truth, est) -> float:
    """Root mean squared error."""
    return float(np.sqrt(mse(truth, est)))


def mae(truth, est) -> float:
    """Mean absolute error over the known truth (as :func:`mse`)."""
    t, e = _known(*_pair(truth, est))
    return float(np.mean(np.abs(e - t))) if t.size else float("nan")


def snr_db(clean, est) -> float:
    """``10 log10(sum (s - mean s)^2 / sum (est - s)^2)`` over all channels, ignoring entries
    where ``est`` is NaN (used for noisy inputs with dropouts) or ``clean`` is."""
    s, e = _pair(clean, est)
    ok = np.isfinite(e) & ~np.isnan(s)
    sig = np.sum(((s - np.nanmean(s, axis=0)) ** 2)[ok])
    err = np.sum(((e - s) ** 2)[ok])
    if err == 0:
        return float("inf")
    return float(10 * np.log10(sig / err))


def snr_improvement_db(clean, noisy, est) -> float:
    """Output SNR minus input SNR, in dB (NaN if ``est`` has NaN where ``clean`` is known)."""
    s, e = _pair(clean, est)
    if not np.all(np.isfinite(e[~np.isnan(s)])):
        return float("nan")
    return snr_db(clean, est) - snr_db(clean, noisy)


def horizon_errors(truth_path, pred_path) -> tuple[np.ndarray, np.ndarray]:
    """Per-step MSE and MAE over origins (and channels) of (N, H[, C]) arrays: two (H,) arrays."""
    t, e = _pair(truth_path, pred_path, "pred_path")
    axes = tuple(i for i in range(t.ndim) if i != 1)
    d = e - t
    return np.mean(d**2, axis=axes), np.mean(np.abs(d), axis=axes)
