"""Deprecated module path: the operator lives in :mod:`tssdpa.ops` (removed next release)."""

import warnings

from tssdpa.ops.projection import (  # noqa: F401
    BACKENDS,
    FUSED_MAX_LOGIT_ERROR,
    WINDOW_BLOCK,
    projection_sdpa,
    projection_weights,
)
from tssdpa.ops.structure import combine_mask, time_structure  # noqa: F401

warnings.warn(
    "tssdpa.functional is deprecated; import from tssdpa or tssdpa.ops",
    DeprecationWarning,
    stacklevel=2,
)
