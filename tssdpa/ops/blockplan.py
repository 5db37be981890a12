"""Per-block structure of the blockwise decay path (:mod:`tssdpa.ops.blockwise`).

For a block of query rows ``[a, b)`` and keys ``[j0, j1)``: which keys the causal mask and
window let it see (:func:`base_range`), its mask (:func:`block_mask`, built from the block's
own index or time ranges), the distances the decay multiplies (:func:`block_dist`), and the key
range that the skipping rule must keep (:func:`required_range`).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field

import torch
from torch import Tensor

from tssdpa.ops.structure import combine_mask, param_tensor, time_differences, time_structure

__all__ = [
    "SKIP_GRAIN",
    "Plan",
    "base_range",
    "block_dist",
    "block_mask",
    "clip",
    "required_range",
]

#: Skipped key ranges end on multiples of this many keys from the block's edges, so that the
#: blocks of a long request share a handful of masks.
SKIP_GRAIN = 64

#: Masks kept per call (the blocks of one request cycle through very few shapes).
_CACHE_SIZE = 4


@dataclass
class Plan:
    """What every block needs besides q, k, v: its key range and its structure."""

    block: int  # query rows per block
    structure: dict  # time_structure keywords; decay / tau detached; timestamps a pair
    kind: str | None  # "decay", "tau" or None: what the differentiable parameter is
    batch: torch.Size  # the leading dims of the request (the kernels see a 4-D view)
    toeplitz: bool  # the block structure depends only on the lag i - j
    tol: float = 0.0  # skipping tolerance (0: keep every key in reach)
    rate: float = 0.0  # slowest decay rate r < 0 over heads (ln γ or -1/τ), when skipping
    scale: float | None = None  # 1/σ² when it is one float
    dropout_p: float = 0.0  # dropout on the normalised weights
    seed: int = 0  # of the dropout masks: block a draws from seed + a, forward and backward
    blocks: list = field(default_factory=list)  # (a, b, j0, j1), filled by the forward pass
    cache: OrderedDict = field(default_factory=OrderedDict)


def base_range(a: int, b: int, S: int, is_causal: bool, window: int | None) -> tuple[int, int]:
    """Keys rows [a, b) may see at all (causal / window), before any skipping."""
    j0, j1 = 0, S
    if is_causal:
        j1 = min(S, b)
    if window is not None:
        j0 = max(0, a - window + 1)
        if not is_causal:
            j1 = min(S, b + window - 1)
    return j0, max(j0, j1)


# --------------------------------------------------------------------------- masks


def as4(x: Tensor | None, batch: torch.Size) -> Tensor | None:
    """A (..., r, c) tensor shaped for the 4-D view of a request with leading dims ``batch``
    (the CPU flash kernel takes masks of 2 or 4 dims)."""
    if x is None or x.dim() == 2:
        return x
    x = x.reshape((1,) * (len(batch) + 2 - x.dim()) + x.shape)  # one dim per batch dim
    if len(batch) <= 2:
        return x.reshape((1,) * (2 - len(batch)) + x.shape)
    if all(d == 1 for d in x.shape[:-3]):
        return x.reshape(1, *x.shape[-3:])
    return x.expand(*batch, *x.shape[-2:]).reshape(-1, batch[-1], *x.shape[-2:])


def _slice_mask(mask: Tensor, a: int, b: int, j0: int, j1: int) -> Tensor:
    rows = mask[..., a:b, :] if mask.shape[-2] > 1 else mask
    return rows[..., j0:j1] if mask.shape[-1] > 1 else rows


def block_mask(plan: Plan, a: int, b: int, j0: int, j1: int, device, dtype):
    """``(mask, empty)`` of one block, 4-D: a float mask (0 / log-weight / -inf) or None, and a
    bool (..., b-a, 1) marking rows with no allowed key in the block (None when none is)."""
    key = (a - j0, b - a, j1 - j0)
    if plan.toeplitz and key in plan.cache:
        plan.cache.move_to_end(key)
        return plan.cache[key]
    if plan.toeplitz:
        mask = _toeplitz_mask(plan.structure, *key, device, dtype)
        empty = _toeplitz_empty(plan.structure, *key, device)
    else:
        st = dict(plan.structure)
        ts = st.get("timestamps")
        if ts is not None:
            st["timestamps"] = (ts[0][..., a:b], ts[1][..., j0:j1])
        if st.get("attn_mask") is not None:
            st["attn_mask"] = _slice_mask(st["attn_mask"], a, b, j0, j1)
        allowed, bias = time_structure(
            b - a, j1 - j0, offsets=(a, j0), device=device, dtype=dtype, **st
        )
        empty = None
        if allowed is not None:
            empty = ~allowed.any(dim=-1, keepdim=True)
            if bias is None:  # the kernels take one float mask: 0 where allowed, -inf elsewhere
                bias = torch.zeros(allowed.shape, device=device, dtype=dtype)
        mask = combine_mask(allowed, bias)
    out = (as4(mask, plan.batch), as4(empty, plan.batch))
    if plan.toeplitz:
        plan.cache[key] = out
        if len(plan.cache) > _CACHE_SIZE:
            plan.cache.popitem(last=False)
    return out


def _toeplitz_mask(structure, d: int, rows: int, cols: int, device, dtype) -> Tensor | None:
    """The mask of a block whose structure depends on the lag only (causal, window, index
    decay): rows i = a + r, keys j = j0 + c, ``d = a - j0``. Built from the rows + cols - 1
    lags it spans (one vector, then a strided view), not from a (rows, cols) grid of lags."""
    causal, window, decay = structure["is_causal"], structure["window"], structure["decay"]
    if not causal and window is None and decay is None:
        return None
    lag = torch.arange(d + rows - 1, d - cols, -1, device=device)  # h[u] = lag d + rows-1-u
    h = torch.zeros(lag.shape, device=device, dtype=dtype)
    if decay is not None:  # the same products as time_structure: |lag| · ln γ
        h = lag.abs().to(dtype) * torch.log(param_tensor(decay, device, dtype)[..., 0])
    bad = torch.zeros(lag.shape, device=device, dtype=torch.bool)
    if causal:
        bad |= lag < 0
    if window is not None:
        bad |= (lag >= window) if causal else (lag.abs() >= window)
    h = h.masked_fill(bad, float("-inf"))  # (..., rows + cols - 1)
    # view[p, c] = h[p + c]; row r needs lag d + r - c = h[rows - 1 - r + c]: flip the rows
    return h.unfold(-1, cols, 1).flip(-2).contiguous()  # (..., rows, cols)


def _toeplitz_empty(structure, d: int, rows: int, cols: int, device) -> Tensor | None:
    """Rows of a lag-only block with no allowed key, from the lag range each row spans."""
    causal, window = structure["is_causal"], structure["window"]
    lo, hi = (0 if causal else None), None  # allowed lags [lo, hi]
    if window is not None:
        lo, hi = (0, window - 1) if causal else (1 - window, window - 1)
    r = torch.arange(rows, device=device)
    ok = torch.ones(rows, dtype=torch.bool, device=device)
    if lo is not None:
        ok &= d + r >= lo  # the row's largest lag, d + r, reaches the allowed range
    if hi is not None:
        ok &= d + r - cols + 1 <= hi  # and so does its smallest
    if bool(ok.all()):
        return None
    return ~ok[:, None]


def block_dist(plan: Plan, a: int, b: int, j0: int, j1: int, device, dtype) -> Tensor:
    """``dist_ij`` (|i-j| or |t_i - t_j|) of one block, for the gradient of the decay."""
    if plan.kind == "tau":
        tq, tk = plan.structure["timestamps"]
        dt = time_differences(tq[..., a:b], tk[..., j0:j1], device)
        return as4(dt.abs().to(dtype), plan.batch)
    i = torch.arange(a, b, device=device)[:, None]
    j = torch.arange(j0, j1, device=device)[None, :]
    return (i - j).abs().to(dtype)


# --------------------------------------------------------------------------- skipping


def _outwards(a: int, b: int, lo: float, hi: float) -> tuple[float, float]:
    """Round a key range outwards to SKIP_GRAIN steps from the block edges (±inf stay)."""
    lo = a - SKIP_GRAIN * math.ceil((a - lo) / SKIP_GRAIN) if math.isfinite(lo) else lo
    hi = b + SKIP_GRAIN * math.ceil((hi - b) / SKIP_GRAIN) if math.isfinite(hi) else hi
    return lo, hi


def clip(lo: float, hi: float, base: tuple[int, int]) -> tuple[int, int]:
    """A key range clipped to ``base`` = (j0, j1), as ints."""
    lo = int(min(max(base[0], lo), base[1]))
    return lo, int(max(lo, min(base[1], hi)))


def _from_first_key(tq: Tensor, tk: Tensor, device) -> tuple[Tensor, Tensor]:
    """Query and key times in float64, counted from the first key time of their row: the
    bounds weigh times against τ, and absolute int64 epoch nanoseconds (1.7e18) hold to 256 ns
    only in float64 (skipped keys held 0.49 of a row's weight at decay_tol = 0.01, τ = 20 ns).
    Integer times are subtracted as int64 first, as in :func:`time_differences`."""
    origin = tk[..., :1]
    wide = torch.float64 if tq.is_floating_point() or tk.is_floating_point() else torch.int64
    tq, tk, origin = (t.to(device, wide) for t in (tq, tk, origin))
    return (tq - origin).to(torch.float64), (tk - origin).to(torch.float64)


def required_range(plan: Plan, a: int, b: int, log_mass: Tensor) -> tuple[float, float]:
    """The keys [j_lo, j_hi) rows [a, b) must keep so that the keys outside hold at most a
    fraction ``plan.tol`` of each row's weight, given a lower bound ``log_mass`` (..., b-a) on
    the log of each row's total weight (the module docstring of :mod:`tssdpa.ops.blockwise`
    states the bound). Not clipped to the keys that exist (-inf / inf: no limit), rounded
    outwards (:data:`SKIP_GRAIN`)."""
    causal, r = plan.structure["is_causal"], plan.rate
    log_thr = log_mass.to(torch.float64) + math.log(plan.tol if causal else plan.tol / 2)
    lead = tuple(range(log_thr.dim() - 1))
    if plan.kind == "decay":
        # keys j < j_lo: Σ γ^(i-j) <= γ^(i-j_lo+1) / (1-γ) <= e^log_thr
        # ⇔ i - j_lo + 1 >= (log_thr + ln(1-γ)) / r   (r = ln γ < 0)
        need = ((log_thr + math.log1p(-math.exp(r))) / r).clamp(min=0.0)
        need = need.amax(dim=lead) if lead else need  # (b-a,): +inf where the mass is 0
        i = torch.arange(a, b, device=need.device, dtype=torch.float64)
        lo = float((i + 1 - need).min())
        hi = float((i + need).max()) if not causal else math.inf
        return _outwards(a, b, lo, hi)
    tq, tk = plan.structure["timestamps"]
    batch = plan.batch
    thr = log_thr.reshape(*batch, b - a)
    tq, tk = _from_first_key(tq[..., a:b], tk, log_thr.device)
    shape = torch.broadcast_shapes(batch, tq.shape[:-1], tk.shape[:-1])
    thr = thr.expand(*shape, b - a).reshape(-1, b - a)
    tq = tq.expand(*shape, b - a).reshape(-1, b - a).contiguous()
    tk = tk.expand(*shape, tk.shape[-1]).reshape(-1, tk.shape[-1]).contiguous()
    n = tk.shape[-1]
    cnt = torch.arange(1, n + 1, device=tk.device, dtype=torch.float64)
    # keys j < j_lo hold at most j_lo · exp(r (t_i - t_(j_lo-1))) when t_(j_lo-1) <= t_i (key
    # times non-decreasing): g(j_lo) = ln j_lo - r t_(j_lo-1) <= thr - r t_i, g non-decreasing
    g = cnt.log() - r * tk
    lo = torch.searchsorted(g, (thr - r * tq).contiguous(), right=True)
    lo = torch.minimum(lo, torch.searchsorted(tk, tq, right=True))
    lo = float(lo.min())
    hi = math.inf
    if not causal:
        # keys j >= j_hi hold at most (n - j_hi) · exp(-r (t_i - t_j_hi)) when t_j_hi >= t_i:
        # -(ln(n - j) + r t_j) is non-decreasing in j and must reach -(thr + r t_i)
        h = -((n - cnt + 1).log() + r * tk)
        hi_ = torch.searchsorted(h, (-(thr + r * tq)).contiguous(), right=False)
        hi = float(torch.maximum(hi_, torch.searchsorted(tk, tq, right=False)).max())
        hi = math.inf if hi >= n else hi  # nothing on the right may be left out
    lo = -math.inf if lo <= 0 else lo  # nothing on the left may be left out
    return _outwards(a, b, lo, hi)
