"""Channels in different units (``ProjectionFilter(channel_scale="std")``, the default): the
kernel compares each channel in units of its standard deviation, so the fit does not depend on
the units a channel was recorded in (tssdpa.filters.channel_scale)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from tssdpa.data import synthetic
from tssdpa.estimators.persistence import UncheckedFileWarning
from tssdpa.filters import ProjectionFilter
from tssdpa.filters.channel_scale import channel_spread, fitted_channel_scale

#: deg/s beside g beside uT: five orders of magnitude between channels
UNITS = np.array([1.0, 1e-3, 50.0])


def _lorenz(n=800, seed=0, noise=0.3):
    rng = np.random.default_rng(seed)
    clean = synthetic.lorenz(n, seed=seed, component=None)
    clean = (clean - clean.mean(0)) / clean.std(0)
    return clean, clean + noise * rng.normal(size=clean.shape)


# zero-phase: slow-only (~12 s); the fit scales channels before the causal/zero-phase split
@pytest.mark.parametrize("causal", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_the_default_fit_gives_the_same_filter_whatever_each_channels_units(causal):
    _, noisy = _lorenz(400)
    f = ProjectionFilter(causal=causal, max_fit_samples=300).fit(noisy)
    g = ProjectionFilter(causal=causal, max_fit_samples=300).fit(noisy * UNITS)
    np.testing.assert_allclose(g.noise_level_, f.noise_level_ * UNITS, rtol=1e-9)
    # the same setting; sigma in the kernel's units, those of the median channel's spread
    ratio = np.median(np.std(noisy * UNITS, axis=0)) / np.median(np.std(noisy, axis=0))
    sigma = pytest.approx(f.best_params_["sigma"] * ratio, rel=1e-9)
    assert g.best_params_ == {**f.best_params_, "sigma": sigma}
    np.testing.assert_allclose(g.filter(noisy * UNITS) / UNITS, f.filter(noisy), atol=1e-9)
    # channels as they are: the fit follows the largest unit, and is another filter
    h = ProjectionFilter(causal=causal, max_fit_samples=300, channel_scale=None)
    h.fit(noisy * UNITS)
    assert np.all(h.channel_scale_ == 1.0)
    assert not np.allclose(h.filter(noisy * UNITS) / UNITS, f.filter(noisy), atol=1e-3)


@pytest.mark.slow  # 3 default fits of 1500 samples (~14 s); the test above checks the scaling
def test_channels_in_other_units_are_filtered_as_well_as_in_one_unit():
    clean, noisy = _lorenz(1500, seed=1)
    fitted = ProjectionFilter().fit(noisy * UNITS)
    err = {}
    for scale in ("std", None):
        f = fitted if scale == "std" else ProjectionFilter(channel_scale=scale).fit(noisy * UNITS)
        y = f.filter(noisy * UNITS) / UNITS
        err[scale] = np.sqrt(np.mean((y - clean) ** 2, axis=0))
    same_unit = ProjectionFilter().fit(noisy).filter(noisy)
    np.testing.assert_allclose(err["std"], np.sqrt(np.mean((same_unit - clean) ** 2, axis=0)))
    # the channel in the largest unit decides the kernel and the others get a worse filter
    assert err["std"][1] < err[None][1]
    assert np.sum(err["std"] ** 2) < np.sum(err[None] ** 2)


def _sensor_beside_a_reference(reference_noise):
    """(signal, x): a noisy sensor of ``signal`` beside a reference with ``reference_noise``
    (the sensor's noise is the same whatever that is)."""
    rng = np.random.default_rng(0)
    t = np.arange(1500)
    signal = np.sin(2 * np.pi * t / 80) + 0.5 * np.sin(2 * np.pi * t / 23)
    reference = np.cos(2 * np.pi * t / 500) + reference_noise * rng.normal(size=t.size)
    return signal, np.column_stack([signal + 0.3 * rng.normal(size=t.size), reference])


@functools.cache
def _sensor_filtered_alone():
    """The default fit's output of the sensor alone: fitted once for both cases."""
    sensor = _sensor_beside_a_reference(0.0)[1][:, 0]
    return sensor, ProjectionFilter().fit(sensor).filter(sensor)


@pytest.mark.parametrize("reference_noise", [0.0, 1e-4])
def test_a_clean_channel_beside_a_noisy_one_does_not_stop_its_filtering(reference_noise):
    # a setpoint or reference recorded beside a noisy sensor: scaled by noise levels, the
    # clean channel's tiny noise made it every distance, and the sensor came back unfiltered
    signal, x = _sensor_beside_a_reference(reference_noise)
    y = ProjectionFilter().fit(x).filter(x)
    sensor, alone = _sensor_filtered_alone()
    np.testing.assert_array_equal(x[:, 0], sensor)
    err = np.sqrt(np.mean((y[:, 0] - signal) ** 2))
    assert err < 0.8 * 0.3 and err < 1.1 * np.sqrt(np.mean((alone - signal) ** 2))


def test_the_scale_is_each_channels_standard_deviation_over_their_median():
    # (data without outliers is not clipped: see channel_spread)
    _, noisy = _lorenz()
    x = noisy * UNITS
    f = ProjectionFilter(window=8, embedding=1, degree=0, max_fit_samples=500).fit(x)
    spread = np.std(x, axis=0)  # over every sample fitted, not the block of 500 alone
    np.testing.assert_allclose(f.channel_scale_, spread / np.median(spread), rtol=1e-12)
    one = ProjectionFilter(window=8, embedding=1, degree=0).fit(noisy[:, 0] * 1e3)
    np.testing.assert_array_equal(one.channel_scale_, [1.0])  # one channel keeps its units
    constant = np.column_stack([x, np.full(len(x), 7.0)])
    g = ProjectionFilter(window=8, embedding=1, degree=0).fit(constant)
    assert g.channel_scale_[3] == 1.0 and np.isfinite(g.filter(constant)).all()
    spreads_2_and_4 = np.column_stack([[-2.0, 2.0], [-4.0, 4.0]])
    np.testing.assert_allclose(fitted_channel_scale("std", spreads_2_and_4), [2 / 3, 4 / 3])
    assert np.all(fitted_channel_scale(None, spreads_2_and_4) == 1.0)


def test_a_channel_still_through_the_fit_block_is_scaled_by_its_spread_over_the_whole_series():
    # the fusion IMU's gyroscope Z axis: still through the first half of the training part
    # (the fit block), moving in the second; scaled by the block's spread, mostly noise, its
    # noise was magnified 12x and drove every kernel distance
    rng = np.random.default_rng(0)
    t = np.arange(2000)
    moving = np.where(t < 1000, 0.0, np.sin(t / 15.0))
    x = np.column_stack([np.sin(t / 20.0), moving]) + 0.05 * rng.normal(size=(2000, 2))
    f = ProjectionFilter(window=8, embedding=1, degree=0, max_fit_samples=1000).fit(x)
    np.testing.assert_allclose(f.channel_scale_, fitted_channel_scale("std", x), rtol=1e-12)


def test_a_glitch_does_not_shrink_its_channels_share_of_the_distances():
    """One sample of 300 standard deviations in a channel would make its standard deviation
    about 8x larger, and the channel count for little in the kernel: it is clipped first, so
    the scale stays within 2% of the data's without it, and the causal filter elsewhere as good."""
    clean, noisy = _lorenz(1500, seed=1)
    x = noisy * UNITS
    # a small search, 6x quicker than the default's (the scale is tested, not the search):
    # the same scales and errors within 0.01% of each other, as with the default search
    small = dict(window=[8, 32], embedding=[1, 3], degree=[0, 2])
    f = ProjectionFilter(**small).fit(x)
    glitched = x.copy()
    glitched[700, 0] += 300 * x[:, 0].std()
    assert np.std(glitched[:, 0]) > 5 * np.std(x[:, 0])
    g = ProjectionFilter(**small).fit(glitched)
    np.testing.assert_allclose(g.channel_scale_, f.channel_scale_, rtol=0.02)
    away = np.abs(np.arange(len(x)) - 700) > 200
    err = {k: np.sqrt(np.mean(((h.filter(y) / UNITS - clean)[away]) ** 2))
           for k, h, y in (("clean", f, x), ("glitched", g, glitched))}  # fmt: skip
    assert err["glitched"] < 1.05 * err["clean"]


def test_frequent_large_values_are_not_taken_for_glitches():
    # a pulse train's pulses (1 sample in 50) and Gaussian data keep their standard deviation
    t = np.arange(4000)
    pulses = np.where(t % 50 == 0, 30.0, 0.0) + 0.1 * np.random.default_rng(3).normal(size=t.size)
    gauss = np.random.default_rng(4).normal(size=t.size)
    x = np.column_stack([pulses, gauss])
    np.testing.assert_array_equal(channel_spread(x), np.std(x, axis=0))
    # off the median in fewer than 1 sample in 200 (events, a late step): not clipped to 0
    events = np.column_stack([(t % 700 == 0) * 5.0, np.where(t > 3990, 1.0, 0.0)])
    np.testing.assert_array_equal(channel_spread(events), np.std(events, axis=0))


@pytest.mark.parametrize(
    "kw",
    [
        dict(window=[8, 16], embedding=[1, 3], degree=[0, 1]),
        dict(window=None, decay=0.9, recurrent="features", n_features=32, sigma=[0.5, 1.0]),
        dict(window=None, decay=0.9, recurrent="features", n_features=32, embedding=1),
        dict(window=8, embedding=2, tau=0.05),
    ],
    ids=["exact", "random-features", "random-features-m1", "tau"],
)
def test_any_split_and_every_step_give_the_one_shot_output_in_the_units_of_x(kw):
    _, noisy = _lorenz(300)
    x = noisy * UNITS
    x[[40, 41, 200], 1] = np.nan
    t = np.arange(len(x)) * 0.01 + 0.002 * np.sin(np.arange(len(x)))
    ts = {"timestamps": t} if "tau" in kw else {}
    f = ProjectionFilter(**kw).fit(x, **ts)
    assert not np.allclose(f.channel_scale_, 1.0)
    want, zf = f.filter(x, zi=f.initial_state(), **ts)
    for cuts in ([0, 1, 150, 300], [0, 37, 38, 260, 300]):
        state, ys = f.initial_state(), []
        for a, b in zip(cuts[:-1], cuts[1:]):
            y, state = f.filter(x[a:b], zi=state, **({"timestamps": t[a:b]} if ts else {}))
            ys.append(y)
        np.testing.assert_allclose(np.concatenate(ys) / UNITS, want / UNITS, atol=1e-12)
    state = f.initial_state()
    for i in range(60):
        y, state = f.step(x[i], state, **({"timestamp": t[i]} if ts else {}))
        np.testing.assert_allclose(y / UNITS, want[i] / UNITS, atol=1e-12)
    # the state is in the units of x: its last output is the filter's, its samples as given
    last = zf[4] if "recurrent" in kw else (zf[0] if isinstance(zf, tuple) else zf)[-1]
    np.testing.assert_allclose(last / UNITS, want[-1] / UNITS, atol=1e-12)
    if "recurrent" not in kw:
        np.testing.assert_array_equal((zf[0] if isinstance(zf, tuple) else zf)[-2], x[-1])


def test_a_saved_filter_keeps_its_scale_and_a_tampered_one_is_refused(tmp_path, edit_config):
    _, noisy = _lorenz()
    x = noisy * UNITS
    f = ProjectionFilter(window=[8, 16], channel_independent=False).fit(x)  # one joint scale
    f.save(tmp_path / "f")
    g = ProjectionFilter.load(tmp_path / "f")
    np.testing.assert_array_equal(g.channel_scale_, f.channel_scale_)
    np.testing.assert_array_equal(g.filter(x), f.filter(x))
    path = str(tmp_path / "f" / "arrays.safetensors")
    arrays = load_file(path)
    for bad in (np.array([1.0, 0.0, 2.0]), np.array([1.0, np.inf, 2.0]), np.ones(2)):
        save_file({**arrays, "channel_scale_": bad}, path)
        with pytest.raises(ValueError, match="channel_scale_ must hold one value per channel"):
            ProjectionFilter.load(tmp_path / "f")
    for bad, message in ((np.array([1e-320, 1.0, 2.0]), "inverse is finite"),
                         (np.array([1, 2, 3]), "'channel_scale_' must be float64")):  # fmt: skip
        save_file({**arrays, "channel_scale_": bad}, path)
        with pytest.raises(ValueError, match=message):
            ProjectionFilter.load(tmp_path / "f")
    # saved with a channel scale, the array gone: refused, not filtered another way
    save_file({k: v for k, v in arrays.items() if k != "channel_scale_"}, path)
    with pytest.raises(ValueError, match="channel_scale_ is missing"):
        ProjectionFilter.load(tmp_path / "f")
    # a file from before channel scales (and before the arrays' digest): its filter compares
    # channels as they are, as it did
    edit_config(tmp_path / "f", lambda cfg: (cfg["params"].pop("channel_scale"),
                                             cfg.pop("arrays_sha256"), cfg.pop("fitted_sha256"),
                                             cfg.update(format=1)))  # fmt: skip
    with pytest.warns(UncheckedFileWarning):
        old = ProjectionFilter.load(tmp_path / "f")
    assert old.channel_scale is None  # and a refit of it keeps comparing them so
    fitted = {k: getattr(f, k + "_") for k in ("window", "embedding", "degree", "sigma", "decay")}
    plain = ProjectionFilter(channel_scale=None, **fitted)
    np.testing.assert_array_equal(old.filter(x), plain.filter(x))


def test_a_filter_fitted_beside_a_constant_channel_saves_and_loads(tmp_path):
    _, noisy = _lorenz(400)
    x = np.column_stack([noisy * UNITS, np.full(len(noisy), 3.0)])
    for kw in ({}, dict(window=None, decay=0.9, recurrent="features", n_features=16)):
        f = ProjectionFilter(**kw).fit(x)
        f.save(tmp_path / "f")
        np.testing.assert_array_equal(ProjectionFilter.load(tmp_path / "f").filter(x), f.filter(x))


def test_a_bad_channel_scale_is_refused_naming_it():
    _, noisy = _lorenz(200)
    with pytest.raises(ValueError, match="channel_scale"):
        ProjectionFilter(channel_scale="noise").fit(noisy)
    f = ProjectionFilter(window=8).fit(noisy * UNITS)
    with pytest.raises(ValueError, match="channel"):
        f.step(np.ones(2), f.initial_state())
    with pytest.raises(ValueError, match="zi"):
        f.filter(noisy * UNITS, zi=np.zeros((f.initial_state().shape[0], 2)))


def _units_with_a_sentinel(n=300):
    """A 1e-3 channel beside two of 1e3 (its kernel units: x 1e6), a sentinel 1e14 at 150:
    its squared kernel distance (1e40) overflows float32."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3)) * np.array([1e-3, 1e3, 1e3])
    z = x.copy()
    z[150, 0] = 1e14
    return x, z


def _stepped(f, z):
    state, ys = f.initial_state(), []
    for sample in z:
        y, state = f.step(sample, state)
        ys.append(y)
    return np.array(ys)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_float32_moving_average_averages_a_sample_whose_kernel_distance_overflows():
    # sigma=inf is the uniform kernel: distances do not count. Its logit, distance x 0, was
    # inf x 0 = NaN past float32's overflow: filter held the last output over the window
    # (-0.00043 where the mean is 2.5e13), step gave NaN
    x, z = _units_with_a_sentinel()
    kw = dict(window=4, embedding=1, degree=0, sigma=[np.inf])
    f32 = ProjectionFilter(dtype="float32", **kw).fit(x)
    f64 = ProjectionFilter(dtype="float64", **kw).fit(x)
    assert f32.sigma_ == np.inf and f32.channel_scale_[0] < 1e-5
    want = np.array([z[i - 3 : i + 1].mean(0) for i in range(3, len(z))])
    np.testing.assert_allclose(f64.filter(z)[3:], want, rtol=1e-12, atol=1e-9)
    rounding = 1e-5 * np.array([1e-3, 1e3, 1e3])  # float32's, in each channel's units
    for got in (f32.filter(z), _stepped(f32, z)):
        assert (np.abs(got[3:] - want) <= 1e-6 * np.abs(want) + rounding).all()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("kw", [dict(embedding=1, exclude_self=True), dict(embedding=2)])
def test_a_float32_filter_whose_kernel_distances_all_overflow_takes_the_nearest_key(kw):
    # where every key's squared distance overflows float32 (a sentinel 1e14 in a channel of
    # kernel units x 1e6), a narrow kernel's limit is still its nearest key, as where they
    # do not: the row had no key, and filter gave the sentinel itself (exclude_self's
    # fallback) or held the last output (the missing sample after it), step NaN
    x, z = _units_with_a_sentinel()
    z[151, 0] = np.nan  # its embedding-2 pattern holds the sentinel
    f = ProjectionFilter(window=8, degree=0, dtype="float32", **kw).fit(x)
    assert f.sigma_ < np.inf and f.channel_scale_[0] < 1e-5
    y, stepped = f.filter(z), _stepped(f, z)
    # the sentinel dominates the distances: the nearest key has the largest channel 0 where
    # the query holds the sentinel (the sample before the query's, with embedding 2)
    row = 150 if kw.get("exclude_self") else 151
    before = 1 if kw.get("exclude_self") else 2
    keys = np.arange(row - 7, row + 1)
    keys = keys[np.isfinite(z[keys, 0]) & (keys != row if before == 1 else True)]
    nearest = keys[np.argmax(z[keys - before + 1, 0] if before == 2 else z[keys, 0])]
    ch = slice(None) if before == 1 else slice(0, 1)  # (1, 2: the row's own sample, known)
    np.testing.assert_allclose(y[row, ch], z[nearest, ch], rtol=1e-6)
    np.testing.assert_allclose(stepped[row, ch], z[nearest, ch], rtol=1e-6)
    g = ProjectionFilter(window=8, degree=0, dtype="float64", **kw).fit(x)
    # the other rows: float64's, to rounding (151 weighs the sentinel as 1e14 x its weight)
    rounding = 1e-5 * np.array([1e-3, 1e3, 1e3])
    other = (np.arange(len(z)) < 150) | (np.arange(len(z)) > 151)
    for got in (y, stepped):
        assert (np.abs(got - g.filter(z))[other] <= rounding).all()


def test_the_non_local_filter_takes_a_reading_whose_squared_distances_overflow_as_any_other():
    # 1e150 in a channel of kernel units x 5e5: its patterns' squared distances overflow
    # float64, the k-d tree returned those keys as index len(keys), and filter raised
    # IndexError. Its patterns are now no key's neighbours, as they were not at 1e140: the
    # weights are the same, and the output is linear in the reading
    rng = np.random.default_rng(0)
    t = np.arange(600)
    x = np.stack([1e-3 * np.sin(t / 10) + 1e-4 * rng.normal(size=600),
                  1e3 * np.sin(t / 7) + 100 * rng.normal(size=600)], axis=1)  # fmt: skip
    f = ProjectionFilter(causal=False, window="all", embedding=3, glitches=None, base=None,
                         channel_independent=False, local_window=None).fit(x)  # fmt: skip
    out = {}
    for v in (1e140, 1e150):
        z = x.copy()
        z[300, 0] = v
        out[v] = f.filter(z)
    touched = np.abs(out[1e140][:, 0]) > 1e100  # the rows that weigh the reading
    assert 0 < touched.sum() < 100 and np.isfinite(out[1e150]).all()
    np.testing.assert_allclose(out[1e150][touched, 0], 1e10 * out[1e140][touched, 0], rtol=1e-12)
    np.testing.assert_array_equal(out[1e150][~touched], out[1e140][~touched])
    np.testing.assert_array_equal(out[1e150][:, 1], out[1e140][:, 1])


def test_constant_channels_have_no_spread_and_leave_the_others_their_units():
    # a stuck or unused channel (3.3 V, 1e-9) beside a signal: np.std's rounding gave 800
    # samples of 3.3 a spread of 4.4e-16, the median of three spreads was that, the signal's
    # channel_scale_ 4.6e13, and the fit chose a 128-sample moving average (RMSE 0.81 where
    # the signal's own fit has 0.086)
    rng = np.random.default_rng(2)
    t = np.arange(800)
    clean = np.sin(t / 25)
    x = np.stack([clean + 0.2 * rng.normal(size=800), np.full(800, 3.3), np.full(800, 1e-9)], 1)
    assert np.std(x[:, 1]) > 0  # (the rounding)
    np.testing.assert_array_equal(channel_spread(x)[1:], 0.0)
    f = ProjectionFilter().fit(x)
    np.testing.assert_array_equal(f.channel_scale_, 1.0)
    alone = ProjectionFilter().fit(x[:, :1]).filter(x[:, :1])[:, 0]
    rmse = [np.sqrt(np.mean((y - clean) ** 2)) for y in (f.filter(x)[:, 0], alone)]
    assert rmse[0] < 1.25 * rmse[1] < 0.5  # (the joint fit: 0.098, the signal alone: 0.087)


@pytest.mark.parametrize("level", [3.3, 2e5, 1.7e9])
def test_to_onnx_float32_note_is_silent_for_a_constant_channel_at_any_level(level):
    # fit stores spread_ 1 where np.std is 0 (800 samples of 2e5 or 1.7e9, not of 3.3): the
    # note took 1 for the spread and told a stuck channel it was rounded in steps of 128
    from tssdpa.estimators.arrays import float32_samples_note

    rng = np.random.default_rng(0)
    signal = np.sin(np.arange(800) / 9) + 0.1 * rng.normal(size=800)
    stuck = ProjectionFilter(window=[16], embedding=[1], degree=[0])
    assert float32_samples_note(stuck.fit(np.c_[signal, np.full(800, level)])) is None
    if level > 1e5:  # the same level with a unit signal on it is still told
        moving = ProjectionFilter(window=[16], embedding=[1], degree=[0]).fit(
            np.c_[signal, level + signal]
        )
        assert "channel 1 was fitted about" in float32_samples_note(moving)
