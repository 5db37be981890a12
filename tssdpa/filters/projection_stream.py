"""The streaming side of :class:`~tssdpa.filters.ProjectionFilter`: its empty state and
:meth:`step`, one sample at a time (equal to ``filter(x, zi=...)`` of the whole series)."""

from __future__ import annotations

import datetime as dt
import sys
from contextlib import contextmanager

import numpy as np

from tssdpa.checks import LibraryWarning, check_int, check_tau, to_seconds, unit_advice, warn
from tssdpa.estimators.arrays import (
    ArrayMeta,
    check_columns,
    check_float32_range,
    check_state,
    plain_step_input,
    step_input,
)
from tssdpa.estimators.input_notes import user_stacklevel, within_channel
from tssdpa.estimators.params import same_setting
from tssdpa.filters import channel_streams as streams
from tssdpa.signal.features import initial_feature_state
from tssdpa.signal.lagfilter import check_sample_times, run_causal

__all__ = [
    "MAX_STATE_VALUES",
    "check_state_size",
    "TAU_STEPS",
    "UNREAD_TIMES",
    "empty_chunk_state",
    "zi_named_state",
    "Streaming",
    "same_times",
    "sample_label_time",
    "sample_times",
    "stream_channels",
]

#: the largest streaming state (past samples x channels) initial_state builds (80 MB)
MAX_STATE_VALUES = 10_000_000


def stream_channels(filt, n_channels) -> int | None:
    """The channel count of a stream of ``filt``: ``n_channels``, an int >= 1 that equals the
    fitted channel count where ``filt`` is fitted (else an error naming it), or without it the
    fitted count (None before ``fit``)."""
    fitted = getattr(filt, "n_channels_", None)
    if n_channels is None:
        return fitted
    C = check_int(n_channels, "n_channels")
    if fitted is not None and C != fitted:
        raise ValueError(f"n_channels={C}, but the {type(filt).__name__} was fitted on "
                         f"{fitted} channel(s)")  # fmt: skip
    return C


UNREAD_TIMES = ("timestamps: tau is None, so nothing reads them (the samples are taken as "
                "equally spaced); give tau, the decay's time constant in seconds, or drop "
                "timestamps")  # fmt: skip


#: a median step this many times ``tau`` leaves every key a weight below exp(-30) = 1e-13
TAU_STEPS = 30.0


def sample_times(filt, meta, timestamps, n, fit: bool = False):
    """The checked (n,) sample times in seconds ``filt`` reads (``timestamps``, else a
    DatetimeIndex's or TimedeltaIndex's, ``meta.timestamps``), or None without ``tau``. Times
    given explicitly to a filter without ``tau`` are refused: ignored, they let an irregular
    series be filtered as a regular one without a word (a time index is part of the data and
    is not refused). Times given beside a time index must be its times (:func:`same_times`).
    ``fit``: warn where the median step is ``TAU_STEPS`` times ``tau`` or more."""
    if filt.tau is None:
        if timestamps is not None:
            raise ValueError(UNREAD_TIMES)
        return None
    tau = check_tau(filt.tau)  # a Timedelta failed below in a bare float()
    t = timestamps if timestamps is not None else meta.timestamps
    if t is None:
        period = type(meta.index).__name__ == "PeriodIndex"  # not read as times: say how
        raise ValueError("tau is set: pass timestamps= or a series with a DatetimeIndex or "
                         "TimedeltaIndex" + (" (this PeriodIndex: x.to_timestamp())" if period
                                             else ""))  # fmt: skip
    # named by where they came from: the index's NaT is no fault of a timestamps= not given
    times = check_sample_times(t, n, "timestamps" if timestamps is not None else "x's time index",
                               min_step=filt.min_step)  # fmt: skip
    if timestamps is not None and meta.timestamps is not None:
        same_times(times, meta.timestamps, "timestamps", "x's index")
    if timestamps is not None and not within_channel():
        warn_coarse_times(timestamps, times, tau, "timestamps")
    step = float(np.median(np.diff(times))) if n > 1 else 0.0
    # once, by the fit of the whole series: its channels' own fits read the same times
    if fit and not within_channel() and step >= TAU_STEPS * tau:
        # no key weighs against the sample itself: the filter returns x, and fit scores and
        # keeps that without a word (epoch nanoseconds read as seconds, tau=0.05: y == x)
        warn(f"timestamps: their median step, {step:.3g} s, is {step / tau:.3g} "
             f"times tau={filt.tau:g} s, so no sample weighs on another and the "
             f"filter returns x unchanged; both are in seconds ({_likely_unit(times, timestamps)})",
             LibraryWarning, stacklevel=user_stacklevel())  # fmt: skip
    return times


def _likely_unit(times: np.ndarray, timestamps) -> str:
    """What is likely in the wrong unit where the times (``timestamps``, None for a time
    index's, read as ``times`` in seconds) are far apart for tau: tau, where they came as
    dates or durations (their seconds are exact, and they were told to be divided by 1e3 or
    1e9); else
    the times, told by their size: epoch seconds are about 1.7e9, so 1e11 and more are
    milliseconds, microseconds or nanoseconds since the epoch (it said "nanosecond times:
    divide by 1e9" of all, a million times too far for milliseconds); smaller times, counted
    from a start, may be in any unit."""
    if timestamps is None or _dated(timestamps):
        return "the times are dates or durations, exact in seconds: tau is likely in another unit"
    size = float(np.nanmedian(np.abs(times)))
    for least, unit, short in ((1e17, "nanoseconds", "ns"), (1e14, "microseconds", "us"),
                               (1e11, "milliseconds", "ms")):  # fmt: skip
        if size >= least:
            return f"these look like {unit} since the epoch: {unit_advice([short])}"
    return f"times in milliseconds or nanoseconds: {unit_advice(['ms', 'ns'])}"


def _dated(raw) -> bool:
    """Whether sample times came as dates or durations (datetime64, a time index, Python
    datetimes), not numbers."""
    dtype = getattr(raw, "dtype", None)
    kind = getattr(dtype, "kind", None)  # a torch dtype has none
    if dtype is not None and kind != "O":
        return kind in ("m", "M")
    values = np.asarray(raw, dtype=object).ravel()
    return values.size > 0 and isinstance(values[0], (dt.date, dt.timedelta, np.datetime64,
                                                      np.timedelta64))  # fmt: skip


#: the relative spacing of the low-precision float types times may come in (numpy, torch)
_COARSE_FLOATS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23}
#: a time rounded by more than this share of tau changes its keys' weights by over 1%
COARSE_TIMES = 0.01


def warn_coarse_times(raw, seconds: np.ndarray, tau: float, name: str) -> None:
    """``LibraryWarning`` where the times ``raw`` came in a low-precision float type whose
    rounding at their magnitude is ``COARSE_TIMES`` of ``tau`` or more: epoch seconds in
    float32 are multiples of 128 s, and such a series was filtered as repeated times and
    jumps without a word (its output off by 0.09 on a unit sine). Its words change only
    with the power of two of the times' magnitude: a loop of steps is warned once."""
    dtype = getattr(raw, "dtype", None)
    if dtype is None and isinstance(raw, (list, tuple)):  # np.float32 values in a list
        dtype = np.asarray(raw).dtype
    if dtype is None or dtype == np.float64:  # the usual case first: a step must stay cheap
        return
    kind = str(dtype).removeprefix("torch.")
    if kind not in _COARSE_FLOATS or not seconds.size or not np.isfinite(seconds).any():
        return
    peak = float(np.nanmax(np.abs(seconds)))
    spacing = 2.0 ** np.floor(np.log2(peak)) * _COARSE_FLOATS[kind] if peak > 0 else 0.0
    if spacing >= COARSE_TIMES * tau:
        warn(f"{name} in {kind} hold only multiples of {spacing:.3g} s at their "
             f"magnitude, {spacing / tau:.3g} times tau={tau:g} s, so their steps can "
             "be off by as much; pass them as float64 (or as seconds since the log "
             "began)", LibraryWarning, stacklevel=user_stacklevel())  # fmt: skip


def same_times(given, own, name: str, whose: str) -> None:
    """``ValueError`` naming ``name`` where the times ``given`` (seconds) are not ``own``, the
    times the data carries (``whose``: its index, or a sample's label). One of them was
    silently used, the index ignored, so a series was filtered at times it does not hold;
    equal to the rounding of a conversion of epoch seconds (an ulp is 2.4e-7 s in 2024) they
    are the same times, given twice."""
    given, own = np.asarray(given, dtype=np.float64), np.asarray(own, dtype=np.float64)
    # of the finite times: a NaT in the index made the slack NaN, and row 0 was named
    finite = np.abs(own[np.isfinite(own)])
    slack = 1e-6 + 4.0 * float(np.spacing(finite.max())) if finite.size else 1e-6
    off = np.flatnonzero(~(np.abs(given - own) <= slack))
    if off.size:
        i = int(off[0])
        row = f"row {i}: " if given.size > 1 else ""
        raise ValueError(f"{name}= and {whose} disagree ({row}{given[i]:.6f} s against "
                         f"{own[i]:.6f} s, seconds since the epoch for datetimes): the data "
                         f"carries its own times; drop {name}= to use them, or pass the "
                         "values without the index (.to_numpy()) to use yours")  # fmt: skip


def sample_label_time(sample):
    """The time a pandas ``sample`` of :meth:`Streaming.step` carries, in seconds, or None: a
    one-row DataFrame's (or one-value Series') DatetimeIndex / TimedeltaIndex entry, or the
    name of a row ``df.iloc[i]`` of a DataFrame with such an index (a Timestamp/Timedelta)."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(sample, (pd.Series, pd.DataFrame)):
        return None
    times = (pd.DatetimeIndex, pd.TimedeltaIndex)
    if len(sample.index) == 1 and isinstance(sample.index, times):
        return float(to_seconds(sample.index, "sample's index")[0])
    if isinstance(sample, pd.Series) and isinstance(sample.name, (pd.Timestamp, pd.Timedelta)):
        return float(to_seconds(pd.Index([sample.name]), "sample's name")[0])
    return None


def check_sample_labels(filt, sample) -> None:
    """A pandas sample names its channels: a row ``df.iloc[i]`` (a Series indexed by the
    columns) or a one-row DataFrame must have the columns of the DataFrame ``filt`` was
    fitted on, in that order, as :meth:`filter` checks (``ValueError`` naming ``sample``);
    by position alone, swapped columns were each filtered with the other's state and scale."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(sample, (pd.Series, pd.DataFrame)):
        return
    if isinstance(sample, pd.Series) and len(sample) == 1:  # one value: its label may be a time
        return
    labels = sample.index if isinstance(sample, pd.Series) else sample.columns
    check_columns(filt, ArrayMeta("frame", False, columns=labels), "sample")


def empty_chunk_state(filt, zi, C: int):
    """The ``zf`` of an empty chunk of ``C`` channels: ``zi``, checked, as new arrays. It
    was the caller's own arrays, so changing ``zf`` in place (resetting its held output)
    changed the ``zi`` kept beside it; every other chunk's ``zf`` is new."""
    state = check_state(zi, filt.initial_state(C))
    return tuple(np.array(a) for a in state) if isinstance(state, tuple) else np.array(state)


def check_state_size(history: int, C: int, window: str) -> None:
    """``ValueError`` where a state of ``history`` samples x ``C`` channels is over
    :data:`MAX_STATE_VALUES` (``window``: where the history comes from)."""
    if history * C > MAX_STATE_VALUES:
        raise ValueError(
            f"window: the streaming state would keep {history} past samples x {C} "
            f"channel(s) ({window}, from window / decay / tau and tol); at most "
            f"{MAX_STATE_VALUES} values -- use a shorter window, a smaller decay or a "
            "larger tol (the offline filter() has no such limit)"
        )


def state_named(exc: ValueError) -> ValueError | None:
    """``exc``, an error about ``filter``'s ``zi`` raised in a ``step``, naming ``state``,
    the argument the caller gave (it said "zi has shape ..."); None for any other error."""
    text = str(exc)
    return ValueError("state" + text[2:]) if text.startswith(("zi ", "zi[")) else None


@contextmanager
def zi_named_state():
    """Around a ``step`` that checks its ``state`` as ``filter``'s ``zi``: an error about
    ``zi`` names ``state`` (:func:`state_named`)."""
    try:
        yield
    except ValueError as exc:
        named = state_named(exc)
        if named is None:
            raise
        raise named from None


class Streaming:
    """Mixin of :class:`~tssdpa.filters.ProjectionFilter`: ``initial_state`` and ``step``."""

    def initial_state(self, n_channels: int | None = None):
        """An empty state for :meth:`filter` (``zi``) and :meth:`step`.

        A (H + 1, C) array of NaN -- rows 0..H-1 hold the last H input samples (H = kept
        history, ``window - 1 + embedding - 1``), row H the last defined output, which a row
        with no usable key repeats -- a pair ``(samples, times)`` with ``times`` (H,) when
        ``tau`` is set, or a 5-tuple (embedding history, feature sums S and n, last time,
        last output) for ``recurrent="features"``.

        Like ``scipy.signal``'s ``zi``, the empty state needs no fit: without ``n_channels``
        on an unfitted filter it has one column, and an empty (all-NaN) state takes the
        channel count of the first chunk it is given. ``n_channels`` is an int >= 1, the
        fitted channel count on a fitted filter.
        """
        C = stream_channels(self, n_channels)
        if C is None:
            if self.recurrent == "features":  # the features are drawn for a channel count
                raise ValueError("recurrent='features': give n_channels or call fit() first")
            C = 1
        self._validate_params()
        if streams.composite(self):  # fitted channel by channel: the longest history
            H = streams.history(self)  # every channel keeps it (one had 660 MB built)
            check_state_size(H, C, "the longest of its channels' filters")
            return streams.initial_state(self, C)
        return self._own_initial_state(C)

    def _own_initial_state(self, C: int):
        """:meth:`initial_state` of this filter's own kernel over ``C`` channels."""
        if self.recurrent == "features":
            s = self._settings()
            return initial_feature_state(
                int(self.n_features), C, int(s["embedding"]), self.tau is not None
            )
        spec = self._spec()
        if not spec.causal:
            raise ValueError("a zero-phase (causal=False) filter has no streaming state")
        check_state_size(spec.history, C, f"window {spec.window}")
        hist = np.full((spec.history + 1, C), np.nan)
        if spec.tau is not None:
            return hist, np.full(spec.history, np.nan)
        return hist

    def step(self, sample, state, timestamp=None):
        """Filter one sample: returns ``(y_t, new_state)``; the state passed in is not changed.

        ``sample`` is a scalar or a length-C vector; ``y_t`` has the same shape, a numpy
        value whatever the sample's type (a tensor, a pandas row; a (1, C) row gives a length-C
        ``y_t``). With ``tau``
        give the sample's ``timestamp``; a pandas row of a frame with a DatetimeIndex or
        TimedeltaIndex (``df.iloc[i]``, named by its time, or ``df.iloc[[i]]``) carries its
        own, and a ``timestamp`` given beside it must be the same time. Equal to
        :meth:`filter` of the whole series from the same state (``filter(x,
        zi=initial_state())``), hence to the offline ``filter(x)`` except for rows before the
        first defined output (NaN here, back-filled offline). Same
        compute dtype as :meth:`filter`: with ``dtype="float32"`` both round to float32 and
        agree to a few float32 ulps of the data range (tested: within 1e-6 of the range).
        """
        if not self.causal:  # before the state's checks: no state would do ("what
            # initial_state() returned", which refuses a zero-phase filter)
            raise ValueError("a zero-phase (causal=False) filter has no streaming state")
        if timestamp is None and self.tau is None and plain_step_input(sample, state):
            s, plain = sample, True  # the usual call: every check below passes
        else:
            (s, timestamp), plain = self._checked_sample(sample, state, timestamp), False
        scalar = s.ndim == 0
        s = s.reshape(1, -1)
        fitted = self.__dict__.get("n_channels_")  # as filter refuses it: a state sized to
        if fitted is not None and s.shape[1] != fitted:  # the sample passed it unsaid
            name = type(self).__name__
            raise ValueError(
                f"sample has {s.shape[1]} value(s) but the {name} was fitted on {fitted} channel(s)"
            )
        check_float32_range(s, self.dtype, "sample")
        try:  # the paths below check the state as filter's zi (inline: a step stays cheap)
            return self._step_checked(s, scalar, state, timestamp, plain)
        except ValueError as exc:
            named = state_named(exc)
            if named is None:
                raise
            raise named from None

    def _step_checked(self, s, scalar, state, timestamp, plain):
        """:meth:`step` of the checked (1, C) sample ``s``."""
        if self.recurrent is None and not streams.composite(self):
            fast = self._step_newest(self._step_spec(), state, s[0], timestamp, plain)
            if fast is not None:
                y, new = fast
                return (y[0] if scalar else y), new
        elif self.recurrent is None:
            y, new = streams.step(self, s[0], state, timestamp)  # each channel's own step
            return (y[0] if scalar else y), new
        ts = None if timestamp is None else np.array([float(timestamp)])
        y, new = self.filter(s, zi=state, timestamps=ts)
        return (y[0, 0] if scalar else y[0]), new

    def _checked_sample(self, sample, state, timestamp):
        """:meth:`step`'s ``(sample, timestamp)``: the sample as a float64 array, checked with
        its state (:func:`step_input`, the channel count), and the time it is taken at (with
        ``tau``: ``timestamp`` in seconds, or a pandas sample's own), or an error naming what
        is wrong."""
        check_sample_labels(self, sample)
        s, hist = step_input(sample, state)
        C = np.shape(hist)[-1] if np.ndim(hist) == 2 else 1
        empty = C == 1 and np.isnan(hist).all()  # an empty state sizes itself
        if s.size != C and not empty:  # random features too: hist is their embedding history
            raise ValueError(
                f"sample has {s.size} value(s) but the state filters {C} channel(s): give one "
                "value per channel"
            )
        if timestamp is not None and self.tau is None:  # as filter: nothing would read it
            raise ValueError("timestamp: tau is None, so nothing reads it (the samples are "
                             "taken as equally spaced); give tau or drop timestamp")  # fmt: skip
        # as filter reads a time index: a pandas sample's own time, checked against timestamp
        own = sample_label_time(sample) if self.tau is not None else None
        if timestamp is None and own is None and self.tau is not None:  # (filter's message
            raise ValueError("timestamp: tau is set, give the sample's time (step(sample, "
                             "state, timestamp=t), in seconds or a datetime)")  # fmt: skip
        if timestamp is not None:  # a number (seconds) or a datetime of any resolution
            # one time, also as an array of one (the ONNX model's t[i:i+1]): float() of
            # to_seconds([t[i:i+1]]) failed in numpy, naming nothing
            raw = np.asarray(timestamp)
            seconds = to_seconds(raw.ravel(), "timestamp")
            warn_coarse_times(raw, seconds, check_tau(self.tau), "timestamp")
            if seconds.size != 1:
                raise ValueError(f"timestamp must be one time (the sample's), got "
                                 f"{seconds.size} values")  # fmt: skip
            timestamp = float(seconds[0])
            if not np.isfinite(timestamp):
                raise ValueError(f"timestamp must be finite, got {timestamp!r}")
            if own is not None:
                same_times([timestamp], [own], "timestamp", "the sample's own time (its label)")
        return s, (own if timestamp is None else timestamp)

    def _step_spec(self):
        """The resolved spec, cached on the settings it depends on (a step must stay cheap)."""
        d = self.__dict__
        key = (
            d.get("window_"), d.get("embedding_"), d.get("sigma_"), d.get("decay_"),
            d.get("degree_"), self.window, self.embedding, self.degree, self.sigma, self.decay,
            self.tau, self.causal, self.n_neighbors,
            self.exclude_self, self.tol, self.min_step, self.dtype,
        )  # fmt: skip
        cache = self.__dict__.get("_step_cache")
        if cache is not None and all(a is b or same_setting(a, b) for a, b in zip(cache[0], key)):
            return cache[1]
        self._validate_params()
        spec = self._spec()
        if not spec.causal:
            raise ValueError("a zero-phase (causal=False) filter has no streaming state")
        self._step_cache = (key, spec)
        return spec

    def _stream(self, x2: np.ndarray, zi, times):
        """``filter(x2, zi)`` of this filter's own kernel on checked (T, C) ``x2`` (the
        exact kernel): ``(y, zf)`` in the units of x."""
        spec = self._spec()
        state = self._state_units(check_state(zi, self._own_initial_state(x2.shape[1])), False)
        hist, hist_times = state if spec.tau is not None else (state, None)
        y, nh, nt = run_causal(self._to_units(x2), hist, spec, times, hist_times,
                               min_step=self.min_step)  # fmt: skip
        zf = (nh, nt) if spec.tau is not None else nh
        return self._from_units(y.astype(np.float64)), self._state_units(zf, True)
