"""ProjectionFilter's stream as a control loop drives it: step on pandas rows and other
per-sample inputs, against filter of the same data."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa.estimators.spacing import UnevenSamplingWarning
from tssdpa.filters import ProjectionFilter, projection_filter


def _imu_frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return pd.DataFrame({
        "gyro": np.sin(t / 10) + 0.1 * rng.normal(size=n),
        "enc": 1000 + 100 * np.cos(t / 20) + rng.normal(size=n),
    })  # fmt: skip


def test_a_pandas_row_with_other_labels_than_the_fit_is_refused_by_step():
    """df.iloc[i] is the natural sample of a loop over a DataFrame; its labels name the
    channels. filter refuses swapped or renamed columns (each channel keeps its fitted
    scale by position), and step took the same row by position, silently filtering each
    channel with the other's state and scale."""
    df = _imu_frame()
    f = ProjectionFilter(window=8, embedding=2, degree=0, sigma=[0.5, 1.0]).fit(df)
    state = f.initial_state()
    swapped = df[["enc", "gyro"]]
    with pytest.raises(ValueError, match=r"sample has the columns \['enc', 'gyro'\].*select"):
        f.step(swapped.iloc[0], state)
    with pytest.raises(ValueError, match=r"sample has the columns \['enc', 'gyro'\]"):
        f.step(swapped.iloc[[0]], state)  # a one-row DataFrame
    with pytest.raises(ValueError, match=r"\['gyro', 'x'\].*rename them"):
        f.step(df.rename(columns={"enc": "x"}).iloc[0], state)
    # the fitted order steps as filter does
    ys = []
    for i in range(50):
        y, state = f.step(df.iloc[i], state)
        ys.append(y)
    y_zi, _ = f.filter(df.iloc[:50], zi=f.initial_state())
    np.testing.assert_allclose(np.array(ys), y_zi.to_numpy(), rtol=1e-12, atol=1e-9)


def test_timestamps_without_tau_are_refused_not_ignored():
    """Nothing but tau reads the sample times: given to a filter without it, they were
    dropped, and a recording with a 2 s hole in time was filtered as if its samples were
    equally spaced (the same numbers as without the times), with no word."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    t = np.r_[np.arange(30) * 0.01, 2.0 + np.arange(30) * 0.01]  # a hole of 2 s
    f = ProjectionFilter(window=None, decay=0.9, sigma=1.0)
    with pytest.raises(ValueError, match="timestamps: tau is None"):
        f.filter(x, timestamps=t)
    with pytest.raises(ValueError, match="timestamps: tau is None"):
        f.filter(x, zi=f.initial_state(), timestamps=t)
    with pytest.raises(ValueError, match="timestamp: tau is None"):
        f.step(x[0], f.initial_state(), timestamp=t[0])
    with pytest.raises(ValueError, match="timestamps: tau is None"):
        ProjectionFilter(window=[8], embedding=[1], degree=[0]).fit(x, timestamps=t)
    with pytest.raises(ValueError, match="timestamps: tau is None"):
        projection_filter(x, window=8, sigma=1.0, timestamps=t)
    # a DatetimeIndex is the data's own: still taken, and read only where tau is set (the
    # hole said so without it: UnevenSamplingWarning, tests/estimators/test_time_units.py)
    s = pd.Series(x, index=pd.Timestamp("2026-01-01") + pd.to_timedelta(t, unit="s"))
    with pytest.warns(UnevenSamplingWarning, match="not equally spaced.*give tau="):
        np.testing.assert_array_equal(f.filter(s).to_numpy(), f.filter(x))
    timed = ProjectionFilter(window=None, tau=0.05, min_step=0.005, sigma=1.0)
    # (epoch seconds hold the times to 2e-7 s: equal to rounding)
    np.testing.assert_allclose(timed.filter(s).to_numpy(), timed.filter(x, timestamps=t), atol=1e-5)


def test_a_stream_with_an_uneven_index_warns_once_not_once_per_chunk():
    """Each chunk of a stream checked its own DatetimeIndex and warned with its own counts,
    so even Python's default filter showed all of them: a 1,000-chunk stream of a logger that
    drops samples printed 1,000 UnevenSamplingWarnings. The stream says it once."""
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.choice([1, 1, 1, 2, 3], size=600))
    x = pd.Series(np.sin(t / 20), index=pd.Timestamp("2026-01-01") + pd.to_timedelta(t, "s"))
    f = ProjectionFilter(window=8, embedding=1, degree=0, sigma=1.0)
    zi = f.initial_state(1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")  # every warning emitted, whatever the registry holds
        for k in range(20):
            _, zi = f.filter(x.iloc[30 * k : 30 * (k + 1)], zi=zi)
    uneven = [w for w in seen if issubclass(w.category, UnevenSamplingWarning)]
    assert len(uneven) == 1 and "not equally spaced" in str(uneven[0].message)
    with pytest.warns(UnevenSamplingWarning):  # a whole series filtered offline still warns
        f.filter(x)


def test_a_stream_after_a_refit_warns_of_its_uneven_index_again():
    """Once per stream, not once per filter object: the flag that kept the chunks quiet
    outlived a fit, so the stream of a refitted filter over another uneven recording said
    nothing (0 warnings; now 1)."""
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.choice([1, 1, 1, 2, 3], size=300))
    x = pd.Series(np.sin(t / 20), index=pd.Timestamp("2026-01-01") + pd.to_timedelta(t, "s"))
    f = ProjectionFilter(window=8, embedding=1, degree=0)
    counts = []
    for _ in range(2):
        f.fit(x.to_numpy())
        zi = f.initial_state(1)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for k in range(5):
                _, zi = f.filter(x.iloc[30 * k : 30 * (k + 1)], zi=zi)
        counts.append(sum(issubclass(w.category, UnevenSamplingWarning) for w in seen))
    assert counts == [1, 1]


def test_fit_warns_where_tau_is_far_below_the_sample_step():
    """ROS-style epoch nanoseconds read as seconds (as documented) with tau=0.05: every key
    weighs exp(-1e7 / 0.05) = 0 beside the sample itself, so the fitted filter returned x
    exactly (max |y - x| = 0.0), and fit said nothing."""
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(300) / 10) + 0.3 * rng.normal(size=300)
    steps = 10_000_000 + rng.integers(0, 2_000_000, 300)
    t_ns = (1_700_000_000_000_000_000 + np.cumsum(steps)).astype(np.int64)
    f = ProjectionFilter(window=[16], embedding=[1], degree=[0], tau=0.05)
    with pytest.warns(
        UserWarning, match=r"median step, 1.1\d*e\+07 s, is 2.2\d*e\+08 times tau"
    ) as w:
        f.fit(x, timestamps=t_ns)
    assert {r.filename for r in w if "times tau" in str(r.message)} == {__file__}  # the user's line
    assert np.array_equal(f.filter(x, timestamps=t_ns), x)  # what the warning says
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same times in seconds: no warning, and it filters
        f.fit(x, timestamps=t_ns / 1e9)
    assert np.max(np.abs(f.filter(x, timestamps=t_ns / 1e9) - x)) > 0.1


@pytest.mark.parametrize("channel_independent", ["auto", True])
def test_fit_of_channels_alone_warns_of_their_common_times_once(channel_independent):
    # each channel's own fit read the same times and warned again: three warnings for two
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 2))
    kw = dict(window=[8], embedding=[1], degree=[0], tau=0.05)
    f = ProjectionFilter(channel_independent=channel_independent, **kw)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        f.fit(x, timestamps=np.arange(300) * 1e7)
    told = [w for w in seen if "times tau" in str(w.message)]
    assert len(told) == 1  # (auto fits each channel alone too, whatever it keeps)


def test_step_takes_a_tensor_sample_as_filter_takes_a_tensor():
    """filter reads any tensor (detached, from its device); step read it with np.asarray,
    which raised torch's own RuntimeError for a tensor that requires grad (the output of a
    torch model upstream of the filter)."""
    torch = pytest.importorskip("torch")
    f = ProjectionFilter(window=4, embedding=2, sigma=0.5)
    x = torch.randn(20, 2, dtype=torch.float64, requires_grad=True)
    state, ys = f.initial_state(2), []
    for i in range(20):
        y, state = f.step(x[i], state)
        ys.append(y)
    y_zi, _ = f.filter(x, zi=f.initial_state(2))
    np.testing.assert_allclose(np.array(ys), y_zi.detach().numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="sample must be real"):
        f.step(torch.tensor([1j, 2.0]), f.initial_state(2))


def test_step_takes_a_bfloat16_tensor_sample_as_filter_takes_a_bfloat16_tensor():
    """filter reads a bfloat16 tensor (a mixed-precision model's output) as float64; step
    refused it ('sample must be a real numeric array ... got Tensor'): numpy has no bfloat16.
    y_t is a numpy value, as for any tensor sample (filter gives a bfloat16 tensor back)."""
    torch = pytest.importorskip("torch")
    x = torch.randn(30, 2, dtype=torch.float64).to(torch.bfloat16)
    f = ProjectionFilter(window=4, embedding=2, sigma=0.5).fit(x)
    state, ys = f.initial_state(), []
    for i in range(30):
        y, state = f.step(x[i], state)
        ys.append(y)
    assert isinstance(ys[-1], np.ndarray) and ys[-1].dtype == np.float64
    y_zi, _ = f.filter(x.double(), zi=f.initial_state())
    np.testing.assert_allclose(np.array(ys), y_zi.numpy(), rtol=1e-12, atol=1e-12)
    y_bf, _ = f.filter(x, zi=f.initial_state())  # the same, rounded to bfloat16
    assert y_bf.dtype == torch.bfloat16
    np.testing.assert_allclose(np.array(ys), y_bf.double().numpy(), rtol=2**-8, atol=1e-12)
    one = ProjectionFilter(window=4, sigma=0.5)  # a 0-d one, the scalar form
    y0, _ = one.step(x[0, 0], one.initial_state())
    assert np.ndim(y0) == 0 and y0 == one.step(float(x[0, 0]), one.initial_state())[0]


def test_step_and_filter_take_the_torch_twins_tensor_state_as_a_state():
    """A state moves between Python and the exported step both ways (docs/deploy.md), and the
    torch twin StreamingStep keeps it as a tensor: filter(zi=tensor) read a plain one, but
    raised torch's RuntimeError for one that requires grad and 'zi must be an array of shape'
    for bfloat16, and step refused any ('state must be what initial_state() ... got
    Tensor'). Both read it as float64, detached and on the CPU, as they read a tensor x."""
    torch = pytest.importorskip("torch")
    from tssdpa.filters.onnx_export import StreamingStep

    x, t = np.random.default_rng(0).normal(size=(40, 2)), np.arange(40) * 0.01
    f = ProjectionFilter(window=6, embedding=2, sigma=0.8)
    want, _ = f.filter(x, zi=f.initial_state(2))
    _, twin = StreamingStep(f._spec())(torch.tensor(x[:20]), torch.tensor(f.initial_state(2)))
    for state in (twin, twin.clone().requires_grad_(), twin.float()):
        y, _ = f.filter(x[20:], zi=state)
        np.testing.assert_allclose(y, want[20:], rtol=1e-6, atol=1e-6)
        ys = []
        for i in range(20, 40):
            y_t, state = f.step(x[i], state)
            ys.append(y_t)
        np.testing.assert_allclose(np.array(ys), want[20:], rtol=1e-6, atol=1e-6)
    same, _ = f.filter(x[20:], zi=twin.to(torch.bfloat16))  # coarser numbers, but taken
    assert same.shape == (20, 2)
    np.testing.assert_array_equal(f.step(x[20], twin)[0], f.step(x[20], twin.numpy())[0])
    assert twin.dtype == torch.float64 and not twin.requires_grad  # the state is untouched
    fitted = ProjectionFilter(window=6, tau=0.05).fit(x, timestamps=t)  # channel_scale_ too
    _, (hist, times) = fitted.filter(x[:20], zi=fitted.initial_state(), timestamps=t[:20])
    pair = (torch.tensor(hist, requires_grad=True), torch.tensor(times))  # (samples, times)
    y_t, _ = fitted.step(x[20], pair, timestamp=t[20])
    np.testing.assert_array_equal(y_t, fitted.step(x[20], (hist, times), timestamp=t[20])[0])


def test_a_step_without_its_timestamp_says_to_give_timestamp():
    """With tau, a step without its time was told 'pass timestamps= or a series with a
    DatetimeIndex' (filter's message): step takes neither (timestamps= is a TypeError)."""
    f = ProjectionFilter(window=8, tau=0.05, sigma=1.0)
    with pytest.raises(ValueError, match=r"timestamp: tau is set.*timestamp=t"):
        f.step(1.0, f.initial_state())
    y, _ = f.step(1.0, f.initial_state(), timestamp=0.0)
    assert y == 1.0


@pytest.mark.parametrize("big", [1e160, 1e300])
def test_step_refuses_a_sample_beyond_1e150_as_filter_does(big):
    """Once the history was full, step's latency path computed on a sample of 1e160 (its
    squares overflow float64) and returned it with only numpy's RuntimeWarning, where
    filter(x, zi=state) refuses it, as every estimator does (docs/filters.md §12)."""
    f = ProjectionFilter(window=4, embedding=2, sigma=0.5)
    state = f.initial_state()
    for v in [1.0, 2.0, 1.5, 1.2, 1.1, 0.9]:
        _, state = f.step(v, state)
    with pytest.raises(ValueError, match=r"x channel 0 reaches magnitude"):
        f.filter(np.array([big]), zi=state)
    with pytest.raises(ValueError, match=r"sample channel 0 reaches magnitude"):
        f.step(big, state)
    with pytest.raises(ValueError, match=r"sample channel 1 reaches magnitude"):
        f.step([1.0, -big], f.initial_state(2))


def test_a_random_feature_step_names_the_sample_of_the_wrong_length():
    """The exact filters' step said 'sample has 3 value(s) but the state filters 2
    channel(s)'; with recurrent='features' the check was skipped and the error came from
    filter, naming x ('x has 3 channel(s) ...') or zi ('zi[0] has shape (1, 2), expected
    (1, 3)'), neither of which step takes."""
    x = np.random.default_rng(0).normal(size=(200, 2))
    f = ProjectionFilter(window=None, decay=0.9, recurrent="features", n_features=16,
                         embedding=2).fit(x)  # fmt: skip
    state = f.initial_state()
    for i in range(5):
        _, state = f.step(x[i], state)
    for sample in (np.ones(3), 1.0):
        with pytest.raises(ValueError, match=r"sample has \d value\(s\) but the state filters 2"):
            f.step(sample, state)
    unfitted = ProjectionFilter(window=None, decay=0.9, recurrent="features", n_features=16,
                                embedding=2, sigma=1.0)  # fmt: skip
    with pytest.raises(ValueError, match=r"sample has 3 value\(s\) but the state filters 2"):
        unfitted.step(np.ones(3), unfitted.initial_state(n_channels=2))


def test_step_reads_pandas_na_as_a_missing_sample_as_filter_does():
    """Looping over a nullable column (Float64, Int64) gives pd.NA where a reading is
    missing: filter reads it as NaN, and step raised 'sample must be a real numeric array,
    Series, DataFrame or tensor, got NAType'."""
    f = ProjectionFilter(window=8, embedding=2, sigma=5.0, degree=0)
    s = pd.Series([100, 104, 98, 101, 99, 103, 97, 102, 100, 96], dtype="Int64")
    s[4] = pd.NA
    state, ys = f.initial_state(), []
    for v in s:
        y, state = f.step(v, state)
        ys.append(y)
    y_zi, _ = f.filter(s, zi=f.initial_state())
    np.testing.assert_allclose(np.array(ys), y_zi.to_numpy(dtype=float), rtol=1e-12)


def test_a_complex_state_is_refused_naming_zi_or_state_as_complex_x_is():
    """filter(zi=complex) kept the real part alone (numpy's ComplexWarning the only word), and
    step refused one as 'state must be what initial_state() ... got ndarray', naming no cause.
    Both now say the state must be real, naming the argument the caller gave."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).normal(size=20)
    f = ProjectionFilter(window=6, sigma=0.8)
    _, zf = f.filter(x[:10], zi=f.initial_state())
    bad = zf.astype(complex)
    bad[-1] += 1j
    for zi in (bad, bad.tolist(), torch.tensor(bad)):
        with pytest.raises(TypeError, match=r"^zi must be real"):
            f.filter(x[10:], zi=zi)
        with pytest.raises(TypeError, match=r"^state must be real"):
            f.step(x[10], zi)
    assert bad[-1].imag == 1.0  # the caller's state is untouched
    timed = ProjectionFilter(window=6, tau=0.05, sigma=0.8)
    t = np.arange(20) * 0.01
    hist, times = timed.filter(x[:10], zi=timed.initial_state(), timestamps=t[:10])[1]
    with pytest.raises(TypeError, match=r"^zi\[1\] must be real"):
        timed.filter(x[10:], zi=(hist, times + 0j), timestamps=t[10:])
    with pytest.raises(TypeError, match=r"^state\[1\] must be real"):
        timed.step(x[10], (hist, times + 0j), timestamp=t[10])


def test_a_tau_filters_state_given_to_a_filter_without_tau_says_whose_state_it_is():
    """A (samples, times) pair from a tau filter passed as zi to one without tau failed in
    numpy with "inhomogeneous shape", naming neither zi nor the cause."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=80)
    t = np.arange(80) * 0.01
    timed = ProjectionFilter(window=8, tau=0.05, sigma=1.0)
    _, zf = timed.filter(x[:40], zi=timed.initial_state(), timestamps=t[:40])
    plain = ProjectionFilter(window=8, sigma=1.0)
    with pytest.raises(ValueError, match=r"zi is a tuple of 2 arrays.*initial_state\(\)"):
        plain.filter(x[40:], zi=zf)
    with pytest.raises(ValueError, match=r"zi is a list of 2 arrays"):  # as a list too
        plain.filter(x[40:], zi=list(zf))
    with pytest.raises(ValueError, match=r"zi must be a tuple of 2 arrays"):  # and back
        timed.filter(x[40:], zi=plain.initial_state(), timestamps=t[40:])


def test_the_usual_steps_glance_lets_no_bad_state_or_sample_through():
    """step's usual call (a float64 array sample, the state the last step returned) skips
    the full checks at a glance (arrays.plain_step_input): a state changed in place to hold
    inf, a sample of inf or beyond 1e150, a NaN sample or state entry still get what the
    full path gives (without a warning), and the steps equal filter."""
    x = np.random.default_rng(4).normal(size=(60, 2))
    f = ProjectionFilter(window=8, sigma=1.0)
    _, state = f.filter(x[:20], zi=f.initial_state(2))
    _, new = f.step(x[20], state)
    held = new.copy()
    new[3, 1] = np.inf  # the array step returned, changed by the caller
    with pytest.raises(ValueError, match="state contains inf"):
        f.step(x[21], new)
    beyond = "channel 1 reaches magnitude 2e\\+150"
    for bad, why in [(np.array([np.inf, 0.0]), "sample contains inf"), ([0.0, -2e150], beyond)]:
        with pytest.raises(ValueError, match=why):
            f.step(np.asarray(bad), held)
    with pytest.raises(ValueError, match="sample has 3 value"):
        f.step(np.zeros(3), held)
    ys, state = [], held
    for i, v in enumerate(x[21:]):
        v = np.array([np.nan, v[1]]) if i == 5 else v
        state = state.copy()
        if i == 10:
            state[2, 0] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y, state = f.step(v, state)
        ys.append(y)
    z = x[21:].copy()
    z[5, 0] = np.nan
    assert np.all(np.isfinite(ys[:10]))
    y_ref, _ = f.filter(z[:10], zi=held)
    np.testing.assert_array_equal(np.array(ys[:10]), y_ref)


def test_step_refuses_a_sample_of_another_channel_count_than_the_fit_as_filter_does():
    """A state sized to the sample (initial_state(2)) let a filter fitted on 3 channels step
    2-channel samples, which filter refuses."""
    rng = np.random.default_rng(0)
    f = ProjectionFilter(window=8, sigma=1.0, channel_scale=None).fit(rng.normal(size=(200, 3)))
    state = np.full((f.initial_state().shape[0], 2), np.nan)
    with pytest.raises(ValueError, match="sample has 2 value.s. but the ProjectionFilter was "
                                         "fitted on 3 channel"):  # fmt: skip
        f.step(np.array([1.0, 2.0]), state)


def test_a_period_index_under_tau_is_refused_saying_how_to_read_it_as_times():
    idx = pd.period_range("2026-01-01", periods=100, freq="s")
    x = pd.Series(np.sin(np.arange(100) / 10), index=idx)
    with pytest.raises(ValueError, match=r"PeriodIndex: x\.to_timestamp\(\)"):
        ProjectionFilter(tau=5.0, window=16, sigma=1.0).fit(x)
    f = ProjectionFilter(tau=5.0, window=16, sigma=1.0).fit(x.to_timestamp())
    assert f.filter(x.to_timestamp()).index.equals(idx.to_timestamp())


def test_filtering_with_an_unfitted_random_feature_filter_leaves_it_unfitted():
    """An unfitted recurrent='features' filter pinned n_channels_ on its first filter call:
    it then passed scikit-learn's check_is_fitted, and a series of another channel count was
    refused as 'fitted on 3' although nothing was ever fitted (the exact filters take any
    count). The features are drawn per channel count, so each call draws its own."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    x = np.random.default_rng(0).normal(size=(200, 3))
    f = ProjectionFilter(window=None, decay=0.9, sigma=1.0, recurrent="features", n_features=16)
    y3 = f.filter(x)
    with pytest.raises(NotFittedError):
        check_is_fitted(f)
    y1 = f.filter(x[:, :1])  # another channel count: drawn for it, as a fresh filter would
    fresh = ProjectionFilter(window=None, decay=0.9, sigma=1.0, recurrent="features",
                             n_features=16)  # fmt: skip
    np.testing.assert_array_equal(y1, fresh.filter(x[:, :1]))
    np.testing.assert_array_equal(f.filter(x), y3)
    # streaming still works from a state sized for the chunk
    y, _ = f.filter(x, zi=f.initial_state(n_channels=3))
    np.testing.assert_allclose(y, y3, rtol=1e-12, atol=1e-12)


def test_step_takes_a_one_element_timestamp_array_and_names_a_longer_one():
    """The ONNX model takes its times as t[i:i+1]; given so to step, timestamp=t[i:i+1] failed
    in numpy ('only 0-dimensional arrays can be converted to Python scalars'), naming
    nothing. One time in an array of one is that time; more than one is refused by name."""
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.008, 0.012, 50))
    x = np.sin(t * 5) + 0.1 * rng.normal(size=50)
    f = ProjectionFilter(window=8, tau=0.05, sigma=0.5)
    state, ys = f.initial_state(), []
    for i in range(50):
        y, state = f.step(x[i], state, timestamp=t[i : i + 1])
        ys.append(y)
    y_zi, _ = f.filter(x, zi=f.initial_state(), timestamps=t)
    np.testing.assert_allclose(np.array(ys), y_zi, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"timestamp must be one time.*2"):
        f.step(x[0], f.initial_state(), timestamp=t[:2])


@pytest.mark.parametrize(
    "per_second, unit", [(1e3, "milliseconds"), (1e6, "microseconds"), (1e9, "nanoseconds")]
)
def test_times_far_apart_for_tau_are_told_their_likely_unit_by_their_size(per_second, unit):
    """The warning said "nanosecond times: divide by 1e9" whatever the times: epoch
    milliseconds divided so are a million times too close, and every sample weighs alike."""
    x = np.sin(np.arange(200) / 10)
    epoch = (1_700_000_000 + 0.1 * np.arange(200)) * per_second
    f = ProjectionFilter(window=[16], embedding=[1], degree=[0], tau=0.3)
    with pytest.warns(UserWarning, match=rf"these look like {unit} since the epoch: divide "
                      rf"them by {per_second:.0e}".replace("+0", "")):  # fmt: skip
        f.fit(x, timestamps=epoch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the advice followed: seconds, and no warning
        f.fit(x, timestamps=epoch / per_second)


@pytest.mark.parametrize("given", ["index", "datetime64", "datetimes", "TimedeltaIndex"])
def test_dated_times_far_apart_for_tau_are_told_that_tau_is_likely_in_another_unit(given):
    # a DatetimeIndex's times are exact in seconds: they were told to be milliseconds or
    # nanoseconds ("divide them by 1e3 or 1e9"), where tau=0.05 (50 ms for 50 s) was wrong
    index = pd.date_range("2026-01-01", periods=200, freq="10s")
    x = np.sin(np.arange(200) / 7.0)
    series = pd.Series(x, index=index)
    times = {"index": None, "datetime64": index.to_numpy(),
             "datetimes": list(index.to_pydatetime()),
             "TimedeltaIndex": index - index[0]}[given]  # fmt: skip
    f = ProjectionFilter(window=[8], embedding=[1], degree=[0], tau=0.05)
    with pytest.warns(UserWarning, match="returns x unchanged") as told:
        f.fit(series) if times is None else f.fit(x, timestamps=times)
    said = str(told[0].message)
    assert said.endswith("(the times are dates or durations, exact in seconds: tau is likely "
                         "in another unit)") and "divide" not in said  # fmt: skip


@pytest.mark.parametrize(
    "params",
    [
        dict(window=8, embedding=2, degree=0, sigma=0.5),
        dict(window=8, embedding=2, degree=0, sigma=0.5, tau=0.05),
        dict(window=4, degree=0, sigma=0.5, channel_independent=True),
        dict(window=None, decay=0.9, sigma=0.5, recurrent="features", n_features=16),
    ],
    ids=["fir", "tau", "by-channel", "features"],
)
def test_an_empty_chunks_zf_is_a_copy_of_zi_not_the_callers_own_arrays(params):
    """zf = zi in value only: the state came back as the very arrays the caller passed, so
    changing zf in place (resetting its held output) changed the zi kept beside it, where
    projection_filter, the other filters and every non-empty chunk return new arrays."""
    x = _imu_frame(60).to_numpy()
    f = ProjectionFilter(**params).fit(
        x, **({"timestamps": np.arange(60.0)} if "tau" in params else {})
    )
    times = {"timestamps": np.arange(30.0)} if "tau" in params else {}
    _, zi = f.filter(x[:30], zi=f.initial_state(), **times)
    kept = [a.copy() for a in zi] if isinstance(zi, tuple) else zi.copy()
    _, zf = f.filter(x[:0], zi=zi, **({"timestamps": np.arange(0.0)} if times else {}))
    for new, own, was in zip(*((zf, zi, kept) if isinstance(zi, tuple) else ([zf], [zi], [kept]))):
        assert np.array_equal(new, own, equal_nan=True)
        assert not np.shares_memory(np.asarray(new), own)
        np.asarray(new)[...] = 7.0
        assert np.array_equal(own, was, equal_nan=True)


@pytest.mark.parametrize("recurrent", [None, "features"])
def test_a_clock_reset_is_refused_naming_the_sample_and_both_times(recurrent):
    """A robot's clock reset (a reboot, a rollover) is a step backwards: the errors said
    only that there was one, somewhere in the chunk or before it."""
    x = _imu_frame(80).to_numpy()
    t = np.arange(80) * 0.01
    t[50:] -= t[50]  # the clock restarts at sample 50
    params = dict(window=8, degree=0, sigma=0.5, tau=0.05, recurrent=recurrent, n_features=16)
    f = ProjectionFilter(**params).fit(x[:50], timestamps=t[:50])
    for call in (lambda: f.filter(x, timestamps=t), lambda: f.fit(x, timestamps=t)):
        with pytest.raises(ValueError, match=r"step backwards at sample 50, from 0\.49 s to 0 s"):
            call()
    _, z = f.filter(x[:50], zi=f.initial_state(), timestamps=t[:50])
    reset = r"last timestamp: 0 s is before its 0\.49 s.*clock was reset.*initial_state\(\)"
    with pytest.raises(ValueError, match=reset):
        f.filter(x[50:], zi=z, timestamps=t[50:])
    with pytest.raises(ValueError, match=reset):
        f.step(x[50], z, timestamp=t[50])
    # and it is what the message says: a new stream from the empty state goes on
    f.filter(x[50:], zi=f.initial_state(), timestamps=t[50:])


def test_a_step_back_between_sub_microsecond_times_names_two_different_times():
    # six decimals wrote 3e-7 and 2e-7 both as "0 s": "from 0 s to 0 s"
    from tssdpa.signal.lagfilter import check_sample_times

    with pytest.raises(ValueError, match=r"from 0\.0000003 s to 0\.0000002 s"):
        check_sample_times(np.array([0.0, 3e-7, 2e-7, 4e-7]), 4)


def test_a_repeated_time_refused_by_min_step_is_told_to_take_a_window_not_a_smaller_min_step():
    """A 400 Hz logger repeats a timestamp now and then (the shared walking IMU: 18 in its
    first 1,500 rows). An infinite-memory filter's min_step must be > 0, so "give a smaller
    min_step" could not be followed; a window can, and takes the repeats."""
    t = np.arange(200) * 0.0025
    t[[10, 70]] = t[[9, 69]]
    x = np.sin(t * 20)
    f = ProjectionFilter(window=None, tau=0.05, min_step=0.001, sigma=0.3, degree=0)
    advice = r"2 of them repeated times, which no min_step > 0 admits: give a window"
    with pytest.raises(ValueError, match=r"the first 0 s from sample 9 to 10 \(" + advice):
        f.filter(x, timestamps=t)
    _, state = f.filter(x[:10], zi=f.initial_state(1), timestamps=t[:10])
    with pytest.raises(ValueError, match=r"0 s from the state's last timestamp .*give a window"):
        f.step(x[10], state, timestamp=t[10])
    jittered = t.copy()
    jittered[[10, 70]] += 0.0004  # steps of 0.0004 s: a smaller min_step does admit them
    with pytest.raises(ValueError, match=r"\(jittered times: give a smaller min_step"):
        f.filter(x, timestamps=jittered)
    f.set_params(window=64, min_step=None).filter(x, timestamps=t)  # what it says works
