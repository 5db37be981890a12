"""scikit-learn's utilities work on the estimators, which do not derive from its BaseEstimator:
with scikit-learn 1.9, check_is_fitted and is_regressor raised AttributeError (no
__sklearn_tags__), and the "not fitted" error was not one scikit-learn's callers catch."""

from __future__ import annotations

import numpy as np
import pytest

from tssdpa import ProjectionFilter, ProjectionForecaster
from tssdpa.baselines import AutoRegForecaster, KalmanSmoother, MovingAverageFilter, WienerFIRFilter
from tssdpa.estimators.params import NotFittedError
from tssdpa.filters import ResidualProjectionFilter

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone, is_regressor  # noqa: E402
from sklearn.exceptions import NotFittedError as SklearnNotFitted  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

MAKERS = [
    lambda: ProjectionFilter(window=16, sigma=0.5),
    lambda: ProjectionForecaster(horizon=2, model="mean", embedding=3),
    lambda: AutoRegForecaster(lags=4),
    lambda: MovingAverageFilter(window=5),
]


@pytest.mark.parametrize("make", MAKERS)
def test_check_is_fitted_tells_unfitted_from_fitted(make):
    est = make()
    with pytest.raises(SklearnNotFitted):
        check_is_fitted(est)
    x = np.sin(np.arange(300) / 5) + 0.05 * np.random.default_rng(0).standard_normal(300)
    est.fit(x)
    check_is_fitted(est)
    assert not is_regressor(est)  # fit takes the series, not (X, y)
    assert not hasattr(clone(est), "n_channels_")


def test_an_unfitted_call_raises_an_error_both_kinds_of_caller_catch():
    fc = ProjectionForecaster(horizon=2)
    with pytest.raises(NotFittedError, match="not fitted"):
        fc.predict(3)
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)


@pytest.mark.parametrize("make", [
    lambda: WienerFIRFilter(window=4),
    lambda: KalmanSmoother(),
    lambda: ResidualProjectionFilter(window=4, embedding=2),
])  # fmt: skip
def test_filtering_with_an_unfitted_trainable_denoiser_raises_not_fitted_error(make):
    """A trainable denoiser's filter before fit raised a bare ValueError ('must be fitted
    before filter(x)'), which `except NotFittedError` (the forecasters' error) let through."""
    with pytest.raises(NotFittedError, match="not fitted: call fit"):
        make().filter(np.zeros(50))


def test_a_second_series_given_to_a_forecasters_fit_is_refused_naming_verbose():
    """``fit(train, test)``, scikit-learn's ``fit(X, y)``: ProjectionForecaster took ``test``
    for ``verbose`` and raised numpy's 'truth value of an array is ambiguous'."""
    y = np.sin(np.arange(300) / 5)
    with pytest.raises(ValueError, match=r"verbose must be one of \(True, False\), got array"):
        ProjectionForecaster(horizon=2).fit(y, y)
    with pytest.raises(TypeError, match="positional"):  # the other forecasters: Python's own
        AutoRegForecaster().fit(y, y)
