"""The explicit, obviously correct projection SDPA: the ``backend="math"`` reference.

Distances are formed as differences (never through the ``q·k`` expansion), masks are applied
as ``-inf`` logits, rows are normalised with a softmax, and a row with no allowed key gives
zeros. Everything here works in float64 as well as float32, and is what the fused path in
:mod:`tssdpa.ops.projection` is tested against.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor


def distances(query: Tensor, key: Tensor) -> Tensor:
    """``||q_i - k_j||`` for every pair, from differences.  # (..., L, S)

    ``torch.cdist`` with ``donot_use_mm_for_euclid_dist`` subtracts coordinates instead of
    expanding ``||q||² + ||k||² - 2 q·k``, so small distances between large vectors keep their
    precision, and memory stays O(L·S) rather than O(L·S·E).
    """
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    if 0 in (query.shape[-2], key.shape[-2], query.shape[-1], *batch):  # no -1 to reshape by;
        # without coordinates every distance is 0
        out = query.new_zeros(*batch, query.shape[-2], key.shape[-2])
        return out + 0.0 * (query.sum() + key.sum())  # in the graph: zero gradients
    q = query.expand(*batch, *query.shape[-2:]).reshape(-1, *query.shape[-2:])
    k = key.expand(*batch, *key.shape[-2:]).reshape(-1, *key.shape[-2:])
    d = _Distances.apply(q, k)
    return d.reshape(*batch, q.shape[-2], k.shape[-2])


class _Distances(torch.autograd.Function):
    """``torch.cdist``'s forward with a backward of two matrix products: O(L·S) memory.

    torch's own CUDA backward of cdist builds an (L, S, E) buffer per batch entry (17 GB at
    L = S = 4096, E = 64 and four heads) and failed with an illegal memory access there (H100,
    torch 2.11). The gradient ``Σ_j w_ij (q_i - k_j)``, ``w = grad / d`` (zero where d = 0, as
    cdist has it), is formed on data centred on the key mean, so that the two products do
    not cancel the offset of signals far from zero; the backward is itself differentiable, and
    ``torch.func`` transforms work through it. (The products follow torch's float32 matmul
    precision: with TF32 allowed, the gradients carry its rounding.)
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(q: Tensor, k: Tensor) -> Tensor:  # (B, L, E), (B, S, E) -> (B, L, S)
        return torch.cdist(q, k, p=2.0, compute_mode="donot_use_mm_for_euclid_dist")

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.save_for_backward(*inputs, output)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, Tensor]:
        q, k, d = ctx.saved_tensors
        positive = d > 0
        w = torch.where(positive, grad / torch.where(positive, d, 1.0), 0.0)  # (B, L, S)
        c = k.detach().mean(dim=-2, keepdim=True)  # the gradient does not depend on c
        # under autocast cdist answers in float32 whatever the inputs: one dtype for the products
        qc, kc = (q - c).to(w.dtype), (k - c).to(w.dtype)
        grad_q = qc * w.sum(dim=-1, keepdim=True) - w @ kc  # (B, L, E)
        grad_k = kc * w.sum(dim=-2).unsqueeze(-1) - w.transpose(-1, -2) @ qc  # (B, S, E)
        return grad_q.to(q.dtype), grad_k.to(k.dtype)


class _ShiftedSquare(torch.autograd.Function):
    """``-(e - m)(e + m) / 2`` = ``-(e² - m²)/2`` for (..., L, S) ``e`` and a detached
    (..., L, 1) row shift ``m``: the logits ``-e²/2`` up to a constant per row, whose product
    form stays finite where e² overflows (the far keys' logits go to -inf, the nearest key's
    is 0). Its gradient is ``-e`` as that of ``-e²/2``, saved as the square would save it
    (the two factors are formed in the forward pass only); differentiable twice."""

    generate_vmap_rule = True

    @staticmethod
    def forward(e: Tensor, m: Tensor) -> Tensor:
        # at most 0: a key left out of the row's shift (masked, or a -inf bias) nearer than
        # its usable keys would be positive, and +inf + (-inf) in the bias NaN
        out = torch.sub(e, m)
        return out.mul_(e + m).mul_(-0.5).clamp_max_(0.0)  # (clamp_ has no vmap rule)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:
        (e,) = ctx.saved_tensors
        return -grad * e, None


def power_of_two_scale(query: Tensor, key: Tensor) -> Tensor:
    """A power of two near the largest finite magnitude of ``query`` and ``key`` (1 when
    empty or all zero), as a detached 0-d tensor (no host sync); dividing by it is exact.
    NaN / inf entries are passed over: a NaN query gave NaN here, hence no scale, and the
    distances of every other row over- or underflowed with data near 1e±25 in float32."""
    m = torch.zeros((), dtype=query.dtype, device=query.device)
    for t in (query, key):
        if t.numel():
            # in place on abs's own copy: a second full-size copy made the call ~50% slower
            m = torch.maximum(m, t.detach().abs().nan_to_num_(0.0, posinf=0.0).amax())
    return torch.ldexp(torch.ones_like(m), torch.frexp(m).exponent)


def squared_distances(query: Tensor, key: Tensor) -> Tensor:
    """``||q_i - k_j||²`` for every pair, from differences.  # (..., L, S)"""
    return distances(query, key).square()


def masked_softmax(logits: Tensor, allowed: Tensor | None) -> Tensor:
    """Row softmax over allowed entries (every entry when ``allowed`` is None). A row with no
    usable entry -- none allowed, or a -inf logit (a -inf bias) in every allowed one -- is all
    zeros with zero gradients, not NaN: a row with no usable key, as the fused path and
    :func:`~tssdpa.ops.projection_sdpa` give it."""
    if allowed is not None:
        logits = logits.masked_fill(~allowed, float("-inf"))
    if logits.shape[-1] == 0:  # no key at all: nothing to normalise
        return torch.softmax(logits, dim=-1)
    # a row whose largest logit is -inf has none usable (a NaN logit spoils its row: its max is
    # NaN); its logits made finite keep the softmax and its gradient finite, then it is zeroed.
    # Row maxima and two selections: a mask of the logits' size and two fills over it made the
    # math reference 2.3 times slower without a mask (43 -> 100 ms at 4 x 1024 x 1024, CPU)
    empty = logits.detach().amax(dim=-1, keepdim=True) == float("-inf")  # (..., L, 1)
    weights = torch.softmax(torch.where(empty, 0.0, logits), dim=-1)
    return torch.where(empty, 0.0, weights)


def projection_weights_math(
    query: Tensor,
    key: Tensor,
    sigma: Tensor | float,
    allowed: Tensor | None,
    bias: Tensor | None,
) -> Tensor:
    """Projection weights ``z_ij ∝ exp(-||q_i-k_j||²/2σ_i² + bias_ij)`` over allowed j.

    ``sigma`` is a float or broadcasts as ``(..., 1, 1)`` (per head) or ``(..., L, 1)`` (per
    query row: the logits are divided row by row); ``allowed`` (bool) and ``bias`` (additive
    log weight) broadcast as ``(..., L, S)``.
    """
    # Distances of data rescaled by a power of two c (exact), then (d/σ)² rather than d²/σ²:
    # float32 data near 1e±30 with a σ of the same scale would under- or overflow in the
    # squares (cdist's too) though the ratio is of order one.
    c = power_of_two_scale(query, key)
    qs, ks = query / c, key / c
    d = distances(qs, ks)  # (..., L, S)
    # e = d/σ, each row shifted by its nearest usable key's e_min: a row's softmax does not
    # change, but its largest logit is the nearest key's 0 + bias, where -(e²)/2 was -inf in
    # every column for σ far below the distances (1e-21 in float32) and the softmax NaN; the
    # row's weight goes to its nearest keys instead, the limit σ -> 0 (_ShiftedSquare).
    e = d * _inverse_width(qs, ks, c, sigma, d.dtype)
    usable = allowed
    if bias is not None:
        finite = torch.isfinite(bias)
        usable = finite if usable is None else usable & finite
    ee = e.detach() if usable is None else torch.where(usable, e.detach(), float("inf"))
    e_min = ee.amin(dim=-1, keepdim=True) if ee.shape[-1] else ee.new_zeros(*ee.shape[:-1], 1)
    e_min = torch.where(torch.isfinite(e_min), e_min, 0.0)  # a row with no usable key
    logits = _ShiftedSquare.apply(e, e_min)  # (..., L, S)
    if bias is not None:
        logits = logits + bias
    return masked_softmax(logits, allowed)


def _inverse_width(qs: Tensor, ks: Tensor, c: Tensor, sigma, dtype) -> Tensor:
    """``c/σ``, the factor from the distances of the rescaled data ``qs``, ``ks`` to d/σ:
    (..., L, 1) or broadcastable to it, in ``dtype``. Formed as ``exp(log c - log σ)`` in
    float64 (float32 on MPS, which has none), so that its σ gradient never meets 0 * inf
    (``-c/σ²`` overflowed for a tiny σ), and capped per row where d/σ could overflow: at a
    quarter of the dtype's largest value over a bound on the row's finite distances,
    ``||q_i|| + max ||k_j||`` over the finite keys (a NaN or inf query spoils its own row
    only). The weights are one-hot long before the cap: it changes none of them."""
    wide = torch.float32 if c.device.type == "mps" else torch.float64
    kn = ks.detach().norm(dim=-1)  # (..., S)
    kn = torch.where(torch.isfinite(kn), kn, 0.0)
    k_max = kn.amax(dim=-1, keepdim=True) if kn.shape[-1] else kn.new_zeros(*kn.shape[:-1], 1)
    bound = qs.detach().norm(dim=-1, keepdim=True) + k_max.unsqueeze(-1)  # (..., L, 1)
    log_cap = torch.log(torch.finfo(dtype).max / (4.0 * bound.to(wide).clamp(min=1.0)))
    log_sigma = sigma.to(wide).log() if isinstance(sigma, Tensor) else math.log(sigma)
    return torch.exp(torch.minimum(c.to(wide).log() - log_sigma, log_cap)).to(dtype)


def projection_sdpa_math(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    sigma: Tensor | float,
    allowed: Tensor | None,
    bias: Tensor | None,
    dropout_p: float = 0.0,
) -> Tensor:
    """Weighted mean of ``value`` rows with :func:`projection_weights_math` weights."""
    weights = projection_weights_math(query, key, sigma, allowed, bias)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ value  # (..., L, Ev)
