"""A list of separate series (pyEDM's replicates) is refused saying how to pass replicates or
channels: numpy made two equal-length ones a channels-first array ("transpose it": the
replicates became channels) and refused unequal ones with its own "inhomogeneous shape"."""

import numpy as np
import pytest

from tssdpa import ProjectionFilter, ProjectionForecaster


def _tent(n: int, seed: int) -> np.ndarray:
    x = np.empty(n)
    x[0] = np.random.default_rng(seed).uniform(0.1, 0.9)
    for i in range(1, n):
        x[i] = 1.9999 * min(x[i - 1], 1 - x[i - 1])
    return x


A, B = _tent(300, 1), _tent(300, 2)


@pytest.mark.parametrize("y", [[A, B], (A, B), [A, B[:250]], [list(A), list(B[:200])]],
                         ids=["equal", "tuple", "unequal", "unequal lists"])  # fmt: skip
def test_a_list_of_separate_series_is_refused_with_how_to_pass_replicates_or_channels(y):
    with pytest.raises(ValueError, match=r"y is a list of 2 separate series") as err:
        ProjectionForecaster(horizon=1).fit(y)
    said = str(err.value)
    assert "np.full(gap, np.nan)" in said and "np.column_stack([a, b])" in said
    assert "transpose" not in said and "inhomogeneous" not in said
    with pytest.raises(ValueError, match=r"x is a list of 2 separate series"):
        ProjectionFilter(window=8).fit(y)


def test_a_list_of_rows_is_still_a_table_of_samples():
    rows = list(np.column_stack([A, B]))  # 300 rows of 2 channels
    assert ProjectionForecaster(horizon=1, embedding=2).fit(rows).n_channels_ == 2
    assert ProjectionForecaster(horizon=1, embedding=2).fit(list(A)).n_channels_ == 1


@pytest.mark.parametrize("horizon, embedding, delay", [(3, 3, 2), (5, 2, 4)])
def test_replicates_joined_by_the_advised_gap_take_no_future_from_the_next(horizon, embedding,
                                                                           delay):  # fmt: skip
    """The advice, checked: replicate b lies 10 above a, so a forecast from a's patterns over
    1 would be a future taken across the join. With one NaN between them the last keys of a
    took b's samples as their futures; with horizon + embedding x delay none does."""
    b = 10 + B

    def highest_forecast_from_a(gap: int) -> float:
        y = np.concatenate([A, np.full(gap, np.nan), b])
        f = ProjectionForecaster(horizon=horizon, embedding=embedding, delay=delay,
                                 model="mean", glitches=None).fit(y)  # fmt: skip
        return float(np.nanmax(np.asarray(f.forecast_path(A, horizon))))

    assert highest_forecast_from_a(1) > 5
    assert highest_forecast_from_a(horizon + embedding * delay) < 1
