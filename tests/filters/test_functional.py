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


def test_a_state_of_the_wrong_kind_is_refused_naming_zi():
    """projection_filter's zi went straight into numpy and Python: a tau call's (samples,
    times) pair given to a call without timestamps failed with numpy's 'inhomogeneous shape',
    a tuple of three with 'too many values to unpack', and text with 'could not convert
    string to float' -- none naming zi (ProjectionFilter.filter names it)."""
    x = np.random.default_rng(0).normal(size=50)
    t = np.arange(50) * 0.01
    _, pair = projection_filter(x[:20], window=8, sigma=1.0, tau=0.1, timestamps=t[:20],
                                zi=(np.full(8, np.nan), np.full(7, np.nan)))  # fmt: skip
    with pytest.raises(ValueError, match=r"zi is a tuple of 2 arrays.*\(samples, times\)"):
        projection_filter(x[20:], window=8, sigma=1.0, zi=pair)
    with pytest.raises(ValueError, match=r"with timestamps, zi must be a pair"):
        projection_filter(x[20:], window=8, sigma=1.0, tau=0.1, timestamps=t[20:],
                          zi=(*pair, None))  # fmt: skip
    with pytest.raises(ValueError, match=r"zi must be numbers"):
        projection_filter(x, window=8, sigma=1.0, zi="abc")
    with pytest.raises(ValueError, match=r"zi times must be numbers"):
        projection_filter(x[20:], window=8, sigma=1.0, tau=0.1, timestamps=t[20:],
                          zi=(pair[0], "abc"))  # fmt: skip
