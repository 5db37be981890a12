"""The estimator base: parameter semantics, renamed parameters, input conversion, persistence.

The same rules hold for every estimator in the package, so they are checked here once on a
small toy estimator and then, for the real ones, on every registered estimator class.
"""

from __future__ import annotations

import inspect
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from tssdpa import baselines as B
from tssdpa import filters as F
from tssdpa.checks import check_int
from tssdpa.estimators import Denoiser, Estimator, Forecaster, as_2d, restore
from tssdpa.estimators.persistence import FORMAT, UncheckedFileWarning


class Scale(Denoiser):
    """Toy denoiser: multiplies by a fitted gain."""

    trainable = True
    _renamed_params = {"factor": "gain"}
    _fitted_schema = {"gain_": (float,), "n_channels_": (int,)}
    _array_schema = ("offset_",)

    def __init__(self, gain=2, causal=True):
        self.gain = gain
        self.causal = causal

    def _validate_params(self):
        check_int(self.gain, "gain")

    def _fit(self, a, target):
        self.gain_ = float(self.gain)
        self.offset_ = np.zeros(a.shape[1])

    def _filter_1d(self, x, channel):
        return self.gain_ * x + self.offset_[channel]


def test_init_only_stores_and_fit_validates_naming_the_argument():
    est = Scale(gain="nonsense")  # no error yet: scikit-learn semantics
    assert est.gain == "nonsense"
    with pytest.raises(TypeError, match="gain"):
        est.fit(np.ones(5))


def test_get_set_params_clone_and_repr():
    est = Scale(gain=3).fit(np.ones(5))
    assert est.get_params() == {"gain": 3, "causal": True}
    assert est.set_params(gain=4) is est and est.gain == 4
    fresh = est.clone()
    assert fresh.get_params() == est.get_params() and not hasattr(fresh, "gain_")
    assert repr(est) == "Scale(gain=4, causal=True)"
    with pytest.raises(ValueError, match="unknown parameter"):
        est.set_params(bogus=1)


def test_renamed_parameters_map_with_a_warning_and_keep_the_signature():
    with pytest.warns(DeprecationWarning, match="factor= is deprecated, use gain="):
        est = Scale(factor=5)
    assert est.gain == 5
    assert list(inspect.signature(Scale).parameters) == ["gain", "causal"]
    with pytest.warns(DeprecationWarning):
        est.set_params(factor=6)
    assert est.gain == 6
    with pytest.raises(TypeError, match="gain= only"):
        Scale(factor=5, gain=6)


def test_filter_before_fit_raises_for_trainable_estimators_only():
    with pytest.raises(ValueError, match="fitted"):
        Scale().filter(np.ones(4))
    identity = B.MovingAverageFilter(window=1).filter(np.arange(4.0))  # designed on use
    np.testing.assert_array_equal(identity, np.arange(4.0))


@pytest.mark.parametrize(
    "x",
    [
        np.arange(6.0),
        np.arange(12.0).reshape(6, 2),
        pd.Series(np.arange(6.0), index=pd.date_range("2024", periods=6, freq="s"), name="a"),
        pd.DataFrame({"a": np.arange(6.0), "b": np.ones(6)}),
        torch.arange(6, dtype=torch.float32),
    ],
    ids=["numpy1d", "numpy2d", "series", "frame", "torch"],
)
def test_output_has_the_input_type_and_the_input_is_untouched(x):
    before = x.copy() if not isinstance(x, torch.Tensor) else x.clone()
    y = Scale().fit(x).filter(x)
    assert type(y) is type(x) and tuple(y.shape) == tuple(x.shape)
    if isinstance(x, pd.Series | pd.DataFrame):
        assert y.index.equals(x.index) and x.equals(before)
    if isinstance(x, torch.Tensor):
        assert y.dtype == x.dtype and torch.equal(x, before)
        np.testing.assert_array_equal(y.numpy(), 2 * before.numpy())
    else:
        np.testing.assert_array_equal(np.asarray(x), np.asarray(before))
        np.testing.assert_array_equal(np.asarray(y), 2 * np.asarray(before))


@pytest.mark.parametrize(
    "bad, exc, word",
    [
        ("abc", TypeError, "x"),
        (np.zeros((2, 2, 2)), ValueError, "1-D"),
        (np.zeros(0), ValueError, "empty"),
        (np.zeros((4, 0)), ValueError, "0 channels"),
        (np.array([1.0, np.inf]), ValueError, "inf"),
        (np.array([1 + 2j, 3]), TypeError, "real"),
        (torch.tensor([1 + 2j]), TypeError, "real"),
    ],
)
def test_as_2d_rejects_bad_input_naming_it(bad, exc, word):
    with pytest.raises(exc, match=word):
        as_2d(bad, "x")


def test_a_list_holding_a_value_that_is_no_number_is_refused_naming_the_value():
    """A list with a value that is no number was refused as "x must be a real numeric array
    ... got list", though lists are taken: the value was not named. pandas' NA beside it is a
    missing sample, not the value named."""
    f = F.ProjectionFilter(window=4, sigma=1.0)
    with pytest.raises(TypeError, match=r"got list holding dict \{'a': 1\}$"):
        f.filter([1.0, {"a": 1}])
    with pytest.raises(TypeError, match=r"got list holding dict \{'a': 1\}$"):
        f.filter([pd.NA, {"a": 1}])
    with pytest.raises(TypeError, match=r"sample must .* got list holding dict"):
        f.step([pd.NA, {"a": 1}], f.initial_state(2))
    np.testing.assert_array_equal(f.filter([[np.nan, 1.0], [1.0, 2.0]])[:, 0], [1.0, 1.0])


def test_pandas_na_in_a_list_is_a_missing_sample_as_none_is_and_as_in_a_dataframe():
    """A row built from a nullable column ([1.0, pd.NA]) was refused as "got list holding
    NAType <NA>", while [1.0, None], step(pd.NA, state), a DataFrame's object column with
    pd.NA and an all-None zi were each read as missing: now a list's pd.NA is too, in fit,
    filter, step and zi."""
    x = np.sin(np.arange(60) * 0.3)
    rows = [[v, v + 1.0] for v in x]
    rows[7][0] = None
    with_na = [list(r) for r in rows]
    with_na[7][0] = pd.NA
    f = F.ProjectionFilter(window=4, sigma=1.0)
    np.testing.assert_array_equal(f.fit(with_na).filter(with_na), f.fit(rows).filter(rows))
    assert with_na[7][0] is pd.NA  # the caller's list is untouched
    empty = f.initial_state()
    zi = [[pd.NA] * 2] * len(empty)  # an empty state written out, as with None
    np.testing.assert_array_equal(f.filter(rows, zi=zi)[0], f.filter(rows, zi=empty)[0])
    state, ys, want = empty, [], f.filter(rows, zi=empty)[0]
    for r in with_na:
        y, state = f.step(r, state)
        ys.append(y)
    np.testing.assert_array_equal(np.array(ys), want)
    y, _ = F.ProjectionFilter(window=4, sigma=1.0).step([pd.NA], np.full((4, 1), np.nan))
    assert np.isnan(y).all()
    np.testing.assert_array_equal(B.NaiveForecaster().fit([1.0, 2.0, pd.NA]).predict(1),
                                  B.NaiveForecaster().fit([1.0, 2.0, None]).predict(1))  # fmt: skip


def test_a_complex_number_or_text_beside_pandas_na_is_refused_not_read_in_part():
    """Read through the pd.NA fallback, numpy's complex kept its real part ([pd.NA, 1+2j]:
    a ComplexWarning the only word) and a state's text was read as numbers ("7.5" as 7.5),
    where x refuses both; a list state with None beside a complex passed the real check."""
    f = F.ProjectionFilter(window=4, sigma=1.0)
    x = np.sin(np.arange(40) * 0.3)[:, None].repeat(2, axis=1)
    for call in (lambda: f.filter([[pd.NA, np.complex128(1 + 2j)], *x.tolist()]),
                 lambda: f.step([pd.NA, np.complex128(1 + 2j)], f.initial_state(2))):  # fmt: skip
        with pytest.raises(TypeError, match=r"got list holding complex128"):
            call()
    one = F.ProjectionFilter(window=4, sigma=1.0)
    with pytest.raises(TypeError, match=r"^zi must be real"):
        one.filter(x[:, 0], zi=[[None]] * 3 + [[np.complex128(1 + 2j)]])
    with pytest.raises(TypeError, match=r"^zi must be a real numeric array.*got text"):
        one.filter(x[:, 0], zi=[["nan"]] * 3 + [[pd.NA]])
    with pytest.raises(TypeError, match=r"^zi must be a real numeric array.*got text"):
        one.filter(x[:, 0], zi=[["7.5"]] * 4)


def test_pandas_na_in_an_object_column_is_a_missing_sample_as_in_a_nullable_one():
    """``pd.DataFrame({"a": [1.0, pd.NA]})`` makes an object column, the same samples as a
    ``Float64`` one (taken, NA missing); it was refused as "x must be a real numeric array ...
    got DataFrame", naming neither the column nor the value. A value that is no number in an
    object column is named, as in a list."""
    obj = pd.DataFrame({"a": [1.0, pd.NA, 3.0, 4.0], "b": 1.0}, index=list("pqrs"))
    assert obj["a"].dtype == object
    nullable = obj.astype("Float64")
    for est in (B.MovingAverageFilter(window=2), F.ProjectionFilter(window=4, sigma=1.0)):
        pd.testing.assert_frame_equal(est.fit(obj).filter(obj), est.fit(nullable).filter(nullable))
        pd.testing.assert_series_equal(est.fit(obj["a"]).filter(obj["a"]),
                                       est.fit(nullable["a"]).filter(nullable["a"]))  # fmt: skip
    assert obj["a"].dtype == object and obj["a"].iloc[1] is pd.NA  # the input is untouched
    pd.testing.assert_series_equal(B.NaiveForecaster().fit(obj).predict(1).iloc[0],
                                   pd.Series([4.0, 1.0], index=["a", "b"], name=4))  # fmt: skip
    f = F.ProjectionFilter(window=4, sigma=1.0).fit(obj)
    _, state = f.step(obj.iloc[0], f.initial_state())
    y, _ = f.step(obj.iloc[1], state)  # a row of the object column, its NA missing
    np.testing.assert_array_equal(y, f.filter(nullable.iloc[:2]).to_numpy()[1])
    with pytest.raises(TypeError, match=r"got Series holding dict \{'a': 1\}$"):
        f.filter(pd.Series([1.0, {"a": 1}]))


def _masked_glitch(x, at):
    """``x`` with a glitch at ``at`` that the caller has masked, and ``x`` with NaN there."""
    m = np.ma.masked_array(x.copy(), mask=np.zeros(x.shape, bool))
    m[at] = 1e6
    m[at] = np.ma.masked
    nan = x.astype(np.float64)
    nan[at] = np.nan
    return m, nan


def test_a_masked_entry_is_a_missing_sample_in_fit_filter_and_forecast():
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(300) * 0.2) + 0.1 * rng.standard_normal(300)
    m, nan = _masked_glitch(x, 10)
    before_data, before_mask = m.data.copy(), m.mask.copy()
    filt = F.ProjectionFilter(window=[8, 16])  # fit chooses the settings from the series
    np.testing.assert_array_equal(filt.fit(m).filter(m), filt.fit(nan).filter(nan))
    f = F.ProjectionFilter(window=8, sigma=0.5)
    np.testing.assert_array_equal(f.step(m[10:11], f.initial_state())[0], [np.nan])
    kw = {"window": 8, "sigma": 0.5}
    np.testing.assert_array_equal(F.projection_filter(m, **kw), F.projection_filter(nan, **kw))
    fc = F.ProjectionForecaster(horizon=2, embedding=2, n_neighbors=4, model="mean")
    np.testing.assert_array_equal(fc.fit(m).forecast(m, 2), fc.fit(nan).forecast(nan, 2))
    np.testing.assert_array_equal(m.data, before_data)  # the caller's array is untouched
    np.testing.assert_array_equal(m.mask, before_mask)
    ints, nan_ints = _masked_glitch(np.arange(12), 3)  # an integer array: NaN needs floats
    np.testing.assert_array_equal(as_2d(ints)[0], nan_ints[:, None])
    assert ints.dtype.kind == "i" and ints.data[3] == 1e6
    objects = np.ma.masked_array(np.arange(12.0).astype(object), mask=ints.mask)
    objects.data[3] = 1e6  # objects too: the value under the mask was read as data
    np.testing.assert_array_equal(as_2d(objects)[0], nan_ints[:, None])


def test_restore_gives_integer_tensors_back_as_float():
    a, meta = as_2d(torch.arange(4))
    out = restore(a / 2, meta)
    assert out.dtype == torch.float64 and out[1] == 0.5


def test_save_load_round_trip_is_checked_against_the_schema(tmp_path):
    est = Scale(gain=3).fit(np.ones((5, 2)))
    est.save(tmp_path / "s")
    again = Scale.load(tmp_path / "s")
    assert again.gain == 3 and again.gain_ == 3.0 and again.n_channels_ == 2
    np.testing.assert_array_equal(again.offset_, np.zeros(2))
    cfg_path = tmp_path / "s" / "config.json"
    cfg = json.loads(cfg_path.read_text())

    def load_with(change, word):
        bad = json.loads(json.dumps(cfg))
        change(bad)
        cfg_path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=word):
            Scale.load(tmp_path / "s")

    load_with(lambda c: c["fitted"].update(filter="import os"), "unknown fitted attribute 'filter'")
    load_with(lambda c: c["fitted"].update(gain_="3"), "gain_")
    load_with(lambda c: c["params"].update(bogus=1), "bogus")
    load_with(lambda c: c.update(kind="Other"), "Other")
    load_with(lambda c: c.update(format=99), "format")
    load_with(lambda c: c.pop("params"), "params")
    cfg_path.write_text("{not json")
    with pytest.raises(ValueError, match="config.json"):
        Scale.load(tmp_path / "s")
    cfg_path.write_text(json.dumps(cfg))
    (tmp_path / "s" / "arrays.safetensors").write_bytes(b"truncated")
    with pytest.raises(ValueError, match="arrays.safetensors"):
        Scale.load(tmp_path / "s")
    with pytest.raises(FileNotFoundError, match="config.json"):
        Scale.load(tmp_path / "nothing")


def _estimator_classes():
    classes = [getattr(B, n) for n in B.__all__ if isinstance(getattr(B, n), type)]
    classes += [F.ProjectionFilter, F.ProjectionForecaster]
    classes += [F.ResidualProjectionFilter, F.ResidualProjectionForecaster]
    classes += [F.LearnedProjectionFilter, F.LearnedProjectionForecaster]
    return [c for c in classes if issubclass(c, Estimator)]


@pytest.mark.parametrize("cls", _estimator_classes(), ids=lambda c: c.__name__)
def test_every_estimator_only_stores_its_arguments(cls):
    """Whatever is passed comes back unchanged (no validation or conversion in __init__), and
    clone() round-trips: an object no check would accept is stored as it is."""
    marker = object()
    names = list(inspect.signature(cls).parameters)
    est = cls(**dict.fromkeys(names, marker))
    assert all(v is marker for v in est.get_params().values())
    assert list(est.get_params()) == names
    defaults = cls()
    assert defaults.clone().get_params() == defaults.get_params()
    assert isinstance(est, Denoiser | Forecaster)


@pytest.mark.parametrize(
    "est",
    [B.KalmanSmoother(), B.ARIMAForecaster(), B.SimplexForecaster()],
    ids=lambda e: type(e).__name__,
)
def test_estimators_without_a_schema_refuse_to_save(est, tmp_path):
    x = np.sin(np.arange(400) * 0.1)
    est.fit(x, target=x) if isinstance(est, Denoiser) else est.fit(x)
    with pytest.raises(NotImplementedError, match="no save format"):
        est.save(tmp_path / "e")
    assert not (tmp_path / "e").exists()


def test_design_only_filters_follow_set_params_at_once():
    x = np.sin(np.arange(400) * 0.3) + np.random.default_rng(0).normal(size=400)
    f = B.ButterworthFilter(cutoff=0.05).fit(x)
    y_low = f.filter(x)
    y_high = f.set_params(cutoff=0.5).filter(x)
    np.testing.assert_array_equal(y_high, B.ButterworthFilter(cutoff=0.5).fit(x).filter(x))
    assert not np.allclose(y_low, y_high)


def test_load_checks_the_saved_settings_as_fit_would(tmp_path):
    Scale(gain=3).fit(np.ones(4)).save(tmp_path / "s")
    cfg_path = tmp_path / "s" / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["params"]["gain"] = "three"
    cfg_path.write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="config.json: gain must be an int"):
        Scale.load(tmp_path / "s")
    cfg["params"] = {"gain": 3, "factor": 4}  # old and new name at once
    cfg_path.write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="config.json.*gain= only"):
        Scale.load(tmp_path / "s")


@pytest.mark.parametrize(
    "make",
    [
        lambda: B.AutoRegForecaster(lags=8),
        lambda: B.DLinearForecaster(lookback=16, horizon=2),
        lambda: F.ResidualProjectionForecaster(horizon=2),
    ],
    ids=["autoreg", "dlinear", "residual-projection"],
)
def test_a_refit_that_fails_leaves_the_last_fit_as_it_was(make):
    # the training series and scales were replaced before the length check refused the
    # refit: the model still read as fitted and forecast from the rejected data
    t = np.arange(400)
    y = np.c_[np.sin(t / 7.0), np.cos(t / 11.0)]
    est = make().fit(y)
    before = (est.forecast(y, horizon=2), est.predict(2))
    with pytest.raises(ValueError):
        est.fit(100 + 10 * y[:12])
    np.testing.assert_array_equal(est.forecast(y, horizon=2), before[0])
    np.testing.assert_array_equal(est.predict(2), before[1])
    assert "_fitting_" not in est.__dict__


_BY_COLUMN = {
    "projection": ("filter", lambda: F.ProjectionFilter(window=8, embedding=1, degree=0)),
    "wiener-fir": ("filter", lambda: B.WienerFIRFilter()),  # fitted against a target
    "autoreg": ("forecast", lambda: B.AutoRegForecaster(lags=4)),
    # (settings given, as the filters': the columns are checked, not the search)
    "projection-forecaster": (
        "forecast",
        lambda: F.ProjectionForecaster(horizon=2, embedding=3, delay=1),
    ),
}


@pytest.mark.parametrize("case", _BY_COLUMN)
def test_a_dataframe_with_other_columns_than_the_fit_is_refused_naming_both(case):
    # each channel keeps its fitted scale and settings by position: the columns swapped were
    # filtered with each other's settings and came back labelled as given, without a word
    method, make = _BY_COLUMN[case]
    t = np.arange(300.0)
    frame = pd.DataFrame({"gyro": np.sin(t / 9), "accel": 100 + 50 * np.cos(t / 5)})
    frame += np.random.default_rng(0).normal(0, [0.1, 5.0], size=frame.shape)
    fit_kw = {"target": frame.to_numpy()} if case == "wiener-fir" else {}
    est = make().fit(frame, **fit_kw)
    assert est.feature_names_in_ == ["gyro", "accel"]
    run = getattr(est, method)
    run(frame)  # the same columns: fine, and numpy input is not checked (no names)
    run(frame.to_numpy())
    with pytest.raises(ValueError, match=r"fitted on the columns \['gyro', 'accel'\]: select "
                       r"them in that order"):  # fmt: skip
        run(frame[["accel", "gyro"]])
    with pytest.raises(ValueError, match=r"has the columns \['gyro', 'acc'\].*rename them"):
        run(frame.rename(columns={"accel": "acc"}))
    est.fit(frame.to_numpy(), **fit_kw)  # a fit on numpy forgets the names
    assert not hasattr(est, "feature_names_in_")
    run(frame[["accel", "gyro"]])


@pytest.mark.parametrize("case", _BY_COLUMN)
@pytest.mark.parametrize(
    "labels", [[("imu", "gyro"), ("imu", "accel")], [7, 3]], ids=["multiindex", "sensor-ids"]
)
def test_columns_labelled_otherwise_than_by_text_are_checked_too(case, labels):
    # only all-text names were checked (as scikit-learn's feature_names_in_): a MultiIndex's
    # columns, or sensors numbered 7 and 3, swapped were filtered with each other's settings
    method, make = _BY_COLUMN[case]
    t = np.arange(300.0)
    values = np.c_[np.sin(t / 9), 100 + 50 * np.cos(t / 5)]
    values += np.random.default_rng(0).normal(0, [0.1, 5.0], size=values.shape)
    columns = pd.MultiIndex.from_tuples(labels) if isinstance(labels[0], tuple) else labels
    frame = pd.DataFrame(values, columns=columns)
    fit_kw = {"target": values} if case == "wiener-fir" else {}
    run = getattr(make().fit(frame, **fit_kw), method)
    run(frame)
    with pytest.raises(ValueError, match=r"fitted on the columns .*select them in that order"):
        run(frame[frame.columns[::-1]])
    run = getattr(make().fit(pd.DataFrame(values), **fit_kw), method)  # positional: no names
    run(frame[frame.columns[::-1]])


@pytest.mark.parametrize("case", _BY_COLUMN)
def test_positions_swapped_are_refused_and_a_nan_label_matches_itself(case):
    # a fit on df[[1, 0]] took df[[0, 1]] (the given labels looked positional), a fit on a
    # numpy array's frame took its columns swapped, and a frame with a NaN label was refused
    # against itself (NaN != NaN)
    method, make = _BY_COLUMN[case]
    t = np.arange(300.0)
    values = np.c_[np.sin(t / 9), 100 + 50 * np.cos(t / 5)]
    values += np.random.default_rng(0).normal(0, [0.1, 5.0], size=values.shape)
    fit_kw = {"target": values} if case == "wiener-fir" else {}
    for labels, swapped in (([1, 0], [0, 1]), ([0, 1], [1, 0])):
        run = getattr(make().fit(pd.DataFrame(values, columns=labels), **fit_kw), method)
        with pytest.raises(ValueError, match="select them in that order"):
            run(pd.DataFrame(values, columns=labels)[swapped])
    run(pd.DataFrame(values, columns=["a", "b"]))  # positions against names: nothing to say
    nan_labels = pd.DataFrame(values, columns=[np.nan, 1.0])
    getattr(make().fit(nan_labels, **fit_kw), method)(nan_labels)


@pytest.mark.parametrize("case", _BY_COLUMN)
def test_a_series_named_otherwise_than_the_fitted_series_is_refused_naming_both(case):
    # a model fitted on Series 'HUFL' forecast Series 'OT' without a word, where a DataFrame
    # fit refused other columns
    method, make = _BY_COLUMN[case]
    t = np.arange(300.0)
    hufl = pd.Series(np.sin(t / 9) + np.random.default_rng(0).normal(0, 0.1, 300), name="HUFL")
    fit_kw = {"target": hufl.to_numpy()} if case == "wiener-fir" else {}
    run = getattr(make().fit(hufl, **fit_kw), method)
    run(hufl)
    with pytest.raises(ValueError, match=r"is the Series 'OT', but \w+ was fitted on the Series "
                       r"'HUFL': rename it \(\w\.rename\('HUFL'\)\)"):  # fmt: skip
        run(hufl.rename("OT"))
    with pytest.raises(ValueError, match=r"has the columns \['OT'\].*on the Series 'HUFL'"):
        run(hufl.to_frame("OT"))
    run(hufl.rename(None))  # no name: nothing to check
    run(hufl.to_frame(0))  # a positional column name, as a DataFrame fit takes it
    run = getattr(make().fit(hufl.to_frame(), **fit_kw), method)  # a frame fit: its column
    with pytest.raises(ValueError, match=r"is the Series 'OT'.*on the columns \['HUFL'\]"):
        run(hufl.rename("OT"))
    run = getattr(make().fit(hufl.rename(None), **fit_kw), method)  # fitted without a name
    run(hufl.rename("OT"))


def test_a_loaded_forecaster_refuses_a_series_named_otherwise_than_the_fitted_one(tmp_path):
    # the name comes back with what predict returns (pandas_output); a denoiser saves none
    y = pd.Series(np.sin(np.arange(300.0) / 9), name="HUFL")
    B.AutoRegForecaster(lags=4).fit(y).save(tmp_path / "ar")
    loaded = B.AutoRegForecaster.load(tmp_path / "ar")
    loaded.forecast(y)
    with pytest.raises(ValueError, match=r"is the Series 'OT'.*on the Series 'HUFL'"):
        loaded.forecast(y.rename("OT"))


def test_a_filter_fitted_on_a_dataframe_checks_its_columns_after_save_and_load(tmp_path):
    t = np.arange(300.0)
    frame = pd.DataFrame({"gyro": np.sin(t / 9), "accel": 100 + 50 * np.cos(t / 5)})
    F.ProjectionFilter(window=8, embedding=1, degree=0).fit(frame).save(tmp_path / "f")
    loaded = F.ProjectionFilter.load(tmp_path / "f")
    assert loaded.feature_names_in_ == ["gyro", "accel"]
    with pytest.raises(ValueError, match="select them in that order"):
        loaded.filter(frame[["accel", "gyro"]])
    config = json.loads((tmp_path / "f" / "config.json").read_text())
    config["feature_names_in"] = ["gyro"]  # one name for two channels
    (tmp_path / "f" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="'feature_names_in' must be one column name per chan"):
        F.ProjectionFilter.load(tmp_path / "f")


def test_a_save_to_a_link_whose_folder_is_missing_says_so_and_writes_nothing(tmp_path):
    """A deployed ``model -> /mnt/models/current`` whose target is not there (a mount not up):
    save said "[Errno 17] File exists: 'model'", of a path that does not exist."""
    (tmp_path / "model").symlink_to(tmp_path / "current")
    f = F.ProjectionFilter(window=[8], embedding=[1], degree=[0]).fit(np.sin(np.arange(200) / 5))
    with pytest.raises(FileNotFoundError, match=r"model is a link to .*current, which does not"):
        f.save(tmp_path / "model")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_a_save_that_fails_half_way_leaves_a_folder_that_loads_as_it_was_or_not_at_all(
    tmp_path, monkeypatch
):
    """The config and the arrays were written straight to their names, config first: a full
    disk at the arrays left a new config beside old arrays, and that pair loaded -- B's
    settings on A's training series, a forecaster of neither. Then each file was written and
    renamed in turn, the arrays first: a full disk at the config lost A. Now both are written
    before either is renamed: a full disk leaves A; a save killed between the renames leaves
    a folder refused on load."""
    import os

    import tssdpa.estimators.persistence as persistence

    t = np.arange(300)
    a = F.ProjectionForecaster(horizon=2).fit(np.sin(t / 7))
    b = F.ProjectionForecaster(horizon=2).fit(3 * np.cos(t / 5) + 10)
    a.save(tmp_path / "m")
    real_write, real_replace = Path.write_bytes, os.replace

    def full_disk(self, data):
        if persistence.CONFIG in self.name:
            raise OSError(28, "No space left on device")
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    with pytest.raises(OSError, match="No space"):
        b.save(tmp_path / "m")
    monkeypatch.setattr(Path, "write_bytes", real_write)
    np.testing.assert_array_equal(  # A, as it was
        F.ProjectionForecaster.load(tmp_path / "m").predict(2), a.predict(2)
    )

    def killed(src, dst):
        if Path(dst).name == persistence.CONFIG:
            raise OSError("killed")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(OSError, match="killed"):
        b.save(tmp_path / "m")  # the arrays are B's, the config still A's
    monkeypatch.setattr(os, "replace", real_replace)
    with pytest.raises(ValueError, match="is not the arrays .* was saved with"):
        F.ProjectionForecaster.load(tmp_path / "m")
    b.save(tmp_path / "m")
    np.testing.assert_array_equal(
        F.ProjectionForecaster.load(tmp_path / "m").predict(2), b.predict(2)
    )
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [
        "arrays.safetensors",
        "config.json",
    ]


@pytest.mark.parametrize(
    "make, key, value",
    [
        (lambda x: F.ProjectionFilter(window=[16], embedding=[1]).fit(x), ("sigma_",), 2.0),
        (lambda x: F.ProjectionFilter(window=[16], degree=[0]).fit(x), ("degree_",), 2),
        (lambda x: F.ProjectionForecaster(horizon=2).fit(x), ("best_params_", "1", "ridge"), 1.5),
        (lambda x: F.ResidualProjectionForecaster().fit(x), ("null_distance_", 0), 1.5),
    ],
    ids=["filter sigma_", "filter degree_", "forecaster ridge", "residual radius"],
)
def test_a_fitted_value_edited_to_another_valid_one_is_refused_on_load(
    make, key, value, tmp_path, edit_config
):
    """Only the arrays were digested: each of these loaded and changed every output (a sigma_
    of 2.0 for 1.34 by 0.04, a ridge of 1.5 for 0.001 by 0.29), where an edited array is
    refused."""
    t = np.arange(600)
    x = np.sin(t / 10) + 0.1 * np.random.default_rng(0).standard_normal(600)
    est = make(x)
    est.save(tmp_path / "e")
    type(est).load(tmp_path / "e")  # as saved: loads

    def edit(cfg):
        node = cfg["fitted"]
        for k in key[:-1]:
            node = node[k]
        assert node[key[-1]] != value
        node[key[-1]] = value

    edit_config(tmp_path / "e", edit)
    with pytest.raises(ValueError, match="config.json: its 'fitted' state is not the one"):
        type(est).load(tmp_path / "e")


@pytest.mark.parametrize("digest", ["fitted_sha256", "arrays_sha256"])
def test_a_current_file_without_its_digest_is_refused_and_an_older_one_loads(
    digest, tmp_path, edit_config
):
    """The digests were optional for every file: deleting fitted_sha256 beside an edited
    sigma_ loaded the edit (and changed every output). A file of the current format carries
    both; one of format 1, written before them, still loads."""
    x = np.sin(np.arange(400) / 10) + 0.1 * np.random.default_rng(0).standard_normal(400)
    est = F.ProjectionFilter(window=[16], embedding=[1]).fit(x)
    est.save(tmp_path / "e")
    assert json.loads((tmp_path / "e" / "config.json").read_text())["format"] == FORMAT
    edit_config(tmp_path / "e", lambda cfg: cfg.pop(digest))
    with pytest.raises(ValueError, match=f"config.json: missing {digest!r}"):
        F.ProjectionFilter.load(tmp_path / "e")
    edit_config(tmp_path / "e", lambda cfg: (cfg.update(format=1), cfg.pop("fitted_sha256", 0)))
    with pytest.warns(UncheckedFileWarning, match="its fitted values load unchecked"):
        back = F.ProjectionFilter.load(tmp_path / "e")
    np.testing.assert_array_equal(back.filter(x), est.filter(x))


@pytest.mark.parametrize("key", ["structures", "feature_names", "comment"])
def test_an_unknown_key_at_the_top_of_a_saved_config_is_refused_naming_it(
    key, tmp_path, edit_config
):
    """Unknown parameters and fitted keys were refused, but an unknown key beside them (a
    misspelt 'structure' or 'feature_names_in', a note added by hand) loaded without a word."""
    x = np.sin(np.arange(400) / 10) + 0.1 * np.random.default_rng(0).standard_normal(400)
    F.ProjectionFilter(window=[16], embedding=[1]).fit(x).save(tmp_path / "e")
    F.ProjectionFilter.load(tmp_path / "e")  # as saved: loads
    edit_config(tmp_path / "e", lambda cfg: cfg.update({key: ["a"]}))
    with pytest.raises(ValueError, match=f"config.json: unknown key\\(s\\) \\[{key!r}\\]"):
        F.ProjectionFilter.load(tmp_path / "e")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda text: text.replace('"tol": 1e-06', '"tol": 1e-06, "tol": 0.5'),
         r"key\(s\) \['tol'\] given twice"),
        (lambda text: text.replace('"tol": 1e-06', '"tol": 1' + "0" * 5000),
         "Exceeds the limit"),
    ],
    ids=["a key given twice", "an integer of 5001 digits"],
)  # fmt: skip
def test_a_config_json_that_json_cannot_read_exactly_is_refused_as_invalid_naming_the_file(
    edit, message, tmp_path
):
    """A key given twice loaded the last value without a word (json keeps it; save never
    writes one twice), and an over-long integer raised Python's own ValueError, naming
    neither the file nor what was wrong with it."""
    x = np.sin(np.arange(400) / 10) + 0.1 * np.random.default_rng(0).standard_normal(400)
    F.ProjectionFilter(window=[16], embedding=[1]).fit(x).save(tmp_path / "e")
    path = tmp_path / "e" / "config.json"
    path.write_text(edit(path.read_text()))
    with pytest.raises(ValueError, match=f"config.json is not valid JSON: .*{message}"):
        F.ProjectionFilter.load(tmp_path / "e")


def test_a_digest_edited_to_another_type_is_told_as_such_not_as_missing(tmp_path):
    # "arrays_sha256": 123 was refused as "missing 'arrays_sha256'"
    x = np.sin(np.arange(400) / 10) + 0.1 * np.random.default_rng(0).standard_normal(400)
    F.ProjectionFilter(window=[16], embedding=[1]).fit(x).save(tmp_path / "e")
    path = tmp_path / "e" / "config.json"
    cfg = json.loads(path.read_text())
    cfg["arrays_sha256"] = 123
    path.write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="'arrays_sha256' is of type int, not text"):
        F.ProjectionFilter.load(tmp_path / "e")


def test_a_format_2_file_edited_to_format_1_is_refused_or_loads_with_a_warning(
    tmp_path, edit_config
):
    """Setting "format": 1 and deleting fitted_sha256 loaded a file with an edited fitted
    value (a ProjectionForecaster's ridge) without a word: format 1's digests are optional.
    A file holding what only format 2 wrote (pandas_output) is refused; one without it cannot
    be told from a genuine older file (the digests guard against accidents, not tampering),
    and loads with a warning that its fitted values are unchecked."""
    t = np.arange(400)
    y = np.sin(t / 10) + 0.1 * np.random.default_rng(0).standard_normal(400)
    series = pd.Series(y, index=pd.date_range("2026", periods=400, freq="s"))
    fc = F.ProjectionForecaster(horizon=2, embedding=[2], n_neighbors=[4])
    fc.fit(series).save(tmp_path / "f")

    def downgrade(cfg):
        cfg["fitted"]["best_params_"]["1"]["ridge"] = 1.5
        cfg.update(format=1)
        cfg.pop("fitted_sha256")

    edit_config(tmp_path / "f", downgrade)
    with pytest.raises(ValueError, match="'pandas_output' in a file of format 1.*edited"):
        F.ProjectionForecaster.load(tmp_path / "f")
    fc.fit(y).save(tmp_path / "g")  # numpy: no key format 1 lacks
    edit_config(tmp_path / "g", downgrade)
    with pytest.warns(UncheckedFileWarning, match="format-1 file without 'fitted_sha256'") as w:
        F.ProjectionForecaster.load(tmp_path / "g")
    assert w[0].filename == __file__  # the user's line, not the package's
    with warnings.catch_warnings():  # what save writes loads without a word
        warnings.simplefilter("error", UncheckedFileWarning)
        F.ProjectionForecaster.load(fc.save(tmp_path / "h") or tmp_path / "h")


def test_a_current_file_without_its_structure_is_refused_and_an_older_one_loads(
    tmp_path, edit_config
):
    """Deleting 'structure' beside an edited structural parameter loaded the edit: a
    ProjectionForecaster's library_size edited to 100 changed forecast_path by 0.52."""
    y = np.sin(np.arange(400) / 10) + 0.1 * np.random.default_rng(0).standard_normal(400)
    F.ProjectionForecaster(horizon=2, embedding=[2], n_neighbors=[4]).fit(y).save(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: (cfg.pop("structure"),
                                             cfg["params"].update(library_size=100)))  # fmt: skip
    with pytest.raises(ValueError, match="config.json: missing 'structure'"):
        F.ProjectionForecaster.load(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: (cfg.update(format=1), cfg.pop("fitted_sha256")))
    with pytest.warns(UncheckedFileWarning):
        assert F.ProjectionForecaster.load(tmp_path / "f").library_size == 100


@pytest.mark.parametrize("key", ["feature_names_in", "pandas_output"])
def test_what_a_pandas_fit_learned_is_digested_too(key, tmp_path, edit_config):
    """Deleting feature_names_in loaded a filter that took a DataFrame's columns swapped, each
    channel filtered with the other's scale (gyro off by 1.1), where its fit refused them."""
    t = np.arange(400)
    frame = pd.DataFrame({"gyro": np.sin(t / 10), "enc": 1000 + 100 * np.cos(t / 20)},
                         index=pd.date_range("2026", periods=400, freq="s"))  # fmt: skip
    F.ProjectionForecaster(horizon=1, embedding=[2], n_neighbors=[4]).fit(frame).save(tmp_path)
    edit_config(tmp_path, lambda cfg: cfg.pop(key))
    with pytest.raises(ValueError, match=f"'fitted' state is not the one.*{key}"):
        F.ProjectionForecaster.load(tmp_path)


def test_a_numpy_dtype_setting_is_saved_by_its_name(tmp_path):
    # dtype=np.float32 fitted and filtered, then save raised TypeError (no JSON for a type)
    x = np.sin(np.arange(300) / 7) + 0.2 * np.random.default_rng(0).normal(size=300)
    f = F.ProjectionFilter(dtype=np.float32).fit(x)
    f.save(tmp_path / "f")
    g = F.ProjectionFilter.load(tmp_path / "f")
    assert g.dtype == "float32"
    np.testing.assert_array_equal(g.filter(x), f.filter(x))


def test_a_dataframe_fit_with_column_names_that_are_not_text_checks_no_names(tmp_path):
    # scikit-learn records feature_names_in_ for text column names only, and save keeps text
    # names only: a fit on pd.DataFrame(array)[[3, 5]] refused pd.DataFrame(new_array) in
    # memory ('fitted on the columns [3, 5]') and took it after save and load
    rng = np.random.default_rng(0)
    a = np.cumsum(rng.normal(size=(300, 2)), axis=0)
    frame = pd.DataFrame(np.c_[a, a][:, :4])[[3, 1]]
    est = F.ProjectionFilter(window=8, embedding=1, degree=0).fit(frame)
    assert not hasattr(est, "feature_names_in_")
    est.filter(pd.DataFrame(a))
    est.save(tmp_path / "f")
    F.ProjectionFilter.load(tmp_path / "f").filter(pd.DataFrame(a))


def test_forecast_path_of_pandas_is_a_dataframe_on_its_index_with_a_column_per_horizon():
    """forecast gave pandas back and forecast_path a bare array: the origins' times and the
    channels' names were lost, and a (T, H, C) array's last axis had to be matched by hand."""
    t = np.arange(400)
    index = pd.date_range("2026-01-01", periods=400, freq="min", tz="UTC")
    frame = pd.DataFrame({"gyro": np.sin(t / 9), "enc": np.cos(t / 13)}, index=index)
    # embedding given: a search 10x quicker than the default's (pandas in and out is tested)
    for est in (B.AutoRegForecaster(lags=3), F.ProjectionForecaster(horizon=3, embedding=3)):
        est.fit(frame["gyro"])
        path = est.forecast_path(frame["gyro"], horizon=3)
        want = est.forecast_path(frame["gyro"].to_numpy(), horizon=3)
        assert list(path.columns) == [1, 2, 3] and path.columns.name == "h"
        assert path.index.equals(index)
        np.testing.assert_array_equal(path.to_numpy(), want)
        np.testing.assert_array_equal(path[2].to_numpy(), est.forecast(frame["gyro"], 2))
        est.fit(frame)
        path = est.forecast_path(frame, horizon=3)
        want = est.forecast_path(frame.to_numpy(), horizon=3)  # (T, H, C)
        assert path.index.equals(index) and path.shape == (400, 6)
        np.testing.assert_array_equal(path["enc"].to_numpy(), want[:, :, 1])
        np.testing.assert_array_equal(path[("gyro", 3)].to_numpy(), want[:, 2, 0])
        assert isinstance(want, np.ndarray)  # numpy in, numpy out


def test_forecast_path_of_multiindex_columns_keeps_their_levels_and_names_then_h():
    """Columns ('imu', 'ax'), ('imu', 'ay') named (dev, ch) gave columns ((('imu', 'ax'), 1),
    ...) named (None, 'h'): the level names were lost and ``path[('imu', 'ax')]``, a
    channel's path as for any other frame, raised KeyError."""
    t = np.arange(200)
    columns = pd.MultiIndex.from_tuples([("imu", "ax"), ("imu", "ay")], names=["dev", "ch"])
    frame = pd.DataFrame(np.c_[np.sin(t / 9), np.cos(t / 13)], columns=columns)
    est = B.AutoRegForecaster(lags=3).fit(frame)
    path, want = est.forecast_path(frame, 2), est.forecast_path(frame.to_numpy(), 2)
    assert path.columns.names == ["dev", "ch", "h"]
    assert list(path.columns) == [("imu", "ax", 1), ("imu", "ax", 2), ("imu", "ay", 1),
                                  ("imu", "ay", 2)]  # fmt: skip
    np.testing.assert_array_equal(path[("imu", "ay")].to_numpy(), want[:, :, 1])
    np.testing.assert_array_equal(path["imu"].to_numpy(), path.to_numpy())


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=["float32", "int64"])
def test_forecast_path_of_a_tensor_is_a_tensor_as_forecast_is(dtype):
    """forecast gave a tensor back and forecast_path a numpy array."""
    y = torch.as_tensor(np.round(10 * np.sin(np.arange(300) / 9)), dtype=dtype)
    want_dtype = torch.float32 if dtype == torch.float32 else torch.float64
    # embedding given: a search 10x quicker than the default's (tensors in and out are tested)
    for est in (B.AutoRegForecaster(lags=3), F.ProjectionForecaster(horizon=2, embedding=3)):
        est.fit(y)
        path = est.forecast_path(y, horizon=2)
        assert isinstance(path, torch.Tensor) and path.shape == (300, 2)
        assert path.dtype == want_dtype and path.device == y.device
        assert est.forecast(y, 2).dtype == path.dtype
        np.testing.assert_allclose(path.numpy(), est.forecast_path(y.numpy(), horizon=2),
                                   rtol=1e-6)  # fmt: skip
        two = torch.stack([y, y], 1)
        path = est.fit(two).forecast_path(two, horizon=2)
        assert isinstance(path, torch.Tensor) and path.shape == (300, 2, 2)


def test_a_file_of_a_newer_format_says_a_newer_tssdpa_wrote_it(tmp_path, edit_config):
    F.ProjectionForecaster(horizon=1).fit(np.sin(np.arange(200) / 7)).save(tmp_path / "m")
    edit_config(tmp_path / "m", lambda cfg: cfg.update(format=3))
    with pytest.raises(ValueError, match="unsupported format 3 .*written by a newer tssdpa"):
        F.ProjectionForecaster.load(tmp_path / "m")
    edit_config(tmp_path / "m", lambda cfg: cfg.update(format=0))
    with pytest.raises(ValueError, match=r"unsupported format 0 \(expected 2\)$"):
        F.ProjectionForecaster.load(tmp_path / "m")


@pytest.mark.parametrize("name", ["config.json", "arrays.safetensors"])
def test_a_folder_where_save_writes_a_file_is_refused_before_anything_is_written(tmp_path, name):
    # os.replace onto it raised a raw IsADirectoryError, the other file written already
    (tmp_path / "m" / name).mkdir(parents=True)
    fc = F.ProjectionForecaster(horizon=1).fit(np.sin(np.arange(200) / 7))
    with pytest.raises(IsADirectoryError, match=f"{name} is a folder, where save writes a file"):
        fc.save(tmp_path / "m")
    assert [p.name for p in (tmp_path / "m").iterdir()] == [name]
