"""Classical baselines with the tssdpa filter / forecaster interface (see docs/CONTRACTS.md).

Denoisers: ``fit(x, target=None)``, ``filter(x)``, ``causal``, ``get_params()``.
Forecasters: ``fit(y)``, ``forecast(y, horizon)``, ``forecast_path(y, horizon)``,
``predict(steps)`` with rolling-origin semantics (no refitting on the test split).
"""

from tssdpa.baselines._base import BaseDenoiser, BaseForecaster
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
    "BaseDenoiser",
    "BaseForecaster",
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
    "moving_average_matrix",
    "state_space_forecast_path",
]
