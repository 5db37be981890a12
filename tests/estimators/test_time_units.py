"""Timestamps in seconds, whatever the datetime resolution or timezone (issue 11): the
expectations are plain float seconds written out by hand, never the conversion under test."""

import datetime as dt
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa.baselines import (
    AutoRegForecaster,
    ButterworthFilter,
    DLinearForecaster,
    IdentityFilter,
    KalmanSmoother,
    MedianFilter,
    MovingAverageFilter,
    SavitzkyGolayFilter,
    WienerFIRFilter,
)
from tssdpa.checks import to_seconds
from tssdpa.estimators.arrays import as_2d
from tssdpa.estimators.spacing import UnevenSamplingWarning
from tssdpa.filters import ProjectionFilter, ProjectionForecaster, ResidualProjectionForecaster

SECONDS = np.array([0.0, 0.5, 1.25, 3.0])  # offsets from 2024-01-01T00:00:00Z
EPOCH_2024 = 1704067200.0  # 2024-01-01T00:00:00Z in Unix seconds (date -u -d 2024-01-01 +%s)


@pytest.mark.parametrize("unit", ["ms", "us", "ns"])
def test_a_datetime_index_of_any_resolution_becomes_seconds(unit):
    idx = pd.DatetimeIndex(
        [pd.Timestamp("2024-01-01") + pd.Timedelta(seconds=s) for s in SECONDS]
    ).as_unit(unit)
    _, meta = as_2d(pd.Series(np.arange(4.0), index=idx))
    np.testing.assert_allclose(meta.timestamps, EPOCH_2024 + SECONDS, rtol=0, atol=1e-6)


def test_a_timezone_aware_index_is_its_utc_instant():
    idx = pd.DatetimeIndex(
        [pd.Timestamp("2024-01-01 01:00") + pd.Timedelta(seconds=s) for s in SECONDS]
    ).tz_localize("Europe/Berlin")  # UTC+1 in January: the same instants as the naive UTC ones
    np.testing.assert_allclose(to_seconds(idx), EPOCH_2024 + SECONDS, rtol=0, atol=1e-6)


@pytest.mark.parametrize("unit", ["ms", "us", "ns"])
def test_numpy_datetime64_and_timedelta64_of_any_unit(unit):
    base = np.datetime64("2024-01-01T00:00:00", unit)
    offsets = (SECONDS * 1000).astype(np.int64).astype("timedelta64[ms]").astype(f"m8[{unit}]")
    np.testing.assert_allclose(to_seconds(base + offsets), EPOCH_2024 + SECONDS, atol=1e-6)
    np.testing.assert_allclose(to_seconds(offsets), SECONDS, atol=1e-12)


def test_python_datetimes_and_numbers():
    stamps = [dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=s) for s in SECONDS]
    np.testing.assert_allclose(to_seconds(stamps), EPOCH_2024 + SECONDS, atol=1e-6)
    np.testing.assert_array_equal(to_seconds([0, 0.5, 1.25, 3]), SECONDS)
    with pytest.raises(TypeError, match="timestamps must be numbers"):
        to_seconds(["soon", "later"])


def test_tau_acts_in_seconds_for_a_microsecond_index():
    """A filter with tau=1 s on a microsecond index equals the one given float seconds."""
    rng = np.random.default_rng(0)
    secs = np.round(np.cumsum(rng.uniform(0.05, 0.15, 300)), 6)  # representable in us
    x = np.sin(secs) + 0.1 * rng.normal(size=300)
    idx = pd.DatetimeIndex(pd.Timestamp("2024-01-01") + pd.to_timedelta(secs, unit="s"))
    f = ProjectionFilter(window=None, tau=1.0, min_step=0.01, embedding=1, degree=0, sigma=0.5)
    want = f.filter(x, timestamps=EPOCH_2024 + secs)
    got = f.filter(pd.Series(x, index=idx.as_unit("us"))).to_numpy()
    # float64 seconds near 1.7e9 are spaced 2.4e-7 apart: agreement to that rounding
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    wrong = f.filter(x, timestamps=(EPOCH_2024 + secs) * 1000)  # what a ms/us mix-up gives
    assert np.max(np.abs(wrong - want)) > 1e-3
    # step() takes a Timestamp as well as seconds
    y_num, _ = f.step(x[0], f.initial_state(1), timestamp=EPOCH_2024 + secs[0])
    y_ts, _ = f.step(x[0], f.initial_state(1), timestamp=idx[0])
    assert y_num == pytest.approx(y_ts)


@pytest.mark.parametrize("make", [pd.Series, lambda v: pd.DataFrame({"a": v})])
def test_complex_pandas_input_is_refused_not_cast(make):
    with pytest.raises(TypeError, match="x must be real"):
        as_2d(make(np.ones(5) + 1j))


_UNEVEN_FORECASTERS = {
    "autoreg": lambda: AutoRegForecaster(lags=3),
    "dlinear": lambda: DLinearForecaster(lookback=24, horizon=2),
    "projection": lambda: ProjectionForecaster(horizon=2),
    "residual": lambda: ResidualProjectionForecaster(embedding=4, horizon=2),
}


@pytest.mark.parametrize("make", sorted(_UNEVEN_FORECASTERS))
def test_a_forecaster_warns_where_its_datetime_index_is_not_equally_spaced(make):
    # every forecaster counts lags and horizons in samples: gaps of 10 s in a 1 s series
    # were fitted and forecast as equally spaced samples without a word
    steps = np.where(np.random.default_rng(0).random(400) < 0.1, 10.0, 1.0)
    t = np.cumsum(steps)
    y = pd.Series(np.sin(t / 8), index=pd.to_datetime(t, unit="s"))
    with pytest.warns(UnevenSamplingWarning, match="median step 1 s, largest 10 s") as told:
        est = _UNEVEN_FORECASTERS[make]().fit(y)
    assert type(est).__name__ in str(told[0].message)
    with pytest.warns(UnevenSamplingWarning, match="not equally spaced"):
        path = est.forecast_path(y, 2)
    # a warning, nothing else: the numbers are those of the bare array
    np.testing.assert_array_equal(path, est.forecast_path(y.to_numpy(), 2))
    np.testing.assert_array_equal(
        est.predict(3), _UNEVEN_FORECASTERS[make]().fit(y.to_numpy()).predict(3)
    )


def _uneven_series(n=400):
    """1 s samples with gaps of 10 s (one step in ten), noisy."""
    steps = np.where(np.random.default_rng(0).random(n) < 0.1, 10.0, 1.0)
    t = np.cumsum(steps)
    noise = 0.1 * np.random.default_rng(1).normal(size=n)
    return pd.Series(np.sin(t / 8) + noise, index=pd.to_datetime(t, unit="s"))


_FEW = dict(window=[8], embedding=[1], degree=[0])  # one candidate: a quick fit
_UNEVEN_DENOISERS = {
    "projection_causal": lambda: ProjectionFilter(**_FEW),
    "projection_zero_phase": lambda: ProjectionFilter(causal=False, **_FEW),
    "moving_average": lambda: MovingAverageFilter(window=5),
    "savitzky_golay": lambda: SavitzkyGolayFilter(window=11),
    "butterworth": lambda: ButterworthFilter(cutoff=0.2),
    "kalman": lambda: KalmanSmoother(),
    "wiener_fir": lambda: WienerFIRFilter(window=8),
    "median": lambda: MedianFilter(window=5),
}


@pytest.mark.parametrize("make", sorted(_UNEVEN_DENOISERS))
def test_a_denoiser_warns_where_its_datetime_index_is_not_equally_spaced(make):
    # every denoiser counts its window / cutoff / decay in samples: gaps of 10 s in a 1 s
    # series were filtered as equally spaced samples without a word (the CLI alone said so)
    x = _uneven_series()
    with pytest.warns(UnevenSamplingWarning, match="median step 1 s, largest 10 s") as told:
        est = _UNEVEN_DENOISERS[make]().fit(x)
    message = str(told[0].message)
    assert type(est).__name__ in message and "window, cutoff" in message
    assert told[0].filename == __file__  # the user's line, not the package's
    assert ("tau=" in message) == make.startswith("projection")  # its way to read the times
    with pytest.warns(UnevenSamplingWarning, match="x's DatetimeIndex is not equally spaced"):
        y = est.filter(x)
    # a warning, nothing else: the numbers are those of the bare array
    bare = _UNEVEN_DENOISERS[make]().fit(x.to_numpy())
    np.testing.assert_array_equal(y.to_numpy(), bare.filter(x.to_numpy()))


@pytest.mark.parametrize(
    "make, x",
    [
        # tau: the index is read as the sample times, gaps and all
        (lambda: ProjectionFilter(tau=5.0, **_FEW), _uneven_series()),
        (lambda: ProjectionFilter(tau=5.0, causal=False, **_FEW), _uneven_series()),
        # nothing counted in samples: the identity
        (IdentityFilter, _uneven_series()),
        # equally spaced, in seconds or in a calendar pandas names; or no index at all
        *[
            (make, pd.Series(np.sin(np.arange(300) / 8), index=index))
            for make in (lambda: ProjectionFilter(**_FEW), MovingAverageFilter)
            for index in (
                pd.date_range("2024-01-01", periods=300, freq="s"),
                pd.date_range("2024-01-01", periods=300, freq="MS"),
                pd.DatetimeIndex(np.array(pd.bdate_range("2024-01-01", periods=300))),
            )
        ],
        (lambda: ProjectionFilter(**_FEW), _uneven_series().to_numpy()),
        (ButterworthFilter, _uneven_series().to_numpy()),
    ],
)
def test_a_denoiser_reading_the_times_or_given_regular_data_does_not_warn(make, x):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnevenSamplingWarning)
        make().fit(x).filter(x)


@pytest.mark.parametrize(
    "index",
    [
        pd.date_range("2024-01-01", periods=300, freq="s"),
        pd.date_range("2024-03-01", periods=300, freq="h", tz="Europe/Berlin"),  # a DST change
        pd.date_range("2024-01-01", periods=300, freq="MS"),  # months of 28 to 31 days
        pd.DatetimeIndex(np.array(pd.bdate_range("2024-01-01", periods=300))),  # no freq set
        pd.to_datetime(np.arange(300) + 0.01 * np.sin(np.arange(300)), unit="s"),  # jitter
    ],
)
def test_a_regular_or_calendar_datetime_index_is_forecast_without_a_word(index):
    y = pd.Series(np.sin(np.arange(300) / 8), index=index)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AutoRegForecaster(lags=3).fit(y).forecast(y)


@pytest.mark.parametrize("step, grid", [("1h", "h"), ("1500ms", "1500ms"), ("1D", "24h")])
def test_the_uneven_warning_suggests_a_grid_of_the_median_step(step, grid):
    # it said x.resample('1s') whatever the step: an hourly series with gaps was told to
    # resample onto seconds, 3600 rows an hour, all but one NaN
    index = pd.date_range("2024-01-01", periods=200, freq=step)
    x = pd.Series(np.sin(np.arange(197) / 8), index=index.delete([50, 51, 120]))
    with pytest.warns(UnevenSamplingWarning, match=re.escape(f"x.resample('{grid}').mean()")):
        MovingAverageFilter(window=5).filter(x)
    assert len(x.resample(grid).mean()) == 200  # the suggestion: the regular grid back
    with pytest.warns(UnevenSamplingWarning, match=re.escape(f"y.resample('{grid}').mean()")):
        AutoRegForecaster().fit(x.rename(None))


def _irregular(n=120):
    """Samples at irregular times (seconds from the start) and a noisy sine at them."""
    rng = np.random.default_rng(3)
    secs = np.round(np.cumsum(rng.uniform(0.05, 0.15, n)), 6)  # representable in us
    return secs, np.sin(secs) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("frame", [False, True], ids=["series", "frame"])
def test_a_timedelta_index_is_a_time_axis_as_the_equivalent_datetime_index_is(frame):
    """With tau, a TimedeltaIndex (the times since the start) was refused ('pass timestamps=
    or a series with a DatetimeIndex'): its entries are times as a DatetimeIndex's are, read
    in the same unit (seconds; to_seconds), so it filters as the DatetimeIndex from any
    origin and as its seconds given as timestamps."""
    secs, x = _irregular()
    deltas = pd.to_timedelta(secs, unit="s")

    def wrap(index):
        return pd.DataFrame({"a": x}, index=index) if frame else pd.Series(x, index=index)

    def filtered(data, **timestamps):
        f = ProjectionFilter(window=None, tau=1.0, min_step=0.01, embedding=1, degree=0)
        out = f.fit(data, **timestamps).filter(data, **timestamps)
        return np.asarray(out, dtype=float).ravel()

    by_deltas = ProjectionFilter(window=None, tau=1.0, min_step=0.01, embedding=1, degree=0)
    out = by_deltas.fit(wrap(deltas)).filter(wrap(deltas))
    assert isinstance(out, pd.DataFrame if frame else pd.Series) and out.index.equals(deltas)
    got = np.asarray(out, dtype=float).ravel()
    by_dates = filtered(wrap(pd.Timestamp("2024-01-01") + deltas))
    # epoch seconds near 1.7e9 are spaced 2.4e-7 s apart: agreement to that rounding
    np.testing.assert_allclose(got, by_dates, rtol=0, atol=1e-6)
    np.testing.assert_allclose(got, filtered(x, timestamps=secs), rtol=0, atol=1e-9)


def test_a_timedelta_index_not_equally_spaced_is_warned_of_by_its_name():
    # a TimedeltaIndex with gaps is forecast as equally spaced samples, as a DatetimeIndex is
    steps = np.where(np.random.default_rng(0).random(400) < 0.1, 10.0, 1.0)
    y = pd.Series(np.sin(np.cumsum(steps) / 8), index=pd.to_timedelta(np.cumsum(steps), "s"))
    with pytest.warns(UnevenSamplingWarning, match="y's TimedeltaIndex is not equally spaced"):
        AutoRegForecaster(lags=3).fit(y)
    regular = pd.Series(y.to_numpy(), index=pd.timedelta_range(0, periods=400, freq="s"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnevenSamplingWarning)
        AutoRegForecaster(lags=3).fit(regular)


@pytest.mark.parametrize("kind", ["datetime", "timedelta"])
def test_timestamps_that_disagree_with_the_series_time_index_are_refused_naming_them(kind):
    """timestamps= given with a series carrying its own time index silently replaced the
    index: the data was filtered at times it does not hold (with times 100 s apart instead of
    its own, the output moved by ~0.4). Times that disagree are refused in fit, filter and a
    stream's filter; the index's own times given again are taken."""
    secs, x = _irregular()
    if kind == "datetime":
        index, own = pd.Timestamp("2024-01-01") + pd.to_timedelta(secs, "s"), EPOCH_2024 + secs
    else:
        index, own = pd.to_timedelta(secs, "s"), secs
    s = pd.Series(x, index=index)
    f = ProjectionFilter(window=None, tau=1.0, min_step=0.01, embedding=1, degree=0, sigma=0.5)
    other = np.arange(len(x)) * 100.0
    with pytest.raises(ValueError, match=r"timestamps= and x's index disagree \(row 0"):
        f.fit(s, timestamps=other)
    f.fit(s)
    for call in (lambda t: f.filter(s, timestamps=t),
                 lambda t: f.filter(s, zi=f.initial_state(), timestamps=t)[0]):  # fmt: skip
        with pytest.raises(ValueError, match="timestamps= and x's index disagree"):
            call(other)
        with pytest.raises(ValueError, match="timestamps= and x's index disagree"):
            call(own[::-1].cumsum())  # another series of times, increasing too
        np.testing.assert_allclose(call(own).to_numpy(), call(None).to_numpy(), atol=1e-9)
        np.testing.assert_array_equal(call(index).to_numpy(), call(None).to_numpy())
    f.fit(s, timestamps=own)  # the same times twice: taken


def test_a_pandas_step_sample_carries_its_time_and_a_disagreeing_timestamp_is_refused():
    """As filter reads a time index, step reads the time of a pandas sample (a row
    df.iloc[i], named by its time, or a one-row frame df.iloc[[i]]): before, it was told to
    give timestamp=, and a timestamp= other than the row's time was taken without a word."""
    secs, x = _irregular(40)
    index = pd.Timestamp("2024-01-01") + pd.to_timedelta(secs, "s")
    df = pd.DataFrame({"a": x, "b": x[::-1].copy()}, index=index)
    f = ProjectionFilter(window=None, tau=1.0, min_step=0.01, embedding=1, degree=0, sigma=0.5)
    f.fit(df)
    rows, frames, given = f.initial_state(), f.initial_state(), f.initial_state()
    for i in range(len(df)):
        y_row, rows = f.step(df.iloc[i], rows)
        y_frame, frames = f.step(df.iloc[[i]], frames)
        y_given, given = f.step(df.iloc[i].to_numpy(), given, timestamp=index[i])
        np.testing.assert_array_equal(y_row, y_given)
        np.testing.assert_array_equal(np.ravel(y_frame), y_given)
    f.step(df.iloc[0], f.initial_state(), timestamp=index[0])  # its own time again: taken
    with pytest.raises(ValueError, match="timestamp= and the sample's own time.*disagree"):
        f.step(df.iloc[1], rows, timestamp=index[0])
    with pytest.raises(ValueError, match="timestamp= and the sample's own time.*disagree"):
        f.step(df.iloc[[1]], rows, timestamp=EPOCH_2024)


def _series_missing_time_30():
    """Irregular seconds, a series on them whose index is NaT at row 30, and a filter with tau."""
    secs, x = _irregular(50)
    index = pd.Timestamp("2024-01-01") + pd.to_timedelta(secs, "s")
    s = pd.Series(x, index=index.where(np.arange(50) != 30, pd.NaT))
    return secs, s, ProjectionFilter(window=None, tau=1.0, min_step=0.01, embedding=1, degree=0)


def test_timestamps_beside_an_index_with_a_missing_time_name_the_row_that_differs():
    # a NaT in the index made the tolerance NaN: every row "disagreed", and the error named
    # row 0, whose times were the same
    secs, s, f = _series_missing_time_30()
    with pytest.raises(ValueError, match=r"x's index disagree \(row 30: .* against nan s"):
        f.fit(s, timestamps=EPOCH_2024 + secs)


def test_a_missing_time_in_the_index_is_named_as_the_index_not_as_timestamps():
    # without timestamps= the message named timestamps, an argument the user had not passed
    secs, s, f = _series_missing_time_30()
    with pytest.raises(ValueError, match=r"^x's time index must be finite"):
        f.fit(s)


def test_an_exact_step_of_epoch_times_is_told_as_it_is_not_as_float64_rounds_it():
    """Epoch seconds in float64 resolve about 2e-7 s: an exact 10 ms step read 0.00999999 s."""
    from tssdpa.estimators.spacing import uneven_note

    t = pd.date_range("2026-01-01", periods=50, freq="10ms").delete(20)  # one sample missing
    seconds = (t - pd.Timestamp(0)).total_seconds().to_numpy()  # epoch seconds, float64
    note = uneven_note(seconds)
    assert "median step 0.01 s, largest 0.02 s, smallest 0.01 s" in note


@pytest.mark.parametrize("make", sorted(_UNEVEN_FORECASTERS))
def test_a_forecaster_warns_that_an_index_newest_first_runs_backwards(make):
    # rows newest first (ORDER BY date DESC): every step equalled the median step, itself
    # negative, and pandas names the reversed calendar ('-1h'): no warning at all
    index = pd.date_range("2024-01-01", periods=300, freq="h")[::-1]
    y = pd.Series(np.sin(np.arange(300) / 8), index=pd.DatetimeIndex(np.asarray(index)))
    told = "y's DatetimeIndex runs backwards.*y.sort_index()"
    with pytest.warns(UnevenSamplingWarning, match=told):
        est = _UNEVEN_FORECASTERS[make]().fit(y)
    with pytest.warns(UnevenSamplingWarning, match=told):
        est.forecast(y)
    with pytest.warns(UnevenSamplingWarning, match=told):
        est.forecast_path(y, 2)


def test_a_denoiser_warns_that_an_index_with_a_step_back_runs_backwards():
    x = pd.Series(np.sin(np.arange(300) / 8), index=pd.date_range("2024", periods=300, freq="s"))
    shuffled = x.iloc[np.r_[0:100, 200:300, 100:200]]  # one block out of place
    with pytest.warns(UnevenSamplingWarning, match=r"runs backwards \(1 of 299 steps go back"):
        MovingAverageFilter(window=5).filter(shuffled)


def test_a_forecaster_warns_of_a_series_sampled_at_another_step_than_its_fit():
    """Fitted on hourly data, given a 15-minute frame, horizon=4 forecast one hour ahead
    without a word."""
    from tssdpa import ProjectionForecaster

    hours = pd.date_range("2024-01-01", periods=800, freq="h")
    hourly = pd.Series(np.sin(np.arange(800) / 5), hours, name="OT")
    fc = ProjectionForecaster(horizon=4, model="mean", embedding=3).fit(hourly)
    quarters = pd.date_range("2024-03-01", periods=300, freq="15min")
    quarter = pd.Series(np.sin(np.arange(300) / 20), quarters, name="OT")
    calls = (lambda: fc.forecast(quarter, 4), lambda: fc.forecast_path(quarter, 2),
             lambda: fc.predict(3, y=quarter))  # fmt: skip
    for call in calls:
        with pytest.warns(UnevenSamplingWarning, match=r"every 15min but .* every 1h"):
            call()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnevenSamplingWarning)
        fc.forecast(hourly.iloc[:200], 2)  # the fitted step: nothing to say


def test_pandas_and_python_timedeltas_become_seconds_as_timedelta64_does():
    """A list of pd.Timedelta / datetime.timedelta (a Timedelta is what a TimedeltaIndex
    yields entry by entry) was tried as datetimes and refused ('is not convertible to
    datetime'), while a TimedeltaIndex or timedelta64 array of the same times was read."""
    offsets = [pd.Timedelta(seconds=s) for s in SECONDS]
    np.testing.assert_allclose(to_seconds(offsets), SECONDS, atol=1e-12)
    np.testing.assert_allclose(to_seconds([dt.timedelta(seconds=s) for s in SECONDS]), SECONDS,
                               atol=1e-12)  # fmt: skip


def test_step_takes_a_timedelta_timestamp_as_a_timedelta_index_gives_its_rows():
    """step(x, state, timestamp=idx[i]) of a TimedeltaIndex raised TypeError, while the same
    row as a one-value Series on that index (and filter on the index) were read as seconds."""
    rng = np.random.default_rng(0)
    idx = pd.to_timedelta(np.cumsum(rng.uniform(0.008, 0.012, 60)), unit="s")
    x = np.sin(np.arange(60) / 5) + 0.1 * rng.normal(size=60)
    f = ProjectionFilter(window=8, tau=0.05, sigma=0.5)
    state, ys = f.initial_state(), []
    for i in range(60):
        y, state = f.step(x[i], state, timestamp=idx[i])
        ys.append(y)
    y_index, _ = f.filter(pd.Series(x, index=idx), zi=f.initial_state())
    np.testing.assert_allclose(np.array(ys), y_index.to_numpy(), rtol=1e-12, atol=1e-12)


def test_a_timezone_aware_datetime_series_is_its_utc_instant_as_its_index_is():
    """timestamps=df['stamp'], a Series of timezone-aware datetimes, raised pandas' own
    'index is not a valid DatetimeIndex or PeriodIndex': Series.tz_convert converts the
    Series' index, not its values (a DatetimeIndex of the same times was read)."""
    idx = pd.DatetimeIndex(
        [pd.Timestamp("2024-01-01 01:00") + pd.Timedelta(seconds=s) for s in SECONDS]
    ).tz_localize("Europe/Berlin")
    np.testing.assert_allclose(to_seconds(pd.Series(idx)), EPOCH_2024 + SECONDS, atol=1e-6)
    f = ProjectionFilter(window=3, tau=1.0, sigma=1.0)
    x = np.array([0.0, 1.0, 0.5, 2.0])
    np.testing.assert_array_equal(f.filter(x, timestamps=pd.Series(idx)),
                                  f.filter(x, timestamps=idx))  # fmt: skip


def test_epoch_seconds_in_float32_are_named_as_rounded_beyond_tau_and_relative_ones_are_not():
    """Epoch seconds in float32 are multiples of 128 s: fit, filter and step took them
    without a word, as repeated times and jumps (a unit sine's output off by 0.09 from the
    float64 times' filter). Seconds since the log began are float32 to 8e-6 s: no warning."""
    rng = np.random.default_rng(0)
    secs = np.cumsum(0.009 + 0.002 * rng.random(300))
    x = np.sin(secs * 3) + 0.1 * rng.normal(size=300)
    f = ProjectionFilter(window=16, tau=0.05, embedding=1, degree=0, sigma=0.5)
    epoch32 = (EPOCH_2024 + secs).astype(np.float32)
    with pytest.warns(UserWarning, match=r"timestamps in float32 hold only multiples of 128 s"):
        f.fit(x, timestamps=epoch32)
    with pytest.warns(UserWarning, match=r"timestamps in float32 hold only multiples of 128 s"):
        f.filter(x, timestamps=epoch32)
    with pytest.warns(UserWarning, match=r"timestamps in float32 hold only multiples of 128 s"):
        f.filter(x, timestamps=list(epoch32))  # np.float32 values in a list
    with pytest.warns(UserWarning, match=r"timestamp in float32 .* 2.56e\+03 times tau"):
        f.step(x[0], f.initial_state(), timestamp=epoch32[0])
    # a loop of steps is warned once (the words named each time: a new warning every few)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        state = f.initial_state()
        for i in range(200):
            _, state = f.step(x[i], state, timestamp=np.float32(1e4 + 0.01 * i))
    assert len([w for w in seen if "float32" in str(w.message)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f.fit(x, timestamps=secs.astype(np.float32))
        f.filter(x, timestamps=secs.astype(np.float32))
        f.step(x[0], f.initial_state(), timestamp=np.float32(secs[0]))
        f.filter(x, timestamps=EPOCH_2024 + secs)


def test_a_pyarrow_time_index_is_read_as_the_datetime_index_it_holds():
    """``read_parquet(..., dtype_backend="pyarrow")`` (or read_csv's) then ``set_index`` gives
    an Index of pyarrow timestamps, not a DatetimeIndex: tau refused it ("pass timestamps= or
    a series with a DatetimeIndex"), predict labelled the forecasts 200, 201, ... and an
    uneven one passed without the warning a DatetimeIndex gets. The output keeps it as it is."""
    pytest.importorskip("pyarrow")
    times = pd.date_range("2026-03-28", periods=200, freq="15min", tz="Europe/Berlin", name="ts")
    arrow = pd.Index(times.astype("timestamp[us, tz=Europe/Berlin][pyarrow]"))
    x = np.sin(np.arange(200) / 8.0)
    plain, pa_series = pd.Series(x, times, name="a"), pd.Series(x, arrow, name="a")
    f = ProjectionFilter(tau=1800.0, window=8, embedding=1, degree=0, sigma=0.5)
    out = f.fit(pa_series).filter(pa_series)
    assert out.index.dtype == arrow.dtype and out.index.equals(arrow)
    np.testing.assert_array_equal(out.to_numpy(), f.fit(plain).filter(plain).to_numpy())
    after = pd.date_range(times[-1], periods=4, freq="15min")[1:]  # past the DST change
    for est in (AutoRegForecaster(lags=2), ProjectionForecaster(horizon=2)):
        assert est.fit(pa_series).predict(3).index.equals(after)
        assert est.predict(3, y=pa_series).index.equals(after)
    steps = pd.Index(pd.timedelta_range(0, periods=200, freq="s").astype("duration[us][pyarrow]"))
    got = AutoRegForecaster(lags=2).fit(pd.Series(x, steps)).predict(2).index
    assert got.equals(pd.timedelta_range("200s", periods=2, freq="s"))
    uneven = pd.Index(times.delete(range(50, 60)).astype(arrow.dtype))
    with pytest.warns(UnevenSamplingWarning, match="not equally spaced"):
        AutoRegForecaster(lags=2).fit(pd.Series(x[:190], uneven))


def test_an_index_of_python_dates_is_read_as_the_times_it_holds():
    """A daily series made by ``s.groupby(s.index.date).mean()`` (or read by pyarrow's
    read_csv) has an object index of ``datetime.date``: predict labelled its forecasts 41, 42,
    five missing days passed without a word and tau refused it. Its own index stays."""
    hourly = pd.date_range("2026-03-01", periods=24 * 40, freq="h", tz="Europe/Berlin")
    load = pd.Series(np.sin(np.arange(24 * 40) / 30.0), hourly, name="load")
    daily = load.groupby(load.index.date).mean()
    assert daily.index.dtype == object and isinstance(daily.index[0], dt.date)
    after = pd.date_range("2026-04-11", periods=2, freq="D")
    assert AutoRegForecaster(lags=2).fit(daily).predict(2).index.equals(after)
    out = ProjectionFilter(tau=86400.0, window=8, embedding=1, degree=0).fit(daily).filter(daily)
    assert out.index.equals(daily.index) and isinstance(out.index[0], dt.date)
    gappy = daily.drop(pd.date_range("2026-03-10", periods=5).date)
    with pytest.warns(UnevenSamplingWarning, match=r"y's index \(read as a DatetimeIndex\) is "
                      r"not equally spaced.*y\.set_axis\(pd\.DatetimeIndex\(y\.index\)\)\."
                      r"resample\('24h'\)"):  # fmt: skip
        AutoRegForecaster(lags=2).fit(gappy)
    labels = pd.Index(["a", dt.date(2026, 1, 1)] * 10, dtype=object)  # no time axis: labels
    assert list(AutoRegForecaster(lags=2).fit(pd.Series(np.arange(20.0), labels)).predict(1)
                .index) == [20]  # fmt: skip
