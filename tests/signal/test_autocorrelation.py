"""The FFT lagged products equal their explicit sum, for one column or several."""

import numpy as np
import pytest

from tssdpa.signal.autocorrelation import lagged_products
from tssdpa.signal.reference import lagged_products_reference


@pytest.mark.parametrize("shape", [(1,), (2,), (7,), (64,), (257,), (100, 3)])
@pytest.mark.parametrize("lags", [1, 5, 300])
def test_lagged_products_equal_the_explicit_sum_at_every_lag(shape, lags):
    x = np.random.default_rng(sum(shape) + lags).normal(size=shape)
    fast, slow = lagged_products(x, lags), lagged_products_reference(x, lags)
    assert fast.shape == (lags, *shape[1:])
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-10 * shape[0])


def test_lags_past_the_series_are_zero_not_wrapped_around():
    x = np.array([1.0, -2.0, 4.0])
    np.testing.assert_allclose(lagged_products(x, 6), [21.0, -10.0, 4.0, 0.0, 0.0, 0.0],
                               atol=1e-12)  # fmt: skip


def test_the_series_is_not_changed():
    x = np.arange(10.0)
    kept = x.copy()
    lagged_products(x, 4)
    np.testing.assert_array_equal(x, kept)


def test_the_docstring_example_runs():
    import doctest

    import tssdpa.signal.autocorrelation as module

    result = doctest.testmod(module)
    assert result.attempted >= 1 and result.failed == 0
