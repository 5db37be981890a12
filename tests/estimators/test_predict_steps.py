"""``predict(steps)`` of every forecaster: any number of steps, recursive past the horizon a
model forecasts directly, at a cost linear in ``steps``."""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa.baselines import (
    AutoRegForecaster,
    DLinearForecaster,
    NaiveForecaster,
    SeasonalNaiveForecaster,
)
from tssdpa.estimators import persistence
from tssdpa.estimators.spacing import UnevenSamplingWarning
from tssdpa.filters import LearnedProjectionForecaster, ResidualProjectionForecaster

rng = np.random.default_rng(0)
Y = np.sin(np.arange(600) * 0.07) + 0.05 * rng.standard_normal(600)

#: direct multi-step models (fitted horizon 4) whose forecast from an origin depends only on
#: the last ``_predict_context()`` samples
DIRECT = {
    "dlinear": lambda: DLinearForecaster(lookback=24, horizon=4),
    "residual": lambda: ResidualProjectionForecaster(
        base_params={"lags": 4}, embedding=4, horizon=4, sigma=[0.3, 1.0]
    ),
    "learned": lambda: LearnedProjectionForecaster(lookback=24, horizon=4, max_epochs=1),
}


@pytest.fixture(scope="module", params=sorted(DIRECT))
def direct(request):
    return DIRECT[request.param]().fit(Y)


def test_predict_within_the_horizon_is_the_forecast_from_the_end_of_the_fitted_series(direct):
    np.testing.assert_allclose(direct.predict(4), direct.forecast_path(Y, 4)[-1], rtol=1e-6)


def test_predict_past_the_horizon_forecasts_again_from_the_series_extended_by_its_forecasts(
    direct,
):
    p = direct.predict(10)
    assert p.shape == (10,) and np.isfinite(p).all()
    np.testing.assert_allclose(p[:4], direct.predict(4), rtol=1e-12)
    for r in (4, 8):  # rounds two and three
        ext = np.concatenate([Y, p[:r]])
        n = min(4, 10 - r)
        np.testing.assert_allclose(p[r : r + n], direct.forecast_path(ext, 4)[-1, :n], rtol=1e-5)


def _spy_lengths(est, monkeypatch) -> list:
    """The lengths of the series ``_path`` is called on, recorded from now on."""
    lengths = []
    path = type(est)._path

    def spy(self, a, horizon):
        lengths.append(len(a))
        return path(self, a, horizon)

    monkeypatch.setattr(type(est), "_path", spy)
    return lengths


def test_each_round_of_predict_sees_only_the_context_one_origin_needs(direct, monkeypatch):
    lengths = _spy_lengths(direct, monkeypatch)
    direct.predict(400)
    assert len(lengths) == 100  # 400 steps in rounds of the fitted horizon 4
    assert max(lengths) <= direct._predict_context()  # the cost of a round does not grow


@pytest.mark.parametrize(
    "make",
    [lambda: AutoRegForecaster(lags=3), NaiveForecaster, lambda: SeasonalNaiveForecaster(90)],
    ids=["autoreg", "naive", "seasonal"],
)
def test_recursive_models_predict_any_steps_in_one_pass_over_their_context(make, monkeypatch):
    fc = make().fit(Y)
    full = fc.forecast_path(Y, 50)[-1]  # from the whole series, the slow way
    lengths = _spy_lengths(fc, monkeypatch)
    np.testing.assert_allclose(fc.predict(50), full, rtol=1e-12)
    assert lengths == [fc._predict_context()]


def test_autoreg_predict_is_the_statsmodels_forecast():
    from statsmodels.tsa.ar_model import AutoReg

    expected = AutoReg(Y, lags=3, trend="c").fit().forecast(30)
    np.testing.assert_allclose(AutoRegForecaster(lags=3).fit(Y).predict(30), expected, rtol=1e-8)


def test_multichannel_predict_past_the_horizon_keeps_channels():
    y2 = np.column_stack([Y, np.cos(np.arange(600) * 0.05)])
    fc = DLinearForecaster(lookback=24, horizon=3).fit(y2)
    assert fc.predict(8).shape == (8, 2)


@pytest.mark.parametrize("steps", [0, -1, 2.5, "3"])
def test_predict_refuses_steps_that_are_not_a_positive_integer(steps):
    fc = NaiveForecaster().fit(Y)
    with pytest.raises((ValueError, TypeError), match="steps"):
        fc.predict(steps)


#: every kind of forecaster, through the shared base
KINDS = {**DIRECT, "naive": NaiveForecaster, "autoreg": lambda: AutoRegForecaster(lags=3)}


@pytest.mark.parametrize("make", KINDS.values(), ids=KINDS.keys())
def test_after_a_pandas_fit_predict_returns_pandas_on_the_continued_index(make):
    """After a fit on a Series or DataFrame, filter and forecast gave pandas back and predict
    a bare array: the fitted name, columns and the times the forecasts are for were lost."""
    index = pd.date_range("2026-03-28", periods=600, freq="h", tz="Europe/Berlin", name="t")
    s = pd.Series(Y, index=index, name="temp")
    fc = make().fit(s)
    want = make().fit(Y).predict(6)
    got = fc.predict(6)
    assert isinstance(got, pd.Series) and got.name == "temp"
    expected = pd.date_range(index[-1], periods=7, freq="h", name="t")[1:]  # over the DST change
    assert got.index.equals(expected) and str(got.index.tz) == "Europe/Berlin"
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-6, atol=1e-6)
    frame = pd.DataFrame({"a": Y, "b": Y[::-1].copy()}, index=index)
    got = make().fit(frame).predict(3)
    assert isinstance(got, pd.DataFrame) and list(got.columns) == ["a", "b"]
    assert got.index.equals(expected[:3])
    assert isinstance(make().fit(Y).predict(3), np.ndarray)  # numpy in, numpy out


def test_predict_continues_each_kind_of_index_and_a_saved_model_keeps_it(tmp_path):
    y = Y[:200]
    cases = {
        "business days": pd.bdate_range("2026-01-05", periods=200),  # to a Friday
        "periods": pd.period_range("2000-01", periods=200, freq="M"),
        "integers, step 5": pd.Index(np.arange(100, 1100, 5)),
        "range": pd.RangeIndex(200),
        "uneven times": pd.to_datetime(np.cumsum(np.r_[1, np.tile([1, 3], 99), 1]), unit="s"),
    }
    want = {
        "business days": pd.bdate_range("2026-10-12", periods=3),  # Monday after the Friday
        "periods": pd.period_range("2016-09", periods=3, freq="M"),
        "integers, step 5": pd.Index([1100, 1105, 1110]),
        "range": pd.RangeIndex(200, 203),
        "uneven times": pd.RangeIndex(200, 203),  # positions: no time to make up
    }
    for name, index in cases.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnevenSamplingWarning)
            fc = AutoRegForecaster(lags=2).fit(pd.Series(y, index=index))
        got = fc.predict(3)
        assert list(got.index) == list(want[name]), name
        fc.save(tmp_path / "m")
        back = AutoRegForecaster.load(tmp_path / "m").predict(3)
        assert back.index.equals(got.index), name
        np.testing.assert_array_equal(back.to_numpy(), got.to_numpy())


def test_a_saved_pandas_output_that_does_not_fit_the_model_is_refused(tmp_path, edit_config):
    frame = pd.DataFrame({"a": Y, "b": Y}, index=pd.date_range("2026", periods=600, freq="D"))
    AutoRegForecaster(lags=2).fit(frame).save(tmp_path / "m")
    edit_config(tmp_path / "m", lambda cfg: cfg["pandas_output"]["columns"].pop())
    with pytest.raises(ValueError, match="malformed 'pandas_output'.*one column per channel"):
        AutoRegForecaster.load(tmp_path / "m")


_LABELLED = {
    "numpy integer columns": pd.DataFrame({np.int64(3): Y, np.int64(5): Y[::-1].copy()}),
    "uint8 columns": pd.DataFrame(np.c_[Y, Y], columns=pd.Index([1, 2], dtype="uint8")),
    "float32 columns, named": pd.DataFrame(
        np.c_[Y, Y], columns=pd.Index([1.5, 2.5], dtype="float32", name=("unit", 1))
    ),
    "tuple columns (a MultiIndex)": pd.DataFrame(
        np.c_[Y, Y], columns=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["k", 3])
    ),
    "Timestamp columns": pd.DataFrame(
        np.c_[Y, Y], columns=pd.date_range("2020", periods=2, freq="D", tz="UTC").as_unit("ns")
    ),
    "Timedelta and Period columns": pd.DataFrame(
        np.c_[Y, Y, Y], columns=[pd.Timedelta(1, "s"), pd.Period("2020-01", "M"), "c"]
    ),
    "numpy integer name": pd.Series(Y, name=np.int64(7)),
    "tuple name, Timestamp index name": pd.Series(
        Y, name=("a", 1), index=pd.RangeIndex(600, name=pd.Timestamp("2020"))
    ),
}


@pytest.mark.parametrize("data", _LABELLED.values(), ids=_LABELLED.keys())
def test_a_saved_forecaster_predicts_with_the_labels_it_was_fitted_with(data, tmp_path):
    """The saved config is JSON: a numpy integer name came back a Python int, and tuple or
    Timestamp labels made the loaded model's predict return a bare array, without a word.
    Each now comes back as it was fitted (typed labels in the file, read strictly)."""
    fc = AutoRegForecaster(lags=2).fit(data)
    fc.save(tmp_path / "m")
    want, got = fc.predict(3), AutoRegForecaster.load(tmp_path / "m").predict(3)
    assert type(got) is type(data)
    if isinstance(data, pd.Series):
        assert type(got.name) is type(data.name) and got.name == data.name
        pd.testing.assert_series_equal(got, want, check_exact=True)
        assert got.index.name == data.index.name
    else:
        pd.testing.assert_frame_equal(got, want, check_exact=True, check_freq=False)
        pd.testing.assert_index_equal(got.columns, data.columns, exact="equiv", check_freq=False)
        assert list(got.columns.names) == list(data.columns.names)


@pytest.mark.parametrize(
    "columns, label",
    [([frozenset({1}), "b"], "frozenset"), ([dt.date(2020, 1, 1), "b"], "datetime.date")],
)
def test_a_label_a_saved_file_cannot_hold_is_refused_at_save_naming_it(columns, label, tmp_path):
    fc = AutoRegForecaster(lags=2).fit(pd.DataFrame(np.c_[Y, Y], columns=columns))
    with pytest.raises(TypeError, match=f"cannot save the column label {label}"):
        fc.save(tmp_path / "m")
    assert not (tmp_path / "m").exists()  # nothing written


@pytest.mark.parametrize(
    "edit",
    [
        {"numpy": "object", "value": 3},  # only bool, integer and float numpy types
        {"numpy": "int8", "value": 300},  # out of its range
        {"numpy": "float32", "value": 0.1},  # not a float32 value
        {"tuple": "ab"},
        {"timestamp": "2020-01-01", "tz": "UTC", "extra": 1},
        {"pickle": "gASV"},
    ],
)
def test_a_malformed_typed_label_is_refused_on_load(edit, tmp_path, edit_config):
    frame = pd.DataFrame({np.int64(3): Y, np.int64(5): Y})
    AutoRegForecaster(lags=2).fit(frame).save(tmp_path / "m")

    def tamper(cfg):  # the digest made again: the label itself is what load checks
        cfg["pandas_output"]["columns"][0] = edit
        cfg["fitted_sha256"] = persistence._fitted_digest(cfg)

    edit_config(tmp_path / "m", tamper)
    with pytest.raises(ValueError, match="malformed 'pandas_output'.*column label"):
        AutoRegForecaster.load(tmp_path / "m")


def test_a_time_zone_known_by_no_name_is_refused_at_save_naming_where_it_is(tmp_path):
    """A Timestamp label whose zone has no name (dateutil's tzoffset) would not come back from
    the file: save blamed "the fitted series' index (time zone None)", whose zone was fine, and
    told to convert the index; it names the label now. The index's own such zone is refused
    with that advice, which no refusal of the labels gets (a column index named "index")."""
    from dateutil.tz import tzoffset

    zone = tzoffset("X", 3600)
    hours = pd.date_range("2024-01-01", periods=600, freq="h")
    label = pd.Timestamp("2024-01-01", tz=zone)
    for data, what in (
        (pd.Series(Y, index=hours, name=label), "the Series' name"),
        (pd.DataFrame({label: Y, "b": Y}, index=hours), "the column label"),
    ):
        fc = AutoRegForecaster(lags=2).fit(data)
        with pytest.raises(ValueError, match=rf"^cannot save {what} Timestamp\(.*its time zone "
                           r"\"tzoffset\('X', 3600\)\" is known by no name") as told:  # fmt: skip
            fc.save(tmp_path / "m")
        assert "index" not in str(told.value)
    fc = AutoRegForecaster(lags=2).fit(pd.Series(Y, index=hours.tz_localize(zone)))
    with pytest.raises(ValueError, match=r"^cannot save the fitted series' index.*convert the "
                       r"index, e.g. tz_convert\('UTC'\)$"):  # fmt: skip
        fc.save(tmp_path / "m")
    columns = pd.CategoricalIndex(["a", "b"], name="index")  # comes back a plain Index
    fc = AutoRegForecaster(lags=2).fit(pd.DataFrame(np.c_[Y, Y], index=hours, columns=columns))
    with pytest.raises(ValueError, match="^cannot save the column labels Categorical") as told:
        fc.save(tmp_path / "m")
    assert "tz_convert" not in str(told.value)
    assert not (tmp_path / "m").exists()


def test_predict_labels_stay_as_fitted_when_the_user_renames_a_columns_axis(tmp_path):
    """The fit kept the DataFrame's column Index itself, and every predict handed it out:
    an Index's name is mutable, so the user's ``df.columns.name = ...`` after the fit, or on
    one predict's output, renamed every later predict's columns (of a loaded model too)."""
    columns = pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["k", "n"])
    data = pd.DataFrame(np.c_[Y, Y], columns=columns)
    fc = AutoRegForecaster(lags=2).fit(data)
    data.columns.names = ["renamed", "after fit"]
    fc.save(tmp_path / "m")
    for model in (fc, AutoRegForecaster.load(tmp_path / "m")):
        first = model.predict(2)
        first.columns.names = ["renamed", "output"]
        assert list(model.predict(2).columns.names) == ["k", "n"]


@pytest.mark.parametrize("dtype", ["Int64", "Float64", "category"])
def test_column_labels_of_a_pandas_dtype_are_refused_at_save_naming_them_with_the_remedy(
    dtype, tmp_path
):
    # a nullable Int64 dtype was written as columns_dtype, which no file may hold: save
    # blamed "the fitted series' index (time zone None)" and told to convert the index
    columns = pd.Index([1, 2], dtype=dtype)
    fc = AutoRegForecaster(lags=2).fit(pd.DataFrame(np.c_[Y, Y], columns=columns))
    with pytest.raises(ValueError, match=r"^cannot save the column labels .*predict would "
                       r"differ; give the columns a numpy dtype or text, e\.g\. df\.columns = "
                       r"df\.columns\.astype\(str\), and fit again$"):  # fmt: skip
        fc.save(tmp_path / "m")
    renamed = pd.DataFrame(np.c_[Y, Y], columns=columns.astype(str))  # the remedy saves
    AutoRegForecaster(lags=2).fit(renamed).save(tmp_path / "m")
