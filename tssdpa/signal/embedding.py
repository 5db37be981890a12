"""Delay embeddings: the patterns whose distances the projection kernel compares.

Row t of an embedding of length m is ``[x[t], x[t-1], ..., x[t-m+1]]`` (newest first, all
channels of a sample together), so the keys and queries of every filter and forecaster are
rows of one of these arrays.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["centred_embedding", "delay_embedding", "standardise"]


def delay_embedding(x: np.ndarray, m: int, offset: int = 0, delay: int = 1) -> np.ndarray:
    """Delay embedding of a (N, C) array: row t is
    ``[x[t+o], x[t+o-d], ..., x[t+o-(m-1)d]]`` (o = ``offset``, d = ``delay``, the lag spacing).

    Rows whose embedding would reach outside ``x`` hold NaN in the missing coordinates.
    Returns a new (N, m*C) array.
    """
    if delay != 1:
        spread = delay_embedding(x, (m - 1) * delay + 1, offset)  # every lag up to the last
        C = x.shape[1]
        cols = (np.arange(m)[:, None] * delay * C + np.arange(C)[None, :]).reshape(-1)
        return np.ascontiguousarray(spread[:, cols])
    n, c = x.shape
    # rows of NaN needed before and after x: none on a side the window does not pass (an
    # offset below 0 or beyond m - 1 made one negative, and the padding failed to fill)
    lo = max(0, m - 1 - offset)
    hi = max(0, offset, m - lo - n)  # and at least one window (an empty x)
    pad = np.full((n + lo + hi, c), np.nan, dtype=x.dtype)
    pad[lo : lo + n] = x
    win = sliding_window_view(pad, m, axis=0)  # (n + lo + hi - m + 1, c, m), window in last
    # window i covers pad[i : i+m] = x[i-lo : i-lo+m]; row t needs x[t+o-m+1 : t+o+1]:
    # i = t + first (first = 0 for 0 <= offset <= m - 1)
    first = offset - m + 1 + lo
    emb = win[first : first + n, :, ::-1]  # newest first
    # a copy, always: for m = 1 (or an empty x) the transposed view is contiguous already, and
    # ascontiguousarray returned it, a read-only view of the padding, not a new array
    return np.array(emb.transpose(0, 2, 1), order="C").reshape(n, m * c)


def centred_embedding(x: np.ndarray, m: int) -> np.ndarray:
    """Time-symmetric embedding for the zero-phase filter.

    Odd m: ``[x_(t+h), ..., x_(t-h)]`` with h = (m-1)/2. Even m: the m+1 samples
    ``x_(t+m/2) .. x_(t-m/2)`` with the two end coordinates scaled by sqrt(1/2), i.e. the
    average of the squared distances of the two m-sample embeddings ending at ``t + m/2``
    and ``t + m/2 - 1`` -- the pair is swapped by time reversal, so the distance is symmetric
    (total coordinate weight m, as for the causal embedding).
    """
    if m % 2:
        return delay_embedding(x, m, offset=(m - 1) // 2)
    C = x.shape[1]
    E = delay_embedding(x, m + 1, offset=m // 2)
    r = math.sqrt(0.5)
    E[:, :C] *= r
    E[:, m * C :] *= r
    return E


def standardise(a: np.ndarray, mean, scale) -> np.ndarray:
    """``(a - mean) / scale``: the units in which kernel widths of the estimators are given."""
    return (a - mean) / scale
