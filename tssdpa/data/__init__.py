"""Datasets: locating shared real data, loaders, synthetic generators, noise models, and the
benchmark tasks (series + split + noise / horizons) built from them."""

from tssdpa.data.download import MANIFEST, download, sha256_file
from tssdpa.data.noise import NOISES, add_noise, noise_std_for_snr
from tssdpa.data.paths import ENV_VAR, candidate_dirs, find_dataset, have_dataset
from tssdpa.data.real import (
    ETT_COLUMNS,
    ETT_NAMES,
    IMU_FILES,
    Split,
    ett_split,
    load_ett,
    load_imu,
    load_sunspots,
)
from tssdpa.data.synthetic import SIGNALS, make_signal
from tssdpa.data.tasks import (
    DATASETS,
    DEFAULT_DATASETS,
    DenoiseTask,
    ForecastTask,
    denoise_tasks,
    estimate_period,
    forecast_tasks,
    zscore,
)

__all__ = [
    "ENV_VAR",
    "candidate_dirs",
    "find_dataset",
    "have_dataset",
    "MANIFEST",
    "download",
    "sha256_file",
    "NOISES",
    "add_noise",
    "noise_std_for_snr",
    "ETT_COLUMNS",
    "ETT_NAMES",
    "IMU_FILES",
    "Split",
    "ett_split",
    "load_ett",
    "load_imu",
    "load_sunspots",
    "SIGNALS",
    "make_signal",
    "DATASETS",
    "DEFAULT_DATASETS",
    "DenoiseTask",
    "ForecastTask",
    "denoise_tasks",
    "estimate_period",
    "forecast_tasks",
    "zscore",
]
