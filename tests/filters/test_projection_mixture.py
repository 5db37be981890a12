"""Mixtures of a zero-phase fit (tssdpa.filters.projection_mixture): the exponentially weighted
aggregate of the candidates SURE scored, and the stacked (convex least-squares) combination
of the best candidates against a target."""

import copy
import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from tssdpa.filters import ProjectionFilter
from tssdpa.filters.projection_mixture import (
    MAX_MIXTURE,
    MIN_WEIGHT,
    best_of_each_kind,
    component_outputs,
    mixture,
    settings_of,
)


@pytest.fixture(scope="module")
def noisy_and_clean():
    rng = np.random.default_rng(3)
    t = np.linspace(0, 24, 1200)
    clean = np.sin(t) + 0.6 * np.sign(np.sin(2.7 * t))
    return clean + 0.4 * rng.normal(size=t.size), clean


@pytest.fixture(scope="module")
def fitted(noisy_and_clean):
    return ProjectionFilter(causal=False, mix_temperature=64.0).fit(noisy_and_clean[0])


@pytest.fixture(scope="module")
def stacked(noisy_and_clean):
    x, clean = noisy_and_clean
    return ProjectionFilter(causal=False).fit(x, target=clean)


@pytest.mark.parametrize("which", ["fitted", "stacked"])
def test_a_zero_phase_fit_averages_several_candidates_with_weights_summing_to_one(which, request):
    f = request.getfixturevalue(which)
    assert f.mixture_ is not None and 2 <= len(f.mixture_) <= MAX_MIXTURE
    weights = [c["weight"] for c in f.mixture_]
    assert math.isclose(sum(weights), 1.0, rel_tol=1e-12) and min(weights) > 0
    assert weights == sorted(weights, reverse=True)
    assert min(weights) >= MIN_WEIGHT * max(weights)
    assert math.isclose(f.cv_results_["weight"].sum(), 1.0, rel_tol=1e-12)


def test_sure_weights_are_exp_of_minus_n_times_the_sure_excess_over_temperature_s2(fitted):
    cv = fitted.cv_results_
    n = 1200  # entries scored: every sample of the one channel
    logw = -n * (cv["mse"] - cv["mse"].min()) / (64.0 * fitted.noise_level_[0] ** 2)
    kept = cv["weight"] > 0
    expect = np.exp(logw[kept]) / np.exp(logw[kept]).sum()
    np.testing.assert_allclose(cv["weight"][kept], expect, rtol=1e-12)
    # everything left out is below MIN_WEIGHT of the largest, past MAX_MIXTURE, or not the
    # best of its kind (NaN in the table's base and decay columns counts as None)
    eligible = best_of_each_kind(cv.to_dict("records"), cv["mse"])
    assert not (kept & ~eligible).any()
    out = ~kept & eligible
    assert kept.sum() == MAX_MIXTURE or (logw[out] < math.log(MIN_WEIGHT)).all()
    assert settings_of(fitted.mixture_[0]) == fitted.best_params_  # the best weighs most


def _kind(c):
    return (c["base"], str(c["base_params"]), c["window"], c["embedding"], c["decay"])


def test_a_sure_mixture_averages_the_best_candidate_of_each_kind(fitted):
    cv = fitted.cv_results_.astype({"base": object})
    cv["base"] = cv["base"].where(cv["base"].notna(), None)  # NaN in the table, None in mixture_
    kinds = [_kind(c) for c in fitted.mixture_]
    assert len(set(kinds)) == len(kinds) >= 2  # filters that differ, not a width ladder
    records = cv.to_dict("records")
    for c in fitted.mixture_:  # the one weighted candidate of its kind is its lowest score
        same = cv[[_kind(r) == _kind(c) for r in records]]
        weighted = same[same["weight"] > 0]
        assert len(weighted) == 1 and weighted["mse"].iloc[0] == same["mse"].min()


def test_the_best_of_each_kind_is_its_lowest_finite_score_the_first_of_equals():
    def cand(window, sigma, base=None, cutoff=None):
        bp = None if cutoff is None else {"cutoff": cutoff, "order": 2}
        return {"base": base, "base_params": bp, "window": window, "embedding": 1,
                "decay": None, "degree": 0, "sigma": sigma}  # fmt: skip

    grid = [cand(4, 1.0), cand(4, 2.0), cand(8, 1.0), cand(8, 2.0), cand(4, 3.0),
            cand(0, np.inf, "butterworth", 0.2), cand(0, np.inf, "butterworth", 0.3),
            cand(16, 1.0)]  # fmt: skip
    scores = np.array([0.5, 0.3, 0.2, 0.2, 0.3, 0.4, 0.1, np.inf])
    expect = [False, True, True, False, False, True, True, False]
    np.testing.assert_array_equal(best_of_each_kind(grid, scores), expect)
    # a table's rows (NaN for None, fresh NaN objects) and a Series of scores: the same
    rows = [{k: (float("nan") if v is None else v) for k, v in c.items()} for c in grid]
    series = pd.Series(scores, index=np.arange(len(grid)) + 10)
    np.testing.assert_array_equal(best_of_each_kind(rows, series), expect)


def _error(y, clean):
    return float(np.mean((np.asarray(y) - clean) ** 2))


def test_stacked_weights_are_the_least_squares_convex_combination_of_the_best_candidates(
    stacked, noisy_and_clean
):
    x, clean = noisy_and_clean
    cv = stacked.cv_results_
    best = cv.sort_values("mse", kind="stable").head(MAX_MIXTURE)
    cands = best[["base", "base_params", "window", "embedding", "decay", "degree", "sigma"]]
    comps = [{k: (None if k == "base" and not isinstance(v, str) else v) for k, v in r.items()}
             for r in cands.to_dict("records")]  # fmt: skip
    Y = np.stack([y[:, 0] for y in component_outputs(stacked, x[:, None], None, comps)])
    objective = lambda w: np.mean((w @ Y - clean) ** 2)  # noqa: E731
    slsqp = minimize(
        objective, np.full(len(Y), 1 / len(Y)), method="SLSQP", bounds=[(0, 1)] * len(Y),
        constraints={"type": "eq", "fun": lambda w: w.sum() - 1}, options={"ftol": 1e-14},
    )  # fmt: skip
    ours = _error(stacked.filter(x), clean)
    assert ours <= slsqp.fun * (1 + 1e-3)  # the dropped tiny weights cost next to nothing
    assert ours <= cv["mse"].min()  # the best single candidate is one convex combination


@pytest.mark.parametrize("which", ["fitted", "stacked"])
def test_the_output_is_the_weighted_sum_of_each_component_filter_on_its_own(
    which, request, noisy_and_clean
):
    f = request.getfixturevalue(which)
    x = noisy_and_clean[0]
    u = f.channel_scale_  # the components' sigmas compare channels divided by it
    reference = u * sum(
        c["weight"]
        * np.asarray(ProjectionFilter(causal=False, mix=False, **settings_of(c)).filter(x / u))
        for c in f.mixture_
    )
    np.testing.assert_allclose(f.filter(x), reference, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("with_target", [False, True])
def test_mix_false_keeps_the_single_best_candidate(with_target, noisy_and_clean):
    x, clean = noisy_and_clean
    # a narrowed search, windowed and non-local candidates (mix=False is tested, not the
    # search): with mix on, it averages 9 candidates here (4 with the target)
    f = ProjectionFilter(causal=False, mix=False, window=[8, 16, "all"], embedding=[1, 7])
    f = f.fit(x, target=clean) if with_target else f.fit(x)
    assert f.mixture_ is None and "weight" not in f.cv_results_
    single = ProjectionFilter(causal=False, mix=False, **f.best_params_)
    np.testing.assert_array_equal(f.filter(x), single.filter(x))


@pytest.mark.parametrize(
    "kind", [{"causal": True}, {"causal": True, "recurrent": "features", "decay": 0.9}]
)
def test_filters_with_a_streaming_state_keep_one_setting(kind, noisy_and_clean):
    x, clean = noisy_and_clean
    assert ProjectionFilter(**kind).fit(x).mixture_ is None
    assert ProjectionFilter(**kind).fit(x, target=clean).mixture_ is None


def test_one_candidate_far_ahead_of_the_rest_is_no_mixture():
    grid = [{"base": None, "base_params": None, "window": w, "embedding": 1, "decay": None}
            for w in (2, 4, 8)]  # fmt: skip
    components, weights = mixture(grid, [0.1, 0.5, np.inf], 1000, np.array([0.1]), 4.0)
    assert components is None
    np.testing.assert_array_equal(weights, [1.0, 0.0, 0.0])


@pytest.mark.parametrize("which", ["fitted", "stacked"])
def test_a_mixture_survives_save_and_load(which, request, noisy_and_clean, tmp_path):
    f = request.getfixturevalue(which)
    f.save(tmp_path / "mix")
    back = ProjectionFilter.load(tmp_path / "mix")
    assert back.mixture_ == f.mixture_
    x = noisy_and_clean[0]
    np.testing.assert_array_equal(back.filter(x), f.filter(x))


@pytest.mark.parametrize(
    "param, bad",
    [("mix_temperature", 0), ("mix_temperature", -1.0), ("mix_temperature", float("nan")),
     ("mix_temperature", float("inf")), ("mix_temperature", "hot"), ("mix_temperature", None),
     ("mix", "yes"), ("mix", None)],
)  # fmt: skip
def test_a_bad_mix_setting_is_refused_naming_it(param, bad, noisy_and_clean):
    with pytest.raises((TypeError, ValueError), match=param):
        ProjectionFilter(causal=False, **{param: bad}).fit(noisy_and_clean[0][:200])


@pytest.mark.parametrize(
    "component",
    [{"window": 2}, "window=2",
     {"base": "chebyshev", "base_params": None, "window": 2, "embedding": 1, "decay": None,
      "degree": 0, "sigma": 1.0, "weight": 1.0},
     {"base": None, "base_params": None, "window": 2, "embedding": 1, "decay": None,
      "degree": 0, "sigma": 1.0, "weight": float("nan")}],
)  # fmt: skip
def test_a_malformed_mixture_is_refused_naming_it(component, fitted, noisy_and_clean):
    f = copy.deepcopy(fitted)
    f.mixture_ = [component, *f.mixture_[1:]]
    with pytest.raises(ValueError, match=r"mixture_\[0\]"):
        f.filter(noisy_and_clean[0])


def _tamper(component: dict | None = None, **changes):
    """A change to a saved mixture: ``changes`` to component 0, or the whole list replaced."""

    def edit(mixture):
        if component is not None:
            return component
        return [{**mixture[0], **changes}, *mixture[1:]]

    return edit


@pytest.mark.parametrize(
    "edit, message",
    [
        (_tamper(weight=10.0), "sum to 1"),
        (_tamper(weight=True), r"\['weight'\]"),
        (_tamper(weight=-0.5), r"\['weight'\]"),
        (_tamper(sigma=0.0), r"mixture_\[0\]: sigma"),
        (_tamper(sigma=None), r"mixture_\[0\]: sigma"),
        (_tamper(degree=-1), r"mixture_\[0\]: degree"),
        (_tamper(degree=2.5), r"mixture_\[0\]: degree"),
        (_tamper(window=[2]), r"mixture_\[0\]: window"),
        (_tamper(window=0, base=None, base_params=None), r"mixture_\[0\]: window 0"),
        (_tamper(base=None, base_params="x"), r"mixture_\[0\]"),
        (_tamper(extra=1), r"mixture_\[0\] must be a dict"),
        (lambda m: m * 5000, "a list of 2 to 16"),
        (lambda m: {"a": 1}, "a list of 2 to 16"),
    ],
)
def test_a_tampered_saved_mixture_is_refused_on_load_naming_the_file_and_field(
    edit, message, fitted, tmp_path, edit_config
):
    fitted.save(tmp_path / "mix")
    edit_config(
        tmp_path / "mix", lambda cfg: cfg["fitted"].update(mixture_=edit(cfg["fitted"]["mixture_"]))
    )
    with pytest.raises(ValueError, match=message) as err:
        ProjectionFilter.load(tmp_path / "mix")
    assert str(tmp_path / "mix") in str(err.value)


def test_a_saved_mixture_on_a_causal_filter_is_refused(fitted, tmp_path, edit_config):
    def causal(cfg):
        cfg["params"]["causal"] = True
        cfg["fitted"]["mixture_"] = [
            {**c, "base": None, "base_params": None, "window": windowed(c["window"])}
            for c in cfg["fitted"]["mixture_"]
        ]

    def windowed(w):  # settings a causal filter could have: a window of 2 or more samples
        return 2 if w == "all" else max(w, 2)

    fitted.save(tmp_path / "mix")
    edit_config(tmp_path / "mix", causal)
    with pytest.raises(ValueError, match="only a zero-phase filter"):
        ProjectionFilter.load(tmp_path / "mix")


def test_a_multichannel_mixture_with_butterworth_bases_is_the_sum_of_its_components():
    rng = np.random.default_rng(5)
    t = np.arange(900)
    clean = np.stack([np.sin(t / 15), np.sign(np.sin(t / 40))], axis=1)
    x = clean + 0.5 * rng.normal(size=clean.shape)
    f = ProjectionFilter(
        causal=False, base="butterworth", window=[0, 4, 8], embedding=[1, 3], degree=[0, 2],
        mix_temperature=1e4, local_window=None,  # the mixture alone, not adapted in time
        channel_independent=False,  # the joint mixture of both channels
    ).fit(x)  # fmt: skip
    assert f.mixture_ is not None and any(c["window"] == 0 for c in f.mixture_)
    assert {c["window"] for c in f.mixture_} > {0}  # base alone and base + projection
    u = f.channel_scale_  # the components' sigmas compare channels divided by it
    reference = u * sum(
        c["weight"]
        * np.asarray(ProjectionFilter(causal=False, mix=False, **settings_of(c)).filter(x / u))
        for c in f.mixture_
    )
    np.testing.assert_allclose(f.filter(x), reference, rtol=1e-12, atol=1e-12)


def test_stacking_with_a_holdout_uses_only_the_held_out_tail_of_the_target(noisy_and_clean):
    x, clean = noisy_and_clean
    # the search narrowed to the windows and embeddings of the default search's mixture here
    # (the stacking is tested, not the search): the same 6 candidates, weights and output
    kw = dict(causal=False, holdout=0.3, window=[8, 16, 32], embedding=[3, 7])
    f = ProjectionFilter(**kw).fit(x, target=clean)
    changed = clean.copy()
    changed[: f.fit_holdout_start_] += 5.0  # the target before the tail judges nothing
    g = ProjectionFilter(**kw).fit(x, target=changed)
    assert f.mixture_ is not None and g.mixture_ == f.mixture_
    tail = slice(f.fit_holdout_start_, None)
    err = np.mean((np.asarray(f.filter(x))[tail] - clean[tail]) ** 2)
    assert err <= f.cv_results_["mse"].min()


def test_changing_causal_or_mix_after_fit_leaves_the_single_best_setting(fitted, noisy_and_clean):
    x = noisy_and_clean[0]
    single = ProjectionFilter(causal=False, mix=False, **fitted.best_params_).filter(x)
    f = copy.deepcopy(fitted).set_params(mix=False)
    np.testing.assert_array_equal(f.filter(x), single)
    g = copy.deepcopy(fitted)
    g.set_params(causal=True, base=None)
    g.__dict__.update(base_=None, base_params_=None)
    offline = np.asarray(g.filter(x))
    streamed, _ = g.filter(x, zi=g.initial_state())
    np.testing.assert_allclose(offline[50:], np.asarray(streamed)[50:], rtol=1e-12, atol=1e-12)
