"""A key serves the channels it has: a channel missing over a stretch (a sensor that starts
late or drops out) leaves the others filtered there, in every windowed filter and its fills."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa.cli import main
from tssdpa.estimators.input_notes import InputNote
from tssdpa.filters import ProjectionFilter
from tssdpa.signal.lowpass import zero_phase_lowpass
from tssdpa.signal.missing import fill_backward, fill_between, fill_forward


def _late_channel(n=2000, late=900, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    clean = np.column_stack([np.sin(2 * np.pi * t / 100), np.cos(2 * np.pi * t / 70)])
    x = clean + 0.2 * rng.normal(size=clean.shape)
    x[:late, 1] = np.nan  # a sensor that starts late
    return clean, x


def _rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


@pytest.mark.parametrize("causal", [True, False])
def test_a_late_channel_leaves_the_other_filtered_before_it_starts_without_a_note(causal):
    clean, x = _late_channel(n=1400)  # 500 rows with both (2000: the same ratios, seeds 0-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputNote)
        f = ProjectionFilter(causal=causal, window=[16, 32]).fit(x)
    y = f.filter(x)
    alone = _rmse(y[:900, 0], clean[:900, 0])
    assert alone < 0.75 * _rmse(x[:900, 0], clean[:900, 0])  # filtered, not held
    assert alone < 1.5 * _rmse(y[1000:, 0], clean[1000:, 0])  # about as well as with both
    assert np.isfinite(y).all()
    if causal:  # the late channel itself: back-filled from its first output
        np.testing.assert_array_equal(y[:900, 1], np.full(900, y[900, 1]))


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("degree", [0, 2])
def test_where_one_channel_is_missing_the_other_is_its_own_filter_at_width_over_root_two(
    causal, degree
):
    # embedding 1, two channels: distances over the one channel known are scaled by D / 1 = 2,
    # i.e. the other channel's filter with sigma / sqrt(2), once the window is inside the gap
    rng = np.random.default_rng(1)
    x = rng.normal(size=(600, 2))
    x[200:400, 1] = np.nan
    kw = dict(window=16, sigma=0.8, causal=causal, degree=degree, channel_scale=None)
    both = ProjectionFilter(**kw).filter(x)
    alone = ProjectionFilter(**{**kw, "sigma": 0.8 / np.sqrt(2)}).filter(x[:, :1])
    inside = slice(215, 400) if causal else slice(215, 385)
    np.testing.assert_allclose(both[inside, 0], alone[inside, 0], rtol=1e-12, atol=1e-12)
    assert not np.allclose(both[:200, 0], alone[:200, 0])  # with both channels: not that


def test_streaming_a_late_channel_equals_one_shot_for_any_split_and_step_by_step():
    _, x = _late_channel(n=400, late=150)
    x[250:290, 0] = np.nan  # and the other way round
    f = ProjectionFilter(window=16, embedding=2, sigma=0.7, decay=0.95)
    once, _ = f.filter(x, zi=f.initial_state(2))
    assert np.isnan(once[:150, 1]).all() and np.isfinite(once[:150, 0]).all()
    for cuts in ([1, 149, 151, 300], [10, 140, 160, 260, 280], list(range(240, 300, 7))):
        z, parts = f.initial_state(2), []
        for a, b in zip([0, *cuts], [*cuts, 400]):
            part, z = f.filter(x[a:b], zi=z)
            parts.append(part)
        np.testing.assert_array_equal(np.concatenate(parts), once)
    z, steps = f.initial_state(2), []
    for sample in x:
        out, z = f.step(sample, z)
        steps.append(out)
    np.testing.assert_allclose(np.array(steps), once, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(f.filter(x)[150:], once[150:])  # offline: back-filled only


def test_fills_work_channel_by_channel_keeping_what_is_defined():
    y = np.array([[np.nan, 1.0], [2.0, np.nan], [np.nan, np.nan], [4.0, 5.0], [np.nan, 7.0]])
    got, hold = fill_forward(y.copy(), np.array([9.0, np.nan]))
    np.testing.assert_array_equal(got, [[9, 1], [2, 1], [2, 1], [4, 5], [4, 7]])
    np.testing.assert_array_equal(hold, [4, 7])
    np.testing.assert_array_equal(
        fill_backward(y.copy()), [[2, 1], [2, np.nan], [np.nan, np.nan], [4, 5], [np.nan, 7]]
    )
    np.testing.assert_allclose(
        fill_between(y.copy()), [[2, 1], [2, 7 / 3], [3, 11 / 3], [4, 5], [4, 7]], rtol=1e-15
    )


def test_the_butterworth_base_bridges_each_channel_on_its_own():
    _, x = _late_channel(n=600, late=0)
    gappy = x.copy()
    gappy[100:300, 1] = np.nan
    got = zero_phase_lowpass(gappy, cutoff=0.1, order=2)
    np.testing.assert_array_equal(got[:, 0], zero_phase_lowpass(x[:, :1], 0.1, 2)[:, 0])


def test_the_cli_filters_the_column_beside_a_late_one(tmp_path, capsys):
    clean, x = _late_channel()
    p, out = tmp_path / "late.csv", tmp_path / "o.csv"
    pd.DataFrame({"gyro": x[:, 0], "mag": x[:, 1]}).to_csv(p, index=False)
    quick = ["--params", '{"window": [16], "embedding": [1]}']  # the search is checked above
    assert main(["filter", str(p), "--method", "projection", "--out", str(out), *quick]) == 0
    assert "note:" not in capsys.readouterr().err
    y = pd.read_csv(out)["gyro_filtered"].to_numpy()
    assert _rmse(y[:900], clean[:900, 0]) < 0.75 * _rmse(x[:900, 0], clean[:900, 0])
