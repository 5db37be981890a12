"""Saving the residual hybrids and their linear bases: exact round trips, strict loading."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from tssdpa.baselines import AutoRegForecaster, DLinearForecaster, WienerFIRFilter
from tssdpa.filters import ResidualProjectionFilter, ResidualProjectionForecaster

rng = np.random.default_rng(3)
T = np.arange(900) * 0.05
CLEAN = np.column_stack([np.sin(T) + 0.4 * np.sin(3.1 * T) ** 3, np.cos(0.7 * T)])
NOISY = CLEAN + 0.2 * rng.standard_normal(CLEAN.shape)


def _fit(est):
    if isinstance(est, (ResidualProjectionFilter, WienerFIRFilter)):
        return est.fit(NOISY[:600], target=CLEAN[:600])
    return est.fit(CLEAN[:600])


def _output(est):
    if isinstance(est, (ResidualProjectionFilter, WienerFIRFilter)):
        return est.filter(NOISY)
    return np.concatenate([est.forecast_path(CLEAN, 3).ravel(), est.predict(7).ravel()])


SAVEABLE = {
    "residual_forecaster_autoreg": lambda: ResidualProjectionForecaster(
        base_params={"lags": 4}, embedding=4, horizon=3
    ),
    "residual_forecaster_dlinear": lambda: ResidualProjectionForecaster(
        base="dlinear", lookback=32, embedding=4, horizon=3, channel_independent=True
    ),
    "residual_filter": lambda: ResidualProjectionFilter(window=8, embedding=4),
    "residual_filter_zero_phase_no_fade": lambda: ResidualProjectionFilter(
        window=8, embedding=4, causal=False, fade=None
    ),
    "autoreg": lambda: AutoRegForecaster(lags=3),
    "dlinear": lambda: DLinearForecaster(lookback=32, horizon=3, individual=True),
    "wiener_fir": lambda: WienerFIRFilter(window=6),
}


@pytest.fixture(scope="module", params=sorted(SAVEABLE))
def fitted(request):
    return _fit(SAVEABLE[request.param]())


def test_a_loaded_estimator_gives_the_same_output_bit_for_bit(fitted, tmp_path):
    fitted.save(tmp_path / "e")
    again = type(fitted).load(tmp_path / "e")
    assert again.get_params() == fitted.get_params()
    np.testing.assert_array_equal(_output(again), _output(fitted))


def test_a_missing_or_foreign_array_is_refused_naming_it(fitted, tmp_path):
    fitted.save(tmp_path / "e")
    path = tmp_path / "e" / "arrays.safetensors"
    arrays = load_file(str(path))
    victim = sorted(arrays)[0]
    save_file({k: v for k, v in arrays.items() if k != victim}, str(path))
    with pytest.raises(ValueError, match=f"cannot restore.*{victim}"):
        type(fitted).load(tmp_path / "e")
    save_file({**arrays, "base_.evil": np.zeros(1)}, str(path))
    with pytest.raises(ValueError, match="unknown array 'base_.evil'"):
        type(fitted).load(tmp_path / "e")


def test_arrays_of_the_wrong_shape_are_refused(fitted, tmp_path):
    fitted.save(tmp_path / "e")
    path = tmp_path / "e" / "arrays.safetensors"
    arrays = load_file(str(path))
    name = next(k for k in sorted(arrays) if k != "train_" and not k.endswith("train_"))
    save_file({**arrays, name: np.zeros((2, 3, 5, 7))}, str(path))
    with pytest.raises(ValueError, match="cannot restore"):
        type(fitted).load(tmp_path / "e")


@pytest.mark.parametrize("name", ["residual_forecaster_autoreg", "residual_filter"])
@pytest.mark.parametrize("sigma", ["1.5", True, ["0.5", "1"]])
def test_a_kernel_width_saved_as_text_or_a_bool_is_refused_naming_sigma(
    name, sigma, tmp_path, edit_config
):
    """numpy read "1.5" and True as widths: such a config.json loaded, and fit took them."""
    est = _fit(SAVEABLE[name]())
    est.save(tmp_path / "e")
    edit_config(tmp_path / "e", lambda cfg: cfg["params"].update(sigma=sigma))
    with pytest.raises(ValueError, match="config.json: sigma must be > 0"):
        type(est).load(tmp_path / "e")
    with pytest.raises(ValueError, match="sigma must be > 0"):
        _fit(SAVEABLE[name]().set_params(sigma=sigma))


@pytest.mark.parametrize("cls", [ResidualProjectionForecaster, ResidualProjectionFilter])
def test_the_nested_base_state_is_checked_against_the_base_schema(cls, tmp_path):
    est = _fit(SAVEABLE["residual_filter" if cls is ResidualProjectionFilter else
                       "residual_forecaster_autoreg"]())  # fmt: skip
    est.save(tmp_path / "e")
    cfg_path = tmp_path / "e" / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["fitted"]["base_"]["step"] = "import os"
    cfg_path.write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="unknown fitted attribute 'step'"):
        cls.load(tmp_path / "e")
    del cfg["fitted"]["base_"]
    cfg_path.write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="base_"):
        cls.load(tmp_path / "e")


def _tamper_arrays(folder, change) -> None:
    path = folder / "arrays.safetensors"
    arrays = load_file(str(path))
    change(arrays)
    save_file(arrays, str(path))


def test_nan_in_any_fitted_value_is_refused_naming_the_array(fitted, tmp_path):
    """A NaN coefficient would load and then make every output NaN; only the training
    series (its gaps), a channel without a null distance and the residual forecaster's
    library rows past a channel's last reading may hold NaN (a library all NaN is refused)."""
    fitted.save(tmp_path / "e")
    names = load_file(str(tmp_path / "e" / "arrays.safetensors"))
    for name in sorted(names):
        if name.rsplit(".", 1)[-1] in ("train_", "null_distance_"):
            continue
        fitted.save(tmp_path / name)
        _tamper_arrays(tmp_path / name, lambda a, n=name: a.update({n: np.full_like(a[n], np.nan)}))
        library = isinstance(fitted, ResidualProjectionForecaster) and "library" in name
        message = "library_keys must hold one known" if library else f"array '{name}' holds NaN"
        with pytest.raises(ValueError, match=message):
            type(fitted).load(tmp_path / name)


def test_a_training_series_of_other_channels_or_without_a_sample_is_refused(fitted, tmp_path):
    fitted.save(tmp_path / "e")
    arrays = load_file(str(tmp_path / "e" / "arrays.safetensors"))
    trains = [n for n in sorted(arrays) if n.rsplit(".", 1)[-1] == "train_"]
    if not trains:
        pytest.skip(f"{type(fitted).__name__} keeps no training series")
    for name in trains:
        C = arrays[name].shape[1]
        for bad, message in (
            (np.zeros((50, C + 3)), "train_ must be"),
            (np.full((50, C), np.nan), "no finite sample"),
        ):
            fitted.save(tmp_path / "t")
            _tamper_arrays(tmp_path / "t", lambda a, n=name, b=bad: a.update({n: b}))
            with pytest.raises(ValueError, match=message):
                type(fitted).load(tmp_path / "t")


def test_a_zero_scale_or_kernel_width_is_refused(tmp_path):
    est = _fit(SAVEABLE["residual_filter"]())
    for name in ("scale_", "sigma_"):
        est.save(tmp_path / name)
        _tamper_arrays(tmp_path / name, lambda a, n=name: a.update({n: np.zeros_like(a[n])}))
        with pytest.raises(ValueError, match=f"{name} must be > 0"):
            ResidualProjectionFilter.load(tmp_path / name)


def test_a_residual_library_of_another_pattern_length_is_refused(tmp_path):
    est = _fit(SAVEABLE["residual_forecaster_autoreg"]())
    est.save(tmp_path / "e")
    _tamper_arrays(
        tmp_path / "e",
        lambda a: a.update({"library_keys": np.zeros(a["library_keys"].shape[:2] + (9,))}),
    )
    with pytest.raises(ValueError, match="library_keys must be"):
        ResidualProjectionForecaster.load(tmp_path / "e")


@pytest.mark.parametrize(
    "name, keys, message",
    [
        ("residual_forecaster_autoreg", ("library_keys", "library_residuals"), "library_keys"),
        ("residual_filter", ("library_keys.1", "library_residuals.1"), "library of channel 1"),
    ],
)
def test_a_saved_library_without_a_pattern_is_refused_at_load(name, keys, message, tmp_path):
    # it loaded, then forecast / filter failed inside numpy (reshape, max of nothing)
    est = _fit(SAVEABLE[name]())
    est.save(tmp_path / "e")
    _tamper_arrays(tmp_path / "e", lambda a: a.update({k: a[k][:0] for k in keys}))
    with pytest.raises(ValueError, match=f"{message} must hold one .*at least, got 0"):
        type(est).load(tmp_path / "e")


def test_a_filter_saved_with_fade_radii_but_fade_none_is_refused(tmp_path):
    # the radii are what the filter applies: a file saying fade=None loaded and faded anyway
    est = _fit(SAVEABLE["residual_filter"]())
    est.save(tmp_path / "e")
    cfg_path = tmp_path / "e" / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["params"]["fade"] = None
    cfg_path.write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="null_distance_ must be 0 without fade"):
        ResidualProjectionFilter.load(tmp_path / "e")


@pytest.mark.parametrize("make", [SAVEABLE["residual_filter"], SAVEABLE["wiener_fir"]])
def test_saving_an_unfitted_trained_filter_is_refused_saying_fit_it(make, tmp_path):
    # ResidualProjectionFilter raised AttributeError: ... no attribute 'n_channels_'
    with pytest.raises(ValueError, match="is not fitted: call fit"):
        make().save(tmp_path / "e")
    assert not (tmp_path / "e").exists()


def _fitted_array_names(est, tmp_path):
    est.save(tmp_path / "names")
    return sorted(load_file(str(tmp_path / "names" / "arrays.safetensors")))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda v: v.astype(np.int64), "must be float64, got int64"),
        (lambda v: v.astype(bool), "must be float64, got bool"),
        (lambda v: v.astype(np.float16), "must be float64, got float16"),
        (lambda v: np.full_like(v, np.inf), "holds inf"),
    ],
)
def test_a_fitted_array_of_another_dtype_or_holding_inf_is_refused_naming_it(
    fitted, change, message, tmp_path
):
    """Each of these loaded before and quietly rounded the output (or made it inf / NaN)."""
    for name in _fitted_array_names(fitted, tmp_path):
        fitted.save(tmp_path / name)
        _tamper_arrays(tmp_path / name, lambda a, n=name: a.update({n: change(a[n])}))
        named = f"base_: array '{name[6:]}'" if name.startswith("base_.") else f"array '{name}'"
        with pytest.raises(ValueError, match=f"{named} {message}"):
            type(fitted).load(tmp_path / name)


def test_a_saved_state_without_its_channel_count_is_refused(fitted, tmp_path, edit_config):
    """It loaded before as an unfitted estimator ("call fit() first" at filter time)."""
    fitted.save(tmp_path / "e")
    edit_config(tmp_path / "e", lambda cfg: cfg["fitted"].pop("n_channels_"))
    with pytest.raises(ValueError, match="missing fitted 'n_channels_'"):
        type(fitted).load(tmp_path / "e")
    if "base_" in json.loads((tmp_path / "e" / "config.json").read_text())["fitted"]:
        fitted.save(tmp_path / "b")
        edit_config(tmp_path / "b", lambda cfg: cfg["fitted"]["base_"].update(n_channels_=0))
        with pytest.raises(ValueError, match="base_: n_channels_ must be an integer >= 1"):
            type(fitted).load(tmp_path / "b")


@pytest.mark.parametrize(
    "name, coefficients",
    [
        ("autoreg", ("const_", "coef_")),
        ("dlinear", ("linear_map_", "bias_")),
        ("wiener_fir", ("coef_", "intercept_")),
    ],
)
def test_coefficients_of_fewer_channels_than_fitted_are_refused(name, coefficients, tmp_path):
    """One channel's coefficients for a two-channel fit loaded before, then raised a raw
    IndexError (or a misleading channel error) on the second channel."""
    est = _fit(SAVEABLE[name]())
    est.save(tmp_path / "e")
    _tamper_arrays(tmp_path / "e", lambda a: a.update({k: a[k][:1] for k in coefficients}))
    with pytest.raises(ValueError, match="must be \\(n_channels_=2"):
        type(est).load(tmp_path / "e")


@pytest.mark.parametrize("name", sorted(k for k in SAVEABLE if k.startswith("residual")))
def test_a_base_fitted_on_other_channels_is_refused(name, tmp_path, edit_config):
    est = _fit(SAVEABLE[name]())
    est.save(tmp_path / "e")
    edit_config(tmp_path / "e", lambda cfg: cfg["fitted"]["base_"].update(n_channels_=1))
    one = {"base_.train_": lambda v: v[:, :1]}
    _tamper_arrays(
        tmp_path / "e",
        lambda a: a.update(
            {k: one.get(k, lambda v: v[:1])(v) for k, v in a.items() if k.startswith("base_.")}
        ),
    )
    with pytest.raises(ValueError, match="base_ was fitted on 1 channel\\(s\\), not 2"):
        type(est).load(tmp_path / "e")


@pytest.mark.parametrize(
    "name", ["autoreg", "dlinear", "residual_forecaster_autoreg", "residual_forecaster_dlinear"]
)
def test_a_saved_forecaster_without_the_history_predict_needs_is_refused(name, tmp_path):
    """Without ``train_`` predict raised a raw AttributeError; with too short a one it
    forecast NaN."""
    est = _fit(SAVEABLE[name]())
    est.save(tmp_path / "missing")
    _tamper_arrays(tmp_path / "missing", lambda a: a.pop("train_"))
    with pytest.raises(ValueError, match="missing array 'train_'"):
        type(est).load(tmp_path / "missing")
    est.save(tmp_path / "short")
    _tamper_arrays(tmp_path / "short", lambda a: a.update(train_=a["train_"][:2]))
    with pytest.raises(ValueError, match="train_ has 2 samples; predict needs the last"):
        type(est).load(tmp_path / "short")


def _set_fitted(name, value):
    return lambda cfg: cfg["fitted"].update({name: value})


@pytest.mark.parametrize(
    "edit, message",
    [
        (_set_fitted("null_distance_", 0.5), "null_distance_ must be a list of 1"),
        (_set_fitted("null_distance_", [1.0, 2.0]), "null_distance_ must be a list of 1"),
        (_set_fitted("null_distance_", None), "null_distance_ must be a list of 1"),
        (_set_fitted("null_distance_", [-1.0]), "null_distance_\\[0\\] must be a finite number"),
        (_set_fitted("null_distance_", [0]), "null_distance_\\[0\\] must be a finite number"),
        (_set_fitted("null_distance_", [float("nan")]), "null_distance_\\[0\\] must be"),
        (lambda cfg: cfg["fitted"].pop("null_distance_"), "missing fitted 'null_distance_'"),
    ],
)
def test_a_tampered_saved_fade_radius_is_refused_on_load_naming_it(
    edit, message, tmp_path, edit_config
):
    """A bare number raised a raw TypeError at forecast time; a wrong count an IndexError;
    zero, negative or NaN radii, or none at all, changed the forecasts silently."""
    est = _fit(SAVEABLE["residual_forecaster_autoreg"]())
    est.save(tmp_path / "e")
    edit_config(tmp_path / "e", edit)
    with pytest.raises(ValueError, match=message):
        ResidualProjectionForecaster.load(tmp_path / "e")


@pytest.mark.parametrize(
    "name, array, value, message",
    [
        ("residual_forecaster_autoreg", "alpha_", 1.5, "alpha_ in \\[0, 1\\]"),
        ("residual_forecaster_autoreg", "alpha_", -0.5, "alpha_ in \\[0, 1\\]"),
        ("residual_forecaster_autoreg", "sigma_", 0.0, "sigma_ must be > 0"),
        ("residual_filter", "alpha_", 1.5, "alpha_ must be in \\[0, 1\\]"),
        ("residual_filter", "null_distance_", -1.0, "null_distance_ must be > 0 or NaN"),
        ("residual_filter", "null_distance_", 0.0, "null_distance_ must be > 0 or NaN"),
    ],
)
def test_a_tampered_saved_shrinkage_or_radius_is_refused_on_load_naming_it(
    name, array, value, message, tmp_path
):
    """A shrinkage outside [0, 1] amplified or flipped the correction, a zero kernel width
    divided by zero, a radius <= 0 shrank every correction: all loaded before."""
    est = _fit(SAVEABLE[name]())
    est.save(tmp_path / "e")
    _tamper_arrays(tmp_path / "e", lambda a: a.update({array: np.full_like(a[array], value)}))
    with pytest.raises(ValueError, match=message):
        type(est).load(tmp_path / "e")


def test_a_library_of_a_channel_the_filter_does_not_have_is_refused(tmp_path):
    """It was ignored before: a file with more libraries than channels is not one fit wrote."""
    est = _fit(SAVEABLE["residual_filter"]())
    est.save(tmp_path / "e")
    _tamper_arrays(tmp_path / "e", lambda a: a.update({"library_keys.5": a["library_keys.0"]}))
    with pytest.raises(ValueError, match="'library_keys.5' is not a library of the 2 channel"):
        ResidualProjectionFilter.load(tmp_path / "e")


def test_a_huge_saved_fade_radius_fades_nothing_instead_of_overflowing(tmp_path):
    # a radius past 1e154 loaded (finite, > 0), then predict raised OverflowError squaring it
    from tssdpa.signal.library import kernel_regression

    rng = np.random.default_rng(0)
    keys, values, queries = (
        rng.normal(size=(20, 3)),
        rng.normal(size=(20, 1)),
        rng.normal(size=(4, 3)),
    )
    far, none = (
        kernel_regression(queries, keys, values, [0.5], null_distance=d)[0] for d in (1e300, None)
    )
    np.testing.assert_array_equal(far, none)
