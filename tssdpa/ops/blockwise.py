"""The decayed (IIR) projection SDPA in memory linear in L: blockwise attention.

An exponential decay ``γ^|i-j|`` or ``exp(-|t_i - t_j| / τ)`` is an additive log-weight
``b_ij = r · dist_ij`` (``r = ln γ`` and ``dist = |i-j|``, or ``r = -1/τ`` and
``dist = |t_i - t_j|``). Built for all pairs it is an L×S tensor. Here the query rows are cut
into blocks; each block attends, in one kernel call, to the contiguous range of keys it can see
(its *hull*), with a bias built from that block's own index or time ranges, so at most
``block × S`` structure values exist at a time and the memory of a call is O(L·block).
A hand-written :class:`torch.autograd.Function` keeps only the inputs, the output and one
log-sum-exp per row for the backward pass, which recomputes each block.

**Skipping far keys** (``tol > 0``). The weight of key j in row i is at most
``exp(r · dist_ij)``: the Gaussian kernel factor is at most 1. The row's total (unnormalised)
mass is at least the mass ``m_i`` of its nearest keys (``NEAR_KEYS`` lags, computed exactly
from differences). A block drops the keys outside ``[j_lo, j_hi)`` only when, for every row i
of the block, the bound on the dropped mass is at most ``tol · m_i``:

* index decay, keys j < j_lo: ``Σ γ^(i-j) ≤ γ^(i-j_lo+1) / (1-γ)`` (a geometric tail; the same
  on the right of the row when not causal);
* timestamps, keys j < j_lo: ``j_lo · exp(-(t_i - t_(j_lo-1)) / τ)`` (count times the largest
  term; key times must be non-decreasing for this, otherwise nothing is skipped).

``tol`` is split in halves between the two sides when not causal. So the skipped keys hold at
most a fraction ``tol`` of every row's exact weight (a *total* per row, not per key), and each
output coordinate is off by at most ``tol · (max_j v_jc - min_j v_jc)``. ``tol = 0`` skips
nothing: the result is exact. Skipping needs no ``attn_mask`` (a mask could hide the near keys
the bound is built on).

**Kernels.** Each block is computed by torch's CPU flash-attention kernels (which return the
log-sum-exp the backward pass needs) when ``q`` is on the CPU and the decay parameter needs no
gradient, and otherwise by plain tensor operations (every device; exact; the gradient of the
decay parameter is ``Σ_ij dS_ij · dist_ij``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor

from tssdpa.ops.structure import combine_mask, param_tensor, time_structure

__all__ = ["DECAY_BLOCK", "NEAR_KEYS", "blockwise_attention", "plan_blocks"]

#: Query rows per block of the blockwise path.
DECAY_BLOCK = 256

#: Skipped key ranges end on multiples of this many keys from the block's edges.
SKIP_GRAIN = 64

#: Lags 0..NEAR_KEYS-1 whose exact weights give the lower bound on a row's mass (skipping).
NEAR_KEYS = 16

_CPU_FLASH = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
_CPU_FLASH_BWD = getattr(
    torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu_backward", None
)
#: Use torch's CPU flash kernels per block where they apply (tests switch this off to exercise
#: the plain-operations kernel on the CPU as well).
USE_CPU_FLASH = _CPU_FLASH is not None and _CPU_FLASH_BWD is not None


@dataclass
class _Plan:
    """What every block needs besides q, k, v: its key range and its structure."""

    blocks: list[tuple[int, int, int, int]]  # (row a, row b, key j0, key j1)
    structure: dict  # time_structure keywords; decay / tau detached
    kind: str | None  # "decay", "tau" or None: what the differentiable ``param`` is
    batch: torch.Size  # the leading dims of the request (q, k, v run as 4-D views of them)
    toeplitz: bool  # the block structure depends only on (a - j0, b - a, j1 - j0)
    cache: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- block structure


def _slice_mask(mask: Tensor, a: int, b: int, j0: int, j1: int) -> Tensor:
    rows = mask[..., a:b, :] if mask.shape[-2] > 1 else mask
    return rows[..., j0:j1] if mask.shape[-1] > 1 else rows


def _block_mask(plan: _Plan, a: int, b: int, j0: int, j1: int, device, dtype):
    """``(mask, empty)`` of one block: a float mask (0 / log-weight / -inf) or None, and a bool
    (..., b-a, 1) marking rows with no allowed key in the block (None when there are none)."""
    key = (a - j0, b - a, j1 - j0)
    if plan.toeplitz and plan.cache.get("key") == key:  # consecutive blocks share it
        return plan.cache["value"]
    if plan.toeplitz:
        mask = _toeplitz_mask(plan.structure, *key, device, dtype)
        empty = torch.isneginf(mask.amax(dim=-1, keepdim=True)) if mask is not None else None
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
    out = (_as4(mask, plan.batch), _as4(empty, plan.batch))
    if plan.toeplitz:
        plan.cache.update(key=key, value=out)
    return out


def _toeplitz_mask(structure, d: int, rows: int, cols: int, device, dtype) -> Tensor | None:
    """The mask of a block whose structure depends on the lag i-j only (causal, window, index
    decay): rows i = a + r, keys j = j0 + c, ``d = a - j0``. Built from the Bq + n - 1 lags
    it spans (one vector, then a strided view), not from an (rows, cols) grid of lags."""
    causal, window, decay = structure["is_causal"], structure["window"], structure["decay"]
    if not causal and window is None and decay is None:
        return None
    lag = torch.arange(d + rows - 1, d - cols, -1, device=device)  # h[u] = lag d + rows-1-u
    h = torch.zeros(lag.shape, device=device, dtype=dtype)
    if decay is not None:
        h = lag.abs().to(dtype) * torch.log(param_tensor(decay, device, dtype)[..., 0])
    bad = torch.zeros(lag.shape, device=device, dtype=torch.bool)
    if causal:
        bad |= lag < 0
    if window is not None:
        bad |= (lag >= window) if causal else (lag.abs() >= window)
    h = h.masked_fill(bad, float("-inf"))  # (..., rows + cols - 1)
    # view[p, c] = h[p + c]; row r needs lag d + r - c = h[rows - 1 - r + c]: flip the rows
    return h.unfold(-1, cols, 1).flip(-2).contiguous()  # (..., rows, cols)


def _as4(x: Tensor | None, batch: torch.Size) -> Tensor | None:
    """A (..., r, c) structure tensor shaped for the 4-D view of the request (the CPU flash
    kernel takes masks of 2 or 4 dims)."""
    if x is None or x.dim() == 2:
        return x
    x = x.reshape((1,) * (len(batch) + 2 - x.dim()) + x.shape)  # one dim per batch dim
    if len(batch) <= 2:
        return x.reshape((1,) * (2 - len(batch)) + x.shape)
    if all(d == 1 for d in x.shape[:-3]):
        return x.reshape(1, *x.shape[-3:])
    return x.expand(*batch, *x.shape[-2:]).reshape(-1, batch[-1], *x.shape[-2:])


def _block_dist(plan: _Plan, a: int, b: int, j0: int, j1: int, device, dtype) -> Tensor:
    """``dist_ij`` (|i-j| or |t_i - t_j|) of one block, for the gradient of the decay."""
    if plan.kind == "tau":
        tq, tk = plan.structure["timestamps"]
        dt = tq[..., a:b, None].to(device, torch.float64) - tk[..., None, j0:j1].to(
            device, torch.float64
        )
        return dt.abs().to(dtype)
    i = torch.arange(a, b, device=device)[:, None]
    j = torch.arange(j0, j1, device=device)[None, :]
    return (i - j).abs().to(dtype)


# --------------------------------------------------------------------------- one block


def _flash_ok(q: Tensor) -> bool:
    return USE_CPU_FLASH and q.device.type == "cpu" and q.dtype in (torch.float32, torch.float64)


def _forward_block(q, k, v, mask, empty):
    """Softmax attention of one block (scale 1): ``(out, lse)``, lse (..., Bq) = -inf on empty
    rows (whose output is zero)."""
    if _flash_ok(q):
        out, lse = _CPU_FLASH(q, k, v, 0.0, False, attn_mask=mask, scale=1.0)
    else:
        s = q @ k.transpose(-1, -2)  # (..., Bq, n)
        if mask is not None:
            s = s + mask
        lse = torch.logsumexp(s, dim=-1)  # -inf on a row with no allowed key
        p = torch.exp(s - lse.masked_fill(torch.isneginf(lse), 0.0)[..., None])
        out = p @ v
    if empty is not None:
        # the flash kernel reports lse = 0 for a fully masked row; mark it -inf for merging
        out = out.masked_fill(empty, 0.0)
        lse = lse.masked_fill(empty[..., 0], float("-inf"))
    return out, lse


def _backward_block(do, q, k, v, out, lse, mask, dist):
    """Gradients of one block for q, k, v and, when ``dist`` is given, ``Σ dS · dist`` (...)."""
    lse = lse.masked_fill(torch.isneginf(lse), 0.0)  # empty rows: out = 0 and do = 0 → no grad
    if dist is None and _flash_ok(q):
        dq, dk, dv = _CPU_FLASH_BWD(do, q, k, v, out, lse, 0.0, False, attn_mask=mask, scale=1.0)
        return dq, dk, dv, None
    s = q @ k.transpose(-1, -2)  # (..., Bq, n)
    if mask is not None:
        s = s + mask
    p = torch.exp(s - lse[..., None])
    dp = do @ v.transpose(-1, -2)
    ds = p * (dp - (do * out).sum(dim=-1, keepdim=True))  # dL/dlogits
    gparam = None if dist is None else (ds * dist).sum(dim=(-2, -1))
    return ds @ k, ds.transpose(-1, -2) @ q, p.transpose(-1, -2) @ do, gparam


def _sum_to(x: Tensor, shape) -> Tensor:
    """Sum a broadcast gradient back to ``shape``."""
    lead = x.dim() - len(shape)
    x = x.sum(dim=tuple(range(lead))) if lead > 0 else x
    dims = tuple(d for d, n in enumerate(shape) if n == 1 and x.shape[d] != 1)
    return (x.sum(dim=dims, keepdim=True) if dims else x).reshape(shape)


class _Blockwise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, param, plan):
        outs, lses = [], []
        for a, b, j0, j1 in plan.blocks:
            if j1 == j0:  # no key in reach (L > S with a window): rows of zeros
                outs.append(q.new_zeros(*q.shape[:-2], b - a, v.shape[-1]))
                lses.append(q.new_full((*q.shape[:-2], b - a), float("-inf")))
                continue
            mask, empty = _block_mask(plan, a, b, j0, j1, q.device, q.dtype)
            o, lse = _forward_block(q[..., a:b, :], k[..., j0:j1, :], v[..., j0:j1, :], mask, empty)
            outs.append(o)
            lses.append(lse)
        out = torch.cat(outs, dim=-2)  # (..., L, W)
        lse = torch.cat(lses, dim=-1)  # (..., L)
        ctx.plan = plan
        ctx.save_for_backward(q, k, v, param, out, lse)
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, param, out, lse = ctx.saved_tensors
        plan = ctx.plan
        need_param = param is not None and ctx.needs_input_grad[3]
        dout = dout.contiguous()
        dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
        gsum = None
        for a, b, j0, j1 in plan.blocks:
            if j1 == j0:
                continue
            mask, _ = _block_mask(plan, a, b, j0, j1, q.device, q.dtype)
            dist = _block_dist(plan, a, b, j0, j1, q.device, q.dtype) if need_param else None
            gq, gk, gv, gp = _backward_block(
                dout[..., a:b, :],
                q[..., a:b, :],
                k[..., j0:j1, :],
                v[..., j0:j1, :],
                out[..., a:b, :],
                lse[..., a:b],
                mask,
                dist,
            )
            dq[..., a:b, :] += gq
            dk[..., j0:j1, :] += gk
            dv[..., j0:j1, :] += gv
            if gp is not None:
                gsum = gp if gsum is None else gsum + gp
        gparam = None
        if need_param:
            # d bias / d param: bias = |i-j| · ln γ → dist / γ; bias = -|Δt| / τ → dist / τ²
            p = param.to(q.dtype)  # a float32 parameter of a float64 request: divide in fp64
            scale = 1.0 / p if plan.kind == "decay" else 1.0 / p.square()
            gsum = gsum.reshape(plan.batch) if gsum is not None else p * 0
            gparam = _sum_to(gsum * scale, param.shape).to(param.dtype)
        return dq, dk, dv, gparam, None


# --------------------------------------------------------------------------- planning


def _base_range(a: int, b: int, S: int, is_causal: bool, window: int | None) -> tuple[int, int]:
    """Keys rows [a, b) may see at all (causal / window), before any skipping."""
    j0, j1 = 0, S
    if is_causal:
        j1 = min(S, b)
    if window is not None:
        j0 = max(0, a - window + 1)
        if not is_causal:
            j1 = min(S, b + window - 1)
    return j0, max(j0, j1)


@torch.no_grad()
def _near_log_mass(q, k, inv2s2, rate, dist_fn, L, S, window) -> Tensor:
    """``log Σ_{l < NEAR_KEYS} exp(-||q_i - k_(i-l)||²/2σ_i² + r · dist(i, i-l))`` (..., L):
    a lower bound on the log of row i's total mass (-inf where no near key exists)."""
    shape = torch.broadcast_shapes(q.shape[:-1], rate.shape, inv2s2.shape)
    terms = []
    for lag in range(NEAR_KEYS):
        if window is not None and lag >= window:
            break
        n = min(L - lag, S)
        if n <= 0:
            break
        d2 = (q[..., lag : lag + n, :] - k[..., :n, :]).square().sum(dim=-1)  # (..., n)
        w = q.new_full(shape, float("-inf"))
        s2 = inv2s2[..., lag : lag + n] if inv2s2.shape[-1] > 1 else inv2s2
        w[..., lag : lag + n] = -d2 * s2 + rate * dist_fn(lag, n)
        terms.append(w)
    if not terms:
        return q.new_full(shape, float("-inf"))
    return torch.logsumexp(torch.stack(terms), dim=0)


def _index_cut(log_thr: Tensor, r: float, L: int, S: int, causal: bool, device):
    """Per-row (j_lo, j_hi) for an index decay γ = e^r: keep keys [j_lo, j_hi)."""
    i = torch.arange(L, device=device, dtype=torch.float64)
    # geometric tail: γ^n / (1-γ) <= exp(log_thr)  ⇔  n >= (log_thr + ln(1-γ)) / r
    need = (log_thr + math.log1p(-math.exp(r))) / r  # (..., L), +inf where log_thr = -inf
    need = need.clamp(min=0.0).amax(dim=tuple(range(need.dim() - 1))) if need.dim() > 1 else need
    need = need.clamp(max=float(L + S)).ceil()
    lo = (i + 1 - need).clamp(min=0)
    hi = S if causal else (i + need).clamp(max=S)
    return lo, hi


def _time_cut(log_thr, r, tq, tk, L, S, causal):
    """Per-row (j_lo, j_hi) for ``exp(-|Δt|/τ)``, τ = -1/r, key times non-decreasing."""
    batch = torch.broadcast_shapes(log_thr.shape[:-1], tq.shape[:-1], tk.shape[:-1])
    thr = log_thr.expand(*batch, L).reshape(-1, L)
    tq = tq.to(torch.float64).expand(*batch, L).reshape(-1, L)
    tk = tk.to(torch.float64).expand(*batch, S).reshape(-1, S).contiguous()
    cnt = torch.arange(1, S + 1, device=tk.device, dtype=torch.float64)
    # left: keys j < j_lo hold at most j_lo · exp(r (t_i - t_(j_lo-1))), needs t_(j_lo-1) <= t_i
    g = cnt.log() - r * tk  # g(j_lo) at index j_lo-1, non-decreasing
    lo = torch.searchsorted(g, (thr - r * tq).contiguous(), right=True)
    lo = torch.minimum(lo, torch.searchsorted(tk, tq.contiguous(), right=True))
    lo = lo.amin(dim=0).to(torch.float64)
    if causal:
        return lo, S
    # right: keys j >= j_hi hold at most (S - j_hi) · exp(-r (t_i - t_j_hi)), needs t_j_hi >= t_i
    h = -((S - cnt + 1).log() + r * tk)  # -(log(S - j) + r t_j) at index j, non-decreasing
    hi = torch.searchsorted(h, (-(thr + r * tq)).contiguous(), right=False)
    hi = torch.maximum(hi, torch.searchsorted(tk, tq.contiguous(), right=False))
    return lo, hi.amax(dim=0).to(torch.float64)


def plan_blocks(L, S, block, is_causal, window, skip=None):
    """The blocks (a, b, j0, j1) of a request. ``skip``: None, or a pair of per-row tensors
    (j_lo, j_hi) (float, (L,), or j_hi an int) narrowing each block's key range."""
    blocks = [(a, min(a + block, L)) for a in range(0, L, block)]
    ranges = [_base_range(a, b, S, is_causal, window) for a, b in blocks]
    if skip is not None:
        lo, hi = skip
        pad = -(-L // block) * block - L
        lo = torch.nn.functional.pad(lo, (0, pad), value=float(S)).view(-1, block).amin(dim=1)
        if isinstance(hi, Tensor):
            hi = torch.nn.functional.pad(hi, (0, pad), value=0.0).view(-1, block).amax(dim=1)
            hi = hi.tolist()
        else:
            hi = [hi] * len(blocks)
        out = []
        for (a, b), (j0, j1), lo_, hi_ in zip(blocks, ranges, lo.tolist(), hi):
            # round outwards (keeping more keys only tightens the bound) to a multiple of
            # SKIP_GRAIN from the block's edges, so that blocks share one mask
            lo_ = a - SKIP_GRAIN * math.ceil((a - lo_) / SKIP_GRAIN)
            hi_ = b + SKIP_GRAIN * math.ceil((hi_ - b) / SKIP_GRAIN)
            lo_ = min(max(j0, int(lo_)), j1)
            out.append((lo_, max(lo_, min(j1, int(hi_)))))
        ranges = out
    return [(a, b, j0, j1) for (a, b), (j0, j1) in zip(blocks, ranges)]


def _skip_ranges(q, k, sig, structure, tol, L, S):
    """Per-row key ranges that drop at most a fraction ``tol`` of each row's mass, or None."""
    decay, tau, ts = structure["decay"], structure["tau"], structure["timestamps"]
    if decay is not None:
        rate = decay.detach().log() if isinstance(decay, Tensor) else math.log(decay)
    else:
        rate = -1.0 / (tau.detach() if isinstance(tau, Tensor) else tau)
    rate_t = torch.as_tensor(rate, device=q.device, dtype=q.dtype)
    r = float(rate_t.max())  # the slowest decay bounds every head's tail
    if r >= 0.0:  # γ = 1: nothing decays
        return None
    if ts is not None:
        tk = ts[1]
        if not bool((tk.diff(dim=-1) >= 0).all()):  # the time-gap bound needs sorted keys
            return None
    if isinstance(sig, Tensor):
        inv2s2 = (0.5 / sig.detach().square())[..., 0]  # (..., 1) per head or (..., L) per row
    else:
        inv2s2 = torch.full((1,), 0.5 / sig**2, device=q.device, dtype=q.dtype)
    rate_r = rate_t.reshape(*rate_t.shape, 1) if rate_t.dim() else rate_t  # (..., 1)

    def dist_fn(lag, n):
        if ts is None:
            return float(lag)
        tq, tk = ts
        d = tq[..., lag : lag + n].to(torch.float64) - tk[..., :n].to(torch.float64)
        return d.abs().to(q.device, q.dtype)

    log_m = _near_log_mass(
        q.detach(), k.detach(), inv2s2, rate_r, dist_fn, L, S, structure["window"]
    )
    side = tol if structure["is_causal"] else tol / 2
    log_thr = log_m.to(torch.float64) + math.log(side)
    if ts is None:
        return _index_cut(log_thr, r, L, S, structure["is_causal"], q.device)
    return _time_cut(
        log_thr, r, ts[0].to(q.device), ts[1].to(q.device), L, S, structure["is_causal"]
    )


def blockwise_attention(qs, ka, v, q, k, sig, structure, *, tol=0.0, block=None):
    """Projection SDPA with a decay / timestamps, block by block (see the module docstring).

    Parameters
    ----------
    qs, ka, v : Tensor (..., L, W), (..., S, W), (..., S, W)
        The augmented, scaled queries (``q~ / σ²``), augmented keys and values, one width W,
        one common batch shape.
    q, k : Tensor (..., L, E), (..., S, E)
        The plain queries and keys (only read to bound the row mass when skipping).
    sig : float or Tensor
        σ as in :func:`tssdpa.ops.projection_sdpa` (only read when skipping).
    structure : dict
        ``is_causal``, ``window``, ``decay``, ``tau``, ``timestamps`` (a pair), ``attn_mask``.
    tol : float
        Largest fraction of a row's exact weight the skipped keys may hold (0 = exact).
    block : int, optional
        Query rows per block (default :data:`DECAY_BLOCK`).

    Returns
    -------
    Tensor (..., L, W)
        Rows with no allowed key are zero.
    """
    L, S = qs.shape[-2], ka.shape[-2]
    block = block or DECAY_BLOCK
    decay, tau = structure["decay"], structure["tau"]
    kind = "decay" if decay is not None else ("tau" if tau is not None else None)
    param = decay if kind == "decay" else tau
    skip = None
    if tol > 0.0 and kind is not None and structure.get("attn_mask") is None and L and S:
        skip = _skip_ranges(q, k, sig, structure, tol, L, S)
    blocks = plan_blocks(L, S, block, structure["is_causal"], structure["window"], skip)
    st = dict(structure)
    if isinstance(param, Tensor):
        st[kind] = param.detach()
    toeplitz = structure["timestamps"] is None and structure.get("attn_mask") is None
    batch = qs.shape[:-2]
    plan = _Plan(blocks, st, kind, batch, toeplitz)
    ptensor = param if isinstance(param, Tensor) else None

    def as4(x):  # (*batch, n, W) → a 4-D view (the kernels' layout)
        x = x.contiguous()
        if len(batch) <= 2:
            return x.reshape((1,) * (2 - len(batch)) + x.shape)
        return x.reshape(-1, batch[-1], *x.shape[-2:])

    out = _Blockwise.apply(as4(qs), as4(ka), as4(v), ptensor, plan)
    return out.reshape(*batch, *out.shape[-2:])
