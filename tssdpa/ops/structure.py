"""Time structure of a projection-attention request, and the checks of its arguments.

The *time structure* is what multiplies the Gaussian kernel besides the data: a causal mask, a
finite window (FIR), an exponential decay ``γ^|i-j|`` or ``exp(-|t_i - t_j| / τ)`` (IIR), and
a user ``attn_mask``. :func:`time_structure` turns a request into a boolean ``allowed`` mask
and an additive log-weight ``bias``; :func:`combine_mask` folds both into one ``attn_mask``
for torch's kernels. The checks here are the single place where the operator's parameters
(``sigma``, ``decay``, ``tau``, masks, timestamps) are validated.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence

import torch
from torch import Tensor

from tssdpa.checks import check_int, check_positive

__all__ = [
    "check_attn_mask",
    "check_param",
    "check_param_shape",
    "check_qkv",
    "check_sigma_shape",
    "check_timestamps",
    "combine_mask",
    "param_tensor",
    "time_differences",
    "time_structure",
]


# --------------------------------------------------------------------------- checks


def _broadcasts(*shapes) -> bool:
    try:
        torch.broadcast_shapes(*shapes)
    except RuntimeError:
        return False
    return True


def check_param(
    name: str, x, *, upper: float | None = None, check_values: bool = True
) -> Tensor | float:
    """Check that a scalar or tensor parameter is finite, > 0 (and <= ``upper``).

    Floats come back as Python floats, tensors unchanged. ``check_values=False`` skips
    scanning a tensor's values (a device→host read); shapes and dtypes are still checked.
    """
    if isinstance(x, bool) or not isinstance(x, (numbers.Real, Tensor)):
        raise TypeError(f"{name} must be a positive float or a tensor, got {type(x).__name__}")
    rng = f"(0, {upper}]" if upper is not None else "(0, inf)"
    if isinstance(x, Tensor):
        if not x.is_floating_point():
            raise TypeError(f"{name} tensor must be floating point, got {x.dtype}")
        if not check_values:
            return x
        bad = torch.isnan(x).any() | (x <= 0).any() | torch.isinf(x).any()
        if upper is not None:
            bad = bad | (x > upper).any()
        if bool(bad):
            raise ValueError(f"{name} must lie in {rng} everywhere, got {x.detach().cpu()}")
        return x
    xf = check_positive(x, name)
    if upper is not None and xf > upper:
        raise ValueError(f"{name} must lie in {rng}, got {x!r}")
    return xf


def check_param_shape(name: str, x, batch: torch.Size) -> None:
    """A tensor parameter must broadcast over the leading (batch / head) dims of the query."""
    if isinstance(x, Tensor) and x.dim() > 0:
        if not _broadcasts(x.shape, batch) or torch.broadcast_shapes(x.shape, batch) != batch:
            raise ValueError(
                f"{name} of shape {tuple(x.shape)} does not broadcast over the leading dims "
                f"{tuple(batch)} of query (one value per batch element / head)"
            )


def check_sigma_shape(sigma, batch: torch.Size, query_dim: int, L: int) -> bool:
    """Where a tensor σ applies: per batch element / head (False) or per query row (True).

    A tensor with as many dims as ``query`` (and more than the leading dims ``batch``) is one
    σ per query row: its last dim is 1 and it broadcasts to ``(*batch, L, 1)``. Any other
    tensor is one σ per batch element / head and broadcasts over ``batch``
    (:func:`check_param_shape`), so a tensor that could be read either way keeps that meaning.
    """
    if not isinstance(sigma, Tensor) or sigma.dim() < max(query_dim, len(batch) + 1):
        if isinstance(sigma, Tensor) and sigma.dim() > 0 and not _fits(sigma.shape, batch):
            raise ValueError(
                f"sigma of shape {tuple(sigma.shape)} does not broadcast over the leading dims "
                f"{tuple(batch)} of query (one σ per batch element / head); one σ per query "
                f"row needs as many dims as query (and more than the leading dims), last dim 1, "
                f"broadcasting to (..., L, 1) = {(*batch, L, 1)}"
            )
        return False
    rows = torch.Size((*batch, L, 1))
    if sigma.shape[-1] != 1 or not _fits(sigma.shape, rows):
        raise ValueError(
            f"sigma of shape {tuple(sigma.shape)} has at least as many dims as query, so it "
            f"gives one σ per query row, but it does not broadcast to (..., L, 1) = {tuple(rows)}"
        )
    return True


def _fits(shape, target: torch.Size) -> bool:
    """``shape`` broadcasts to ``target`` without enlarging it."""
    return _broadcasts(shape, target) and torch.broadcast_shapes(shape, target) == target


def param_tensor(x, device, dtype: torch.dtype) -> Tensor:
    """A parameter as a tensor shaped (..., 1, 1), ready to broadcast over (..., L, S)."""
    if not isinstance(x, Tensor):
        return torch.tensor(float(x), device=device, dtype=dtype).reshape(1, 1)
    x = x.to(device=device, dtype=dtype)
    return x.reshape(*x.shape, 1, 1)


def check_qkv(query, key, value) -> torch.Size:
    """Types, dtypes and shapes of query (..., L, E), key (..., S, E), value (..., S, Ev).

    ``value`` may be None. Returns the broadcast batch shape of the leading dims.
    """
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t is None and name == "value":
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if not t.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got {t.dtype}")
        if t.dim() < 2:
            raise ValueError(f"{name} must have shape (..., seq, dim), got {tuple(t.shape)}")
    if key.dtype != query.dtype or (value is not None and value.dtype != query.dtype):
        raise TypeError(
            "query, key and value must share one dtype, got "
            f"{query.dtype}, {key.dtype}, {None if value is None else value.dtype}"
        )
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"query and key must have the same last dim E, got {query.shape[-1]} and "
            f"{key.shape[-1]}"
        )
    if value is not None and value.shape[-2] != key.shape[-2]:
        raise ValueError(
            f"value must have as many rows as key (S={key.shape[-2]}), got {value.shape[-2]}"
        )
    shapes = [query.shape[:-2], key.shape[:-2]] + ([value.shape[:-2]] if value is not None else [])
    try:
        return torch.broadcast_shapes(*shapes)
    except RuntimeError:
        raise ValueError(
            f"leading dims of query {tuple(query.shape)}, key {tuple(key.shape)} and value "
            f"{None if value is None else tuple(value.shape)} do not broadcast"
        ) from None


def check_timestamps(
    timestamps, batch, L: int, S: int, check_values: bool = True
) -> tuple[Tensor, Tensor]:
    """One shared (..., L) tensor (needs L == S) or a pair ((..., L), (..., S)) → a pair."""
    if isinstance(timestamps, Tensor):
        if L != S:
            raise ValueError(
                f"timestamps: one shared tensor needs L == S (got L={L}, S={S}); pass a pair "
                "(query_times, key_times)"
            )
        pair = (timestamps, timestamps)
    elif isinstance(timestamps, Sequence) and len(timestamps) == 2:
        pair = tuple(timestamps)
    else:
        raise TypeError(
            "timestamps must be a tensor (..., L) or a pair of tensors (..., L), (..., S)"
        )
    for t, n, side in ((pair[0], L, "query"), (pair[1], S, "key")):
        if not isinstance(t, Tensor):
            raise TypeError(f"timestamps ({side}) must be a torch.Tensor, got {type(t).__name__}")
        if t.is_complex() or t.dtype == torch.bool:
            raise TypeError(f"timestamps ({side}) must be real numbers, got {t.dtype}")
        if t.dim() < 1 or t.shape[-1] != n:
            raise ValueError(
                f"timestamps ({side}) must have shape (..., {n}), got {tuple(t.shape)}"
            )
        if not _broadcasts(t.shape[:-1], batch):
            raise ValueError(
                f"timestamps ({side}) leading dims {tuple(t.shape[:-1])} do not broadcast with "
                f"{tuple(batch)}"
            )
        if check_values and t.is_floating_point() and not bool(torch.isfinite(t).all()):
            # inf gave a NaN row on the math backend and a zero one on the fused
            raise ValueError(f"timestamps ({side}) contain NaN or inf")
    return pair


def check_attn_mask(
    attn_mask, batch, L: int, S: int, check_values: bool = True, dtype=None
) -> None:
    """A bool or float mask broadcastable to (..., L, S); float masks must not hold NaN or
    ``+inf`` (an additive log weight of +inf is no weight at all: ``-inf`` excludes a key),
    also once cast to ``dtype``, the one the operator computes in (1e300 in a float64 mask is
    +inf in float32)."""
    if not isinstance(attn_mask, Tensor):
        raise TypeError(f"attn_mask must be a tensor, got {type(attn_mask).__name__}")
    if attn_mask.dtype != torch.bool and not attn_mask.is_floating_point():
        raise TypeError(f"attn_mask must be bool or floating point, got {attn_mask.dtype}")
    if attn_mask.dim() < 2 or not _broadcasts(attn_mask.shape, (*batch, L, S)):
        raise ValueError(
            f"attn_mask of shape {tuple(attn_mask.shape)} does not broadcast to "
            f"(..., L, S) = {(*batch, L, S)}"
        )
    if check_values and attn_mask.is_floating_point():
        if bool(torch.isnan(attn_mask).any()):
            raise ValueError("attn_mask contains NaN")
        if bool(torch.isposinf(attn_mask if dtype is None else attn_mask.to(dtype)).any()):
            raise ValueError(
                f"attn_mask contains +inf (in {dtype or attn_mask.dtype}): a float mask is an "
                "additive log weight; use -inf (or a bool mask) to exclude keys"
            )


def check_structure(window, decay, tau, timestamps, batch, L, S, check_values=True, dtype=None):
    """Validate the time-structure arguments; returns ``(window, decay, tau, timestamps)``.

    ``decay`` is γ in (0, 1] (per step), ``tau`` the time constant τ > 0 (needs timestamps);
    they are exclusive. ``dtype``: the one the operator computes in, which must hold them.
    """
    if window is not None:
        # past every lag a window limits nothing: clamped, as int64 lags compared with 2**63
        # wrapped (every key excluded) and 10**30 overflowed
        window = min(check_int(window, "window"), max(L, S, 1))
    if decay is not None and tau is not None:
        raise ValueError("give decay (per step, gamma) or tau (time constant), not both")
    if timestamps is not None:
        if tau is None:
            raise ValueError("timestamps need tau (the time constant, > 0)")
        timestamps = check_timestamps(timestamps, batch, L, S, check_values=check_values)
    elif tau is not None:
        raise ValueError("tau needs timestamps (the sample times of queries and keys)")
    if decay is not None:
        decay = check_param("decay", decay, upper=1.0, check_values=check_values)
        check_param_shape("decay", decay, batch)
    if tau is not None:
        tau = check_param("tau", tau, check_values=check_values)
        check_param_shape("tau", tau, batch)
    for name, x in (("decay", decay), ("tau", tau)):
        if x is not None and dtype is not None and (check_values or not isinstance(x, Tensor)):
            _check_nonzero_in(name, x, dtype)
    return window, decay, tau, timestamps


def _check_nonzero_in(name: str, x, dtype: torch.dtype) -> None:
    """Raise where a positive decay / τ rounds to 0 in ``dtype``: the structure then takes
    ``log 0 = -inf`` times a lag 0 (γ) or ``0 / 0`` where two times are equal (τ), and the
    rows were NaN."""
    t = x.detach() if isinstance(x, Tensor) else torch.tensor(x, dtype=torch.float64)
    if bool((t.to(dtype) == 0).any()):
        shown = f"={x:g}" if not isinstance(x, Tensor) else " (a tensor)"
        raise ValueError(
            f"{name}{shown} rounds to 0 in {dtype}, the dtype the operator computes in: "
            "compute in float64"
        )


# --------------------------------------------------------------------------- structure


def time_structure(
    L: int,
    S: int,
    *,
    is_causal: bool = False,
    window: int | None = None,
    decay=None,
    tau=None,
    timestamps=None,
    attn_mask: Tensor | None = None,
    device=None,
    dtype: torch.dtype = torch.float32,
    offsets: tuple[int, int] = (0, 0),
) -> tuple[Tensor | None, Tensor | None]:
    """The allowed-pairs mask and additive log-weight of a request.

    Returns ``(allowed, bias)``: ``allowed`` is a bool tensor broadcastable to (..., L, S)
    (True = key j may contribute to row i) or None when every pair is allowed; ``bias`` is a
    float tensor of log weights (``|i-j|·log γ``, ``-|t_i-t_j|/τ``, plus a float ``attn_mask``)
    or None. ``offsets`` = (first row, first key) index a block of a larger request.
    Arguments are assumed validated (:func:`check_structure`).
    """
    if timestamps is not None and decay is not None and tau is None:
        # decay was the time constant when timestamps were given, before 0.2
        warnings.warn(
            "time_structure: decay with timestamps is read as the time constant tau; pass tau=",
            DeprecationWarning,
            stacklevel=2,
        )
        decay, tau = None, decay
    allowed: Tensor | None = None
    bias: Tensor | None = None
    if window is not None:  # |lag| < that bound: clamped as in check_structure
        window = min(window, max(L, S) + abs(offsets[0] - offsets[1]))
    if is_causal or window is not None or decay is not None:
        i = torch.arange(offsets[0], offsets[0] + L, device=device)
        j = torch.arange(offsets[1], offsets[1] + S, device=device)
        lag = i[:, None] - j[None, :]
    if is_causal:
        allowed = lag >= 0
    if window is not None:
        inside = (lag < window) if is_causal else (lag.abs() < window)
        allowed = inside if allowed is None else allowed & inside
    if decay is not None:
        d = param_tensor(decay, device, dtype)  # (..., 1, 1)
        bias = lag.abs().to(dtype) * torch.log(d)  # log γ^|i-j|
    elif tau is not None:
        # Differences in float64 first: absolute times (e.g. epoch seconds) lose all
        # resolution in float32 before subtraction.
        dt = time_differences(*timestamps, device)
        bias = _MinusOverTau.apply(dt.abs().to(dtype), param_tensor(tau, device, dtype))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            allowed = attn_mask if allowed is None else allowed & attn_mask
        else:
            # -inf in the compute dtype excludes a key: -1e300 in a float64 mask too, which
            # is -inf in float32 (left allowed, a row of them gave NaN on the math backend)
            m = attn_mask.to(dtype)
            finite = ~torch.isneginf(m)
            m = m.masked_fill(~finite, 0.0)
            bias = m if bias is None else bias + m
            allowed = finite if allowed is None else allowed & finite
    return allowed, bias


class _MinusOverTau(torch.autograd.Function):
    """``-dist / τ`` with the τ gradient ``(Σ g·dist) / τ / τ``: the sum first (finite), then
    divided by τ twice. Autograd's own ``g·(dist/τ)/τ`` per element overflowed float32 below
    τ ~ 1e-19 (inf for a finite gradient) and met a vanished weight's ``g = 0`` as
    ``0 · inf = NaN``. Differentiable twice, in forward mode too, vmap-able."""

    generate_vmap_rule = True

    @staticmethod
    def forward(dist: Tensor, tau: Tensor) -> Tensor:
        return -(dist / tau)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.save_for_backward(*inputs)
        ctx.save_for_forward(*inputs)

    @staticmethod
    def jvp(ctx, d_dist: Tensor | None, d_tau: Tensor | None) -> Tensor:
        dist, tau = ctx.saved_tensors
        out = 0.0 if d_dist is None else -d_dist / tau
        return out if d_tau is None else out + (dist / tau) * (d_tau / tau)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        dist, tau = ctx.saved_tensors
        g_dist = -grad / tau if ctx.needs_input_grad[0] else None  # times that want one
        g_tau = None
        if ctx.needs_input_grad[1]:
            g_tau = (grad * dist).sum_to_size(tau.shape) / tau / tau
        return g_dist, g_tau


def time_differences(tq: Tensor, tk: Tensor, device=None) -> Tensor:
    """``t_i - t_j`` (..., L, S) in float64 from query times (..., L) and key times (..., S).
    Integer times are subtracted as int64 first: float64 holds int64 epoch nanoseconds
    (1.7e18) to 256 ns only, which moved the weights of 100 ns samples by 0.09."""
    if not (tq.is_floating_point() or tk.is_floating_point()):
        tq, tk = tq.to(device, torch.int64), tk.to(device, torch.int64)  # uint8 would wrap
        return (tq[..., :, None] - tk[..., None, :]).to(torch.float64)
    return tq.to(device, torch.float64)[..., :, None] - tk.to(device, torch.float64)[..., None, :]


def combine_mask(allowed: Tensor | None, bias: Tensor | None) -> Tensor | None:
    """One ``attn_mask`` for torch's SDPA: bool when there is no bias, else float with -inf."""
    if bias is None:
        return allowed
    return bias if allowed is None else bias.masked_fill(~allowed, float("-inf"))
