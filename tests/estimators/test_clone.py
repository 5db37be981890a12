"""``clone()`` gives an unfitted estimator with copies of the parameters, as scikit-learn's
``clone`` does: a clone made to try another setting, edited in place, used to edit the fitted
original's dicts and lists too (its next forecast refused: "base_params changed after fit")."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tssdpa.estimators.params import param_copy
from tssdpa.filters import ProjectionForecaster, ResidualProjectionForecaster
from tssdpa.filters.learned import LearnedProjectionFilter
from tssdpa.filters.residual_filter import ResidualProjectionFilter

Y = np.sin(np.arange(500) * 0.17) + 0.1 * np.random.default_rng(0).standard_normal(500)


def test_editing_a_clone_leaves_the_fitted_original_alone():
    fc = ResidualProjectionForecaster(base_params={"lags": 8}, embedding=4, horizon=2,
                                      sigma=[0.5]).fit(Y[:400])  # fmt: skip
    before = fc.forecast(Y, 1)
    trial = fc.clone()
    trial.base_params["lags"] = 16
    assert fc.base_params == {"lags": 8}
    np.testing.assert_array_equal(fc.forecast(Y, 1), before)


@pytest.mark.parametrize(
    "est, name",
    [
        (ProjectionForecaster(embedding=[2, 3], bandwidth=np.array([0.5, 1.0])), "embedding"),
        (ProjectionForecaster(embedding=[2, 3], bandwidth=np.array([0.5, 1.0])), "bandwidth"),
        (ProjectionForecaster(model=["mean", "linear"]), "model"),
        (ResidualProjectionFilter(sigma=[0.1, 0.5]), "sigma"),
        (LearnedProjectionFilter(trainer_kwargs={"callbacks": []}), "trainer_kwargs"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_a_clone_holds_equal_copies_of_list_array_and_dict_parameters(est, name):
    value = getattr(est, name)
    copied = getattr(est.clone(), name)
    assert copied is not value
    np.testing.assert_equal(copied, value)


def test_a_parameter_that_cannot_be_copied_is_shared_and_functions_are_themselves():
    lock = threading.Lock()  # e.g. inside a logger: deepcopy raises TypeError
    assert param_copy(lock) is lock
    assert (
        param_copy(np.mean) is np.mean and param_copy(ProjectionForecaster) is ProjectionForecaster
    )


def test_an_estimator_given_as_a_parameter_is_cloned_unfitted():
    inner = ResidualProjectionFilter(window=4, sigma=[0.5]).fit(Y, target=Y)
    copied = param_copy(inner)
    assert copied is not inner and copied.get_params() == inner.get_params()
    assert not hasattr(copied, "n_channels_")


def test_a_dict_with_an_item_that_cannot_be_copied_is_copied_around_it():
    """Shared whole, editing the clone's dict edited the original's again."""
    lock = threading.Lock()
    kwargs = {"logger": lock, "callbacks": [1, 2]}
    copied = param_copy(kwargs)
    assert copied is not kwargs and copied["callbacks"] is not kwargs["callbacks"]
    assert copied["logger"] is lock and copied == kwargs


def test_estimators_in_a_list_and_scikit_learn_estimators_are_cloned_unfitted():
    sklearn = pytest.importorskip("sklearn.linear_model")
    fitted = ResidualProjectionFilter(window=4, sigma=[0.5]).fit(Y, target=Y)
    ridge = sklearn.Ridge(alpha=2.0).fit(Y[:, None], Y)
    [copied], other = param_copy([fitted]), param_copy(ridge)
    assert not hasattr(copied, "n_channels_") and copied.get_params() == fitted.get_params()
    assert not hasattr(other, "coef_") and other.alpha == 2.0
