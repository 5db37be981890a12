"""A numeric index of sample times (float years, seconds) that is not equally spaced gets the
UnevenSamplingWarning a DatetimeIndex gets; a positional one (row labels) does not."""

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa import ProjectionFilter, ProjectionForecaster
from tssdpa.estimators.spacing import UnevenSamplingWarning

Y = np.sin(np.arange(300) * 0.3)
IRREGULAR = np.cumsum(np.random.default_rng(0).exponential(1.0, 300))  # seconds, Poisson


def _uneven(est, index) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        est.fit(pd.Series(Y, index=index, name="x"))
    return [str(w.message) for w in seen if w.category is UnevenSamplingWarning]


def test_an_irregular_float_index_warns_a_forecaster_with_its_own_units():
    (said,) = _uneven(ProjectionForecaster(horizon=1, embedding=2), IRREGULAR)
    assert said.startswith("y's numeric index is not equally spaced: median step 0.8")
    assert " s," not in said and "numpy.interp" in said and "resample" not in said


def test_a_filter_is_told_that_tau_reads_a_numeric_index_given_as_timestamps():
    (said,) = _uneven(ProjectionFilter(window=8), IRREGULAR)
    assert "tau= (in its units) and timestamps=x.index" in said


def test_integer_times_rising_with_gaps_warn():
    gaps = np.sort(np.random.default_rng(1).choice(1000, 300, replace=False))
    assert len(_uneven(ProjectionForecaster(horizon=1, embedding=2), gaps)) == 1


def test_a_float_index_running_backwards_is_told_as_such():
    (said,) = _uneven(ProjectionForecaster(horizon=1, embedding=2), IRREGULAR[::-1].copy())
    assert "runs backwards" in said and "sort_index()" in said


@pytest.mark.parametrize("index", [
    np.arange(1800.0, 2100.0),  # float years, even
    np.arange(300) * 0.1,  # a float clock, even to rounding
    np.arange(0, 600, 2),  # even integers
    np.random.default_rng(2).permutation(300),  # shuffled row labels: no times
    np.r_[np.arange(150), np.arange(150)],  # concatenated frames' labels
    pd.RangeIndex(300),
])  # fmt: skip
def test_an_even_or_positional_numeric_index_does_not_warn(index):
    assert _uneven(ProjectionForecaster(horizon=1, embedding=2), index) == []
