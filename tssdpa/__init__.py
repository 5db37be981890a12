"""tssdpa: scaled dot-product attention as a signal-processing filter.

Tiers: :func:`projection_sdpa` (tensor op, with the reference in :mod:`tssdpa.naive`) →
:mod:`tssdpa.nn` layers → filters, forecasters and models (:mod:`tssdpa.filters`,
:mod:`tssdpa.baselines`, :mod:`tssdpa.translation`).
"""

from tssdpa.functional import projection_sdpa, projection_weights

__version__ = "0.1.0"

__all__ = [
    "LearnedProjectionFilter",
    "LearnedProjectionForecaster",
    "ProjectionFilter",
    "ProjectionForecaster",
    "__version__",
    "projection_sdpa",
    "projection_weights",
]

# Filters are imported on first use so that `import tssdpa` stays light (no Lightning).
_FROM_FILTERS = {
    "ProjectionFilter",
    "ProjectionForecaster",
    "LearnedProjectionFilter",
    "LearnedProjectionForecaster",
}


def __getattr__(name):
    if name in _FROM_FILTERS:
        import tssdpa.filters

        return getattr(tssdpa.filters, name)
    raise AttributeError(f"module 'tssdpa' has no attribute {name!r}")
