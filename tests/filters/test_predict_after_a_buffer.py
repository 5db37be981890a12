"""``predict(steps, y=buffer)``: forecasts past the end of a live loop's buffer, those of the
buffer's last origin in its forecast path, returned like the buffer."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa import ProjectionForecaster
from tssdpa.baselines import AutoRegForecaster
from tssdpa.filters.residual import ResidualProjectionForecaster


def _series(n=1100, seed=0, channels=1):
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None] + 7 * np.arange(channels)
    x = np.sin(t / 9) + 0.4 * np.sin(t / 23) ** 3 + 0.03 * rng.standard_normal((n, channels))
    return x[:, 0] if channels == 1 else x


def test_a_switching_forecaster_gives_its_paths_last_row_exactly():
    """Contenders switch on every origin's recent errors: the whole path is forecast."""
    x = _series()
    x[560:] = 0.4 * x[560:] + 0.2 * np.random.default_rng(0).standard_normal(len(x) - 560)
    fc = ProjectionForecaster(horizon=3).fit(x[:800])  # a change of regime: contenders kept
    assert all(fc.contenders_.get(h) for h in (1, 2, 3))
    buf = x[700:1000]
    np.testing.assert_array_equal(fc.predict(3, y=buf), fc.forecast_path(buf, 3)[-1])


@pytest.mark.parametrize(
    "make",
    [
        lambda: AutoRegForecaster(lags=8),
        lambda: ResidualProjectionForecaster(base="autoreg", base_params={"lags": 8}, horizon=3),
        lambda: ProjectionForecaster(horizon=3, model="local_linear", channel_independent=True),
    ],
)
def test_every_forecaster_predicts_after_a_buffer(make):
    x = _series(channels=2)
    fc = make().fit(x[:700])
    buf = x[800:1000]
    np.testing.assert_allclose(fc.predict(3, y=buf), fc.forecast_path(buf, 3)[-1],
                               rtol=1e-9, atol=1e-12)  # fmt: skip


def test_beyond_the_horizon_it_goes_on_from_its_own_forecasts():
    """Without a buffer, predict forecasts past the fitted series: a buffer that is the fitted
    series (whose rows are all keys already) gives the same steps, the recursive ones too."""
    x = _series()
    fc = ProjectionForecaster(horizon=4, model="local_linear", embedding=3).fit(x[:600])
    np.testing.assert_allclose(fc.predict(11, y=x[:600]), fc.predict(11), rtol=1e-9, atol=1e-12)


def test_it_is_returned_like_the_buffer():
    x = _series(channels=2)
    fc = ProjectionForecaster(horizon=3, model="mean", embedding=3).fit(x[:600])
    buf = x[600:800]
    assert fc.predict(5, y=buf).shape == (5, 2)
    one = ProjectionForecaster(horizon=3, model="mean", embedding=3).fit(x[:600, 0])
    assert one.predict(5, y=buf[:, 0]).shape == (5,)
    assert one.predict(5, y=buf[:, :1]).shape == (5, 1)

    index = pd.date_range("2026-01-01", periods=200, freq="10ms", name="time")
    frame = pd.DataFrame(buf, index=index, columns=["gx", "gy"])
    got = fc.predict(5, y=frame)
    assert isinstance(got, pd.DataFrame) and list(got.columns) == ["gx", "gy"]
    expected = pd.date_range(index[-1], periods=6, freq="10ms", name="time")[1:]
    pd.testing.assert_index_equal(got.index, expected)
    np.testing.assert_array_equal(got.to_numpy(), fc.predict(5, y=buf))

    series = pd.Series(buf[:, 0], index=index, name="gx")
    got = one.predict(5, y=series)
    assert isinstance(got, pd.Series) and got.name == "gx"
    pd.testing.assert_index_equal(got.index, expected)

    torch = pytest.importorskip("torch")
    got = fc.predict(5, y=torch.tensor(buf, dtype=torch.float32))
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32 and got.shape == (5, 2)


def test_a_time_index_without_a_regular_step_is_told_to_give_positions():
    """A logger's clock jitters (the fusion IMU's steps run 7.6-30 ms about 10 ms): pandas
    infers no frequency, so the forecasts are labelled by position past the buffer, a
    RangeIndex where a DatetimeIndex was given -- without a word while the jitter stayed
    under the uneven-sampling tolerance."""
    from tssdpa.estimators.spacing import UnevenSamplingWarning

    x = _series()
    fc = AutoRegForecaster(lags=4).fit(x[:600])
    jitter = np.random.default_rng(1).uniform(-1, 1, 200).round(1)
    index = pd.to_datetime(np.cumsum(10 + jitter), unit="ms")
    with pytest.warns(UnevenSamplingWarning, match=r"no regular step.*by position, from 200"):
        got = fc.predict(5, y=pd.Series(x[600:800], index=index))
    pd.testing.assert_index_equal(got.index, pd.RangeIndex(200, 205))
    regular = pd.date_range("2026-01-01", periods=200, freq="10ms")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnevenSamplingWarning)
        fc.predict(5, y=pd.Series(x[600:800], index=regular))


def test_a_buffer_of_other_channels_is_refused_naming_y():
    x = _series(channels=2)
    fc = ProjectionForecaster(horizon=2, model="mean", embedding=3).fit(x[:600])
    with pytest.raises(ValueError, match="y"):
        fc.predict(3, y=x[600:800, :1])


def test_the_buffer_is_not_changed():
    x = _series()
    fc = ProjectionForecaster(horizon=2, model="mean", embedding=3).fit(x[:600])
    buf = x[600:800].copy()
    buf[50] = np.nan
    before = buf.copy()
    fc.predict(6, y=buf)
    np.testing.assert_array_equal(buf, before)


@pytest.mark.parametrize(
    "make",
    [
        lambda: AutoRegForecaster(lags=8),
        lambda: ProjectionForecaster(horizon=3, model="mean", embedding=3),
        lambda: ResidualProjectionForecaster(base="autoreg", base_params={"lags": 8}, horizon=3),
    ],
)
def test_after_a_dropout_at_the_end_it_forecasts_from_the_last_row_seen_past_the_gap(make):
    """Rows with no sample at the end: the forecasts 3 + 1 .. 3 + steps ahead of the last row
    seen (its values carried over the gap and forecast from, before), the pandas index going
    on from the last row given."""
    x = _series(channels=2)
    fc = make().fit(x[:600])
    buf = x[600:800].copy()
    buf[-3:] = np.nan
    np.testing.assert_allclose(fc.predict(5, y=buf), fc.predict(8, y=buf[:-3])[3:],
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    index = pd.RangeIndex(600, 800, name="row")
    got = fc.predict(5, y=pd.DataFrame(buf, index=index, columns=["a", "b"]))
    pd.testing.assert_index_equal(got.index, pd.RangeIndex(800, 805, name="row"))
    np.testing.assert_allclose(fc.predict(2, y=buf[:-2]), fc.predict(3, y=buf[:-3])[1:],
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    # fitted on a series ending in the dropout: predict() alike
    gapped = x[:600].copy()
    gapped[-3:] = np.nan
    fc = make().fit(gapped)
    np.testing.assert_allclose(fc.predict(5), fc.predict(8, y=gapped[:-3])[3:],
                               rtol=1e-9, atol=1e-12)  # fmt: skip


def test_a_buffer_too_short_once_its_dropout_is_cut_off_is_warned_of():
    """Its length counted the missing rows: two samples and three missing rows forecast NaN
    from an AR(3) without a word."""
    from tssdpa.estimators.input_notes import ShortHistoryWarning

    fc = AutoRegForecaster(lags=3).fit(np.sin(np.arange(200) * 0.3))
    with pytest.warns(ShortHistoryWarning, match="last 3 rows hold no sample"):
        got = fc.predict(2, y=np.array([0.1, 0.2, np.nan, np.nan, np.nan]))
    assert np.isnan(got).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShortHistoryWarning)
        assert np.isfinite(fc.predict(2, y=np.array([0.0, 0.1, 0.2, np.nan]))).all()


def test_a_loop_of_predicts_on_a_jittered_clock_is_told_once_per_line():
    """Python tells a warning once per line of the caller, unless a catch_warnings resets its
    registry: the library's own, around pandas' inferred_freq, did so at every call, and a
    control loop was told the same warning every tick."""
    t = np.arange(400)
    jitter = np.r_[0, np.random.default_rng(0).integers(0, 3, 399)]
    index = pd.Timestamp("2026-01-01") + pd.to_timedelta(t * 10 + jitter, unit="ms")
    y = pd.Series(np.sin(t / 9), index=index)
    fc = AutoRegForecaster(lags=4).fit(y.to_numpy()[:300])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        for i in range(5):
            fc.predict(2, y=y[i : i + 100])
    assert len(seen) == 1, [str(w.message) for w in seen]


def test_a_buffer_with_missing_rows_is_told_once_and_that_its_forecasts_go_by_position():
    """The uneven-sampling warning and the position warning both fired for one cause: the
    first now says the forecasts are labelled by position, and the second stays silent."""
    from tssdpa.estimators.spacing import UnevenSamplingWarning

    t = np.delete(np.arange(300), np.arange(100, 140))  # 40 rows missing
    y = pd.Series(np.sin(t / 9), index=pd.Timestamp("2026-01-01") + pd.to_timedelta(10 * t, "ms"))
    fc = AutoRegForecaster(lags=4).fit(np.sin(np.arange(300) / 9))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = fc.predict(2, y=y)
    told = [str(w.message) for w in seen if issubclass(w.category, UnevenSamplingWarning)]
    assert len(told) == 1 and "predict labels its forecasts by position" in told[0], told
    assert isinstance(got.index, pd.RangeIndex)
