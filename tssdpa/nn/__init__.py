"""Attention layers and Transformer blocks (``nn.Module`` tier)."""

from tssdpa.nn.attention import ProjectionMultiheadAttention
from tssdpa.nn.blocks import DecoderBlock, EncoderBlock

__all__ = ["DecoderBlock", "EncoderBlock", "ProjectionMultiheadAttention"]
