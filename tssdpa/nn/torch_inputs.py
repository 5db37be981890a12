"""torch's conventions for what reaches a ``nn.MultiheadAttention``, for
:class:`~tssdpa.nn.ProjectionMultiheadAttention`: its masks, and the nested tensors that
``nn.TransformerEncoder`` makes of a padded batch."""

from __future__ import annotations

import torch
from torch import Tensor


def torch_masks(attn_mask, key_padding_mask, B: int, H: int, L: int, S: int, dtype):
    """torch MHA masks → (allowed bool or None, additive float or None), shaped (B,H,L,S)."""
    allowed, add = None, None
    if attn_mask is not None:
        if attn_mask.dim() == 3:
            if attn_mask.shape[0] != B * H:
                raise ValueError(
                    f"attn_mask of shape {tuple(attn_mask.shape)}: 3-D masks must be "
                    f"(batch*num_heads, L, S) = ({B * H}, {L}, {S})"
                )
            attn_mask = attn_mask.reshape(B, H, *attn_mask.shape[-2:])
        if attn_mask.shape[-2:] != (L, S):
            raise ValueError(
                f"attn_mask must be (L, S) = ({L}, {S}) or (batch*num_heads, L, S), got "
                f"{tuple(attn_mask.shape)}"
            )
        if attn_mask.dtype == torch.bool:
            allowed = ~attn_mask  # torch MHA: True = NOT allowed
        else:
            add = attn_mask.to(dtype)
    if key_padding_mask is not None:
        if key_padding_mask.shape != (B, S):
            raise ValueError(
                f"key_padding_mask must be (batch, S) = ({B}, {S}), got "
                f"{tuple(key_padding_mask.shape)}"
            )
        kpm = key_padding_mask[:, None, None, :]  # (B, 1, 1, S)
        if kpm.dtype == torch.bool:
            allowed = ~kpm if allowed is None else allowed & ~kpm
        else:
            add = kpm.to(dtype) if add is None else add + kpm.to(dtype)
    return allowed, add


def _lengths(t: Tensor) -> list[int]:
    return [u.shape[0] for u in t.unbind()]


def attend_nested(attend, query: Tensor, key: Tensor, value: Tensor, *, batch_first: bool,
                  key_padding_mask, need_weights: bool, attn_mask, timestamps,
                  **kwargs) -> tuple[Tensor, None]:  # fmt: skip
    """``attend`` (the layer's forward) on nested (B, ragged length, E) query, key and value:
    padded with zeros, the padded keys masked, the output nested again with the queries'
    lengths. ``nn.TransformerEncoder`` in eval passes its layers such a tensor (made from
    ``src_key_padding_mask``) when it was built around a torch ``nn.MultiheadAttention``,
    even after the layers' ``self_attn`` were replaced."""
    if not all(t.is_nested for t in (query, key, value)):
        raise TypeError("query, key and value must all be nested tensors or none of them")
    if not batch_first:
        raise ValueError("nested tensors need batch_first=True (their first dim is the batch)")
    if query.dim() != 3:
        raise ValueError(f"nested query, key and value must be 3-D, got {query.dim()}-D")
    if attn_mask is not None or key_padding_mask is not None:
        raise ValueError("with nested tensors the lengths are the padding: attn_mask and "
                         "key_padding_mask must be None")  # fmt: skip
    if need_weights:
        raise ValueError("nested tensors need need_weights=False (ragged weights)")
    if timestamps is not None:
        raise ValueError("timestamps cannot be combined with nested tensors")
    lq, lk = _lengths(query), _lengths(key)
    if lk != _lengths(value):
        raise ValueError(f"nested key and value must have the same lengths, got {lk} and "
                         f"{_lengths(value)}")  # fmt: skip
    q, k, v = (torch.nested.to_padded_tensor(t, 0.0) for t in (query, key, value))
    S = k.shape[1]
    padding = torch.arange(S, device=k.device) >= torch.tensor(lk, device=k.device)[:, None]
    out, _ = attend(q, k, v, key_padding_mask=padding, need_weights=False, **kwargs)
    rows = [out[i, :n] for i, n in enumerate(lq)]
    return torch.nested.as_nested_tensor(rows, layout=query.layout), None
