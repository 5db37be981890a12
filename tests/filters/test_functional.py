"""projection_filter (the scipy.signal-style function): hostile input (issue 11)."""

import numpy as np
import pytest

from tssdpa.filters import projection_filter


def test_inf_is_refused_like_every_estimator_and_channel_axis_must_be_in_range():
    x = np.random.default_rng(0).normal(size=(100, 2))
    bad = x.copy()
    bad[50, 1] = np.inf
    with pytest.raises(ValueError, match="x contains inf; use NaN"):
        projection_filter(bad, window=8, sigma=1.0, axis=0)
    with pytest.raises(ValueError, match="channel_axis 5 is out of range"):
        projection_filter(x, window=8, sigma=1.0, axis=0, channel_axis=5)
