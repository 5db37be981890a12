"""Each channel alone or with the others: a zero-phase ``ProjectionFilter`` with
``channel_independent="auto"`` keeps, channel by channel, the joint fit's output or that of a
filter fitted on the channel alone, whichever scores lower."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest

import tssdpa.filters.projection_channels as channels
from tssdpa.cli import main
from tssdpa.estimators.input_notes import GlitchWarning, collected
from tssdpa.filters import ProjectionFilter
from tssdpa.filters.projection_channels import CAUSAL_TIE, choose_channels, fit_each_channel

N = 600  # samples of each test series: enough for the choices below, and fits in seconds
#: a narrowed search, windowed and non-local candidates, for the tests of what a fit does
#: with each channel whatever it chooses (not of the choice): about 5x faster than the default
NARROW = dict(window=[8, 16, "all"], embedding=[1, 7])
#: a narrowed search under which the choices are as clear as under the default: the series of
#: :func:`_unrelated` filtered alone (scores 0.065 and 0.158 against 0.159 and 0.242 joint),
#: :func:`_copies` kept joint (alone 1.1-2.8x the joint score over seeds 0-3)
CLEAR = dict(window=[8, 16], embedding=[1, 3])


def _mse(a, b):
    return float(np.mean((np.asarray(a) - b) ** 2))


def _unrelated(seed=0, n=N):
    """A slow sine and a fast square wave: neither channel's distances help the other."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    clean = np.column_stack([np.sin(2 * np.pi * t / 200), np.sign(np.sin(2 * np.pi * t / 37))])
    return clean, clean + 0.3 * rng.normal(size=clean.shape)


def _copies(seed=0):
    """One signal seen by two sensors: the joint distances average their noise."""
    rng = np.random.default_rng(seed)
    s = np.sign(np.sin(2 * np.pi * np.arange(N) / 60))
    clean = np.column_stack([s, s])
    return clean, clean + 0.6 * rng.normal(size=clean.shape)


@pytest.fixture(scope="module")
def unrelated_fit():
    clean, x = _unrelated()
    return clean, x, ProjectionFilter(causal=False).fit(x)


@pytest.fixture(scope="module")
def independent_fit():
    _, x = _unrelated()
    return x, ProjectionFilter(causal=False, channel_independent=True).fit(x)


@pytest.fixture(scope="module")
def joint_fit():
    """The joint fit (``channel_independent=False``) of the series of :func:`unrelated_fit`."""
    _, x = _unrelated()
    return ProjectionFilter(causal=False, channel_independent=False).fit(x)


@pytest.fixture(scope="module")
def own_fits():
    """Each channel of the series of :func:`unrelated_fit` fitted on its own, as one series
    (shared by the tests below: none of them changes them)."""
    _, x = _unrelated()
    return [ProjectionFilter(causal=False, channel_independent=False).fit(x[:, c]) for c in (0, 1)]


def test_auto_filters_unrelated_channels_alone_and_beats_the_joint_fit(unrelated_fit, joint_fit):
    clean, x, f = unrelated_fit
    assert list(f.channel_choice_["chosen"]) == ["alone", "alone"]
    joint = joint_fit
    assert _mse(f.filter(x), clean) < _mse(joint.filter(x), clean)


def test_a_channel_filtered_alone_is_exactly_its_own_fit(unrelated_fit, own_fits):
    _, x, f = unrelated_fit
    y = np.asarray(f.filter(x))
    for c in range(2):
        own = own_fits[c]
        np.testing.assert_array_equal(y[:, c], own.filter(x[:, c]))
        assert f.channel_models_[c].best_params_ == own.best_params_


def test_the_choice_table_holds_both_scores_and_the_lower_wins(unrelated_fit):
    table = unrelated_fit[2].channel_choice_
    assert list(table.columns) == ["joint", "alone", "chosen"]
    lower = np.where(table["alone"] < table["joint"], "alone", "joint")
    assert list(table["chosen"]) == list(lower)


def test_auto_keeps_the_joint_fit_for_copies_of_one_signal():
    clean, x = _copies()
    f = ProjectionFilter(causal=False, **CLEAR).fit(x)
    assert list(f.channel_choice_["chosen"]) == ["joint", "joint"]
    assert f.channel_models_ is None
    joint = ProjectionFilter(causal=False, channel_independent=False, **CLEAR).fit(x)
    np.testing.assert_array_equal(f.filter(x), joint.filter(x))
    alone = ProjectionFilter(causal=False, channel_independent=True, **CLEAR).fit(x)
    assert _mse(f.filter(x), clean) < _mse(alone.filter(x), clean)


def test_true_fits_each_channel_alone_only(independent_fit, own_fits):
    x, f = independent_fit  # channel_independent=True
    assert f.channel_choice_ is None and len(f.best_params_) == 2
    assert not hasattr(f, "sigma_")  # no joint fit
    assert set(f.cv_results_["channel"]) == {0, 1}
    for c in range(2):
        np.testing.assert_array_equal(np.asarray(f.filter(x))[:, c], own_fits[c].filter(x[:, c]))


def test_a_mixed_choice_filters_the_joint_channels_with_the_joint_fit(unrelated_fit, joint_fit):
    _, x, fitted = unrelated_fit
    f = copy.deepcopy(fitted)  # the shared fit is not changed
    f.channel_models_ = [f.channel_models_[0], None]  # as if channel 1 had kept the joint fit
    joint = joint_fit
    y = np.asarray(f.filter(x))
    np.testing.assert_array_equal(y[:, 1], np.asarray(joint.filter(x))[:, 1])
    np.testing.assert_array_equal(y[:, 0], f.channel_models_[0].filter(x[:, 0]))


def test_a_causal_auto_fit_filters_unrelated_channels_alone_and_beats_the_joint_fit():
    # and streams them as one (tests/filters/test_channel_streams.py)
    clean, x = _unrelated()
    f = ProjectionFilter(window=[16], embedding=[1], degree=[0]).fit(x)
    assert list(f.channel_choice_["chosen"]) == ["alone", "alone"]
    assert all(m.causal for m in f.channel_models_)
    kw = dict(window=[16], embedding=[1], degree=[0], channel_independent=False)
    joint = ProjectionFilter(**kw).fit(x)
    assert _mse(f.filter(x), clean) < _mse(joint.filter(x), clean)
    np.testing.assert_array_equal(f.filter(x, zi=f.initial_state())[0][:, 0],
                                  f.channel_models_[0].filter(x[:, 0], zi=f.channel_models_[0]
                                                              .initial_state())[0])  # fmt: skip


def test_a_causal_fit_keeps_the_joint_filter_where_a_channel_alone_scores_within_the_tie():
    # one more filter a channel streams alone costs a kernel per sample: a causal fit splits a
    # channel off only where its own score is lower by more than CAUSAL_TIE of the joint one
    class Alone:
        def __init__(self, score):
            self.channel_scores_ = [score]

    joint = [1.0, 1.0, 1.0, 2.0]
    alone = [Alone(0.95), Alone(0.85), Alone(1.2), Alone(1.85)]
    assert CAUSAL_TIE == 0.1
    models, table = choose_channels(joint, alone, CAUSAL_TIE)
    assert list(table["chosen"]) == ["joint", "alone", "joint", "joint"]
    assert models == [None, alone[1], None, None]
    zero_phase, _ = choose_channels(joint, alone)  # no tie: the lower score wins
    assert zero_phase == [alone[0], alone[1], None, alone[3]]
    clean, x = _unrelated()
    f = ProjectionFilter(window=[16], embedding=[1], degree=[0]).fit(x)
    t = f.channel_choice_
    assert list(t["chosen"]) == list(np.where(t["alone"] < 0.9 * t["joint"], "alone", "joint"))


def test_the_causal_tie_never_lets_a_higher_score_win_where_the_scores_are_below_zero():
    # SURE over a noise level given above the true one scores below 0: 0.9 x a negative joint
    # score is higher, and every channel of two copies of one signal was split off with a
    # higher score than the joint fit's (noise_level=1.2, true 0.6: -0.210 against -0.224)
    class Alone:
        def __init__(self, score):
            self.channel_scores_ = [score]

    joint = [-1.0, -1.0, np.inf, 1.0]
    alone = [Alone(-0.95), Alone(-1.15), Alone(5.0), Alone(0.85)]
    models, table = choose_channels(joint, alone, CAUSAL_TIE)
    assert list(table["chosen"]) == ["joint", "alone", "alone", "alone"]
    assert models == [None, alone[1], alone[2], alone[3]]
    _, x = _copies()
    f = ProjectionFilter(window=[16], embedding=[1], degree=[0], noise_level=1.2).fit(x)
    t = f.channel_choice_
    assert (t["joint"] < 0).all()
    assert list(t["chosen"]) == list(np.where(t["alone"] < 1.1 * t["joint"], "alone", "joint"))
    assert f.channel_models_ is None  # both keep the joint filter, as their scores say


def test_random_features_stay_joint_under_auto():
    _, x = _unrelated()
    f = ProjectionFilter(recurrent="features", decay=0.9, window=[16], embedding=[1]).fit(x)
    assert f.channel_models_ is None and f.channel_choice_ is None


@pytest.mark.parametrize("bad", ["yes", 2, None, 0.5])
def test_a_bad_channel_independent_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="channel_independent"):
        ProjectionFilter(causal=False, channel_independent=bad).fit(_unrelated()[1])


def test_one_channel_is_one_fit():
    _, x = _unrelated()
    f = ProjectionFilter(causal=False).fit(x[:, 0])
    assert f.channel_models_ is None and f.channel_choice_ is None
    assert f.channel_scores_.shape == (1,)


def test_noise_levels_given_per_channel_go_to_each_channel_fit():
    _, x = _unrelated()
    f = ProjectionFilter(causal=False, channel_independent=True, noise_level=[0.3, 0.5], **NARROW)
    f.fit(x)
    assert [m.noise_level for m in f.channel_models_] == [0.3, 0.5]
    np.testing.assert_array_equal(f.noise_level_, [0.3, 0.5])


def test_with_a_target_each_channel_fit_sees_its_own_channel_of_it():
    clean, x = _unrelated()
    f = ProjectionFilter(causal=False, channel_independent=True, **NARROW).fit(x, target=clean)
    own = ProjectionFilter(causal=False, channel_independent=False, **NARROW)
    own.fit(x[:, 1], clean[:, 1])
    np.testing.assert_array_equal(np.asarray(f.filter(x))[:, 1], own.filter(x[:, 1]))
    g = ProjectionFilter(causal=False, **NARROW).fit(x, target=clean)
    table = g.channel_choice_
    assert list(table["chosen"]) == list(
        np.where(table["alone"] < table["joint"], "alone", "joint")
    )


def test_the_input_is_not_changed_and_a_frame_comes_back_a_frame(unrelated_fit):
    _, x, f = unrelated_fit
    df = pd.DataFrame(x, columns=["slow", "fast"], index=pd.RangeIndex(5, 5 + N))
    before = df.copy()
    y = f.filter(df)
    pd.testing.assert_frame_equal(df, before)
    assert list(y.columns) == ["slow", "fast"] and y.index.equals(df.index)


@pytest.mark.parametrize("fitted", ["unrelated_fit", "independent_fit"])  # "auto", True
def test_save_and_load_give_the_same_output(tmp_path, request, fitted):
    *_, x, f = request.getfixturevalue(fitted)
    f.save(tmp_path / "f")
    g = ProjectionFilter.load(tmp_path / "f")
    np.testing.assert_array_equal(g.filter(x), f.filter(x))
    assert len(g.channel_models_) == 2


def _tamper(path, change):
    config = json.loads((path / "config.json").read_text())
    change(config["fitted"])
    (path / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda f: f["channel_models_"].pop(), "one entry per channel"),
        (lambda f: f["channel_models_"][0].update(extra=1), r"channel_models_\[0\]"),
        (lambda f: f["channel_models_"][0]["fitted"].update(window_=-3), r"channel_models_\[0\]"),
        (lambda f: f["channel_models_"][1]["fitted"].update(n_channels_=2), r"channel_models_\["),
    ],
)
def test_a_tampered_file_is_refused_naming_the_channel_model(
    tmp_path, independent_fit, change, message
):
    independent_fit[1].save(tmp_path / "f")
    _tamper(tmp_path / "f", change)
    with pytest.raises(ValueError, match=message):
        ProjectionFilter.load(tmp_path / "f")


def test_the_cli_says_which_channels_it_filters_alone(tmp_path, capsys):
    _, x = _unrelated()
    p, out = tmp_path / "two.csv", tmp_path / "o.csv"
    pd.DataFrame({"slow": x[:, 0], "fast": x[:, 1]}).to_csv(p, index=False)
    params = json.dumps(CLEAR)  # zero-phase: --method projection with causal false is refused
    args = ["filter", str(p), "--method", "projection_zp", "--params", params]
    assert main([*args, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "filters slow, fast alone" in err and "joint fit's)" in err
    for name in ("slow", "fast"):  # each channel's own settings, by its name
        line = f"projection_zp channel {name} on ['slow', 'fast']: chose "
        assert line in err and "window=" in err.split(line)[1].splitlines()[0]
    # no joint filter is used: nothing is said of its kernel, mixture or adaptation
    said = [line for line in err.splitlines() if "weighted mean" in line or "low-passes" in line]
    assert said and all(line.startswith("projection_zp channel ") for line in said)
    assert "the kernel compares the channels" not in err
    assert "fast_filtered" in pd.read_csv(out).columns


def test_channel_scores_follow_each_channels_error_over_its_noise_variance_in_any_units():
    rng = np.random.default_rng(3)
    t = np.arange(2000)
    units = np.array([1.0, 100.0])
    clean = np.column_stack([np.sin(2 * np.pi * t / 200), np.sign(np.sin(2 * np.pi * t / 37))])
    clean = clean * units
    noise = 0.3 * units
    x = clean + noise * rng.normal(size=clean.shape)
    # a small search, 6x quicker than the default's (the scores are tested, not the search):
    # scores 0.8-1.34x the errors on seeds 3-5 (the default search's: 0.80-1.79x)
    small = dict(window=[8, 32, "all"], embedding=[1, 7], degree=[0, 2])
    f = ProjectionFilter(causal=False, channel_independent=False, local_window=None,
                         noise_level=noise.tolist(), **small).fit(x)  # fmt: skip
    measured = np.mean((np.asarray(f.filter(x)) - clean) ** 2, axis=0) / noise**2
    assert f.channel_scale_[1] / f.channel_scale_[0] > 50  # the kernel's units differ from x's
    # the divergence is shared by the channels (its mean over them): a channel's score is
    # near its error, not equal to it (here 0.21 / 0.26 against 0.19 / 0.20)
    assert np.all((f.channel_scores_ > 0.5 * measured) & (f.channel_scores_ < 2 * measured))


@pytest.mark.filterwarnings("ignore:x channel 1 has 1 glitch")
@pytest.mark.parametrize("independent", ["auto", True])
def test_notes_name_the_channel_they_are_about_once(independent):
    _, x = _unrelated()
    x[300, 1] += 300.0  # a glitch in the second channel
    with collected() as fit_notes:
        f = ProjectionFilter(causal=False, channel_independent=independent, **NARROW).fit(x)
    with collected() as filter_notes:
        f.filter(x)
    for notes in (fit_notes, filter_notes):
        glitches = [n for n in notes if isinstance(n, GlitchWarning)]
        assert len(glitches) == 1 and list(glitches[0].found) == [1]
        assert "'fast' has 1 glitch" in glitches[0].told(["slow", "fast"])


def test_the_batch_summary_says_which_channels_are_filtered_alone(tmp_path):
    from tssdpa.batch import filter_files

    _, x = _unrelated()
    pd.DataFrame({"slow": x[:, 0], "fast": x[:, 1]}).to_csv(tmp_path / "a.csv", index=False)
    (tmp_path / "out").mkdir()
    summary = filter_files([str(tmp_path / "a.csv")], tmp_path / "out",
                           params={"causal": False, **CLEAR}, progress=False)  # fmt: skip
    assert summary["status"].tolist() == ["ok"]
    said = summary["params"].iloc[0]
    for name in ("slow", "fast"):  # each channel's own settings, by its name
        assert f"channel {name}: " in said
        assert "window=" in said.split(f"channel {name}: ")[1].split("channel ")[0]


def test_a_refit_channel_by_channel_keeps_nothing_of_the_last_fit_and_loads(tmp_path):
    _, x = _unrelated()
    f = ProjectionFilter(causal=False, channel_independent=False, **NARROW)
    f.fit(np.column_stack([x, x]))
    f.set_params(channel_independent=True).fit(x)
    assert not hasattr(f, "sigma_") and not hasattr(f, "center_")
    f.save(tmp_path / "f")
    np.testing.assert_array_equal(ProjectionFilter.load(tmp_path / "f").filter(x), f.filter(x))


@pytest.mark.parametrize("value", [1, np.True_])
def test_one_and_numpy_true_mean_true(value):
    _, x = _unrelated()
    f = ProjectionFilter(causal=False, channel_independent=value, **NARROW).fit(x)
    assert f.channel_choice_ is None and all(m is not None for m in f.channel_models_)
    g = ProjectionFilter(channel_independent=value, window=[16], embedding=[1]).fit(x)
    assert all(m is not None and m.causal for m in g.channel_models_)


def test_settings_changed_after_fit_reach_the_channels_filtered_alone(unrelated_fit):
    _, x, fitted = unrelated_fit
    f = fitted.clone()
    f.__dict__.update({k: v for k, v in fitted.__dict__.items() if k.endswith("_")})
    before = np.asarray(f.filter(x))
    own = copy.deepcopy(f.channel_models_[1])
    assert own.mixture_  # the channel's own fit averages its best candidates
    f.set_params(local_window=None, mix=False)
    after = np.asarray(f.filter(x))
    assert not np.allclose(after[:, 1], before[:, 1])  # mix=False reached the channel
    np.testing.assert_array_equal(after[:, 1], own.set_params(mix=False).filter(x[:, 1]))
    assert f.channel_models_[1].local_window is None
    f.set_params(causal=True, local_window="auto")  # a causal filter is the joint one
    np.testing.assert_array_equal(f.filter(x), f.filter(x, zi=f.initial_state())[0])
    f.set_params(causal=False)


def test_a_file_from_before_the_parameter_loads_as_the_joint_filter(tmp_path):
    _, x = _unrelated()
    ProjectionFilter(causal=False, channel_independent=False).fit(x).save(tmp_path / "f")
    config = json.loads((tmp_path / "f" / "config.json").read_text())
    del config["params"]["channel_independent"]
    (tmp_path / "f" / "config.json").write_text(json.dumps(config))
    g = ProjectionFilter.load(tmp_path / "f")
    assert g.channel_independent is False
    assert g.channel_choice_ is None and g.channel_scores_ is None


def test_the_report_names_the_joint_fit_and_each_channel_fitted_alone(unrelated_fit):
    from tssdpa.estimators.report import chosen_settings

    f = copy.deepcopy(unrelated_fit[2])  # the shared fit is not changed
    assert [w for w, _ in chosen_settings(f, ["slow", "fast"])] == ["channel slow", "channel fast"]
    f.channel_models_[0] = None  # as if the slow channel had kept the joint output
    fits = chosen_settings(f, ["slow", "fast"])
    assert [w for w, _ in fits] == ["joint (slow)", "channel fast"]
    assert fits[0][1] == f.best_params_ and fits[1][1] == f.channel_models_[1].best_params_


def test_each_channel_alone_is_scored_on_the_joint_fit_block_where_a_channel_starts_late():
    clean, x = _unrelated(n=1200)
    x = x.copy()
    x[:600, 1] = np.nan  # the joint fit block is rows 600-999
    kw = {"causal": False, "window": [4, 8], "max_fit_samples": 400, "local_window": None}
    f = ProjectionFilter(**kw).fit(x)
    for c in range(2):
        alone = ProjectionFilter(**kw, channel_independent=False).fit(x[600:, c])
        assert f.channel_choice_["alone"][c] == pytest.approx(alone.channel_scores_[0])
    g = ProjectionFilter(**kw, holdout=0.5).fit(x, target=clean)
    assert g.fit_holdout_start_ == 800  # an index into x, for the channels' fits too
    models = fit_each_channel(g, x, clean, None, notes=False, block=slice(600, 1000))
    assert [m.fit_holdout_start_ for m in models] == [800, 800]


def test_a_channel_that_ends_before_or_early_in_the_joint_block_is_fitted_on_its_own():
    """Fitted on the joint block it would have no sample there (before: an error), or a few
    (a starved fit); it is fitted on its whole series, as with channel_independent=True."""
    _, x = _unrelated(n=800)
    for end in (300, 510):  # before the joint block (rows 500-699), 10 rows into it
        z = x[:800].copy()
        z[end:, 0], z[:500, 1] = np.nan, np.nan
        kw = {"causal": False, "window": [4, 8], "max_fit_samples": 200, "local_window": None}
        f = ProjectionFilter(**kw).fit(z)
        alone = ProjectionFilter(**kw, channel_independent=True).fit(z)
        assert f.channel_choice_["chosen"][0] == "alone"
        np.testing.assert_array_equal(f.filter(z)[:, 0], alone.filter(z)[:, 0])


def test_a_failed_fit_leaves_the_filter_as_it_was(monkeypatch):
    _, x = _unrelated()
    f = ProjectionFilter(causal=False, window=[4], local_window=None).fit(x)
    before, state = f.filter(x), dict(vars(f))

    def fail(*args, **kwargs):
        raise RuntimeError("interrupted")

    monkeypatch.setattr(channels, "fit_each_channel", fail)
    with pytest.raises(RuntimeError, match="interrupted"):
        f.fit(x)
    assert vars(f).keys() == state.keys()
    assert all(vars(f)[k] is v for k, v in state.items())
    np.testing.assert_array_equal(f.filter(x), before)


def test_an_exact_channel_fitted_alone_beats_a_joint_fit_with_error():
    """With a noise-free channel and its target, the alone fit's score is 0 / 0 (NaN) and the
    joint fit's an error over 0 (inf): the exact output is kept."""
    clean, x = _unrelated()
    x = x[:800].copy()
    x[:, 0] = clean[:800, 0]
    target = np.column_stack([clean[:800, 0], clean[:800, 1]])
    f = ProjectionFilter(causal=False, window=[4, 8], local_window=None).fit(x, target=target)
    choice = f.channel_choice_.loc[0]
    assert np.isnan(choice["alone"]) and np.isposinf(choice["joint"])
    assert choice["chosen"] == "alone"
    assert np.abs(f.filter(x)[:, 0] - clean[:800, 0]).max() <= np.abs(
        ProjectionFilter(causal=False, window=[4, 8], local_window=None,
                         channel_independent=False).fit(x, target=target).filter(x)[:, 0]
        - clean[:800, 0]).max()  # fmt: skip


def test_a_fit_of_each_channel_alone_with_a_target_tells_its_holdout_start():
    clean, x = _unrelated()
    f = ProjectionFilter(causal=False, window=[4], local_window=None, holdout=0.5,
                         channel_independent=True).fit(x[:600], target=clean[:600])  # fmt: skip
    assert f.fit_holdout_start_ == 300


def test_a_verbose_fit_says_each_channels_own_settings_without_raw_dicts(capsys):
    _, x = _unrelated()
    ProjectionFilter(causal=False, window=[4, 8], local_window=None).fit(x, verbose=True)
    out = capsys.readouterr().out
    assert "channel 0 alone: " in out and "channel 1 alone: " in out and "{'" not in out


def test_a_verbose_causal_fit_says_its_tie_where_a_lower_score_keeps_the_joint_filter(capsys):
    # the report read 'joint 0.342, alone 0.3344 -> joint' with nothing saying why the lower
    # score lost: a causal fit splits a channel off only beyond CAUSAL_TIE
    _, x = _unrelated()
    ProjectionFilter(window=[16], embedding=[1], degree=[0]).fit(x, verbose=True)
    assert "causal: alone where lower by more than 10% of the joint one" in capsys.readouterr().out
    ProjectionFilter(causal=False, window=[4], local_window=None).fit(x, verbose=True)
    out = capsys.readouterr().out
    assert "channels alone or joint (score over the noise variance):" in out


def test_the_cli_says_a_causal_filter_takes_a_channel_alone_only_beyond_the_tie(tmp_path, capsys):
    _, x = _unrelated()
    p = tmp_path / "two.csv"
    pd.DataFrame({"slow": x[:, 0], "fast": x[:, 1]}).to_csv(p, index=False)
    args = ["filter", str(p), "--method", "projection", "--out", str(tmp_path / "o.csv")]
    assert main([*args, "--params", '{"window": [16], "embedding": [1], "degree": [0]}']) == 0
    err = capsys.readouterr().err
    assert "alone, each with its own fit" in err
    assert "lower than the joint fit's by more than 10%)" in err


BLOCK = 300  # max_fit_samples of the long series below: a third of it is the fit block
LONG = {"window": [4, 16, 64], "embedding": [1], "degree": [0], "max_fit_samples": BLOCK}


def _still_then_moving(seed=0, n=3 * BLOCK):
    """A channel still through the fit block, then moving as the other, a square wave: the
    fusion IMU's gyroscope Z, still in the first 4,000 samples and turning after them."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    square = np.sign(np.sin(2 * np.pi * t / 23))
    clean = np.column_stack([np.where(t < BLOCK, 0.0, square), square])
    return clean, clean + 0.3 * rng.normal(size=clean.shape)


@pytest.mark.parametrize("with_target", [False, True])
def test_a_causal_fit_of_a_long_series_chooses_on_the_rows_after_its_fit_block(with_target):
    # alone, the still channel's filter averages its window flat and wins the fit block; on
    # the rows after it that filter lags every step of the wave, and the joint one does not
    clean, x = _still_then_moving()
    target = clean if with_target else None
    f = ProjectionFilter(**LONG).fit(x, target=target)
    t = f.channel_choice_
    assert t["alone"][0] < (1 - CAUSAL_TIE) * t["joint"][0]  # the fit block: alone
    assert t["chosen"][0] == "joint"
    after = slice(BLOCK, None)
    alone = ProjectionFilter(**LONG, channel_independent=True).fit(x, target=target)
    assert _mse(f.filter(x)[after, 0], clean[after, 0]) < _mse(
        alone.filter(x)[after, 0], clean[after, 0]
    )
    assert t["held_out_alone"][0] > t["held_out_joint"][0]  # as the rows after it say
    # the same series ending with its fit block has no other rows: chosen on the block
    g = ProjectionFilter(**LONG).fit(x[:BLOCK], target=None if target is None else target[:BLOCK])
    assert "held_out_joint" not in g.channel_choice_ and g.channel_choice_["chosen"][0] == "alone"


def test_the_held_out_rows_are_scored_by_the_error_against_the_target_over_the_inputs():
    # on as many rows after the fit block as it holds: a longer series costs no more to score
    clean, x = _still_then_moving()
    f = ProjectionFilter(**LONG).fit(x, target=clean)
    t = f.channel_choice_
    f.channel_models_ = None  # the joint output on every channel
    alone = ProjectionFilter(**LONG, channel_independent=True).fit(x, target=clean)
    after = slice(BLOCK, 2 * BLOCK)
    noisy = np.mean((x[after] - clean[after]) ** 2, axis=0)
    for column, y in (("held_out_joint", f.filter(x)), ("held_out_alone", alone.filter(x))):
        error = np.mean((np.asarray(y)[after] - clean[after]) ** 2, axis=0)
        np.testing.assert_allclose(t[column], error / noisy, rtol=1e-9)


def test_a_channel_known_on_too_few_rows_after_the_fit_block_is_chosen_on_the_block():
    clean, x = _still_then_moving()
    x[BLOCK + 60 :, 0] = np.nan  # 60 known rows after the block: under MIN_HELD_OUT of 300
    assert 60 < channels.MIN_HELD_OUT * BLOCK
    t = ProjectionFilter(**LONG).fit(x).channel_choice_
    assert np.isnan(t["held_out_joint"][0]) and np.isnan(t["held_out_alone"][0])
    assert t["chosen"][0] == "alone"  # the fit block's choice, as before
    assert np.isfinite(t["held_out_joint"][1]) and np.isfinite(t["held_out_alone"][1])


def test_a_verbose_fit_and_the_cli_say_a_long_series_was_chosen_on_the_rows_after_its_block(
    tmp_path, capsys
):
    _, x = _unrelated(n=3 * BLOCK)
    kw = {"window": [16], "embedding": [1], "degree": [0], "max_fit_samples": BLOCK}
    f = ProjectionFilter(**kw).fit(x, verbose=True)
    assert f.channel_choice_["chosen"][0] == "alone"
    out = capsys.readouterr().out
    assert "on the rows after the fit block where a channel has enough" in out
    assert "channel 0: joint " in out and "; after the fit block joint " in out
    p = tmp_path / "two.csv"
    pd.DataFrame({"slow": x[:, 0], "fast": x[:, 1]}).to_csv(p, index=False)
    args = ["filter", str(p), "--method", "projection", "--out", str(tmp_path / "o.csv")]
    assert main([*args, "--params", json.dumps(kw)]) == 0
    err = capsys.readouterr().err
    assert "joint fit's by more than 10% on the rows after the fit block)" in err
