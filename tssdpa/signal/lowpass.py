"""Zero-phase Butterworth low-pass: the linear base of a zero-phase projection filter.

A zero-phase :class:`~tssdpa.filters.ProjectionFilter` with ``base="butterworth"`` outputs
``B(x) + P(x - B(x))``: the low-pass ``B`` plus the projection ``P`` of what it leaves. ``B`` is
``scipy.signal.sosfiltfilt`` of a Butterworth design; its cutoff is a fraction of the Nyquist
frequency, as in ``scipy.signal.butter``.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy  # submodules (scipy.signal etc.) load where first used: imports stay light

from tssdpa.checks import check_int, check_number
from tssdpa.signal.missing import fill_between

__all__ = [
    "LOWPASS_CUTOFFS",
    "LOWPASS_ORDERS",
    "check_lowpass",
    "sosfiltfilt_padlen",
    "sosfiltfilt_short",
    "zero_phase_lowpass",
]

#: cutoffs (fractions of Nyquist) and orders that ``fit`` tries for the base
LOWPASS_CUTOFFS = tuple(float(c) for c in np.geomspace(0.005, 0.9, 24))
LOWPASS_ORDERS = (2, 4)


def check_lowpass(params, name: str = "base_params") -> dict:
    """``{"cutoff": c, "order": n}`` with 0 < c < 1 and an integer n >= 1, checked."""
    if not isinstance(params, dict) or set(params) != {"cutoff", "order"}:
        raise ValueError(f"{name} must be a dict with keys 'cutoff' and 'order', got {params!r}")
    cutoff = check_number(params["cutoff"], f"{name}['cutoff']")
    if not 0.0 < cutoff < 1.0:
        raise ValueError(f"{name}['cutoff'] must be in (0, 1) (a fraction of Nyquist)")
    return {"cutoff": cutoff, "order": check_int(params["order"], f"{name}['order']")}


def zero_phase_lowpass(x2: np.ndarray, cutoff: float, order: int) -> np.ndarray:
    """(T, C) zero-phase Butterworth low-pass of (T, C) ``x2`` along time.

    Missing samples (NaN) are bridged by linear interpolation before filtering, so the output
    is defined everywhere (the caller keeps the NaN of the input where it needs them).
    """
    x2 = np.asarray(x2, dtype=np.float64)
    order, cutoff = int(order), float(cutoff)
    filled = fill_between(x2.copy()) if np.isnan(x2).any() else x2
    sos = _butterworth(order, cutoff).copy()  # a copy: the cached design is shared
    return sosfiltfilt_short(sos, filled, axis=0, zi=_steady_state(order, cutoff))


@functools.lru_cache(maxsize=256)
def _butterworth(order: int, cutoff: float) -> np.ndarray:
    """The second-order sections of a Butterworth low-pass, designed once per (order, cutoff):
    a fit filters with the same few designs hundreds of times (shared: callers copy it, as
    scipy's ``sosfilt`` takes a writeable array only)."""
    return scipy.signal.butter(order, cutoff, output="sos")


@functools.lru_cache(maxsize=256)
def _steady_state(order: int, cutoff: float) -> np.ndarray:
    """``scipy.signal.sosfilt_zi`` of :func:`_butterworth`'s design, solved once: each
    ``sosfiltfilt`` call solved it again, about half the call on a fit's series of a few
    thousand samples (shared, so read-only)."""
    zi = scipy.signal.sosfilt_zi(_butterworth(order, cutoff).copy())
    zi.flags.writeable = False  # sosfilt is given zi * x[0], a new array
    return zi


def sosfiltfilt_padlen(sos: np.ndarray) -> int:
    """scipy's default edge padding of ``sosfiltfilt(sos, x)``: ``x`` needs more samples."""
    zeros = min((sos[:, 2] == 0).sum(), (sos[:, 5] == 0).sum())
    return int(3 * (2 * len(sos) + 1 - zeros))


def sosfiltfilt_short(sos: np.ndarray, x: np.ndarray, axis: int = -1, zi=None) -> np.ndarray:
    """``scipy.signal.sosfiltfilt`` with scipy's default edge padding where the series is long
    enough for it (scipy raises on a shorter one). A shorter series is first extended at each
    end with its end value, to one sample past that padding, and cut back after: padded with
    its own length less one instead, the filter started from the odd extension's far end and
    its start-up transient was the output (a 2-sample ramp 0, 1 came back -0.999, -0.999 at
    order 4, cutoff 0.05, below both samples). Held ends start the filter in its steady
    state, so the output stays between the samples' values. An empty series gives an empty
    output (scipy raises). ``zi``: ``sosfilt_zi(sos)`` where the caller has it
    (:func:`_steady_state`), else it is solved here."""
    zi = scipy.signal.sosfilt_zi(sos) if zi is None else zi
    if np.shape(zi) != (len(sos), 2):
        raise ValueError(
            f"zi must be sosfilt_zi(sos), of shape ({len(sos)}, 2); got {np.shape(zi)}"
        )
    default = sosfiltfilt_padlen(sos)
    n = x.shape[axis]
    if n == 0:
        return np.zeros(x.shape, dtype=np.result_type(sos, x))  # scipy's dtype of an output
    x = np.moveaxis(np.asarray(x), axis, 0)  # (T, ...): time first; the dtype as scipy keeps it
    extra = 0 if n > default else default + 1 - n
    held = np.pad(x, [(extra, extra)] + [(0, 0)] * (x.ndim - 1), mode="edge") if extra else x
    out = _sosfiltfilt(sos, zi, held, default)[extra : extra + n]
    return np.moveaxis(out, 0, axis)


def _sosfiltfilt(sos: np.ndarray, zi: np.ndarray, x: np.ndarray, edge: int) -> np.ndarray:
    """``scipy.signal.sosfiltfilt(sos, x, axis=0)`` (odd extension of ``edge`` samples, ``x``
    longer than that) given its steady state ``zi = sosfilt_zi(sos)``: scipy's steps in
    scipy's order and dtypes, so the same bits (tests/signal/test_lowpass.py compares them)."""
    ext = np.concatenate([2 * x[:1] - x[edge:0:-1], x, 2 * x[-1:] - x[-2 : -edge - 2 : -1]])
    zi = zi.reshape(zi.shape[:1] + (2,) + (1,) * (x.ndim - 1))  # (sections, 2, 1, ...)
    y, _ = scipy.signal.sosfilt(sos, ext, axis=0, zi=zi * ext[:1])
    y, _ = scipy.signal.sosfilt(sos, y[::-1], axis=0, zi=zi * y[-1:])
    return y[::-1][edge : len(y) - edge]
