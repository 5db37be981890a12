"""Projection scaled dot-product attention.

Output row i is the weighted mean of value rows j, with weights

    z_ij ∝ exp(-||q_i - k_j||² / 2σ_i²) · w_ij,   normalised over the allowed j,

where ``w_ij`` is the time structure: a causal mask, a finite window (FIR), an exponential
decay ``γ^|i-j|`` or ``exp(-|t_i - t_j| / τ)`` (IIR), and σ_i is one width for all rows, one
per head or one per query row. Because
``-||q-k||²/2σ² = (q·k - ||k||²/2)/σ² - ||q||²/2σ²`` and the last term is constant along a row,
the same weights come out of standard SDPA applied to ``q~ = [q, 1] / σ_i²`` and
``k~ = [k, -||k||²/2]`` with scale 1 (a float σ as well).
That is the ``"fused"`` backend; ``"math"`` (:mod:`tssdpa.ops.reference`) forms the distances
directly and is the reference.
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import warnings

import torch
from torch import Tensor

from tssdpa.ops import reference
from tssdpa.ops.blockwise import blockwise_attention
from tssdpa.ops.fused import centred_keys, fused_attention
from tssdpa.ops.structure import (
    check_attn_mask,
    check_param,
    check_qkv,
    check_sigma_shape,
    check_structure,
    param_tensor,
    time_structure,
)

__all__ = [
    "BACKENDS",
    "FUSED_MAX_LOGIT_ERROR",
    "FUSED_SAFE_MAGNITUDE",
    "WINDOW_BLOCK",
    "projection_sdpa",
    "projection_weights",
]

BACKENDS = ("auto", "fused", "math")

#: ``backend="auto"`` uses the fused kernels only while the estimated rounding error of the
#: expanded logits, ``eps · (max||q-c||·max||k-c|| + max||k-c||²/2) / σ²`` (c the key mean),
#: stays below this many nats; otherwise it falls back to the exact distance computation.
FUSED_MAX_LOGIT_ERROR = 1e-2


# --------------------------------------------------------------------------- fused path


#: whether a device type has autocast, asked once per type: devices without it (meta) raise
#: in is_autocast_enabled, and torch.compile before torch 2.13 cannot trace
#: is_autocast_available, so asking on every call broke the compiled graph there
_AUTOCAST_AVAILABLE = {
    d: torch.amp.is_autocast_available(d) for d in ("cpu", "cuda", "xpu", "mps", "hpu", "meta")
}


def _has_autocast(device: str) -> bool:
    if device not in _AUTOCAST_AVAILABLE:  # another backend: asked on its first call only
        _AUTOCAST_AVAILABLE[device] = torch.amp.is_autocast_available(device)
    return _AUTOCAST_AVAILABLE[device]


def _without_autocast(fn):
    """Run ``fn`` with autocast off on the query's device.

    Under bfloat16 / float16 autocast torch would run the matmuls and SDPA kernels below in
    8- or 11-bit mantissas; the logits are scaled by 1/σ² (1e4 at the paper's σ = 0.01), so
    that rounding turns into errors of whole nats. With autocast off, half inputs are computed
    in float32 as they are without autocast, and the output comes back in the query's dtype.
    """

    @functools.wraps(fn)
    def run(query, *args, **kwargs):
        device = query.device.type if isinstance(query, Tensor) else "cpu"
        on = _has_autocast(device) and torch.is_autocast_enabled(device)
        with torch.autocast(device, enabled=False) if on else contextlib.nullcontext():
            return fn(query, *args, **kwargs)

    return run


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    # Half precision cannot hold the expanded logits (they lose ~eps/σ² nats): use fp32.
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _fused_logit_error(qc: Tensor, kc: Tensor, sigma: Tensor | float) -> float:
    eps = torch.finfo(qc.dtype).eps
    qn = qc.detach().norm(dim=-1).amax() if qc.numel() else qc.new_zeros(())
    kn = kc.detach().norm(dim=-1).amax() if kc.numel() else kc.new_zeros(())
    smin = sigma.detach().amin() if isinstance(sigma, Tensor) else sigma
    return float(eps * (qn * kn + 0.5 * kn * kn) / smin / smin)


#: Magnitudes of q and k the fused path takes as they are; beyond them (float32 squares
#: under- or overflow near 1e±19) q, k and σ are divided by one power of two first.
FUSED_SAFE_MAGNITUDE = (2.0**-30, 2.0**30)


def _scan_values(q: Tensor, k: Tensor, v: Tensor, fused: bool, sig=None) -> float | None:
    """Raise on a NaN or inf in key / value; with ``fused``, the power of two p near the
    largest magnitude of q and k when that lies outside :data:`FUSED_SAFE_MAGNITUDE` (the
    caller divides q, k and σ by it: exact, and the weights depend on ``(q - k) / σ`` only),
    else None. ``sig``: a σ, float or tensor, the fused kernels must take as it is
    (``backend="fused"`` named): raise where the logits could overflow (:func:`_check_fused_sigma`).

    One vectorised pass over each tensor and one device→host read: ``aminmax`` (it propagates
    NaN and shows ±inf) of k and q, the sum of v (finite only when every entry is; an overflow
    is told apart by an exact second check). ``isfinite(x).all()`` and ``abs().amax()`` were
    four passes, 0.3 ms at B·H = 4, L = 512, E = 64 on 2 cores: a fifth of the kernel's time.
    """
    # k holds rows here; with no coordinates (E = 0) every distance is 0 and nothing to scan
    parts = [*(torch.aminmax(k.detach()) if k.numel() else k.new_zeros(2)), v.detach().sum()]
    parts.append(sig.detach().amin().to(v.dtype) if isinstance(sig, Tensor) else v.new_ones(()))
    if fused and q.numel():
        parts += torch.aminmax(q.detach())
    kmin, kmax, vsum, sig_min, *qrange = torch.stack(parts).tolist()
    finite = math.isfinite(kmin) and math.isfinite(kmax)
    if finite and not math.isfinite(vsum):
        finite = bool(torch.isfinite(v).all())  # rare: the sum overflowed
    if not finite:
        # a NaN key or value would not stay in the rows that attend to it: the fused path
        # centres on the mean of all keys, and a zero weight times NaN is NaN in any matmul
        raise ValueError(
            "key / value have NaN or inf entries, which would reach rows that do not attend "
            "to them; replace them by finite values and exclude them with attn_mask (the "
            "filters of tssdpa.filters treat NaN samples as missing themselves)"
        )
    if not all(map(math.isfinite, qrange)):  # rare: a NaN / inf query spoils its own rows
        # only; the others still need the scale of the finite entries
        qrange = [float(q.detach().abs().nan_to_num(0.0, posinf=0.0).amax())]
    m = max(abs(x) for x in (kmin, kmax, *qrange))
    if not fused or m == 0.0:
        return None
    p = math.ldexp(1.0, math.frexp(m)[1])  # as reference.power_of_two_scale
    p = None if FUSED_SAFE_MAGNITUDE[0] <= p <= FUSED_SAFE_MAGNITUDE[1] else p
    s = (sig_min if isinstance(sig, Tensor) else sig or 1.0) / (p or 1.0)
    # a float σ too, where 1/σ² fits (else it is refused by name later) and the logits may not
    if sig is not None and (isinstance(sig, Tensor) or 1 / s / s <= torch.finfo(q.dtype).max):
        _check_fused_sigma(m / (p or 1.0), s, q.shape[-1], q.dtype)
    return p


def _check_fused_sigma(m: float, sig_min: float, e: int, dtype: torch.dtype) -> None:
    """Raise where σ is so far below the data's scale that the fused kernels' logits could
    overflow ``dtype`` (then inf - inf in a row's softmax gives NaN): a bound on ``|q~·k~|``
    from the largest magnitude ``m`` of q and k and the smallest σ, with ``e`` coordinates
    (||q - c||, ||k - c|| <= 2 m sqrt(e)), and on the entries of q~."""
    bound = 6.0 * m * m * e / sig_min / sig_min if sig_min > 0 else math.inf
    big = torch.finfo(dtype).max
    if not (bound <= big and 1.0 / sig_min / sig_min <= big):
        raise ValueError(f"backend='fused' cannot take sigma down to {sig_min:g} with q and k "
                         f"up to {m:g} in magnitude: its logits could overflow {dtype}; use "
                         "backend='auto' or 'math' (the nearest-key limit)")  # fmt: skip


def _projection_sdpa_blockwise(q, k, v, sig, structure, tol, dropout_p=0.0) -> Tensor:
    """Fused path for a decay / timestamps: block by block, no L×S tensor, and no augmented
    or padded copy of q or v (:mod:`tssdpa.ops.blockwise`)."""
    c, kc, n2 = centred_keys(k)
    ka = torch.cat([kc, -0.5 * n2], dim=-1)  # (..., S, E+1)
    del kc, n2
    s = 1.0 / sig.square() if isinstance(sig, Tensor) else 1.0 / sig / sig
    keys = ("is_causal", "window", "decay", "tau", "timestamps", "attn_mask")
    st = {name: structure[name] for name in keys}
    return blockwise_attention(q, c, s, ka, v, st, tol=tol, dropout_p=dropout_p)


# --------------------------------------------------------------------------- public API


def _prepare(query, key, value, sigma, attn_mask, structure, dropout_p, backend, validate):
    """Validate a request; returns ``(q, k, v, sigma, structure)`` in the compute dtype."""
    batch = check_qkv(query, key, value)
    if not isinstance(validate, bool):  # None / 0 skipped every check, "no" kept them
        raise TypeError(f"validate must be True or False, got {validate!r}")
    L, S = query.shape[-2], key.shape[-2]
    sigma = check_param("sigma", sigma, check_values=validate)
    tiny = torch.finfo(_compute_dtype(query.dtype)).tiny if query.is_floating_point() else 0.0
    if not isinstance(sigma, Tensor) and sigma < tiny:  # it would round to 0 in that dtype
        raise ValueError(f"sigma={sigma:g} is below what {_compute_dtype(query.dtype)} holds "
                         f"({tiny:.3g}): compute in float64 or rescale the data")  # fmt: skip
    per_row = check_sigma_shape(sigma, batch, query.dim(), L)
    window, decay, tau, timestamps = check_structure(
        structure["window"],
        structure["decay"],
        structure["tau"],
        structure["timestamps"],
        batch,
        L,
        S,
        check_values=validate,
        dtype=_compute_dtype(query.dtype),
    )
    if attn_mask is not None:
        check_attn_mask(attn_mask, batch, L, S, validate, _compute_dtype(query.dtype))
    if not (isinstance(dropout_p, numbers.Real) and 0.0 <= dropout_p < 1.0):
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")

    dtype = _compute_dtype(query.dtype)
    # A mask or timestamps may add leading dims (per-batch times for shared heads): the
    # result has the broadcast of all of them, as the math path gives it
    extra = [] if timestamps is None else [t.shape[:-1] for t in timestamps]
    if attn_mask is not None:
        extra.append(attn_mask.shape[:-2])
    batch = torch.broadcast_shapes(batch, *extra)
    # One common batch shape: the fused kernels do not broadcast leading dims.
    q = query.to(dtype).expand(*batch, L, query.shape[-1])
    k = key.to(dtype).expand(*batch, S, key.shape[-1])
    v = k if value is None else value.to(dtype).expand(*batch, S, value.shape[-1])
    # A Python float stays one (folded into the queries as 1/σ², no tensor); tensors → (..., 1, 1)
    # per head, or (..., L, 1) per query row (the logits are divided row by row).
    sig = sigma
    if isinstance(sigma, Tensor):
        sig = sigma.to(q.device, dtype) if per_row else param_tensor(sigma, q.device, dtype)
    checked = dict(
        is_causal=structure["is_causal"],
        window=window,
        decay=decay,
        tau=tau,
        timestamps=timestamps,
        attn_mask=attn_mask,
        device=q.device,
        dtype=dtype,
    )
    return q, k, v, sig, checked


def _structure(is_causal, window, decay, tau, timestamps) -> dict:
    if not isinstance(is_causal, bool):  # "no" and tensor(True) were read by truthiness
        raise TypeError(f"is_causal must be True or False, got {is_causal!r}")
    if timestamps is not None and decay is not None and tau is None:
        warnings.warn(
            "decay with timestamps is read as the time constant tau; pass tau= instead "
            "(decay= with timestamps will be removed in the next release)",
            DeprecationWarning,
            stacklevel=3,
        )
        decay, tau = None, decay
    return dict(is_causal=is_causal, window=window, decay=decay, tau=tau, timestamps=timestamps)


def _blocks(L: int, S: int, window: int, is_causal: bool, block: int):
    """Row blocks [a, b) and the key range [j0, j1) a window lets them see."""
    for a in range(0, L, block):
        b = min(a + block, L)
        j0 = max(0, a - window + 1)
        j1 = min(S, b if is_causal else b + window - 1)
        yield a, b, j0, max(j0, j1)


def _rows(sig, a: int, b: int):
    """Rows [a, b) of a per-row σ (..., L, 1); a float or a σ shared by all rows as it is."""
    return sig[..., a:b, :] if isinstance(sig, Tensor) and sig.shape[-2] > 1 else sig


def _projection_sdpa_windowed(q, k, v, sig, structure, dropout_p, block):
    """Fused path for a window without an attn_mask: per row block, only the keys in reach.

    Memory is O(L·(block + W)) instead of O(L·S); each block is an ordinary fused call.
    """
    L, S = q.shape[-2], k.shape[-2]
    ts = structure["timestamps"]
    outs = []
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    for a, b, j0, j1 in _blocks(L, S, structure["window"], structure["is_causal"], block):
        if j1 == j0:  # rows past the last key's reach: zero, as a row with no allowed key
            outs.append(q.new_zeros(*lead, b - a, v.shape[-1]))  # (a kernel call with S = 0
            continue  # gave NaN σ gradients)
        part = dict(structure)
        if ts is not None:
            part["timestamps"] = (ts[0][..., a:b], ts[1][..., j0:j1])
        allowed, bias = time_structure(b - a, j1 - j0, offsets=(a, j0), **part)
        outs.append(
            fused_attention(
                q[..., a:b, :],
                k[..., j0:j1, :],
                v[..., j0:j1, :],
                _rows(sig, a, b),
                allowed,
                bias,
                False,
                dropout_p,
            )
        )
    return torch.cat(outs, dim=-2)  # (..., L, Ev)


#: Row-block size of the windowed fused path (it is used when S > 2 · (block + window)).
WINDOW_BLOCK = 256


@_without_autocast
def projection_sdpa(
    query: Tensor,
    key: Tensor,
    value: Tensor | None = None,
    *,
    sigma: float | Tensor = 1.0,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    window: int | None = None,
    decay: float | Tensor | None = None,
    tau: float | Tensor | None = None,
    timestamps: Tensor | tuple[Tensor, Tensor] | None = None,
    dropout_p: float = 0.0,
    backend: str = "auto",
    validate: bool = True,
    decay_tol: float = 0.0,
) -> Tensor:
    """Projection SDPA: Gaussian-kernel weighted mean of values over allowed keys.

    Parameters
    ----------
    query : Tensor (..., L, E)
    key : Tensor (..., S, E)
    value : Tensor (..., S, Ev), optional
        Rows to average. ``None`` averages the keys themselves (``y = z k``, Sanger eq. 14).
    sigma : float or Tensor
        Kernel width σ > 0. A tensor broadcastable to ``query.shape[:-2]`` gives one σ per
        batch element / head, e.g. ``(H,)``. A tensor with as many dims as ``query`` and last
        dim 1, broadcastable to ``query.shape[:-1] + (1,)``, gives one σ per query row (and
        per batch element / head): row i uses ``exp(-||q_i - k_j||² / 2σ_i²)``; e.g.
        ``(B, H, L, 1)`` or ``(1, 1, L, 1)`` for a query ``(B, H, L, E)``. (Should key / value
        have more leading dims than query, a tensor that fits those dims stays per head: give
        per-row σ the full ``(..., L, 1)`` shape then.) Gradients flow to tensors.
    attn_mask : Tensor, optional
        Broadcastable to (..., L, S). Bool: True = may attend. Float: added to the logits
        (``-inf`` = may not attend). Combined with ``is_causal`` / ``window`` when both given.
    is_causal : bool
        Key j may contribute to row i only when j <= i (top-left aligned, as in torch).
    window : int, optional
        FIR length W: keys with ``0 <= i-j < W`` when causal, ``|i-j| < W`` otherwise.
    decay : float or Tensor, optional
        γ in (0, 1]: weights multiplied by ``γ^(i-j)`` (causal) or ``γ^|i-j|`` (IIR in sample
        steps). Per-head tensors broadcast like ``sigma``; differentiable.
    tau : float or Tensor, optional
        Time constant τ > 0 for irregular sampling: weights multiplied by
        ``exp(-|t_i - t_j| / τ)``; needs ``timestamps``. Exclusive with ``decay``.
    timestamps : Tensor (..., L) or pair (Tensor (..., L), Tensor (..., S)), optional
        Sample times of queries and keys (one shared tensor when L == S). Differences are
        taken in float64. (``decay`` with timestamps is read as ``tau``, deprecated.) Times
        that require grad get it on the math backend (``"auto"`` takes it for them).
    dropout_p : float
        Dropout on the normalised weights (use only while training).
    backend : {"auto", "fused", "math"}
        ``"math"``: explicit distances (reference, exact, O(L·S) memory). ``"fused"``: torch's
        fused SDPA kernels on the augmented vectors (O(L) memory when no mask, window or decay
        is asked for). ``"auto"``: fused unless its estimated logit rounding error exceeds
        :data:`FUSED_MAX_LOGIT_ERROR` nats (small σ relative to the spread of q and k).
        That estimate is one device→host read per call; name the backend to avoid it (under
        ``torch.compile`` it is fused, as a read breaks the graph: a tensor σ small enough to
        overflow 1/σ² then gives non-finite rows). It bounds the forward logits: the fused
        backward's gradients with respect to query and key carry about that error times the
        values' range over σ, absolute, which swamps the tiny gradients of nearly one-hot
        weights (σ well below the keys' spacing). Where they must be exact, use ``"math"``.
    validate : bool
        Scan the values of tensor arguments (σ, decay, τ > 0, NaN in masks and timestamps;
        non-finite keys / values), and on the fused path rescale q, k and σ by one power of
        two when q and k lie outside :data:`FUSED_SAFE_MAGNITUDE` (float32 data near 1e±30
        with a σ of the same scale). Shapes and dtypes are always checked; ``False`` avoids
        device→host reads in hot loops whose parameters are valid by construction (the
        :mod:`tssdpa.nn` layers; traced by ``torch.compile``, where a read breaks the graph,
        it is ``False``), and leaves the scale of q and k to the caller.
    decay_tol : float
        In [0, 1). With ``decay`` / ``tau`` on the fused backend, keys far enough in index or
        time that their weights can hold at most this fraction of a row's total weight are
        skipped (each output coordinate then moves by at most ``decay_tol`` times the range of
        that value coordinate; :mod:`tssdpa.ops.blockwise` states the bound). 0 (the default)
        skips nothing and is exact. Ignored by ``backend="math"`` and with an ``attn_mask``.

    Returns
    -------
    Tensor (..., L, Ev)
        In the dtype of ``query``. float16/bfloat16 inputs are computed in float32. A row
        with no allowed key is zero.

    Examples
    --------
    >>> import torch
    >>> from tssdpa import projection_sdpa
    >>> x = torch.linspace(0, 6.28, 50).sin().reshape(1, 50, 1)
    >>> y = projection_sdpa(x, x, sigma=0.2, is_causal=True, window=8)
    >>> y.shape
    torch.Size([1, 50, 1])
    """
    validate = False if validate is True and torch.compiler.is_compiling() else validate
    q, k, v, sig, structure = _prepare(
        query,
        key,
        value,
        sigma,
        attn_mask,
        _structure(is_causal, window, decay, tau, timestamps),
        dropout_p,
        backend,
        validate,
    )
    if 0 in (*q.shape[:-1], *k.shape[:-1]):  # no keys, no rows or an empty batch: an empty
        out = q.new_zeros(*q.shape[:-1], v.shape[-1])  # row is zeros (q holds the batch)
        inputs = [q, k, v, sig, structure["decay"], structure["tau"]]
        inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
        if inputs:  # zero gradients, not none (sums of empty slices: exactly 0, never NaN)
            out = out + sum(x.reshape(-1)[:0].sum() for x in inputs)
        return out.to(query.dtype)
    scale = (_scan_values(q, k, v, fused=backend != "math", sig=sig if backend == "fused" else None)
             if validate else None)  # fmt: skip
    if scale is not None:
        q, k, sig = q / scale, k / scale, sig / scale
    if not (isinstance(decay_tol, numbers.Real) and 0.0 <= decay_tol < 1.0):
        raise ValueError(f"decay_tol must be in [0, 1), got {decay_tol!r}")
    decayed = structure["decay"] is not None or structure["tau"] is not None
    # the blockwise path reads the mask and the times slice by slice and gives them no gradient
    named = [("attn_mask", structure["attn_mask"])]
    named += [("timestamps", t) for t in structure["timestamps"] or ()]
    tracked = [name for name, x in named if isinstance(x, Tensor) and x.requires_grad]
    if decayed and torch.is_grad_enabled() and tracked:
        if backend == "fused":
            raise ValueError(f"{tracked[0]} wants a gradient, which the fused backend gives "
                             "only without a decay / tau; use backend='math'")  # fmt: skip
        backend = "math"
    # a float σ whose 1/σ² overflows the kernels (no device read; math takes σ -> 0)
    overflows = not isinstance(sig, Tensor) and not 1.0 / sig / sig <= torch.finfo(q.dtype).max
    if backend == "auto" and torch.compiler.is_compiling():  # a device read breaks the graph
        backend = "math" if overflows else "fused"
    elif backend == "auto":
        c = k.detach().mean(dim=-2, keepdim=True)
        exact = _fused_logit_error(q - c, k - c, sig) <= FUSED_MAX_LOGIT_ERROR
        backend = "fused" if exact else "math"
    elif backend == "fused" and overflows:
        raise ValueError(f"backend='fused' cannot take sigma={sig:g}: 1/sigma² overflows "
                         f"{q.dtype}; use 'math' or 'auto' (the nearest-key limit)")  # fmt: skip
    L, S = q.shape[-2], k.shape[-2]
    window = structure["window"]
    if backend == "fused" and decayed:
        # The IIR structure block by block: memory O(L·block) instead of O(L·S).
        out = _projection_sdpa_blockwise(q, k, v, sig, structure, float(decay_tol), dropout_p)
        return out.to(query.dtype)
    if backend == "fused" and window is not None and attn_mask is None:
        if S > 2 * (WINDOW_BLOCK + window):
            out = _projection_sdpa_windowed(q, k, v, sig, structure, dropout_p, WINDOW_BLOCK)
            return out.to(query.dtype)
    causal_only = (
        is_causal
        and window is None
        and attn_mask is None
        and structure["decay"] is None
        and structure["tau"] is None
    )
    if backend == "fused" and causal_only:
        # The kernel takes causality as a flag: build no (L, S) structure at all.
        out = fused_attention(q, k, v, sig, None, None, True, dropout_p)
        return out.to(query.dtype)
    allowed, bias = time_structure(L, S, **structure)
    if backend == "math":
        out = reference.projection_sdpa_math(q, k, v, sig, allowed, bias, dropout_p)
    else:
        out = fused_attention(q, k, v, sig, allowed, bias, False, dropout_p)
    return out.to(query.dtype)


@_without_autocast
def projection_weights(
    query: Tensor, key: Tensor, *, sigma: float | Tensor = 1.0, attn_mask: Tensor | None = None,
    is_causal: bool = False, window: int | None = None, decay: float | Tensor | None = None,
    tau: float | Tensor | None = None, timestamps: Tensor | tuple[Tensor, Tensor] | None = None,
    validate: bool = True,
) -> Tensor:  # fmt: skip
    """The weight matrix z (..., L, S) of :func:`projection_sdpa` (rows sum to 1 or are 0).

    Same arguments and conventions as :func:`projection_sdpa`; always computed exactly.
    """
    q, k, _, sig, structure = _prepare(
        query,
        key,
        None,
        sigma,
        attn_mask,
        _structure(is_causal, window, decay, tau, timestamps),
        0.0,
        "math",
        validate,
    )
    allowed, bias = time_structure(q.shape[-2], k.shape[-2], **structure)
    return reference.projection_weights_math(q, k, sig, allowed, bias).to(query.dtype)
