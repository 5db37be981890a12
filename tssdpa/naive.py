"""Deprecated module path: the reference lives in :mod:`tssdpa.ops.reference` (removed next
release)."""

import warnings

from tssdpa.ops.reference import (  # noqa: F401
    masked_softmax,
    projection_sdpa_math,
    projection_weights_math,
    squared_distances,
)

warnings.warn(
    "tssdpa.naive is deprecated; import from tssdpa.ops.reference",
    DeprecationWarning,
    stacklevel=2,
)
