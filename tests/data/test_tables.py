"""The table rules ``tssdpa filter`` and ``tssdpa.batch`` share (tssdpa.data.tables)."""

import numpy as np
import pandas as pd
import pytest

from tssdpa.data.tables import column_values, find_time_column, numeric_columns, read_table


@pytest.mark.parametrize("name", ["time", "Time (s)", "timestamp", "t", "DATE"])
def test_a_column_named_like_time_is_the_time_column(name):
    df = pd.DataFrame({"gyro": [1.0, 2.0], name: [0.0, 0.1]})
    assert find_time_column(df) == name


def test_a_datetime_column_is_the_time_column_and_a_named_one_must_exist():
    df = pd.DataFrame({"gyro": [1.0, 2.0], "when": pd.to_datetime(["2026-01-01", "2026-01-02"])})
    assert find_time_column(df) == "when"
    assert find_time_column(df, "gyro") == "gyro"
    assert find_time_column(pd.DataFrame({"a": [1.0]})) is None
    with pytest.raises(ValueError, match="'nope' is not a column"):
        find_time_column(df, "nope")


def test_a_csvs_iso_datetime_column_is_the_time_column(tmp_path):
    # a CSV keeps its datetimes as text: 'stamp' was skipped as a text column, and
    # --params '{"tau": ...}' said "the file has no time column"
    path = tmp_path / "log.csv"
    path.write_text("stamp,gyro\n2026-05-01T12:00:00.000,1.0\n2026-05-01T12:00:00.010,2.0\n"
                    "2026-05-01 12:00:00.020+00:00,3.0\n")  # fmt: skip
    assert find_time_column(read_table(path)) == "stamp"
    days = pd.DataFrame({"gyro": [1.0, 2.0], "day": ["2026-05-01", "2026-05-02"]})
    assert find_time_column(days) == "day"
    for text in (["a", "b"], ["2026-05-01", "soon"], ["2026-13-45", "2026-05-02"], ["12", "13"]):
        assert find_time_column(pd.DataFrame({"gyro": [1.0, 2.0], "label": text})) is None


def test_a_column_named_as_times_is_the_time_column_before_an_earlier_one_of_text_dates():
    # a CSV's 'run_date' (one date on every row, metadata) ahead of 't' took the time role:
    # tau read one repeated time, and 't' was filtered as a signal
    df = pd.DataFrame({"run_date": ["2026-05-01"] * 3, "t": [0.0, 0.01, 0.02],
                       "gyro": [1.0, 2.0, 3.0]})  # fmt: skip
    assert find_time_column(df) == "t"
    assert find_time_column(df.drop(columns="t")) == "run_date"  # no other: the text dates


def test_without_columns_every_numeric_column_but_time_is_taken_and_text_skipped():
    df = pd.DataFrame({"time": [0.0, 1.0], "a": [1.0, 2.0], "label": ["x", "y"], "b": [3, 4]})
    assert numeric_columns(df, None, "time") == (["a", "b"], ["label"])
    assert numeric_columns(df, ["b"], "time") == (["b"], [])
    with pytest.raises(ValueError, match="is the time column"):
        numeric_columns(df, ["time"], "time")
    with pytest.raises(ValueError, match=r"\['z'\] not in the file"):
        numeric_columns(df, ["z"], "time")
    with pytest.raises(ValueError, match="no numeric column"):
        numeric_columns(df[["label"]], None, None)


def test_a_string_for_columns_or_targets_is_one_column_name_not_its_characters():
    df = pd.DataFrame({c: [1.0, 2.0] for c in ["gyro", "g", "y", "r", "o", "gyro_ref"]})
    assert numeric_columns(df, "gyro") == (["gyro"], [])
    with pytest.raises(ValueError, match=r"\['gyr'\] not in the file"):
        numeric_columns(df, "gyr")
    # "gyro" is a substring of the target's name, not the target
    assert numeric_columns(df, None, None, "gyro_ref")[0] == ["gyro", "g", "y", "r", "o"]
    with pytest.raises(ValueError, match="given as --target too"):
        numeric_columns(df, "gyro_ref", None, "gyro_ref")


def test_a_column_named_twice_is_refused_not_taken_as_two_channels():
    # `filter --columns a a` fitted two channels and wrote one a_filtered; `compare --file
    # --columns a a` scored column a twice
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    with pytest.raises(ValueError, match=r"\['a'\] named twice"):
        numeric_columns(df, ["a", "b", "a"])
    assert numeric_columns(df, ["b", "a"]) == (["b", "a"], [])


def test_inf_cells_become_missing_and_are_counted_text_cells_are_named():
    df = pd.DataFrame({"a": [1.0, np.inf, np.nan, 2.0], "b": ["1", "2", "oops", "4"]})
    x, n_nan, n_inf = column_values(df, ["a"])
    np.testing.assert_array_equal(x[:, 0], [1.0, np.nan, np.nan, 2.0])
    assert (n_nan, n_inf) == (1, 1)
    assert np.isinf(df["a"]).sum() == 1  # the caller's table is not changed
    with pytest.raises(ValueError, match="column 'b' is not numeric: 'oops' in data row 3"):
        column_values(df, ["b"])
    with pytest.raises(ValueError, match=r"column\(s\) \['c'\] have no finite value"):
        column_values(pd.DataFrame({"c": [np.inf, np.nan]}), ["c"])


def test_read_table_names_the_file_and_what_is_wrong(tmp_path):
    (tmp_path / "semi.csv").write_text("time;a\n0;1.5\n1;2.5\n")
    assert read_table(tmp_path / "semi.csv")["a"].tolist() == [1.5, 2.5]
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("a,b\n")
    for name, message in (("missing.csv", "no such file"), ("empty.csv", "is empty"),
                          ("header.csv", "has a header but no data rows")):  # fmt: skip
        with pytest.raises(ValueError, match=message) as err:
            read_table(tmp_path / name)
        assert name in str(err.value)
    with pytest.raises(ValueError, match="is a folder"):
        read_table(tmp_path)


def test_sample_times_of_a_tau_filter_take_text_dates_across_a_daylight_saving_change():
    from tssdpa.data.tables import sample_times
    from tssdpa.filters import ProjectionFilter

    # 2024-03-31 in Paris: +01:00 then +02:00; pandas refused the mixed offsets
    when = ["2024-03-31T01:59:00+01:00", "2024-03-31T03:00:00+02:00", "2024-03-31T03:01:00+02:00"]
    df = pd.DataFrame({"time": when, "a": [1.0, 2.0, 3.0]})
    t = sample_times(ProjectionFilter(tau=60.0), df, "time")
    assert np.diff(t).astype("timedelta64[s]").astype(float).tolist() == [60.0, 60.0]
    assert sample_times(ProjectionFilter(), df, "time") is None  # no tau: no times needed
    df.loc[1, "time"] = "soon"
    with pytest.raises(
        ValueError, match="time column 'time': data row 2 \\('soon'\\) is no number or date"
    ):
        sample_times(ProjectionFilter(tau=60.0), df, "time")


@pytest.mark.parametrize("kind", ["seconds", "iso"])
def test_a_time_column_that_steps_backwards_is_refused_naming_the_row(kind):
    # it said "time column 't' must be non-decreasing (monotonic), found a step backwards",
    # leaving the user to search a log of thousands of rows
    from tssdpa.data.tables import sample_times
    from tssdpa.filters import ProjectionFilter

    t = np.array([0.0, 0.01, 0.02, 0.015, 0.03])
    if kind == "iso":
        t = (pd.Timestamp("2026-05-01") + pd.to_timedelta(t, unit="s")).strftime(
            "%Y-%m-%dT%H:%M:%S.%f"
        )
    df = pd.DataFrame({"t": t, "gyro": np.arange(5.0)})
    with pytest.raises(ValueError, match=r"^time column 't' steps backwards at data row 4 "):
        sample_times(ProjectionFilter(window=4, tau=0.1), df, "t")
    df.loc[3, "t"] = df.loc[2, "t"]  # a repeated time is no step backwards
    assert len(sample_times(ProjectionFilter(window=4, tau=0.1), df, "t")) == 5


@pytest.mark.parametrize(
    ("name", "per_second"),
    [("t_ns", 1e9), ("%time", 1e9), ("timestamp_ms", 1e3), ("time (ms)", 1e3),
     ("t_us", 1e6), ("Time (s)", 1.0), ("time", 1.0), ("t (min)", 1 / 60)],
)  # fmt: skip
def test_a_time_column_in_another_unit_than_seconds_gives_seconds_to_tau(name, per_second):
    # the numbers were taken as seconds whatever the name said: tau=0.05 s on a t_ns column
    # was 0.05 ns, every other sample weighed nothing, and the output was the input
    from tssdpa.data.tables import sample_times
    from tssdpa.filters import ProjectionFilter

    seconds = 1000.0 + np.arange(50) * 0.01
    df = pd.DataFrame({name: seconds * per_second, "gyro": np.sin(np.arange(50.0))})
    assert find_time_column(df) == name
    got = sample_times(ProjectionFilter(window=8, tau=0.05), df, name)
    np.testing.assert_allclose(got, seconds, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["TS 1", "TS-Temp", "ts-1", "tsX", "t.1", "time left"])
def test_a_time_name_followed_by_more_than_a_unit_is_a_signal(name):
    # "TS 1" / "TS 2" (temperature sensors) were taken for the time column once 'ts' was a
    # time name: the sensor was copied through unfiltered
    frame = pd.DataFrame({name: [20.5, 20.7, 20.1], "a": [0.1, 0.2, 0.3]})
    assert find_time_column(frame) is None


def test_a_short_time_name_whose_numbers_step_back_is_a_signal():
    # 'Ts' beside 'Ta': surface and air temperatures
    temps = pd.DataFrame({"Ts": [12.1, 11.8, 12.4], "Ta": [10.0, 9.9, 10.2]})
    assert find_time_column(temps) is None
    clock = pd.DataFrame({"ts": [0.0, 0.01, 0.02], "a": [1.0, 2.0, 0.5]})
    assert find_time_column(clock) == "ts"
    assert find_time_column(pd.DataFrame({"unix_ms": [1, 2, 3], "a": [0.0, 1.0, 0.5]})) == "unix_ms"


def test_a_short_time_name_keeps_a_clock_that_steps_back_once_and_a_greek_mu_is_micro():
    t = np.arange(200) * 0.01
    t[100:] -= 0.05  # a clock's resync: one step back
    assert find_time_column(pd.DataFrame({"t": t, "x": np.sin(t)})) == "t"
    from tssdpa.data.tables import seconds_per_unit

    assert find_time_column(pd.DataFrame({"Time [μs]": [1, 2, 3], "x": [0.0, 1.0, 0.5]}))
    assert seconds_per_unit("Time [μs]") == seconds_per_unit("Time [µs]") == 1e-6
