"""ProjectionFilter and projection_filter: streaming, fitting, data handling, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tssdpa.filters import ProjectionFilter, projection_filter
from tssdpa.signal.lags import iir_truncation_lag
from tssdpa.signal.reference import attend_lags_reference

RNG = np.random.default_rng(1234)


def noisy_square(n=3000, noise=0.3, seed=0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 20, n)
    clean = np.sign(np.sin(t)) + 0.3 * np.sin(5 * t)
    return clean, clean + noise * rng.normal(size=n)


def random_splits(n, cuts):
    cuts = sorted({c for c in cuts if 0 < c < n})
    return [0, *cuts, n]


# ---------------------------------------------------------------------------- functional
def test_functional_matches_explicit_definition():
    x = RNG.normal(size=40)
    W, sigma = 5, 0.7
    y = projection_filter(x, window=W, sigma=sigma)
    for t in range(40):
        js = np.arange(max(0, t - W + 1), t + 1)
        w = np.exp(-((x[t] - x[js]) ** 2) / (2 * sigma**2))
        assert y[t] == pytest.approx(np.sum(w * x[js]) / w.sum(), abs=1e-12)


@settings(max_examples=12, deadline=None)
@given(cuts=st.lists(st.integers(1, 199), max_size=6), iir=st.booleans(), m=st.integers(1, 3))
def test_functional_chunking_invariance(cuts, iir, m):
    x = np.random.default_rng(0).normal(size=(3, 200))  # 3 independent series, time last
    x[1, 60:110] = np.nan  # a gap longer than the window: the held output crosses chunks
    kw = dict(window=None if iir else 12, decay=0.8 if iir else None, sigma=0.6, embedding=m)
    y_once = projection_filter(x, **kw)
    H = (iir_truncation_lag(0.8, 1e-6) if iir else 12) - 1 + m - 1
    z = np.full((3, H + 1), np.nan)  # H samples + the last defined output
    parts = []
    b = random_splits(200, cuts)
    for a, c in zip(b[:-1], b[1:]):
        y, z = projection_filter(x[:, a:c], zi=z, **kw)
        parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts, axis=1), y_once, rtol=0, atol=1e-12)


def test_functional_axis_and_channel_axis():
    x = RNG.normal(size=(50, 3))
    joint = projection_filter(x, window=8, sigma=1.0, axis=0, channel_axis=1)
    joint_t = projection_filter(x.T, window=8, sigma=1.0, axis=1, channel_axis=0)
    np.testing.assert_allclose(joint, joint_t.T)
    per_series = projection_filter(x, window=8, sigma=1.0, axis=0)
    np.testing.assert_allclose(per_series[:, 1], projection_filter(x[:, 1], window=8, sigma=1.0))
    cls = ProjectionFilter(window=8, sigma=1.0).filter(x)
    np.testing.assert_allclose(cls, joint)


def test_functional_timestamps_state_pair():
    x = RNG.normal(size=60)
    t = np.cumsum(RNG.uniform(0.5, 1.5, 60))
    y = projection_filter(x, window=10, sigma=1.0, tau=2.0, timestamps=t)
    z = (np.full(10, np.nan), np.full(9, np.nan))
    y1, z = projection_filter(x[:25], window=10, sigma=1.0, tau=2.0, timestamps=t[:25], zi=z)
    y2, _ = projection_filter(x[25:], window=10, sigma=1.0, tau=2.0, timestamps=t[25:], zi=z)
    np.testing.assert_allclose(np.concatenate([y1, y2]), y, atol=1e-12)
    with pytest.warns(DeprecationWarning, match="tau"):  # the spelling before 0.2
        old = projection_filter(x, window=10, sigma=1.0, decay=2.0, timestamps=t)
    np.testing.assert_array_equal(old, y)
    with pytest.raises(ValueError, match="timestamps"):
        projection_filter(x, window=10, sigma=1.0, tau=2.0)


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_zero_phase_is_time_symmetric(m):
    x = RNG.normal(size=(120, 2))
    x[30:60, 1] = np.nan  # a gap longer than 2W - 1: filled symmetrically too
    f = dict(window=9, sigma=0.9, decay=0.9, causal=False, axis=0, channel_axis=1, embedding=m)
    fwd = projection_filter(x, **f)
    bwd = projection_filter(x[::-1], **f)[::-1]
    assert np.isfinite(fwd).all()
    np.testing.assert_allclose(fwd, bwd, atol=1e-12)
    cls = ProjectionFilter(window=9, sigma=0.9, decay=0.9, causal=False, embedding=m)
    np.testing.assert_allclose(cls.filter(x[::-1])[::-1], cls.filter(x), atol=1e-12)


def test_zero_phase_even_embedding_is_the_average_of_both_offsets():
    """Even m: squared distance = mean of those of the embeddings ending at t+m/2, t+m/2-1."""
    x = RNG.normal(size=40)
    W, sigma, m = 5, 0.8, 2
    y = projection_filter(x, window=W, sigma=sigma, embedding=m, causal=False)
    pad = np.r_[np.full(3, np.nan), x, np.full(3, np.nan)]

    def emb(t, o):  # [x_(t+o), ..., x_(t+o-m+1)] in padded coordinates
        return pad[[t + 3 + o - i for i in range(m)]]

    for t in range(6, 34):  # no key near the ends (no missing coordinates)
        num = den = 0.0
        for j in range(max(0, t - W + 1), min(40, t + W)):
            d = np.mean([np.sum((emb(t, o) - emb(j, o)) ** 2) for o in (1, 0)])
            w = np.exp(-d / (2 * sigma**2))
            num, den = num + w * x[j], den + w
        assert y[t] == pytest.approx(num / den, abs=1e-12)


# ---------------------------------------------------------------------------- class: streaming
@settings(max_examples=12, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 299), max_size=5),
    config=st.sampled_from(["fir", "iir", "fir_m2_excl", "tau", "poly2", "poly1_uniform"]),
)
@example(cuts=[157], config="poly2")  # once 4.6e-12 off: rounding of the local solve
def test_filter_chunking_invariance(cuts, config):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(300, 2))
    x[40:44, 0] = np.nan
    x[150:200] = np.nan  # longer than any window here: rows repeat the held output
    times = np.cumsum(rng.uniform(0.5, 1.5, 300))
    kw = {
        "fir": dict(window=16, sigma=0.8),
        "iir": dict(window=None, decay=0.9, sigma=0.8),
        "fir_m2_excl": dict(window=16, embedding=2, exclude_self=True, sigma=0.8),
        "tau": dict(window=20, tau=3.0, sigma=0.8),
        "poly2": dict(window=16, degree=2, sigma=0.8),
        "poly1_uniform": dict(window=12, degree=1, sigma=np.inf),
    }[config]
    f = ProjectionFilter(**kw)
    ts = times if config == "tau" else None
    y_once = f.filter(x, timestamps=ts)
    assert np.isfinite(y_once).all()
    z = f.initial_state(2)
    parts = []
    b = random_splits(300, cuts)
    for a, c in zip(b[:-1], b[1:]):
        y, z = f.filter(x[a:c], zi=z, timestamps=None if ts is None else ts[a:c])
        parts.append(y)
    # A local polynomial (degree >= 1) solves a small least-squares system per row; a chunk
    # batches other rows together, so BLAS rounds differently, by up to ~1e-11 here.
    atol = 1e-10 if config.startswith("poly") else 1e-12
    np.testing.assert_allclose(np.concatenate(parts), y_once, rtol=0, atol=atol)


@pytest.mark.parametrize("cut", [1, 3, 7, 20])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_local_polynomial_longer_than_the_series_is_least_squares_whatever_the_chunking(
    cut, dtype
):
    """A window of 1000 on 30 samples: each row's keys fill a small part of it; the fit is
    still the exact least squares of the row's past (np.polyfit), and a stream from the empty
    state gives it too (the one-shot filter caps the window at the series' length, the stream
    cannot: their offsets' units differed, and the ridge bent the stream's early rows)."""
    x = np.random.default_rng(3).normal(size=30)
    if dtype == "float32":
        x = x.astype(np.float32).astype(np.float64)
    f = ProjectionFilter(embedding=1, degree=2, sigma=np.inf, window=1000, dtype=dtype)
    y_once = np.asarray(f.filter(x))
    exact = [np.polyval(np.polyfit(np.arange(t + 1.0), x[: t + 1], 2), t) for t in range(2, 30)]
    tol = 1e-8 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(y_once[2:], exact, rtol=0, atol=tol)
    y1, z = f.filter(x[:cut], zi=f.initial_state())
    y2, _ = f.filter(x[cut:], zi=z)
    np.testing.assert_allclose(np.concatenate([y1, y2]), y_once, rtol=0, atol=tol / 100)
    # leaving each sample out, a row with one key fits that key, in a stream as at once
    g = ProjectionFilter(embedding=1, degree=2, sigma=np.inf, window=1000, exclude_self=True)
    once = np.asarray(g.filter(x))
    y1, z = g.filter(x[:cut], zi=g.initial_state())
    np.testing.assert_allclose(np.concatenate([y1, g.filter(x[cut:], zi=z)[0]]), once, atol=1e-9)
    assert once[1] == x[0]  # it was 2.04047517 against 2.04091912 (rounding, amplified)


@pytest.mark.parametrize(
    "kw",
    [
        dict(window=16, sigma=0.5),
        dict(window=64, sigma=0.5, decay=0.97),
        dict(window=8, sigma=0.5, embedding=3, exclude_self=True),
        dict(window=None, decay=0.9, sigma=0.5),
        dict(window=12, tau=2.0, sigma=0.5),
        dict(window=1, sigma=0.5, exclude_self=True),
        dict(window=6, tau=2.0, sigma=0.5, embedding=2, exclude_self=True),
        dict(window=10, sigma=0.5, degree=2),
    ],
)
def test_step_equals_one_shot(kw):
    x = np.random.default_rng(3).normal(size=(150, 3))
    x[20, 1] = np.nan
    times = np.arange(150) * 0.7
    f = ProjectionFilter(**kw)
    use_t = "tau" in kw
    y_once = f.filter(x, timestamps=times if use_t else None)
    state = f.initial_state(3)
    state_copy = [np.copy(s) for s in state] if isinstance(state, tuple) else state.copy()
    ys = []
    for i in range(150):
        y, state = f.step(x[i], state, timestamp=times[i] if use_t else None)
        ys.append(y)
    np.testing.assert_allclose(np.array(ys), y_once, rtol=0, atol=1e-12)
    init = f.initial_state(3)
    for a, b in zip(
        init if isinstance(init, tuple) else [init],
        state_copy if isinstance(state_copy, list) else [state_copy],
    ):
        np.testing.assert_array_equal(a, b)  # the first state object was not mutated


@pytest.mark.parametrize("degree", [1, 2, 4, 8])
@pytest.mark.parametrize("sigma", [1.0, 0.1])
def test_a_local_polynomial_without_the_sample_streams_bitwise_as_filtered_at_once(degree, sigma):
    """Steps and chunks of any size give the one-shot filter's bits: the moments of a row are
    summed in one order however many rows are computed with it. With BLAS's matrix product a
    one-row step (gemv) rounded unlike a block (gemm), and without the sample itself, after a
    constant stretch, the fit amplified that: 4e-12 of the range at degree 1, 3e-4 at 8."""
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(400) / 7.0) + 0.1 * rng.normal(size=400)
    x[150:220] = 0.3
    x = x[:, None]
    f = ProjectionFilter(window=16, embedding=2, degree=degree, sigma=sigma, exclude_self=True)
    once, _ = f.filter(x, zi=f.initial_state(1))
    np.testing.assert_array_equal(f.filter(x), once)  # the one-shot path, without a state
    z, steps = f.initial_state(1), []
    for sample in x:
        y, z = f.step(sample, z)
        steps.append(y)
    np.testing.assert_array_equal(np.reshape(steps, once.shape), once)
    z, chunks = f.initial_state(1), []
    for a, b in [(0, 7), (7, 8), (8, 160), (160, 400)]:
        y, z = f.filter(x[a:b], zi=z)
        chunks.append(y)
    np.testing.assert_array_equal(np.concatenate(chunks), once)


@pytest.mark.parametrize(("n_channels", "embedding"), [(3, 3), (8, 1)])
def test_a_step_of_eight_or_more_coordinates_gives_the_one_shot_bits(n_channels, embedding):
    """A step's distances add the pattern's coordinates in the block's order: with 8 or more
    (3 channels of embedding 3, 8 channels) they were summed along the transposed keys in
    memory order, which numpy unrolls, and the degree 8 fit without the sample amplified the
    ulps (4e-7 and 5e-7 off the one-shot filter here, 3.3e-5 on a noisier series)."""
    rng = np.random.default_rng(0)
    t = np.arange(400)[:, None]
    x = np.sin(t / (5.0 + np.arange(n_channels))) + 0.1 * rng.normal(size=(400, n_channels))
    x[150:220] = 0.3
    f = ProjectionFilter(window=16, embedding=embedding, degree=8, sigma=0.3, exclude_self=True,
                         channel_independent=False)  # fmt: skip
    once, _ = f.filter(x, zi=f.initial_state(n_channels))
    z, steps = f.initial_state(n_channels), []
    for sample in x:
        y, z = f.step(sample, z)
        steps.append(y)
    np.testing.assert_array_equal(np.reshape(steps, once.shape), once)


@pytest.mark.parametrize("degree", [2, 3])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_polynomial_whose_keys_cannot_determine_it_is_streamed_as_filtered_at_once(degree, dtype):
    """Without the sample itself a window of degree + 1 holds ``degree`` keys (fewer at the
    start and beside a gap): each row fits the degree its keys determine, the filter of
    degree - 1 exactly, in a stream of steps or chunks as at once (the ridge decided such
    rows, and step and filter differed by 1.4e-4 at degree 3)."""
    x = np.cumsum(np.random.default_rng(5).normal(size=(60, 2)), axis=0) * 0.3
    x[20:23, 0] = np.nan
    x[40:44] = np.nan
    kw = dict(window=degree + 1, sigma=0.8, embedding=2, exclude_self=True, dtype=dtype)
    f = ProjectionFilter(degree=degree, **kw)
    want, _ = f.filter(x, zi=f.initial_state(2))
    lower = ProjectionFilter(degree=degree - 1, **kw)
    np.testing.assert_array_equal(want, lower.filter(x, zi=lower.initial_state(2))[0])
    z, ys = f.initial_state(2), []
    for sample in x:
        y, z = f.step(sample, z)
        ys.append(y)
    np.testing.assert_allclose(np.array(ys), want, rtol=0, atol=1e-12)
    z, parts = f.initial_state(2), []
    for a, b in [(0, 7), (7, 21), (21, 41), (41, 60)]:
        y, z = f.filter(x[a:b], zi=z)
        parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [1, 3, 5, 8])
@pytest.mark.parametrize("degree", [1, 2])
def test_a_polynomial_resting_on_faint_keys_is_streamed_as_filtered_at_once(seed, degree):
    """exclude_self and a narrow kernel on a random walk: a row's slope may rest on keys of
    1e-11 of its heaviest one's weight, whose share of the moments is below rounding; the
    normal equations amplified a rounding that differs by block (BLAS) up to 1e11, and a
    stream of steps and the filter were up to 1.4e-5 of the range apart. Such a power is not
    fitted (PIVOT_FLOOR): the row fits the degree its keys determine, in any block."""
    x = np.cumsum(np.random.default_rng(seed).normal(size=(100, 2)), axis=0)
    f = ProjectionFilter(window=50, embedding=3, sigma=0.1, degree=degree, exclude_self=True)
    want, _ = f.filter(x, zi=f.initial_state(2))
    tol = 1e-10 * np.abs(x).max()
    z, ys = f.initial_state(2), []
    for sample in x:
        y, z = f.step(sample, z)
        ys.append(y)
    np.testing.assert_allclose(np.array(ys), want, rtol=0, atol=tol)
    z, parts = f.initial_state(2), []
    for a, b in [(0, 2), (2, 9), (9, 60), (60, 61), (61, 100)]:
        y, z = f.filter(x[a:b], zi=z)
        parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts), want, rtol=0, atol=tol)


@pytest.mark.parametrize("name", ["sigma", "window"])
def test_step_after_new_candidate_arrays_are_set_on_a_fitted_filter_steps_as_before(name):
    """A step cached its settings with the parameters as given: after set_params with a new
    numpy array of candidates (the fitted settings still in force), the next step raised
    numpy's "truth value of an array is ambiguous" comparing the two arrays."""
    _, noisy = noisy_square(400)
    candidates = {"sigma": np.geomspace(0.05, 1.0, 5), "window": np.array([8, 16])}
    f = ProjectionFilter(embedding=1, degree=0, **{name: candidates[name]}).fit(noisy)
    want, _ = f.filter(noisy[:3], zi=f.initial_state())
    y0, z = f.step(noisy[0], f.initial_state())
    f.set_params(**{name: candidates[name].copy()})
    y1, z = f.step(noisy[1], z)
    y2, _ = f.step(noisy[2], z)
    np.testing.assert_array_equal([y0, y1, y2], want)


def test_step_scalar_sample():
    f = ProjectionFilter(window=4, sigma=1.0)
    s = f.initial_state(1)
    y, s = f.step(1.5, s)
    assert np.ndim(y) == 0 and y == 1.5


def test_iir_truncation_error_bound():
    """Truncated IIR output vs a far longer filter: error <= tol * (max x - min x)."""
    rng = np.random.default_rng(5)
    x = np.cumsum(rng.normal(size=3000)) * 0.05 + rng.normal(size=3000) * 0.2
    for decay, tol in [(0.9, 1e-3), (0.98, 1e-2), (0.98, 1e-5)]:
        y_trunc = projection_filter(x, window=None, decay=decay, sigma=0.2, tol=tol)
        y_long = projection_filter(
            x, window=iir_truncation_lag(decay, 1e-15), decay=decay, sigma=0.2
        )
        err = np.max(np.abs(y_trunc - y_long))
        assert err <= tol * (x.max() - x.min())


# ---------------------------------------------------------------------------- features
@pytest.mark.parametrize("feature_map", ["centres", "performer"])
def test_random_features_error_falls_with_feature_count(feature_map):
    clean, noisy = noisy_square(1500, seed=2)
    exact = ProjectionFilter(window=None, decay=0.95, sigma=0.6).filter(noisy)
    errs = []
    for M in (16, 128, 1024):
        e = []
        for seed in range(4):
            # fit with a one-candidate sigma list: keeps sigma, learns the data's centre/spread
            f = ProjectionFilter(
                window=None,
                decay=0.95,
                sigma=[0.6],
                recurrent="features",
                n_features=M,
                random_state=seed,
                feature_map=feature_map,
            )
            f.fit(noisy)
            assert f.sigma_ == 0.6
            e.append(np.mean((f.filter(noisy) - exact) ** 2))
        errs.append(np.mean(e))
    assert errs[0] > errs[1] > errs[2]
    if feature_map == "centres":
        assert np.sqrt(errs[2]) < 0.05 * np.ptp(noisy)  # usable accuracy at M = 1024


@settings(max_examples=6, deadline=None)
@given(cuts=st.lists(st.integers(1, 399), max_size=4))
def test_random_features_chunking_invariance(cuts):
    x = np.random.default_rng(1).normal(size=(400, 2))
    f = ProjectionFilter(
        window=None, decay=0.9, sigma=1.0, embedding=2, recurrent="features", n_features=32
    )
    y_once, _ = f.filter(x, zi=f.initial_state(2))
    z = f.initial_state(2)
    parts = []
    b = random_splits(400, cuts)
    for a, c in zip(b[:-1], b[1:]):
        y, z = f.filter(x[a:c], zi=z)
        parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts), y_once, rtol=1e-9, atol=1e-10)
    # offline: the same, except that the first row (its embedding is incomplete, so it is no
    # key for the features; nothing defined yet) is back-filled instead of NaN
    offline = f.filter(x)
    assert np.isnan(y_once[0]).all() and np.isfinite(offline).all()
    np.testing.assert_array_equal(offline[1:], y_once[1:])
    np.testing.assert_array_equal(offline[0], y_once[1])


# ---------------------------------------------------------------------------- data handling
def test_nan_gaps_are_imputed_and_never_keys():
    clean, noisy = noisy_square(600)
    x = noisy.copy()
    x[100:110] = np.nan
    x[300] = np.nan
    f = ProjectionFilter(window=32, sigma=0.5, decay=0.95)
    y = f.filter(x)
    assert np.isfinite(y).all()
    # imputed values stay inside the range of the finite keys in the window
    assert np.nanmin(x[69:110]) <= y[105] <= np.nanmax(x[69:110])
    # the whole output (imputed rows included) equals the explicit-loop reference, in which a
    # NaN sample is never a key and distances use the coordinates present in both embeddings
    full = np.concatenate([np.full((31, 1), np.nan), x[:, None]])
    ref = attend_lags_reference(full, full, (31, 631), 0, 31, sigma=0.5, decay=0.95)
    np.testing.assert_allclose(y, ref[:, 0], atol=1e-12)
    with pytest.raises(ValueError, match="all NaN"):
        f.filter(np.full(10, np.nan))


def test_pandas_round_trip_and_datetime_index():
    idx = pd.date_range("2024-01-01", periods=200, freq="10ms")
    jitter_ms = np.round(np.random.default_rng(0).uniform(0, 3, 200), 3)
    idx = idx + pd.to_timedelta(jitter_ms, unit="ms")
    df = pd.DataFrame(
        np.random.default_rng(1).normal(size=(200, 3)), index=idx, columns=["gx", "gy", "gz"]
    )
    f = ProjectionFilter(window=16, tau=0.05, sigma=1.0)
    out = f.filter(df)
    assert isinstance(out, pd.DataFrame)
    assert out.index.equals(df.index) and list(out.columns) == ["gx", "gy", "gz"]
    # seconds written out independently of the conversion: 2024-01-01 is 1704067200 s
    secs = 1704067200.0 + np.arange(200) * 0.01 + jitter_ms / 1000
    want = f.filter(df.to_numpy(), timestamps=secs)
    np.testing.assert_allclose(out.to_numpy(), want, rtol=0, atol=1e-5)  # float64 at 1.7e9 s
    s = df["gx"]
    out_s = ProjectionFilter(window=16, sigma=1.0).filter(s)
    assert isinstance(out_s, pd.Series) and out_s.name == "gx" and out_s.index.equals(idx)


def test_torch_in_torch_out_and_input_untouched():
    x = torch.randn(100, 2, dtype=torch.float32)
    before = x.clone()
    y = ProjectionFilter(window=8, sigma=1.0).filter(x)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and y.shape == x.shape
    assert torch.equal(x, before)
    a = np.random.default_rng(0).normal(size=50)
    a_before = a.copy()
    ProjectionFilter(window=8).fit(a).filter(a)
    np.testing.assert_array_equal(a, a_before)


def test_multichannel_imu_like():
    rng = np.random.default_rng(4)
    t = np.linspace(0, 10, 1000)  # 1000 samples: the error 0.22x the noisy input's (2000: 0.14x)
    clean = np.stack([np.sin(t * (k + 1)) for k in range(6)], axis=1)
    noisy = clean + 0.2 * rng.normal(size=clean.shape)
    f = ProjectionFilter(window=32).fit(noisy)
    y = f.filter(noisy)
    assert y.shape == (1000, 6)
    assert np.mean((y - clean) ** 2) < np.mean((noisy - clean) ** 2)


def test_save_load_round_trip(tmp_path):
    clean, noisy = noisy_square(800)
    for f in [
        ProjectionFilter(window=[16, 32], embedding=[1, 2], decay=0.98).fit(noisy),
        ProjectionFilter(window=None, decay=0.9, recurrent="features", n_features=64).fit(noisy),
    ]:
        f.save(tmp_path / "f")
        g = ProjectionFilter.load(tmp_path / "f")
        assert g.get_params() == f.get_params()
        assert (g.sigma_, g.window_, g.embedding_) == (f.sigma_, f.window_, f.embedding_)
        np.testing.assert_array_equal(g.filter(noisy), f.filter(noisy))
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == [
        "arrays.safetensors",
        "config.json",
    ]


def test_a_boolean_format_in_a_saved_config_is_refused_naming_it(tmp_path, edit_config):
    # True == 1: it passed for format 1
    _, noisy = noisy_square(300)
    ProjectionFilter(window=[8], embedding=[1], degree=[0]).fit(noisy).save(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: cfg.update(format=True))
    with pytest.raises(ValueError, match="malformed 'format'"):
        ProjectionFilter.load(tmp_path / "f")


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        ("window", "x", "window must be an int"),
        ("window", "16", "window must be an int"),
        ("window", ["8", "16"], "window must be an int"),
        ("local_window", -3, "local_window must be 'auto', None or an odd int"),
        ("local_window", "x", "local_window must be 'auto', None or an odd int"),
        ("local_window", [101], "local_window must be 'auto', None or an odd int"),
    ],
)
def test_a_saved_setting_edited_to_what_fit_refuses_is_refused_on_load(
    param, value, message, tmp_path, edit_config
):
    # fit refused these, but load's check of the settings did not (window="16" and
    # local_window=-3 loaded; the next fit of the loaded filter failed)
    _, noisy = noisy_square(300)
    ProjectionFilter(window=[8], embedding=[1], degree=[0]).fit(noisy).save(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: cfg["params"].update({param: value}))
    with pytest.raises(ValueError, match=f"config.json: {message}"):
        ProjectionFilter.load(tmp_path / "f")


def test_a_config_nested_too_deeply_for_json_is_refused_as_invalid(tmp_path):
    # RecursionError from the json module
    _, noisy = noisy_square(300)
    ProjectionFilter(window=[8], embedding=[1], degree=[0]).fit(noisy).save(tmp_path / "f")
    (tmp_path / "f" / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="not valid JSON: nested too deeply"):
        ProjectionFilter.load(tmp_path / "f")


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("spread_", np.zeros(1), "spread_ must hold one value per channel, each > 0"),
        ("center_", np.zeros(4), "center_ must hold one value per channel"),
        ("features_", None, "array 'features_' holds NaN"),
    ],
)
def test_a_tampered_saved_array_is_refused_naming_it(name, value, message, tmp_path):
    from safetensors.numpy import load_file, save_file

    _, noisy = noisy_square(400)
    f = ProjectionFilter(window=None, decay=0.9, recurrent="features", n_features=16)
    f.fit(noisy).save(tmp_path / "f")
    path = str(tmp_path / "f" / "arrays.safetensors")
    arrays = load_file(path)
    value = np.full_like(arrays[name], np.nan) if value is None else value
    save_file({**arrays, name: value}, path)
    with pytest.raises(ValueError, match=message):
        ProjectionFilter.load(tmp_path / "f")


def test_get_set_params():
    f = ProjectionFilter(window=8)
    assert f.get_params()["window"] == 8
    f.set_params(window=4, sigma=0.3)
    assert f.window == 4 and f.sigma == 0.3
    with pytest.raises(ValueError, match="unknown parameter"):
        f.set_params(bogus=1)


# ---------------------------------------------------------------------------- quality
def best_causal_baselines(noisy_val, clean_val):
    """Causal moving-average width and Butterworth (order 2 and 4) cutoff with the lowest MSE
    on a validation realisation: the strongest linear baselines, tuned with the clean signal."""
    from scipy import signal

    def mse(y):
        return float(np.mean((y[64:] - clean_val[64:]) ** 2))

    ma = min(range(1, 65), key=lambda w: mse(signal.lfilter(np.ones(w) / w, [1.0], noisy_val)))
    butter = min(
        ((order, fc) for order in (2, 4) for fc in np.geomspace(0.005, 0.5, 25)),
        key=lambda p: mse(signal.sosfilt(signal.butter(*p, output="sos"), noisy_val)),
    )
    return ma, butter


@pytest.mark.parametrize("seed", [0, 1])
def test_fitted_beats_default_and_tuned_linear_filters(seed):
    """The SURE-fitted filter (no clean signal) beats the unfitted default, and a causal
    moving average and Butterworth filter tuned *with* the clean signal on a separate
    validation realisation (best width 1..64 / best order and cutoff)."""
    from scipy import signal

    clean, noisy = noisy_square(3000, noise=0.3, seed=seed)
    _, noisy_val = noisy_square(3000, noise=0.3, seed=100 + seed)
    W = 32
    ma_width, (order, cutoff) = best_causal_baselines(noisy_val, clean)

    def mse(y):
        return float(np.mean((y[64:] - clean[64:]) ** 2))

    default = ProjectionFilter(window=W).filter(noisy)
    fitted = ProjectionFilter(window=W).fit(noisy).filter(noisy)
    moving_average = signal.lfilter(np.ones(ma_width) / ma_width, [1.0], noisy)
    butter = signal.sosfilt(signal.butter(order, cutoff, output="sos"), noisy)
    assert mse(moving_average) < mse(noisy)  # the tuned baselines do denoise
    assert mse(fitted) < mse(default)
    assert mse(fitted) < mse(moving_average)
    assert mse(fitted) < mse(butter)
    assert mse(fitted) < mse(noisy)


def test_fit_with_target_picks_best_candidate():
    clean, noisy = noisy_square(1000)
    f = ProjectionFilter(window=16, sigma=[0.05, 0.5, 5.0]).fit(noisy, target=clean)
    errs = {
        s: np.mean((ProjectionFilter(window=16, sigma=s).filter(noisy) - clean) ** 2)
        for s in (0.05, 0.5, 5.0)
    }
    assert f.sigma_ == min(errs, key=errs.get)


def _refit_error(row, noisy, clean):
    settings = {k: row[k] for k in ("window", "embedding", "degree", "sigma")}
    return np.mean((ProjectionFilter(**settings).filter(noisy) - clean) ** 2)


def test_sure_score_tracks_true_error_over_the_whole_grid():
    clean, noisy = noisy_square(3000)
    f = ProjectionFilter(window=32, embedding=[1, 3]).fit(noisy)
    rows = f.cv_results_.to_dict("records")
    assert {r["degree"] for r in rows} == {0, 1, 2} and any(np.isinf(r["sigma"]) for r in rows)
    est = np.array([r["mse"] for r in rows])
    true = np.array([_refit_error(r, noisy, clean) for r in rows])
    assert np.corrcoef(est, true)[0, 1] > 0.9
    # the candidate SURE picks is within 10% of the best candidate's true error
    assert true[np.argmin(est)] <= 1.1 * true.min()


# ---------------------------------------------------------------------------- bad input
def test_bad_inputs():
    x = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(ValueError, match="window"):
        ProjectionFilter(window=0).filter(x)
    with pytest.raises(ValueError, match="window"):
        projection_filter(x[:, 0], window=0, sigma=1.0)
    with pytest.raises(TypeError, match="window"):
        ProjectionFilter(window=2.5).filter(x)
    with pytest.raises(ValueError, match="sigma"):
        ProjectionFilter(sigma=-1.0).filter(x)
    f = ProjectionFilter(window=8, sigma=1.0)
    with pytest.raises(ValueError, match="zi"):
        f.filter(x, zi=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="zi"):
        projection_filter(x[:, 0], window=8, sigma=1.0, zi=np.zeros(3))
    fitted = ProjectionFilter(window=8).fit(x)
    with pytest.raises(ValueError, match="channel"):
        fitted.filter(x[:, :1])
    with pytest.raises(ValueError, match="monotonic"):
        ProjectionFilter(window=8, tau=1.0).filter(x, timestamps=np.r_[0:25, 10:35])
    with pytest.raises(ValueError, match="timestamps"):
        ProjectionFilter(window=8, tau=1.0).filter(x)
    with pytest.raises(ValueError, match="empty"):
        f.filter(np.zeros(0))
    with pytest.raises(ValueError, match="empty"):
        projection_filter(np.zeros(0), window=4, sigma=1.0)
    with pytest.raises(ValueError, match="all NaN"):
        ProjectionFilter().fit(np.full(20, np.nan))
    with pytest.raises(ValueError, match="max_fit_samples"):
        ProjectionFilter(max_fit_samples=-1).fit(x)
    with pytest.raises(ValueError, match="decay"):
        ProjectionFilter(window=None).filter(x)
    with pytest.raises(ValueError, match="decay"):
        ProjectionFilter(decay=1.5).filter(x)
    with pytest.raises(ValueError, match="zi"):
        ProjectionFilter(window=8, causal=False).filter(x, zi=np.zeros((7, 2)))
    with pytest.raises(TypeError, match="x"):
        f.filter("not a series")
    with pytest.raises(ValueError, match="call fit"):
        ProjectionFilter(window=[8, 16]).filter(x)
    with pytest.raises(ValueError, match="min_step"):
        ProjectionFilter(window=None, tau=1.0).filter(x, timestamps=np.arange(50.0))
    with pytest.raises(ValueError, match="target"):
        ProjectionFilter().fit(x, target=x[:10])


def test_nontrivial_sigma_changes_output():
    x = np.random.default_rng(0).normal(size=100)
    a = projection_filter(x, window=8, sigma=0.1)
    b = projection_filter(x, window=8, sigma=10.0)
    assert not np.allclose(a, b)
    # sigma -> infinity gives the causal moving average
    c = projection_filter(x, window=8, sigma=1e6)
    ma = np.array([x[max(0, t - 7) : t + 1].mean() for t in range(100)])
    np.testing.assert_allclose(c, ma, atol=1e-9)
    assert math.isfinite(float(a.sum()))


# ---------------------------------------------------------------------------- docs
@pytest.mark.parametrize(
    "module", ["functional", "projection", "forecaster", "residual", "channel_scale"]
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"tssdpa.filters.{module}")
    result = doctest.testmod(mod)
    assert result.attempted > 0 and result.failed == 0


def test_features_step_equals_one_shot():
    x = np.random.default_rng(8).normal(size=(120, 2))
    f = ProjectionFilter(
        window=None, decay=0.9, sigma=[0.8], embedding=2, recurrent="features", n_features=64
    ).fit(x)
    y_once, _ = f.filter(x, zi=f.initial_state())  # streaming: first row NaN (see above)
    state = f.initial_state()
    ys = []
    for sample in x:
        y, state = f.step(sample, state)
        ys.append(y)
    np.testing.assert_allclose(np.array(ys), y_once, rtol=1e-9, atol=1e-10)


# ---------------------------------------------------------------------------- review fixes
def test_exact_datetime_steps_of_min_step_are_taken_whole_streamed_and_stepped():
    from tssdpa.checks import to_seconds

    # a 1 kHz DatetimeIndex: as float seconds since the epoch (an ulp of 2.4e-7 s in 2024)
    # its exact 1 ms steps read 0.99993-1.00017 ms, and min_step=0.001 refused them
    n = 400
    idx = pd.date_range("2024-05-01 12:00", periods=n, freq="1ms")
    x = pd.Series(np.sin(np.arange(n) / 50), index=idx)
    f = ProjectionFilter(window=None, tau=0.01, min_step=0.001, embedding=1, degree=0,
                         sigma=0.5)  # fmt: skip
    whole = np.asarray(f.filter(x))
    relative = f.filter(x.to_numpy(), timestamps=np.arange(n) * 1e-3)
    np.testing.assert_allclose(whole, relative, atol=1e-5)  # the times' own rounding
    state, parts = f.initial_state(1), []
    for a, b in ((0, 150), (150, 151), (151, 300)):
        y, state = f.filter(x.iloc[a:b], zi=state)
        parts.append(np.asarray(y))
    t = to_seconds(idx[300:])  # the filter's own reading of them
    for i in range(300, n):  # the per-sample step, from the state's float times
        y, state = f.step(x.iloc[i], state, timestamp=t[i - 300])
        parts.append(np.atleast_1d(y))
    np.testing.assert_allclose(np.concatenate(parts), whole, atol=1e-12)
    with pytest.raises(ValueError, match="min_step"):  # a step truly below it: still refused
        f.filter(x.to_numpy(), timestamps=np.arange(n) * 0.9e-3)


def test_min_step_is_enforced_by_the_class():
    """tau + min_step: steps below min_step would void the truncation bound, so every path
    raises (functional, filter, chunked filter, fast and general step, features)."""
    rng = np.random.default_rng(1)
    x = np.sin(np.linspace(0, 20, 600)) + 0.2 * rng.normal(size=600)
    fine = np.arange(600) * 0.0005  # 0.5 ms steps, min_step claims 10 ms
    f = ProjectionFilter(window=None, tau=0.1, min_step=0.01, sigma=0.3)
    with pytest.raises(ValueError, match="min_step"):
        projection_filter(x, window=None, sigma=0.3, tau=0.1, timestamps=fine, min_step=0.01)
    with pytest.raises(ValueError, match="min_step"):
        f.filter(x, timestamps=fine)
    with pytest.raises(ValueError, match="min_step"):
        f.fit(x, timestamps=fine)
    with pytest.raises(ValueError, match="min_step"):
        f.filter(x[:5], zi=f.initial_state(1), timestamps=fine[:5])
    # valid timestamps: the documented bound holds against a far longer filter
    ok = np.cumsum(rng.uniform(0.01, 0.03, 600))
    y = f.filter(x, timestamps=ok)
    y_long = ProjectionFilter(window=599, tau=0.1, sigma=0.3).filter(x, timestamps=ok)
    assert np.max(np.abs(y - y_long)) <= f.tol * np.ptp(x)
    # streaming: a step below min_step across calls and in step() (fast path) raises too
    state = f.initial_state(1)
    _, state = f.filter(x[:50], zi=state, timestamps=ok[:50])
    with pytest.raises(ValueError, match="min_step"):
        f.filter(x[50:60], zi=state, timestamps=ok[49] + 0.001 + ok[50:60] - ok[50])
    with pytest.raises(ValueError, match="min_step"):
        f.step(x[50], state, timestamp=ok[49] + 0.001)
    y50, _ = f.step(x[50], state, timestamp=ok[50])
    assert y50 == pytest.approx(y[50], abs=1e-12)
    feat = ProjectionFilter(
        window=None, tau=0.1, min_step=0.01, sigma=[0.3], recurrent="features", n_features=16
    )
    with pytest.raises(ValueError, match="min_step"):
        feat.fit(x, timestamps=fine)


def test_random_features_reject_timestamps_going_backwards():
    from tssdpa.signal.features import feature_filter

    rng = np.random.default_rng(2)
    x = rng.normal(size=200)
    t = np.cumsum(rng.uniform(0.005, 0.05, 200))
    f = ProjectionFilter(
        window=None, tau=0.1, min_step=0.005, sigma=[0.5], recurrent="features", n_features=32
    ).fit(x, timestamps=t)
    state = f.initial_state()
    _, state = f.filter(x[:100], zi=state, timestamps=t[:100])
    with pytest.raises(ValueError, match="continue after the state's last timestamp"):
        f.filter(x[100:], zi=state, timestamps=t[100:] - 1.0)
    with pytest.raises(ValueError, match="continue after the state's last timestamp"):
        f.step(1.0, state, timestamp=0.0)
    with pytest.raises(ValueError, match="monotonic"):
        f.filter(x[100:110], zi=state, timestamps=t[100:110][::-1])
    # the internal recursion checks as well (decay factors > 1 would make the state grow)
    args = f._feature_args(1)
    with pytest.raises(ValueError, match="monotonic"):
        feature_filter(x[:10, None], f.initial_state(), times=t[:10][::-1], **args)
    with pytest.raises(ValueError, match="continue after"):
        feature_filter(x[100:110, None], state, times=t[:10], **args)


def test_functional_all_nan_raises_naming_x():
    with pytest.raises(ValueError, match="x is all NaN"):
        projection_filter(np.full(10, np.nan), window=3, sigma=1.0)
    with pytest.raises(ValueError, match=r"x \(series 1\) is all NaN"):
        projection_filter(np.r_[[np.ones(10)], [np.full(10, np.nan)]], window=3, sigma=1.0)
    partial = np.ones((10, 2))
    partial[::2, 0] = np.nan
    partial[1::2, 1] = np.nan
    # two sensors sampled in turn: a key serves the channel it has, so both are filtered
    alternate = projection_filter(partial, window=3, sigma=1.0, axis=0, channel_axis=1)
    assert np.isfinite(alternate).all()
    np.testing.assert_array_equal(ProjectionFilter(window=3, sigma=1.0).filter(partial), alternate)
    with pytest.raises(
        ValueError, match=r"x has no 1 consecutive sample\(s\) with every channel finite"
    ):
        ProjectionFilter(window=3, sigma=1.0, decay=0.9, recurrent="features").filter(partial)
    one_empty = np.column_stack([np.ones(10), np.full(10, np.nan)])
    with pytest.raises(ValueError, match="x channel 1 is all NaN"):
        projection_filter(one_empty, window=3, sigma=1.0, axis=0, channel_axis=1)
    # streaming: an all-NaN chunk is just missing data, the held output continues
    y, z = projection_filter(np.ones(4), window=3, sigma=1.0, zi=np.full(3, np.nan))
    y2, _ = projection_filter(np.full(5, np.nan), window=3, sigma=1.0, zi=z)
    np.testing.assert_array_equal(y2, np.ones(5))


@pytest.mark.parametrize(("holdout", "start"), [(None, 0), (0.25, 750)])
def test_fit_with_target_scores_every_sample_or_the_held_out_tail(holdout, start):
    """By default every fitted sample judges the candidates (the filter trains no weight on
    the target); ``holdout`` scores only the last fraction instead."""
    clean, noisy = noisy_square(1000)
    kw = {} if holdout is None else {"holdout": holdout}
    f = ProjectionFilter(window=16, sigma=[0.05, 0.5, 5.0], **kw).fit(noisy, target=clean)
    assert f.fit_holdout_start_ == start
    assert f.best_params_["sigma"] == f.sigma_
    for row in f.cv_results_.to_dict("records"):
        y = ProjectionFilter(**{k: row[k] for k in ("window", "embedding", "degree", "sigma")})
        y = y.filter(noisy)
        assert row["mse"] == pytest.approx(np.mean((y[start:] - clean[start:]) ** 2), rel=1e-12)


def test_a_held_out_tail_decides_by_the_tail():
    clean, noisy = noisy_square(1000)
    target = clean.copy()
    target[:750] = noisy[:750]  # "no filtering" would be perfect on the head
    kw = dict(window=16, sigma=[1e-3, 0.5], degree=0, holdout=0.25)
    g = ProjectionFilter(**kw).fit(noisy, target=target)
    assert g.sigma_ == 0.5
    assert ProjectionFilter(window=16).fit(noisy).fit_holdout_start_ is None  # SURE: all
    with pytest.raises(ValueError, match="holdout"):
        ProjectionFilter(window=16, holdout=0.0).fit(noisy, target=clean)


@pytest.mark.parametrize(
    "kw",
    [
        dict(window=16, sigma=0.5),
        dict(window=16, sigma=0.5, embedding=2, exclude_self=True),
        dict(window=None, decay=0.8, sigma=0.5),
    ],
)
def test_long_gaps_and_leading_nans_stay_defined(kw):
    """A 40-sample gap with W=16 and leading NaNs: every output is defined. Rows without a
    usable key repeat the last defined output; offline, the leading rows take the first
    defined output; streaming leaves those NaN and equals one-shot for every split."""
    rng = np.random.default_rng(3)
    x = np.sin(np.linspace(0, 12, 300))[:, None] + 0.2 * rng.normal(size=(300, 1))
    x[:7] = np.nan
    x[100:140] = np.nan
    f = ProjectionFilter(**kw)
    K = f._spec().window
    y = f.filter(x)
    assert np.isfinite(y).all()
    np.testing.assert_array_equal(y[:7], np.repeat(y[7:8], 7, axis=0))  # back-filled
    held = slice(100 + K - 1 + (f._spec().embedding - 1), 140)  # no key within reach
    if held.start < held.stop:
        np.testing.assert_array_equal(
            y[held], np.repeat(y[held.start - 1 : held.start], held.stop - held.start, axis=0)
        )
    # streaming: equal for any split, NaN only before the first observed sample
    stream, _ = f.filter(x, zi=f.initial_state(1))
    assert np.isnan(stream[:7]).all()
    np.testing.assert_array_equal(stream[7:], y[7:])
    for cuts in ([5, 110, 139], [1, 2, 100, 120, 121, 250], list(range(95, 145, 3))):
        b = random_splits(300, cuts)
        z = f.initial_state(1)
        parts = []
        for a, c in zip(b[:-1], b[1:]):
            part, z = f.filter(x[a:c], zi=z)
            parts.append(part)
        np.testing.assert_array_equal(np.concatenate(parts), stream)
    # per-sample step: the same
    z = f.initial_state(1)
    steps = []
    for sample in x:
        out, z = f.step(sample, z)
        steps.append(out)
    np.testing.assert_allclose(np.array(steps), stream, rtol=0, atol=1e-12)


def test_features_long_gap_and_leading_nans_stay_defined():
    rng = np.random.default_rng(4)
    x = rng.normal(size=400)
    x[:3] = np.nan
    x[200:260] = np.nan
    f = ProjectionFilter(
        window=None, decay=0.5, sigma=[1.0], recurrent="features", n_features=32
    ).fit(x)
    y = f.filter(x)
    assert np.isfinite(y).all()
    stream, _ = f.filter(x, zi=f.initial_state())
    z = f.initial_state()
    parts = []
    for a, c in zip([0, 2, 210, 255], [2, 210, 255, 400]):
        part, z = f.filter(x[a:c], zi=z)
        parts.append(part)
    np.testing.assert_allclose(np.concatenate(parts), stream, rtol=1e-9, atol=1e-10)
    np.testing.assert_array_equal(y[3:], stream[3:])


def test_save_numpy_candidates_and_validate_before_writing(tmp_path):
    clean, noisy = noisy_square(600)
    f = ProjectionFilter(
        window=np.array([8, 16]),
        sigma=np.array([0.1, 0.3, 1.0]),
        decay=np.float64(0.95),
        max_fit_samples=np.int64(500),
    ).fit(noisy)
    f.save(tmp_path / "np")
    g = ProjectionFilter.load(tmp_path / "np")
    assert g.get_params()["window"] == [8, 16] and g.get_params()["sigma"] == [0.1, 0.3, 1.0]
    assert (g.window_, g.sigma_) == (f.window_, f.sigma_)
    np.testing.assert_array_equal(g.filter(noisy), f.filter(noisy))
    bad = ProjectionFilter(window=8, sigma=1.0)
    bad.random_state = object()  # not JSON: nothing may be created
    with pytest.raises(TypeError, match="random_state"):
        bad.save(tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize(
    "kw",
    [
        dict(window=64, sigma=0.3),
        dict(window=8, sigma=0.3, embedding=3, exclude_self=True),
        dict(window=None, decay=0.9, sigma=0.3),
        dict(window=12, tau=2.0, sigma=0.3, embedding=2),
    ],
)
@pytest.mark.parametrize("C", [1, 3])
def test_float32_step_equals_filter(kw, C):
    """dtype='float32': step computes in float32 with the kernel's operation order; it must
    match filter to float32 rounding (in practice bit for bit)."""
    rng = np.random.default_rng(5)
    x = np.sin(np.linspace(0, 20, 300))[:, None] * np.arange(1, C + 1) + 0.2 * rng.normal(
        size=(300, C)
    )
    times = np.cumsum(rng.uniform(0.5, 1.5, 300))
    use_t = "tau" in kw
    f = ProjectionFilter(dtype="float32", **kw)
    y_once = f.filter(x, timestamps=times if use_t else None)
    state = f.initial_state(C)
    ys = []
    for i in range(300):
        y, state = f.step(x[i], state, timestamp=times[i] if use_t else None)
        ys.append(y)
    tol = 1e-6 * np.ptp(x)
    np.testing.assert_allclose(np.array(ys), y_once, rtol=0, atol=tol)
    # and it really is float32 arithmetic (differs from the float64 filter by more than that)
    y64 = ProjectionFilter(**kw).filter(x, timestamps=times if use_t else None)
    assert np.max(np.abs(y64 - y_once)) > 0


def test_the_empty_state_needs_no_fit_and_sizes_itself_on_the_first_chunk():
    x = np.random.default_rng(3).normal(size=(200, 3))
    f = ProjectionFilter(window=8, embedding=2, degree=0, sigma=0.5)  # never fitted
    zi = f.initial_state()  # no n_channels: one empty column
    y1, zf = f.filter(x[:70], zi=zi)
    y2, _ = f.filter(x[70:], zi=zf)
    want, _ = f.filter(x, zi=f.initial_state(3))
    np.testing.assert_allclose(np.vstack([y1, y2]), want, rtol=1e-12)
    t = np.arange(200) * 0.1
    g = ProjectionFilter(window=None, tau=0.5, min_step=0.01, embedding=1, degree=0, sigma=0.5)
    y, _ = g.filter(x, zi=g.initial_state(), timestamps=t)
    np.testing.assert_allclose(y, g.filter(x, zi=g.initial_state(3), timestamps=t)[0])


@pytest.mark.parametrize("window,embedding", [(4, 1), (1, 1), (2, 2)])
def test_step_sizes_the_empty_state_on_its_first_sample_as_filter_does(window, embedding):
    # the per-sample fast path refused it: "state has shape (4, 1), expected (4, 3)"
    x = np.random.default_rng(4).normal(size=(30, 3))
    f = ProjectionFilter(window=window, embedding=embedding, degree=0, sigma=1.0)
    state, ys = f.initial_state(), []
    for row in x:
        y, state = f.step(row, state)
        ys.append(y)
    np.testing.assert_allclose(np.array(ys), f.filter(x, zi=f.initial_state(3))[0], rtol=1e-12)


@pytest.mark.parametrize("causal", [True, False])
def test_float32_with_epoch_timestamps_keeps_the_time_resolution(causal):
    # float32 epoch seconds (1.7e9) resolve 128 s: the times were cast before differencing,
    # and a 100 Hz recording's decay came out flat (0.21 off the float64 filter)
    t = 1.7e9 + np.arange(400) * 0.01
    x = np.sin(np.arange(400) / 8.0)[:, None] + 0.1 * np.random.default_rng(2).normal(size=(400, 1))
    kw = dict(window=60 if causal else 40, tau=0.05, sigma=0.5, causal=causal)
    y64 = ProjectionFilter(**kw).filter(x, timestamps=t)
    f32 = ProjectionFilter(dtype="float32", **kw)
    tol = 1e-5 * np.ptp(x)
    np.testing.assert_allclose(f32.filter(x, timestamps=t), y64, rtol=0, atol=tol)
    if causal:
        state, ys = f32.initial_state(1), []
        for row, ti in zip(x, t):
            y, state = f32.step(row, state, timestamp=ti)
            ys.append(y)
        np.testing.assert_allclose(np.array(ys), y64, rtol=0, atol=tol)


def test_step_with_a_sample_of_the_wrong_length_says_what_the_sample_should_be():
    f = ProjectionFilter(window=4, embedding=1, degree=0, sigma=0.5)
    state = f.initial_state(2)
    with pytest.raises(ValueError, match="sample has 3 value.* state filters 2 channel"):
        f.step(np.ones(3), state)


@pytest.mark.parametrize(
    "kw", [dict(window=10**9), dict(window=None, decay=1 - 1e-15), dict(window=10**9, causal=False)]
)
def test_a_window_longer_than_the_series_is_the_series_length(kw):
    """The same keys, so the same output, in the memory of the short window (the old code
    padded the window: 7 GiB for window=10**9 on 50 samples)."""
    x = np.random.default_rng(0).normal(size=50)
    long = ProjectionFilter(embedding=1, degree=0, sigma=1.0, **kw)
    short = ProjectionFilter(embedding=1, degree=0, sigma=1.0, **{**kw, "window": 50})
    np.testing.assert_array_equal(long.filter(x), short.filter(x))
    if kw.get("causal", True):
        with pytest.raises(ValueError, match="window: the streaming state would keep"):
            long.initial_state(1)


@pytest.mark.parametrize("causal", [True, False])
def test_an_embedding_longer_than_the_series_compares_the_samples_it_has(causal):
    # as a stream's first samples do: a fitted filter refused a series shorter than its
    # chosen embedding (5 samples under embedding 7) that it would filter streamed
    x = np.sin(np.arange(50) / 5)
    f = ProjectionFilter(window=8, embedding=60, degree=0, sigma=1.0, causal=causal)
    y = f.filter(x)
    assert np.isfinite(y).all()
    if causal:
        np.testing.assert_allclose(f.filter(x[:5]), y[:5], rtol=1e-12)
        np.testing.assert_allclose(f.filter(x[:5], zi=f.initial_state())[0], y[:5], rtol=1e-12)


@pytest.mark.parametrize("causal", [True, False])
def test_an_embedding_far_longer_than_the_series_is_refused_before_building_its_patterns(causal):
    # 10**5 samples a pattern on 50 asked 75 GiB
    f = ProjectionFilter(window=8, embedding=10**5, sigma=1.0, causal=causal)
    with pytest.raises(ValueError, match="embedding=100000 is longer than the series"):
        f.filter(np.ones(50))


def test_random_features_without_a_complete_pattern_are_refused_not_all_nan():
    f = ProjectionFilter(recurrent="features", window=None, decay=0.9, n_features=16,
                         embedding=60)  # fmt: skip
    with pytest.raises(
        ValueError, match=r"x has no 60 consecutive sample\(s\) .* \(embedding=60\)"
    ):
        f.filter(np.sin(np.arange(50) / 5))
    assert np.isfinite(f.filter(np.sin(np.arange(80) / 5))).all()


def test_an_embedding_longer_than_the_series_is_refused_by_the_non_local_filter():
    with pytest.raises(ValueError, match="embedding=60 is longer than the series"):
        ProjectionFilter(window="all", embedding=60, sigma=1.0, causal=False).filter(np.ones(50))


@pytest.mark.parametrize("causal", [True, False])
def test_fit_on_a_few_samples_tries_no_pattern_longer_than_a_quarter_of_them(causal):
    x = np.sin(np.arange(12) / 3)
    f = ProjectionFilter(causal=causal).fit(x)
    cv = f.cv_results_
    assert max(cv["embedding"][cv["window"] != "all"]) <= len(x) // 4  # windowed patterns
    assert np.isfinite(f.filter(x[:5])).all()


@pytest.mark.parametrize("dtype", ["x", "flaot32", {"a": 1}])
def test_a_dtype_numpy_does_not_know_is_refused_naming_dtype(dtype):
    # numpy's own "data type 'x' not understood" named no argument
    _, noisy = noisy_square(300)
    with pytest.raises(TypeError, match="dtype must be float32 or float64, got"):
        ProjectionFilter(window=[8], embedding=[1], degree=[0], dtype=dtype).fit(noisy)


@pytest.mark.parametrize("recurrent", [None, "features"])
def test_step_refuses_a_malformed_state_or_sample_naming_it(recurrent):
    _, noisy = noisy_square(400)
    kw = {"window": None, "decay": 0.9, "n_features": 16} if recurrent else {}
    f = ProjectionFilter(recurrent=recurrent, **kw).fit(noisy)
    for state in (None, "abc", {"x": 1}, [1.0, 2.0]):
        with pytest.raises(TypeError, match="state must be what initial_state"):
            f.step(0.5, state)
    with pytest.raises(TypeError, match="sample must be a real numeric"):
        f.step("a", f.initial_state())


@pytest.mark.parametrize(
    "kw, state, message",
    [
        ({"window": 8, "tau": 0.05}, (np.full((5, 2), np.nan), np.full(4, np.nan)),
         r"state\[0\] has shape \(5, 2\), expected \(8, 2\)"),
        ({"window": 8, "channel_independent": True}, np.full((5, 2), np.nan),
         r"state has shape \(5, 2\), expected \(8, 2\)"),
        ({"window": 8}, np.full((5, 1), np.nan), r"state has shape \(5, 1\), expected \(8, 2\)"),
        ({"window": None, "decay": 0.9, "recurrent": "features", "n_features": 16},
         np.full((5, 2), np.nan), r"state must be a tuple of 5 arrays"),
    ],
    ids=["tau", "channel by channel", "one empty column", "random features"],
)  # fmt: skip
def test_step_names_a_state_of_the_wrong_shape_state_not_zi(kw, state, message):
    """step(sample, state) checks the state as filter's zi on these paths, and said "zi has
    shape ...", an argument the caller never gave."""
    rng = np.random.default_rng(0)
    x = np.c_[np.sin(np.arange(300) / 9), 50 * np.cos(np.arange(300) / 5)]
    x = x + rng.normal(size=(300, 2)) * [0.1, 5]
    times = np.arange(300) * 0.01 if "tau" in kw else None
    f = ProjectionFilter(embedding=1, degree=0, **kw).fit(x, timestamps=times)
    with pytest.raises(ValueError, match=f"^{message}"):
        f.step(x[0], state, timestamp=None if times is None else 0.0)
    with pytest.raises(ValueError, match=f"^{message.replace('state', 'zi', 1)}"):
        f.filter(x[:2], zi=state, timestamps=None if times is None else times[:2])


@pytest.mark.parametrize("sample", ["1.0", b"1", ["0.5"], np.array("0.5")])
def test_a_number_given_as_text_is_refused_by_step_as_by_filter(sample):
    # numpy read "1.0" as 1.0: step and filter took numbers kept as text for numbers
    _, noisy = noisy_square(400)
    f = ProjectionFilter(window=[8], embedding=[1], degree=[0]).fit(noisy)
    with pytest.raises(TypeError, match="sample must be a real numeric.*got text"):
        f.step(sample, f.initial_state())
    with pytest.raises(TypeError, match="x must be a real numeric.*got text"):
        f.filter(np.array(["0.5"] * 20))
    assert f.step(np.array(0.5, dtype=object), f.initial_state())[0] == 0.5  # a boxed number


@pytest.mark.parametrize("causal", [True, False])
def test_a_channel_first_known_after_max_fit_samples_is_fitted_from_where_it_is_known(causal):
    # the fit scores on max_fit_samples samples: the first ones would hold no value of
    # channel 1 (this stopped with "no candidate gave a finite score")
    rng = np.random.default_rng(4)
    t = np.arange(3000)
    clean = np.column_stack([np.sin(0.05 * t), np.cos(0.03 * t)])
    x = clean + 0.2 * rng.standard_normal(clean.shape)
    x[:1800, 1] = np.nan
    kw = {"causal": causal, "max_fit_samples": 500, "local_window": None}  # no adaptation: faster
    f = ProjectionFilter(**kw).fit(x)
    y = np.asarray(f.filter(x))
    assert np.isfinite(y[1800:]).all() and np.isfinite(y[:, 0]).all()
    assert np.mean((y[1800:] - clean[1800:]) ** 2) < 0.5 * np.mean((x[1800:] - clean[1800:]) ** 2)
    target = np.where(np.isnan(x), np.nan, clean)
    # where the fit block lies is checked below, the search on it above: one window and degree
    kw.update(window=[16], degree=[0], holdout=0.5)
    g = ProjectionFilter(**kw).fit(x, target=target)
    assert g.fit_holdout_start_ == 1800 + 250  # an index into x: the block starts at 1800
    # known in the last 100 samples only: the fit block is the last max_fit_samples
    x[:2900, 1] = np.nan
    h = ProjectionFilter(**kw).fit(x, target=target)
    assert h.fit_holdout_start_ == 2500 + 250
    assert np.isfinite(np.asarray(h.filter(x))[2900:]).all()


def test_tiny_values_after_fit_are_filtered_whatever_the_chunking():
    # a decaying signal reaches 1e-170: refused in fit (squares underflow), not in filter
    x = np.exp(-np.arange(400.0))
    f = ProjectionFilter(window=8, sigma=0.1).fit(x[:30])
    whole = f.filter(x)
    y1, state = f.filter(x[:350], zi=f.initial_state())
    y2, _ = f.filter(x[350:], zi=state)
    np.testing.assert_allclose(np.concatenate([y1, y2]), whole, rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="x channel 0 is at most"):
        ProjectionFilter().fit(x[350:])


def test_fit_names_x_and_the_channel_that_is_all_nan():
    x = np.column_stack([np.sin(0.05 * np.arange(300)), np.full(300, np.nan)])
    for causal in (True, False):
        with pytest.raises(ValueError, match="x channel 1 is all NaN"):
            ProjectionFilter(causal=causal).fit(x)


def test_a_zero_phase_random_feature_filter_is_refused_by_fit_before_any_note():
    x = np.sin(0.05 * np.arange(600))
    x[300] += 100.0  # a glitch a zero-phase fit would warn of
    f = ProjectionFilter(causal=False, recurrent="features", decay=0.9, sigma=[1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the refusal comes first
        with pytest.raises(ValueError, match="recurrent='features' is causal only"):
            f.fit(x)


@pytest.mark.parametrize("scale", [1e40, 1e-50])
def test_float32_refuses_magnitudes_it_cannot_square_naming_dtype(scale):
    # float32 squares overflow past about 1e19 and underflow below 1e-19: the output was
    # inf, NaN or all zeros, with only RuntimeWarnings
    x = scale * (np.sin(np.arange(300) / 20) + 0.2 * np.random.default_rng(0).normal(size=300))
    for dtype in ("float32", np.float32, "f4"):
        with pytest.raises(ValueError, match="x channel 0 reaches magnitude .* dtype=float32"):
            ProjectionFilter(dtype=dtype).fit(x)
    f = ProjectionFilter(window=8, sigma=1.0, dtype="float32")
    if scale > 1:  # small values in a later call are fine: a signal may decay
        with pytest.raises(ValueError, match="x channel 0 .* dtype=float32"):
            f.filter(x)
        with pytest.raises(ValueError, match="sample channel 0 .* dtype=float32"):
            f.step(x[0], f.initial_state())
        with pytest.raises(ValueError, match="x channel 0 .* dtype=float32"):
            projection_filter(x, window=8, sigma=1.0, dtype=np.float32)
        with pytest.raises(ValueError, match="sample contains inf"):  # inf: its own message
            f.step(np.inf, f.initial_state())
    y = ProjectionFilter(dtype="float64").fit(x).filter(x)
    assert np.isfinite(y).all() and np.abs(y).max() > 0.5 * np.abs(x).max()


def test_a_target_missing_in_the_held_out_rows_is_refused_naming_them():
    clean = np.sin(np.arange(500) / 20)
    noisy = clean + 0.2 * np.random.default_rng(0).normal(size=500)
    target = clean.copy()
    target[-60:] = np.nan
    with pytest.raises(ValueError, match="target has no known value in rows 450-499"):
        ProjectionFilter(holdout=0.1).fit(noisy, target=target)
    target[-60:-40] = clean[-60:-40]  # some known there: fitted, on those
    assert ProjectionFilter(holdout=0.1).fit(noisy, target=target).best_params_
    both = np.stack([clean, clean], axis=1)  # fitted channel by channel: named
    both[-60:, 1] = np.nan
    f = ProjectionFilter(holdout=0.1, causal=False, channel_independent=True)
    with pytest.raises(ValueError, match="x channel 1: target has no known value"):
        f.fit(np.stack([noisy, noisy], axis=1), target=both)


def test_float32_refuses_to_fit_a_signal_its_offset_would_round_away():
    # on an offset of 1e9 float32 rounds in steps of 64: the fit chose on the data less its
    # median, the filter then computed on the rounded series (worse than the noisy input)
    x = 1e9 + np.sin(np.arange(300) / 20) + 0.2 * np.random.default_rng(0).normal(size=300)
    with pytest.raises(ValueError, match="x channel 0 reaches 1e\\+09, .* times its spread"):
        ProjectionFilter(dtype="float32").fit(x)
    assert np.isfinite(ProjectionFilter(dtype="float32").fit(x - 1e9).filter(x - 1e9)).all()


def test_a_huge_sigma_is_the_uniform_kernel_and_a_vanishing_one_is_refused():
    x = np.sin(np.arange(50) / 3.0)
    np.testing.assert_allclose(
        projection_filter(x, window=3, sigma=1e300), projection_filter(x, window=3, sigma=np.inf)
    )
    for call in (lambda: projection_filter(x, window=3, sigma=1e-300),
                 lambda: ProjectionFilter(window=3, sigma=1e-300).filter(x)):  # fmt: skip
        with pytest.raises(ValueError, match="sigma must be at least 1e-154"):
            call()


def test_a_state_holding_inf_is_refused_as_x_is():
    # projection_filter passed an inf history entry on as inf outputs
    x = np.sin(np.arange(100) / 5.0)
    with pytest.raises(ValueError, match="zi contains inf"):
        projection_filter(x, window=6, sigma=0.5, embedding=2, zi=np.full(7, np.inf))
    f = ProjectionFilter(window=6, sigma=0.5, embedding=2)
    bad = np.full_like(np.asarray(f.initial_state()), np.inf)
    with pytest.raises(ValueError, match="zi contains inf"):
        f.filter(x, zi=bad)
    with pytest.raises(ValueError, match="state contains inf"):  # the fast path too
        f.step(x[0], bad)


def test_projection_filter_names_a_non_integer_axis_and_inf_state_times():
    x = np.sin(np.arange(40) / 3.0)
    with pytest.raises(TypeError, match="axis must be an integer, got 1.0"):
        projection_filter(np.stack([x, x]), window=3, sigma=0.5, axis=1.0)
    with pytest.raises(TypeError, match="channel_axis must be an integer"):
        projection_filter(np.stack([x, x]), window=3, sigma=0.5, axis=1, channel_axis=0.0)
    t = np.arange(40.0)
    empty = (np.full(3, np.nan), np.full(2, np.nan))
    _, (hist, times) = projection_filter(x, window=3, sigma=0.5, tau=1.0, timestamps=t, zi=empty)
    with pytest.raises(ValueError, match="zi times contain inf"):
        projection_filter(x, window=3, sigma=0.5, tau=1.0, timestamps=t + 40,
                          zi=(hist, np.r_[times[:-1], -np.inf]))  # fmt: skip


def test_random_features_whose_weights_all_underflow_are_refused_naming_sigma():
    f = ProjectionFilter(window=5, sigma=1e-15, recurrent="features", decay=0.9, random_state=0)
    with pytest.raises(ValueError, match="every feature weight underflowed at sigma=1e-15"):
        f.filter(np.sin(np.arange(100) / 5))


def test_step_refuses_inf_in_a_timed_state_or_timestamp():
    f = ProjectionFilter(sigma=1.0, window=3, embedding=1, tau=1.0)
    state = f.initial_state()
    for t in range(3):
        _, state = f.step(float(t), state, timestamp=float(t))
    samples, times = state
    with pytest.raises(ValueError, match="state's times contains inf"):
        f.step(3.0, (samples, np.r_[-np.inf, times[1:]]), timestamp=3.0)
    with pytest.raises(ValueError, match="timestamp must be finite"):
        f.step(3.0, state, timestamp=np.inf)


def test_a_gap_rows_clip_ignores_keys_below_the_weight_the_unit_ignores_in_both_dtypes():
    """A row without its reading clips its polynomial into the range of the values it weighed;
    values 161-199 lags back weigh 0.5**161 and less: > 0 in float64, 0 in float32, so a
    reading of 1000 there widened the range in one dtype only (the ONNX step, weighing in
    float64, gave 9.08 against 4.61). Keys below SPAN_WEIGHT count in neither."""
    x = np.random.default_rng(0).normal(size=300).astype(np.float32).astype(np.float64)
    x[:80] = 1000.0
    x[241:280:3] = np.nan
    kw = dict(window=200, sigma=np.inf, decay=0.5, degree=4, embedding=1)
    ys = [np.asarray(ProjectionFilter(**kw, dtype=d).filter(x)) for d in ("float64", "float32")]
    rows = np.arange(241, 280, 3)
    np.testing.assert_allclose(ys[0][rows], ys[1][rows], rtol=0, atol=1e-4)


@pytest.mark.parametrize(
    "fitted_on, n_channels, exc, words",
    [
        (None, "2", TypeError, "n_channels must be an int, got str"),
        (None, 2.0, TypeError, "n_channels must be an int, got float"),
        (None, [2], TypeError, "n_channels must be an int, got list"),
        (None, True, TypeError, "n_channels must be an int, got bool"),
        (None, -1, ValueError, "n_channels must be an integer >= 1"),
        (None, 0, ValueError, "n_channels must be an integer >= 1"),  # step then IndexError
        (2, 3, ValueError, "n_channels=3, but the ProjectionFilter was fitted on 2"),
        (2, 1, ValueError, "n_channels=1, but the ProjectionFilter was fitted on 2"),
    ],
)
def test_initial_state_takes_a_positive_int_n_channels_the_fitted_count_once_fitted(
    fitted_on, n_channels, exc, words
):
    f = ProjectionFilter(window=4, embedding=1, degree=0, sigma=1.0)
    if fitted_on:
        f.fit(RNG.standard_normal((50, fitted_on)))
    with pytest.raises(exc, match=words):
        f.initial_state(n_channels=n_channels)
    C = fitted_on or 3
    assert f.initial_state(n_channels=np.int64(C)).shape == (4, C)  # numpy ints are ints


@pytest.mark.parametrize(
    "config",
    [{}, {"decay": 0.9}, {"tau": 0.5}, {"recurrent": "features", "decay": 0.9, "n_features": 32}],
    ids=["fir", "iir", "tau", "features"],
)
def test_an_empty_chunk_of_a_stream_gives_no_output_and_the_state_as_it_was(config):
    # a control loop's tick without new samples raised "x is empty (0 samples)"; the ONNX
    # export of the same filter returns an empty chunk and its state
    rng = np.random.default_rng(0)
    x, t = rng.normal(size=(200, 2)), np.arange(200) * 0.01
    f = ProjectionFilter(window=16, sigma=1.0, **config)
    times = (lambda a, b: {"timestamps": t[a:b]}) if "tau" in config else (lambda a, b: {})
    whole, _ = f.filter(x, zi=f.initial_state(2), **times(0, 200))
    y1, z1 = f.filter(x[:80], zi=f.initial_state(2), **times(0, 80))
    y0, z0 = f.filter(x[80:80], zi=z1, **times(80, 80))
    y2, _ = f.filter(x[80:], zi=z0, **times(80, 200))
    assert y0.shape == (0, 2)
    np.testing.assert_allclose(np.r_[y1, y2], whole, rtol=0, atol=1e-12)
    frame, _ = f.filter(pd.DataFrame(x[:0], columns=["a", "b"]), zi=z1, **times(80, 80))
    assert list(frame.columns) == ["a", "b"] and len(frame) == 0
    with pytest.raises(ValueError, match="empty"):  # offline, an empty x is still refused
        f.filter(x[:0])
    with pytest.raises(ValueError, match="causal=True"):  # a zero-phase filter has no state
        ProjectionFilter(causal=False, window=16, sigma=1.0).filter(x[:0], zi=z1)


@pytest.mark.parametrize("level", [3.3, 1e-9, 7.0])
def test_float32_fits_a_constant_channel_at_any_level(level):
    # the refusal of a channel 1e5 times its spread from 0 took np.std's rounding for a
    # spread: a constant channel of 3.3 (std 4.4e-16) or 1e-9 was refused, one of 7.0 (std 0)
    # fitted. float32 computes a constant exactly (every distance 0 in that channel)
    rng = np.random.default_rng(0)
    signal = np.sin(np.arange(400) / 20) + 0.2 * rng.normal(size=400)
    x = np.stack([signal, np.full(400, level)], axis=1)
    y = ProjectionFilter(window=16, dtype="float32").fit(x).filter(x)
    np.testing.assert_allclose(y[:, 1], np.float32(level), rtol=1e-6)
    x[:, 1] = 1e9 + (signal > 0)  # a step of 1 on 1e9: float32 rounds it away, refused
    with pytest.raises(ValueError, match="x channel 1 reaches 1e\\+09, .* times its spread"):
        ProjectionFilter(dtype="float32").fit(x)


def test_a_step_below_min_step_is_named_with_its_sample_value_and_count():
    """It said only "timestamps has a step smaller than min_step=0.001": a 400 Hz log with
    repeated timestamps left its user to search 37 rows for them."""
    t = np.arange(200) * 0.0025
    t[[10, 70]] = t[[9, 69]]  # repeated timestamps
    x = np.sin(t * 20)
    f = ProjectionFilter(window=None, tau=0.05, min_step=0.001, sigma=0.3)
    with pytest.raises(ValueError, match=r"2 of its 199 steps, the first 0 s from sample 9 to 10"):
        f.filter(x, timestamps=t)
    state = f.initial_state(1)
    _, state = f.filter(x[:50], zi=state, timestamps=np.arange(50) * 0.0025)
    with pytest.raises(ValueError, match=r"0\.0005 s from the state's last timestamp"):
        f.filter(x[50:60], zi=state, timestamps=0.1225 + 0.0005 + np.arange(10) * 0.0025)


@pytest.mark.parametrize("state", [None, "a causal filter's"])
def test_step_of_a_zero_phase_filter_says_it_has_no_streaming_state(state):
    # with no state it said "state must be what initial_state() or step() returned", and
    # initial_state refuses a zero-phase filter
    x = np.sin(np.arange(300) / 10)
    f = ProjectionFilter(causal=False, window=8).fit(x)
    given = None if state is None else ProjectionFilter(window=8).fit(x).initial_state()
    with pytest.raises(ValueError, match="a zero-phase .* has no streaming state"):
        f.step(x[0], given)


def test_step_with_an_integer_state_names_its_dtype():
    # an int64 history was refused as "got ndarray", which is what a state is
    f = ProjectionFilter(window=4, sigma=1.0)
    with pytest.raises(TypeError, match=r"returned \(float\), got an int64 array$"):
        f.step(np.array([1.0]), np.zeros((4, 1), dtype=np.int64))


def test_a_timestamp_that_is_not_finite_is_refused_naming_its_sample():
    x = np.sin(np.arange(300) / 10)
    t = np.arange(300) * 0.01
    t[5] = np.nan
    with pytest.raises(ValueError, match=r"timestamps must be finite; sample 5 is nan"):
        ProjectionFilter(window=16, tau=0.05).fit(x, timestamps=t)
