"""Small tasks shared by the compare tests (seconds to evaluate)."""

import pytest

from tssdpa.data.tasks import denoise_tasks, forecast_tasks


@pytest.fixture(scope="session")
def small_denoise():
    return denoise_tasks("sinusoids", seeds=(0,), settings=[("gaussian", 10.0)], n=400)[0]


@pytest.fixture(scope="session")
def small_forecast():
    return forecast_tasks("ar2", seeds=(0,), n=400, horizons=(1, 3), lookback=16)[0]
