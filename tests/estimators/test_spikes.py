"""Spikes (tssdpa.estimators.spikes): impulsive noise too frequent to be glitches, which a
zero-phase ProjectionFilter treats as missing (``glitches="missing"``, the default)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.signal import medfilt

from tssdpa.data import add_noise
from tssdpa.data.synthetic import make_signal
from tssdpa.estimators import spikes
from tssdpa.estimators.input_notes import SpikeWarning, collected
from tssdpa.estimators.persistence import UncheckedFileWarning
from tssdpa.estimators.spikes import (
    MIN_SPIKE_SHARE,
    spike_channels,
    spike_mask,
    spike_reference,
)
from tssdpa.filters import ProjectionFilter


def _clean(name="lorenz", n=1500):
    clean = np.asarray(make_signal(name, n, 0), dtype=float)
    return (clean - clean.mean()) / clean.std()


def _error(y, clean):
    return float(np.sqrt(np.mean((np.asarray(y) - clean) ** 2)))


def test_gaussian_noise_has_no_spikes_on_smooth_rough_and_pulsed_signals():
    for name in ("lorenz", "mackey_glass", "pulse_train", "ar2", "henon", "sinusoids"):
        for snr in (0.0, 10.0, 20.0, 40.0):
            x = add_noise(_clean(name, 3000), "gaussian", snr, seed=1)
            assert not spike_mask(x[:, None]).any(), (name, snr)


def test_impulsive_noise_is_found_sample_by_sample():
    clean = _clean("mackey_glass", 3000)
    x = add_noise(clean, "impulsive", 10.0, seed=2)  # 2% of the samples hit by 10x pulses
    hit = np.abs(x - clean) > 5 * np.std(x - clean) / 2
    found = spike_mask(x[:, None])[:, 0]
    assert (found & hit).sum() >= 0.9 * hit.sum()
    assert (found & ~hit).sum() <= 0.05 * hit.sum()


def test_a_few_spikes_in_a_channel_are_left_to_the_glitch_rule():
    clean = _clean("lorenz", 4000)
    x = add_noise(clean, "gaussian", 20.0, seed=0)
    few = np.arange(100, 4000, 4000 // int(0.5 * MIN_SPIKE_SHARE * 4000))
    x[few] += 1.0  # spikes at half the share the rule needs
    assert not spike_mask(x[:, None]).any()
    many = np.arange(50, 4000, 4000 // int(2 * MIN_SPIKE_SHARE * 4000))
    x[many] += np.where(np.arange(many.size) % 2, 1.0, -1.0)  # evenly spaced on one side
    # would be a train of pulses of the signal (test_a_pulse_train_is_...)
    found = spike_mask(x[:, None])[:, 0]
    spiked = np.isin(np.arange(4000), np.r_[few, many])
    assert found[spiked].mean() > 0.95 and found[~spiked].sum() <= 2


def test_missing_samples_are_never_spikes_and_held_or_constant_channels_have_none():
    clean = _clean("lorenz", 3000)
    x = add_noise(clean, "impulsive", 10.0, seed=4)
    x[1000:1100] = np.nan
    x[::7] = np.nan
    held = np.repeat(add_noise(clean[::10], "impulsive", 10.0, seed=5), 10)
    x2 = np.column_stack([x, held, np.full(3000, 2.0), np.full(3000, np.nan)])
    found = spike_mask(x2)
    assert found[:, 0].sum() > 20 and not found[np.isnan(x), 0].any()
    assert not found[:, 1:].any()


def test_the_reference_leaves_the_sample_out_and_weighs_out_spikes_among_its_neighbours():
    t = np.arange(60.0)
    v = 0.01 * t**2 + 0.01 * np.cos(2.0 * t)
    v[[30, 32]] += [5.0, -5.0]  # a spike, and another among its neighbours
    ref, misfit = spike_reference(v)
    assert abs(ref[30] - 0.01 * 30**2) < 0.03 and misfit[30] < 0.03


def _slow_reference(v):
    """spike_reference row by row: a weighted least-squares quadratic through the finite
    neighbours of each sample, reweighted by Tukey's bisquare."""
    h, T = spikes.SPIKE_HALF, len(v)
    padded = np.r_[np.full(h, np.nan), v, np.full(h, np.nan)]
    cubic = np.array([(-padded[t + h - 2] + 4 * padded[t + h - 1] + 4 * padded[t + h + 1]
                       - padded[t + h + 2]) / 6 for t in range(T)])  # fmt: skip
    resid = np.abs(v - cubic)
    scale = 1.4826 * np.median(resid[np.isfinite(resid)]) / np.sqrt(1 + 34 / 36)
    offsets = np.r_[np.arange(-h, 0), np.arange(1, h + 1)].astype(float)
    design = np.stack([offsets**0, offsets, offsets**2], axis=1)

    def bisquare(u):
        u = np.where(np.isfinite(u), u, np.inf)
        return np.where(np.abs(u) < 1, (1 - u**2) ** 2, 0.0)

    ref, misfit = np.full(T, np.nan), np.full(T, np.nan)
    for t in range(T):
        y = padded[t + h + offsets.astype(int)]
        if not np.isfinite(y).any():
            continue
        centre = np.nanmedian(y)
        spread = 1.4826 * np.nanmedian(np.abs(y - centre))
        w = bisquare((y - centre) / (4.685 * max(scale, spread)))
        y0 = np.where(np.isfinite(y), y - centre, 0.0)
        for _ in range(3):
            gram = design.T @ (w[:, None] * design) + 1e-9 * np.eye(3)
            coef = np.linalg.solve(gram, design.T @ (w * y0))
            dist = np.abs(y - centre - design @ coef)
            w = bisquare(dist / (4.685 * max(scale, 1.4826 * np.nanmedian(dist))))
        if (w > 0).sum() >= 3:
            ref[t], misfit[t] = centre + coef[0], np.nanmedian(dist)
    return ref, misfit


def test_the_reference_is_the_row_by_row_robust_quadratic():
    x = add_noise(_clean("lorenz", 400), "impulsive", 10.0, seed=6)
    x[[50, 51, 52, 200, 203, 399]] = np.nan  # gaps, and an end
    x[120:124] = np.nan
    ref, misfit = spike_reference(x)
    slow_ref, slow_misfit = _slow_reference(x)
    np.testing.assert_array_equal(np.isnan(ref), np.isnan(slow_ref))
    np.testing.assert_allclose(ref, slow_ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(misfit, slow_misfit, rtol=1e-9, atol=1e-9)


def test_the_rule_does_not_depend_on_the_signals_level_or_scale():
    x = add_noise(_clean("lorenz", 2000), "impulsive", 20.0, seed=9)
    found = spike_mask(x[:, None])
    assert found.sum() > 20
    np.testing.assert_array_equal(spike_mask(1e6 + 1e-3 * x[:, None]), found)


def test_channels_given_to_the_mask_are_checked_naming_them():
    x2 = np.zeros((100, 2))
    for bad in ([True], [True, False, True], [1, 0], "ab"):
        with pytest.raises(ValueError, match="channels must be None or 2 bools"):
            spike_mask(x2, bad)


def test_the_mask_in_blocks_of_rows_is_the_mask_in_one(monkeypatch):
    clean = _clean("rossler", 3000)
    x2 = np.column_stack([add_noise(clean, "impulsive", 10.0, seed=s) for s in (0, 1)])
    whole = spike_mask(x2)
    monkeypatch.setattr(spikes, "_ROWS", 64)
    np.testing.assert_array_equal(spike_mask(x2), whole)
    assert whole.sum() > 50


def test_the_self_supervised_fit_under_impulsive_noise_beats_the_best_median_filter():
    """Before the rule SURE took the spikes for signal and the fit kept them: under 2% outliers
    of 10x its error was 4x this, 2.6x a median filter's (the best width, chosen on the
    clean signal)."""
    clean = _clean("lorenz")
    x = add_noise(clean, "impulsive", 10.0, seed=3)
    given = x.copy()
    with pytest.warns(SpikeWarning, match=r"x channel 0 has \d+ spikes \(\d\.\d% of its samples"):
        f = ProjectionFilter(causal=False).fit(x)
    with pytest.warns(SpikeWarning):
        y = f.filter(x)
    kept = ProjectionFilter(causal=False, glitches=None).fit(x).filter(x)
    median = min(_error(medfilt(x, w), clean) for w in (3, 5, 7, 9, 11, 15, 21))
    assert _error(y, clean) < median < _error(kept, clean)
    np.testing.assert_array_equal(x, given)  # the input is not changed


def test_a_causal_filter_keeps_spikes_as_its_stream_does():
    x = add_noise(_clean("lorenz", 600), "impulsive", 10.0, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SpikeWarning)
        f = ProjectionFilter(causal=True, window=[8], embedding=[1], degree=[0]).fit(x)
        y = f.filter(x)
    np.testing.assert_array_equal(y, ProjectionFilter(causal=True, glitches=None,
                                                      **f.best_params_).filter(x))  # fmt: skip


def test_a_channel_fitted_alone_names_its_spikes_by_its_place_in_the_series():
    clean = _clean("lorenz", 1200)
    x2 = np.column_stack([add_noise(clean, "gaussian", 10.0, seed=0),
                          add_noise(clean, "impulsive", 10.0, seed=1)])  # fmt: skip
    with collected() as notes, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ProjectionFilter(causal=False, channel_independent=True, window=[4, 8],
                         local_window=None).fit(x2)  # fmt: skip
    said = {c for n in notes if isinstance(n, SpikeWarning) for c in n.found}
    assert said == {1}
    assert "'gy' has" in next(n for n in notes if isinstance(n, SpikeWarning)).told(["gx", "gy"])


def _spiky_pair(n=2000):
    clean = _clean("lorenz", n)
    x2 = np.column_stack([add_noise(clean, "impulsive", 10.0, seed=7),
                          add_noise(clean, "gaussian", 10.0, seed=8)])  # fmt: skip
    return np.column_stack([clean, clean]), x2


def test_the_fit_decides_which_channels_have_impulsive_noise_and_filter_keeps_to_it():
    """The test of a channel's noise needs spikes in number: a short stretch filtered later
    has few, and judged alone it would keep them, though the filter was fitted without."""
    clean, x2 = _spiky_pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpikeWarning)
        f = ProjectionFilter(causal=False, channel_independent=False, window=[8, 16],
                             local_window=None).fit(x2)  # fmt: skip
    assert f.spike_channels_ == [True, False]
    short = x2[1000:1150]
    assert not spike_channels(short).any()  # too few spikes here to tell alone
    with pytest.warns(SpikeWarning, match="x channel 0 has"):
        y = f.filter(short)
    kept = ProjectionFilter(causal=False, glitches=None, channel_independent=False,
                            **f.best_params_).filter(short)  # fmt: skip
    assert _error(y[:, 0], clean[1000:1150, 0]) < 0.7 * _error(kept[:, 0], clean[1000:1150, 0])
    # the spike channels are decided on the data before the search: one setting searched below
    quick = dict(window=[8], embedding=[1], degree=[0])
    kept_fit = ProjectionFilter(causal=False, glitches=None, channel_independent=False,
                                local_window=None, **quick).fit(x2)  # fmt: skip
    assert kept_fit.spike_channels_ == [True, False]  # decided, not used under glitches=None
    with pytest.warns(SpikeWarning):  # set after the fit, "missing" treats them
        kept_fit.set_params(glitches="missing").filter(short)
    assert ProjectionFilter(causal=True, **quick).fit(x2).spike_channels_ is None
    alone = ProjectionFilter(causal=False, channel_independent=True, local_window=None, **quick)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpikeWarning)
        alone.fit(x2)
    assert alone.spike_channels_ is None
    assert [m.spike_channels_ for m in alone.channel_models_] == [[True], None]


def test_a_saved_filter_keeps_its_spike_channels_and_an_older_file_has_none(tmp_path, edit_config):
    _, x2 = _spiky_pair(1200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpikeWarning)
        f = ProjectionFilter(causal=False, channel_independent=False, window=[8],
                             local_window=None).fit(x2)  # fmt: skip
        f.save(tmp_path / "f")
        g = ProjectionFilter.load(tmp_path / "f")
        assert g.spike_channels_ == [True, False]
        np.testing.assert_array_equal(g.filter(x2), f.filter(x2))
    edit_config(tmp_path / "f", lambda cfg: (cfg["fitted"].pop("spike_channels_"),
                                             cfg.pop("fitted_sha256"),
                                             cfg.update(format=1)))  # fmt: skip
    with pytest.warns(UncheckedFileWarning):  # saved before spikes: filters as it did
        old = ProjectionFilter.load(tmp_path / "f")
    assert getattr(old, "spike_channels_", None) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", SpikeWarning)
        old.filter(x2)
    for bad in ([True], [1, 0], [False, False], "all"):
        edit_config(tmp_path / "f", lambda cfg, bad=bad: cfg["fitted"].update(spike_channels_=bad))
        with pytest.raises(ValueError, match="spike_channels_"):
            ProjectionFilter.load(tmp_path / "f")


def test_a_train_of_narrow_pulses_is_signal_not_impulsive_noise():
    """Pulses 2-3 samples wide (a peak at a low sampling rate: an R wave, a heel strike) are
    far from the quadratic through their neighbours, as spikes are, but their flanks are too:
    three or more in a row on one side are a pulse. Before, such a train was taken for
    impulsive noise and its pulses filled in: 0.85 error where the noisy series has 0.20."""
    rng = np.random.default_rng(0)
    t = np.arange(1500)
    clean = 5.0 * np.exp(-(((t % 50) - 25) ** 2) / 2.0)
    x = clean + 0.2 * rng.normal(size=t.size)
    assert spike_channels(x[:, None]).tolist() == [False]
    y = ProjectionFilter(causal=False, window=[16], embedding=[3]).fit(x).filter(x)
    assert _error(y, clean) < 0.5 * _error(x, clean)


def test_three_far_samples_in_a_row_on_one_side_are_a_pulse_and_two_are_spikes():
    from tssdpa.estimators.spikes import _in_a_pulse

    reach = np.ones(12)
    r = np.zeros(12)
    r[[1, 2]] = 5.0  # two adjacent hits: spikes
    r[[5, 6, 7]] = -5.0  # a negative pulse of 3
    r[9:] = [5.0, -5.0, 5.0]  # 3 far, but not on one side
    assert np.flatnonzero(_in_a_pulse(r, reach)).tolist() == [5, 6, 7]
    r[[0, 1, 2]] = 5.0  # a run at the start of the series
    r[3] = np.nan  # a missing reference breaks a run
    assert np.flatnonzero(_in_a_pulse(r, reach)).tolist() == [0, 1, 2, 5, 6, 7]
    assert not _in_a_pulse(np.array([5.0, 5.0]), np.ones(2)).any()


@pytest.mark.parametrize(
    "shape",
    [
        "flat, 2 samples, every 50",
        "gaussian sd 0.8 half a sample off, every 50",
        "gaussian sd 1, every 10",
    ],
)
def test_a_regular_train_of_pulses_that_stand_out_as_single_samples_is_signal(shape):
    """Pulses whose far run is shorter than 3 samples (2 samples wide, off centre, or so dense
    that only their peaks stand out) look like impulsive hits one by one; but they come at
    even spacing, all on one side, where impulsive hits come at random times. Before, every
    pulse was filled in: 5x the noisy series' error on the 2-sample train."""
    rng = np.random.default_rng(0)
    t = np.arange(1500.0)
    period = 10.0 if shape.endswith("every 10") else 50.0
    phase = t % period
    if shape.startswith("flat"):
        clean = np.where((phase >= 25) & (phase < 27), 5.0, 0.0)
    else:
        centre = 5.0 if period == 10 else (25.5 if "off" in shape else 25.0)
        sd = 0.8 if "off" in shape else 1.0
        clean = 5.0 * np.exp(-((phase - centre) ** 2) / (2.0 * sd**2))
    _assert_kept_as_signal(clean, rng)


def _assert_kept_as_signal(clean, rng):
    """``clean`` under white noise of 0.2 is no channel of impulsive noise, and a zero-phase
    fit (its default ``glitches="missing"``) lowers its error. A small search, 4-5x quicker
    than the default's (the spike rule is tested, not the search): the error 0.11-0.19x the
    noisy series' on the cases here, as with the default search (0.11-0.15x)."""
    x = clean + 0.2 * rng.normal(size=clean.size)
    assert spike_channels(x[:, None]).tolist() == [False]
    small = dict(window=[8, 32, "all"], embedding=[1, 7], degree=[0, 2])
    y = ProjectionFilter(causal=False, **small).fit(x).filter(x)
    assert _error(y, clean) < _error(x, clean)


def test_one_sided_impulsive_hits_at_random_times_are_still_spikes():
    # a sensor that clips one way: every hit on one side, but at random times
    clean = _clean("mackey_glass", 3000)
    rng = np.random.default_rng(5)
    x = add_noise(clean, "gaussian", 20.0, seed=5)
    hit = rng.random(3000) < 0.02
    x[hit] += 10.0 * np.std(x - clean)
    assert spike_channels(x[:, None]).tolist() == [True]
    found = spike_mask(x[:, None])[:, 0]
    assert (found & hit).sum() >= 0.9 * hit.sum()


def test_a_pulse_train_is_far_samples_on_one_side_at_even_spacing():
    from tssdpa.estimators.spikes import MIN_SPIKES, _a_pulse_train

    def far(times, signs=1.0):
        out = np.zeros(2000)
        out[np.asarray(times)] = 5.0 * np.asarray(signs)
        return out

    train = np.arange(20, 2000, 50)
    assert _a_pulse_train(far(train))
    assert _a_pulse_train(far(train, -1.0))  # negative pulses
    assert _a_pulse_train(far(np.delete(train, [5, 17, 30])))  # three pulses missed: gaps of 100
    assert _a_pulse_train(far(np.r_[train, train + 1]))  # 2 samples each: one event per pulse
    jitter = np.random.default_rng(1).integers(-2, 3, train.size)
    assert _a_pulse_train(far(train + jitter))  # 4% spacing jitter
    signs = np.where(np.arange(train.size) % 2, 1.0, -1.0)
    assert not _a_pulse_train(far(train, signs))  # either side: impulsive
    random_times = np.sort(np.random.default_rng(2).choice(2000, train.size, replace=False))
    assert not _a_pulse_train(far(random_times))  # at random times: impulsive
    assert not _a_pulse_train(far(train[: MIN_SPIKES - 1]))  # too few to tell


def _bursts(rng, n=3000):
    """Bursts at random times (gaps of 60-140 samples): a plateau of 14 samples carrying 4
    one-sample spikes every 3 samples -- a neuron's burst sampled at its spikes' width."""
    clean = np.zeros(n)
    start = 30
    while start + 14 < n:
        clean[start : start + 14] = 1.0
        clean[start + 2 : start + 14 : 3] = 5.0
        start += int(rng.integers(60, 141))
    return clean


def test_spikes_that_the_samples_before_them_foretell_are_signal_not_impulsive_noise():
    """Far samples on one side at uneven times -- a neuron's spikes in bursts -- were taken
    for impulsive noise and filled in: several times the noisy series' error
    (``experiments/spikes_probe.py --part pulses``). The samples before each burst's first
    spike are like those before the others', and those are followed by a spike too;
    impulsive hits come whatever came before."""
    rng = np.random.default_rng(0)
    _assert_kept_as_signal(_bursts(rng), rng)


def _two_sample_hits(seed, sign):
    """``(clean, x)``: a sine under white noise and 2-sample hits at random times, of either
    sign or all on one side."""
    rng = np.random.default_rng(seed)
    clean = np.sin(np.arange(2000) / 20.0)
    x = clean + 0.1 * rng.normal(size=2000)
    starts = np.flatnonzero(rng.random(1999) < 0.01)
    signs = rng.choice([-1.0, 1.0], starts.size) if sign == "either" else 1.0
    x[starts] += 7.0 * signs
    x[starts + 1] += 7.0 * signs
    return clean, x


def test_impulsive_hits_two_samples_wide_at_random_times_are_still_spikes():
    # the first sample of a 2-sample hit announces the second: only a hit's first sample
    # (none far among the samples before it) is asked whether it was foretold
    for seed, sign in ((0, "either"), (1, "one")):
        _, x = _two_sample_hits(seed, sign)
        assert spike_channels(x[:, None]).tolist() == [True]


# slow-only: two default zero-phase fits (~9 s; on 1200 samples, not 2000, the margin goes);
# the self-supervised fit under 1-sample hits (beats the best median filter) runs by default
@pytest.mark.slow
def test_impulsive_hits_two_samples_wide_at_random_times_are_filled_in_by_the_default_fit():
    for seed, sign in ((0, "either"), (1, "one")):
        clean, x = _two_sample_hits(seed, sign)
        assert spike_channels(x[:, None]).tolist() == [True]
        y = ProjectionFilter(causal=False).fit(x).filter(x)
        assert _error(y, clean) < 0.5 * _error(x, clean)


def test_hits_at_random_times_are_not_foretold_by_the_samples_before_them():
    from tssdpa.estimators.spikes import FORETOLD_SHARE, channel_spikes, foretold_shares

    clean = _clean("lorenz", 3000)
    for sign in ("either", "one"):
        rng = np.random.default_rng(3)
        x = add_noise(clean, "gaussian", 20.0, seed=3)
        hit = rng.random(3000) < 0.02
        signs = rng.choice([-1.0, 1.0], 3000) if sign == "either" else np.ones(3000)
        x[hit] += signs[hit] * 10.0 * np.std(x - clean)
        followed, own = foretold_shares(x, channel_spikes(x)[1])
        assert followed < FORETOLD_SHARE and followed < 5.0 * own
        assert spike_channels(x[:, None]).tolist() == [True]
    # the same hits at the bursts' spikes' times are foretold
    x = _bursts(np.random.default_rng(0)) + 0.2 * np.random.default_rng(1).normal(size=3000)
    followed, own = foretold_shares(x, channel_spikes(x)[1])
    assert followed > 0.3 and followed > 10.0 * own
