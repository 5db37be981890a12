"""Denoising and forecasting comparisons: projection filters vs classical baselines.

:mod:`~tssdpa.compare.registry` holds the methods by name and :mod:`~tssdpa.compare.methods`
registers every one of them with its search grid (imported here, so anything importing
``tssdpa.compare`` sees them all); :mod:`~tssdpa.compare.denoising` and
:mod:`~tssdpa.compare.forecasting` evaluate one method on one task;
:mod:`~tssdpa.compare.harness` runs many; :mod:`~tssdpa.compare.tables` and
:mod:`~tssdpa.compare.plots` report. The tasks themselves come from :mod:`tssdpa.data.tasks`.

>>> from tssdpa.compare import denoise_tasks, run_tasks
>>> res = run_tasks(denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10)], n=600),
...                 methods=["noisy", "butterworth"], progress=False)
>>> sorted(res.frame["method"])
['butterworth', 'noisy']
"""

from tssdpa.compare import methods  # noqa: F401  (registers every method)
from tssdpa.compare.denoising import evaluate_denoiser
from tssdpa.compare.forecasting import evaluate_forecaster, rolling_errors
from tssdpa.compare.harness import ComparisonResults, run_tasks
from tssdpa.compare.metrics import horizon_errors, mae, mse, rmse, snr_db, snr_improvement_db
from tssdpa.compare.registry import (
    DEFAULT_BUDGET,
    MethodSpec,
    available_methods,
    get_method,
    register,
    search_space,
)
from tssdpa.compare.tables import aggregate, markdown_tables, overview, write_tables
from tssdpa.data.tasks import (
    DATASETS,
    DEFAULT_DATASETS,
    DenoiseTask,
    ForecastTask,
    denoise_tasks,
    forecast_tasks,
)

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
