"""A causal filter fitted channel by channel (``channel_independent=True``) streams as one:
one state, ``step`` and the ONNX export, any split of a series giving the one-shot result."""

from __future__ import annotations

import numpy as np
import pytest

from tssdpa.filters import ProjectionFilter

N = 600
#: the joint filter of the composites below: a history of 7 samples
JOINT = dict(window=8, embedding=1, degree=0, sigma=0.7, channel_independent=False)


def _unrelated(seed=0):
    """A slow sine, a square wave 50x larger and a slow walk 1000x smaller, with a gap in the
    second channel and the third starting late: nothing one channel's distances tell the
    others."""
    rng = np.random.default_rng(seed)
    t = np.arange(N)
    clean = np.column_stack([np.sin(2 * np.pi * t / 200), 50 * np.sign(np.sin(2 * np.pi * t / 37)),
                             1e-3 * np.cumsum(rng.normal(size=N))])  # fmt: skip
    x = clean + 0.3 * clean.std(0) * rng.normal(size=clean.shape)
    x[200:230, 1] = np.nan
    x[:40, 2] = np.nan
    return clean, x


@pytest.fixture(scope="module")
def fitted():
    clean, x = _unrelated()
    return clean, x, ProjectionFilter(channel_independent=True).fit(x)


def _composite(x, joint_channels=()):
    """A composite with histories of 3, 7 and 20 samples (and, for ``joint_channels``, the
    joint filter's output): the state is padded for the shorter ones."""
    f = ProjectionFilter(**JOINT).fit(x)
    own = [dict(window=4, embedding=1, degree=0, sigma=0.5),
           dict(window=8, embedding=1, degree=1, sigma=0.8),
           dict(window=21, embedding=1, degree=2, sigma=np.inf)]  # fmt: skip
    f.channel_models_ = [None if c in joint_channels else ProjectionFilter(**own[c]).fit(x[:, c])
                         for c in range(x.shape[1])]  # fmt: skip
    return f


def _chunks(f, x, cuts, times=None):
    z, out = f.initial_state(), []
    bounds = [0, *cuts, len(x)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        y, z = f.filter(x[a:b], zi=z, timestamps=None if times is None else times[a:b])
        out.append(y)
    return np.vstack(out), z


def _close(a, b, x, rtol=1e-10):
    """``a`` equal to ``b`` to ``rtol`` of each channel's range in ``x``, NaN where it is."""
    span = np.nanmax(x, axis=0) - np.nanmin(x, axis=0)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert (np.nan_to_num(np.abs(a - b)) <= rtol * span).all()


def test_a_causal_fit_of_true_fits_each_channel_alone_and_filters_each_with_its_own(fitted):
    _, x, f = fitted
    assert all(m is not None and m.causal and m.n_channels_ == 1 for m in f.channel_models_)
    assert [m.best_params_ for m in f.channel_models_] == f.best_params_
    y = np.asarray(f.filter(x))
    for c, m in enumerate(f.channel_models_):
        np.testing.assert_array_equal(y[:, c], m.filter(x[:, c]))
        np.testing.assert_array_equal(f.filter(x, zi=f.initial_state())[0][:, c],
                                      m.filter(x[:, c], zi=m.initial_state())[0])  # fmt: skip


def test_unrelated_channels_fitted_alone_beat_the_joint_causal_fit(fitted):
    clean, x, f = fitted
    joint = ProjectionFilter(channel_independent=False).fit(x)
    err = [np.sqrt(np.nanmean((np.asarray(g.filter(x)) - clean) ** 2, axis=0)) for g in (f, joint)]
    assert (err[0] < err[1]).all()


@pytest.mark.parametrize("cuts", [[1], [5, 6, 7], [37, 250, 251, 599], list(range(10, 600, 10))])
def test_any_split_of_a_channel_by_channel_stream_gives_the_one_shot_result(fitted, cuts):
    _, x, f = fitted
    one, z_one = f.filter(x, zi=f.initial_state())
    y, z = _chunks(f, x, cuts)
    _close(y, one, x)
    _close(z, z_one, x)


@pytest.mark.parametrize("joint_channels", [(), (1,), (0, 2)])
def test_each_channel_streams_as_its_own_filter_whatever_history_it_keeps(joint_channels):
    _, x = _unrelated(seed=1)
    f = _composite(x, joint_channels)
    joint = ProjectionFilter(**JOINT).fit(x)
    longest = 21 if 2 not in joint_channels else 8  # window 21 (channel 2's own), else 8
    assert f.initial_state().shape == (longest, 3)
    y, _ = _chunks(f, x, [3, 4, 100, 333])
    for c, m in enumerate(f.channel_models_):
        alone = joint if m is None else m
        want = alone.filter(x if m is None else x[:, c], zi=alone.initial_state())[0]
        _close(y[:, c], want[:, c] if m is None else want, x[:, c])
    np.testing.assert_array_equal(np.asarray(f.filter(x))[:, list(joint_channels)],
                                  np.asarray(joint.filter(x))[:, list(joint_channels)])  # fmt: skip


def test_step_by_step_is_the_stream(fitted):
    _, x, f = fitted
    one, _ = f.filter(x[:120], zi=f.initial_state())
    z, ys = f.initial_state(), []
    for sample in x[:120]:
        y, z = f.step(sample, z)
        ys.append(y)
    _close(np.array(ys), one, x)


def test_a_timed_channel_by_channel_stream_splits_as_it_streams_at_once():
    _, x = _unrelated(seed=2)
    t = np.cumsum(np.random.default_rng(3).uniform(0.005, 0.015, size=N))
    f = ProjectionFilter(tau=0.05, window=[8, 24], channel_independent=True).fit(x, timestamps=t)
    hist, times = f.initial_state()
    assert times.shape == (hist.shape[0] - 1,)
    one, (h1, t1) = f.filter(x, zi=f.initial_state(), timestamps=t)
    y, (h, tt) = _chunks(f, x, [2, 90, 91, 400], times=t)
    _close(y, one, x)
    np.testing.assert_array_equal(tt, t1)
    np.testing.assert_array_equal(tt[-5:], t[-5:])


def test_a_saved_channel_by_channel_filter_streams_as_before(fitted, tmp_path):
    _, x, f = fitted
    f.save(tmp_path / "f")
    g = ProjectionFilter.load(tmp_path / "f")
    np.testing.assert_array_equal(g.filter(x, zi=g.initial_state())[0],
                                  f.filter(x, zi=f.initial_state())[0])  # fmt: skip


def test_a_filter_switched_to_causal_after_a_zero_phase_fit_streams_its_joint_settings():
    _, x = _unrelated()
    f = ProjectionFilter(causal=False, channel_independent=False, window=[8]).fit(x)
    f.channel_models_ = [ProjectionFilter(causal=False, window=4, sigma=0.5).fit(x[:, c])
                         for c in range(3)]  # fmt: skip
    f.set_params(causal=True)
    joint = ProjectionFilter(causal=False, channel_independent=False, window=[8]).fit(x)
    joint.set_params(causal=True)
    np.testing.assert_array_equal(f.filter(x), joint.filter(x))
    assert f.initial_state().shape == joint.initial_state().shape


def test_true_with_random_features_is_refused_by_name():
    with pytest.raises(ValueError, match="channel_independent=True needs the exact kernel"):
        ProjectionFilter(channel_independent=True, recurrent="features", decay=0.9).fit(
            _unrelated()[1]
        )


# timed: slow-only (~11 s export); test_export.py's test_a_filter_with_tau_takes_the_sample_times
# exports the timed step of one filter, and the untimed case the channel-by-channel composite
@pytest.mark.parametrize("timed", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_the_onnx_step_of_a_channel_by_channel_filter_is_its_stream(tmp_path, timed):
    ort = pytest.importorskip("onnxruntime")
    from tssdpa.export import onnx_initial_state, onnx_step_spec, to_onnx

    _, x = _unrelated(seed=4)
    f = _composite(x, joint_channels=(1,))
    t = np.arange(N) * 0.01
    if timed:
        f.set_params(tau=0.05)
        for m in f.channel_models_:
            if m is not None:
                m.set_params(tau=0.05)
    with pytest.raises(ValueError, match="channel by channel"):
        onnx_step_spec(f)
    sess = ort.InferenceSession(str(to_onnx(f, tmp_path / "f.onnx")))
    state, out = onnx_initial_state(f), []
    assert state["state"].shape == (21, 3)
    for a, b in [(0, 5), (5, 6), (6, 350), (350, N)]:
        feed = {"x": x[a:b].astype(np.float32), **state}
        if timed:
            feed["t"] = t[a:b]
        got = sess.run(None, feed)
        out.append(got[0])
        state = dict(zip(state, got[1:]))
    want = f.filter(x.astype(np.float32), zi=f.initial_state(), timestamps=t if timed else None)[0]
    _close(np.vstack(out), want, x, rtol=1e-6)  # float32 samples and outputs


@pytest.mark.parametrize("setting", [{"exclude_self": True}, {"dtype": "float32"}])
def test_a_setting_changed_after_fit_reaches_each_channels_stream_before_any_offline_call(
    fitted, setting
):
    _, x, f = fitted
    import copy

    g, want = copy.deepcopy(f), copy.deepcopy(f)
    g.set_params(**setting)
    want.set_params(**setting)
    # a stream and steps first: nothing offline has told the channels' filters yet
    y, _ = g.filter(x, zi=g.initial_state())
    z, steps = g.initial_state(), []
    for sample in x[:80]:
        s, z = g.step(sample, z)
        steps.append(s)
    for c, m in enumerate(want.channel_models_):
        m.set_params(**setting)
        alone = m.filter(x[:, c], zi=m.initial_state())[0]
        _close(y[:, c], alone, x[:, c])
        _close(np.array(steps)[:, c], alone[:80], x[:, c])


def test_tau_set_after_fit_times_each_channels_filter_as_the_joint_filters():
    _, x = _unrelated(seed=5)
    t = np.cumsum(np.random.default_rng(6).uniform(0.005, 0.015, size=N))
    f = ProjectionFilter(channel_independent=True, window=[8, 16]).fit(x)
    f.set_params(tau=0.05)  # as a joint filter: its fitted settings, with the decay in time
    y = np.asarray(f.filter(x, timestamps=t))
    one, _ = f.filter(x, zi=f.initial_state(), timestamps=t)
    z, steps = f.initial_state(), []
    for sample, when in zip(x[:60], t):
        s, z = f.step(sample, z, timestamp=when)
        steps.append(s)
    _close(np.array(steps), one[:60], x)
    for c, m in enumerate(f.channel_models_):
        assert m.tau == 0.05
        np.testing.assert_array_equal(y[:, c], m.filter(x[:, c], timestamps=t))
        _close(one[:, c], m.filter(x[:, c], zi=m.initial_state(), timestamps=t)[0], x[:, c])


def test_to_onnx_of_channels_fitted_alone_warns_where_float32_samples_round_one_coarsely(tmp_path):
    pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(7)
    t = np.arange(N)
    x = np.column_stack([np.sin(t / 9), 1e6 + np.sin(t / 7)]) + 0.1 * rng.normal(size=(N, 2))
    f = ProjectionFilter(window=[8], channel_independent=True).fit(x)
    # as a joint fit warns: float32 steps of 0.0625 on a channel whose spread is 0.7; to a
    # folder, refused after the warning, so as not to export (~8 s; exports: the test above)
    with pytest.warns(UserWarning, match=r"channel 1 was fitted about 1e\+06"):
        with pytest.raises(ValueError, match="is a folder"):
            f.to_onnx(tmp_path)


@pytest.mark.parametrize("causal", [True, False])
def test_channels_fitted_alone_then_switched_causal_are_refused_not_filtered_with_defaults(
    causal,
):
    _, x = _unrelated(seed=8)
    quick = dict(window=[8, 16], embedding=[1])  # a quick search: the refusal is tested
    f = ProjectionFilter(channel_independent=True, causal=causal, **quick).fit(x)
    f.set_params(causal=not causal)  # no joint fit: nothing chose a window or sigma for it
    with pytest.raises(ValueError, match="channel_independent=True.*set causal back"):
        f.filter(x)
    if not causal:
        with pytest.raises(ValueError, match="channel_independent=True.*set causal back"):
            f.initial_state()


def _long_iir(min_step, others):
    """A 3-channel filter whose channel 1 is an IIR filter alone (its history set by
    ``min_step``), the others ``others``: None (the joint output) or short FIR filters alone."""
    rng = np.random.default_rng(9)
    x, t = rng.normal(size=(300, 3)), np.arange(300) * 0.01
    iir = dict(window=None, tau=1.0, min_step=min_step, embedding=1, degree=0, sigma=1.0)
    short = {**iir, "window": 8}
    f = ProjectionFilter(**short, channel_independent=False).fit(x, timestamps=t)
    alone = [ProjectionFilter(**(iir if c == 1 else short)).fit(x[:, c], timestamps=t)
             for c in range(3)]  # fmt: skip
    f.channel_models_ = [m if c == 1 or others else None for c, m in enumerate(alone)]
    return f


def test_a_channel_by_channel_state_too_large_is_refused_as_a_joint_one():
    # one channel's IIR keeps 2.8e7 samples: the state would be 660 MB of NaN for three
    f = _long_iir(1e-6, others=None)
    with pytest.raises(ValueError, match="streaming state would keep 27631021 past samples x 3"):
        f.initial_state()


def test_the_onnx_state_of_channels_each_within_the_limit_but_not_together_is_refused():
    from tssdpa.export import onnx_initial_state

    f = _long_iir(7e-6, others="alone")  # every channel alone, as channel_independent=True fits
    assert f.channel_models_[1].initial_state()[0].shape[0] < 10_000_000  # alone: allowed
    for state in (f.initial_state, lambda: onnx_initial_state(f)):
        with pytest.raises(ValueError, match="streaming state would keep .* past samples x 3"):
            state()
