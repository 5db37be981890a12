"""ProjectionForecaster(channel_independent="auto"): joint or per-channel patterns, chosen on
the last quarter of the fitted series by forecasts from fits on the first three quarters."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tssdpa.filters import ProjectionForecaster
from tssdpa.filters.channel_choice import VALIDATION_SHARE, choose_independent, validation_errors

KW = dict(horizon=2, embedding=[1, 2, 3], model=["mean", "linear"], holdout=None)


def logistic(n, seed):
    x = np.empty(n)
    x[0] = 0.2 + 0.6 * np.random.default_rng(seed).random()
    for t in range(1, n):
        x[t] = 3.9 * x[t - 1] * (1 - x[t - 1])
    return x


def driven(n, seed=0):
    """Channel 1 white noise, channel 2 its echo one step later: only a joint pattern sees
    the echo coming."""
    u = np.random.default_rng(seed).normal(size=n)
    return np.column_stack([u, np.concatenate([[0.0], 0.9 * u[:-1]])])


def test_auto_chooses_per_channel_patterns_for_unrelated_chaotic_channels():
    # two independent maps: a joint pattern doubles the dimension and finds worse neighbours
    y = np.column_stack([logistic(600, 1), logistic(600, 2)])
    auto = ProjectionForecaster(channel_independent="auto", **KW).fit(y)
    assert auto.channel_independent_
    assert auto.channel_choice_["independent"][1] < auto.channel_choice_["joint"][1]
    sep = ProjectionForecaster(channel_independent=True, **KW).fit(y)
    np.testing.assert_array_equal(auto.forecast(y, horizon=2), sep.forecast(y, horizon=2))
    assert auto.best_params_ == sep.best_params_


def test_auto_chooses_the_joint_pattern_when_one_channel_drives_another():
    y = driven(600)
    auto = ProjectionForecaster(channel_independent="auto", **KW).fit(y)
    assert not auto.channel_independent_
    assert auto.channel_models_ is None
    # channel 1 is unpredictable either way; jointly, channel 2 is known a step ahead
    assert auto.channel_choice_["joint"][1] < 0.6 * auto.channel_choice_["independent"][1]
    joint = ProjectionForecaster(channel_independent=False, **KW).fit(y)
    np.testing.assert_array_equal(auto.forecast(y, horizon=1), joint.forecast(y, horizon=1))


def test_the_choice_is_scored_on_the_last_quarter_from_fits_on_the_first_three():
    y = driven(400)
    cut = int(round(len(y) * (1 - VALIDATION_SHARE)))
    auto = ProjectionForecaster(channel_independent="auto", **KW).fit(y)
    for name, independent in (("joint", False), ("independent", True)):
        m = ProjectionForecaster(channel_independent=independent, **KW).fit(y[:cut])
        pred = np.asarray(m.forecast(y, horizon=2))
        var = y[:cut].var(axis=0)
        by_hand = np.mean((pred[cut - 2 : -2] - y[cut:]) ** 2 / var)
        assert auto.channel_choice_[name][2] == pytest.approx(by_hand, rel=1e-12)
        assert validation_errors(m, y, cut, [2])[2] == pytest.approx(by_hand, rel=1e-12)


def test_auto_on_one_channel_is_the_plain_fit():
    y = logistic(400, 3)
    auto = ProjectionForecaster(channel_independent="auto", **KW).fit(y)
    plain = ProjectionForecaster(**KW).fit(y)
    assert auto.channel_choice_ == {} and not auto.channel_independent_
    np.testing.assert_array_equal(auto.forecast(y, horizon=2), plain.forecast(y, horizon=2))


def test_a_series_too_short_to_compare_keeps_the_joint_pattern():
    # 20 samples: three quarters (15) are too few for horizon 9, the whole series is not
    y = driven(20)
    auto = ProjectionForecaster(channel_independent="auto", horizon=9, embedding=1,
                                model="mean").fit(y)  # fmt: skip
    assert auto.channel_choice_ == {} and not auto.channel_independent_


def test_verbose_auto_fit_prints_both_errors_and_the_choice(capsys):
    ProjectionForecaster(channel_independent="auto", **KW).fit(driven(400), verbose=True)
    out = capsys.readouterr().out
    assert "channel_independent='auto'" in out
    assert "-> joint patterns" in out


@pytest.mark.parametrize("value", ["yes", "Auto", 2, -1, 0.5, None, [True]])
def test_channel_independent_must_be_true_false_or_auto(value):
    with pytest.raises(ValueError, match="channel_independent"):
        ProjectionForecaster(channel_independent=value).fit(driven(100))


@pytest.mark.parametrize("value", [1, np.True_, np.int64(1)])
def test_true_like_values_fit_one_forecaster_per_channel(value):
    fc = ProjectionForecaster(channel_independent=value, **KW).fit(driven(200))
    assert fc.channel_independent_ and len(fc.channel_models_) == 2


class _Fixed:
    """A stand-in forecaster whose forecasts are given, the same for either kind unless
    ``worse`` names one (then its forecasts are off by 1 everywhere)."""

    def __init__(self, channel_independent, worse=None, fails=None, **_):
        self.kind = "independent" if channel_independent else "joint"
        self.worse, self.fails = worse, fails

    def fit(self, a):
        if self.kind == self.fails:
            raise ValueError("too few complete rows")
        return self

    def forecast(self, a, horizon):
        return np.roll(a, -horizon, axis=0) + (1.0 if self.kind == self.worse else 0.1)


def test_a_tie_keeps_the_joint_pattern():
    a = driven(200)
    independent, scores = choose_independent(_Fixed, {}, a, [1, 2])
    assert not independent and scores["joint"] == scores["independent"]
    independent, _ = choose_independent(_Fixed, {"worse": "joint"}, a, [1, 2])
    assert independent


def test_a_kind_that_cannot_be_fitted_on_three_quarters_loses():
    a = driven(200)
    independent, scores = choose_independent(_Fixed, {"fails": "joint"}, a, [1])
    assert independent and list(scores) == ["independent"]
    independent, scores = choose_independent(_Fixed, {"fails": "independent"}, a, [1])
    assert not independent and list(scores) == ["joint"]


def test_auto_fits_channels_whose_gaps_leave_no_complete_row_one_by_one():
    # each channel missing on alternate 20-sample blocks: no row has both channels known,
    # so no joint pattern exists, while each channel alone has 300 samples
    y = np.column_stack([logistic(600, 1), logistic(600, 2)])
    block = (np.arange(600) // 20) % 2
    y[block == 0, 0] = np.nan
    y[block == 1, 1] = np.nan
    with pytest.raises(ValueError, match="channel_independent=True"):
        ProjectionForecaster(**KW).fit(y)
    auto = ProjectionForecaster(channel_independent="auto", **KW).fit(y)
    assert auto.channel_independent_ and list(auto.channel_choice_) == ["independent"]


def test_refits_that_change_kind_save_and_load(tmp_path):
    joint_data, independent_data = (
        driven(600),
        np.column_stack([logistic(600, 1), logistic(600, 2)]),
    )
    fc = ProjectionForecaster(channel_independent="auto", **KW)
    for y, independent in ((joint_data, False), (independent_data, True), (joint_data, False)):
        fc.fit(y)
        assert fc.channel_independent_ == independent
        assert (fc.channel_models_ is None) != independent
        assert hasattr(fc, "mean_") != independent  # no state left from the other kind
        fc.save(tmp_path / "f")
        again = ProjectionForecaster.load(tmp_path / "f")
        np.testing.assert_array_equal(again.forecast(y, horizon=2), fc.forecast(y, horizon=2))


def test_a_refit_that_fails_after_its_checks_leaves_the_last_fit_whole():
    # (the fitted series is replaced before the structure search: every fitted attribute
    # comes back with the last fit's, so its structures keep the library they were chosen on)
    fc = ProjectionForecaster(**KW).fit(driven(300))
    before = fc.predict(2)
    with pytest.raises(ValueError, match="too few"):
        fc.fit(driven(6))
    np.testing.assert_array_equal(fc.predict(2), before)


def test_an_auto_fit_saves_and_loads_as_the_kind_it_chose(tmp_path):
    y = np.column_stack([logistic(600, 1), logistic(600, 2)])
    auto = ProjectionForecaster(channel_independent="auto", **KW).fit(y)
    auto.save(tmp_path / "f")
    cfg = json.loads((tmp_path / "f" / "config.json").read_text())
    assert "channel_models_" in cfg["fitted"]
    again = ProjectionForecaster.load(tmp_path / "f")
    assert again.channel_independent_ and again.channel_independent == "auto"
    assert again.channel_choice_ == {}  # not saved
    np.testing.assert_array_equal(again.forecast(y, horizon=2), auto.forecast(y, horizon=2))
    np.testing.assert_array_equal(again.predict(2), auto.predict(2))


def test_auto_does_not_mutate_the_series():
    y = driven(300)
    before = y.copy()
    ProjectionForecaster(channel_independent="auto", **KW).fit(y)
    np.testing.assert_array_equal(y, before)
