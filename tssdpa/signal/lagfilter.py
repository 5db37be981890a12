"""A projection filter run over a series: settings, state, and the causal / zero-phase passes.

:class:`FilterSpec` holds the validated settings of one filter (design); :func:`run_causal`
(with state, ``zi → (y, zf)``), :func:`run_offline`, :func:`run_noncausal` and
:func:`step_newest` apply it with the lag kernel of :mod:`tssdpa.signal.lags`. Both
:func:`tssdpa.filters.projection_filter` and :class:`tssdpa.filters.ProjectionFilter` are thin
layers over these functions.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from tssdpa.checks import check_choice, check_decay, check_int, check_sigma, check_tau, to_seconds
from tssdpa.signal.embedding import centred_embedding, delay_embedding
from tssdpa.signal.lags import attend_lags, attend_newest, decay_logits, iir_truncation_lag
from tssdpa.signal.missing import fill_backward, fill_between, fill_forward
from tssdpa.signal.nonlocal_filter import run_nonlocal

__all__ = [
    "MAX_DEGREE",
    "MAX_SHORT_SERIES_PATTERNS",
    "FilterSpec",
    "check_continues",
    "check_degree",
    "check_no_step_back",
    "check_sample_times",
    "resolve_spec",
    "run_causal",
    "run_noncausal",
    "run_nonlocal_offline",
    "run_offline",
    "step_newest",
]


#: the highest local-polynomial degree: its normal equations hold the moments of the time
#: offset up to u^(2p), whose condition number grows ~1000x per degree (4e11 at 8, 1e15 at 10)
#: and beyond 8 leaves float64 too few correct digits
MAX_DEGREE = 8
#: the values an embedding longer than the series may build its patterns from (1 GiB of
#: float64): such patterns are mostly missing, and 10**5 samples of them on 50 asked 75 GiB
MAX_SHORT_SERIES_PATTERNS = 1 << 27


def check_degree(degree) -> int:
    """A local-polynomial degree: an int in 0 .. :data:`MAX_DEGREE`."""
    degree = check_int(degree, "degree", minimum=0)
    if degree > MAX_DEGREE:
        raise ValueError(f"degree must be <= {MAX_DEGREE} (the local-polynomial normal "
                         f"equations lose all precision beyond it), got {degree}")  # fmt: skip
    return degree


@dataclass(frozen=True)
class FilterSpec:
    """Resolved, validated settings of one projection filter.

    ``window`` is the number of lags kept on each side: the FIR length W, or for an IIR
    filter its truncation lag K (see :func:`~tssdpa.signal.lags.iir_truncation_lag`), so an
    IIR filter runs as the FIR filter of window K that it provably equals to ``tol`` times the
    data's range where the sample itself is a key (weight 1). Without it (``exclude_self``, a
    missing sample) the bound is ``tol`` over the row's kept weight, which a narrow kernel can
    make tiny (docs/filters.md §4): 0.84 off on a square wave at sigma 0.05.
    """

    window: int  # 0 for the non-local filter
    embedding: int
    sigma: float  # inf: the uniform kernel (a moving average or Savitzky–Golay filter)
    decay: float | None  # per-sample factor gamma, or None
    tau: float | None  # time constant (time units) when timestamps are used
    causal: bool
    exclude_self: bool
    dtype: np.dtype
    degree: int = 0  # 0: weighted mean; p: weighted local polynomial of degree p in time
    #: None: the window's keys; k: the non-local filter (``window="all"``), whose keys are the
    #: k patterns of the whole series nearest to the query's (:mod:`.nonlocal_filter`)
    n_neighbors: int | None = None

    @property
    def history(self) -> int:
        """Rows of past samples a causal filter keeps as state."""
        return self.window - 1 + self.embedding - 1


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
    degree=0,
    n_neighbors=64,
) -> FilterSpec:
    """Validate user settings and work out how many lags the filter needs."""
    check_choice(causal, "causal", (True, False))  # "False" or "no" were read as True
    check_choice(exclude_self, "exclude_self", (True, False))
    embedding = check_int(embedding, "embedding")
    degree = check_degree(degree)
    if isinstance(window, str) and window == "all":
        if causal or decay is not None or tau is not None or degree or embedding < 2:
            raise ValueError("window='all' (the non-local filter) needs causal=False, no "
                             f"decay / tau, degree 0 and embedding >= 2, got causal={causal}, "
                             f"decay={decay}, tau={tau}, degree={degree}, "
                             f"embedding={embedding}")  # fmt: skip
        return FilterSpec(
            window=0,
            embedding=embedding,
            sigma=check_sigma(sigma, allow_inf=True),
            decay=None,
            tau=None,
            causal=False,
            exclude_self=bool(exclude_self),
            dtype=_check_dtype(dtype),
            n_neighbors=check_int(n_neighbors, "n_neighbors"),
        )
    if window is not None:
        window = check_int(window, "window")
    sigma = check_sigma(sigma, allow_inf=True)
    if decay is not None:
        decay = check_decay(decay)
    if tau is not None:
        tau = check_tau(tau)
        if decay is not None:
            raise ValueError("give either decay (per sample) or tau (time units), not both")
    dtype = _check_dtype(dtype)
    if window is None:
        per_side_tol = tol if causal else tol / 2.0
        if decay is not None and decay < 1.0:
            window = iir_truncation_lag(decay, per_side_tol)
        elif tau is not None:
            if min_step is None or not min_step > 0:
                raise ValueError(
                    "an infinite-memory filter with tau needs min_step > 0 (the smallest time "
                    "step that will occur) to bound the truncated tail, or give a window"
                )
            window = iir_truncation_lag(math.exp(-float(min_step) / tau), per_side_tol)
        else:
            raise ValueError("window=None needs a decay < 1 (or tau): give a window or a decay")
    return FilterSpec(
        window=window,
        embedding=embedding,
        sigma=sigma,
        decay=decay,
        tau=tau,
        causal=bool(causal),
        exclude_self=bool(exclude_self),
        dtype=dtype,
        degree=degree,
    )


def _check_dtype(dtype) -> np.dtype:
    try:
        dtype = np.dtype(dtype)
    except TypeError:  # numpy's "data type 'x' not understood" named no argument
        raise TypeError(f"dtype must be float32 or float64, got {dtype!r}") from None
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


def check_sample_times(times, n: int, name: str = "timestamps", min_step=None) -> np.ndarray:
    """Sample times as a float64 (n,) array of seconds (datetimes converted exactly, any
    resolution: :func:`~tssdpa.checks.to_seconds`): finite, non-decreasing, steps >=
    ``min_step``."""
    times = to_seconds(times, name)
    if times.ndim != 1 or times.shape[0] != n:
        raise ValueError(f"{name} must be 1-D with one entry per sample ({n}), got {times.shape}")
    if not np.all(np.isfinite(times)):
        first = int(np.flatnonzero(~np.isfinite(times))[0])
        raise ValueError(f"{name} must be finite; sample {first} is {times[first]}")
    check_no_step_back(times, name)
    steps = np.diff(times)
    short = [] if min_step is None else short_steps(steps, min_step, times)
    if len(short):
        first = int(short[0])
        raise ValueError(f"{name} has a step smaller than min_step={min_step}: {len(short):,} "
                         f"of its {len(steps):,} steps, the first {steps[first]:.6g} s from "
                         f"sample {first:,} to {first + 1:,} "
                         f"({_short_step_advice(int(np.sum(steps[short] <= 0)))})")  # fmt: skip
    return times


def _seconds(t: float) -> str:
    """A time in seconds as it reads (0.49, 0, 1700000000.25, 0.0000003): ``:g`` wrote epoch
    seconds as 1.7e+09, the same for every sample of a day, and six decimals wrote 3e-7 and
    2e-7 both as 0."""
    return np.format_float_positional(float(t), trim="-")


def check_no_step_back(times: np.ndarray, name: str = "timestamps") -> None:
    """``ValueError`` naming ``name``, the first sample whose time ``times`` steps back and
    both times: it said only that a step backwards was found, somewhere."""
    back = np.flatnonzero(np.diff(times) < 0)
    if back.size:
        i = int(back[0]) + 1
        raise ValueError(f"{name} must be non-decreasing (monotonic), found a step backwards "
                         f"at sample {i}, from {_seconds(times[i - 1])} s to "
                         f"{_seconds(times[i])} s (a clock that was reset starts a new series: "
                         "filter each part on its own)")  # fmt: skip


def check_continues(first: float, last: float) -> None:
    """``ValueError`` where a chunk's first time ``first`` is before ``last``, its state's
    last time, naming both (a stream's clock reset)."""
    if first < last:
        raise ValueError(f"timestamps must continue after the state's last timestamp: "
                         f"{_seconds(first)} s is before its {_seconds(last)} s (where the "
                         "clock was reset, start a new stream from initial_state())")  # fmt: skip


def _short_step_advice(repeated: int) -> str:
    """What to do about steps below ``min_step``, ``repeated`` of them repeated times: no
    ``min_step`` > 0 admits those (it said "give a smaller min_step" of them too)."""
    if not repeated:
        return "jittered times: give a smaller min_step"
    return (
        f"{repeated:,} of them repeated times, which no min_step > 0 admits: give a window "
        "instead (window=W, min_step=None: W samples whatever their times), or merge the "
        "samples of one time"
    )


def short_steps(steps, min_step: float, times) -> np.ndarray:
    """The indices of the steps between sample ``times`` (seconds) below ``min_step`` by more
    than their rounding: datetimes become float seconds since the epoch, whose spacing is
    2.4e-7 s in 2024, so an exact 1 ms step reads 0.99993-1.00017 ms (and was refused at
    ``min_step=0.001``). Two roundings of each time apart: the slack is 4 units of the last
    place of the largest time."""
    times = np.asarray(times, dtype=np.float64)
    slack = 4.0 * float(np.spacing(np.abs(times).max())) if times.size else 0.0
    return np.flatnonzero(np.asarray(steps) < min_step - slack)


def below_min_step(steps, min_step: float, times) -> bool:
    """Whether a step is below ``min_step`` beyond rounding (:func:`short_steps`)."""
    return bool(len(short_steps(steps, min_step, times)))


def run_causal(
    x2, state, spec: FilterSpec, times=None, hist_times=None, min_step=None, configs=None,
    rowwise=True,
):  # fmt: skip
    """Filter (T, C) ``x2`` from ``state``; returns (y, new_state, new_times or None).

    ``state`` (H + 1, C): the last H = ``spec.history`` input samples (NaN = none), then the
    last defined output of each channel (NaN = none yet), which its values without any usable
    key repeat. With ``configs`` (a list of (sigma, degree)), ``y`` is a list: one output per
    configuration. ``rowwise`` (:func:`~tssdpa.signal.lags.attend_lags`): True where the
    output must give a stream of steps' bits.
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
        full_times = _relative(np.concatenate([hist_times, times]))
        last = hist_times[~np.isnan(hist_times)]
        if last.size and T:
            check_continues(times[0], last[-1])
        if (
            last.size
            and T
            and min_step is not None
            and below_min_step(times[0] - last[-1], min_step, times[:1])
        ):
            raise ValueError(f"timestamps have a step smaller than min_step={min_step}: "
                             f"{times[0] - last[-1]:.6g} s from the state's last timestamp "
                             f"to the first sample "
                             f"({_short_step_advice(int(times[0] <= last[-1]))})")  # fmt: skip
    ys = attend_lags(
        E,
        full,
        (H, H + T),
        0,
        spec.window - 1,
        configs=configs or [(spec.sigma, spec.degree)],
        decay=spec.decay,
        times=full_times,
        tau=spec.tau,
        exclude_self=spec.exclude_self,
        fallback=full[H:] if spec.exclude_self else None,
        rowwise=rowwise,
    )
    filled = [fill_forward(y, hold.astype(spec.dtype)) for y in ys]
    y, hold = filled[0] if configs is None else ([f[0] for f in filled], filled[0][1])
    new_state = np.empty((H + 1, x2.shape[1]), dtype=np.float64)
    new_state[:H] = full[full.shape[0] - H :]
    new_state[H] = hold
    if use_times:
        # timestamps are carried in float64 regardless of the compute dtype
        new_times = np.concatenate([hist_times, times])[-H:] if H else hist_times[:0]
        return y, new_state, np.array(new_times, dtype=np.float64)
    return y, new_state, None


def run_offline(x2, spec: FilterSpec, times=None, configs=None, rowwise=True):
    """One-shot filter of (T, C) ``x2`` (no state): causal from an empty state with the
    leading undefined rows back-filled, or the zero-phase filter (windowed or non-local).
    With ``configs`` (a list of (sigma, degree)) a list of outputs, one per configuration,
    sharing the distances. ``rowwise`` (:func:`run_causal`): False only where the output
    need not give a stream's bits, the fit's scoring of its candidates (faster).

    A window longer than the series is the series' length (the same keys, so the same
    output): ``window=10**9`` on 50 samples costs what ``window=50`` does."""
    T = x2.shape[0]
    if spec.n_neighbors is not None:
        ys, _ = run_nonlocal_offline(x2, spec, configs)
        return ys[0] if configs is None else ys
    # the table's size: a row per sample, per padding and per past sample a pattern reaches
    patterns = spec.embedding * (spec.embedding + T + 2 * min(spec.window, T)) * x2.shape[1]
    if spec.embedding > T and patterns > MAX_SHORT_SERIES_PATTERNS:
        raise ValueError(f"embedding={spec.embedding} is longer than the series ({T} samples), "
                         f"and its patterns would hold {patterns:.3g} values: give a shorter "
                         "embedding")  # fmt: skip
    if spec.window > T:
        # keys reach back (or around) at most T - 1 samples: a longer window (or IIR
        # truncation lag) attends to exactly the same keys, without its padding
        spec = replace(spec, window=T)
    if not spec.causal:
        return run_noncausal(x2, spec, times, configs)
    state = np.full((spec.history + 1, x2.shape[1]), np.nan)
    hist_times = np.full(spec.history, np.nan) if spec.tau is not None else None
    y, _, _ = run_causal(x2, state, spec, times, hist_times, configs=configs, rowwise=rowwise)
    return fill_backward(y) if configs is None else [fill_backward(v) for v in y]


def run_nonlocal_offline(x2, spec: FilterSpec, configs=None):
    """:func:`run_offline` of the non-local filter (``spec.n_neighbors`` set), one output per
    configuration (``[spec.sigma]`` without ``configs``), and the (T,) weight of each row's own
    sample per configuration: its ``dy_t / dx_t``
    (:func:`~tssdpa.signal.nonlocal_filter.run_nonlocal`) where the row has a key. A row without
    one (every sample of its pattern missing: a lone sample between gaps) has weight 0, but its
    output is interpolated from the rows beside it, whose patterns hold x_t: there it is not the
    derivative. Returns ``(outputs, self_weights)``."""
    T = x2.shape[0]
    if spec.embedding > T:
        raise ValueError(f"embedding={spec.embedding} is longer than the series ({T} samples)")
    sigmas = [spec.sigma] if configs is None else [s for s, _ in configs]
    if configs is not None and any(d for _, d in configs):
        raise ValueError("window='all' (the non-local filter) has degree 0 only")
    ys, own = run_nonlocal(x2, spec.embedding, spec.n_neighbors, sigmas, spec.exclude_self)
    if np.isnan(ys[0]).all():
        raise ValueError(f"window='all': no sample has a complete pattern of embedding "
                         f"{spec.embedding} with finite values among the {T} samples; give "
                         "a shorter embedding or a windowed filter")  # fmt: skip
    return [fill_between(y.astype(spec.dtype)) for y in ys], own


def run_noncausal(x2, spec: FilterSpec, times=None, configs=None):
    """Zero-phase (two-sided) filter of (T, C) ``x2`` with a centred embedding."""
    K = spec.window
    T, C = x2.shape
    pad = np.full((K - 1, C), np.nan, dtype=spec.dtype)
    full = np.concatenate([pad, x2.astype(spec.dtype), pad], axis=0)
    E = centred_embedding(full, spec.embedding)
    full_times = None
    if spec.tau is not None:
        if times is None:
            raise ValueError("tau is set: timestamps are required")
        tp = np.full(K - 1, np.nan)
        full_times = _relative(np.concatenate([tp, times, tp]))
    y = attend_lags(
        E,
        full,
        (K - 1, K - 1 + T),
        -(K - 1),
        K - 1,
        configs=configs or [(spec.sigma, spec.degree)],
        decay=spec.decay,
        times=full_times,
        tau=spec.tau,
        exclude_self=spec.exclude_self,
        fallback=full[K - 1 : K - 1 + T] if spec.exclude_self else None,
    )
    return fill_between(y[0]) if configs is None else [fill_between(v) for v in y]


def step_newest(
    spec: FilterSpec, state, sample: np.ndarray, timestamp=None, min_step=None, finite=False
):
    """The latency path of a causal filter's per-sample step, or None where it does not apply.

    ``state`` as for :func:`run_causal` ((H + 1, C), or the pair (samples, times (H,)) with
    ``tau``), ``sample`` (C,), ``timestamp`` its time. Applies when the sample and its history
    are finite and the times are consistent (then the output row always has a usable key);
    returns ``(y (C,), new_state)`` equal to :func:`run_causal` on that one sample, computed in
    the filter's dtype. None sends the caller to :func:`run_causal`, which also raises the
    errors for inconsistent input. ``finite``: the caller has found ``state`` a float64 (H + 1,
    C) array and ``sample`` finite (the scan for NaN is skipped: a step must stay cheap).
    """
    H = spec.history
    times = t_now = None
    if spec.tau is not None:
        if timestamp is None or not isinstance(state, tuple) or len(state) != 2:
            return None
        state, times = state
        times = np.asarray(times, dtype=np.float64)
        if times.shape != (H,) or np.isnan(times).any():
            return None
        t_now = float(timestamp)
        if H and (
            t_now < times[-1]
            or (min_step is not None and below_min_step(t_now - times[-1], min_step, [t_now]))
        ):
            return None
    elif isinstance(state, tuple):
        return None
    if type(state) is not np.ndarray or state.dtype != np.float64:
        state = np.asarray(state, dtype=np.float64)
    if state.ndim == 1:
        state = state[:, None]
    if state.shape[1] == 1 != sample.shape[0] and np.isnan(state).all():
        return None  # an empty state: the general path sizes it to the sample's channels
    if state.shape != (H + 1, sample.shape[0]):
        raise ValueError(f"state has shape {state.shape}, expected {(H + 1, sample.shape[0])}")
    # buf = [history (H), sample, output]: the new state is the view buf[1:]
    buf = np.empty((H + 2, sample.shape[0]))
    buf[:H] = state[:H]
    buf[H] = sample
    full = buf[: H + 1]
    if not finite and np.isnan(full).any():
        return None
    dt = spec.dtype
    fc = full if dt == np.float64 else full.astype(dt)
    elapsed = None
    if spec.tau is not None:
        t_full = np.append(times, t_now)[spec.embedding - 1 :]
        elapsed = (t_full[-1] - t_full).astype(dt)  # in float64 first, as in _relative
    y = attend_newest(
        fc,
        spec.embedding,
        None if spec.decay is None else _newest_decay_logits(spec.window, spec.decay, dt.str),
        spec.sigma,
        elapsed=elapsed,
        tau=spec.tau,
        exclude_self=spec.exclude_self,
        degree=spec.degree,
    )
    buf[H + 1] = y
    y = y.astype(np.float64, copy=False)  # a new array: attend_newest's own
    return (y, buf[1:]) if times is None else (y, (buf[1:], np.append(times, t_now)[1:]))


def _relative(times: np.ndarray) -> np.ndarray:
    """Sample times (float64, NaN = none) less their first defined one, in float64 whatever
    the compute dtype: float32 epoch seconds (1.7e9) resolve 128 s, which flattened a 100 Hz
    recording's decay, and float32 times since the first sample still lose a 10 ms step's
    digits as they grow (1.5e-5 of the data range between step and filter 200 s into a
    100 Hz series). The kernel takes the differences in float64, then rounds them."""
    defined = times[~np.isnan(times)]
    return times - defined[0] if defined.size else np.array(times, dtype=np.float64)


@functools.lru_cache(maxsize=64)
def _newest_decay_logits(window: int, decay: float | None, dtype: str):
    """Decay logits of lags window-1 .. 0, cached: the per-sample step must stay cheap."""
    out = decay_logits(np.arange(window - 1, -1, -1), decay, np.dtype(dtype))
    if out is not None:
        out.setflags(write=False)
    return out
