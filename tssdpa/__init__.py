"""tssdpa: scaled dot-product attention as a signal-processing filter.

Tiers: :func:`projection_sdpa` (tensor op, with the reference in :mod:`tssdpa.naive`) →
:mod:`tssdpa.nn` layers → filters, forecasters and models.
"""

from tssdpa.functional import projection_sdpa, projection_weights

__version__ = "0.1.0"

__all__ = ["projection_sdpa", "projection_weights", "__version__"]
