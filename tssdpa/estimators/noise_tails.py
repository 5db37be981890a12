"""Whether observed noise has Gaussian tails -- what the sliding SURE of the local adaptation
(:mod:`tssdpa.filters.projection_local`) assumes.

Stein's identity, on which SURE rests, holds for Gaussian noise. Under heavy-tailed noise a
window's SURE terms follow its few large errors, and with a target the adaptation that lowered
the error on the fitted part raised it on new data (``experiments/local_target_noise_probe.py``:
Student-t noise of 3 degrees of freedom on the fusion IMU, up to +24%). A fit with a target
sees the noise itself, ``x - target``, and tests its tails: the ratio of its RMS to its MAD
scale (1.4826 times the median absolute deviation) is 1 for Gaussian noise, with a standard
deviation of about ``1 / sqrt(n)`` over n samples (0.096 at 100 samples, 0.015 at 4,000), and
about 1.5 for Student-t noise of 3 degrees of freedom, 1.7 for Gaussian noise with 2% of its
samples hit by outliers of 10 times its level (``experiments/noise_tails_probe.py``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["TAIL_SDS", "gaussian_tails", "tail_ratio"]

#: the ratio may exceed 1 by this many of its standard deviations (``1 / sqrt(n)``): Gaussian
#: noise is called heavy-tailed in 3e-4 of 20,000 draws at 100 samples and in none from 200 on;
#: at 4, 1.3e-3 at 100 samples (``experiments/noise_tails_probe.py``)
TAIL_SDS = 5.0


def tail_ratio(r: np.ndarray) -> np.ndarray:
    """(C,) RMS over MAD scale of each column of (T, C) ``r`` about its median, over the finite
    entries (NaN where a column has none or its MAD is 0)."""
    r = np.asarray(r, dtype=np.float64)
    out = np.full(r.shape[1], np.nan)
    for c in range(r.shape[1]):
        v = r[np.isfinite(r[:, c]), c]
        if v.size:
            v = v - np.median(v)
            mad = 1.4826 * np.median(np.abs(v))
            out[c] = np.sqrt(np.mean(v * v)) / mad if mad > 0 else np.nan
    return out


def gaussian_tails(r: np.ndarray) -> np.ndarray:
    """(C,) bools: whether each column of (T, C) noise samples ``r`` is within ``TAIL_SDS``
    standard deviations of Gaussian tails (:func:`tail_ratio` at most ``1 + TAIL_SDS /
    sqrt(n)``, n its finite entries; False where the ratio is undefined).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> gaussian_tails(np.column_stack([rng.normal(size=2000), rng.standard_t(3, 2000)]))
    array([ True, False])
    """
    n = np.isfinite(r).sum(axis=0)
    ratio = tail_ratio(r)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nan_to_num(ratio, nan=np.inf) <= 1.0 + TAIL_SDS / np.sqrt(np.maximum(n, 1))
