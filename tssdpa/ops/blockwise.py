"""The decayed (IIR) projection SDPA in memory linear in L: blockwise attention.

An exponential decay ``γ^|i-j|`` or ``exp(-|t_i - t_j| / τ)`` is an additive log-weight
``b_ij = r · dist_ij`` (``r = ln γ`` and ``dist = |i-j|``, or ``r = -1/τ`` and
``dist = |t_i - t_j|``). Built for all pairs it is an L×S tensor. Here the query rows are cut
into blocks; each block attends, in one kernel call, to the contiguous range of keys it keeps,
with a mask built from that block's own index or time ranges (:mod:`tssdpa.ops.blockplan`),
so at most ``block × S`` structure values exist at a time and a call needs O(L·block) memory.
The augmented queries ``q~ = [q - c, 1] / σ²`` are formed block by block too. A hand-written
:class:`torch.autograd.Function` keeps only the inputs, the output and one log-sum-exp per
row for the backward pass, which recomputes each block. Dropout (``dropout_p``) draws each
block's mask from a per-call seed plus the block's first row, and the backward pass draws it
again (:func:`dropout_keep`): no mask is stored.

**Skipping far keys** (``tol > 0``). The weight of key j in row i is at most
``exp(r · dist_ij)``: the Gaussian kernel factor is at most 1. A block first attends to a
guessed key range (the one the previous block needed); the log-sum-exp of that pass gives each
row's weight ``m_i`` over the keys it kept, a lower bound on its total weight. The keys outside
``[j_lo, j_hi)`` may be left out only when, for every row i of the block, a bound on their
weight is at most ``tol · m_i``; otherwise the block is computed again over the range the
bound asks for (which then holds, since ``m_i`` only grows). The bounds:

* index decay, keys j < j_lo: ``Σ γ^(i-j) ≤ γ^(i-j_lo+1) / (1-γ)`` (geometric tail; the same
  on the right when not causal), with the slowest γ over heads;
* timestamps, keys j < j_lo: ``j_lo · exp(-(t_i - t_(j_lo-1)) / τ)`` (count times the largest
  term), with the longest τ; the key times must be non-decreasing, otherwise nothing is
  skipped.

``tol`` is split in halves between the two sides when not causal. So the keys left out hold
at most a fraction ``tol`` of every row's exact weight (a *total* per row, not per key), and
each output coordinate is off by at most ``tol · (max_j v_jc - min_j v_jc)``. ``tol = 0``
skips nothing: the result is exact. Skipping needs no ``attn_mask`` (a mask could hide keys
in a way the bounds do not see).

**Kernels.** Each block runs on torch's CPU flash-attention kernels (which return the
log-sum-exp) when the tensors are on the CPU, and otherwise on plain tensor operations (every
device). The backward pass uses the flash kernel when the decay parameter needs no gradient;
with a learned decay it uses the plain operations, which also give ``Σ_ij dS_ij · dist_ij``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from tssdpa.ops.blockplan import (
    Plan,
    as4,
    base_range,
    block_dist,
    block_mask,
    clip,
    required_range,
)

__all__ = ["DECAY_BLOCK", "USE_CPU_FLASH", "blockwise_attention", "dropout_keep"]

#: Query rows per block of the blockwise path.
DECAY_BLOCK = 256

_FLASH = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
_FLASH_BWD = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu_backward", None)
#: Use torch's CPU flash kernels per block where they apply (tests switch this off to run the
#: plain-operations kernel on the CPU as well).
USE_CPU_FLASH = _FLASH is not None and _FLASH_BWD is not None


# --------------------------------------------------------------------------- one block


def _flash_ok(q: Tensor) -> bool:
    return USE_CPU_FLASH and q.device.type == "cpu" and q.dtype in (torch.float32, torch.float64)


def _pad(x: Tensor, width: int) -> Tensor:
    return F.pad(x, (0, width - x.shape[-1])) if x.shape[-1] != width else x


def dropout_keep(plan: Plan, a: int, shape, device, dtype) -> Tensor | None:
    """The dropout factor of the block of rows starting at ``a``: 0 or ``1/(1-p)`` per
    weight, drawn from a generator seeded with ``plan.seed + a`` -- so the backward pass
    draws the same mask again instead of storing it. None without dropout."""
    if plan.dropout_p == 0.0:
        return None
    g = torch.Generator(device=device)
    g.manual_seed(plan.seed + a)
    keep = torch.rand(shape, generator=g, device=device) >= plan.dropout_p
    return keep.to(dtype) / (1.0 - plan.dropout_p)


def _forward_block(q, k, v, mask, empty, keep=None):
    """Softmax attention of one block (scale 1): ``(out, lse)``; empty rows give zeros and
    lse = -inf. q, k (..., W), v (..., Ev). ``keep``: a dropout factor per weight (plain
    operations; the flash kernel has none); lse stays that of the weights before dropout."""
    if keep is None and _flash_ok(q):
        w = max(q.shape[-1], v.shape[-1])  # the flash kernel takes one head width
        out, lse = _FLASH(_pad(q, w), _pad(k, w), _pad(v, w), 0.0, False, attn_mask=mask, scale=1.0)
        out = out[..., : v.shape[-1]]
    else:
        s = q @ k.transpose(-1, -2)  # (..., Bq, n)
        if mask is not None:
            s = s + mask
        lse = torch.logsumexp(s, dim=-1)  # -inf on a row with no allowed key
        p = torch.exp(s - lse.masked_fill(torch.isneginf(lse), 0.0)[..., None])
        out = (p if keep is None else p * keep) @ v
    if empty is not None:
        # the flash kernel reports lse = 0 for a fully masked row; mark it -inf
        out = out.masked_fill(empty, 0.0)
        lse = lse.masked_fill(empty[..., 0], float("-inf"))
    return out, lse


def _backward_block(do, q, k, v, out, lse, mask, dist, keep=None):
    """Gradients of one block for q, k, v and, when ``dist`` is given, ``Σ dS · dist`` (...).

    With dropout (``keep``), out = (P ∘ keep) v: dv = (P ∘ keep)ᵀ do, and the softmax sees
    dP = (do vᵀ) ∘ keep, whose row sum against P is still do · out."""
    lse = lse.masked_fill(torch.isneginf(lse), 0.0)  # empty rows: out = 0 and do = 0 → no grad
    if dist is None and keep is None and _flash_ok(q):
        w, ev = max(q.shape[-1], v.shape[-1]), v.shape[-1]
        dq, dk, dv = _FLASH_BWD(
            _pad(do, w), _pad(q, w), _pad(k, w), _pad(v, w), _pad(out, w), lse, 0.0, False,
            attn_mask=mask, scale=1.0,
        )  # fmt: skip
        return dq[..., : q.shape[-1]], dk[..., : k.shape[-1]], dv[..., :ev], None
    s = q @ k.transpose(-1, -2)  # (..., Bq, n)
    if mask is not None:
        s = s + mask
    p = torch.exp(s - lse[..., None])
    dp = do @ v.transpose(-1, -2)
    pv = p
    if keep is not None:
        dp, pv = dp * keep, p * keep
    ds = p * (dp - (do * out).sum(dim=-1, keepdim=True))  # dL/dlogits
    gparam = None if dist is None else (ds * dist).sum(dim=(-2, -1))
    return ds @ k, ds.transpose(-1, -2) @ q, pv.transpose(-1, -2) @ do, gparam


def _sum_to(x: Tensor, shape) -> Tensor:
    """Sum a broadcast gradient back to ``shape``."""
    lead = x.dim() - len(shape)
    x = x.sum(dim=tuple(range(lead))) if lead > 0 else x
    dims = tuple(d for d, n in enumerate(shape) if n == 1 and x.shape[d] != 1)
    return (x.sum(dim=dims, keepdim=True) if dims else x).reshape(shape)


def _rows(s, a: int, b: int):
    """Rows [a, b) of a per-row 1/σ² (..., L, 1); a float or per-head tensor as it is."""
    return s[..., a:b, :] if isinstance(s, Tensor) and s.shape[-2] > 1 else s


def _queries(qb: Tensor, c: Tensor, sb) -> tuple[Tensor, Tensor]:
    """``q~ = [q - c, 1] · s`` for one block, and ``q - c``."""
    qc = qb - c  # (..., Bq, E)
    col = (sb if isinstance(sb, Tensor) else qb.new_tensor(sb)).expand(*qb.shape[:-1], 1)
    return torch.cat([qc * sb, col], dim=-1), qc  # (..., Bq, E + 1)


class _Blockwise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, s, ka, v, param, c, plan, *kept):
        s = plan.scale if s is None else s
        L, S = q.shape[-2], ka.shape[-2]
        out = q.new_empty(*q.shape[:-1], v.shape[-1])  # (..., L, Ev)
        lse = q.new_empty(q.shape[:-1])  # (..., L)
        guess = None  # (a - j0, j1 - b) the previous block needed
        for a in range(0, L, plan.block):
            b = min(a + plan.block, L)
            base = base_range(a, b, S, plan.structure["is_causal"], plan.structure["window"])
            j0, j1 = base
            if plan.tol > 0.0 and guess is not None:
                j0, j1 = clip(a - guess[0], b + guess[1], base)
                if j1 <= j0:  # the guess misses every key the block may see (rows past the
                    j0, j1 = base  # last key): no lower bound on its weight; start from all
            qs, qc = _queries(q[..., a:b, :], c, _rows(s, a, b))
            o, m = _attend(plan, qs, ka, v, a, b, j0, j1)
            if plan.tol > 0.0 and j1 > j0:
                # the row weights actually kept: lse minus the row constant s·||q - c||²/2 of
                # the expansion, less a margin for its rounding
                const = 0.5 * (qc.square().sum(dim=-1) * qs[..., -1])
                eps = torch.finfo(q.dtype).eps
                log_mass = m - const - 8 * eps * (m.abs() + const.abs()) - 1e-4
                want = required_range(plan, a, b, log_mass)
                guess = (a - want[0], want[1] - b)
                lo, hi = clip(*want, base)
                if lo < j0 or hi > j1:
                    j0, j1 = min(lo, j0), max(hi, j1)
                    o, m = _attend(plan, qs, ka, v, a, b, j0, j1)
            out[..., a:b, :] = o
            lse[..., a:b] = m
            plan.blocks.append((a, b, j0, j1))
        ctx.plan = plan
        s_ = s if isinstance(s, Tensor) else None
        # ``kept``: the mask and times the backward reads again; saved so that an in-place
        # change before it raises (it silently bent the gradients) as for torch's own ops
        ctx.save_for_backward(q, s_, ka, v, param, c, out, lse, *kept)
        return out

    @staticmethod
    def backward(ctx, dout):  # out, lse and c enter it as constants: once differentiable
        with torch.no_grad():
            grads = _Blockwise._backward(ctx, dout)
        if not torch.is_grad_enabled():
            return grads
        # create_graph=True. torch's once_differentiable hung its error node off detached
        # copies of the gradients, but the keys reach this Function augmented outside it
        # (ka = [k - c, -||k - c||²/2]): a gradient by k had a second path back to k, so
        # autograd.grad(..., k) pruned the error node and returned a wrong second derivative
        # without a word (and a loss linear in the output, dout needing no gradient, got no
        # error node at all). A zero hung off the saved inputs themselves is on every path.
        live = [t for t in ctx.saved_tensors if t is not None and t.requires_grad]
        if not live:
            return grads
        zero = _OnceDifferentiable.apply(*live)  # a fresh 0: no inf · 0 from the inputs
        return tuple(g if g is None else g + zero.to(g.dtype) for g in grads)

    @staticmethod
    def _backward(ctx, dout):
        q, s, ka, v, param, c, out, lse, *kept = ctx.saved_tensors
        plan = ctx.plan
        s_grad = s is not None and ctx.needs_input_grad[1]
        s = plan.scale if s is None else s
        need_param = param is not None and ctx.needs_input_grad[4]
        dq, dka, dv = torch.zeros_like(q), torch.zeros_like(ka), torch.zeros_like(v)
        ds = torch.zeros(*q.shape[:-1], 1, dtype=q.dtype, device=q.device) if s_grad else None
        gsum = None
        for a, b, j0, j1 in plan.blocks:
            if j1 == j0:
                continue
            mask, _ = block_mask(plan, a, b, j0, j1, q.device, q.dtype)
            dist = block_dist(plan, a, b, j0, j1, q.device, q.dtype) if need_param else None
            sb = _rows(s, a, b)
            qs, qc = _queries(q[..., a:b, :], c, sb)
            keep = dropout_keep(plan, a, (*qs.shape[:-1], j1 - j0), q.device, q.dtype)
            gq, gk, gv, gp = _backward_block(
                dout[..., a:b, :], qs, ka[..., j0:j1, :], v[..., j0:j1, :], out[..., a:b, :],
                lse[..., a:b], mask, dist, keep,
            )  # fmt: skip
            dq[..., a:b, :] += gq[..., :-1] * sb  # q~ = [(q - c) s, s]
            if ds is not None:
                ds[..., a:b, :] += (gq[..., :-1] * qc).sum(-1, keepdim=True) + gq[..., -1:]
            dka[..., j0:j1, :] += gk
            dv[..., j0:j1, :] += gv
            if gp is not None:
                gsum = gp if gsum is None else gsum + gp
        gs = _sum_to(ds, s.shape) if ds is not None else None
        gparam = None
        if need_param:
            # d bias / d param: bias = |i-j| · ln γ → dist / γ; bias = -|Δt| / τ → dist / τ²
            p = param.to(q.dtype)  # a float32 parameter of a float64 request: divide in fp64
            gsum = gsum.reshape(plan.batch) if gsum is not None else p * 0
            # divided by τ twice, not times 1/τ²: τ² underflows float32 below ~1e-19, and
            # 1/τ² = inf gave inf for a finite gradient, NaN (inf · 0) where it was 0
            g = gsum / p if plan.kind == "decay" else gsum / p / p
            gparam = _sum_to(g, param.shape).to(param.dtype)
        return dq, gs, dka, dv, gparam, None, None, *(None for _ in kept)


class _OnceDifferentiable(torch.autograd.Function):
    """A zero scalar that depends on its inputs and whose backward raises: the blockwise
    gradients are built with out, lse and c held constant, so differentiating them again
    would be wrong."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors[0].new_zeros(())

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            "trying to differentiate twice the fused backend (its backward is once "
            "differentiable); second derivatives need backend='math'"
        )


def _attend(plan: Plan, qs, ka, v, a: int, b: int, j0: int, j1: int):
    """One block over keys [j0, j1): ``(out, lse)``."""
    if j1 == j0:  # no key in reach (L > S with a window): zero rows
        return qs.new_zeros(*qs.shape[:-1], v.shape[-1]), qs.new_full(qs.shape[:-1], float("-inf"))
    mask, empty = block_mask(plan, a, b, j0, j1, qs.device, qs.dtype)
    keep = dropout_keep(plan, a, (*qs.shape[:-1], j1 - j0), qs.device, qs.dtype)
    return _forward_block(qs, ka[..., j0:j1, :], v[..., j0:j1, :], mask, empty, keep)


# --------------------------------------------------------------------------- entry point


def _slowest_rate(structure) -> float:
    """max over heads of r (ln γ or -1/τ): the slowest decay bounds every head's tail."""
    decay, tau = structure["decay"], structure["tau"]
    x = decay if decay is not None else tau
    x = float(x.detach().amax()) if isinstance(x, Tensor) else float(x)
    return math.log(x) if decay is not None else -1.0 / x


def blockwise_attention(q, c, s, ka, v, structure, *, tol=0.0, block=None, dropout_p=0.0) -> Tensor:
    """Projection SDPA with a decay / timestamps, block by block (see the module docstring).

    Parameters
    ----------
    q : Tensor (..., L, E)
        Queries.
    c : Tensor (..., 1, E)
        The key mean the augmentation is centred on (no gradient).
    s : float or Tensor
        ``1/σ²``: a float, or a tensor (..., 1, 1) per head or (..., L, 1) per query row.
    ka : Tensor (..., S, E + 1)
        The augmented keys ``[k - c, -||k - c||²/2]``.
    v : Tensor (..., S, Ev)
        Values. q, ka, v share one batch shape.
    structure : dict
        ``is_causal``, ``window``, ``decay``, ``tau``, ``timestamps`` (a pair), ``attn_mask``.
    tol : float
        Largest fraction of a row's exact weight the skipped keys may hold (0 = exact).
    block : int, optional
        Query rows per block (default :data:`DECAY_BLOCK`).
    dropout_p : float
        Dropout on the normalised weights (as in torch: survivors scaled by ``1/(1-p)``).
        The masks come from one seed drawn from torch's default generator per call and are
        drawn again in the backward pass, never stored (:func:`dropout_keep`).

    Returns
    -------
    Tensor (..., L, Ev)
        Rows with no allowed key are zero.
    """
    block = block or DECAY_BLOCK
    decay, tau = structure["decay"], structure["tau"]
    kind = "decay" if decay is not None else ("tau" if tau is not None else None)
    param = decay if kind == "decay" else tau
    st = dict(structure)
    if isinstance(param, Tensor):
        st[kind] = param.detach()
    batch = q.shape[:-2]
    toeplitz = structure["timestamps"] is None and structure.get("attn_mask") is None
    plan = Plan(block, st, kind, batch, toeplitz)
    if tol > 0.0 and kind is not None and structure.get("attn_mask") is None:
        ts = structure["timestamps"]
        rate = _slowest_rate(structure)
        # γ = 1 decays nothing; the time-gap bound needs non-decreasing key times
        if rate < 0.0 and (ts is None or bool((ts[1].diff(dim=-1) >= 0).all())):
            plan.tol, plan.rate = tol, rate
    plan.scale = None if isinstance(s, Tensor) else float(s)
    if dropout_p > 0.0:
        plan.dropout_p = float(dropout_p)
        plan.seed = int(torch.randint(0, 2**62, (1,)).item())  # follows torch.manual_seed

    def four(x):  # (*batch, n, W) → a 4-D view (the kernels' layout)
        x = x.contiguous()
        if len(batch) <= 2:
            return x.reshape((1,) * (2 - len(batch)) + x.shape)
        return x.reshape(-1, batch[-1], *x.shape[-2:])

    s4 = as4(s, batch) if isinstance(s, Tensor) else None
    ptensor = param if isinstance(param, Tensor) else None
    # the mask and times the backward reads again (an inference tensor cannot be saved, nor
    # changed in place outside inference mode)
    kept = (structure.get("attn_mask"), *(structure["timestamps"] or ()))
    kept = [x for x in kept if isinstance(x, Tensor) and not x.is_inference()]
    out = _Blockwise.apply(four(q), s4, four(ka), four(v), ptensor, four(c), plan, *kept)
    return out.reshape(*batch, *out.shape[-2:])
