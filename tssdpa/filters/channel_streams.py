"""A causal filter fitted channel by channel, streamed as one
(``ProjectionFilter(causal=True, channel_independent=True)``).

Each channel's own filter keeps a history of its own length (its window and embedding); the
joint filter, where some channels keep its output, one of its own over every channel. The
stream keeps one state in the layout of :meth:`ProjectionFilter.initial_state`, ``(H + 1,
C)`` with ``H`` the longest of those histories: rows ``0 .. H-1`` the last ``H`` input samples
of every channel, row ``H`` each channel's last defined output (with ``tau``, the times of
those ``H`` samples beside it). Each filter reads the newest rows it needs, its own channel
(the joint filter: every channel), so the state moves between Python and the exported ONNX
model as a joint filter's does, and any split of a series into chunks gives the one-shot
result, since each filter's does.
"""

from __future__ import annotations

import numpy as np

from tssdpa.estimators.arrays import check_state, float32_samples_note
from tssdpa.filters.projection_channels import follow_settings

__all__ = [
    "by_channel",
    "composite",
    "float32_note",
    "history",
    "initial_state",
    "parts",
    "step",
    "stream",
]


def by_channel(filt) -> bool:
    """Whether ``filt`` filters with its ``channel_models_``: it has them, as causal as it is
    (one switched between causal and zero-phase by ``set_params`` after its fit filters with
    its joint settings, as a joint fit does)."""
    models = getattr(filt, "channel_models_", None)
    return bool(models) and all(m is None or m.causal == filt.causal for m in models)


def composite(filt) -> bool:
    """Whether ``filt`` streams channel by channel: causal, :func:`by_channel`."""
    return bool(getattr(filt, "causal", False)) and by_channel(filt)  # any object: False


def parts(filt) -> list[tuple[object, list[int], list[int]]]:
    """``(filter, inputs, outputs)`` of a composite ``filt``: the joint filter over every
    channel for the channels that keep its output (where any does), then each channel's own
    filter over its channel, each with the settings of ``filt`` that apply at filter time
    (``set_params`` after fit: exclude_self, dtype, ... reached the stream only after an
    offline call had passed them on)."""
    follow_settings(filt)
    models = filt.channel_models_
    joint = [c for c, m in enumerate(models) if m is None]
    out = [(filt, list(range(len(models))), joint)] if joint else []
    return out + [(m, [c], [c]) for c, m in enumerate(models) if m is not None]


def float32_note(filt) -> str | None:
    """:func:`~tssdpa.estimators.arrays.float32_samples_note` of ``filt``, or where it has no
    joint fit (``channel_independent=True``) of its channels' own filters, naming the
    channel: the joint fit's ``center_`` covered every channel, and without one a channel at
    1e6 with a spread of 0.7 was exported without a word."""
    note = float32_samples_note(filt)
    if note is not None or not composite(filt):
        return note
    for c, m in enumerate(filt.channel_models_):
        note = None if m is None else float32_samples_note(m)
        if note is not None:  # the channel's own filter calls it channel 0
            return f"channel {c}" + note.removeprefix("channel 0")
    return None


def history(filt, pieces=None) -> int:
    """``H`` of the composite state: the longest history its parts (``pieces``, else
    :func:`parts`) keep."""
    return max(f._step_spec().history for f, _, _ in pieces or parts(filt))


def initial_state(filt, n_channels: int, H: int | None = None):
    """The empty composite state: (H + 1, C) NaN, with (H,) NaN times where ``tau`` is set."""
    H = history(filt) if H is None else H
    hist = np.full((H + 1, n_channels), np.nan)
    return (hist, np.full(H, np.nan)) if filt.tau is not None else hist


def stream(filt, x2: np.ndarray, zi, times):
    """``filt.filter(x2, zi)`` of a causal ``filt`` on checked (T, C) ``x2``: ``(y, zf)``;
    channel by channel where ``filt`` is composite, else its own kernel's stream."""
    if not composite(filt):
        return filt._stream(x2, zi, times)
    return _by_part(filt, x2, zi, times, lambda f, cols, sub: f._stream(x2[:, cols], sub, times))


def step(filt, sample: np.ndarray, state, timestamp):
    """``filt.step`` of a composite ``filt`` on one (C,) ``sample``: ``(y (C,), state)``, each
    part by its own one-row step (:meth:`_step_newest`) where it has one."""
    times = None if timestamp is None else np.array([timestamp])

    def one_row(f, cols, sub):
        fast = f._step_newest(f._step_spec(), sub, sample[cols], timestamp)
        if fast is None:
            return f._stream(sample[None, cols], sub, times)
        return fast[0][None, :], fast[1]

    y, new = _by_part(filt, sample[None, :], state, times, one_row)
    return y[0], new


def _by_part(filt, x2, zi, times, run):
    """The composite stream of (T, C) ``x2`` from state ``zi``: ``run(part, its channels,
    its state)`` gives each part's ``(y, zf)``; each channel's output and held output are its
    part's, the samples every channel's newest."""
    timed = filt.tau is not None
    pieces = parts(filt)  # once a call: a step asks for them every sample
    state = check_state(zi, initial_state(filt, x2.shape[1], history(filt, pieces)))
    hist, hist_times = state if timed else (state, None)
    H, T = hist.shape[0] - 1, x2.shape[0]
    y, last = np.empty(x2.shape), hist[H].copy()
    for f, inputs, outputs in pieces:
        h = f._step_spec().history
        sub = hist[H - h :, inputs]  # its newest h samples and (row h) the outputs held
        yf, zf = run(f, inputs, (sub, hist_times[H - h :]) if timed else sub)
        at = [inputs.index(c) for c in outputs]
        y[:, outputs] = yf[:, at]
        last[outputs] = (zf[0] if timed else zf)[-1, at]
    # every channel's newest H samples, as given (each filter reads them in its own units)
    samples = np.concatenate([hist[:H], x2])[T:]
    new = np.vstack([samples, last[None, :]])
    if timed:
        return y, (new, np.concatenate([hist_times, np.asarray(times, dtype=np.float64)])[T:])
    return y, new
