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


@pytest.mark.parametrize("window", [8, None])
@pytest.mark.parametrize("bad", ["0.005", [0.005], -1.0, 0.0, float("nan"), float("inf")])
def test_min_step_is_checked_by_name_as_the_class_checks_it(window, bad):
    """projection_filter took min_step unchecked: text or a list failed in Python's own
    comparison ("'>' not supported between instances of 'str' and 'int'"), inf was blamed
    on decay, and with a window -1, 0 or NaN passed silently (ProjectionFilter refuses them
    all: 'min_step must be a finite number > 0')."""
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.008, 0.012, 50))
    with pytest.raises((TypeError, ValueError), match="min_step must be a"):
        projection_filter(np.sin(t), window=window, tau=0.05, min_step=bad, sigma=0.5,
                          timestamps=t)  # fmt: skip
