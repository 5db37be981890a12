"""tssdpa.estimators.noise_tails: whether observed noise has the Gaussian tails SURE assumes."""

import doctest

import numpy as np
import pytest

import tssdpa.estimators.noise_tails as tails
from tssdpa.data import add_noise
from tssdpa.estimators.noise_tails import gaussian_tails, tail_ratio


@pytest.mark.parametrize("n", [100, 400, 4000])
def test_gaussian_noise_passes_at_any_length_and_scale(n):
    rng = np.random.default_rng(n)
    r = rng.normal(size=(n, 50)) * np.geomspace(1e-3, 1e3, 50) + 5.0
    assert gaussian_tails(r).all()


@pytest.mark.parametrize("kind", ["student_t", "impulsive"])
def test_heavy_tailed_noise_fails_from_a_thousand_samples(kind):
    clean = np.sin(np.arange(1000) / 5.0)
    r = np.column_stack([add_noise(clean, kind, 10.0, seed=s) - clean for s in range(50)])
    assert not gaussian_tails(r).any()


def test_the_ratio_is_one_for_gaussian_noise_and_ignores_nan():
    r = np.random.default_rng(0).normal(size=(100_000, 1))
    r[::7] = np.nan
    assert tail_ratio(r)[0] == pytest.approx(1.0, abs=0.01)


def test_a_column_without_spread_or_values_is_not_called_gaussian():
    r = np.column_stack(
        [np.zeros(50), np.full(50, np.nan), np.random.default_rng(1).normal(size=50)]
    )
    assert gaussian_tails(r).tolist() == [False, False, True]


def test_the_docstring_example_runs():
    result = doctest.testmod(tails)
    assert result.attempted > 0 and result.failed == 0
