import numpy as np

from tssdpa.batch import _chosen
from tssdpa.estimators.report import chosen_settings, settings_text
from tssdpa.filters import ProjectionFilter, ProjectionForecaster


def _sine(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n) / 7.0) + 0.05 * rng.normal(size=n)


def test_settings_text_rounds_floats_and_leaves_out_none():
    assert settings_text({"a": 1, "b": None, "c": 0.123456789}) == "a=1, c=0.1235"


def test_nothing_is_chosen_before_fit():
    assert chosen_settings(ProjectionFilter()) == []


def test_one_fit_is_said_without_a_place():
    # a narrowed search (what is said is tested, not the search)
    f = ProjectionFilter(causal=False, window=[8, 16, "all"], embedding=[1, 7]).fit(_sine())
    assert chosen_settings(f) == [("", f.best_params_)]


def test_a_forecaster_says_its_settings_per_horizon():
    fc = ProjectionForecaster(horizon=2).fit(_sine())
    fits = chosen_settings(fc)
    assert [w for w, _ in fits] == ["h=1", "h=2"]
    assert fits[1][1] == fc.best_params_[2]


def test_the_batch_summary_line_has_no_raw_dict():
    fc = ProjectionForecaster(horizon=2).fit(_sine())
    text = _chosen(fc, {}, ["a"])
    assert text.startswith("h=1: ") and " | h=2: " in text and "{" not in text


def test_the_batch_summary_falls_back_to_the_params_given():
    assert _chosen(object(), {"window": 5, "causal": False}, ["a"]) == "window=5, causal=False"


def test_the_docstring_example_runs():
    import doctest

    import tssdpa.estimators.report as report

    result = doctest.testmod(report)
    assert result.attempted > 0 and result.failed == 0


def test_a_nested_setting_is_said_as_its_own_settings():
    said = settings_text({"base": "butterworth", "base_params": {"cutoff": 0.29104884, "order": 2}})
    assert said == "base=butterworth, base_params=(cutoff=0.291, order=2)"
