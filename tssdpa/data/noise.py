"""Noise models for denoising experiments. Inputs are never modified; a noisy copy is returned.

The noise level is set per channel from the clean signal's variance so that the signal-to-noise
ratio is ``snr_db`` (for the Gaussian and Student-t models).
"""

from __future__ import annotations

import math

import numpy as np

from tssdpa.checks import check_int, check_number, check_positive

__all__ = ["NOISES", "ConstantChannelsError", "add_noise", "noise_std_for_snr"]

NOISES = ("gaussian", "student_t", "impulsive", "dropout", "quantize")


class ConstantChannelsError(ValueError):
    """:func:`add_noise`'s error for the ``channels`` (positions) of a clean signal that are
    constant: no noise level gives them an SNR of ``snr_db``. ``advice`` ends the message: a
    caller that leaves them out otherwise (``tssdpa compare --columns``) says so in it."""

    def __init__(self, channels, snr_db, advice: str = "drop them or add noise of a set std"):
        super().__init__(channels, snr_db, advice)  # the args pickle and rebuild it
        self.channels, self.snr_db, self.advice = list(channels), snr_db, advice

    def __str__(self) -> str:
        return (f"clean: channel(s) {self.channels} are constant, so no noise level gives an "
                f"SNR of {self.snr_db} dB; {self.advice}")  # fmt: skip


def noise_std_for_snr(clean: np.ndarray, snr_db: float) -> np.ndarray:
    """Per-channel noise standard deviation giving ``10 log10(var(clean)/var(noise)) = snr_db``."""
    clean = np.asarray(clean, dtype=np.float64)
    var = np.nanvar(clean, axis=0)
    return np.sqrt(var / 10 ** (_check_snr(snr_db) / 10.0))


def _check_snr(snr_db) -> float:
    # NaN gave an all-NaN "noisy" copy and -inf one of +-inf, both without a word; +inf is
    # a noiseless copy, the limit, and stays allowed
    v = check_number(snr_db, "snr_db")
    if math.isnan(v) or v == -math.inf:
        raise ValueError(f"snr_db must be a number of dB or inf (no noise), got {snr_db!r}")
    return v


def _check_rate(value, name: str) -> float:
    v = check_number(value, name)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be a fraction in [0, 1], got {value!r}")
    return v


def add_noise(
    clean, kind: str = "gaussian", snr_db: float = 10.0, seed: int = 0, *, df: float = 3.0,
    outlier_rate: float = 0.02, outlier_scale: float = 10.0, dropout_rate: float = 0.05,
    levels: int = 16, reference=None,
) -> np.ndarray:  # fmt: skip
    """Return a noisy copy of ``clean`` (T,) or (T, C).

    Parameters
    ----------
    kind : {"gaussian", "student_t", "impulsive", "dropout", "quantize"}
        - ``gaussian``: white Gaussian noise at ``snr_db``.
        - ``student_t``: heavy-tailed Student-t noise (``df`` degrees of freedom, scaled to unit
          variance) at ``snr_db``.
        - ``impulsive``: Gaussian noise at ``snr_db`` plus a fraction ``outlier_rate`` of samples
          hit by outliers of ``outlier_scale`` × the noise std.
        - ``dropout``: Gaussian noise at ``snr_db`` and a fraction ``dropout_rate`` set to NaN.
        - ``quantize``: Gaussian noise at ``snr_db`` then rounding to ``levels`` levels over the
          clean range.
    snr_db : float
        Signal-to-noise ratio of the additive part, dB.
    seed : int
        Seed of the noise realisation.
    reference : array, optional
        Rows of ``clean`` whose variance sets the noise level (default: all of ``clean``).
        The training part, for a split series whose later parts must not shape the noise
        added to the earlier ones.
    """
    if kind not in NOISES:
        raise ValueError(f"kind must be one of {NOISES}; got {kind!r}")
    if np.iscomplexobj(clean):  # the cast kept the real part with only a warning
        raise ValueError("clean must be real; got complex values")
    x = np.array(clean, dtype=np.float64, copy=True)
    if x.ndim not in (1, 2):
        raise ValueError(f"clean must be 1-D or 2-D; got shape {x.shape}")
    if np.isinf(x).any():  # its variance is NaN: the whole channel came back NaN, unsaid
        raise ValueError("clean must be finite (NaN marks a missing reading); got +-inf")
    # seed=None drew fresh noise on every call (no two runs alike), 1.5 or -1 failed in
    # numpy naming nothing: the documented seed is an int >= 0
    check_int(seed, "seed", minimum=0)
    # checked before any draw: a NaN or out-of-range model parameter gave an all-NaN copy
    # (df=inf, outlier_scale=NaN), a rate that is no fraction was clipped in effect (rates
    # of 1.5 or -1), and levels=2.7 was read as 2, each without a word
    if kind == "student_t":
        if not check_positive(df, "df") > 2:
            raise ValueError(f"df must be a finite number > 2 for finite variance; got {df!r}")
    elif kind == "impulsive":
        _check_rate(outlier_rate, "outlier_rate")
        check_positive(outlier_scale, "outlier_scale", allow_zero=True)
    elif kind == "dropout":
        _check_rate(dropout_rate, "dropout_rate")
    elif kind == "quantize":
        check_int(levels, "levels", minimum=2)
    rng = np.random.default_rng(seed)
    std = noise_std_for_snr(x if reference is None else reference, snr_db)
    flat = np.flatnonzero(np.atleast_1d(std) == 0) if _check_snr(snr_db) < math.inf else []
    if len(flat):  # no variance to set the noise by: it came back noiseless at any SNR
        raise ConstantChannelsError(flat.tolist(), snr_db)
    if kind == "student_t":
        e = rng.standard_t(df, x.shape) / np.sqrt(df / (df - 2.0))
    else:
        e = rng.standard_normal(x.shape)
    y = x + std * e
    if kind == "impulsive":
        hit = rng.random(x.shape) < outlier_rate
        y = y + hit * rng.choice([-1.0, 1.0], x.shape) * outlier_scale * std
    elif kind == "dropout":
        y[rng.random(x.shape) < dropout_rate] = np.nan
    elif kind == "quantize":
        lo, hi = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
        step = (hi - lo) / (int(levels) - 1)
        step = np.where(step > 0, step, 1.0)
        y = lo + np.round((y - lo) / step) * step
    return y
