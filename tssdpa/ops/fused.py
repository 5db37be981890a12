"""The ``"fused"`` backend without a decay: torch's attention kernels on augmented vectors.

Because ``-||q-k||²/2σ² = (q·k - ||k||²/2)/σ² - ||q||²/2σ²`` and the last term is constant
along a row, the projection weights are a softmax of ``q·k/σ²`` plus a per-key term. Two forms
hand that to torch (``c`` the key mean, detached; the distances do not depend on it):

* **column form**, any mask, σ and gradient: ``q~ = [q - c, 1]``, ``k~ = [k - c, -||k-c||²/2]``
  and v zero-padded to one width, through ``F.scaled_dot_product_attention`` (or, on the CPU
  without a mask, the CPU flash kernel directly);
* **bias form**, CPU, no mask, σ a float or one per head, no gradient wanted for k or σ:
  ``q - c`` and ``k - c`` at their own width E and the key term as an additive ``(..., 1, S)``
  float mask, which the CPU flash kernel broadcasts over the rows. The kernel then does the
  arithmetic of standard SDPA at width E, not E + 1. (The kernel gives no gradient for its
  mask, so a differentiable key or σ takes the column form.)

Head widths (checked for torch 2.13): the CPU flash kernel takes any width but one for q, k
and v (otherwise it raises, and ``F.scaled_dot_product_attention`` silently runs its O(L·S)
math kernel instead); the CUDA flash and memory-efficient kernels want a multiple of 8 as well.
So on the CPU the column form is ``max(E + 1, Ev)`` wide (65 for E = 64, where a multiple of 8
would be 72: the kernel's time grows with the width), elsewhere rounded up to a multiple of 8.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from tssdpa.ops.blockwise import _OnceDifferentiable
from tssdpa.ops.structure import combine_mask

__all__ = ["augment", "centred_keys", "fused_attention"]

_CPU_FLASH = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
_CPU_FLASH_BWD = getattr(
    torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu_backward", None
)


def _width(e: int, ev: int, device: torch.device) -> int:
    """One head width for q~, k~ and v (see the module docstring)."""
    w = max(e + 1, ev)
    return w if device.type == "cpu" else -(-w // 8) * 8


def _cpu_flash_ok(q: Tensor, k: Tensor, v: Tensor, dropout_p: float) -> bool:
    # The CPU flash kernel has no dropout, and dies on a zero-sized dimension (SIGFPE for L = 0
    # in torch 2.13); F.scaled_dot_product_attention handles those.
    return (
        _CPU_FLASH is not None
        and _CPU_FLASH_BWD is not None
        and q.device.type == "cpu"
        and q.dtype in (torch.float32, torch.float64)
        and dropout_p == 0.0
        and min(q.numel(), k.numel(), v.numel()) > 0
    )


def _as4(t: Tensor | None) -> Tensor | None:
    """(..., L, E) as the (B, H, L, E) the CPU flash kernels take (leading dims flattened),
    its last dim contiguous: the kernels read rows as dense runs and gave garbage for a
    transposed view such as ``x.mT`` (other strides, zero ones of ``expand`` too, they take)."""
    if t is None:
        return t
    if t.stride(-1) != 1 and t.shape[-1] > 1:
        t = t.contiguous()
    if t.dim() == 4:
        return t
    return t.reshape(-1, *t.shape[-3:]) if t.dim() > 4 else t[(None,) * (4 - t.dim())]


def _flash_cpu(q, k, v, is_causal, mask, scale, with_lse=False):
    """The CPU flash kernel's output (and its log-sum-exp, (..., L))."""
    out, lse = _CPU_FLASH(
        _as4(q), _as4(k), _as4(v), 0.0, is_causal, attn_mask=_as4(mask), scale=scale
    )
    out = out.reshape(*q.shape[:-1], out.shape[-1])
    return (out, lse.reshape(q.shape[:-1])) if with_lse else out


def _flash_cpu_backward(dout, q, k, v, out, lse, is_causal, scale):
    """Gradients for q, k, v of the CPU flash kernel (no mask), shaped like them."""
    grads = _CPU_FLASH_BWD(
        _as4(dout), _as4(q), _as4(k), _as4(v), _as4(out), _as4(lse[..., None])[..., 0], 0.0,
        is_causal, scale=scale,
    )  # fmt: skip
    return tuple(g.reshape(t.shape) for g, t in zip(grads, (q, k, v), strict=True))


def _zeros(x: Tensor, n: int) -> Tensor:
    """n zero columns beside x, as a broadcast view (no memory, no fill)."""
    return x.new_zeros(()).expand(*x.shape[:-1], n)


def centred_keys(key: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``(c, k - c, ||k - c||²)``: the key mean (..., 1, E), the centred keys and their
    squared norms (..., S, 1). Distances are translation invariant; centring on the key mean
    keeps the expanded terms small for signals with an offset. c is detached: the output does
    not depend on it."""
    c = key.detach().mean(dim=-2, keepdim=True)
    kc = key - c
    return c, kc, kc.square().sum(dim=-1, keepdim=True)


def augment(
    query: Tensor, key: Tensor, width: int, sig2=None, scale: float = 1.0
) -> tuple[Tensor, Tensor]:
    """q~ = [(q-c)/s, 1/s, 0…], k~ = [k-c, -||k-c||²/2, 0…] with ``s = sig2`` (``1/scale``
    when None), so q~·k~ = (-||q-k||²/2 + f(q))/s. Zero columns pad both to ``width``; they
    change no dot product. ``sig2``: σ², (..., 1, 1) per head or (..., L, 1) per query row;
    ``scale``: 1/σ² of a float σ."""
    c, kc, n2 = centred_keys(key)
    qc = query - c
    pad = width - qc.shape[-1] - 1
    if sig2 is None:
        qc = qc * scale if scale != 1.0 else qc
        one = qc.new_full((), scale).expand(*qc.shape[:-1], 1)
    else:  # the subtraction first: (q - c)/σ² keeps the centring's precision, q/σ² - c/σ² not
        qc, one = qc / sig2, sig2.reciprocal().expand(*qc.shape[:-1], 1)
    qa = torch.cat([qc, one, _zeros(qc, pad)], dim=-1)
    ka = torch.cat([kc, -0.5 * n2, _zeros(kc, pad)], dim=-1)
    return qa, ka


def _sig2(sigma):
    """``(σ² as a tensor or None, 1/σ²)``. Either way the factor is folded into the queries
    and the kernels run at scale 1: given as their scale, 1/σ² multiplied logits the kernels'
    backward formed with another rounding than their forward, and where the logits are large
    (σ = 0.01 on data of spread 100: 1e8) the recomputed weights came out exp(±hundreds):
    inf gradients for v, NaN for q and k, with the forward exact."""
    if isinstance(sigma, Tensor):
        return sigma.square(), 1.0
    return None, 1.0 / sigma / sigma  # 1e300: 0, where sigma**2 overflows


def _bias_form(q, k, v, sigma, is_causal) -> Tensor:
    """CPU flash kernel at width max(E, Ev), the key term as a broadcast (..., 1, S) mask."""
    sig2, scale = _sig2(sigma)
    c, kc, n2 = centred_keys(k)
    qc, bias = q - c, n2.transpose(-1, -2)  # bias (..., 1, S): ||k - c||²
    if sig2 is None:
        qc, bias = (qc * scale if scale != 1.0 else qc), bias * (-0.5 * scale)
    else:  # per head: (..., 1, 1) divides the queries and the key term alike
        qc, bias = qc / sig2, bias / (-2.0 * sig2)
    e, ev = q.shape[-1], v.shape[-1]
    if e < ev:
        qc, kc = F.pad(qc, (0, ev - e)), F.pad(kc, (0, ev - e))
    elif ev < e:
        v = F.pad(v, (0, e - ev))
    out = _flash_cpu(qc, kc, v, is_causal, bias, 1.0)
    return out[..., :ev] if e > ev else out


class _ColumnFlash(torch.autograd.Function):
    """The column form on the CPU flash kernels, with a hand-written backward.

    Autograd through ``augment`` would run a dozen element-wise passes over L×E tensors
    (cat, pad, the square and its backward, the zero-padded output gradient); here q~, k~ and
    v~ are written once into buffers of width W = max(E + 1, Ev), and the backward needs one
    extra pass: ``dk = dk~[:E] - dk~[E] · (k - c)`` (the chain rule through -||k - c||²/2).
    ``sig2``: None (a float σ: q~ multiplied by ``scale`` = 1/σ²) or σ², (..., 1, 1) or
    (..., L, 1), dividing q~ row by row; then ``dσ² = -Σ_e dq~·q~ / σ²``. The kernels run
    at scale 1 either way (see :func:`_sig2`).
    """

    @staticmethod
    def forward(ctx, q, k, v, sig2, scale, is_causal, anchor=(None,)):
        e, ev = q.shape[-1], v.shape[-1]
        w = max(e + 1, ev)
        c = k.mean(dim=-2, keepdim=True)  # (..., 1, E); the output does not depend on it
        qa = q.new_empty(*q.shape[:-1], w)  # (..., L, W)
        ka = k.new_empty(*k.shape[:-1], w)  # (..., S, W)
        torch.sub(q, c, out=qa[..., :e])
        kc = torch.sub(k, c, out=ka[..., :e])
        ka[..., e] = torch.linalg.vecdot(kc, kc).mul_(-0.5)
        if w > e + 1:  # values wider than E + 1: zero columns, which change no dot product
            qa[..., e + 1 :], ka[..., e + 1 :] = 0.0, 0.0
        if sig2 is None:  # the float σ's 1/σ² folded in like a tensor σ (see _sig2)
            if scale != 1.0:
                qa[..., :e].mul_(scale)
            qa[..., e] = scale
        else:
            qa[..., :e].div_(sig2)
            qa[..., e : e + 1] = sig2.reciprocal()
        va = v
        if ev != w:
            va = v.new_empty(*v.shape[:-1], w)  # (..., S, W)
            va[..., :ev], va[..., ev:] = v, 0.0
        out, lse = _flash_cpu(qa, ka, va, is_causal, None, 1.0, with_lse=True)
        ctx.save_for_backward(qa, ka, va, out, lse, sig2)
        ctx.anchor = anchor[0]  # in a tuple: no input of this Function, kept off its graph
        ctx.args = (scale, is_causal, e, ev)
        return out[..., :ev] if ev != w else out

    @staticmethod
    def backward(ctx, dout):
        with torch.no_grad():
            grads = _ColumnFlash._backward(ctx, dout)
        # create_graph=True: torch's once_differentiable hung its error node off detached
        # copies of the gradients, so autograd.grad by a weight that q or k came from (a
        # gradient penalty) followed the weight's other paths, pruned the node, and gave a
        # wrong second derivative without a word. ``anchor``, a zero hung off the inputs by
        # the caller (no copy of them kept), is on every path; its backward raises
        anchor = ctx.anchor
        if not torch.is_grad_enabled() or anchor is None:
            return grads
        return tuple(g if g is None else g + anchor.to(g.dtype) for g in grads)

    @staticmethod
    def _backward(ctx, dout):
        qa, ka, va, out, lse, sig2, *_ = ctx.saved_tensors
        scale, is_causal, e, ev = ctx.args
        if ev != out.shape[-1]:
            d = dout.new_empty(out.shape)  # (..., L, W)
            d[..., :ev], d[..., ev:] = dout, 0.0
            dout = d
        dqa, dka, dva = _flash_cpu_backward(dout, qa, ka, va, out, lse, is_causal, 1.0)
        dk = torch.addcmul(dka[..., :e], dka[..., e : e + 1], ka[..., :e], value=-1.0)
        dq, dsig2 = dqa[..., :e], None
        if sig2 is None and scale != 1.0:
            dq = dq * scale
        elif sig2 is not None:
            dq = dq / sig2
            if ctx.needs_input_grad[3]:
                dsig2 = torch.linalg.vecdot(dqa, qa).unsqueeze(-1).div_(sig2).neg_()
                dsig2 = dsig2.sum_to_size(sig2.shape)
        return dq, dk, dva[..., :ev], dsig2, None, None, None


def _needs_bias_grad(k: Tensor, sigma) -> bool:
    return torch.is_grad_enabled() and (
        k.requires_grad or (isinstance(sigma, Tensor) and sigma.requires_grad)
    )


def fused_attention(
    query, key, value, sigma, allowed, bias, is_causal_only, dropout_p
) -> Tensor:  # fmt: skip
    """Projection SDPA on torch's fused kernels (no decay; see the module docstring).

    ``sigma``: a Python float or a tensor, (..., 1, 1) per head or (..., L, 1) per query
    row; either is folded into the queries, and the kernels run at scale 1. ``allowed`` / ``bias``:
    the time structure (None, None without one); ``is_causal_only``: causality is the whole
    structure, given to the kernel as its flag."""
    if allowed is None and bias is None and _cpu_flash_ok(query, key, value, dropout_p):
        per_row = isinstance(sigma, Tensor) and sigma.shape[-2] > 1
        if per_row or _needs_bias_grad(key, sigma):
            sig2, scale = _sig2(sigma)
            live = [t for t in (query, key, value, sig2) if isinstance(t, Tensor)]
            anchor = None
            if torch.is_grad_enabled() and any(t.requires_grad for t in live):
                anchor = _OnceDifferentiable.apply(*live)  # see _ColumnFlash.backward
            return _ColumnFlash.apply(query, key, value, sig2, scale, is_causal_only, (anchor,))
        return _bias_form(query, key, value, sigma, is_causal_only)
    ev = value.shape[-1]
    width = _width(query.shape[-1], ev, query.device)
    sig2, scale = _sig2(sigma)
    qa, ka = augment(query, key, width, sig2, scale)  # (..., L, width), (..., S, width)
    value = F.pad(value, (0, width - ev)) if width != ev else value
    mask = None
    empty = None
    if allowed is not None and not is_causal_only:
        # Rows with no allowed key are opened up (keeping the kernel finite) and zeroed after;
        # done unconditionally, so no device→host read decides it.
        empty = ~allowed.any(dim=-1, keepdim=True)
        mask = combine_mask(allowed | empty, bias)
    elif bias is not None:
        mask = bias
    if mask is not None and mask.dim() > 2:
        batch = torch.broadcast_shapes(qa.shape[:-2], mask.shape[:-2])
        qa, ka, value = (t.expand(*batch, *t.shape[-2:]) for t in (qa, ka, value))
    out = F.scaled_dot_product_attention(
        qa, ka, value, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal_only, scale=1.0
    )[..., :ev]
    if empty is not None:
        out = out.masked_fill(empty, 0.0)
    return out
