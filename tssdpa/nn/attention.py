"""``ProjectionMultiheadAttention``: a drop-in for ``torch.nn.MultiheadAttention``.

Same constructor, parameter names (so ``load_state_dict`` from a ``nn.MultiheadAttention``
works), forward arguments and mask conventions, plus the projection kernel of
:func:`tssdpa.ops.projection_sdpa`: ``attention="projection"`` (default) or ``"standard"``, kernel
width ``sigma`` (fixed or learned, per head), FIR ``window``, IIR ``decay`` / ``tau``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tssdpa.checks import check_choice, check_int, check_number
from tssdpa.nn.torch_inputs import attend_nested, torch_masks
from tssdpa.ops.projection import BACKENDS, _compute_dtype, projection_sdpa, projection_weights
from tssdpa.ops.reference import masked_softmax
from tssdpa.ops.structure import check_param, combine_mask, time_structure


def _per_head(name: str, x, num_heads: int, dtype, *, upper: float | None = None) -> Tensor:
    """A float or per-head sequence/tensor as a float64 tensor (H,), validated as given and as
    stored in ``dtype`` (beyond its range a value became 0 or inf). A tensor is copied and
    detached: the layer kept the caller's float64 tensor itself as its buffer (an in-place
    change on either side changed the other), or one that required grad as a node of the
    caller's graph (its gradient accumulated there on every backward; deepcopy failed)."""
    try:
        x = x.detach() if isinstance(x, Tensor) else x
        t = torch.as_tensor(x, dtype=torch.float64).reshape(-1).clone()
    except (TypeError, ValueError, RuntimeError):  # a str, None, a ragged list
        raise TypeError(f"{name} must be a float or one float per head, got {x!r}") from None
    try:  # the values as given: the message showed this float64 copy, "tensor([0., 0.], ...)"
        check_param(name, t, upper=upper)
    except ValueError:
        rng = f"(0, {upper}]" if upper is not None else "(0, inf)"
        given = x if isinstance(x, (int, float)) else t.tolist() if t.numel() > 1 else t.item()
        raise ValueError(f"{name} must lie in {rng}, got {given!r}") from None
    if t.numel() == 1:
        t = t.expand(num_heads).clone()
    if t.numel() != num_heads:
        raise ValueError(f"{name} must be a float or have one value per head ({num_heads})")
    try:
        check_param(name, t.to(dtype), upper=upper)
    except ValueError:
        raise ValueError(f"{name} {t.tolist()} is out of the range of dtype {dtype}") from None
    return t


class ProjectionMultiheadAttention(nn.Module):
    """Multi-head attention whose kernel is the projection (Gaussian-distance) weighting.

    Parameters
    ----------
    embed_dim, num_heads, dropout, bias, add_bias_kv, add_zero_attn, kdim, vdim, batch_first,
    device, dtype
        As in :class:`torch.nn.MultiheadAttention`.
    attention : {"projection", "standard"}
        ``"standard"`` is softmax(q·k/√d) attention, identical to ``nn.MultiheadAttention``
        given the same weights; ``"projection"`` uses ``exp(-||q-k||²/2σ²)``.
    sigma : float or sequence of floats
        Kernel width σ, one value or one per head (projection only).
    learn_sigma : bool
        Learn σ per head (parametrised as log σ; projection only).
    window : int, optional
        FIR length: only keys with ``0 <= i-j < window`` (causal) or ``|i-j| < window``.
    decay : float or sequence, optional
        Per-step decay γ in (0, 1]: weights × γ^(i-j). ``learn_decay`` learns it per head
        (parametrised through a sigmoid, so the initial γ must be < 1).
    tau : float or sequence, optional
        Time constant for irregular sampling: weights × exp(-|t_i - t_j|/τ); ``forward`` then
        needs ``timestamps``. ``learn_decay`` learns it (as log τ). Exclusive with ``decay``.
    value : {"separate", "key"}
        ``"key"`` averages the projected keys themselves (Sanger's y = z k): there is no value
        projection and ``in_proj_weight`` has 2·inner rows.
    head_dim : int, optional
        Width of each head (default ``embed_dim // num_heads``); the inner width is
        ``num_heads * head_dim`` (Keras ``key_dim``).
    backend : {"auto", "fused", "math"}
        Passed to :func:`tssdpa.projection_sdpa`.
    normalize_qk : bool
        Projection only: scale each head's q and k to unit length first (the unit-norm q and k
        the paper's distances assume; with ``value="key"`` the averaged keys are the unit ones
        too). ``||q - k||²`` then lies in [0, 4], so the logits are bounded by ``2/σ²``
        whatever the projections learn (σ = 0.3 and 0.5 tried in ``docs/translation.md``).

    It can be the ``self_attn`` (or ``multihead_attn``) of torch's ``nn.TransformerEncoderLayer``
    / ``nn.TransformerDecoderLayer``: torch then calls its ``forward`` in every mode, never its
    fused softmax kernel (see ``_qkv_same_embed_dim``), nested batches included.

    Examples
    --------
    >>> import torch
    >>> from tssdpa.nn import ProjectionMultiheadAttention
    >>> mha = ProjectionMultiheadAttention(16, 4, batch_first=True, sigma=2.0)
    >>> x = torch.randn(2, 10, 16)
    >>> y, w = mha(x, x, x, is_causal=True)
    >>> y.shape, w.shape
    (torch.Size([2, 10, 16]), torch.Size([2, 10, 10]))
    """

    __constants__ = ["batch_first"]

    @property
    def _qkv_same_embed_dim(self) -> bool:
        """False: no fused softmax kernel may take this layer's ``in_proj_weight`` as its q/k/v.

        Outside ``nn.MultiheadAttention`` itself, torch reads this attribute only to decide
        whether ``nn.TransformerEncoderLayer`` (in eval, without grad) may hand its
        ``self_attn``'s packed projections to ``torch._transformer_encoder_layer_fwd`` and
        whether ``nn.TransformerEncoder`` may use nested tensors; that kernel computes
        softmax attention. The layer then failed there (no ``merge_masks``); False makes torch
        call this module's ``forward`` instead, as in training."""
        return False

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device=None,
        dtype=None,
        *,
        attention: str = "projection",
        sigma=1.0,
        learn_sigma: bool = False,
        window: int | None = None,
        decay=None,
        learn_decay: bool = False,
        tau=None,
        value: str = "separate",
        head_dim: int | None = None,
        backend: str = "auto",
        normalize_qk: bool = False,
    ) -> None:
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        # the kernel's parameters in the dtype the kernel computes in: the weights' (torch's
        # default), float32 for half types (projection_sdpa computes those in float32; a
        # decay of 0.999 in bfloat16 is 1). Their log / logit are taken in float64 first
        kernel = {"device": device, "dtype": _compute_dtype(dtype or torch.get_default_dtype())}
        for name, flag in (("bias", bias), ("add_bias_kv", add_bias_kv),
                           ("add_zero_attn", add_zero_attn), ("batch_first", batch_first),
                           ("learn_sigma", learn_sigma), ("learn_decay", learn_decay),
                           ("normalize_qk", normalize_qk)):  # fmt: skip
            check_choice(flag, name, (True, False))  # "False" was read as True
        # sizes and the window as ints >= 1: window=True was a window of 1, head_dim=0 built
        # empty heads, and 8.0 or -1 failed inside torch.empty
        embed_dim, num_heads = check_int(embed_dim, "embed_dim"), check_int(num_heads, "num_heads")
        head_dim, kdim, vdim, window = (
            None if x is None else check_int(x, name)
            for x, name in (
                (head_dim, "head_dim"),
                (kdim, "kdim"),
                (vdim, "vdim"),
                (window, "window"),
            )
        )
        if head_dim is None:
            if embed_dim % num_heads:
                raise ValueError(
                    f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads}) "
                    "unless head_dim is given"
                )
            head_dim = embed_dim // num_heads
        # here, not at the first call: need_weights=True (the default) never reads it
        check_choice(backend, "backend", BACKENDS)
        if attention not in ("projection", "standard"):
            raise ValueError(f"attention must be 'projection' or 'standard', got {attention!r}")
        for name, on in (("normalize_qk", normalize_qk), ("learn_sigma", learn_sigma)):
            if on and attention != "projection":  # a standard layer has no kernel: not ignored
                raise ValueError(f"{name} needs attention='projection'")
        if learn_decay and decay is None and tau is None:  # else silently nothing to learn
            raise ValueError("learn_decay needs a decay= or tau= to start from")
        if value not in ("separate", "key"):
            raise ValueError(f"value must be 'separate' or 'key', got {value!r}")
        if decay is not None and tau is not None:
            raise ValueError("give decay (per step) or tau (time constant), not both")
        # a number first: None or "0.1" raised TypeError('<=' not supported ...) unnamed
        if not 0.0 <= check_number(dropout, "dropout") < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")

        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, head_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._packed_in_proj = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.attention, self.value, self.window, self.backend = attention, value, window, backend
        self.normalize_qk = normalize_qk
        self.add_zero_attn = add_zero_attn
        inner = num_heads * head_dim
        self.inner_dim = inner
        n_proj = 2 if value == "key" else 3

        if self._packed_in_proj:
            self.in_proj_weight = nn.Parameter(torch.empty(n_proj * inner, embed_dim, **fk))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = nn.Parameter(torch.empty(inner, embed_dim, **fk))
            self.k_proj_weight = nn.Parameter(torch.empty(inner, self.kdim, **fk))
            if value == "key":
                self.register_parameter("v_proj_weight", None)
            else:
                self.v_proj_weight = nn.Parameter(torch.empty(inner, self.vdim, **fk))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = nn.Parameter(torch.empty(n_proj * inner, **fk))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(inner, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = nn.Parameter(torch.empty(1, 1, inner, **fk))
            self.bias_v = nn.Parameter(torch.empty(1, 1, inner, **fk))
        else:
            self.bias_k = self.bias_v = None

        # Kernel and time-structure parameters: buffers when fixed (not in state_dict, so a
        # torch nn.MultiheadAttention state_dict loads), parameters when learned.
        self.learn_sigma, self.learn_decay = learn_sigma, learn_decay
        s = _per_head("sigma", sigma, num_heads, kernel["dtype"])
        if learn_sigma:
            self.log_sigma = nn.Parameter(s.log().to(**kernel))
        else:
            self.register_buffer("sigma", s.to(**kernel), persistent=False)
        self.decay_kind = (
            None if decay is None and tau is None else ("tau" if tau is not None else "decay")
        )
        if decay is not None:
            g = _per_head("decay", decay, num_heads, kernel["dtype"], upper=1.0)
            if learn_decay:
                if bool((g >= 1).any()):
                    raise ValueError("a learned decay must start below 1 (sigmoid parametrisation)")
                self.decay_logit = nn.Parameter(torch.logit(g).to(**kernel))
            else:
                self.register_buffer("decay", g.to(**kernel), persistent=False)
        elif tau is not None:
            t = _per_head("tau", tau, num_heads, kernel["dtype"])
            if learn_decay:
                self.log_tau = nn.Parameter(t.log().to(**kernel))
            else:
                self.register_buffer("tau", t.to(**kernel), persistent=False)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        # Same initialisation as torch.nn.MultiheadAttention.
        if self._packed_in_proj:
            nn.init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                if w is not None:
                    nn.init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            nn.init.constant_(self.in_proj_bias, 0.0)
            nn.init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            nn.init.xavier_normal_(self.bias_k)
            nn.init.xavier_normal_(self.bias_v)

    # ------------------------------------------------------------------ kernel parameters

    _KERNEL_TENSORS = ("log_sigma", "sigma", "decay_logit", "decay", "log_tau", "tau")

    def _apply(self, fn, recurse=True):
        # .to(torch.bfloat16), .half(), Lightning's bf16-true cast every float tensor of the
        # module; the kernel's parameters stay in the dtype the kernel computes in (float32 for
        # half types, as with dtype=; in bfloat16 a decay of 0.999 is 1): taken again from
        # their values before the cast, a learned one's gradient too (half on float32: Adam failed)
        before = {name: (t.detach().clone(), None if t.grad is None else t.grad.clone())
                  for name in self._KERNEL_TENSORS
                  if isinstance(t := getattr(self, name, None), Tensor)}  # fmt: skip
        super()._apply(fn, recurse)
        for name, (old, old_grad) in before.items():
            t = getattr(self, name)
            want = _compute_dtype(t.dtype)
            if want == t.dtype:
                continue
            kept = old.to(device=t.device, dtype=want)
            if isinstance(t, nn.Parameter):
                t.data = kept
                if old_grad is not None:
                    t.grad = old_grad.to(device=t.device, dtype=want)
            else:
                self._buffers[name] = kept
        return self

    def kernel_sigma(self) -> Tensor:
        """σ per head, shape (H,)."""
        return self.log_sigma.exp() if self.learn_sigma else self.sigma

    def kernel_decay(self) -> Tensor | None:
        """γ (or τ) per head, shape (H,), or None."""
        if self.decay_kind is None:
            return None
        if not self.learn_decay:
            return self.decay if self.decay_kind == "decay" else self.tau
        # a learned γ or τ no smaller than the dtype's smallest normal number: below a logit
        # of -88.7 (float32) sigmoid gave exactly 0, below a log τ of about -104 exp did, and
        # log 0 x lag 0 (or 0 / τ = 0) made every output and gradient NaN. Beyond the floor the
        # decayed weights are 0 in that dtype anyway (e^-87 next to the lag-0 weight 1)
        logit = self.decay_logit if self.decay_kind == "decay" else self.log_tau
        logit = logit.clamp(min=math.log(torch.finfo(logit.dtype).tiny))
        return torch.sigmoid(logit) if self.decay_kind == "decay" else logit.exp()

    # ------------------------------------------------------------------ forward

    def _project(self, query: Tensor, key: Tensor, value: Tensor):
        inner = self.inner_dim
        b = self.in_proj_bias
        bq, bk, bv = (
            (None, None, None) if b is None else (b[:inner], b[inner : 2 * inner], b[2 * inner :])
        )
        if self._packed_in_proj:
            w = self.in_proj_weight
            wq, wk, wv = w[:inner], w[inner : 2 * inner], w[2 * inner :]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        q = F.linear(query, wq, bq)
        k = F.linear(key, wk, bk)
        v = k if self.value == "key" else F.linear(value, wv, bv)
        return q, k, v

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
        timestamps: Tensor | tuple[Tensor, Tensor] | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend; arguments and returns as :meth:`torch.nn.MultiheadAttention.forward`.

        ``is_causal=True`` applies the causal mask (combined with ``attn_mask`` if given).
        ``timestamps``: (B, L) for self-attention, or a pair ((B, L), (B, S)); needs ``tau``.
        Nested (B, ragged length, E) query, key and value (what ``nn.TransformerEncoder`` makes
        of a padded batch) are attended padded, the padding as ``key_padding_mask``.
        """
        if any(t.is_nested for t in (query, key, value)):
            return attend_nested(self.forward, query, key, value, batch_first=self.batch_first,
                                 key_padding_mask=key_padding_mask, need_weights=need_weights,
                                 attn_mask=attn_mask, timestamps=timestamps, is_causal=is_causal,
                                 average_attn_weights=average_attn_weights)  # fmt: skip
        for name, m in (("attn_mask", attn_mask), ("key_padding_mask", key_padding_mask)):
            if m is not None and m.dtype != torch.bool and not m.is_floating_point():
                # an integer 0/1 mask (a tokenizer's) was added to the logits: it masked nothing
                raise TypeError(f"{name} must be bool (True = masked) or floating point "
                                f"(added to the logits), got {m.dtype}")  # fmt: skip
        if not isinstance(is_causal, bool):
            raise TypeError(f"is_causal must be True or False, got {is_causal!r}")
        batched = query.dim() == 3
        if query.dim() not in (2, 3) or key.dim() != query.dim() or value.dim() != query.dim():
            raise ValueError(
                "query, key and value must all be (L, E) unbatched or 3-D batched, got "
                f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
            )
        if query.shape[-1] != self.embed_dim:
            raise ValueError(
                f"query last dim must be embed_dim={self.embed_dim}, got {query.shape[-1]}"
            )
        if key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            raise ValueError(
                f"key/value last dims must be kdim={self.kdim}, vdim={self.vdim}, got "
                f"{key.shape[-1]}, {value.shape[-1]}"
            )
        if key.shape[:-1] != value.shape[:-1]:  # one value per key
            raise ValueError(
                "key and value must have the same length and batch size, got "
                f"{tuple(key.shape)}, {tuple(value.shape)}"
            )
        batch_axis = 0 if self.batch_first else 1
        if batched and query.shape[batch_axis] != key.shape[batch_axis]:
            raise ValueError(
                f"query and key must have the same batch size (axis {batch_axis}, "
                f"batch_first={self.batch_first}), got {tuple(query.shape)}, {tuple(key.shape)}"
            )
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        B, L, _ = query.shape
        H, Dh = self.num_heads, self.head_dim

        q, k, v = self._project(query, key, value)  # (B, L|S, inner)
        if self.bias_k is not None:
            k = torch.cat([k, self.bias_k.expand(B, 1, -1)], dim=1)
            v = torch.cat([v, self.bias_v.expand(B, 1, -1)], dim=1)
            attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
            key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))
        q, k, v = (x.unflatten(-1, (H, Dh)).transpose(1, 2) for x in (q, k, v))  # (B, H, ·, Dh)
        if self.normalize_qk:
            # .to: under autocast the norm comes out in fp32; the kernel takes one dtype
            q, k = (F.normalize(t, dim=-1).to(t.dtype) for t in (q, k))
            if self.value == "key":
                v = F.normalize(v, dim=-1).to(v.dtype)
        if self.add_zero_attn:
            k = torch.cat([k, k.new_zeros(B, H, 1, Dh)], dim=2)
            v = torch.cat([v, v.new_zeros(B, H, 1, Dh)], dim=2)
            attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
            key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))
        S = k.shape[2]

        allowed, add = torch_masks(attn_mask, key_padding_mask, B, H, L, S, q.dtype)
        mask = combine_mask(allowed, add)
        decay = self.kernel_decay()
        if timestamps is not None:
            if self.decay_kind != "tau":
                raise ValueError("timestamps need the layer to be built with tau=")
            pair = timestamps if isinstance(timestamps, (tuple, list)) else (timestamps, timestamps)
            if not all(isinstance(t, Tensor) for t in pair):  # a numpy array: AttributeError
                raise TypeError("timestamps must be a tensor (B, L) or a pair of tensors "
                                f"((B, L), (B, S)), got {type(timestamps).__name__}")  # fmt: skip
            timestamps = tuple(t if batched else t.unsqueeze(0) for t in pair)
            timestamps = tuple(
                t.unsqueeze(-2) for t in timestamps
            )  # (B, 1, L): broadcast over heads
            if self.add_zero_attn or self.bias_k is not None:
                raise ValueError("timestamps cannot be combined with add_bias_kv / add_zero_attn")
        elif self.decay_kind == "tau":
            raise ValueError("this layer was built with tau=: forward needs timestamps")
        dropout_p = self.dropout if self.training else 0.0
        structure = {
            "is_causal": is_causal,
            "window": self.window,
            "decay": decay if self.decay_kind == "decay" else None,
            "tau": decay if self.decay_kind == "tau" else None,
            "timestamps": timestamps,
        }

        weights = None
        if self.attention == "projection":
            sigma = self.kernel_sigma()
            if need_weights:
                weights = projection_weights(
                    q, k, sigma=sigma, attn_mask=mask, validate=False, **structure
                )
            else:
                out = projection_sdpa(
                    q,
                    k,
                    v,
                    sigma=sigma,
                    attn_mask=mask,
                    dropout_p=dropout_p,
                    backend=self.backend,
                    validate=False,
                    **structure,
                )
        else:
            # the log-weights from γ / τ in float32, then in q's dtype: a bfloat16 structure
            # took γ = 0.999 as 1 and decayed nothing
            allowed, bias = time_structure(
                L, S, attn_mask=mask, device=q.device, dtype=_compute_dtype(q.dtype), **structure
            )
            bias = None if bias is None else bias.to(q.dtype)
            if need_weights:
                logits = (q @ k.transpose(-1, -2)) / math.sqrt(Dh)
                weights = masked_softmax(logits if bias is None else logits + bias, allowed)
            else:
                out = F.scaled_dot_product_attention(
                    q, k, v, attn_mask=combine_mask(allowed, bias), dropout_p=dropout_p
                )
        if weights is not None:
            weights = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
            out = weights @ v
        out = self.out_proj(out.transpose(1, 2).flatten(-2))  # (B, L, E)

        if batched and not self.batch_first:
            out = out.transpose(0, 1)
        if weights is not None and average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out = out.squeeze(0)
            weights = None if weights is None else weights.squeeze(0)
        return out, weights

    def extra_repr(self) -> str:
        s = f"{self.embed_dim}, {self.num_heads}, attention={self.attention!r}"
        if self.attention == "projection":
            s += f", learn_sigma={self.learn_sigma}"
            s += ", normalize_qk=True" if self.normalize_qk else ""
        if self.window is not None:
            s += f", window={self.window}"
        if self.decay_kind is not None:
            s += f", {self.decay_kind}, learn_decay={self.learn_decay}"
        return s
