"""What ``fit`` refuses of the input shapes and types a user can pass by mistake: a
channels-first series, and datetime or timedelta values passed as a signal."""

import numpy as np
import pytest

from tssdpa import ProjectionFilter, ProjectionForecaster
from tssdpa.baselines.linear import WienerFIRFilter


def _series(n=200):
    rng = np.random.default_rng(0)
    return np.sin(np.arange(n) / 20) + 0.1 * rng.standard_normal(n)


@pytest.mark.parametrize("rows", [1, 3])
def test_projection_filter_fit_refuses_a_channels_first_series_and_names_x_T(rows):
    x = np.vstack([_series()] * rows)
    with pytest.raises(ValueError, match=rf"x has {rows} samples? \(rows\) of 200 channels") as e:
        ProjectionFilter().fit(x)
    assert "pass x.T for 200 samples" in str(e.value)


def test_forecaster_fit_refuses_a_channels_first_series_naming_y():
    with pytest.raises(ValueError, match=r"y has 1 sample \(rows\) of 200 channels.*y\.T"):
        ProjectionForecaster(horizon=1).fit(_series()[None, :])


def test_denoiser_fit_refuses_a_channels_first_series():
    with pytest.raises(ValueError, match=r"time runs down the rows"):
        WienerFIRFilter().fit(_series()[None, :])


def test_a_fitted_filter_still_filters_a_single_row():
    x = np.column_stack([_series(), _series()[::-1]])
    filt = ProjectionFilter(window=8).fit(x)
    assert filt.filter(x[:1]).shape == (1, 2)

