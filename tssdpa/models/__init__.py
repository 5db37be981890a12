"""Torch models of the learned projection estimators.

- :mod:`~tssdpa.models.nets` -- plain ``nn.Module`` networks: :class:`DenoisingNet`,
  :class:`ForecastingNet`;
- :mod:`~tssdpa.models.systems` -- the LightningModules that train them,
  :class:`DenoisingSystem` and :class:`ForecastingSystem`, and :func:`train_system`;
- :mod:`~tssdpa.models.ridge` -- the closed-form ridge DLinear start of a forecasting net,
  :func:`ridge_linear_init` over :data:`RIDGE_GRID`.

The Lightning and baseline parts are imported on first use: importing Lightning takes seconds,
and a net alone does not need it.
"""

import importlib

from tssdpa.models.nets import DenoisingNet, ForecastingNet

__all__ = [
    "RIDGE_GRID",
    "DenoisingNet",
    "DenoisingSystem",
    "ForecastingNet",
    "ForecastingSystem",
    "ridge_linear_init",
    "train_system",
]

_LAZY = {
    "DenoisingSystem": "tssdpa.models.systems",
    "ForecastingSystem": "tssdpa.models.systems",
    "train_system": "tssdpa.models.systems",
    "RIDGE_GRID": "tssdpa.models.ridge",
    "ridge_linear_init": "tssdpa.models.ridge",
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tssdpa.models' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
