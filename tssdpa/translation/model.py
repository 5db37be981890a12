"""The encoder–decoder Transformer of the Keras English→Spanish example, on tssdpa layers.

Token + learned positional embeddings, one :class:`tssdpa.nn.EncoderBlock` and one
:class:`tssdpa.nn.DecoderBlock` (post-LayerNorm, ReLU feed-forward), dropout before the output
layer. ``attention`` switches all three attention sites between standard softmax attention and
projection attention (Sanger's Gaussian-distance kernel).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Literal

import torch
from torch import Tensor, nn

from tssdpa.checks import check_choice
from tssdpa.nn import DecoderBlock, EncoderBlock
from tssdpa.ops import BACKENDS

AttentionKind = Literal["standard", "projection"]
AttentionValue = Literal["separate", "key"]


class TokenAndPositionEmbedding(nn.Module):
    """Sum of a token embedding and a learned embedding of the position 0..max_length-1."""

    def __init__(self, vocab_size: int, max_length: int, embed_dim: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, embed_dim)
        self.positions = nn.Embedding(max_length, embed_dim)
        self.max_length = max_length

    def forward(self, ids: Tensor) -> Tensor:
        length = ids.shape[-1]
        if length > self.max_length:
            raise ValueError(f"sequence of {length} tokens exceeds max_length={self.max_length}")
        positions = torch.arange(length, device=ids.device)
        return self.tokens(ids) + self.positions(positions)  # (B, T, E)


class TranslationTransformer(nn.Module):
    """Sequence-to-sequence Transformer (one encoder and one decoder block).

    Args:
        source_vocab_size: Source (English) vocabulary size, padding and ``[UNK]`` included.
        target_vocab_size: Target (Spanish) vocabulary size; width of the output layer.
        sequence_length: Longest source / decoder-input sequence (positional table size).
        embed_dim: Token and positional embedding width (the model width).
        num_heads: Attention heads at every attention site.
        head_dim: Width of each head (Keras ``key_dim``); ``None`` is ``embed_dim // num_heads``.
        feedforward_dim: Hidden width of the ReLU feed-forward layers.
        output_dropout: Dropout before the output layer.
        attention: ``"standard"`` or ``"projection"`` at all three attention sites.
        self_attention_sigma: Projection kernel width σ of encoder and decoder self-attention.
        cross_attention_sigma: Projection kernel width σ of the decoder's cross-attention.
        learn_sigma: Learn σ per head (projection only).
        normalize_qk: Unit-length q and k per head before the projection kernel (projection
            only; ``ProjectionMultiheadAttention(normalize_qk=True)``): bounded logits.
        attention_value: ``"separate"`` (a value projection, as Keras) or ``"key"`` (average the
            projected keys themselves, Sanger's eq. 14 literally).
        padding_mask: Mask padded keys; ``False`` is the paper's "no padding mask" setting.
        attention_backend: ``backend`` of :func:`tssdpa.projection_sdpa`.
        full_precision_attention: Run the attention blocks with autocast disabled (fp32), for
            bf16 runs of projection attention at small σ.
        keras_init: Initialise like Keras (Glorot-uniform dense kernels, zero biases, embeddings
            uniform in ±0.05) instead of the PyTorch defaults.
    """

    def __init__(
        self,
        source_vocab_size: int = 15000,
        target_vocab_size: int = 15000,
        sequence_length: int = 20,
        embed_dim: int = 256,
        num_heads: int = 8,
        head_dim: int | None = 256,
        feedforward_dim: int = 2048,
        output_dropout: float = 0.5,
        attention: AttentionKind = "standard",
        self_attention_sigma: float = 0.01,
        cross_attention_sigma: float = 0.05,
        learn_sigma: bool = False,
        normalize_qk: bool = False,
        attention_value: AttentionValue = "separate",
        padding_mask: bool = True,
        attention_backend: str = "auto",
        full_precision_attention: bool = False,
        keras_init: bool = True,
    ):
        super().__init__()
        for name, value in [
            ("source_vocab_size", source_vocab_size),
            ("target_vocab_size", target_vocab_size),
            ("sequence_length", sequence_length),
            ("embed_dim", embed_dim),
            ("num_heads", num_heads),
            ("feedforward_dim", feedforward_dim),
        ]:
            if value < 1:
                raise ValueError(f"{name} must be positive, got {value}")
        for name, flag in (("padding_mask", padding_mask), ("keras_init", keras_init),
                           ("full_precision_attention", full_precision_attention),
                           ("learn_sigma", learn_sigma),
                           ("normalize_qk", normalize_qk)):  # fmt: skip
            check_choice(flag, name, (True, False))
        # Checked here: projection_sdpa checks it only on the first forward pass, inside
        # Trainer.fit, and a standard-attention model never used it at all.
        check_choice(attention_backend, "attention_backend", BACKENDS)
        if head_dim is not None and head_dim < 1:
            raise ValueError(f"head_dim must be positive or None, got {head_dim}")
        if attention not in ("standard", "projection"):
            raise ValueError(f"attention must be 'standard' or 'projection', got {attention!r}")
        if not 0.0 <= output_dropout < 1.0:
            raise ValueError(f"output_dropout must be in [0, 1), got {output_dropout}")
        for name, value in [
            ("self_attention_sigma", self_attention_sigma),
            ("cross_attention_sigma", cross_attention_sigma),
        ]:
            if not value > 0:
                raise ValueError(f"{name} must be positive, got {value}")
        # Plain values describing the architecture, stored in checkpoints to rebuild the model.
        self.config = {
            "source_vocab_size": source_vocab_size,
            "target_vocab_size": target_vocab_size,
            "sequence_length": sequence_length,
            "embed_dim": embed_dim,
            "num_heads": num_heads,
            "head_dim": head_dim,
            "feedforward_dim": feedforward_dim,
            "output_dropout": output_dropout,
            "attention": attention,
            "self_attention_sigma": self_attention_sigma,
            "cross_attention_sigma": cross_attention_sigma,
            "learn_sigma": learn_sigma,
            "normalize_qk": normalize_qk,
            "attention_value": attention_value,
            "padding_mask": padding_mask,
            "attention_backend": attention_backend,
            "full_precision_attention": full_precision_attention,
            "keras_init": keras_init,
        }
        self.sequence_length = sequence_length
        self.padding_mask = padding_mask
        self.full_precision_attention = full_precision_attention

        def site(sigma: float) -> dict:
            kwargs = {"attention": attention, "head_dim": head_dim, "value": attention_value}
            if attention == "projection":
                kwargs |= {
                    "sigma": sigma,
                    "learn_sigma": learn_sigma,
                    "backend": attention_backend,
                    "normalize_qk": normalize_qk,
                }
            return kwargs

        self.source_embedding = TokenAndPositionEmbedding(
            source_vocab_size, sequence_length, embed_dim
        )
        self.target_embedding = TokenAndPositionEmbedding(
            target_vocab_size, sequence_length, embed_dim
        )
        self.encoder = EncoderBlock(
            embed_dim,
            num_heads,
            feedforward_dim,
            activation="relu",
            norm_first=False,
            attention_kwargs=site(self_attention_sigma),
        )
        self.decoder = DecoderBlock(
            embed_dim,
            num_heads,
            feedforward_dim,
            activation="relu",
            norm_first=False,
            self_attention_kwargs=site(self_attention_sigma),
            cross_attention_kwargs=site(cross_attention_sigma),
        )
        self.output_dropout = nn.Dropout(output_dropout)
        self.output = nn.Linear(embed_dim, target_vocab_size)
        if keras_init:
            self.apply(_keras_init)

    @classmethod
    def from_config(cls, config: dict) -> TranslationTransformer:
        return cls(**config)

    def _attention_precision(self, x: Tensor):
        if self.full_precision_attention and torch.is_autocast_enabled(x.device.type):
            return torch.autocast(x.device.type, enabled=False)
        return nullcontext()

    def source_padding(self, source: Tensor) -> Tensor | None:
        """Key padding mask of ``source`` (True = padding) or None when masking is off."""
        if not self.padding_mask:
            return None
        padding = source == 0
        # An all-padding source (a sentence with no words) would leave softmax rows empty.
        padding[:, 0] = False
        return padding

    def encode(self, source: Tensor) -> tuple[Tensor, Tensor | None]:
        """Encoder output (B, L, E) and the source padding mask (or None)."""
        self._check_ids("source", source)
        padding = self.source_padding(source)
        x = self.source_embedding(source)
        with self._attention_precision(x):
            x = x.float() if self.full_precision_attention else x
            memory = self.encoder(x, key_padding_mask=padding)
        return memory, padding

    def decode(self, target_input: Tensor, memory: Tensor, source_padding: Tensor | None) -> Tensor:
        """Logits (B, T, target_vocab_size) for each decoder input position."""
        self._check_ids("target_input", target_input)
        target_padding = (target_input == 0) if self.padding_mask else None
        y = self.target_embedding(target_input)
        with self._attention_precision(y):
            if self.full_precision_attention:
                y, memory = y.float(), memory.float()
            y = self.decoder(
                y,
                memory,
                tgt_key_padding_mask=target_padding,
                memory_key_padding_mask=source_padding,
                tgt_is_causal=True,
            )
        return self.output(self.output_dropout(y))

    def forward(self, source: Tensor, target_input: Tensor) -> Tensor:
        """Teacher-forced logits (B, T, target_vocab_size)."""
        memory, source_padding = self.encode(source)
        return self.decode(target_input, memory, source_padding)

    @torch.no_grad()
    def greedy_decode(
        self,
        source: Tensor,
        start_id: int,
        end_id: int,
        max_length: int | None = None,
        vocab_size: int | None = None,
    ) -> Tensor:
        """Greedy decoding from ``[start]``; returns generated ids (B, ≤ max_length).

        Each step feeds the whole prefix (causal attention makes that equal to the
        teacher-forced computation); rows that produced ``end_id`` are padded afterwards, and
        decoding stops early once every row has. Only ids below ``vocab_size`` (default: the
        whole output layer) are chosen: a vocabulary built on a small corpus fills fewer
        entries than the configured output layer.
        """
        max_length = self.sequence_length if max_length is None else max_length
        if not 1 <= max_length <= self.sequence_length:
            raise ValueError(
                f"max_length must be in [1, sequence_length={self.sequence_length}], "
                f"got {max_length}"
            )
        outputs = self.output.out_features
        vocab_size = outputs if vocab_size is None else vocab_size
        if not 1 <= vocab_size <= outputs:
            raise ValueError(f"vocab_size must be in [1, {outputs}], got {vocab_size}")
        memory, source_padding = self.encode(source)
        batch = source.shape[0]
        prefix = torch.full((batch, 1), start_id, dtype=torch.long, device=source.device)
        finished = torch.zeros(batch, dtype=torch.bool, device=source.device)
        generated = []
        for _ in range(max_length):
            # An id past the vocabulary (never a training target, but an untrained or briefly
            # trained model picks them) had no word: decoding it raised IndexError.
            logits = self.decode(prefix, memory, source_padding)[:, -1, :vocab_size]
            token = logits.argmax(dim=-1).masked_fill(finished, 0)
            generated.append(token)
            finished |= token == end_id
            prefix = torch.cat([prefix, token[:, None]], dim=1)
            if bool(finished.all()):
                break
        return torch.stack(generated, dim=1)

    @staticmethod
    def _check_ids(name: str, ids: Tensor) -> None:
        if ids.dim() != 2 or ids.dtype not in (torch.int64, torch.int32):
            raise ValueError(
                f"{name} must be an integer tensor (batch, length), got "
                f"{ids.dtype} of shape {tuple(ids.shape)}"
            )


def _keras_init(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.uniform_(module.weight, -0.05, 0.05)
