"""Transformer encoder and decoder blocks built on :class:`ProjectionMultiheadAttention`.

Each block keeps the residual bypass (which, in Sanger's reading, stops the projection from
collapsing the sequence onto one point), LayerNorm after (``norm_first=False``, the original
Transformer and the Keras translation example) or before each sub-layer, and a two-layer
feed-forward network. All tensors are batch first: (B, T, d_model).
"""

from __future__ import annotations

from torch import Tensor, nn

from tssdpa.checks import check_choice
from tssdpa.nn.attention import ProjectionMultiheadAttention

_ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}


def _feed_forward(
    d_model: int, dim_feedforward: int, dropout: float, activation: str
) -> nn.Sequential:
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}")
    return nn.Sequential(
        nn.Linear(d_model, dim_feedforward),
        _ACTIVATIONS[activation](),
        nn.Dropout(dropout),
        nn.Linear(dim_feedforward, d_model),
    )


class _Sublayer(nn.Module):
    """x + f(x) with LayerNorm before f (pre-norm) or after the sum (post-norm)."""

    def __init__(self, d_model: int, dropout: float, norm_first: bool) -> None:
        super().__init__()
        self.norm_first = check_choice(norm_first, "norm_first", (True, False))
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, f) -> Tensor:
        if self.norm_first:
            return x + self.dropout(f(self.norm(x)))
        return self.norm(x + self.dropout(f(x)))


class EncoderBlock(nn.Module):
    """Self-attention + feed-forward, each with a residual bypass and LayerNorm.

    ``attention_kwargs`` go to :class:`ProjectionMultiheadAttention` (``attention``,
    ``sigma``, ``learn_sigma``, ``window``, ``decay``, ``tau``, ``head_dim``, ``value``, ...).
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.0,
        *,
        activation: str = "relu",
        norm_first: bool = False,
        attention_kwargs: dict | None = None,
    ) -> None:
        super().__init__()
        self.self_attn = ProjectionMultiheadAttention(
            d_model, num_heads, dropout=dropout, batch_first=True, **(attention_kwargs or {})
        )
        self.feed_forward = _feed_forward(d_model, dim_feedforward, dropout, activation)
        self.attn_sublayer = _Sublayer(d_model, dropout, norm_first)
        self.ff_sublayer = _Sublayer(d_model, dropout, norm_first)

    def forward(
        self,
        x: Tensor,
        key_padding_mask: Tensor | None = None,
        attn_mask: Tensor | None = None,
        is_causal: bool = False,
        timestamps: Tensor | None = None,
    ) -> Tensor:
        masks = dict(key_padding_mask=key_padding_mask, attn_mask=attn_mask, is_causal=is_causal)

        def attend(h: Tensor) -> Tensor:
            return self.self_attn(h, h, h, need_weights=False, timestamps=timestamps, **masks)[0]

        x = self.attn_sublayer(x, attend)  # (B, T, d_model)
        return self.ff_sublayer(x, self.feed_forward)


class DecoderBlock(nn.Module):
    """Causal self-attention, cross-attention on ``memory``, feed-forward.

    ``self_attention_kwargs`` and ``cross_attention_kwargs`` configure the two attention
    layers separately (e.g. σ = 0.01 for self- and 0.05 for cross-attention).
    """

    def __init__(
        self, d_model: int, num_heads: int, dim_feedforward: int = 2048, dropout: float = 0.0, *,
        activation: str = "relu", norm_first: bool = False,
        self_attention_kwargs: dict | None = None, cross_attention_kwargs: dict | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.self_attn = ProjectionMultiheadAttention(
            d_model, num_heads, dropout=dropout, batch_first=True, **(self_attention_kwargs or {})
        )
        self.cross_attn = ProjectionMultiheadAttention(
            d_model, num_heads, dropout=dropout, batch_first=True, **(cross_attention_kwargs or {})
        )
        self.feed_forward = _feed_forward(d_model, dim_feedforward, dropout, activation)
        self.self_sublayer = _Sublayer(d_model, dropout, norm_first)
        self.cross_sublayer = _Sublayer(d_model, dropout, norm_first)
        self.ff_sublayer = _Sublayer(d_model, dropout, norm_first)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = True,
        timestamps: Tensor | None = None,
        memory_timestamps: Tensor | None = None,
    ) -> Tensor:
        """``x`` (B, T, d_model) attends to itself and to ``memory`` (B, S, d_model).

        ``timestamps`` (B, T) and ``memory_timestamps`` (B, S): the sample times of ``x`` and
        of ``memory``, for the attention layers built with ``tau`` (self-attention reads
        ``timestamps``, cross-attention both); given to a block with no such layer, an error.
        """
        timed = [m.decay_kind == "tau" for m in (self.self_attn, self.cross_attn)]
        if not any(timed) and (timestamps is not None or memory_timestamps is not None):
            raise ValueError("timestamps need an attention layer built with tau=")
        pair = (timestamps, memory_timestamps)
        cross_times = None if any(t is None for t in pair) else pair  # the layer names a lack

        def self_attend(h: Tensor) -> Tensor:
            masks = dict(key_padding_mask=tgt_key_padding_mask, is_causal=tgt_is_causal)
            when = {"timestamps": timestamps} if timed[0] else {}
            return self.self_attn(h, h, h, need_weights=False, **masks, **when)[0]

        def cross_attend(h: Tensor) -> Tensor:
            when = {"timestamps": cross_times} if timed[1] else {}
            masks = dict(key_padding_mask=memory_key_padding_mask)
            return self.cross_attn(h, memory, memory, need_weights=False, **masks, **when)[0]

        x = self.self_sublayer(x, self_attend)  # (B, T, d_model)
        x = self.cross_sublayer(x, cross_attend)
        return self.ff_sublayer(x, self.feed_forward)
