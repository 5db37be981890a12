"""What ``fit`` refuses of the input shapes and types a user can pass by mistake -- a
channels-first series, datetime or timedelta values passed as a signal -- and what ``load``
makes of a path to a file inside a saved folder."""

import datetime

import numpy as np
import pandas as pd
import pytest

from tssdpa import ProjectionFilter, ProjectionForecaster
from tssdpa.baselines.linear import WienerFIRFilter


def _series(n=200):
    rng = np.random.default_rng(0)
    return np.sin(np.arange(n) / 20) + 0.1 * rng.standard_normal(n)


@pytest.mark.parametrize("rows", [1, 3])
def test_projection_filter_fit_refuses_a_channels_first_series_and_names_x_T(rows):
    x = np.vstack([_series()] * rows)
    with pytest.raises(ValueError, match=rf"x has {rows} samples? \(rows\) of 200 channels") as e:
        ProjectionFilter().fit(x)
    assert "transpose it (x.T) for 200 samples" in str(e.value)


def test_forecaster_fit_refuses_a_channels_first_series_naming_y():
    with pytest.raises(ValueError, match=r"y has 1 sample \(rows\) of 200 channels.*y\.T"):
        ProjectionForecaster(horizon=1).fit(_series()[None, :])


def test_denoiser_fit_refuses_a_channels_first_series():
    with pytest.raises(ValueError, match=r"time runs down the rows"):
        WienerFIRFilter().fit(_series()[None, :])


@pytest.mark.parametrize("shape", [(12, 20), (30, 200)])
def test_a_short_recording_of_many_sensors_still_fits(shape):
    # only a series ten times wider than long is taken for channels-first: a short, wide panel
    # of sensors is data (a filter that learns nothing fitted it, and the CLI with it)
    from tssdpa.baselines.linear import MovingAverageFilter

    x = np.random.default_rng(0).standard_normal(shape).cumsum(axis=0)
    assert MovingAverageFilter().fit(x).filter(x).shape == shape


def test_a_fitted_filter_still_filters_a_single_row():
    x = np.column_stack([_series(), _series()[::-1]])
    filt = ProjectionFilter(window=8).fit(x)
    assert filt.filter(x[:1]).shape == (1, 2)


def _frame_with(column):

    n = 200
    return pd.DataFrame({"a": _series(n), "t": column(n)})


@pytest.mark.parametrize(
    "times, what",
    [
        (lambda n: pd.date_range("2026-01-01", periods=n, freq="s"), "datetimes"),
        (
            lambda n: pd.date_range("2026", periods=n, freq="s", tz="UTC"),
            "datetimes",
        ),
        (lambda n: pd.to_timedelta(np.arange(n), unit="s"), "timedeltas"),
    ],
)
def test_fit_refuses_a_datetime_or_timedelta_column_naming_it_and_set_index(times, what):
    df = _frame_with(times)
    with pytest.raises(ValueError, match=rf"x column 't' holds {what}.*set_index\('t'\)"):
        ProjectionFilter(window=8).fit(df)


@pytest.mark.parametrize(
    "times, what",
    [
        (lambda n: [datetime.date(2026, 1, 1) + datetime.timedelta(days=i) for i in range(n)],
         "dates"),
        (lambda n: [datetime.datetime(2026, 1, 1, 0, 0, i % 60) for i in range(n)], "datetimes"),
        (lambda n: [datetime.timedelta(seconds=i) for i in range(n)], "timedeltas"),
        (lambda n: [pd.Timestamp("2026-01-01", tz="UTC")] * n, "datetimes"),
        (lambda n: [None] + [datetime.date(2026, 1, 1)] * (n - 1), "dates"),
    ],
)  # fmt: skip
def test_a_column_of_python_dates_is_refused_as_datetime64_is_naming_it_and_set_index(times, what):
    # a column of datetime.date objects (df["time"].dt.date) was refused as "got DataFrame
    # holding date datetime.date(2026, 1, 1)", with no word of setting it as the index
    df = _frame_with(lambda n: pd.Series(times(n), dtype=object))
    for fit, name in ((ProjectionFilter(window=8).fit, "x"), (ProjectionForecaster().fit, "y")):
        said = (rf"^{name} column 't' holds {what}: they are times, not a signal; set it as "
                rf"the index \({name}.set_index\('t'\)\)")  # fmt: skip
        with pytest.raises(ValueError, match=said):
            fit(df)
    with pytest.raises(ValueError, match=rf"^x holds {what} \(.* objects\): they are times"):
        ProjectionFilter(window=8).fit(df["t"])


def test_filter_refuses_a_datetime_column_after_a_fit_on_the_signal():
    df = _frame_with(lambda n: pd.date_range("2026", periods=n, freq="s"))
    filt = ProjectionFilter(window=8).fit(df[["a", "a"]].set_axis(["a", "t"], axis=1))
    with pytest.raises(ValueError, match=r"x column 't' holds datetimes"):
        filt.filter(df)


def test_fit_refuses_a_datetime_series_and_a_datetime64_array():

    times = pd.date_range("2026-01-01", periods=200, freq="s")
    with pytest.raises(ValueError, match=r"x holds datetimes .*times, not a signal"):
        ProjectionFilter(window=8).fit(pd.Series(times))
    with pytest.raises(ValueError, match=r"x holds timedeltas"):
        ProjectionFilter(window=8).fit(np.arange(200).astype("m8[s]"))


def test_a_datetime_index_is_still_read_as_the_sample_times():

    times = pd.date_range("2026-01-01", periods=200, freq="s")
    y = ProjectionFilter(window=8).fit(pd.Series(_series(), index=times))
    assert y.n_channels_ == 1


def _saved(tmp_path):
    x = np.column_stack([_series(), _series()[::-1]])
    filt = ProjectionFilter(window=8).fit(x)
    filt.save(tmp_path / "c_saved")
    return filt, x


@pytest.mark.parametrize("member", ["config.json", "arrays.safetensors"])
def test_load_given_a_file_inside_the_saved_folder_loads_the_folder(tmp_path, member):
    filt, x = _saved(tmp_path)
    loaded = ProjectionFilter.load(tmp_path / "c_saved" / member)
    np.testing.assert_array_equal(loaded.filter(x), filt.filter(x))


def test_load_given_another_file_says_to_give_the_saved_folder(tmp_path):
    (tmp_path / "notes.txt").write_text("not a filter")
    with pytest.raises(FileNotFoundError, match=r"notes\.txt is a file; give the folder"):
        ProjectionFilter.load(tmp_path / "notes.txt")


@pytest.mark.parametrize(
    "tau", [pd.Timedelta("50ms"), __import__("datetime").timedelta(seconds=0.05),
            np.timedelta64(50, "ms")]
)  # fmt: skip
def test_a_tau_given_as_a_duration_is_refused_naming_its_seconds(tau):
    # it failed deep in fit with "float() argument must be a string or a real number"
    t = pd.to_datetime(1.7e9 + np.arange(200) * 0.01, unit="s")
    df = pd.DataFrame({"a": _series()}, index=t)
    with pytest.raises(TypeError, match=r"tau must be a number of seconds.*give tau=0\.05"):
        ProjectionFilter(window=None, tau=tau, min_step=0.005).fit(df)


def test_a_forecaster_holdout_that_is_no_choice_names_the_choices():
    # it said "must be a number", though "auto" and None are taken too
    with pytest.raises(TypeError, match=r"holdout \(None, 'auto' or a fraction\)"):
        ProjectionForecaster(holdout="bogus").fit(_series())


def test_fit_names_a_stray_text_column_by_its_label_and_suggests_dropping_it():
    # "got text (numbers as strings: convert them first ...)": no column named, and advice
    # that does not fit a label column such as a site code
    df = pd.DataFrame({"a": _series(), "site": "A"})
    with pytest.raises(TypeError, match=r"the column\(s\) \['site'\] hold text, not numbers: "
                       r"drop them \(y\.drop\(columns=\['site'\]\)\)") as told:  # fmt: skip
        ProjectionForecaster(horizon=1).fit(df)
    assert "to_numeric" not in str(told.value)


def test_fit_tells_a_column_of_numbers_as_strings_to_be_converted_by_its_label():
    df = pd.DataFrame({"a": _series(), "b": _series().astype(str), "site": "A"})
    with pytest.raises(TypeError, match=r"\['site'\] hold text, not numbers.*; the column\(s\) "
                       r"\['b'\] hold numbers as strings: convert them"):  # fmt: skip
        ProjectionFilter(window=8).fit(df)
    with pytest.raises(TypeError, match=r"got text \(numbers as strings: convert them"):
        ProjectionFilter(window=8).fit(df["b"])
    with pytest.raises(TypeError, match=r"got text \(not numbers, e\.g\. 'A'"):
        ProjectionFilter(window=8).fit(df["site"])


def _two_sensors(n=400):
    t = np.arange(n)
    return pd.DataFrame({"HUFL": np.sin(t / 9), "OT": np.cos(t / 13) + 0.01 * _series(n)})


@pytest.mark.parametrize("call", ["forecast", "forecast_path"])
def test_a_joint_forecast_warns_of_a_channel_without_a_finite_value_by_its_label(call):
    # a dead sensor ('OT' all NaN) made every channel's forecast NaN without a word
    from tssdpa.estimators.input_notes import EmptyChannelWarning, InputNote

    frame = _two_sensors()
    fc = ProjectionForecaster(horizon=2, embedding=3, channel_independent=False).fit(frame)
    dead = frame.assign(OT=np.nan)
    with pytest.warns(EmptyChannelWarning, match=r"y column 'OT' has no finite value") as told:
        getattr(fc, call)(dead, 1)
    assert isinstance(told[0].message, InputNote) and told[0].filename == __file__
    with pytest.warns(EmptyChannelWarning, match=r"y channel 1 has no finite value"):
        getattr(fc, call)(dead.to_numpy(), 1)


def test_a_forecast_of_channels_apart_takes_a_channel_without_a_finite_value_quietly():
    # one model per channel: the dead channel's own forecast is NaN, the others' are not
    import warnings

    frame = _two_sensors()
    fc = ProjectionForecaster(horizon=2, embedding=3, channel_independent=True).fit(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fc.forecast(frame.assign(OT=np.nan), 1)
    assert out["HUFL"].notna().any()


def test_fit_names_an_all_nan_channel_by_its_column_label():
    # "y channel 1 is all NaN": the position, where the user gave the column a name
    with pytest.raises(ValueError, match=r"^y column 'OT' is all NaN: nothing to fit on"):
        ProjectionForecaster(horizon=2).fit(_two_sensors().assign(OT=np.nan))
    with pytest.raises(ValueError, match=r"^x column 'OT' is all NaN"):
        ProjectionFilter(window=8).fit(_two_sensors().assign(OT=np.nan))
    with pytest.raises(ValueError, match=r"^y channel 1 is all NaN"):
        ProjectionForecaster(horizon=2).fit(_two_sensors().assign(OT=np.nan).to_numpy())


def test_an_inf_or_overflowing_column_of_a_frame_is_named_by_its_label():
    # "y channel 1 reaches magnitude ...", "y contains inf": fit, forecast and filter alike
    # named a DataFrame's column by position, or not at all
    frame = _two_sensors()
    fc = ProjectionForecaster(horizon=1, embedding=2, model="linear").fit(frame)
    huge, inf = frame.assign(OT=1e200), frame.assign(OT=np.r_[frame.OT[:-1], np.inf])
    for call in (ProjectionForecaster(horizon=1).fit, fc.forecast, fc.forecast_path):
        with pytest.raises(ValueError, match=r"^y column 'OT' reaches magnitude 1e\+200"):
            call(huge)
        with pytest.raises(ValueError, match=r"^y column 'OT' contains inf; use NaN"):
            call(inf)
    with pytest.raises(ValueError, match=r"^x column 'OT' contains inf"):
        ProjectionFilter(window=8).fit(inf)
    with pytest.raises(ValueError, match=r"^y channel 1 reaches magnitude"):
        fc.forecast(huge.to_numpy())
    with pytest.raises(ValueError, match=r"^y contains inf"):
        fc.forecast(inf.to_numpy())


#: object columns and what they hold, as the cell-by-cell rules read them (pd.NaT is a
#: datetime; a column of numbers with pd.NA is pandas' own result with blanks)
OBJECT_COLUMNS = [
    ([1.0, pd.NA, 2.5], None, False),
    ([pd.NA, pd.NA], None, False),
    ([1, 2.5, None, np.nan], None, False),
    ([True, pd.NA], None, False),
    ([1.0, pd.NaT], "datetimes", False),
    ([np.nan, np.datetime64("NaT")], "datetimes", False),
    ([1, datetime.timedelta(1)], "timedeltas", False),
    ([datetime.date(2026, 1, 1), 1.0], "dates", False),
    (["a", pd.Timestamp(0)], "datetimes", True),
    ([1.0, "1.5"], None, True),
    ([b"1", pd.NA], None, True),
]


@pytest.mark.parametrize("cells, times, text", OBJECT_COLUMNS)
def test_an_object_column_is_told_its_times_and_text_as_each_cell_would(cells, times, text):
    from tssdpa.checks import times_in
    from tssdpa.estimators.text_input import _text

    column = pd.Series(cells, dtype=object)
    assert times_in(column) == times and _text(column)[1] == text


def test_an_object_column_of_numbers_is_told_to_hold_no_times_without_a_look_at_each_cell(
    monkeypatch,
):
    # the rules were applied cell by cell in Python: as_2d of two object columns of 2M
    # numbers with pd.NA took 1.5 s, 0.18 s as Float64
    from tssdpa import checks

    class Unread(tuple):
        def __iter__(self):
            raise AssertionError("looked at cell by cell")

    monkeypatch.setattr(checks, "_TIME_OBJECTS", Unread())
    column = pd.Series([1.0, pd.NA] * 1000, dtype=object)
    assert checks.times_in(column) is None
    assert checks.times_in(column.to_numpy().reshape(2, -1)) is None
