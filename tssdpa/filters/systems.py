"""Deprecated module path: the LightningModules live in :mod:`tssdpa.models.systems` (removed
in the next release)."""

import warnings

from tssdpa.models.systems import DenoisingSystem, ForecastingSystem, train_system  # noqa: F401

warnings.warn(
    "tssdpa.filters.systems is deprecated; import from tssdpa.models",
    DeprecationWarning,
    stacklevel=2,
)
