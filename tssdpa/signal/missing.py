"""Missing samples (NaN): how every filter fills what it cannot compute.

Two families, one per kind of model:

* outputs of the projection filters, which never use a NaN sample as a key but may have rows
  with no usable key: :func:`fill_forward` (streaming), :func:`fill_backward` (offline start),
  :func:`fill_between` (zero-phase, time-symmetric);
* inputs of the linear models and forecasters, which need a complete series:
  :func:`fill_missing` (carry forward when causal, interpolate when offline).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "check_not_all_missing",
    "fill_backward",
    "fill_between",
    "fill_forward",
    "fill_missing",
]


def check_not_all_missing(x2: np.ndarray, name: str = "x") -> None:
    """Offline filtering needs a sample with every channel finite somewhere in (T, C) x2."""
    if np.isnan(x2).all():
        raise ValueError(f"{name} is all NaN: nothing to filter")
    if not (~np.isnan(x2)).all(axis=1).any():
        raise ValueError(f"{name} has no sample with every channel finite (all NaN as keys)")


def fill_forward(y: np.ndarray, hold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Give every undefined row of (T, C) ``y`` (a NaN in any channel) the last defined row.

    ``hold`` (C,) is the last defined output before ``y`` (NaN when there is none yet): rows
    before the first defined one take it. Works in place; returns ``(y, new_hold)``.
    """
    T = y.shape[0]
    if T == 0:
        return y, hold
    undefined = np.isnan(y).any(axis=1)
    if undefined.any():
        idx = np.where(undefined, -1, np.arange(T))
        np.maximum.accumulate(idx, out=idx)
        src = y[np.maximum(idx, 0)]
        src[idx < 0] = hold
        y[undefined] = src[undefined]
    return y, np.array(y[-1], dtype=np.float64)


def fill_backward(y: np.ndarray) -> np.ndarray:
    """Offline: leading undefined rows of ``y`` take the first defined row (in place)."""
    undefined = np.isnan(y).any(axis=1)
    if undefined.any() and not undefined.all():
        first = int(np.argmin(undefined))
        y[:first] = y[first]
    return y


def fill_between(y: np.ndarray) -> np.ndarray:
    """Zero-phase: undefined rows are interpolated linearly (in sample index) between the
    nearest defined rows on either side, constant beyond the first / last one (in place).

    Time-symmetric, so the zero-phase filter of the reversed series stays the reversed output.
    """
    undefined = np.isnan(y).any(axis=1)
    if undefined.any() and not undefined.all():
        rows = np.arange(y.shape[0])
        for c in range(y.shape[1]):
            y[undefined, c] = np.interp(rows[undefined], rows[~undefined], y[~undefined, c])
    return y


def fill_missing(a: np.ndarray, causal: bool) -> np.ndarray:
    """Fill NaN per column of (T, C) ``a``: carry the last value forward (causal) or
    interpolate linearly (offline); leading NaN take the first finite value.

    A column with no finite value raises ``ValueError`` (there is nothing to fill it from).
    Returns ``a`` itself when it has no NaN, else a filled copy.
    """
    if not np.isnan(a).any():
        return a
    out = a.copy()
    t = np.arange(len(a))
    for c in range(a.shape[1]):
        col = out[:, c]
        ok = np.isfinite(col)
        if not ok.any():
            raise ValueError(f"channel {c} is all NaN: nothing to fill it from")
        if causal:
            idx = np.where(ok, t, 0)
            np.maximum.accumulate(idx, out=idx)
            first = np.argmax(ok)
            idx[:first] = first
            out[:, c] = col[idx]
        else:
            out[:, c] = np.interp(t, t[ok], col[ok])
    return out
