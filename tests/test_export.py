"""The ONNX export of a causal ProjectionFilter's streaming step (issue 14).

Every check runs the exported model in onnxruntime and compares it with the Python filter on
the same float32 samples: chunked with random splits and the state threaded through, it must
equal ``filter(x, zi=initial_state())`` (and so ``filter(x)``) to float32 rounding.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnxruntime as ort
import pytest

from tssdpa.export import (
    INPUT_NAMES,
    OUTPUT_NAMES,
    TIMED_INPUT_NAMES,
    TIMED_OUTPUT_NAMES,
    StreamingStep,
    onnx_initial_state,
    onnx_step_spec,
    to_onnx,
)
from tssdpa.filters import ProjectionFilter

#: settings covering what a causal fit can choose: FIR windows, embeddings 1 / 3 / 7, degree
#: 0 / 1 / 2, finite and infinite sigma, a decay, the IIR truncation, exclude_self, a window
#: longer than the series
CASES = {
    "fir": (dict(window=8, sigma=0.5), 1),
    "fir-embedding-decay-2ch": (dict(window=8, embedding=3, sigma=0.8, decay=0.9), 2),
    "iir-truncated-2ch": (dict(window=None, decay=0.8, embedding=2, sigma=0.7), 2),
    "savgol-degree2": (dict(window=16, sigma=np.inf, degree=2), 1),
    # longer than the series: early rows and rows past a gap weigh keys in a small part of it
    "degree2-window-past-the-series": (dict(window=400, sigma=0.9, degree=2), 1),
    "degree1-exclude-self-3ch": (
        dict(window=12, embedding=7, sigma=1.5, degree=1, exclude_self=True),
        3,
    ),  # fmt: skip
    "window1": (dict(window=1, sigma=1.0), 2),
}


def _series(C, n=240, seed=0, gaps=True):
    """A float32-exact noisy multichannel series with isolated NaN, a short gap in one
    channel and (with ``gaps``) gaps longer than every window: in channel 1 alone (of
    several), and in all channels."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 12, n)[:, None]
    x = np.sin(t * (1 + np.arange(C))) + 0.3 * rng.normal(size=(n, C)) + np.arange(C)
    if gaps:
        x[rng.choice(n, 6, replace=False), rng.integers(0, C, 6)] = np.nan
        x[60:63, 0] = np.nan
        if C > 1:
            x[85:115, 1] = np.nan
        x[150:175] = np.nan
    return x.astype(np.float32).astype(np.float64)


def _run_chunks(sess, x, state, cuts):
    ys = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        y, state = sess.run(None, {"x": x[a:b].astype(np.float32), "state": state})
        ys.append(y)
    return np.concatenate(ys), state


def _random_cuts(rng, n, k):
    inner = np.sort(rng.choice(np.arange(1, n), size=k, replace=False))
    return [0, *inner.tolist(), n]


def _close(got, want, x):
    scale = float(np.nanmax(np.abs(x)))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6 * scale, equal_nan=True)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """One exported model per case: ``exported[name]`` is (filter, C, session), exported when a
    test first asks for it (a test worker exports only the cases its tests use)."""
    folder = tmp_path_factory.mktemp("onnx")

    class Exported(dict):
        def __missing__(self, name):
            kw, C = CASES[name]
            f = ProjectionFilter(**kw)
            path = to_onnx(f, folder / f"{name}.onnx", n_channels=C)
            self[name] = (f, C, ort.InferenceSession(str(path)))
            return self[name]

    return Exported()


@pytest.mark.parametrize("name", sorted(CASES))
def test_any_split_equals_the_python_filter(exported, name):
    f, C, sess = exported[name]
    x = _series(C)
    want, zf = f.filter(x, zi=f.initial_state(C))
    rng = np.random.default_rng(len(name))
    for k in (1, 5, 40):
        cuts = _random_cuts(rng, len(x), k)
        got, state = _run_chunks(sess, x, onnx_initial_state(f, C)["state"], cuts)
        _close(got, want, x)
        _close(state, zf.astype(np.float32), x)  # the state is Python's (H + 1, C) layout
    # one sample at a time, as a control loop calls it
    got, _ = _run_chunks(sess, x[:40], onnx_initial_state(f, C)["state"], list(range(41)))
    _close(got, want[:40], x)
    # from the first defined output on, the offline filter(x) gives the same numbers
    _close(got, f.filter(x)[:40], x)


def test_nan_behaves_as_in_python(exported):
    """A leading gap stays NaN (a stream cannot look ahead), a gap longer than the window
    holds the last output, across chunk boundaries and from a state made in Python."""
    f, C, sess = exported["fir-embedding-decay-2ch"]
    x = _series(C, gaps=False)
    x[:5] = np.nan
    x[100:130] = np.nan  # longer than the window: the output holds
    x[140, 1] = np.nan  # one channel missing: that key serves the other
    x[180:200, 1] = np.nan  # channel 1 alone, longer than the window
    want, _ = f.filter(x, zi=f.initial_state(C))
    # window 8: from row 107 on no key is in reach
    assert np.isnan(want[:5]).all() and np.all(want[107:130] == want[106])
    # ... and from row 187 on none with channel 1, which holds; channel 0 is filtered
    assert np.all(want[187:200, 1] == want[186, 1]) and np.unique(want[187:200, 0]).size == 13
    got, _ = _run_chunks(sess, x, onnx_initial_state(f, C)["state"], [0, 3, 101, 120, 240])
    _close(got, want, x)
    # a state built by Python's filter continues in ONNX (and the other way round)
    y1, z1 = f.filter(x[:110], zi=f.initial_state(C))
    got2, _ = _run_chunks(sess, x[110:], z1.astype(np.float32), [0, 130])
    _close(np.concatenate([y1, got2]), want, x)


def test_a_fitted_and_saved_filter_exports_what_fit_chose_through_its_method(tmp_path):
    x = _series(2, n=300, seed=3)
    f = ProjectionFilter(window=[8, 16], embedding=[1, 3], degree=[0, 2], decay=[None, 0.95])
    f.fit(x)
    f.save(tmp_path / "saved")  # fitted on a laptop, exported where it is deployed
    loaded = ProjectionFilter.load(tmp_path / "saved")
    # the method is the library call: filter.to_onnx(path) == to_onnx(filter, path)
    path = loaded.to_onnx(tmp_path / "fitted.onnx")
    assert path.read_bytes() == to_onnx(loaded, tmp_path / "again.onnx").read_bytes()
    sess = ort.InferenceSession(str(path))
    want, _ = f.filter(x, zi=f.initial_state())
    got, _ = _run_chunks(sess, x, onnx_initial_state(loaded)["state"], [0, 17, 18, 200, 300])
    _close(got, want, x)


def test_a_filter_fitted_on_channels_in_other_units_exports_its_channel_scale(tmp_path):
    units = np.array([1.0, 1e-3, 50.0])  # deg/s, g, uT
    x = _series(3, n=300, seed=4) * units
    f = ProjectionFilter(window=[8, 16], embedding=[1, 3]).fit(x)
    assert f.channel_scale_.max() / f.channel_scale_.min() > 1e4
    sess = ort.InferenceSession(str(f.to_onnx(tmp_path / "units.onnx")))
    want, zf = f.filter(x, zi=f.initial_state())
    got, state = _run_chunks(sess, x, onnx_initial_state(f)["state"], [0, 1, 90, 91, 300])
    for c in range(3):  # each channel to float32 rounding of its own range
        _close(got[:, c], want[:, c], x[:, c])
        _close(state[:, c], zf[:, c].astype(np.float32), x[:, c])


@pytest.mark.parametrize(
    "kw",
    [
        dict(window=8, embedding=2, sigma=0.6, tau=0.05),
        dict(window=None, tau=0.03, min_step=0.007, sigma=0.7, degree=1),  # IIR in time units
    ],
)
def test_a_filter_with_tau_takes_the_sample_times(tmp_path, kw):
    """tau: the model takes float64 times ``t`` and threads them in ``state_times``; jittered
    epoch-second timestamps, as a robot's clock gives them."""
    C = 2
    rng = np.random.default_rng(5)
    x = _series(C)
    t = 1.7e9 + np.cumsum(0.008 + 0.004 * rng.random(len(x)))
    f = ProjectionFilter(**kw)
    sess = ort.InferenceSession(str(to_onnx(f, tmp_path / "tau.onnx", n_channels=C)))
    assert [i.name for i in sess.get_inputs()] == list(TIMED_INPUT_NAMES)
    assert [o.name for o in sess.get_outputs()] == list(TIMED_OUTPUT_NAMES)
    want, (zf, zf_times) = f.filter(x, zi=f.initial_state(C), timestamps=t)
    for k in (1, 30):
        cuts = _random_cuts(rng, len(x), k)
        state = onnx_initial_state(f, C)
        ys = []
        for a, b in zip(cuts[:-1], cuts[1:]):
            y, s, st = sess.run(None, {"x": x[a:b].astype(np.float32), "t": t[a:b], **state})
            state = {"state": s, "state_times": st}
            ys.append(y)
        _close(np.concatenate(ys), want, x)
        _close(state["state"], zf.astype(np.float32), x)
        np.testing.assert_array_equal(state["state_times"], zf_times)


def test_model_signature(exported):
    f, C, sess = exported["iir-truncated-2ch"]
    spec, _ = onnx_step_spec(f, C)
    ins, outs = sess.get_inputs(), sess.get_outputs()
    assert [i.name for i in ins] == list(INPUT_NAMES)
    assert [o.name for o in outs] == list(OUTPUT_NAMES)
    assert all(i.type == "tensor(float)" for i in ins + outs)
    assert ins[0].shape[1] == C and not isinstance(ins[0].shape[0], int)  # T is dynamic
    assert ins[1].shape == [spec.history + 1, C] == list(f.initial_state(C).shape)
    assert outs[1].shape == ins[1].shape
    state = onnx_initial_state(f, C)
    assert list(state) == list(INPUT_NAMES[1:]) and np.isnan(state["state"]).all()


def test_the_torch_twin_equals_the_numpy_kernel_in_float64():
    """StreamingStep is the lag kernel in torch: float64 in, float64 out, same numbers."""
    import torch

    x = _series(2, gaps=True)
    for kw in (dict(window=8, embedding=3, sigma=0.8, decay=0.9), dict(window=6, sigma=0.4)):
        f = ProjectionFilter(**kw)
        want, zf = f.filter(x, zi=f.initial_state(2))
        y, state = StreamingStep(f._spec())(torch.tensor(x), torch.tensor(f.initial_state(2)))
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(state.numpy(), zf, rtol=1e-12, atol=1e-12)


def test_the_torch_twin_fits_rows_with_too_few_keys_for_the_degree_as_the_numpy_kernel():
    """Leaving the sample out of a window of 4 gives a cubic 3 keys (fewer at the start and
    beside a gap): both fit the quadratic they determine (the ridge decided such rows, and
    two solvers rounded it apart)."""
    import torch

    x = _series(2, gaps=True)
    f = ProjectionFilter(window=4, embedding=2, sigma=0.8, degree=3, exclude_self=True)
    want, _ = f.filter(x, zi=f.initial_state(2))
    y, _ = StreamingStep(f._spec())(torch.tensor(x), torch.tensor(f.initial_state(2)))
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)


def test_the_torch_twin_fits_a_uniform_window_to_its_full_degree():
    """With sigma=inf no key is faint: a causal window's u^7, whose pivot is 1e-8 of its
    diagonal, is fitted, as the numpy kernel fits it (the twin fitted degree 6 or lower, 3% of
    the range off a causal Savitzky-Golay filter of degree 7)."""
    import torch
    from scipy.signal import savgol_coeffs

    W = 16
    x = np.cumsum(np.random.default_rng(2).normal(size=(80, 1)), axis=0)
    f = ProjectionFilter(window=W, embedding=1, sigma=np.inf, degree=7)
    y, _ = StreamingStep(f._spec())(torch.tensor(x), torch.tensor(f.initial_state(1)))
    h = savgol_coeffs(W, 7, pos=W - 1, use="dot")
    want = np.array([h @ x[t - W + 1 : t + 1, 0] for t in range(W - 1, len(x))])
    np.testing.assert_allclose(y.numpy()[W - 1 :, 0], want, rtol=0, atol=1e-4 * np.ptp(x))


def test_the_torch_twin_fits_no_power_its_keys_determine_only_to_rounding():
    """exclude_self and a narrow kernel on a random walk put some rows' slopes on keys of
    1e-11 of their heaviest one's weight: the numpy kernel does not fit such a power
    (PIVOT_FLOOR), nor does the twin (fitting it, the twin was 6.9 off the kernel)."""
    import torch

    x = np.cumsum(np.random.default_rng(5).normal(size=(100, 2)), axis=0)
    f = ProjectionFilter(window=50, embedding=3, sigma=0.1, degree=2, exclude_self=True)
    want, _ = f.filter(x, zi=f.initial_state(2))
    y, _ = StreamingStep(f._spec())(torch.tensor(x), torch.tensor(f.initial_state(2)))
    np.testing.assert_allclose(y.numpy(), want, rtol=0, atol=1e-10 * np.abs(x).max())


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(window=8, sigma=1.0, causal=False), "zero-phase"),
        (dict(window=1, sigma=1.0, tau=2.0), "drop tau"),
        (dict(window=None, decay=0.9, sigma=1.0, recurrent="features"), "recurrent"),
        (dict(window=[8, 16], sigma=1.0), "call fit"),
    ],
)
def test_filters_without_an_exportable_step_are_refused(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        to_onnx(ProjectionFilter(**kw), tmp_path / "f.onnx", n_channels=1)
    assert not (tmp_path / "f.onnx").exists()


def test_a_zero_phase_fit_is_refused_naming_why(tmp_path):
    x = _series(1, n=200, gaps=False)
    f = ProjectionFilter(causal=False, window=[4], embedding=[1], degree=[0]).fit(x)
    with pytest.raises(ValueError, match="only causal filters"):
        to_onnx(f, tmp_path / "f.onnx")


def test_argument_errors_name_the_argument(tmp_path):
    f = ProjectionFilter(window=4, sigma=1.0)
    with pytest.raises(ValueError, match="n_channels"):
        to_onnx(f, tmp_path / "f.onnx")  # unfitted: the channel count is unknown
    with pytest.raises(ValueError, match="path"):
        to_onnx(f, tmp_path / "missing" / "f.onnx", n_channels=1)
    with pytest.raises(TypeError, match="ProjectionFilter"):
        to_onnx(object(), tmp_path / "f.onnx", n_channels=1)
    fitted = ProjectionFilter(window=[4], embedding=[1], degree=[0]).fit(_series(2, gaps=False))
    with pytest.raises(ValueError, match="n_channels=3"):
        onnx_initial_state(fitted, 3)


def test_an_opset_below_the_exporters_or_no_int_and_a_folder_path_are_refused(tmp_path):
    # opset 13 / 17 wrote opset 18 anyway (an older runtime refuses it), with a traceback
    f = ProjectionFilter(window=4, sigma=1.0)
    with pytest.raises(ValueError, match="opset must be in 18..23"):
        to_onnx(f, tmp_path / "f.onnx", n_channels=1, opset=17)
    with pytest.raises(ValueError, match="opset must be in 18..23"):
        to_onnx(f, tmp_path / "f.onnx", n_channels=1, opset=99)  # wrote 18 too
    with pytest.raises(TypeError, match="opset must be an int, got str"):
        to_onnx(f, tmp_path / "f.onnx", n_channels=1, opset="18")
    with pytest.raises(ValueError, match="is a folder"):
        to_onnx(f, tmp_path, n_channels=1)
    import onnx

    path = to_onnx(f, tmp_path / "f20.onnx", n_channels=1, opset=20)
    assert {o.domain: o.version for o in onnx.load(str(path)).opset_import}[""] == 20


def test_a_failed_write_leaves_an_earlier_model_whole_and_no_partial_file(tmp_path, monkeypatch):
    import torch

    f = ProjectionFilter(window=4, sigma=1.0)
    path = to_onnx(f, tmp_path / "f.onnx", n_channels=1)
    before = path.read_bytes()

    def half_then_fail(self, destination, *args, **kwargs):
        with open(destination, "wb") as fh:  # a partial model, then the disk fills up
            fh.write(before[: len(before) // 2])
        raise OSError("No space left on device")

    monkeypatch.setattr(torch.onnx.ONNXProgram, "save", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        to_onnx(ProjectionFilter(window=8, sigma=1.0), path, n_channels=1)
    assert path.read_bytes() == before  # was half a model, which onnxruntime refuses
    assert [p.name for p in tmp_path.iterdir()] == ["f.onnx"]
    ort.InferenceSession(str(path))


@pytest.mark.parametrize("kw", [dict(window=8, sigma=0.5), dict(window=8, sigma=0.5, tau=0.05)])
def test_the_model_takes_float32_samples_under_a_float64_torch_default(tmp_path, kw):
    import torch

    # x, state, y and next_state were float64 (tensor(double)): the float32 state of
    # onnx_initial_state and float32 samples were refused by onnxruntime
    f = ProjectionFilter(**kw)
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        sess = ort.InferenceSession(str(to_onnx(f, tmp_path / "f.onnx", n_channels=2)))
    finally:
        torch.set_default_dtype(before)
    types = {a.name: a.type for a in [*sess.get_inputs(), *sess.get_outputs()]}
    for name in ("x", "state", "y", "next_state"):
        assert types[name] == "tensor(float)"
    x = _series(2, n=40, gaps=False)
    feed = {"x": x.astype(np.float32), **onnx_initial_state(f, 2)}
    if f.tau is not None:
        feed["t"] = np.arange(40) * 0.01
    y = sess.run(None, feed)[0]
    want = f.filter(x, zi=f.initial_state(2), **({"timestamps": feed["t"]} if f.tau else {}))[0]
    _close(y, want, x)


def test_an_export_of_a_filter_fitted_far_from_zero_warns_that_float32_rounds_its_samples(
    tmp_path,
):
    # epoch-like readings (1.7e9 plus a unit signal): the model's float32 samples round them
    # in steps of 128, and its output was off by 1.25 times the signal's amplitude, silently
    rng = np.random.default_rng(0)
    unit = np.stack([np.sin(np.arange(400) / 20) + 0.2 * rng.normal(size=400)] * 2, axis=1)
    # a pressure of spread 2.5 Pa at 101325 Pa (float32 steps: 0.4% of it) is fine
    x = unit * np.array([2.5, 1.0]) + np.array([101325.0, 1.7e9])
    f = ProjectionFilter(window=16, embedding=2).fit(x)
    with pytest.warns(UserWarning, match="channel 1 was fitted about 1.7e\\+09, .* steps of 128"):
        path = f.to_onnx(tmp_path / "epoch.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stuck = np.column_stack([x[:, 0], np.full(400, 3.3)])  # constant: float32 keeps it
        # no warning before the folder is refused (an export would take seconds)
        with pytest.raises(ValueError, match="is a folder"):
            ProjectionFilter(window=16, embedding=2).fit(stuck).to_onnx(tmp_path)
    # the remedy it names: the offset off before the model and back on after
    sess, offset = ort.InferenceSession(str(path)), np.array([101325.0, 1.7e9])
    want = f.filter(x, zi=f.initial_state())[0]
    state = onnx_initial_state(f)["state"]
    got = sess.run(None, {"x": (x - offset).astype(np.float32), "state": state})[0] + offset
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)  # float32 rounding of a unit signal
