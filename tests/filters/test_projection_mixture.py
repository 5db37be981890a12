"""The mixture of a zero-phase self-supervised fit: the exponentially weighted aggregate of the
candidates SURE scored (tssdpa.filters.projection_fit.mixture)."""

import math

import numpy as np
import pytest

from tssdpa.filters import ProjectionFilter
from tssdpa.filters.projection_fit import MAX_MIXTURE, MIN_WEIGHT, mixture, settings_of


@pytest.fixture(scope="module")
def noisy_and_clean():
    rng = np.random.default_rng(3)
    t = np.linspace(0, 24, 1200)
    clean = np.sin(t) + 0.6 * np.sign(np.sin(2.7 * t))
    return clean + 0.4 * rng.normal(size=t.size), clean


@pytest.fixture(scope="module")
def fitted(noisy_and_clean):
    return ProjectionFilter(causal=False, mix_temperature=64.0).fit(noisy_and_clean[0])


def test_the_zero_phase_fit_averages_several_candidates_with_weights_summing_to_one(fitted):
    assert fitted.mixture_ is not None and 2 <= len(fitted.mixture_) <= MAX_MIXTURE
    weights = [c["weight"] for c in fitted.mixture_]
    assert math.isclose(sum(weights), 1.0, rel_tol=1e-12)
    assert weights == sorted(weights, reverse=True)
    assert settings_of(fitted.mixture_[0]) == fitted.best_params_  # the best weighs most
    assert math.isclose(fitted.cv_results_["weight"].sum(), 1.0, rel_tol=1e-12)


def test_the_weights_are_exp_of_minus_n_times_the_sure_excess_over_temperature_s2(fitted):
    cv = fitted.cv_results_
    n = 1200  # entries scored: every sample of the one channel
    logw = -n * (cv["mse"] - cv["mse"].min()) / (64.0 * fitted.noise_level_[0] ** 2)
    kept = cv["weight"] > 0
    expect = np.exp(logw[kept]) / np.exp(logw[kept]).sum()
    np.testing.assert_allclose(cv["weight"][kept], expect, rtol=1e-12)
    # everything left out is either below MIN_WEIGHT of the largest or past MAX_MIXTURE
    left = logw[~kept]
    assert kept.sum() == MAX_MIXTURE or (left < math.log(MIN_WEIGHT)).all()


def test_the_output_is_the_weighted_sum_of_each_component_filter_on_its_own(
    fitted, noisy_and_clean
):
    x = noisy_and_clean[0]
    reference = sum(
        c["weight"]
        * np.asarray(
            ProjectionFilter(causal=False, mix_temperature=None, **settings_of(c)).filter(x)
        )
        for c in fitted.mixture_
    )
    np.testing.assert_allclose(fitted.filter(x), reference, rtol=1e-12, atol=1e-12)


def test_mix_temperature_none_keeps_the_single_best_candidate(noisy_and_clean):
    x = noisy_and_clean[0]
    f = ProjectionFilter(causal=False, mix_temperature=None).fit(x)
    assert f.mixture_ is None and "weight" not in f.cv_results_
    single = ProjectionFilter(causal=False, mix_temperature=None, **f.best_params_)
    np.testing.assert_array_equal(f.filter(x), single.filter(x))


@pytest.mark.parametrize("how", ["causal", "target"])
def test_causal_filters_and_fits_against_a_target_keep_one_setting(how, noisy_and_clean):
    x, clean = noisy_and_clean
    if how == "causal":
        f = ProjectionFilter(causal=True, mix_temperature=64.0).fit(x)
    else:
        f = ProjectionFilter(causal=False, mix_temperature=64.0).fit(x, target=clean)
    assert f.mixture_ is None


def test_one_candidate_far_ahead_of_the_rest_is_no_mixture():
    grid = [{"window": w} for w in (2, 4, 8)]
    components, weights = mixture(grid, [0.1, 0.5, np.inf], 1000, np.array([0.1]), 4.0)
    assert components is None
    np.testing.assert_array_equal(weights, [1.0, 0.0, 0.0])


def test_a_mixture_survives_save_and_load(fitted, noisy_and_clean, tmp_path):
    fitted.save(tmp_path / "mix")
    back = ProjectionFilter.load(tmp_path / "mix")
    assert back.mixture_ == fitted.mixture_
    x = noisy_and_clean[0]
    np.testing.assert_array_equal(back.filter(x), fitted.filter(x))


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "hot"])
def test_a_bad_mix_temperature_is_refused_naming_it(bad, noisy_and_clean):
    with pytest.raises((TypeError, ValueError), match="mix_temperature"):
        ProjectionFilter(causal=False, mix_temperature=bad).fit(noisy_and_clean[0][:200])


@pytest.mark.parametrize(
    "component",
    [{"window": 2}, "window=2", {"base": "chebyshev", "base_params": None, "window": 2,
                                  "embedding": 1, "decay": None, "degree": 0, "sigma": 1.0,
                                  "weight": 1.0}],
)  # fmt: skip
def test_a_malformed_mixture_is_refused_naming_it(component, fitted, noisy_and_clean):
    import copy

    f = copy.deepcopy(fitted)
    f.mixture_ = [component, *f.mixture_[1:]]
    with pytest.raises(ValueError, match=r"mixture_\[0\]|base"):
        f.filter(noisy_and_clean[0])
