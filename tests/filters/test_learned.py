"""The learned projection estimators: LearnedProjectionFilter, LearnedProjectionForecaster."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tssdpa.estimators.arrays import STREAM_TOLD
from tssdpa.filters import LearnedProjectionFilter, LearnedProjectionForecaster

TRAINER = dict(enable_checkpointing=False, accelerator="cpu", logger=False)
QUIET = {
    "accelerator": "cpu",
    "enable_progress_bar": False,
    "trainer_kwargs": {"enable_checkpointing": False, "logger": False},
}


# tiny models: one torch thread, and Lightning's chatter silenced (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread", "quiet_warnings")


def square_wave(n=2400, noise=0.3, seed=0, channels=1):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 50, n)
    clean = np.stack([np.sign(np.sin(t * (1 + 0.3 * c))) for c in range(channels)], axis=1)
    noisy = clean + noise * rng.normal(size=clean.shape)
    return (clean[:, 0], noisy[:, 0]) if channels == 1 else (clean, noisy)


def _ar_series(n=900, channels=2, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    y = np.stack([np.sin(t * (0.11 + 0.04 * c)) for c in range(channels)], 1)
    return y + 0.2 * rng.normal(size=y.shape)


@pytest.fixture(scope="module")
def fitted_filter():
    clean, noisy = square_wave(1200, channels=2)
    f = LearnedProjectionFilter(
        window=6,
        seq_len=48,
        d_model=16,
        num_heads=2,
        num_layers=2,
        max_epochs=8,
        enable_progress_bar=False,
        trainer_kwargs=TRAINER,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f.fit(noisy, target=clean)
    return f, clean, noisy


@pytest.fixture(scope="module")
def fitted_forecaster():
    rng = np.random.default_rng(0)
    t = np.arange(1000)
    y = np.stack([np.sin(t * 0.13), np.cos(t * 0.05) + 0.1 * np.sin(t * 0.7)], 1)
    y = y + 0.05 * rng.normal(size=y.shape)
    fc = LearnedProjectionForecaster(
        lookback=48,
        horizon=12,
        patch_len=8,
        d_model=16,
        max_epochs=2,
        stride=4,
        enable_progress_bar=False,
        trainer_kwargs=TRAINER,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fc.fit(y)
    return fc, y


# ------------------------------------------------------------------ LearnedProjectionFilter
def test_learned_filter_training_lowers_validation_loss_and_denoises(fitted_filter):
    f, clean, noisy = fitted_filter
    assert f.history_["final_val_loss"] < f.history_["initial_val_loss"]
    y = f.filter(noisy)
    assert y.shape == noisy.shape
    # quality: closer to the clean signal than the noisy input, on the whole series and on
    # the validation tail the training never saw
    assert np.mean((y - clean) ** 2) < np.mean((noisy - clean) ** 2)
    v = slice(*f.split_["val"])
    assert np.mean((y[v] - clean[v]) ** 2) < np.mean((noisy[v] - clean[v]) ** 2)


def test_learned_validation_never_overlaps_training(fitted_filter, fitted_forecaster):
    """The series is split first (train | gap of one window | validation tail), then cut."""
    f, clean, noisy = fitted_filter
    (t0, t1), (v0, v1) = f.split_["train"], f.split_["val"]
    assert t0 == 0 and v1 == len(noisy) and v0 - t1 >= f.seq_len
    assert v1 - v0 == round(len(noisy) * f.holdout)
    fc, y = fitted_forecaster
    (t0, t1), (v0, v1) = fc.split_["train"], fc.split_["val"]
    assert v0 - t1 >= fc.lookback + fc.horizon and v1 == len(y)


@settings(max_examples=3, deadline=None)
@given(cuts=st.lists(st.integers(1, 399), max_size=4))
def test_learned_filter_chunking_invariance(fitted_filter, cuts):
    f, clean, noisy = fitted_filter
    x = noisy[:400]
    y_once = f.filter(x)  # one pass, the reference for any chunking
    z = f.initial_state()
    parts = []
    bounds = [0, *sorted(set(cuts)), 400]
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            y, z = f.filter(x[a:b], zi=z)
            parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts), y_once, atol=1e-5)


def test_an_empty_chunk_of_a_learned_filters_stream_is_a_tick_without_samples(fitted_filter):
    """As ProjectionFilter's and ResidualProjectionFilter's: an empty y and zf = zi, a copy
    (it was refused, "x is empty", so a control loop's tick with no new sample raised)."""
    f, clean, noisy = fitted_filter
    _, z = f.filter(noisy[:30], zi=f.initial_state())
    y, zf = f.filter(noisy[:0], zi=z)
    assert y.shape == (0, 2) and np.array_equal(zf, z) and zf is not z
    t, tz = f.filter(torch.zeros(0, 2), zi=z)
    assert isinstance(t, torch.Tensor) and t.shape == (0, 2) and np.array_equal(tz, z)
    with pytest.raises(ValueError, match="x is empty"):
        f.filter(noisy[:0])  # offline there is nothing to filter


def test_a_learned_filters_stream_warns_of_an_uneven_index_once_not_per_chunk(fitted_filter):
    f, clean, noisy = fitted_filter
    times = pd.to_datetime(np.cumsum(np.tile([1, 1, 1, 3], 51)[:201]), unit="s")  # uneven
    frame = pd.DataFrame(noisy[:201], index=times)
    z = f.initial_state()
    f.__dict__.pop(STREAM_TOLD, None)  # told by an earlier test's stream, if any
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for a in range(0, 201, 20):
            _, z = f.filter(frame.iloc[a : a + 20], zi=z)
    uneven = [w for w in caught if "UnevenSampling" in type(w.message).__name__]
    assert len(uneven) <= 1


def test_learned_filter_step_equals_one_pass_and_masks_nan(fitted_filter):
    f, clean, noisy = fitted_filter
    x = noisy[:60].copy()
    x[10, 0] = np.nan
    y_once = f.filter(x)
    assert np.isfinite(y_once).all()
    s = f.initial_state()
    steps = []
    for i in range(60):
        y, s = f.step(x[i], s)
        steps.append(y)
    np.testing.assert_allclose(np.array(steps), y_once, atol=1e-5)


def test_a_channel_missing_over_a_stretch_leaves_the_others_their_readings(fitted_filter):
    # a sample missing on one channel was masked as a key on all: with channel 0 missing
    # over a stretch, channel 1 was filtered from no keys there (0.81 off the output with
    # channel 0 at its training mean, as the learned forecaster takes a missing input)
    f, clean, noisy = fitted_filter
    x = noisy[:300].copy()
    x[:200, 0] = np.nan
    as_mean = x.copy()
    as_mean[:200, 0] = f.mean_[0]
    np.testing.assert_allclose(f.filter(x)[:, 1], f.filter(as_mean)[:, 1], atol=1e-5)


def test_learned_filter_gives_nan_where_a_channel_has_no_sample_in_reach(
    fitted_filter, cuts=(7, 31)
):
    # before a channel's first sample the net saw nothing and gave the training mean
    f, clean, noisy = fitted_filter
    H = f.history_length
    x = noisy[: 3 * H + 40].copy()
    x[:5, 0] = np.nan
    x[H + 10 : 3 * H + 12, 0] = np.nan  # a gap longer than the receptive field (H + 1)
    y = f.filter(x)
    empty = np.zeros(len(x), bool)
    empty[:5] = True
    empty[2 * H + 10 : 3 * H + 12] = True  # rows whose H + 1 samples all lie in the gap
    assert np.array_equal(np.isnan(y[:, 0]), empty) and np.isfinite(y[:, 1:]).all()
    z, parts = f.initial_state(), []
    for a, b in zip((0, *cuts), (*cuts, len(x))):  # any chunking: the same rows
        part, z = f.filter(x[a:b], zi=z)
        parts.append(part)
    np.testing.assert_allclose(np.concatenate(parts), y, atol=1e-5)


def test_learned_forecaster_gives_nan_where_its_window_holds_no_sample_of_a_channel(
    fitted_forecaster,
):
    # before channel 1's first sample the net forecast from the training mean put there
    fc, y = fitted_forecaster
    y = y[:400].copy()
    y[:100, 1] = np.nan
    y[200:260, 0] = np.nan  # a gap longer than the 48-sample window
    path = fc.forecast_path(y)
    empty = np.zeros(len(y), bool)
    empty[:100] = True
    empty[200 + 47 : 260] = True  # origins whose 48 samples all lie in the gap
    starts = np.arange(len(y)) >= fc.lookback - 1
    assert np.isnan(path[empty]).all()
    assert np.isfinite(path[~empty & starts]).all()
    np.testing.assert_array_equal(
        np.isnan(fc.forecast(y, horizon=3)[:, 0]), np.isnan(path[:, 2, 0])
    )


@pytest.mark.parametrize("with_target", [False, True])
def test_the_learned_filter_validates_on_the_last_part_of_x_up_to_its_last_reading(with_target):
    # split on every row, x missing its last 30% left the validation tail no reading: its
    # loss was NaN (no target) or that of outputs from nothing (the clean target), no epoch
    # beat the starting model, and the fit kept it: nothing trained, silently
    clean, noisy = square_wave(1000)
    x = noisy.copy()
    x[700:] = np.nan
    kw = dict(window=6, seq_len=48, d_model=8, num_heads=2, num_layers=1, max_epochs=1,
              enable_progress_bar=False, trainer_kwargs=TRAINER)  # fmt: skip
    f = LearnedProjectionFilter(**kw).fit(x, target=clean if with_target else None)
    # the last 20% of the 700 readings; with a target, up to the last one within reach of
    # them (the receptive field of 5 samples past x's last reading), as a target is kept
    assert f.split_["val"] == ((564, 705) if with_target else (560, 700))
    assert np.isfinite(f.history_["initial_val_loss"])


def test_a_target_missing_over_the_tail_moves_the_validation_part_to_its_last_target():
    # the validation tail held no target: val_loss NaN, one epoch, the untrained start kept
    # (filter MSE 0.0902, that of the noisy input itself)
    clean, noisy = square_wave(1000)
    target = clean.copy()
    target[700:] = np.nan
    kw = dict(window=6, seq_len=48, d_model=8, num_heads=2, num_layers=1, max_epochs=2,
              enable_progress_bar=False, trainer_kwargs=TRAINER)  # fmt: skip
    f = LearnedProjectionFilter(**kw).fit(noisy, target=target)
    assert f.split_["val"] == (560, 700)  # the last 20% of the 700 targets
    assert np.isfinite(f.history_["initial_val_loss"]) and f.history_["epochs"] == 2


def test_a_target_where_x_has_no_reading_in_reach_is_no_target(monkeypatch):
    # the filter gives NaN where no reading of x is in a sample's receptive field, but the
    # fit trained (and validated) the net to output the target there from nothing; inside a
    # gap it bridges (a reading within reach) the target stays: the net learns to fill it
    import tssdpa.filters.learned as learned

    clean, noisy = square_wave(1000)
    x = noisy.copy()
    x[100:103] = np.nan  # bridged
    x[300:360] = np.nan  # beyond the receptive field (2 layers of window 6: 11 samples)
    series = []
    monkeypatch.setattr(learned, "windows", lambda a, n, s: series.append(a) or np.zeros((1,)))
    monkeypatch.setattr(LearnedProjectionFilter, "_train", lambda self, train, val: {})
    LearnedProjectionFilter(window=6, num_layers=2, seq_len=48).fit(x, target=clean)
    targets = series[1]  # (inputs, targets) of the training part, then of the validation
    assert np.isfinite(targets[:310]).all() and np.isnan(targets[310:360]).all()
    assert np.isfinite(targets[360:]).all()


def test_learned_filter_initial_state_takes_only_the_fitted_channel_count(fitted_filter):
    f, _, _ = fitted_filter  # fitted on 2 channels; n_channels was ignored
    assert f.initial_state(n_channels=2).shape == f.initial_state().shape
    with pytest.raises(ValueError, match="n_channels=3, but the LearnedProjectionFilter was"):
        f.initial_state(n_channels=3)
    with pytest.raises(TypeError, match="n_channels must be an int"):
        f.initial_state(n_channels="2")


def test_learned_filter_rejects_other_channels_and_bad_state(fitted_filter):
    f, clean, noisy = fitted_filter
    with pytest.raises(ValueError, match="channel"):
        f.filter(noisy[:, :1])
    with pytest.raises(ValueError, match="zi"):
        f.filter(noisy, zi=np.zeros((2, 2)))
    state = f.initial_state()
    state[-1, 0] = np.inf  # NaN marks a missing sample; inf was passed on as inf outputs
    with pytest.raises(ValueError, match="zi contains inf"):
        f.filter(noisy, zi=state)
    with pytest.raises(ValueError, match="^state contains inf"):  # step's argument, not zi
        f.step(noisy[0], state)
    state[-1, 0] = 1e39  # finite, but inf in the float32 network: NaN outputs, passed on in zf
    with pytest.raises(ValueError, match="zi channel 0 lies more than"):
        f.filter(noisy, zi=state)
    far = noisy.copy()
    far[5, 1] = 1e39
    with pytest.raises(ValueError, match="x channel 1 lies more than"):
        f.filter(far)
    with pytest.raises(ValueError, match="fit"):
        LearnedProjectionFilter().filter(noisy)


def test_learned_filter_save_load_roundtrip_in_the_unified_format(fitted_filter, tmp_path):
    f, clean, noisy = fitted_filter
    f.save(tmp_path / "lf")
    assert sorted(p.name for p in (tmp_path / "lf").iterdir()) == [
        "arrays.safetensors",
        "config.json",
    ]
    cfg = json.loads((tmp_path / "lf" / "config.json").read_text())
    assert cfg["kind"] == "LearnedProjectionFilter" and cfg["format"] == 2
    assert {"random_state", "holdout"} <= set(cfg["params"]) and "seed" not in cfg["params"]
    g = LearnedProjectionFilter.load(tmp_path / "lf")
    np.testing.assert_array_equal(g.filter(noisy), f.filter(noisy))
    assert g.get_params() == f.get_params()
    assert g.split_ == f.split_ and g.history_ == f.history_
    with pytest.raises(ValueError, match="fit"):
        LearnedProjectionFilter().save(tmp_path / "unfitted")


def test_a_learned_filter_without_a_decay_fits_with_none_and_one_with_a_decay_learns_it():
    # the net now refuses learn_decay=True with decay=None: the filter asks for a learned
    # decay only where it has one to start from
    clean, noisy = square_wave(600)
    for decay, names in ((None, []), (0.9, ["blocks.0.self_attn.decay_logit"])):
        f = LearnedProjectionFilter(window=8, seq_len=32, d_model=8, num_layers=1, decay=decay,
                                    max_epochs=1, **QUIET).fit(noisy, target=clean)  # fmt: skip
        assert [n for n, _ in f.system_.net.named_parameters() if "decay" in n] == names


def test_a_window_longer_than_seq_len_is_refused_at_fit_and_a_saved_one_still_loads(
    fitted_filter, tmp_path
):
    """No training or validation window held a lag of seq_len or more, so the attention
    beyond it was untrained and unvalidated, and filter() used it: window=64 with seq_len=16
    filtered a square wave to a test MSE of 0.041 where window=16 gave 0.029, with the same
    val_loss."""
    f, clean, noisy = fitted_filter  # window 6, seq_len 48
    long = LearnedProjectionFilter(window=8, seq_len=4, d_model=8, num_layers=1, max_epochs=1,
                                   **QUIET)  # fmt: skip
    with pytest.raises(ValueError, match=r"^window=8 is longer than seq_len=4, the training "
                       r"windows: take window <= seq_len, or a longer seq_len$"):  # fmt: skip
        long.fit(noisy, target=clean)
    assert not hasattr(long, "system_")  # refused before a network was built
    f.save(tmp_path / "lf")  # a file saved with one loads and filters as it did
    config = tmp_path / "lf" / "config.json"
    cfg = json.loads(config.read_text())
    cfg["params"]["seq_len"] = 4
    config.write_text(json.dumps(cfg))
    np.testing.assert_array_equal(LearnedProjectionFilter.load(tmp_path / "lf").filter(noisy),
                                  f.filter(noisy))  # fmt: skip


# ------------------------------------------------------------------ LearnedProjectionForecaster
def test_learned_forecaster_interface(fitted_forecaster, tmp_path):
    fc, y = fitted_forecaster
    assert fc.history_["final_val_loss"] <= fc.history_["initial_val_loss"]
    path = fc.forecast_path(y, horizon=12)
    assert path.shape == (1000, 12, 2)
    np.testing.assert_array_equal(fc.forecast_path(y), path)  # default: the trained horizon
    assert np.isnan(path[:47]).all() and np.isfinite(path[47:]).all()
    np.testing.assert_array_equal(fc.forecast(y, horizon=5), path[:, 4])
    # causality: changing the future leaves earlier forecasts alone
    changed = y.copy()
    changed[900:] = 0.0
    np.testing.assert_array_equal(fc.forecast_path(changed, horizon=12)[:900], path[:900])
    assert fc.predict(12).shape == (12, 2)
    np.testing.assert_allclose(fc.predict(12), path[-1], rtol=1e-5, atol=1e-6)  # end of y
    fc.save(tmp_path / "lfc")
    g = LearnedProjectionForecaster.load(tmp_path / "lfc")
    np.testing.assert_array_equal(g.forecast_path(y, horizon=12), path)
    np.testing.assert_array_equal(g.predict(3), fc.predict(3))
    with pytest.raises(ValueError, match="horizon"):
        fc.forecast(y, horizon=13)
    with pytest.raises(ValueError, match="channel"):
        fc.forecast(y[:, 0])
    far = y.copy()
    far[10, 1] = 1e39  # finite, but inf in the float32 network: NaN forecasts
    with pytest.raises(ValueError, match="y channel 1 lies more than"):
        fc.forecast(far, horizon=5)


def test_an_even_moving_average_is_refused_at_fit_naming_it_and_a_saved_one_still_loads(
    fitted_forecaster, tmp_path
):
    """One rule with DLinearForecaster: the network rounded 24 up to 25 without a word."""
    fc, y = fitted_forecaster  # moving_average=25
    even = LearnedProjectionForecaster(
        lookback=48, horizon=12, moving_average=24, max_epochs=1, enable_progress_bar=False,
        trainer_kwargs=TRAINER,
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"^moving_average must be odd \(a centred moving "
                       r"average\); got 24: take 23 or 25$"):  # fmt: skip
        even.fit(y)
    assert not hasattr(even, "system_")  # refused before a network was built
    # one saved with an even one (trained as the odd one above it) loads and forecasts as saved
    fc.save(tmp_path / "m")
    config = tmp_path / "m" / "config.json"
    cfg = json.loads(config.read_text())
    assert cfg["params"]["moving_average"] == 25
    cfg["params"]["moving_average"] = 24
    config.write_text(json.dumps(cfg))
    loaded = LearnedProjectionForecaster.load(tmp_path / "m")
    assert loaded.moving_average == 24
    np.testing.assert_array_equal(loaded.forecast_path(y), fc.forecast_path(y))


def test_a_moving_average_or_patch_len_longer_than_the_lookback_is_warned_of_and_recorded(
    fitted_forecaster,
):
    """The net lowered moving_average=25 to 9 and patch_len=16 to 8 for lookback=8 without a
    word: a user who set them believed the model used them. Clipped still (the harness's
    grids rely on it), but told once, and the values used are in moving_average_ /
    patch_len_."""
    fc, y = fitted_forecaster  # lookback 48, moving_average 25, patch_len 8: taken as given
    assert (fc.moving_average_, fc.patch_len_) == (25, 8)
    short = LearnedProjectionForecaster(lookback=8, horizon=2, moving_average=25, patch_len=16,
                                        d_model=8, max_epochs=1, **QUIET)  # fmt: skip
    with pytest.warns(UserWarning) as told:
        short.fit(y[:200])
    notes = [str(w.message) for w in told if "is built as" in str(w.message)]
    assert notes == [
        "LearnedProjectionForecaster: moving_average=25 is built as 9 (at most lookback=8, "
        "+ 1 as it is even); patch_len=16 is built as 8 (at most lookback=8); "
        "moving_average_ and patch_len_ hold the values used"
    ]
    assert (short.moving_average_, short.patch_len_) == (9, 8)
    assert short.system_.net.moving_average == 9
    linear = LearnedProjectionForecaster(lookback=8, horizon=2, moving_average=7, patch_len=16,
                                         attention=False, max_epochs=1, **QUIET)  # fmt: skip
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always")
        linear.fit(y[:200])
    assert not [w for w in told if "is built as" in str(w.message)]  # patch_len is unused
    assert (linear.moving_average_, linear.patch_len_) == (7, None)


@pytest.mark.parametrize("which", ["filter", "forecaster"])
def test_a_holdout_shorter_than_one_window_is_raised_to_it_with_a_warning(which):
    """holdout=0.02 of 600 samples (12) was raised to one window (60 samples, 10%) without a
    word: the training part shrank by 48 samples more than the user asked for."""
    y = _ar_series(600, channels=1)
    if which == "filter":
        est = LearnedProjectionFilter(window=4, seq_len=60, d_model=8, num_layers=1,
                                      holdout=0.02, max_epochs=1, **QUIET)  # fmt: skip
        gap = "seq_len = 60"
    else:
        est = LearnedProjectionForecaster(lookback=48, horizon=12, patch_len=8, d_model=8,
                                          holdout=0.02, max_epochs=1, **QUIET)  # fmt: skip
        gap = "lookback + horizon = 60"
    with pytest.warns(UserWarning) as told:
        est.fit(y)
    notes = [str(w.message) for w in told if "holdout" in str(w.message)]
    assert notes == [
        f"{type(est).__name__}: holdout=0.02 is 12 of the 600 samples of "
        f"{'x' if which == 'filter' else 'y'}, fewer than one validation window ({gap}): "
        "the last 60 samples (10%) validate, and split_ records the sample ranges"
    ]
    assert est.split_ == {"train": (0, 480), "val": (540, 600)}
    with warnings.catch_warnings(record=True) as told:  # a holdout of a window or more: none
        warnings.simplefilter("always")
        est.set_params(holdout=0.1).fit(y)
    assert not [w for w in told if "holdout" in str(w.message)]


def test_the_forecasters_stride_thins_its_training_windows_only(monkeypatch):
    # stride=8 thinned the validation windows too: 13 of the 101 origins of the validation
    # tail were scored (early stopping, the kept epoch and the ridge start chose on them)
    seen = {}

    def record(self, train, val):
        seen.update(train=train, val=val)
        return {}

    monkeypatch.setattr(LearnedProjectionForecaster, "_train", record)
    y = _ar_series(600, channels=1)
    fc = LearnedProjectionForecaster(lookback=16, horizon=4, stride=8, d_model=8, **QUIET)
    fc.fit(y)
    (t0, t1), (v0, v1) = fc.split_["train"], fc.split_["val"]
    assert len(seen["val"][0]) == v1 - v0 - 20 + 1  # every window of lookback + horizon
    assert len(seen["train"][0]) == len(range(0, t1 - t0 - 20 + 1, 8))
    fc.fit(y[:400], y_val=y[400:])
    assert len(seen["val"][0]) == 200 - 20 + 1
    assert len(seen["train"][0]) == len(range(0, 400 - 20 + 1, 8))


def test_a_gap_in_the_future_windows_is_no_target_not_the_training_mean():
    # filled before the windows were cut, a gap at the end of y_val (the last window's
    # future, no window's past) was scored as the training mean: 0.21 of the variance lost
    # by a starting model that fits this sine to 6e-11
    y = np.sin(np.arange(400) * 0.2)[:, None]
    gap = y.copy()
    gap[396:] = np.nan
    kw = dict(lookback=24, horizon=4, patch_len=6, d_model=8, max_epochs=1, stride=4,
              enable_progress_bar=False, trainer_kwargs=TRAINER)  # fmt: skip
    fc = LearnedProjectionForecaster(**kw).fit(y[:300], y_val=gap[300:])
    assert fc.history_["initial_val_loss"] < 1e-6
    with pytest.raises(ValueError, match="y_val has no window of 28 samples with a known future"):
        LearnedProjectionForecaster(**kw).fit(y[:300], y_val=np.r_[y[300:324], gap[396:]])


def test_a_validation_frame_with_the_columns_of_y_in_another_order_is_refused():
    t = np.arange(400)
    y = pd.DataFrame({"a": np.sin(t * 0.2), "b": 100.0 + 10.0 * np.cos(t * 0.05)})
    kw = dict(lookback=24, horizon=4, patch_len=6, d_model=8, max_epochs=1, stride=4,
              enable_progress_bar=False, trainer_kwargs=TRAINER)  # fmt: skip
    with pytest.raises(ValueError, match=r"y_val's columns \['b', 'a'\] are y's"):
        LearnedProjectionForecaster(**kw).fit(y[:300], y_val=y[300:][["b", "a"]])
    fc = LearnedProjectionForecaster(**kw).fit(y[:300], y_val=y[300:])  # in order: fine
    assert fc.forecast_path(y)["b"].shape == (400, 4)  # a DataFrame's path: (column, h) columns


def test_the_validation_tail_is_the_last_part_of_the_readings_before_a_missing_tail():
    # split on every row, the last 150 of 400 samples missing left the validation tail (the
    # last 20%) no target: "y has no window of 28 samples with a known future sample"
    y = np.sin(np.arange(400) * 0.2)[:, None]
    y[250:] = np.nan
    kw = dict(lookback=24, horizon=4, patch_len=6, d_model=8, max_epochs=1, stride=4,
              enable_progress_bar=False, trainer_kwargs=TRAINER)  # fmt: skip
    fc = LearnedProjectionForecaster(**kw).fit(y)
    assert fc.split_["val"][1] == 250  # the last 20% of the 250 readings
    assert fc.split_ == LearnedProjectionForecaster(**kw).fit(y[:250]).split_


def test_learned_forecaster_multivariate_with_validation_series_and_bad_input():
    y = np.sin(np.arange(400) * 0.2)[:, None] * np.array([[1.0, 0.5, 2.0]])
    fc = LearnedProjectionForecaster(
        lookback=24,
        horizon=4,
        channel_independent=False,
        patch_len=6,
        d_model=8,
        max_epochs=1,
        stride=4,
        enable_progress_bar=False,
        trainer_kwargs=TRAINER,
    )
    fc.fit(y[:300], y_val=y[300:])
    assert fc.forecast_path(y, horizon=4).shape == (400, 4, 3)
    assert fc.split_ == {"train": (0, 300), "val": None}
    with pytest.raises(ValueError, match="y_val"):
        fc.fit(y[:300], y_val=y[300:, :2])
    # it said "series has 20 samples", for y_val and y alike
    with pytest.raises(ValueError, match="y_val has 20 samples, fewer than lookback"):
        fc.fit(y[:300], y_val=y[300:320])
    with pytest.raises(ValueError, match="lookback"):
        LearnedProjectionForecaster(lookback=0).fit(y)
    with pytest.raises(ValueError, match="fit"):
        LearnedProjectionForecaster().forecast(y)


def test_ridge_forecaster_starts_at_dlinear_and_never_ends_worse(tmp_path):
    """A learning rate that wrecks training: the starting (closed-form) model is kept."""
    from tssdpa.baselines import DLinearForecaster

    y = _ar_series(700)
    fc = LearnedProjectionForecaster(
        lookback=40,
        horizon=8,
        patch_len=8,
        d_model=8,
        dim_feedforward=16,
        lr=50.0,
        linear_lr_scale=1.0,
        max_epochs=2,
        stride=4,
        enable_progress_bar=False,
        trainer_kwargs=TRAINER,
    ).fit(y)
    h = fc.history_
    assert h["final_val_loss"] <= h["initial_val_loss"] and h["kept_initial"]
    assert fc.linear_init_["val_mse"] == pytest.approx(h["initial_val_loss"], rel=1e-4)
    a = fc.split_["train"][1]
    z = (y - fc.mean_) / fc.scale_
    ref = DLinearForecaster(
        40, 8, ridge=fc.linear_init_["ridge"], normalize=fc.linear_init_["normalize"]
    ).fit(z[:a])
    want = ref.forecast_path(z, horizon=8) * fc.scale_ + fc.mean_
    np.testing.assert_allclose(fc.forecast_path(y, horizon=8), want, atol=1e-3, equal_nan=True)
    # the choice and the level normalisation survive save / load
    fc.save(tmp_path / "m")
    g = LearnedProjectionForecaster.load(tmp_path / "m")
    assert g.linear_init_ == fc.linear_init_
    np.testing.assert_array_equal(g.forecast_path(y, horizon=8), fc.forecast_path(y, horizon=8))


def test_frozen_linear_forecaster_without_attention_is_the_closed_form_model():
    y = _ar_series(500)
    fc = LearnedProjectionForecaster(
        lookback=32, horizon=4, attention=False, linear_lr_scale=0.0, **QUIET
    ).fit(y)
    assert fc.history_["epochs"] == 0 and fc.history_["kept_initial"]
    assert fc.history_["final_val_loss"] == fc.linear_init_["val_mse"]


def test_a_channel_that_starts_late_is_left_out_of_the_ridge_start_until_its_first_reading():
    # its missing head was filled with 0 (the mean) and fitted as readings: the closed-form
    # start forecast 0.043 off the ridge DLinear of the readings alone here
    from tssdpa.baselines import DLinearForecaster

    y = _ar_series(1200)
    y[:500, 1] = np.nan
    fc = LearnedProjectionForecaster(lookback=32, horizon=8, moving_average=5, attention=False,
                                     linear_lr_scale=0.0, **QUIET).fit(y)  # fmt: skip
    cfg = fc.linear_init_
    z = (y - fc.mean_) / fc.scale_
    ridge = DLinearForecaster(lookback=32, horizon=8, moving_average=5, individual=False,
                              ridge=cfg["ridge"], normalize=cfg["normalize"])  # fmt: skip
    ridge.fit(z[: fc.split_["train"][1]])
    want = ridge.forecast_path(z, horizon=8) * fc.scale_ + fc.mean_
    # from the first window holding both channels (before it the forecaster gives NaN)
    np.testing.assert_allclose(fc.forecast_path(y)[531:], want[531:], atol=1e-5)


def test_a_channels_target_with_no_reading_of_it_in_the_window_is_no_target(monkeypatch):
    # forecast_path gives NaN at such an origin, but the fit trained the net to forecast the
    # first values of a late channel from the training mean put in its missing past
    y = _ar_series(600)
    y[:300, 1] = np.nan
    seen = {}
    monkeypatch.setattr(LearnedProjectionForecaster, "_train",
                        lambda self, train, val: seen.update(train=train) or {})  # fmt: skip
    LearnedProjectionForecaster(lookback=32, horizon=4, linear_init="none").fit(y)
    past, future = seen["train"]  # stride 1: window i covers samples i .. i + 35
    assert len(past) == 600 - 120 - 36 + 1 - 36  # the training part less its last window
    no_reading = np.arange(len(past)) + 32 <= 300  # channel 1's window all missing
    assert np.isnan(future[no_reading, :, 1]).all()
    assert np.isfinite(future[~no_reading, :, 1]).all() and np.isfinite(future[..., 0]).all()


def test_a_training_part_too_short_for_the_ridge_start_is_refused_naming_y():
    # filled with the mean, 165 missing samples and 35 readings were a ridge start's data
    y = _ar_series(300)
    y[:165] = np.nan
    fc = LearnedProjectionForecaster(lookback=32, horizon=8, patch_len=8, d_model=8, **QUIET)
    with pytest.raises(ValueError, match=r"y: its training part \(samples 0 to 199\): no "):
        fc.fit(y)


def test_a_ridge_start_with_no_channel_long_enough_is_refused_naming_train_series():
    from tssdpa.models import ForecastingNet, ridge_linear_init

    net = ForecastingNet(lookback=8, horizon=2, n_channels=1, moving_average=3)
    series = np.full((40, 1), np.nan)
    series[35:, 0] = 1.0
    past, future = np.zeros((3, 8, 1)), np.ones((3, 2, 1))
    with pytest.raises(ValueError, match="train_series: no channel has lookback"):
        ridge_linear_init(net, series, (past, future))


# ------------------------------------------------------------------ parameters and persistence
@pytest.mark.parametrize("cls", [LearnedProjectionFilter, LearnedProjectionForecaster])
def test_a_decay_of_1_is_refused_at_fit_naming_decay_since_it_is_learned(cls):
    # check_decay took 1 (no decay), then the net said "a learned decay must start below 1"
    y = _ar_series(300)
    with pytest.raises(ValueError, match=r"decay=1\.0: a learned decay starts below 1"):
        cls(decay=1.0, **QUIET).fit(y)


def test_learned_init_only_stores_and_fit_validates_naming_the_argument():
    y = _ar_series(300)
    f = LearnedProjectionFilter(window="8", holdout=2.0)  # nothing checked yet
    assert f.window == "8" and f.holdout == 2.0
    with pytest.raises(TypeError, match="window"):
        f.fit(y)
    with pytest.raises(ValueError, match="holdout"):
        LearnedProjectionFilter(holdout=1.5, **QUIET).fit(y)
    with pytest.raises(ValueError, match="noise_level"):
        LearnedProjectionFilter(noise_level=-1.0).fit(y)
    with pytest.raises(ValueError, match="linear_init"):
        LearnedProjectionForecaster(linear_init="lasso").fit(y)
    with pytest.raises(ValueError, match="dropout"):
        LearnedProjectionForecaster(dropout=1.0).fit(y)
    with pytest.raises(ValueError, match="random_state"):
        LearnedProjectionForecaster(random_state=-1).fit(y)


@pytest.mark.parametrize("cls", [LearnedProjectionFilter, LearnedProjectionForecaster])
def test_seed_and_val_fraction_are_deprecated_names_of_random_state_and_holdout(cls):
    with pytest.warns(DeprecationWarning, match="seed"):
        est = cls(seed=3)
    assert est.random_state == 3 and "seed" not in est.get_params()
    with pytest.warns(DeprecationWarning, match="val_fraction"):
        est.set_params(val_fraction=0.3)
    assert est.holdout == 0.3
    clone = est.clone()
    assert clone.get_params() == est.get_params() and not hasattr(clone, "n_channels_")


def _write_legacy(est, path, arrays, fitted):
    """A directory as the learned estimators wrote it before the unified format: old
    parameter names, and every array in ``model.safetensors`` (net weights under ``net.``)."""
    from safetensors.torch import save_file

    params = est.get_params()
    params["seed"], params["val_fraction"] = params.pop("random_state"), params.pop("holdout")
    cfg = {"kind": type(est).__name__, "format": 1, "params": params, "fitted": fitted}
    path.mkdir()
    (path / "config.json").write_text(json.dumps(cfg))
    tensors = {f"net.{k}": v.contiguous() for k, v in est.system_.net.state_dict().items()}
    tensors.update({k: torch.as_tensor(v, dtype=torch.float64) for k, v in arrays.items()})
    save_file(tensors, str(path / "model.safetensors"))


def test_directories_saved_by_the_old_format_still_load(fitted_filter, fitted_forecaster, tmp_path):
    f, clean, noisy = fitted_filter
    _write_legacy(
        f,
        tmp_path / "f",
        {"mean_": f.mean_, "scale_": f.scale_},
        {"n_channels_": 2, "history_": f.history_},
    )
    g = LearnedProjectionFilter.load(tmp_path / "f")
    np.testing.assert_array_equal(g.filter(noisy), f.filter(noisy))
    assert g.get_params() == f.get_params()
    fc, y = fitted_forecaster
    _write_legacy(
        fc,
        tmp_path / "fc",
        {"mean_": fc.mean_, "scale_": fc.scale_, "series_": fc.train_},
        {"n_channels_": 2, "history_": fc.history_, "linear_init_": fc.linear_init_},
    )
    h = LearnedProjectionForecaster.load(tmp_path / "fc")
    np.testing.assert_array_equal(h.forecast_path(y), fc.forecast_path(y))
    np.testing.assert_array_equal(h.predict(4), fc.predict(4))


def test_load_rejects_arrays_outside_the_schema(fitted_filter, tmp_path):
    from safetensors.numpy import load_file, save_file

    f = fitted_filter[0]
    f.save(tmp_path / "lf")
    arrays = load_file(str(tmp_path / "lf" / "arrays.safetensors"))
    arrays["evil_"] = np.zeros(3)
    save_file(arrays, str(tmp_path / "lf" / "arrays.safetensors"))
    with pytest.raises(ValueError, match="evil_"):
        LearnedProjectionFilter.load(tmp_path / "lf")


def _tamper_arrays(folder, change) -> None:
    from safetensors.numpy import load_file, save_file

    path = folder / "arrays.safetensors"
    arrays = load_file(str(path))
    change(arrays)
    save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()}, str(path))


def _set_array(name, make):
    def change(arrays):
        arrays[name] = make(arrays[name])

    return change


def _set_fitted(**values):
    return lambda cfg: cfg["fitted"].update(values)


def _set_net_weight(make):
    """Change the first weight matrix of the net (float32, as trained)."""

    def change(arrays):
        name = min(k for k in arrays if k.startswith("net.") and k.endswith(".weight"))
        arrays[name] = make(arrays[name])

    return change


@pytest.mark.parametrize("which", ["filter", "forecaster"])
@pytest.mark.parametrize(
    "file, edit, message",
    [
        ("config", lambda cfg: cfg["fitted"].pop("n_channels_"), "missing fitted 'n_channels_'"),
        ("config", _set_fitted(n_channels_=0), "n_channels_ must be an integer >= 1"),
        # refused by the arrays' shapes before a system of 10**9 channels is built
        ("config", _set_fitted(n_channels_=10**9), "must .*n_channels_=1000000000"),
        ("config", _set_fitted(split_={"train": "ab", "val": None}), "split_\\['train'\\]"),
        ("config", _set_fitted(split_={"train": [0, -5], "val": None}), "split_\\['train'\\]"),
        ("config", _set_fitted(split_={"train": None}), "split_ must have the keys"),
        ("arrays", lambda a: a.pop("mean_"), "missing array 'mean_'"),
        ("arrays", _set_array("mean_", lambda v: v[:1]), "mean_ must hold one value per channel"),
        ("arrays", _set_array("scale_", np.zeros_like), "scale_ must hold .* each > 0"),
        (
            "arrays",
            _set_array("scale_", lambda v: v.astype(np.float32)),
            "'scale_' must be float64",
        ),
        ("arrays", _set_array("mean_", lambda v: v + np.inf), "'mean_' holds inf"),
        ("arrays", _set_net_weight(lambda v: v.astype(np.int64)), "'net.* must be torch.float32"),
        ("arrays", _set_net_weight(lambda v: v + np.inf), "'net.* holds inf"),
    ],
)
def test_a_tampered_saved_learned_estimator_is_refused_on_load_naming_the_field(
    which, file, edit, message, fitted_filter, fitted_forecaster, tmp_path, edit_config
):
    """Each of these loaded before, then raised a raw numpy / attribute error, forecast NaN,
    or filtered with wrong statistics or rounded weights."""
    est = fitted_filter[0] if which == "filter" else fitted_forecaster[0]
    est.save(tmp_path / "e")
    if file == "config":
        edit_config(tmp_path / "e", edit)
    else:
        _tamper_arrays(tmp_path / "e", edit)
    with pytest.raises(ValueError, match=message):
        type(est).load(tmp_path / "e")


@pytest.mark.parametrize("which", ["filter", "forecaster"])
@pytest.mark.parametrize("bad", [-3, ["runs"], {"dir": "runs"}])
def test_a_checkpoint_dir_that_is_no_path_is_refused_naming_it(
    which, bad, fitted_filter, fitted_forecaster, tmp_path, edit_config
):
    """fit raised Lightning's 'expected str, bytes or os.PathLike object, not int' (no name);
    a config.json holding one loaded."""
    est = fitted_filter[0] if which == "filter" else fitted_forecaster[0]
    est.save(tmp_path / "e")
    edit_config(tmp_path / "e", lambda cfg: cfg["params"].update(checkpoint_dir=bad))
    with pytest.raises(ValueError, match="config.json: checkpoint_dir must be a path or None"):
        type(est).load(tmp_path / "e")
    with pytest.raises(TypeError, match="checkpoint_dir must be a path or None"):
        est.clone().set_params(checkpoint_dir=bad).fit(np.zeros((300, est.n_channels_)))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda a: a.pop("train_"), "missing array 'train_'"),
        (_set_array("train_", lambda v: v[:5]), "train_ has 5 samples; predict needs the last 48"),
    ],
)
def test_a_saved_learned_forecaster_without_the_history_predict_needs_is_refused(
    edit, message, fitted_forecaster, tmp_path
):
    fc = fitted_forecaster[0]
    fc.save(tmp_path / "e")
    _tamper_arrays(tmp_path / "e", edit)
    with pytest.raises(ValueError, match=message):
        LearnedProjectionForecaster.load(tmp_path / "e")


def test_learned_fits_do_not_depend_on_the_global_random_state():
    rng = np.random.default_rng(0)
    clean = np.sin(np.arange(400) * 0.1)
    noisy = clean + 0.3 * rng.standard_normal(400)
    sums = []
    for burn in (0, 17):  # whatever consumed the global generator before must not matter
        torch.rand(burn)
        f = LearnedProjectionFilter(
            window=4,
            num_layers=1,
            d_model=8,
            dim_feedforward=8,
            seq_len=32,
            max_epochs=1,
            **QUIET,
        ).fit(noisy, target=clean)
        g = LearnedProjectionForecaster(
            lookback=32,
            horizon=4,
            d_model=8,
            dim_feedforward=8,
            patch_len=8,
            max_epochs=1,
            **QUIET,
        ).fit(noisy)
        sums.append([p.detach().clone() for m in (f, g) for p in m.system_.parameters()])
    for a, b in zip(*sums):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_a_learned_fit_save_and_load_leave_the_callers_global_generators_as_they_were(
    tmp_path,
):
    """fit seeds the generators for its training; the caller's sequence goes on untouched."""
    import os
    import random

    noisy = np.sin(np.arange(400) * 0.1) + 0.3 * np.random.default_rng(0).standard_normal(400)

    def draws():
        return random.random(), float(np.random.rand()), float(torch.rand(1))  # noqa: NPY002

    env = {k: os.environ.get(k) for k in ("PL_GLOBAL_SEED", "PL_SEED_WORKERS")}
    random.seed(5), np.random.seed(5), torch.manual_seed(5)  # noqa: NPY002
    draws()
    expected = draws()
    random.seed(5), np.random.seed(5), torch.manual_seed(5)  # noqa: NPY002
    draws()
    f = LearnedProjectionFilter(window=4, num_layers=1, d_model=8, dim_feedforward=8,
                                seq_len=32, max_epochs=1, random_state=3, **QUIET)  # fmt: skip
    f.fit(noisy).save(tmp_path / "f")  # save checks that the file loads: a network is built
    LearnedProjectionFilter.load(tmp_path / "f")
    assert draws() == expected
    assert {k: os.environ.get(k) for k in env} == env


def _tiny_self_supervised(noisy, **kw):
    f = LearnedProjectionFilter(window=4, num_layers=1, d_model=8, dim_feedforward=8,
                                seq_len=32, max_epochs=1, **QUIET, **kw)  # fmt: skip
    return [p.detach().clone() for p in f.fit(noisy).system_.parameters()]


def test_learned_noise_level_given_as_the_estimate_reproduces_the_default_fit():
    # the level is that of ProjectionFilter: None (estimate), "spectral", one number, one per
    # channel, in the units of x; the default's own levels given back train the same network.
    # Both the statistics and the levels are the training part's (before the holdout)
    from tssdpa.estimators.selection import time_split
    from tssdpa.estimators.white_noise import noise_scale

    _, noisy = square_wave(400, channels=2)
    noisy = noisy * np.array([1.0, 5.0])  # channels on different scales
    stop, _ = time_split(400, 32, 0.2, "x")
    mean, sd = noisy[:stop].mean(axis=0), noisy[:stop].std(axis=0)
    z = (noisy[:stop] - mean) / sd
    for spectral, setting in ((False, None), (True, "spectral")):
        levels = [noise_scale(z[:, [c]], spectral=spectral) * sd[c] for c in range(2)]
        want = _tiny_self_supervised(noisy, noise_level=setting)
        for a, b in zip(want, _tiny_self_supervised(noisy, noise_level=levels)):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    other = _tiny_self_supervised(noisy, noise_level=[2 * v for v in levels])
    assert any(not torch.equal(a, b) for a, b in zip(want, other))


def test_noise_std_is_the_deprecated_name_of_noise_level():
    with pytest.warns(DeprecationWarning, match="noise_std"):
        f = LearnedProjectionFilter(noise_std=0.3)
    assert f.noise_level == 0.3 and "noise_std" not in f.get_params()


def test_a_filter_saved_with_noise_std_loads_with_it_as_noise_level(
    fitted_filter, tmp_path, edit_config
):
    f, _, noisy = fitted_filter
    f.save(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: cfg["params"].update(noise_std=0.25))
    edit_config(tmp_path / "f", lambda cfg: cfg["params"].pop("noise_level"))
    g = LearnedProjectionFilter.load(tmp_path / "f")
    assert g.noise_level == 0.25 and "noise_std" not in g.get_params()
    np.testing.assert_array_equal(g.filter(noisy), f.filter(noisy))


@pytest.mark.parametrize("value", [0.0, -1.0, "robust", True, [0.1, 0.2, 0.3], [[0.1]]])
def test_a_bad_learned_noise_level_is_refused_naming_it(value):
    _, noisy = square_wave(200, channels=2)
    with pytest.raises(ValueError, match="noise_level"):
        LearnedProjectionFilter(noise_level=value, max_epochs=1, **QUIET).fit(noisy)
    with pytest.raises(ValueError, match="noise_level"):  # with a target too
        LearnedProjectionFilter(noise_level=value, max_epochs=1, **QUIET).fit(noisy, noisy)


def test_names_moved_to_tssdpa_models_still_resolve_with_a_warning():
    import tssdpa.filters
    import tssdpa.filters.learned
    import tssdpa.models

    for module, name in [
        (tssdpa.filters, "DenoisingSystem"),
        (tssdpa.filters, "ForecastingSystem"),
        (tssdpa.filters.learned, "DenoisingNet"),
        (tssdpa.filters.learned, "ForecastingNet"),
        (tssdpa.filters.learned, "RIDGE_GRID"),
        (tssdpa.filters.learned, "ridge_linear_init"),
    ]:
        with pytest.warns(DeprecationWarning, match="tssdpa.models"):
            obj = getattr(module, name)
        assert obj is getattr(tssdpa.models, name)


@pytest.mark.slow
@pytest.mark.parametrize("module", ["tssdpa.filters.learned", "tssdpa.models.systems"])
def test_learned_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_learned_forecaster_beats_naive_at_every_horizon_of_the_default_lorenz_task():
    """The default comparison's Lorenz task (600 training samples, horizons 1-25): one
    penalty for every step made the ridge start predict the mean, worse than naive at h=1."""
    from tssdpa.compare.forecasting import evaluate_forecaster
    from tssdpa.compare.registry import get_method
    from tssdpa.data import forecast_tasks

    task = forecast_tasks("lorenz", seeds=(0,), n=1000, quick=True)[0]
    scores = {
        name: {r["horizon"]: r["mse"] for r in evaluate_forecaster(get_method(name, "forecast"),
                                                                   task, budget=1)[0]}
        for name in ("naive", "learned_projection")
    }  # fmt: skip
    for h in task.horizons:
        assert scores["learned_projection"][h] < scores["naive"][h]


def test_a_channel_that_is_all_nan_is_refused_naming_y_before_training():
    y = np.column_stack([np.sin(0.1 * np.arange(200)), np.full(200, np.nan)])
    with pytest.raises(ValueError, match="y channel 1 is all NaN"):
        LearnedProjectionForecaster(lookback=8, horizon=2).fit(y)
    with pytest.raises(ValueError, match="y_val channel 1 is all NaN"):
        LearnedProjectionForecaster(lookback=8, horizon=2).fit(y[:, [0, 0]], y_val=y)


@pytest.mark.parametrize("cls", [LearnedProjectionFilter, LearnedProjectionForecaster])
def test_a_width_that_the_heads_do_not_divide_is_refused_naming_d_model(cls):
    # it named the attention layer's embed_dim and head_dim, which the user never set
    with pytest.raises(ValueError, match=r"d_model \(6\) must be divisible by num_heads \(4\)"):
        cls(d_model=6, num_heads=4, max_epochs=1).fit(np.sin(np.arange(1000) / 5))


def test_a_structural_parameter_edited_in_a_saved_file_is_refused_on_load(
    fitted_filter, fitted_forecaster, tmp_path, edit_config
):
    # the filter's attention window is not in its weights: an edited window loaded and
    # changed every output
    f = fitted_filter[0]
    f.save(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: cfg["params"].update(window=12))
    with pytest.raises(ValueError, match="window=12, but the saved state was fitted with window=6"):
        LearnedProjectionFilter.load(tmp_path / "f")
    f.set_params(window=12)  # changed after fit: filter and save refuse it alike
    with pytest.raises(ValueError, match="window=12 .*changed after fit"):
        f.filter(fitted_filter[1][:100])
    with pytest.raises(ValueError, match="window=12 .*changed after fit"):
        f.save(tmp_path / "f2")
    f.set_params(window=6)
    fc = fitted_forecaster[0]
    fc.save(tmp_path / "c")
    edit_config(tmp_path / "c", lambda cfg: cfg["params"].update(horizon=6))
    with pytest.raises(ValueError, match="horizon=6, but the saved state was fitted with"):
        LearnedProjectionForecaster.load(tmp_path / "c")


def test_a_float64_torch_default_changes_neither_fit_nor_load(fitted_filter, tmp_path):
    # the net was built in the caller's default dtype: fit raised a float / double mismatch,
    # and load refused a good file ("must be torch.float64")
    f, _, noisy = fitted_filter
    f.save(tmp_path / "f")
    x = noisy[:500]
    small = dict(window=4, seq_len=32, d_model=8, num_heads=2, num_layers=1, max_epochs=1,
                 enable_progress_bar=False, trainer_kwargs=TRAINER)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = LearnedProjectionFilter(**small).fit(x).filter(x)
        before = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            got = LearnedProjectionFilter(**small).fit(x).filter(x)
            loaded = LearnedProjectionFilter.load(tmp_path / "f").filter(x)
            assert torch.get_default_dtype() == torch.float64  # the caller's, kept
        finally:
            torch.set_default_dtype(before)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(loaded, f.filter(x))


@pytest.mark.parametrize(
    ("cls", "with_target"),
    [(LearnedProjectionFilter, False), (LearnedProjectionFilter, True),
     (LearnedProjectionForecaster, False)],
)  # fmt: skip
def test_the_standardisation_comes_from_the_training_part_not_the_validation_tail(
    cls, with_target, monkeypatch
):
    # the statistics were taken over the whole series: a validation tail 10x larger and
    # shifted by 5 moved mean_ from 0.030 to 1.151 and scale_ from 0.710 to 3.810
    monkeypatch.setattr(cls, "_train", lambda self, train, val: {})  # the scaling alone
    kw = (
        dict(window=4, seq_len=32, d_model=8, num_heads=2, num_layers=1)
        if cls is LearnedProjectionFilter
        else dict(lookback=16, horizon=4, d_model=8, patch_len=8)
    )
    clean, x = square_wave(600, channels=2)
    fits = []
    for tail in (lambda v: v, lambda v: 10 * v + 5):
        y = x.copy()
        y[-100:] = tail(y[-100:])
        fits.append(cls(**kw, **QUIET))
        fits[-1].fit(y, **({"target": clean} if with_target else {}))
    a, b = fits
    stop = a.split_["train"][1]
    assert stop < 500 and b.split_ == a.split_
    np.testing.assert_array_equal(b.mean_, a.mean_)
    np.testing.assert_array_equal(b.scale_, a.scale_)
    np.testing.assert_allclose(a.mean_, x[:stop].mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(a.scale_, x[:stop].std(axis=0), rtol=1e-12)


def test_a_channel_read_only_after_the_training_part_is_standardised_by_its_readings(
    monkeypatch,
):
    monkeypatch.setattr(LearnedProjectionForecaster, "_train", lambda self, train, val: {})
    y = _ar_series(600)
    y[:550, 1] = np.nan
    y[550:, 1] = 100 + 3 * y[550:, 1]
    fc = LearnedProjectionForecaster(lookback=16, horizon=4, d_model=8, patch_len=8, **QUIET)
    fc.fit(y)
    assert fc.split_["train"][1] < 550
    np.testing.assert_allclose(fc.mean_[1], np.nanmean(y[:, 1]), rtol=1e-12)
    np.testing.assert_allclose(fc.scale_[1], np.nanstd(y[:, 1]), rtol=1e-12)


@pytest.mark.parametrize("readings", [1, 2])
def test_a_channel_read_too_few_times_in_the_training_part_is_standardised_by_its_readings(
    readings, monkeypatch
):
    # one reading there gave scale_ 1.0 (its std 0) and mean_ that reading: the channel's
    # later values, 100 + 30 y, came to the network up to 44 units out (two readings: 88);
    # too few to estimate a spread, it takes its readings' statistics, as the noise level does
    monkeypatch.setattr(LearnedProjectionForecaster, "_train", lambda self, train, val: {})
    y = _ar_series(600)
    y[:, 1] = 100 + 30 * y[:, 1]
    y[:550, 1] = np.nan
    fc = LearnedProjectionForecaster(lookback=16, horizon=4, d_model=8, patch_len=8, **QUIET)
    stop = fc.fit(y).split_["train"][1]
    y[stop - readings : stop, 1] = 100.0 + np.arange(readings)
    fc.fit(y)
    assert fc.split_["train"][1] == stop
    np.testing.assert_allclose(fc.mean_[1], np.nanmean(y[:, 1]), rtol=1e-12)
    np.testing.assert_allclose(fc.scale_[1], np.nanstd(y[:, 1]), rtol=1e-12)


def test_the_training_noise_level_is_estimated_on_the_training_part(monkeypatch):
    # estimated over the whole series, a validation tail 10x noisier raised the std of the
    # noise added to the training inputs from 0.144 to 0.157
    seen = []
    monkeypatch.setattr(LearnedProjectionFilter, "_train",
                        lambda self, train, val: seen.append(train) or {})  # fmt: skip
    rng = np.random.default_rng(0)
    x = np.sin(np.linspace(0, 50, 600))[:, None] + 0.1 * rng.normal(size=(600, 1))
    noisier = x.copy()
    noisier[-100:] += 0.9 * rng.normal(size=(100, 1))
    for y in (x, noisier):
        LearnedProjectionFilter(window=4, seq_len=32, d_model=8, num_heads=2, num_layers=1,
                                **QUIET).fit(y)  # fmt: skip
    (inputs, targets), (inputs2, targets2) = seen
    np.testing.assert_array_equal(targets2, targets)
    np.testing.assert_array_equal(inputs2, inputs)


def test_learned_filter_step_checks_its_sample_and_state_by_name(fitted_filter):
    """As ResidualProjectionFilter.step: a tensor that requires grad raised torch's own
    RuntimeError, a sample of the wrong length was named x, state=None failed unpacking."""
    f, clean, noisy = fitted_filter
    state = f.initial_state()
    y, _ = f.step(torch.tensor(noisy[0], requires_grad=True), state)
    np.testing.assert_array_equal(y, f.step(noisy[0], state)[0])
    with pytest.raises(ValueError, match=r"sample has 3 value\(s\) but the LearnedProjection"):
        f.step(np.ones(3), state)
    with pytest.raises(TypeError, match=r"state must be what initial_state\(\)"):
        f.step(noisy[0], None)


def test_learned_filter_names_zi_when_the_state_is_of_the_wrong_kind(fitted_filter):
    """filter(x, zi=...) converted zi with a bare np.asarray: a (samples, times) pair of a
    tau filter failed with numpy's 'inhomogeneous shape', text with 'could not convert
    string to float'; ResidualProjectionFilter and ProjectionFilter name zi."""
    f, clean, noisy = fitted_filter
    state = f.initial_state()
    with pytest.raises(ValueError, match=r"zi is a tuple of 2 arrays"):
        f.filter(noisy[:5], zi=(state, state[:-1, 0]))
    with pytest.raises(TypeError, match=r"^zi must be a real numeric array.*got text"):
        f.filter(noisy[:5], zi="abc")  # text in a state is refused as in x
    y_list, _ = f.filter(noisy[:5], zi=state.tolist())  # a nested list is still a state
    np.testing.assert_array_equal(y_list, f.filter(noisy[:5], zi=state)[0])
