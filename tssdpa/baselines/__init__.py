"""Classical baselines with the tssdpa filter / forecaster interface (see docs/CONTRACTS.md).

All on the estimator base (:mod:`tssdpa.estimators`). Denoisers: ``fit(x, target=None)``,
``filter(x)``, ``causal``, ``get_params()``.
Forecasters: ``fit(y)``, ``forecast(y, horizon)``, ``forecast_path(y, horizon)``,
``predict(steps)`` with rolling-origin semantics (no refitting on the test split).
The empirical-dynamic-modelling peers (:mod:`tssdpa.baselines.edm`: pyEDM Simplex and S-map)
import pyEDM only when used (``pip install tssdpa[peers]``).
"""

from tssdpa.baselines.edm import SimplexForecaster, SMapForecaster
from tssdpa.baselines.forecasters import (
    AutoRegForecaster,
    DLinearForecaster,
    NaiveForecaster,
    SeasonalNaiveForecaster,
    moving_average_matrix,
)
from tssdpa.baselines.linear import (
    ButterworthFilter,
    IdentityFilter,
    MedianFilter,
    MovingAverageFilter,
    SavitzkyGolayFilter,
    ScipyWienerFilter,
    WienerFIRFilter,
)
from tssdpa.baselines.statespace import (
    ARIMAForecaster,
    ETSForecaster,
    KalmanSmoother,
    UnobservedComponentsForecaster,
    state_space_forecast_path,
)
from tssdpa.baselines.wavelet import WaveletDenoiser

__all__ = [
    "IdentityFilter",
    "ButterworthFilter",
    "SavitzkyGolayFilter",
    "ScipyWienerFilter",
    "MedianFilter",
    "MovingAverageFilter",
    "WienerFIRFilter",
    "KalmanSmoother",
    "WaveletDenoiser",
    "NaiveForecaster",
    "SeasonalNaiveForecaster",
    "AutoRegForecaster",
    "ARIMAForecaster",
    "ETSForecaster",
    "UnobservedComponentsForecaster",
    "DLinearForecaster",
    "SimplexForecaster",
    "SMapForecaster",
    "moving_average_matrix",
    "state_space_forecast_path",
]


_DEPRECATED = {"BaseDenoiser": "Denoiser", "BaseForecaster": "Forecaster"}


def __getattr__(name):
    if name in _DEPRECATED:
        import warnings

        from tssdpa.estimators import base

        warnings.warn(
            f"tssdpa.baselines.{name} is deprecated; use tssdpa.estimators.{_DEPRECATED[name]}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(base, _DEPRECATED[name])
    raise AttributeError(f"module 'tssdpa.baselines' has no attribute {name!r}")
