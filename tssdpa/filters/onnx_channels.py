"""The ONNX step of a causal filter fitted channel by channel (:mod:`.channel_streams`).

:class:`ChannelStreamingSteps` runs the step of each part -- the joint filter over every
channel, each channel's own filter over its channel -- on the newest rows of the one state
it reads, and puts each channel's output and held output where the Python stream does. Its
inputs and outputs are those of :class:`~.onnx_export.StreamingStep` (or, with ``tau``,
:class:`~.onnx_export.TimedStreamingStep`), so a model of a filter fitted channel by channel
is used exactly as one of a joint filter.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from tssdpa.filters import channel_streams as streams

__all__ = ["ChannelStreamingSteps", "TimedChannelStreamingSteps", "channel_steps"]


class ChannelStreamingSteps(nn.Module):
    """``forward(x (T, C), state (H + 1, C)) -> (y, next_state)``: the step of a composite
    ``filt`` (without ``tau``: :class:`TimedChannelStreamingSteps`), equal to its
    ``filter(x, zi)``.

    ``steps`` builds the step of one part from its ``FilterSpec`` and channel scale
    (:class:`~.onnx_export.StreamingStep` or :class:`~.onnx_export.TimedStreamingStep`)."""

    def __init__(self, filt, steps):
        super().__init__()
        self.timed = filt.tau is not None
        self.H = streams.history(filt)
        self.steps = nn.ModuleList()
        self.inputs: list[list[int]] = []
        where = {}  # channel -> (part, its column in that part's output)
        for k, (f, inputs, outputs) in enumerate(streams.parts(filt)):
            self.steps.append(steps(f._spec(), f._unit_scale()))
            self.inputs.append(inputs)
            where.update({c: (k, inputs.index(c)) for c in outputs})
        self.source = [where[c] for c in range(len(where))]

    def forward(self, x: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        return self._step(x, None, state, None)[:2]

    def _step(self, x, t, state, state_times):
        H, T = self.H, x.shape[0]
        ys, held = [], []
        for step, inputs in zip(self.steps, self.inputs):
            h = step.H
            sub = state[H - h :]
            if len(inputs) < x.shape[1]:  # a channel's own filter: its column
                sub, xs = sub[:, inputs[0] : inputs[0] + 1], x[:, inputs[0] : inputs[0] + 1]
            else:
                xs = x
            if self.timed:
                y, nxt, _ = step(xs, t, sub, state_times[H - h :])
            else:
                y, nxt = step(xs, sub)
            ys.append(y)
            held.append(nxt[h : h + 1])
        y = torch.cat([ys[k][:, j : j + 1] for k, j in self.source], dim=1)
        last = torch.cat([held[k][:, j : j + 1] for k, j in self.source], dim=1)
        samples: Tensor = torch.cat([state[:H], x.to(state.dtype)], dim=0)[T:] if H else state[:0]
        next_state = torch.cat([samples, last.to(state.dtype)], dim=0)
        if not self.timed:
            return y, next_state, None
        return y, next_state, torch.cat([state_times, t.to(torch.float64)], dim=0)[T:]


class TimedChannelStreamingSteps(ChannelStreamingSteps):
    """The same with ``tau``: ``forward(x, t, state, state_times) -> (y, next_state,
    next_state_times)``."""

    def forward(self, x: Tensor, t: Tensor, state: Tensor, state_times: Tensor):
        return self._step(x, t, state, state_times.to(torch.float64))


def channel_steps(filt, steps) -> ChannelStreamingSteps:
    """The step module of a composite ``filt`` (timed where ``tau`` is set); ``steps``
    builds a part's step from its spec and channel scale."""
    timed = filt.tau is not None
    return (TimedChannelStreamingSteps if timed else ChannelStreamingSteps)(filt, steps)
