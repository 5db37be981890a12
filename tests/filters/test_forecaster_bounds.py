"""A forecaster keeps to the bounds its fitted series sits on (counts at 0, an end stop)."""

import numpy as np
import pytest

from tssdpa.filters import ProjectionForecaster, ResidualProjectionForecaster
from tssdpa.filters.library_cache import BOUND_MIN, BOUND_SHARE, hard_bounds


def weekly_counts(n=520, seed=0):
    """Counts with a yearly season, 0 in about half of the weeks."""
    rng = np.random.default_rng(seed)
    season = np.clip(np.sin(2 * np.pi * np.arange(n) / 52), 0, None)
    return rng.poisson(12 * season**2).astype(float)


def test_a_pile_at_the_least_value_is_a_bound_and_a_lone_least_value_is_not():
    y = np.c_[weekly_counts(), np.linspace(-1, 1, 520)]
    low, high = hard_bounds(y)
    assert low[0] == 0 and np.isneginf(low[1])
    assert np.isposinf(high).all()


def test_a_bound_needs_a_share_of_the_known_samples_not_only_a_repeat():
    y = np.r_[np.zeros(4), np.arange(1.0, 200)]  # 0 four times: too few to call a floor
    assert np.isneginf(hard_bounds(y[:, None])[0][0])
    with_gaps = np.r_[np.zeros(5), np.full(300, np.nan), np.arange(1.0, 60)]
    assert hard_bounds(with_gaps[:, None])[0][0] == 0  # 5 of 64 known samples


def test_the_tail_of_a_coarsely_quantised_reading_is_no_bound():
    # whole degrees: the least and greatest values hold 6% each, fewer than the next values in
    levels, p = np.arange(17.0, 24.0), [0.06, 0.1, 0.2, 0.28, 0.2, 0.1, 0.06]
    y = np.random.default_rng(0).choice(levels, size=1000, p=p)
    low, high = hard_bounds(y[:, None])
    assert np.isneginf(low[0]) and np.isposinf(high[0])
    assert hard_bounds(np.r_[y, np.full(100, 17.0)][:, None])[0][0] == 17  # now a pile


@pytest.mark.parametrize("model", ["linear", "local_linear", "hybrid"])
def test_no_forecast_of_counts_goes_below_the_zero_they_sit_on(model):
    y = weekly_counts()
    fc = ProjectionForecaster(horizon=4, model=model, embedding=[1, 2, 3]).fit(y[:400])
    path = np.asarray(fc.forecast_path(y))
    assert np.nanmin(path) == 0  # reaches the bound: the unclipped models went below it
    assert np.nanmin(np.asarray(fc.forecast(y, horizon=3))) >= 0
    assert np.min(np.asarray(fc.predict(20, y=y[:450]))) >= 0


def test_the_same_unbounded_series_is_forecast_below_its_least_value():
    # the clip is the bound's, not a range's: the counts shifted off their pile are free
    y = weekly_counts() + np.random.default_rng(1).normal(0, 1e-3, 520)
    fc = ProjectionForecaster(horizon=4, model="linear", embedding=[1, 2, 3]).fit(y[:400])
    assert np.nanmin(np.asarray(fc.forecast_path(y))) < y[:400].min()


def test_a_bound_holds_per_channel_and_after_save_and_load(tmp_path):
    y = np.c_[weekly_counts(), np.sin(np.arange(520) / 5.0)]
    fc = ProjectionForecaster(horizon=2, model="linear", embedding=[1, 2]).fit(y[:400])
    path = np.asarray(fc.forecast_path(y))
    assert np.nanmin(path[..., 0]) >= 0 and np.nanmin(path[..., 1]) < 0
    fc.save(tmp_path / "fc")
    loaded = ProjectionForecaster.load(tmp_path / "fc")
    np.testing.assert_array_equal(np.asarray(loaded.forecast_path(y)), path)


def test_channel_independent_models_keep_their_own_channels_bounds():
    y = np.c_[weekly_counts(), weekly_counts(seed=3) + 2.0]
    fc = ProjectionForecaster(horizon=2, model="linear", embedding=[1, 2],
                              channel_independent=True).fit(y[:400])  # fmt: skip
    path = np.asarray(fc.forecast_path(y))
    assert np.nanmin(path[..., 0]) >= 0 and np.nanmin(path[..., 1]) >= 2


def test_both_ends_of_a_two_valued_channel_are_bounds():
    # an on/off channel: the minority state's count is no tail of a quantised reading (there
    # is no value between), yet it was compared with the majority's and left unbounded
    y = (np.arange(700) % 7 < 2).astype(float)  # on 2 of every 7 samples
    low, high = hard_bounds(np.c_[y, 1 - y])
    np.testing.assert_array_equal(low, [0, 0])
    np.testing.assert_array_equal(high, [1, 1])


@pytest.mark.parametrize("base", ["autoreg", "dlinear"])
def test_the_hybrids_forecasts_of_counts_keep_to_their_zero_too(base, tmp_path):
    # its linear base forecast the counts' troughs below 0 (by 2.5), and the residual
    # correction did not lift them: every forecast is now clipped as ProjectionForecaster's
    y = weekly_counts()
    fc = ResidualProjectionForecaster(base=base, base_params={"lags": 26} if base == "autoreg"
                                      else {}, embedding=4, horizon=4, lookback=26)  # fmt: skip
    fc.fit(y[:400])
    path = np.asarray(fc.forecast_path(y))
    assert np.nanmin(path) == 0
    assert np.nanmin(np.asarray(fc.forecast(y, horizon=3))) >= 0
    assert min(np.min(fc.predict(20, y=y[:450])), np.min(fc.predict(20))) >= 0
    fc.save(tmp_path / "fc")
    loaded = ResidualProjectionForecaster.load(tmp_path / "fc")
    np.testing.assert_array_equal(np.asarray(loaded.forecast_path(y)), path)


def test_the_hybrid_keeps_each_channels_bound_and_leaves_an_unbounded_one_free():
    y = np.c_[weekly_counts(), np.sin(np.arange(520) / 5.0) - 1.1 * (np.arange(520) > 450)]
    fc = ResidualProjectionForecaster(base_params={"lags": 26}, embedding=4, horizon=2)
    path = np.asarray(fc.fit(y[:400]).forecast_path(y))
    assert np.nanmin(path[..., 0]) >= 0 and np.nanmin(path[..., 1]) < y[:400, 1].min()


def sorted_bounds(train):
    """hard_bounds as first written: np.unique sorts each channel (the obvious reference)."""
    low, high = np.full(train.shape[1], -np.inf), np.full(train.shape[1], np.inf)
    for c, v in enumerate(train.T):
        values, counts = np.unique(v[np.isfinite(v)], return_counts=True)  # sorted
        need = max(BOUND_SHARE * counts.sum(), BOUND_MIN)
        ends = len(values) <= 2
        if len(values) and counts[0] >= need and (ends or counts[0] > counts[1]):
            low[c] = values[0]
        if len(values) and counts[-1] >= need and (ends or counts[-1] > counts[-2]):
            high[c] = values[-1]
    return low, high


@pytest.mark.parametrize("seed", range(40))
def test_counting_the_ends_gives_the_bounds_sorting_gave(seed):
    # hard_bounds counts the end values and the next ones in (O(T)) instead of sorting each
    # channel: the same bounds on piles, ties, one or two values, NaN, inf, empty channels
    rng = np.random.default_rng(seed)
    T, C = int(rng.integers(0, 120)), 8
    levels = rng.integers(1, 6, C)  # few distinct values: ties at both ends
    y = np.stack([rng.choice(np.arange(k) - 2.0, T, p=rng.dirichlet(np.ones(k)))
                  for k in levels], 1) * rng.choice([1, 0.5, 1e-3], C)  # fmt: skip
    y[:, 0] += rng.normal(0, 1, T) * (rng.random(T) < 0.7)  # a pile at 0 and a spread
    y[rng.random((T, C)) < rng.random()] = np.nan
    y[rng.random((T, C)) < 0.02] = rng.choice([np.inf, -np.inf])
    y[:, 1] = np.nan if seed % 4 == 0 else y[:, 1]  # no known sample
    for got, want in zip(hard_bounds(y), sorted_bounds(y)):
        np.testing.assert_array_equal(got, want)


def stepped_level():
    """A level raised by 10 at irregular times (a set-point, a headcount), 100 .. 180; its
    first 650 samples end on their longest plateau, 150: a pile at their greatest value."""
    lengths = [80, 120, 90, 110, 100, 150, 120, 100, 130]
    return np.repeat(np.arange(100.0, 190.0, 10.0), lengths), 650


@pytest.mark.parametrize("make", [
    lambda: ProjectionForecaster(horizon=2),
    lambda: ResidualProjectionForecaster(base="autoreg", base_params={"lags": 2}, embedding=2,
                                         horizon=2),
])  # fmt: skip
def test_a_bound_the_forecast_series_has_crossed_clips_its_forecasts_no_more(make):
    # every forecast was clipped to 150 while the series sat at 160 .. 180, 30 above it
    y, n_fit = stepped_level()
    fc = make().fit(y[:n_fit])
    assert hard_bounds(y[:n_fit, None])[1][0] == 150
    path = np.asarray(fc.forecast_path(y))
    crossed = np.flatnonzero(y > 150)[0]  # the first origin whose past is above the pile
    assert np.nanmax(path[:crossed]) <= 150  # before it, the bound holds
    np.testing.assert_allclose(path[-20:-2, 0], 180, atol=1)
    np.testing.assert_allclose(np.asarray(fc.forecast(y, horizon=1))[-20:-1], 180, atol=1)
    np.testing.assert_allclose(np.asarray(fc.predict(4, y=y)), 180, atol=1)


def test_a_bound_met_again_within_rounding_is_not_crossed():
    # the pile's value read back in float32 lies 6e-6 past 150.1: that dropped the bound for
    # every later origin (a forecast of 155 from a series at its top pile)
    from tssdpa.filters.library_cache import within_bounds

    out = np.full((3, 1, 1), 155.0)
    y = np.array([[149.0], [np.float32(150.1)], [150.0]])
    clipped = within_bounds(out, y, (np.array([-np.inf]), np.array([150.1])))
    np.testing.assert_array_equal(clipped[:, 0, 0], 150.1)
    crossed = within_bounds(out, np.array([[149.0], [150.2], [150.0]]),
                            (np.array([-np.inf]), np.array([150.1])))  # fmt: skip
    np.testing.assert_array_equal(crossed[:, 0, 0], [150.1, 155.0, 155.0])
