"""Projection filters and forecasters for sensor time series (the estimator tier).

Nonparametric (numpy): :func:`projection_filter` (functional, scipy.signal style),
:class:`ProjectionFilter`, :class:`ProjectionForecaster`; a fitted linear model plus a
projection of its residual: :class:`ResidualProjectionFilter`,
:class:`ResidualProjectionForecaster`. Learned (torch + Lightning, imported on first use):
:class:`LearnedProjectionFilter`, :class:`LearnedProjectionForecaster`; their networks and
LightningModules live in :mod:`tssdpa.models`.
"""

import importlib
import warnings

from tssdpa.filters.forecaster import ProjectionForecaster
from tssdpa.filters.functional import projection_filter
from tssdpa.filters.projection import ProjectionFilter
from tssdpa.filters.residual import ResidualProjectionForecaster
from tssdpa.filters.residual_filter import ResidualProjectionFilter

__all__ = [
    "LearnedProjectionFilter",
    "LearnedProjectionForecaster",
    "ProjectionFilter",
    "ProjectionForecaster",
    "ResidualProjectionFilter",
    "ResidualProjectionForecaster",
    "projection_filter",
]

# Imported on first use so that `import tssdpa.filters` does not load torch models.
_LAZY = {
    "LearnedProjectionFilter": "tssdpa.filters.learned",
    "LearnedProjectionForecaster": "tssdpa.filters.learned",
}
# Moved to tssdpa.models (deprecated here; removed in the next release).
_MOVED = {"DenoisingSystem": "tssdpa.models", "ForecastingSystem": "tssdpa.models"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _MOVED:
        warnings.warn(
            f"tssdpa.filters.{name} is deprecated; import it from {_MOVED[name]}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module 'tssdpa.filters' has no attribute {name!r}")
