"""Denoising and forecasting comparisons: projection filters vs classical baselines.

>>> from tssdpa.compare import denoise_tasks, run_tasks
>>> res = run_tasks(denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10)], n=600),
...                 methods=["noisy", "butterworth"], progress=False)
>>> sorted(res.frame["method"])
['butterworth', 'noisy']
"""

from tssdpa.compare.harness import (
    ComparisonResults,
    evaluate_denoiser,
    evaluate_forecaster,
    rolling_errors,
    run_tasks,
)
from tssdpa.compare.metrics import horizon_errors, mae, mse, rmse, snr_db, snr_improvement_db
from tssdpa.compare.protocols import (
    DATASETS,
    DEFAULT_DATASETS,
    DenoiseTask,
    ForecastTask,
    denoise_tasks,
    forecast_tasks,
)
from tssdpa.compare.registry import (
    DEFAULT_BUDGET,
    MethodSpec,
    available_methods,
    get_method,
    register,
    search_space,
)
from tssdpa.compare.tables import aggregate, markdown_tables, overview, write_tables

__all__ = [
    "ComparisonResults",
    "evaluate_denoiser",
    "evaluate_forecaster",
    "rolling_errors",
    "run_tasks",
    "mse",
    "rmse",
    "mae",
    "snr_db",
    "snr_improvement_db",
    "horizon_errors",
    "DATASETS",
    "DEFAULT_DATASETS",
    "DenoiseTask",
    "ForecastTask",
    "denoise_tasks",
    "forecast_tasks",
    "DEFAULT_BUDGET",
    "MethodSpec",
    "available_methods",
    "get_method",
    "register",
    "search_space",
    "aggregate",
    "markdown_tables",
    "overview",
    "write_tables",
]
