"""A fitted causal :class:`~tssdpa.filters.ProjectionFilter` as an ONNX model of one
streaming step over a chunk, for control loops that cannot import Python.

Public entry points: :meth:`ProjectionFilter.to_onnx` and :mod:`tssdpa.export` (which also
checks the filter's type); this module is the implementation, kept in the filters unit so
that the method can reach it.

The graph is torch's ONNX export of :class:`StreamingStep`, the torch twin of the numpy lag
kernel (:func:`tssdpa.signal.lags.attend_lags` as :func:`tssdpa.signal.lagfilter.run_causal`
uses it): the same keys, the same NaN rules, the same hold of the last defined output. It
takes a chunk ``x`` (T, C) float32 of any length T and the state, and returns the filtered
chunk and the next state::

    inputs   x      (T, C)      float32   the chunk, NaN = a missing sample
             state  (H + 1, C)  float32   rows 0..H-1: the last H input samples (NaN = none);
                                          row H: the last defined output (NaN = none yet)
    outputs  y          (T, C)      float32
             next_state (H + 1, C)  float32

``H = window - 1 + embedding - 1`` (the IIR filter's window is its truncation lag), the
layout of :meth:`ProjectionFilter.initial_state`, so a state moves freely between Python and
the exported model. A filter with ``tau`` (a decay in time units) also takes the samples'
times ``t`` (T,) float64 after ``x`` and threads their history in ``state_times`` (H,)
float64 (:class:`TimedStreamingStep`, names :data:`TIMED_INPUT_NAMES`). The empty state
(:func:`onnx_initial_state`) is all NaN. Inside the graph
the kernel computes in float64: its outputs equal :meth:`ProjectionFilter.filter` with the
same state to float32 rounding (see ``docs/deploy.md``).

Needs the optional extra ``tssdpa[deploy]`` (onnx, onnxruntime, onnxscript).
"""

from __future__ import annotations

import logging
import math
import numbers
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from tssdpa.checks import LibraryWarning, as_path, warn
from tssdpa.filters import channel_streams as streams
from tssdpa.filters.onnx_channels import channel_steps
from tssdpa.filters.projection_stream import check_state_size, stream_channels
from tssdpa.signal.lags import GAP_MARGIN
from tssdpa.signal.local_polynomial import (
    FAINT_WEIGHT,
    PIVOT_FLOOR,
    SPAN_WEIGHT,
    power_of_two_at_most,
)

__all__ = [
    "INPUT_NAMES",
    "OPSET",
    "OUTPUT_NAMES",
    "StreamingStep",
    "TIMED_INPUT_NAMES",
    "TIMED_OUTPUT_NAMES",
    "TimedStreamingStep",
    "onnx_initial_state",
    "onnx_step_spec",
    "to_onnx",
]

INPUT_NAMES = ("x", "state")
OUTPUT_NAMES = ("y", "next_state")
#: the names of a filter with ``tau`` (a decay in time units), which needs the sample times
TIMED_INPUT_NAMES = ("x", "t", "state", "state_times")
TIMED_OUTPUT_NAMES = ("y", "next_state", "next_state_times")
#: ONNX opset of the exported graph (onnxruntime 1.16 and later run it)
OPSET = 18
#: the ridge :func:`~tssdpa.signal.lags.attend_lags` adds to the slope terms of a local
#: polynomial (relative to the total weight); rows with too few keys fit a lower degree
_POLY_RIDGE = 1e-12


def onnx_step_spec(filt, n_channels: int | None = None):
    """The resolved settings of ``filt`` that the exported step runs, and its channel count.

    Raises ``ValueError`` naming why when ``filt`` has no exportable streaming step.

    Parameters
    ----------
    filt : ProjectionFilter
    n_channels : int, optional
        Channels of the stream; default the channels ``filt`` was fitted on.

    Returns
    -------
    spec : tssdpa.signal.lagfilter.FilterSpec
    n_channels : int

    Examples
    --------
    >>> from tssdpa.filters import ProjectionFilter
    >>> spec, C = onnx_step_spec(ProjectionFilter(window=8, sigma=0.5), n_channels=2)
    >>> (spec.window, spec.history, C)
    (8, 7, 2)
    """
    if not callable(getattr(filt, "_spec", None)):  # the public entry points name the type
        raise TypeError(f"filter must be a ProjectionFilter, got {type(filt).__name__}")
    if streams.composite(filt):
        raise ValueError("filter: fitted channel by channel, a spec per channel_models_")
    return _checked_spec(filt, n_channels)


def _checked_spec(filt, n_channels):
    """:func:`onnx_step_spec` of the filter's own kernel."""
    if not filt.causal:
        raise ValueError(
            "filter: a zero-phase (causal=False) filter looks ahead and has no streaming step; "
            "only causal filters can be exported (fit ProjectionFilter(causal=True))"
        )
    if getattr(filt, "base_", None) is not None:
        raise ValueError("filter: a Butterworth base is zero-phase (offline); it has no step")
    if filt.recurrent is not None:
        raise ValueError(
            "filter: recurrent='features' (the random-feature recursion) is not exportable; "
            "export the exact filter (recurrent=None)"
        )
    # the private _spec is the one place that resolves fitted settings, window=None (the IIR
    # truncation lag) and the checks of every setting: the exported step must run exactly it
    spec = filt._spec()
    C = stream_channels(filt, n_channels)  # checked: an int >= 1, the fitted count if fitted
    if C is None:
        raise ValueError("n_channels: the filter is not fitted; give the stream's channel count")
    check_state_size(spec.history, C, f"window {spec.window}")  # the Python step's limit
    if spec.tau is not None and spec.history == 0:
        raise ValueError("filter: window 1 with embedding 1 keeps no past sample; drop tau")
    return spec, C


class StreamingStep(nn.Module):
    """One streaming step of a causal projection filter over a chunk, in torch.

    ``forward(x (T, C), state (H + 1, C)) -> (y (T, C), next_state (H + 1, C))`` in the
    dtype of ``x``, computed in float64; equal to ``run_causal`` of the same spec. Built by
    :func:`to_onnx`; usable on its own (e.g. ``torch.compile``).

    Parameters
    ----------
    spec : tssdpa.signal.lagfilter.FilterSpec
        A causal spec without ``tau`` (:func:`onnx_step_spec`; with ``tau``:
        :class:`TimedStreamingStep`).
    channel_scale : array_like (C,), optional
        The filter's ``channel_scale_``: the kernel compares channel c's differences divided
        by ``channel_scale[c]`` (the samples, outputs and state keep the units of x).

    Examples
    --------
    >>> import numpy as np, torch
    >>> from tssdpa.filters import ProjectionFilter
    >>> f = ProjectionFilter(window=8, embedding=2, sigma=0.5)
    >>> step = StreamingStep(f._spec())
    >>> x = np.random.default_rng(0).normal(size=(20, 1))
    >>> state = torch.tensor(f.initial_state(), dtype=torch.float32)
    >>> y, state = step(torch.tensor(x, dtype=torch.float32), state)
    >>> bool(np.allclose(y.numpy(), f.filter(x, zi=f.initial_state())[0], atol=1e-5))
    True
    """

    def __init__(self, spec, channel_scale=None):
        super().__init__()
        if not spec.causal:
            raise ValueError("spec: only a causal spec has a streaming step")
        if spec.tau is not None and type(self) is StreamingStep:
            raise ValueError("spec: with tau the step needs the sample times: TimedStreamingStep")
        self.inv_tau = 1.0 / float(spec.tau) if spec.tau is not None else 0.0
        self.W = int(spec.window)
        self.m = int(spec.embedding)
        self.H = int(spec.history)
        self.degree = int(spec.degree)
        self.exclude_self = bool(spec.exclude_self)
        sigma = float(spec.sigma)
        self.inv2s2 = 0.5 / sigma**2 if math.isfinite(sigma) else 0.0
        lags = np.arange(self.W - 1, -1, -1, dtype=np.float64)  # key k <-> lag W-1-k
        decay = spec.decay
        logit = lags * math.log(decay) if decay is not None and decay != 1.0 else 0.0 * lags
        self.register_buffer("decay_logit", torch.tensor(logit, dtype=torch.float64))
        # powers of the scaled time offset u = -lag / 2^floor(log2 max lag) (attend_lags')
        u = -lags / power_of_two_at_most(self.W - 1)
        powers = u[:, None] ** np.arange(2 * self.degree + 1)
        self.register_buffer("powers", torch.tensor(powers, dtype=torch.float64))
        # per embedding coordinate (lag-major, as emb below): 1 / the channel's scale
        inv = 1.0 if channel_scale is None else np.tile(1.0 / np.asarray(channel_scale), self.m)
        self.register_buffer("inv_scale", torch.tensor(inv, dtype=torch.float64))

    def forward(self, x: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        return self._step(x, state, None, None)[:2]

    def _step(self, x, state, t, state_times):
        """The step; with ``t`` (T,) and ``state_times`` (H,) float64, the time decay
        ``exp(-|t_q - t_j| / tau)`` and the next state's times too."""
        W, m, H = self.W, self.m, self.H
        T, C = x.shape[0], x.shape[1]
        xd = x.to(torch.float64)
        hold = state[H:].to(torch.float64)  # (1, C)
        full = torch.cat([state[:H].to(torch.float64), xd], dim=0) if H else xd  # (H + T, C)
        # embeddings of rows m-1 .. H+T-1 (newest sample first): every key and query row;
        # row i of `emb` is the pattern ending at full row i + m - 1
        n = W - 1 + T
        emb = torch.cat([full[m - 1 - d : m - 1 - d + n] for d in range(m)], dim=1)  # (n, mC)
        vals = full[m - 1 :]  # (n, C): the value a key contributes
        idx = torch.arange(T).unsqueeze(1) + torch.arange(W).unsqueeze(0)  # (T, W)
        keys = emb[idx]  # (T, W, mC)
        kv = vals[idx]  # (T, W, C)
        query = emb[W - 1 :].unsqueeze(1)  # (T, 1, mC)
        # the nan_euclidean distance over the coordinates finite in both, rescaled by
        # D / (count in common); 0 when nothing is in common (only the decay ranks the keys)
        diff = (query - keys) * self.inv_scale
        finite = ~torch.isnan(diff)
        sq = torch.where(finite, diff * diff, torch.zeros_like(diff)).sum(-1)  # (T, W)
        D = m * C
        if D > 1:
            cnt = finite.sum(-1).to(torch.float64)
            scale = D / torch.clamp(cnt, min=1.0)
            sq = torch.where(cnt > 0, sq * scale, torch.zeros_like(sq))
        valid = torch.ones_like(sq, dtype=torch.bool)  # (T, W)
        if self.exclude_self:
            not_self = torch.arange(W) != W - 1
            valid = valid & not_self.unsqueeze(0)
        logits = sq * (-self.inv2s2) + self.decay_logit
        next_times = None
        if t is not None:  # key k of query row t is row t+k+m-1 of the full table
            times = torch.cat([state_times, t.to(torch.float64)], dim=0)  # (H + T,)
            elapsed = torch.abs(times[H:].unsqueeze(1) - times[m - 1 :][idx])  # (T, W)
            logits = logits - elapsed * self.inv_tau
            valid = valid & ~torch.isnan(elapsed)  # a key without a time is not used
            next_times = times[T:]
        # a key serves the channels it has: one softmax per channel over the keys that have it
        valid = valid.unsqueeze(-1) & ~torch.isnan(kv)  # (T, W, C)
        logits = torch.where(valid, logits.unsqueeze(-1), torch.full_like(kv, -math.inf))
        mx = logits.amax(1, keepdim=True)  # (T, 1, C)
        empty = ~torch.isfinite(mx)  # no usable key in reach
        w = torch.exp(logits - torch.where(empty, torch.zeros_like(mx), mx))  # (T, W, C)
        v = torch.where(valid, kv, torch.zeros_like(kv))
        if self.degree == 0:
            y = (w * v).sum(1) / w.sum(1)
        else:
            y = self._local_polynomial(w, v)
            # no reading of its own: near the values it weighed (attend_lags' rule, GAP_MARGIN;
            # Min / Max, as ONNX's Clip takes scalar bounds only)
            used = w >= SPAN_WEIGHT
            lo = torch.where(used, v, torch.full_like(v, math.inf)).amin(1)
            hi = torch.where(used, v, torch.full_like(v, -math.inf)).amax(1)
            pad = GAP_MARGIN * (hi - lo)
            unread = torch.isnan(xd) & used.any(1)
            y = torch.where(unread, torch.maximum(torch.minimum(y, hi + pad), lo - pad), y)
        fallback = xd if self.exclude_self else torch.full_like(xd, math.nan)
        y = torch.where(empty.squeeze(1), fallback, y)
        y, hold = _hold_last_defined(y, hold)
        new_hist = torch.cat([state[:H], x.to(state.dtype)], dim=0)[T:] if H else state[:0]
        next_state = torch.cat([new_hist, hold.to(state.dtype)], dim=0)
        return y.to(x.dtype), next_state, next_times

    def _local_polynomial(self, w: Tensor, v: Tensor) -> Tensor:
        """Weighted least-squares polynomial of degree p in the time offset at offset 0 (the
        constant coefficient), per row and channel (``w`` and ``v`` (T, W, C): a channel's
        weights are over the keys that have it): attend_lags' normal equations, solved by Gaussian
        elimination unrolled over the fixed (p + 1) x (p + 1) system (symmetric positive
        definite, so no pivoting), since ONNX has no linear solver."""
        P = self.degree + 1
        moments = torch.einsum("twc,wk->tkc", w, self.powers[:, : 2 * P - 1])  # (T, 2P-1, C)
        rhs = torch.einsum("twc,twc,wp->tpc", w, v, self.powers[:, :P])  # (T, P, C)
        # offsets in units of each row's farthest weighed key (attend_lags' _local_polynomial)
        reach = torch.abs(self.powers[:, 1]).view(1, -1, 1)  # (1, W, 1)
        span = torch.where(w >= SPAN_WEIGHT, reach, torch.zeros_like(w)).amax(1)  # (T, C)
        inv = torch.exp2(
            -torch.floor(torch.log2(torch.where(span > 0, span, torch.ones_like(span))))
        )
        unit = inv.unsqueeze(1) ** torch.arange(2 * P - 1, dtype=torch.float64).view(1, -1, 1)
        moments = moments * unit  # (T, 2P-1, C)
        rhs = rhs * unit[:, :P]
        m0 = moments[:, 0]
        G = [[moments[:, i + j] for j in range(P)] for i in range(P)]  # (T, C)
        for i in range(1, P):
            G[i][i] = G[i][i] + _POLY_RIDGE * m0
        b = [rhs[:, i] for i in range(P)]  # (T, C)
        diagonal = [G[i][i] for i in range(P)]
        for k in range(P):  # forward elimination
            for i in range(k + 1, P):
                f = G[i][k] / G[k][k]
                for j in range(k, P):
                    G[i][j] = G[i][j] - f * G[k][j]
                b[i] = b[i] - f * b[k]
        # a (row, channel) with fewer keys of weight than P, or weighing a faint key and a
        # power whose pivot is below PIVOT_FLOOR of its diagonal, fits the highest degree its
        # keys determine (attend_lags' rule): the back substitution of that leading block
        weighed = (w >= SPAN_WEIGHT).sum(1).to(m0.dtype)  # (T, C)
        faint = torch.logical_and(w > 0, w < FAINT_WEIGHT).any(1)  # (T, C)
        determined, still = torch.ones_like(m0), torch.ones_like(m0, dtype=torch.bool)
        for i in range(1, P):
            pivoted = torch.logical_or(G[i][i] >= PIVOT_FLOOR * diagonal[i], ~faint)
            still = torch.logical_and(still, pivoted)
            determined = determined + still.to(m0.dtype)
        weighed = torch.minimum(weighed, determined)
        y = torch.full_like(m0, math.nan)
        for size in range(P, 0, -1):
            a = [None] * size
            for i in range(size - 1, -1, -1):  # back substitution
                acc = b[i]
                for j in range(i + 1, size):
                    acc = acc - G[i][j] * a[j]
                a[i] = acc / G[i][i]
            y = torch.where((weighed >= size) if size == P else (weighed == size), a[0], y)
        return torch.where(m0 > 0, y, torch.full_like(y, math.nan))


class TimedStreamingStep(StreamingStep):
    """The step of a filter with ``tau``: ``forward(x (T, C), t (T,) float64, state (H + 1,
    C), state_times (H,) float64) -> (y, next_state, next_state_times)``, the layout of
    ``ProjectionFilter.initial_state()`` with timestamps, ``(samples, times)``.

    As in Python the weights take ``exp(-|t_q - t_j| / tau)``; the checks Python makes on the
    times (finite, non-decreasing, continuing the state's, steps of at least ``min_step``)
    are the caller's to keep, since a graph cannot raise.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from tssdpa.filters import ProjectionFilter
    >>> f = ProjectionFilter(window=8, sigma=0.5, tau=0.05)
    >>> x, t = np.random.default_rng(0).normal(size=(20, 1)), np.arange(20) * 0.01
    >>> hist, times = f.initial_state()
    >>> y, _, _ = TimedStreamingStep(f._spec())(torch.tensor(x), torch.tensor(t),
    ...                                         torch.tensor(hist), torch.tensor(times))
    >>> bool(np.allclose(y.numpy(), f.filter(x, timestamps=t), atol=1e-12))
    True
    """

    def __init__(self, spec, channel_scale=None):
        if spec.tau is None:
            raise ValueError("spec: TimedStreamingStep is for a filter with tau")
        super().__init__(spec, channel_scale)

    def forward(self, x: Tensor, t: Tensor, state: Tensor, state_times: Tensor):
        return self._step(x, state, t, state_times.to(torch.float64))


def _hold_last_defined(y: Tensor, hold: Tensor) -> tuple[Tensor, Tensor]:
    """fill_forward without a loop: in each channel, every NaN takes the last defined value
    before it (``hold`` (1, C) before the first); returns ``(y, new_hold)``. A channel's
    defined value at row t is scattered to slot ``rank(t)`` of that channel's column of a
    table whose slot 0 is ``hold``, and every row reads the slot of the number of defined
    values up to it (ONNX has no cumulative maximum)."""
    defined = ~torch.isnan(y)  # (T, C)
    rank = torch.cumsum(defined.to(torch.int64), 0)  # (T, C): defined values up to t
    contrib = torch.where(defined, y, torch.zeros_like(y))
    table = torch.cat([hold, torch.zeros_like(y)], dim=0)  # (T + 1, C)
    # a channel's defined values have distinct ranks; the others add zero to some slot
    table = table.scatter_add(0, rank, contrib)
    total = defined.to(torch.int64).sum(0, keepdim=True)  # (1, C)
    return table.gather(0, rank), table.gather(0, total)


def _layout(filt, n_channels) -> tuple[int, float | None, int]:
    """``(H, tau, C)`` of the exported step of ``filt``, every part's spec checked."""
    if not streams.composite(filt):
        spec, C = onnx_step_spec(filt, n_channels)
        return spec.history, spec.tau, C
    for f, inputs, _ in streams.parts(filt):
        _checked_spec(f, len(inputs))
    C = stream_channels(filt, n_channels)
    check_state_size(streams.history(filt), C, "the longest of its channels' filters")
    return streams.history(filt), filt.tau, C


def onnx_initial_state(filt, n_channels: int | None = None) -> dict:
    """The empty state of the exported step: ``{"state": (H + 1, C) float32 of NaN}``, and
    with ``tau`` ``"state_times"``: (H,) float64 of NaN.

    Keyed by the model's state input names, in their order (the outputs after ``y`` come back
    in the same order).

    Examples
    --------
    >>> from tssdpa.filters import ProjectionFilter
    >>> s = onnx_initial_state(ProjectionFilter(window=4, embedding=3, sigma=1.0), 2)
    >>> {k: (v.shape, str(v.dtype)) for k, v in s.items()}
    {'state': ((6, 2), 'float32')}
    """
    H, tau, C = _layout(filt, n_channels)
    state = {"state": np.full((H + 1, C), np.nan, dtype=np.float32)}
    if tau is not None:
        state["state_times"] = np.full(H, np.nan)  # float64, like the times
    return state


def to_onnx(filt, path, n_channels: int | None = None, opset: int | None = None) -> Path:
    """Export the streaming step of a fitted causal ``ProjectionFilter`` as an ONNX model.

    Inputs ``x`` (T, C) float32 (T dynamic) and ``state`` (H + 1, C) float32; outputs ``y``
    (T, C) float32 and ``next_state`` (H + 1, C) float32. Feeding a series chunk by chunk,
    threading the state from :func:`onnx_initial_state`, gives ``filt.filter(x,
    zi=filt.initial_state())`` (= ``filt.filter(x)`` from the first defined output on) to
    float32 rounding. FIR and IIR (run as its truncation, as in Python) filters, every
    embedding, degree, decay, sigma (``inf`` included) and ``exclude_self``. With ``tau`` the
    inputs are ``x``, ``t`` (T,) float64, ``state``, ``state_times`` (H,) float64 and the
    outputs ``y``, ``next_state``, ``next_state_times`` (:data:`TIMED_INPUT_NAMES`).

    Parameters
    ----------
    filt : ProjectionFilter
        Causal (``causal=True``), without ``recurrent``; fitted, or with every
        setting given (then ``n_channels`` too).
    path : str or Path
        Where to write the ``.onnx`` file.
    n_channels : int, optional
        Channels of the stream (default: those of ``fit``).
    opset : int, optional
        ONNX opset (default :data:`OPSET`, 18).

    Returns
    -------
    Path of the written model.

    Examples
    --------
    >>> import numpy as np, onnxruntime as ort, tempfile, os
    >>> from tssdpa.filters import ProjectionFilter
    >>> x = np.sin(np.linspace(0, 20, 400))[:, None] + 0.1
    >>> f = ProjectionFilter(window=16, sigma=0.3).fit(x)
    >>> path = to_onnx(f, os.path.join(tempfile.mkdtemp(), "filter.onnx"))
    >>> sess = ort.InferenceSession(str(path))
    >>> y, state = sess.run(None, {"x": x[:50].astype(np.float32), **onnx_initial_state(f)})
    >>> y.shape, state.shape
    ((50, 1), (16, 1))
    """
    try:
        import onnxscript  # noqa: F401 -- torch's exporter needs it
    except ImportError:
        extra = "pip install 'tssdpa[deploy]' (onnx, onnxruntime, onnxscript)"
        raise ImportError(f"to_onnx needs the optional extra: {extra}") from None
    H, tau, C = _layout(filt, n_channels)
    if coarse := streams.float32_note(filt):
        warn(f"to_onnx: the model takes float32 samples, and {coarse}", LibraryWarning,
             stacklevel=2)  # fmt: skip
    path = as_path(path, folder_must_exist=True)
    if path.is_dir():
        raise ValueError(f"path: {str(path)!r} is a folder; give a file name")
    if opset is not None:
        if isinstance(opset, bool) or not isinstance(opset, numbers.Integral):
            raise TypeError(f"opset must be an int, got {type(opset).__name__} {opset!r}")
        # torch's exporter writes OPSET and converts to another; outside this range that
        # failed and wrote OPSET anyway (which an older runtime refuses), with a traceback
        top = torch.onnx._constants.ONNX_MAX_OPSET
        if not OPSET <= opset <= top:
            raise ValueError(f"opset must be in {OPSET}..{top} (what the exporter writes), "
                             f"got {opset}")  # fmt: skip
    # trace with a chunk of several samples, so that no size is specialised to 1
    T0 = 5
    T = torch.export.Dim("T", min=1)
    # float32 whatever torch's default dtype (a float64 default exported a float64 model)
    state0 = torch.zeros(H + 1, C, dtype=torch.float32)
    step = StreamingStep if tau is None else TimedStreamingStep
    if streams.composite(filt):
        module = channel_steps(filt, step).eval()
    else:
        module = step(filt._spec(), filt._unit_scale()).eval()
    if tau is None:
        example, dynamic = (torch.zeros(T0, C, dtype=torch.float32), state0), ({0: T}, None)
        names = (INPUT_NAMES, OUTPUT_NAMES)
    else:
        times = torch.zeros(T0, dtype=torch.float64)
        state_times = torch.zeros(H, dtype=torch.float64)
        example = (torch.zeros(T0, C, dtype=torch.float32), times, state0, state_times)
        dynamic = ({0: T}, {0: T}, None, None)
        names = (TIMED_INPUT_NAMES, TIMED_OUTPUT_NAMES)
    # the exporter's notes (missing torchvision, progress) are not for the user
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(
                module,
                example,
                input_names=list(names[0]),
                output_names=list(names[1]),
                dynamic_shapes=dynamic,
                opset_version=OPSET if opset is None else opset,
                dynamo=True,
                external_data=False,
                verbose=False,
            )
    finally:
        quiet.setLevel(level)
    from tssdpa.files import replacing

    with replacing(path) as tmp:  # a failed write leaves an earlier model as it was
        program.save(str(tmp), external_data=False)
    return path
