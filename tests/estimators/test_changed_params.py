"""A fitted state shaped by a parameter (a lookback, an embedding, a horizon) no longer fits
it once the parameter changes: using it is refused naming the parameter, until it is set
back or the estimator is fitted again (it was a numpy broadcasting error)."""

from __future__ import annotations

import numpy as np
import pytest

from tssdpa.baselines import AutoRegForecaster, DLinearForecaster, SeasonalNaiveForecaster
from tssdpa.filters import ProjectionForecaster
from tssdpa.filters.residual import ResidualProjectionForecaster
from tssdpa.filters.residual_filter import ResidualProjectionFilter

Y = np.sin(np.arange(600) / 7) + 0.1 * np.random.default_rng(0).normal(size=600)

CASES = [
    (lambda: ResidualProjectionForecaster(horizon=3), "embedding", 8),
    (lambda: ResidualProjectionForecaster(horizon=3), "horizon", 5),
    (lambda: ResidualProjectionForecaster(horizon=2, base="dlinear", lookback=48), "lookback", 8),
    (lambda: DLinearForecaster(lookback=24), "lookback", 48),
    # these forecast NaN, or other values, silently
    (lambda: DLinearForecaster(lookback=24), "normalize", "last"),
    (lambda: AutoRegForecaster(lags=6), "lags", 2),
    (lambda: SeasonalNaiveForecaster(period=5), "period", 24),
    (lambda: ProjectionForecaster(horizon=4, max_embedding=3), "horizon", 8),  # a KeyError
    (lambda: ProjectionForecaster(horizon=4, max_embedding=3), "library_size", 100),
    (lambda: ResidualProjectionForecaster(horizon=2), "base", "dlinear"),
    (lambda: ResidualProjectionForecaster(horizon=2), "channel_independent", True),
    (lambda: AutoRegForecaster(lags=6), "trend", "n"),
    (lambda: DLinearForecaster(lookback=24), "individual", True),
]


@pytest.mark.parametrize("make, name, value", CASES)
def test_a_structural_parameter_changed_after_fit_is_refused_until_set_back(make, name, value):
    est = make().fit(Y)
    before = est.forecast(Y, 1)
    fitted_value = getattr(est, name)
    est.set_params(**{name: value})
    for use in (lambda: est.forecast(Y, 1), lambda: est.predict(2)):
        with pytest.raises(ValueError, match=f"{name}={value!r} .*changed after fit"):
            use()
    est.set_params(**{name: fitted_value})
    np.testing.assert_array_equal(est.forecast(Y, 1), before)
    est.set_params(**{name: value}).fit(Y)  # fitted again: the new value holds
    assert np.isfinite(est.forecast(Y, 1)[-1]).all()


def test_a_loaded_estimator_knows_the_parameters_its_state_fits(tmp_path):
    est = DLinearForecaster(lookback=24).fit(Y)
    est.save(tmp_path / "m")
    loaded = DLinearForecaster.load(tmp_path / "m")
    loaded.set_params(lookback=48)
    with pytest.raises(ValueError, match="lookback=48 .*changed after fit"):
        loaded.forecast(Y, 1)


def test_a_denoiser_changed_after_fit_is_refused_on_filter():
    clean = np.sin(np.arange(600) / 7)
    f = ResidualProjectionFilter(embedding=8).fit(Y, target=clean)
    f.set_params(embedding=16)  # it was a numpy matmul error
    with pytest.raises(ValueError, match="embedding=16 .*changed after fit"):
        f.filter(Y)


def test_a_dict_parameter_edited_in_place_after_fit_is_a_change_too():
    fc = ResidualProjectionForecaster(horizon=2, base_params={"lags": 12}).fit(Y)
    fc.base_params["lags"] = 2  # the same dict object: compared against a copy
    with pytest.raises(ValueError, match="base_params=.*changed after fit"):
        fc.predict(2)


def test_an_array_in_a_structural_parameter_is_compared_by_its_elements():
    ridge = np.array([1e-3, 1e-2])
    kw = dict(horizon=2, base="dlinear", lookback=48, base_params={"ridge": ridge})
    fc = ResidualProjectionForecaster(**kw).fit(Y)
    before = fc.forecast(Y, 1)  # it raised numpy's "truth value of an array is ambiguous"
    assert fc.predict(3).shape == (3,)
    ridge[1] = 1.0  # edited in place after fit: a change
    with pytest.raises(ValueError, match="base_params=.*changed after fit"):
        fc.forecast(Y, 1)
    ridge[1] = 1e-2
    np.testing.assert_array_equal(fc.forecast(Y, 1), before)


def test_a_parameter_the_fitted_settings_do_not_use_may_change_after_fit():
    # the autoreg base reads no lookback: a change was refused, though it changes nothing
    fc = ResidualProjectionForecaster(horizon=2, lookback=48).fit(Y)
    before = fc.forecast(Y, 1)
    fc.set_params(lookback=96)
    np.testing.assert_array_equal(fc.forecast(Y, 1), before)
