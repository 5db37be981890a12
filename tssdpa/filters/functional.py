"""Functional (scipy.signal style) projection filter: :func:`projection_filter`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tssdpa.filters._core import attend_lags, delay_embedding, iir_truncation_lag

__all__ = ["FilterSpec", "projection_filter"]


@dataclass(frozen=True)
class FilterSpec:
    """Resolved, validated settings of one projection filter (internal).

    ``n_lags`` is the number of lags kept on each side: the window W for a FIR filter or the
    truncation lag K of an IIR filter (see :func:`~tssdpa.filters._core.iir_truncation_lag`).
    """

    n_lags: int
    embedding: int
    sigma: float
    decay: float | None  # per-sample factor gamma, or None
    tau: float | None  # time constant (time units) when timestamps are used
    causal: bool
    exclude_self: bool
    dtype: np.dtype

    @property
    def history(self) -> int:
        """Rows of past samples a causal filter keeps as state."""
        return self.n_lags - 1 + self.embedding - 1


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def resolve_spec(
    *,
    window,
    embedding,
    sigma,
    decay,
    tau,
    causal,
    exclude_self,
    tol,
    min_step,
    dtype,
) -> FilterSpec:
    """Validate user settings and work out how many lags the filter needs."""
    embedding = _check_positive_int("embedding", embedding)
    if window is not None:
        window = _check_positive_int("window", window)
    try:
        sigma = float(sigma)
    except (TypeError, ValueError):
        raise TypeError(f"sigma must be a positive number, got {sigma!r}") from None
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
    if decay is not None:
        decay = float(decay)
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {decay!r}")
    if tau is not None:
        tau = float(tau)
        if not (tau > 0 and math.isfinite(tau)):
            raise ValueError(f"tau must be a positive finite number, got {tau!r}")
        if decay is not None:
            raise ValueError("give either decay (per sample) or tau (time units), not both")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    if window is None:
        if decay is not None and decay < 1.0:
            per_side_tol = tol if causal else tol / 2.0
            n_lags = iir_truncation_lag(decay, per_side_tol)
        elif tau is not None:
            if min_step is None or not min_step > 0:
                raise ValueError(
                    "an infinite-memory filter with tau needs min_step > 0 (the smallest time "
                    "step that will occur) to bound the truncated tail, or give a window"
                )
            gamma = math.exp(-float(min_step) / tau)
            n_lags = iir_truncation_lag(gamma, tol if causal else tol / 2.0)
        else:
            raise ValueError("window=None needs a decay < 1 (or tau): give a window or a decay")
    else:
        n_lags = window
    return FilterSpec(
        n_lags=n_lags,
        embedding=embedding,
        sigma=sigma,
        decay=decay,
        tau=tau,
        causal=bool(causal),
        exclude_self=bool(exclude_self),
        dtype=dtype,
    )


def check_timestamps(times: np.ndarray, n: int, name: str = "timestamps", min_step=None):
    times = np.asarray(times, dtype=np.float64)
    if times.ndim != 1 or times.shape[0] != n:
        raise ValueError(f"{name} must be 1-D with one entry per sample ({n}), got {times.shape}")
    if not np.all(np.isfinite(times)):
        raise ValueError(f"{name} must be finite")
    steps = np.diff(times)
    if np.any(steps < 0):
        raise ValueError(f"{name} must be non-decreasing (monotonic), found a step backwards")
    if min_step is not None and np.any(steps < min_step):
        raise ValueError(f"{name} has a step smaller than min_step={min_step}")
    return times


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


def run_causal(x2, state, spec: FilterSpec, times=None, hist_times=None, min_step=None):
    """Filter (T, C) ``x2`` from ``state``; returns (y, new_state, new_times or None).

    ``state`` (H + 1, C): the last H = ``spec.history`` input samples (NaN = none), then the
    last defined output (NaN = none yet), which rows without any usable key repeat.
    """
    H = spec.history
    hist, hold = state[:H], state[H]
    full = np.concatenate([hist.astype(spec.dtype, copy=False), x2.astype(spec.dtype)], axis=0)
    T = x2.shape[0]
    E = delay_embedding(full, spec.embedding)
    use_times = spec.tau is not None
    full_times = None
    if use_times:
        if times is None:
            raise ValueError("tau is set: timestamps are required")
        full_times = np.concatenate([hist_times, times]).astype(spec.dtype)
        last = hist_times[~np.isnan(hist_times)]
        if last.size and T and times[0] < last[-1]:
            raise ValueError("timestamps must continue after the state's last timestamp")
        if last.size and T and min_step is not None and times[0] - last[-1] < min_step:
            raise ValueError(f"timestamps have a step smaller than min_step={min_step}")
    y = attend_lags(
        E,
        full,
        (H, H + T),
        0,
        spec.n_lags - 1,
        sigma=spec.sigma,
        decay=spec.decay,
        times=full_times,
        tau=spec.tau,
        exclude_self=spec.exclude_self,
        fallback=full[H:] if spec.exclude_self else None,
    )
    y, hold = fill_forward(y, hold.astype(spec.dtype))
    new_state = np.empty((H + 1, x2.shape[1]), dtype=np.float64)
    new_state[:H] = full[full.shape[0] - H :]
    new_state[H] = hold
    if use_times:
        # timestamps are carried in float64 regardless of the compute dtype
        new_times = np.concatenate([hist_times, times])[-H:] if H else hist_times[:0]
        return y, new_state, np.array(new_times, dtype=np.float64)
    return y, new_state, None


def run_offline(x2, spec: FilterSpec, times=None):
    """One-shot filter of (T, C) ``x2`` (no state): causal from an empty state with the
    leading undefined rows back-filled, or the zero-phase filter."""
    if not spec.causal:
        return run_noncausal(x2, spec, times)
    state = np.full((spec.history + 1, x2.shape[1]), np.nan)
    hist_times = np.full(spec.history, np.nan) if spec.tau is not None else None
    y, _, _ = run_causal(x2, state, spec, times, hist_times)
    return fill_backward(y)


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


def run_noncausal(x2, spec: FilterSpec, times=None):
    """Zero-phase (two-sided) filter of (T, C) ``x2`` with a centred embedding."""
    K = spec.n_lags
    m = spec.embedding
    T, C = x2.shape
    pad = np.full((K - 1, C), np.nan, dtype=spec.dtype)
    full = np.concatenate([pad, x2.astype(spec.dtype), pad], axis=0)
    E = centred_embedding(full, m)
    full_times = None
    if spec.tau is not None:
        if times is None:
            raise ValueError("tau is set: timestamps are required")
        tp = np.full(K - 1, np.nan)
        full_times = np.concatenate([tp, times, tp]).astype(spec.dtype)
    y = attend_lags(
        E,
        full,
        (K - 1, K - 1 + T),
        -(K - 1),
        K - 1,
        sigma=spec.sigma,
        decay=spec.decay,
        times=full_times,
        tau=spec.tau,
        exclude_self=spec.exclude_self,
        fallback=full[K - 1 : K - 1 + T] if spec.exclude_self else None,
    )
    return fill_between(y)


def check_not_all_missing(x2: np.ndarray, name: str = "x") -> None:
    """Offline filtering needs a sample with every channel finite somewhere in (T, C) x2."""
    if np.isnan(x2).all():
        raise ValueError(f"{name} is all NaN: nothing to filter")
    if not (~np.isnan(x2)).all(axis=1).any():
        raise ValueError(f"{name} has no sample with every channel finite (all NaN as keys)")


def projection_filter(
    x,
    *,
    window,
    sigma,
    embedding=1,
    decay=None,
    causal=True,
    axis=-1,
    zi=None,
    timestamps=None,
    channel_axis=None,
    exclude_self=False,
    tol=1e-6,
    min_step=None,
    dtype=np.float64,
):
    """Filter data along one axis with a causal (or zero-phase) projection filter.

    For each time step ``t`` the output is the weighted mean of the samples ``x[j]`` in the
    window, with weights ``exp(-||e_t - e_j||^2 / (2 sigma^2))`` (``e`` = delay embedding of
    length ``embedding``) times ``decay**(t-j)``. Like :func:`scipy.signal.lfilter`.

    Missing samples (NaN) are never keys. A row with no usable key in reach (a gap longer
    than the window) repeats the last defined output; without ``zi`` (offline) the rows before
    the first defined output take that first output, while a streaming call (``zi`` given)
    leaves them NaN since it cannot look ahead. The zero-phase filter instead interpolates
    linearly between the defined outputs on either side (time-symmetric).

    Parameters
    ----------
    x : array_like
        Input data, time along ``axis``. Other axes are independent series unless
        ``channel_axis`` names an axis whose entries are channels embedded jointly. Without
        ``zi``, a series with no sample whose channels are all finite raises ``ValueError``.
    window : int or None
        Number of past samples (the current one included) attended to (FIR). ``None`` with a
        ``decay`` < 1 gives the infinite-memory (IIR) filter, truncated where the dropped
        weight is provably below ``tol`` (see ``docs/filters.md``).
    sigma : float
        Kernel width, in the units of ``x``.
    embedding : int, optional
        Delay-embedding length m (default 1: compare single samples). The zero-phase filter
        centres it on t; for even m it uses the m+1 samples around t with half weight on the
        two ends, so that it stays time-symmetric.
    decay : float or None, optional
        Per-sample factor gamma in (0, 1]. With ``timestamps`` it is the time constant tau
        (weight ``exp(-(t_i - t_j) / tau)``), as in :func:`tssdpa.projection_sdpa`.
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
        Sample times (1-D, non-decreasing, one per sample along ``axis``).
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
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.number) or np.iscomplexobj(x):
        raise TypeError(f"x must be a real numeric array, got dtype {x.dtype}")
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension")
    axis = axis % x.ndim
    use_times = timestamps is not None
    spec = resolve_spec(
        window=window,
        embedding=embedding,
        sigma=sigma,
        decay=None if use_times else decay,
        tau=decay if use_times else None,
        causal=causal,
        exclude_self=exclude_self,
        tol=tol,
        min_step=min_step,
        dtype=dtype,
    )
    T = x.shape[axis]
    if T == 0:
        raise ValueError("x is empty along the time axis")
    times = check_timestamps(timestamps, T, min_step=min_step) if use_times else None
    if not causal and zi is not None:
        raise ValueError("zi is only defined for causal=True (a zero-phase filter is offline)")
    xm = np.moveaxis(x.astype(np.float64, copy=False), axis, 0)
    if channel_axis is not None:
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
        zi_vals, zi_times = zi if use_times and isinstance(zi, tuple) else (zi, None)
        if use_times and zi_times is None:
            raise ValueError("with timestamps, zi must be a pair (samples, times)")
        zi_vals = np.asarray(zi_vals, dtype=np.float64)
        expected = list(x.shape)
        expected[axis] = S
        if zi_vals.shape != tuple(expected):
            raise ValueError(f"zi has shape {zi_vals.shape}, expected {tuple(expected)}")
        zm = np.moveaxis(zi_vals, axis, 0)
        if channel_axis is not None:
            zm = np.moveaxis(zm, ch_m, 1)
        hist = zm.reshape(S, C, B)
        if use_times:
            zi_times = np.asarray(zi_times, dtype=np.float64)
            if zi_times.shape != (H,):
                raise ValueError(f"zi times have shape {zi_times.shape}, expected ({H},)")
            hist_times = zi_times

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
