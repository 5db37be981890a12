"""The default fit() on random awkward series: lengths, channels, flat channels, steps, gaps
scattered, in bursts, at the start, a channel missing for a stretch, pandas input.

Each case ends in a result of the input's shape, finite wherever enough is known, with the
caller's data unchanged -- or in a ``ValueError`` that names the argument. Two crashes of the
default fits on missing data (a non-local embedding with no complete sample, a linear pattern
with no complete row) were found this way; the seeds here are a fixed sample of such cases,
more of them under ``slow``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from tssdpa.filters import ProjectionFilter, ProjectionForecaster

#: an overflow or an empty mean is a silently wrong number: fail on it
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

FAST_SEEDS = (0, 1, 2, 16)  # 16: a channel never known
SLOW_SEEDS = [s for s in range(40) if s not in FAST_SEEDS]


def _channel(rng, t):
    kind = rng.integers(5)
    n = len(t)
    if kind == 0:  # a few sinusoids
        return sum(rng.uniform(0.5, 2) * np.sin(rng.uniform(0.01, 0.5) * t + rng.uniform(0, 6))
                   for _ in range(rng.integers(1, 4)))  # fmt: skip
    if kind == 1:  # a random walk
        return np.cumsum(rng.standard_normal(n))
    if kind == 2:  # steps
        return np.repeat(rng.standard_normal(n // 25 + 1), 25)[:n]
    if kind == 3:  # flat
        return np.full(n, rng.uniform(-5, 5))
    return 1e3 * rng.standard_normal(n)  # white, in large units


def _series(seed):
    """(T, C) values with gaps, how to pass them (array or DataFrame), and the clean part."""
    rng = np.random.default_rng(seed)
    T, C = int(rng.integers(12, 700)), int(rng.integers(1, 4))
    t = np.arange(T, dtype=float)
    x = np.column_stack([_channel(rng, t) for _ in range(C)])
    x = x + 0.05 * np.std(x) * rng.standard_normal(x.shape)
    units = rng.random()
    if units < 0.2:  # tiny or huge units
        x = x * 10.0 ** rng.choice([-140, -8, 8, 140])
    elif units < 0.3:  # whole numbers (a counter, an ADC reading): no gaps
        return x.round().astype(np.int64), bool(rng.integers(2)), rng
    elif units < 0.4:
        x = x.astype(np.float32)
    gaps = rng.integers(6)
    if gaps == 1:  # scattered
        x[rng.random(x.shape) < rng.uniform(0.01, 0.6)] = np.nan
    elif gaps == 2:  # a burst
        start, length = int(rng.integers(T)), int(rng.integers(1, T // 5 + 2))
        x[start : start + length] = np.nan
    elif gaps == 3:  # leading gap in one channel
        x[: int(rng.integers(1, T // 3 + 2)), int(rng.integers(C))] = np.nan
    elif gaps == 4:  # one channel missing for a stretch in the middle
        a = int(rng.integers(T // 4, T // 2))
        x[a : a + T // 4, int(rng.integers(C))] = np.nan
    elif gaps == 5:  # one channel never known
        x[:, int(rng.integers(C))] = np.nan
    as_frame = bool(rng.integers(2))
    return x, as_frame, rng


def _passed(x, as_frame):
    return pd.DataFrame(x, columns=[f"c{i}" for i in range(x.shape[1])]) if as_frame else x.copy()


def _names_the_argument(err: ValueError, *names) -> bool:
    """The message starts with the argument's name (and the channel's, by its column label
    where it has one) and says what is wrong with it."""
    said = r"(channel \d+ |column '[^']*' |has |is |contains |must )"
    return any(re.match(rf"{n} {said}", str(err)) for n in names)


def _check_filter(seed, causal, with_target):
    x, as_frame, rng = _series(seed)
    data = _passed(x, as_frame)
    before = data.copy()
    try:
        f = ProjectionFilter(causal=causal)
        if with_target:  # fitted on the first two thirds, with a clean copy that has gaps too
            n = 2 * len(x) // 3
            target = np.nan_to_num(np.asarray(x[:n], dtype=float), nan=0.0)
            target[rng.random(target.shape) < 0.02] = np.nan
            f.fit(data[:n], target=target)
        else:
            f.fit(data)
        out = np.asarray(f.filter(data))
    except ValueError as err:
        assert _names_the_argument(err, "x", "target"), str(err)
        return
    if as_frame:
        pd.testing.assert_frame_equal(data, before)
    else:
        np.testing.assert_array_equal(data, before)
    assert out.shape == x.shape
    assert np.isfinite(out[np.isfinite(x)]).all()


def _check_forecaster(seed):
    x, as_frame, rng = _series(seed)
    data = _passed(x, as_frame)
    before = data.copy()
    h = int(rng.integers(1, 6))
    try:
        fc = ProjectionForecaster(horizon=h).fit(data)
        out = np.asarray(fc.forecast(data, h)).reshape(x.shape)
    except ValueError as err:
        assert _names_the_argument(err, "y"), str(err)
        return
    if as_frame:
        pd.testing.assert_frame_equal(data, before)
    else:
        np.testing.assert_array_equal(data, before)
    # an origin whose every channel was known once before the span of the longest pattern
    # has a forecast (gaps in a query's pattern are carried forward)
    first = max(int(np.argmax(np.isfinite(x[:, c]))) for c in range(x.shape[1]))
    assert np.isfinite(out[first + fc._predict_context() :]).all()


@pytest.mark.parametrize("seed", FAST_SEEDS)
@pytest.mark.parametrize("causal", [True, False])
def test_default_filter_fit_on_awkward_series(seed, causal):
    _check_filter(seed, causal, with_target=False)


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_default_filter_fit_with_a_target_on_awkward_series(seed):
    _check_filter(seed, causal=False, with_target=True)


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_default_forecaster_fit_on_awkward_series(seed):
    _check_forecaster(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_default_fits_on_more_awkward_series(seed):
    for causal in (True, False):
        _check_filter(seed, causal, with_target=False)
    _check_filter(seed, causal=False, with_target=True)
    _check_forecaster(seed)
