"""params_at: the best_params_ entry a horizon between the anchors is forecast with."""

import numpy as np
import pytest

from tssdpa import ProjectionForecaster
from tssdpa.filters.forecaster_horizons import params_at

Y = np.sin(np.arange(400) * 0.3) + np.random.default_rng(0).normal(0, 0.05, 400)


def test_a_horizon_between_anchors_has_the_params_of_the_nearest_anchor_in_log_scale():
    f = ProjectionForecaster(horizon=20, embedding=[2, 3], model="mean").fit(Y)
    assert list(f.best_params_) == [1, 2, 3, 4, 5, 7, 9, 12, 15, 20]
    assert 14 not in f.best_params_
    assert params_at(f, 14) == f.best_params_[15]
    assert params_at(f, 6) == f.best_params_[5]  # log 6 is nearer log 5 than log 7
    assert params_at(f, 20) == f.best_params_[20]


def test_a_channel_independent_fit_gives_a_list_of_params_one_per_channel():
    two = np.column_stack([Y, Y[::-1]])
    f = ProjectionForecaster(horizon=2, embedding=[2, 3], model="mean", channel_independent=True)
    f.fit(two)
    assert isinstance(f.best_params_, list)
    assert params_at(f, 2) == [f.best_params_[0][2], f.best_params_[1][2]]


def test_a_horizon_beyond_the_fitted_one_is_refused_naming_it():
    f = ProjectionForecaster(horizon=3, embedding=2, model="mean").fit(Y)
    with pytest.raises(ValueError, match="h must be <= the fitted horizon 3; got 4"):
        params_at(f, 4)
