"""Functional (scipy.signal style) projection filter: :func:`projection_filter`."""

from __future__ import annotations

import operator
import warnings

import numpy as np

from tssdpa.checks import check_positive
from tssdpa.estimators.arrays import (
    check_float32_range,
    check_no_inf,
    refuse_state_text,
    unmasked,
)
from tssdpa.estimators.plain_input import real_state
from tssdpa.estimators.text_input import floats
from tssdpa.signal.lagfilter import check_sample_times, resolve_spec, run_causal, run_offline
from tssdpa.signal.missing import check_not_all_missing

__all__ = ["projection_filter"]


def projection_filter(
    x,
    *,
    window,
    sigma,
    embedding=1,
    decay=None,
    tau=None,
    causal=True,
    axis=-1,
    zi=None,
    timestamps=None,
    channel_axis=None,
    exclude_self=False,
    tol=1e-6,
    min_step=None,
    dtype=np.float64,
    degree=0,
    n_neighbors=64,
):
    """Filter data along one axis with a causal (or zero-phase) projection filter.

    For each time step ``t`` the output is the weighted mean of the samples ``x[j]`` in the
    window, with weights ``exp(-||e_t - e_j||^2 / (2 sigma^2))`` (``e`` = delay embedding of
    length ``embedding``) times ``decay**(t-j)``. Like :func:`scipy.signal.lfilter`.

    Missing samples (NaN) are never averaged: a key serves the channels it has, and each
    channel is the weighted mean of the keys that have it. A channel with no usable key in
    reach (a gap longer than the window) repeats its last defined output; without ``zi``
    (offline) its values before its first defined output take that first output, while a
    streaming call (``zi`` given) leaves them NaN since it cannot look ahead. The zero-phase
    filter instead interpolates linearly between the defined outputs on either side
    (time-symmetric).

    Parameters
    ----------
    x : array_like
        Input data, time along ``axis``. Other axes are independent series unless
        ``channel_axis`` names an axis whose entries are channels embedded jointly. Without
        ``zi``, a series with a channel that has no finite value raises ``ValueError``, and
        so does one of no sample along ``axis``; with ``zi`` that is a tick without new
        samples: an empty ``y`` and ``zf = zi``.
    window : int, None or "all"
        Number of past samples (the current one included) attended to (FIR). ``None`` with a
        ``decay`` < 1 gives the infinite-memory (IIR) filter, truncated where the dropped
        weight is provably below ``tol`` (see ``docs/filters.md``). ``"all"`` with
        ``causal=False``: the non-local filter over the ``n_neighbors`` patterns of the whole
        series nearest to the query's (:mod:`tssdpa.signal.nonlocal_filter`; ``embedding``
        >= 2, degree 0, no decay / tau).
    sigma : float
        Kernel width, in the units of ``x``.
    embedding : int, optional
        Delay-embedding length m (default 1: compare single samples). The zero-phase filter
        centres it on t; for even m it uses the m+1 samples around t with half weight on the
        two ends, so that it stays time-symmetric.
    decay : float or None, optional
        Per-sample factor gamma in (0, 1]: weights times ``gamma**(t - j)``.
    tau : float or None, optional
        Time constant (in the units of ``timestamps``): weights times
        ``exp(-(t_i - t_j) / tau)``, as in :func:`tssdpa.projection_sdpa`. Needs
        ``timestamps``; exclusive with ``decay``. (``decay`` with ``timestamps`` is read as
        ``tau``, deprecated.)
    causal : bool, optional
        ``False`` gives the two-sided zero-phase smoother (no ``zi``).
    axis : int, optional
        Time axis (default -1).
    zi : array_like or tuple, optional
        Initial state, ``window + embedding - 1`` entries along ``axis`` (otherwise shaped
        like ``x``): the previous ``window - 1 + embedding - 1`` samples (NaN where none),
        then the last defined output (NaN if none yet); all NaN is the empty state. With
        ``timestamps`` a pair ``(samples, times)``, ``times`` holding the times of the
        ``window - 1 + embedding - 1`` samples. ``None`` filters offline and returns only ``y``.
    timestamps : array_like, optional
        Sample times (1-D, non-decreasing, one per sample along ``axis``), for ``tau``
        (refused without it: nothing would read them).
    channel_axis : int, optional
        Axis holding channels that share one embedding.
    exclude_self : bool, optional
        Drop the current sample from its own weights (non-local-means style leave-one-out).
    tol : float, optional
        IIR truncation tolerance (default 1e-6).
    min_step : float, optional
        Smallest time step; needed for an infinite-memory filter with ``timestamps``. Every
        step of ``timestamps`` (and from ``zi``'s last time) is checked against it.
    dtype : numpy dtype, optional
        Compute dtype, float64 (default) or float32 (faster).
    degree : int, optional
        0 (default): the weighted mean; p: the weighted least-squares polynomial of degree p
        in the time offset, evaluated at t (``sigma=inf`` with ``causal=False``: the
        Savitzky–Golay filter of ``2 window - 1`` taps).
    n_neighbors : int, optional
        Keys of the non-local filter (``window="all"``), default 64.

    Returns
    -------
    y : ndarray
        Filtered data, same shape as ``x``.
    zf : ndarray or tuple
        Final state, only when ``zi`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import projection_filter
    >>> x = np.sin(np.linspace(0, 6, 200)) + 0.1 * np.random.default_rng(0).normal(size=200)
    >>> y = projection_filter(x, window=16, sigma=0.2)
    >>> y.shape
    (200,)
    >>> zi = np.full(16, np.nan)      # empty state: window - 1 samples + the held output
    >>> y1, zf = projection_filter(x[:50], window=16, sigma=0.2, zi=zi)
    >>> y2, _ = projection_filter(x[50:], window=16, sigma=0.2, zi=zf)
    >>> bool(np.allclose(np.concatenate([y1, y2]), y))
    True
    """
    x = np.asarray(unmasked(x))
    if not np.issubdtype(x.dtype, np.number) or np.iscomplexobj(x):
        raise TypeError(f"x must be a real numeric array, got dtype {x.dtype}")
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension")
    axis = _integer(axis, "axis")
    channel_axis = None if channel_axis is None else _integer(channel_axis, "channel_axis")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for x with {x.ndim} dimension(s)")
    axis = axis % x.ndim
    use_times = timestamps is not None
    if use_times and tau is None and decay is not None:
        warnings.warn(
            "projection_filter: decay with timestamps is read as the time constant tau; pass "
            "tau= instead (removed in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        decay, tau = None, decay
    if tau is not None and not use_times:
        raise ValueError("tau needs timestamps (the sample times)")
    if use_times and tau is None:  # ignored, they filtered an irregular series as regular
        raise ValueError("timestamps: tau is None, so nothing reads them (the samples are "
                         "taken as equally spaced); give tau, the time constant in their "
                         "units, or drop timestamps")  # fmt: skip
    if min_step is not None:  # as ProjectionFilter checks it: unchecked, text failed in a
        # bare comparison, inf was blamed on decay, and -1 / 0 / NaN passed with a window
        min_step = check_positive(min_step, "min_step")
    spec = resolve_spec(
        window=window,
        embedding=embedding,
        sigma=sigma,
        decay=decay,
        tau=tau,
        causal=causal,
        exclude_self=exclude_self,
        tol=tol,
        degree=degree,
        min_step=min_step,
        dtype=dtype,
        n_neighbors=n_neighbors,
    )
    T = x.shape[axis]
    if T == 0 and zi is None:  # with zi an empty chunk is a tick without samples: zf = zi
        raise ValueError("x is empty along the time axis")
    check_no_inf(x, "x")  # as every estimator: NaN marks a missing sample, inf is refused
    if T:
        check_float32_range(np.reshape(np.moveaxis(x, axis, 0), (T, -1)), spec.dtype, "x")
    times = check_sample_times(timestamps, T, min_step=min_step) if use_times else None
    if not causal and zi is not None:
        raise ValueError("zi is only defined for causal=True (a zero-phase filter is offline)")
    xm = np.moveaxis(x.astype(np.float64, copy=False), axis, 0)
    if channel_axis is not None:
        if not -x.ndim <= channel_axis < x.ndim:
            raise ValueError(
                f"channel_axis {channel_axis} is out of range for x with {x.ndim} dimension(s)"
            )
        ch = channel_axis % x.ndim
        if ch == axis:
            raise ValueError("channel_axis must differ from axis")
        ch_m = ch + 1 if ch < axis else ch  # position after moveaxis(axis -> 0)
        xm = np.moveaxis(xm, ch_m, 1)
    batch_shape = xm.shape[2:] if channel_axis is not None else xm.shape[1:]
    C = xm.shape[1] if channel_axis is not None else 1
    B = int(np.prod(batch_shape)) if batch_shape else 1
    series = xm.reshape(T, C, B)
    H = spec.history
    S = H + 1  # state rows: H past samples, then the last defined output
    hist = hist_times = None
    if zi is None:
        for b in range(B):
            check_not_all_missing(series[:, :, b], "x" if B == 1 else f"x (series {b})")
    else:
        # a wrong state named as zi, as ProjectionFilter.filter names it: numpy's
        # "inhomogeneous shape" and Python's "too many values to unpack" named nothing
        if use_times and not (isinstance(zi, tuple) and len(zi) == 2):
            raise ValueError("with timestamps, zi must be a pair (samples, times)")
        zi_vals, zi_times = zi if use_times else (zi, None)
        zi_vals = real_state(zi_vals, "zi")  # read as ProjectionFilter.filter reads its zi
        refuse_state_text(zi_vals, "zi")
        zi_vals = check_no_inf(_floats(zi_vals, "zi"), "zi")
        expected = list(x.shape)
        expected[axis] = S
        if zi_vals.shape != tuple(expected):
            raise ValueError(f"zi has shape {zi_vals.shape}, expected {tuple(expected)}")
        zm = np.moveaxis(zi_vals, axis, 0)
        if channel_axis is not None:
            zm = np.moveaxis(zm, ch_m, 1)
        hist = zm.reshape(S, C, B)
        if use_times:
            zi_times = _floats(zi_times, "zi times")
            if zi_times.shape != (H,):
                raise ValueError(f"zi times have shape {zi_times.shape}, expected ({H},)")
            if np.isinf(zi_times).any():  # as the filter's own state: NaN marks "no sample"
                raise ValueError("zi times contain inf; use NaN for a slot without a sample")
            hist_times = zi_times

    if T == 0:  # the state checked and returned as it came, as ProjectionFilter.filter does
        zf0 = np.array(zi_vals, dtype=np.float64)
        return (x.astype(np.float64), (zf0, hist_times.copy()) if use_times else zf0)
    out = np.empty((T, C, B), dtype=np.float64)
    zf = np.empty((S, C, B), dtype=np.float64) if zi is not None else None
    zf_times = None
    for b in range(B):
        if zi is not None:
            y, nh, nt = run_causal(
                series[:, :, b], hist[:, :, b], spec, times, hist_times, min_step=min_step
            )
            zf[:, :, b] = nh
            zf_times = nt
        else:
            y = run_offline(series[:, :, b], spec, times)
        out[:, :, b] = y
    y = out.reshape(xm.shape)
    if channel_axis is not None:
        y = np.moveaxis(y, 1, ch_m)
    y = np.moveaxis(y, 0, axis)
    if zi is None:
        return y
    zfm = zf.reshape((S,) + xm.shape[1:])
    if channel_axis is not None:
        zfm = np.moveaxis(zfm, 1, ch_m)
    zfm = np.moveaxis(zfm, 0, axis)
    return (y, (zfm, zf_times)) if use_times else (y, zfm)


def _integer(value, name: str) -> int:
    """An int, numpy integer or 0-d integer array as an int; ``TypeError`` naming it else."""
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None


def _floats(value, name: str) -> np.ndarray:
    """``value`` as a float64 array, or ``ValueError`` naming ``name``."""
    try:
        return floats(value, copy=False)  # pd.NA, as None, a missing sample
    except (TypeError, ValueError):
        if name == "zi" and isinstance(value, tuple) and len(value) == 2 \
                and all(isinstance(v, np.ndarray) for v in value):  # fmt: skip
            raise ValueError(
                "zi is a tuple of 2 arrays, the state of a call with timestamps "
                "(samples, times); without them it is one array"
            ) from None
        raise ValueError(f"{name} must be numbers (an array of floats), got "
                         f"{type(value).__name__}") from None  # fmt: skip
