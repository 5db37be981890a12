"""Projection filters for sensor time series.

Nonparametric filters (numpy): :func:`projection_filter` (functional, scipy.signal style),
:class:`ProjectionFilter` and :class:`ProjectionForecaster`; a fitted linear model plus a
projection of its residual: :class:`ResidualProjectionFilter`,
:class:`ResidualProjectionForecaster`. Learned filters (torch + Lightning, imported on first
use): :class:`LearnedProjectionFilter`, :class:`LearnedProjectionForecaster`,
:class:`DenoisingSystem`, :class:`ForecastingSystem`.
"""

from tssdpa.filters.functional import projection_filter
from tssdpa.filters.projection import ProjectionFilter

__all__ = [
    "DenoisingSystem",
    "ForecastingSystem",
    "LearnedProjectionFilter",
    "LearnedProjectionForecaster",
    "ProjectionFilter",
    "ProjectionForecaster",
    "ResidualProjectionFilter",
    "ResidualProjectionForecaster",
    "projection_filter",
]

_LAZY = {
    "ProjectionForecaster": "tssdpa.filters.forecaster",
    "ResidualProjectionFilter": "tssdpa.filters.residual",
    "ResidualProjectionForecaster": "tssdpa.filters.residual",
    "DenoisingSystem": "tssdpa.filters.systems",
    "ForecastingSystem": "tssdpa.filters.systems",
    "LearnedProjectionFilter": "tssdpa.filters.learned",
    "LearnedProjectionForecaster": "tssdpa.filters.learned",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tssdpa.filters' has no attribute {name!r}")
