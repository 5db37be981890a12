"""ResidualProjectionFilter(causal=True) as a stream: filter(x, zi) / step against one pass."""

from __future__ import annotations

import numpy as np
import pytest

from tssdpa.filters import ResidualProjectionFilter


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    t = np.arange(900)
    clean = np.column_stack([np.sign(np.sin(t * 0.03)), np.sin(t * 0.05)])
    noisy = clean + 0.3 * rng.standard_normal(clean.shape)
    f = ResidualProjectionFilter(window=6, embedding=4, causal=True)
    return f.fit(noisy[:600], target=clean[:600]), noisy[600:]


def _holes(x):
    x = x.copy()
    x[:9, 0] = np.nan  # channel 0 starts late
    x[40:75, 1] = np.nan  # a gap longer than the state's history
    x[120, 0] = np.nan
    return x


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_any_split_of_the_series_gives_the_one_pass_output(fitted, seed):
    f, x = fitted
    x = _holes(x)
    assert f.alpha_.max() > 0  # the correction is on: its keys' history is streamed too
    whole = f.filter(x)
    cuts = np.sort(np.random.default_rng(seed).choice(np.arange(1, len(x)), 12, replace=False))
    state, parts = f.initial_state(), []
    for chunk in np.split(x, cuts):
        y, state = f.filter(chunk, zi=state)
        parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts), whole, rtol=1e-12, atol=1e-12)
    assert np.isnan(whole[:9, 0]).all() and np.isfinite(whole[9:]).all()


def test_step_by_step_equals_the_one_pass_output_and_leaves_the_state_passed_in(fitted):
    f, x = fitted
    x = _holes(x)[:150]
    state, ys = f.initial_state(), []
    for sample in x:
        before = state.copy()
        y, new = f.step(sample, state)
        np.testing.assert_array_equal(state, before)
        ys.append(y)
        state = new
    np.testing.assert_allclose(np.array(ys), f.filter(x), rtol=1e-12, atol=1e-12)


def test_an_empty_chunk_gives_the_state_back_and_a_channel_without_readings_gives_nan(fitted):
    f, x = fitted
    state = f.initial_state()
    y, zf = f.filter(x[:0], zi=state)
    assert y.shape == (0, 2)
    np.testing.assert_array_equal(zf, state)
    dark = x[:5].copy()
    dark[:, 1] = np.nan  # a channel not yet read: NaN out, and still nothing in the state
    y, zf = f.filter(dark, zi=state)
    assert np.isnan(y[:, 1]).all() and np.isfinite(y[:, 0]).all() and np.isnan(zf[:, 1]).all()


def test_a_zero_phase_filter_or_a_wrong_state_is_refused_naming_it(fitted):
    f, x = fitted
    with pytest.raises(ValueError, match="zi has shape"):
        f.filter(x[:10], zi=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="n_channels=1"):
        f.initial_state(n_channels=1)
    offline = ResidualProjectionFilter(window=6, embedding=4, causal=False)
    with pytest.raises(ValueError, match="zero-phase"):
        offline.initial_state()
    with pytest.raises(ValueError, match="zi is only defined for causal=True"):
        offline.filter(x[:10], zi=f.initial_state())
    # step with no state said "state must be what initial_state() ... returned", which
    # initial_state refuses here
    with pytest.raises(ValueError, match="zero-phase"):
        offline.step(x[0], None)


def test_a_saved_filter_streams_as_the_fitted_one(fitted, tmp_path):
    f, x = fitted
    f.save(tmp_path / "f")
    g = ResidualProjectionFilter.load(tmp_path / "f")
    y1, z1 = f.filter(x[:50], zi=f.initial_state())
    y2, z2 = g.filter(x[:50], zi=g.initial_state())
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(z1, z2)


def test_a_filter_of_one_tap_and_one_sample_patterns_keeps_the_reading_a_gap_repeats():
    """Its reach is the sample itself: with no history kept a missing sample came out NaN
    where the one-pass filter repeats the last reading."""
    rng = np.random.default_rng(0)
    clean = np.sin(np.arange(700) * 0.05)
    f = ResidualProjectionFilter(window=1, embedding=1, causal=True)
    f.fit(clean[:500] + 0.3 * rng.standard_normal(500), target=clean[:500])
    x = np.array([0.1, 0.2, np.nan, np.nan, 0.5, np.nan, 0.7])
    state, ys = f.initial_state(), []
    for sample in x:
        y, state = f.step(sample, state)
        ys.append(y)
    np.testing.assert_allclose(ys, f.filter(x), rtol=1e-12)


def test_step_checks_its_sample_and_state_by_name_as_projection_filter_step_does(fitted):
    """step converted its sample with a bare np.asarray and passed state on to filter: a
    tensor that requires grad raised torch's own RuntimeError, text numpy's 'could not
    convert string to float', a sample of the wrong length was named x ('x has 3
    channel(s)'), and state=None failed with 'not enough values to unpack'."""
    torch = pytest.importorskip("torch")
    f, x = fitted
    state = f.initial_state()
    y, _ = f.step(torch.tensor(x[0], requires_grad=True), state)
    np.testing.assert_array_equal(y, f.step(x[0], state)[0])
    half = torch.tensor(x[0]).to(torch.bfloat16)  # numpy has none: it was refused, "got Tensor"
    np.testing.assert_array_equal(f.step(half, state)[0], f.step(half.double().numpy(), state)[0])
    np.testing.assert_array_equal(
        f.step(x[0], torch.tensor(state, requires_grad=True))[0], f.step(x[0], state)[0]
    )
    with pytest.raises(ValueError, match=r"sample has 3 value\(s\) but the ResidualProjection"):
        f.step(np.ones(3), state)
    with pytest.raises(TypeError, match="sample must be a real numeric"):
        f.step("ab", state)
    with pytest.raises(TypeError, match=r"state must be what initial_state\(\)"):
        f.step(x[0], None)


def test_step_names_a_state_of_the_wrong_shape_state_not_zi(fitted):
    # it said "zi has shape (3, 2), expected (...)", filter's argument, not step's
    f, x = fitted
    with pytest.raises(ValueError, match=r"^state has shape \(3, 2\), expected"):
        f.step(x[0], np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"^state has shape \(3, 1\), expected"):
        f.step(x[0], np.full((3, 1), np.nan))
    with pytest.raises(TypeError, match=r"^state must be real"):  # it kept the real part
        f.step(x[0], f.initial_state().astype(complex))


def test_step_refuses_a_pandas_row_with_other_columns_than_the_fit_as_filter_does():
    """filter refused a DataFrame with the fitted columns swapped, but step took a row of it
    (df.iloc[i], or df.iloc[[i]]) by position: each channel was filtered with the other's
    state and fit ('gyro' came back near 1000, the encoder's level)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    t = np.arange(400)
    clean = pd.DataFrame({"gyro": np.sin(t * 0.05), "enc": 1000 + 100 * np.cos(t * 0.02)})
    noisy = clean + rng.normal(size=clean.shape) * [0.2, 5.0]
    f = ResidualProjectionFilter(window=6, embedding=2, causal=True).fit(noisy, target=clean)
    swapped = noisy[["enc", "gyro"]]
    state = f.initial_state()
    with pytest.raises(ValueError, match=r"sample has the columns \['enc', 'gyro'\]"):
        f.step(swapped.iloc[0], state)
    with pytest.raises(ValueError, match=r"sample has the columns \['enc', 'gyro'\]"):
        f.step(swapped.iloc[[0]], state)
    y, _ = f.step(noisy.iloc[0], state)  # the fitted order, and a bare array, are taken
    np.testing.assert_array_equal(y, f.step(noisy.iloc[0].to_numpy(), state)[0])
