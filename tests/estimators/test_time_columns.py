"""A DataFrame with a column of sample times beside its signal (pyEDM's frames start with
``Time``) is fitted with a TimeColumnWarning naming the column, not silently."""

import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa import ProjectionFilter, ProjectionForecaster
from tssdpa.baselines import MovingAverageFilter
from tssdpa.estimators.time_columns import TimeColumnWarning

X = np.sin(np.arange(300) * 0.3) + np.random.default_rng(0).normal(0, 0.1, 300)


def _time_warnings(fit, data) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fit(data)
    return [str(w.message) for w in seen if w.category is TimeColumnWarning]


@pytest.mark.parametrize("fit", [
    lambda d: ProjectionForecaster(horizon=1, embedding=2).fit(d),
    lambda d: ProjectionForecaster(horizon=1, embedding=2, channel_independent=True).fit(d),
    lambda d: ProjectionFilter(window=8).fit(d),
    lambda d: MovingAverageFilter().fit(d),
])  # fmt: skip
def test_a_pyedm_frame_with_its_time_column_warns_once_naming_it_and_advising_set_index(fit):
    said = _time_warnings(fit, pd.DataFrame({"Time": np.arange(1, 301), "x": X}))
    assert len(said) == 1
    assert "'Time'" in said[0] and ".set_index('Time')" in said[0]


def test_an_evenly_rising_counter_column_warns_whatever_its_name():
    said = _time_warnings(ProjectionFilter(window=8).fit,
                          pd.DataFrame({"x": X, "n": np.arange(300) * 0.1}))  # fmt: skip
    assert len(said) == 1 and "'n'" in said[0] and "counter" in said[0]


def test_the_warning_points_at_the_users_fit_call():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ProjectionForecaster(horizon=1, embedding=2).fit(
            pd.DataFrame({"t": np.arange(300), "x": X})
        )
    assert [w.filename for w in seen if w.category is TimeColumnWarning] == [__file__]


@pytest.mark.parametrize("data", [
    pd.DataFrame({"x": X, "y": np.cos(np.arange(300) * 0.2)}),
    pd.DataFrame({"Time": np.arange(1, 301), "x": X}).set_index("Time"),
    pd.DataFrame({"ramp": np.arange(300.0)}),  # a lone column is the signal
    pd.DataFrame({"x": X, "trend": np.arange(300.0) + 0.01 * X}),  # monotone, not even
    pd.DataFrame({"T (degC)": X, "y": np.cos(np.arange(300) * 0.2)}),  # a temperature
])  # fmt: skip
def test_frames_without_a_time_column_fit_without_the_warning(data):
    assert _time_warnings(ProjectionFilter(window=8).fit, data) == []


TABLES = (
    "ett/ETTh1.csv.gz",
    "ett/ETTh2.csv.gz",
    "ett/ETTm1.csv.gz",
    "ett/ETTm2.csv.gz",
    "imu/xio-fusion/sensor_data.csv.gz",
    "imu/xio-gait-tracking/short_walk.csv.gz",
)


@pytest.mark.data(*TABLES)
@pytest.mark.parametrize("rel", TABLES)
def test_no_signal_column_of_the_shared_tables_reads_as_a_time_column(rel):
    from tssdpa.data.paths import find_dataset
    from tssdpa.estimators.time_columns import time_columns

    df = pd.read_csv(find_dataset(rel)).select_dtypes("number")
    found = time_columns(df.to_numpy(np.float64), list(df.columns))
    assert set(found) == ({"Time (s)"} & set(df.columns))  # the IMU's clock only
    signals = df.drop(columns=["Time (s)"], errors="ignore")
    for ordered in (signals, signals.iloc[::-1]):  # a falling ramp is no counter either
        assert time_columns(ordered.to_numpy(np.float64), list(signals.columns)) == {}


NAMES = ["Time", "time", "t", "Time (s)", "t (ms)", "timestamp_ms", "%time", "Date", "epoch",
         "T (degC)", "time_constant", "seconds_left", "x", "temp", "stamp_count"]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_a_column_is_named_as_times_exactly_where_the_cli_takes_it_for_the_time_column(name):
    from tssdpa.checks import named_as_times
    from tssdpa.data.tables import find_time_column

    cli = find_time_column(pd.DataFrame({name: [1.0, 2.0, 3.0], "other": [0.5, 0.1, 0.3]}))
    assert named_as_times(name) == (cli == name)
