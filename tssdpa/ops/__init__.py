"""Tensor operations (torch): the projection SDPA operator and its time structure.

- :func:`projection_sdpa`, :func:`projection_weights` — the operator, fused kernels with an
  exact fallback (:mod:`tssdpa.ops.projection`);
- :mod:`tssdpa.ops.blockwise` (with :mod:`tssdpa.ops.blockplan`) — decay / timestamps block
  by block in O(L·block) memory, optionally skipping far keys within ``decay_tol``;
- :mod:`tssdpa.ops.reference` — the obviously correct ``backend="math"`` reference;
- :func:`time_structure`, :func:`combine_mask` and the argument checks
  (:mod:`tssdpa.ops.structure`).
"""

from tssdpa.ops.projection import (
    BACKENDS,
    FUSED_MAX_LOGIT_ERROR,
    WINDOW_BLOCK,
    projection_sdpa,
    projection_weights,
)
from tssdpa.ops.reference import masked_softmax, squared_distances
from tssdpa.ops.structure import combine_mask, time_structure

__all__ = [
    "BACKENDS",
    "FUSED_MAX_LOGIT_ERROR",
    "WINDOW_BLOCK",
    "combine_mask",
    "masked_softmax",
    "projection_sdpa",
    "projection_weights",
    "squared_distances",
    "time_structure",
]
