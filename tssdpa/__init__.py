"""tssdpa: scaled dot-product attention as a signal-processing filter.

Tiers, each importing only from the ones before it (``docs/architecture.md``):
:mod:`tssdpa.checks` → :mod:`tssdpa.ops` (the torch operator) → :mod:`tssdpa.nn` (layers) and
:mod:`tssdpa.signal` (the numpy kernel engine) → :mod:`tssdpa.estimators` (the base every
estimator shares) and :mod:`tssdpa.data` → :mod:`tssdpa.baselines` → :mod:`tssdpa.models`
(nets and Lightning systems) → :mod:`tssdpa.filters` → :mod:`tssdpa.compare`,
:mod:`tssdpa.translation` → the ``tssdpa`` command.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the lazy names below are, for type checkers and editors
    from tssdpa.filters import (
        LearnedProjectionFilter,
        LearnedProjectionForecaster,
        ProjectionFilter,
        ProjectionForecaster,
    )
    from tssdpa.ops import projection_sdpa, projection_weights

__version__ = "0.2.0"

__all__ = [
    "LearnedProjectionFilter",
    "LearnedProjectionForecaster",
    "ProjectionFilter",
    "ProjectionForecaster",
    "__version__",
    "projection_sdpa",
    "projection_weights",
]

# Everything is imported on first use, so that `import tssdpa` stays light: the torch operator
# (torch takes seconds to import; the numpy filters never need it) and the estimators.
_FROM_OPS = {"projection_sdpa", "projection_weights"}
_FROM_FILTERS = {
    "ProjectionFilter",
    "ProjectionForecaster",
    "LearnedProjectionFilter",
    "LearnedProjectionForecaster",
}


def __dir__():
    return sorted({*globals(), *__all__})


def __getattr__(name):
    if name in _FROM_OPS:
        import tssdpa.ops

        return getattr(tssdpa.ops, name)
    if name in _FROM_FILTERS:
        import tssdpa.filters

        return getattr(tssdpa.filters, name)
    raise AttributeError(f"module 'tssdpa' has no attribute {name!r}")
