"""``tssdpa filter --save-model DIR`` and ``--model DIR``: a filter fitted on one file, saved,
and applied to later files without a fit; every refusal one line, exit 2, no traceback."""

import json

import numpy as np
import pandas as pd
import pytest

from tssdpa.cli import main
from tssdpa.filters import ProjectionFilter, ProjectionForecaster

PARAMS = '{"window": [16], "embedding": [2], "degree": [1]}'  # a quick fit


def _log(path, seed, n=300, names=("a", "b")):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    df = pd.DataFrame({"time": t * 0.01,
                       names[0]: np.sin(t / 15) + 0.2 * rng.standard_normal(n),
                       names[1]: np.cos(t / 25) + 0.2 * rng.standard_normal(n)})  # fmt: skip
    df.to_csv(path, index=False)
    return df


def _as_read(df, cols):
    """The columns as the command reads them: one C-ordered array (the library's sums follow
    the memory order, so a column-major ``df[cols]`` differs in the last bits)."""
    return pd.DataFrame(np.ascontiguousarray(df[cols].to_numpy(dtype=float)), columns=cols)


@pytest.fixture
def logs(tmp_path):
    cal = _log(tmp_path / "cal.csv", 1)
    later = _log(tmp_path / "later.csv", 2)
    return tmp_path, cal, later


def _filter(*argv):
    return main(["filter", *map(str, argv)])


def _refused(capsys, *argv, says):
    assert _filter(*argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("tssdpa filter:")]
    assert len(lines) == 1, err
    for part in [says] if isinstance(says, str) else says:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def saved_filter(logs, capsys):
    d, cal, later = logs
    model = d / "model"
    args = (d / "cal.csv", "--params", PARAMS, "--save-model", model, "-o", d / "cal_f.csv")
    assert _filter(*args) == 0
    assert "saved the fitted ProjectionFilter" in capsys.readouterr().err
    return model


def test_a_saved_filter_applied_to_another_file_gives_the_in_memory_filters_output(
    logs, saved_filter, capsys
):
    d, _, _ = logs
    cal, later = pd.read_csv(d / "cal.csv"), pd.read_csv(d / "later.csv")  # as written
    assert _filter(d / "later.csv", "--model", saved_filter, "-o", d / "later_f.csv") == 0
    err = capsys.readouterr().err
    assert "applying the saved ProjectionFilter (projection_zp)" in err
    assert "['a', 'b']" in err and "Traceback" not in err
    out = pd.read_csv(d / "later_f.csv")
    cols = ["a", "b"]
    est = ProjectionFilter(causal=False, window=[16], embedding=[2], degree=[1])
    want = est.fit(_as_read(cal, cols)).filter(_as_read(later, cols)).to_numpy()
    np.testing.assert_array_equal(out[["a_filtered", "b_filtered"]].to_numpy(), want)
    np.testing.assert_array_equal(out[cols].to_numpy(), later[cols].to_numpy())  # copied


def test_the_saved_filter_loads_in_python_with_its_columns(saved_filter):
    est = ProjectionFilter.load(saved_filter)
    assert est.feature_names_in_ == ["a", "b"]


def test_a_saved_forecaster_applied_to_another_file_forecasts_its_fitted_horizon(logs, capsys):
    d, _, _ = logs
    cal, later = pd.read_csv(d / "cal.csv"), pd.read_csv(d / "later.csv")  # as written
    model = d / "fc"
    assert _filter(d / "cal.csv", "--horizon", 3, "--fit-fraction", 1, "--save-model", model,
                   "-o", d / "cal_fc.csv") == 0  # fmt: skip
    assert _filter(d / "later.csv", "--model", model, "-o", d / "later_fc.csv") == 0
    assert "Traceback" not in capsys.readouterr().err
    out = pd.read_csv(d / "later_fc.csv")
    cols = ["a", "b"]
    as_read = [np.ascontiguousarray(f[cols].to_numpy(dtype=float)) for f in (cal, later)]
    est = ProjectionForecaster(horizon=3).fit(as_read[0])
    want = np.asarray(est.forecast(as_read[1], horizon=3))
    got = out[["a_forecast_h3", "b_forecast_h3"]].to_numpy()
    np.testing.assert_array_equal(got, want)
    assert np.isfinite(got[-10:-3]).all()  # written on every row, not after a fit block
    # a shorter horizon than the fitted one is taken
    assert _filter(d / "later.csv", "--model", model, "--horizon", 2, "-o", d / "h2.csv") == 0
    assert "a_forecast_h2" in pd.read_csv(d / "h2.csv").columns


def test_a_horizon_beyond_the_fitted_one_is_refused_naming_it(logs, capsys):
    d, _, _ = logs
    model = d / "fc"
    assert _filter(d / "cal.csv", "--horizon", 2, "--save-model", model, "-o", d / "x.csv") == 0
    _refused(capsys, d / "later.csv", "--model", model, "--horizon", 5,
             says=["--horizon 5", "up to 2"])  # fmt: skip


def test_a_file_with_other_columns_is_refused_naming_both(logs, saved_filter, capsys):
    d, _, _ = logs
    _log(d / "other.csv", 3, names=("a", "c"))
    _refused(capsys, d / "other.csv", "--model", saved_filter,
             says=["['a', 'b']", "no ['b']", "'c'"])  # fmt: skip
    _refused(capsys, d / "later.csv", "--model", saved_filter, "--columns", "a",
             says=["--columns ['a']", "['a', 'b']"])  # fmt: skip


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--method", "projection"], "--method"),
        (["--params", '{"window": 16}'], "--params"),
        (["--target", "b"], "--target"),
        (["--fit-fraction", "0.5"], "--fit-fraction"),
        (["--save-model", "again"], "--save-model"),
        (["--horizon", "2"], ["--horizon", "is a filter"]),
    ],
)
def test_each_option_that_steers_a_fit_is_refused_with_model(
    logs, saved_filter, capsys, extra, says
):
    d, _, _ = logs
    line = _refused(capsys, d / "later.csv", "--model", saved_filter, *extra, says=says)
    assert "--model" in line
    assert not (d / "again").exists()


def test_save_model_is_refused_before_the_fit_where_it_cannot_be_written(logs, capsys):
    d, _, _ = logs
    (d / "notes").mkdir()
    (d / "notes" / "todo.txt").write_text("x")
    _refused(capsys, d / "later.csv", "--save-model", d / "cal.csv", says=["--save-model", "file"])
    _refused(capsys, d / "later.csv", "--save-model", d / "notes",
             says=["--save-model", "not a saved model"])  # fmt: skip
    (d / "link").symlink_to(d / "unmounted")  # a mount not up: it was refused after the fit
    assert _filter(d / "later.csv", "--params", PARAMS, "--save-model", d / "link") == 2
    err = capsys.readouterr().err
    assert "--save-model" in err and "unmounted, which does not exist" in err
    assert "chose" not in err
    _refused(capsys, d / "later.csv", "--method", "median", "--save-model", d / "m",
             says=["--save-model", "median", "no save format"])  # fmt: skip
    assert not (d / "m").exists()


def test_saving_over_a_saved_model_replaces_it(logs, saved_filter, capsys):
    d, _, _ = logs
    args = (d / "later.csv", "--params", PARAMS, "--save-model", saved_filter, "-o", d / "o.csv")
    assert _filter(*args) == 0
    assert "saved the fitted" in capsys.readouterr().err


@pytest.mark.parametrize("left", [("config.json", "arrays.safetensors"), ("arrays.safetensors",)])
def test_a_model_folder_whose_save_was_killed_half_way_is_saved_over(
    logs, saved_filter, capsys, left
):
    # a killed save leaves its temporary file (and, in a new folder, the arrays alone): the
    # folder was refused as "a folder of other files", the save that would mend it with it
    d, _, _ = logs
    for name in {"config.json", "arrays.safetensors"} - set(left):
        (saved_filter / name).unlink()
    (saved_filter / ".arrays.safetensors.1a2b3c4d.partial").write_bytes(b"half")
    args = (d / "later.csv", "--params", PARAMS, "--save-model", saved_filter, "-o", d / "o.csv")
    assert _filter(*args) == 0, capsys.readouterr().err
    assert "saved the fitted" in capsys.readouterr().err
    ProjectionFilter.load(saved_filter)


@pytest.mark.parametrize("damage", ["kind", "json", "edited", "missing", "other_class"])
def test_a_damaged_or_foreign_model_folder_is_refused_in_one_line(
    logs, saved_filter, capsys, damage
):
    d, _, _ = logs
    cfg_path = saved_filter / "config.json"
    cfg = json.loads(cfg_path.read_text())
    says = "--model"
    if damage == "kind":
        cfg["kind"] = "os.system"
        says = ["'os.system'", "tssdpa methods"]
    elif damage == "edited":
        cfg["fitted"]["sigma_"] = 0.5
        says = "an edited file"
    elif damage == "other_class":
        cfg["kind"] = "ButterworthFilter"
    cfg_path.write_text(json.dumps(cfg))
    if damage == "json":
        cfg_path.write_text('{"kind": ')
        says = "not valid JSON"
    if damage == "missing":
        cfg_path.unlink()
        says = "not a saved model"
    _refused(capsys, d / "later.csv", "--model", saved_filter, says=says)


def test_a_model_that_is_no_folder_is_refused(logs, capsys):
    d, _, _ = logs
    _refused(capsys, d / "later.csv", "--model", d / "nowhere", says="no such folder")
    _refused(capsys, d / "later.csv", "--model", d / "cal.csv", says="is a file")


def test_out_dir_with_model_applies_the_saved_filter_to_every_file(logs, saved_filter, capsys):
    d, _, _ = logs
    assert _filter(d / "later.csv", "--model", saved_filter, "-o", d / "one.csv") == 0
    (d / "out").mkdir()
    code = _filter(d / "later.csv", d / "cal.csv", "--out-dir", d / "out", "--model",
                   saved_filter, "--scheduler", "threads", "--workers", 1,
                   "--no-progress")  # fmt: skip
    assert code == 0
    assert "Traceback" not in capsys.readouterr().err
    pd.testing.assert_frame_equal(pd.read_csv(d / "out" / "later.csv"), pd.read_csv(d / "one.csv"))
    assert (d / "out" / "cal.csv").exists()


def test_model_reports_the_settings_the_saved_fit_chose(logs, saved_filter, capsys):
    # a loaded ProjectionFilter keeps its chosen settings as window_ ... sigma_, not
    # best_params_: --model printed "settings window=auto, ... (as given or its defaults: it
    # chooses none ...)" and --out-dir's summary had an empty params column
    d, _, _ = logs
    saved = ProjectionFilter.load(saved_filter)
    assert _filter(d / "later.csv", "--model", saved_filter, "-o", d / "one.csv") == 0
    err = capsys.readouterr().err
    assert "it chooses none" not in err and "window=auto" not in err
    assert "chose " in err and "window=16, embedding=2, degree=1" in err
    (d / "out").mkdir()
    code = _filter(d / "later.csv", "--out-dir", d / "out", "--model", saved_filter,
                   "--workers", 1, "--no-progress", "--summary", d / "s.csv")  # fmt: skip
    assert code == 0
    params = pd.read_csv(d / "s.csv")["params"].tolist()
    assert len(params) == 1 and "window=16, embedding=2, degree=1" in params[0], params
    # each column's own model (channel_independent 'auto' chose them apart), by its sigma
    for name, model in zip(["a", "b"], saved.channel_models_, strict=True):
        assert f"channel {name}: " in params[0] and f"sigma={model.sigma_:.4g}" in params[0]


def test_out_dir_saves_the_filter_fitted_on_fit_on(logs, capsys):
    d, _, _ = logs
    (d / "out").mkdir()
    code = _filter(d / "later.csv", "--out-dir", d / "out", "--fit-on", d / "cal.csv",
                   "--params", PARAMS, "--save-model", d / "m", "--workers", 1,
                   "--no-progress")  # fmt: skip
    assert code == 0
    assert ProjectionFilter.load(d / "m").feature_names_in_ == ["a", "b"]
    assert _filter(d / "later.csv", "--model", d / "m", "-o", d / "one.csv") == 0
    pd.testing.assert_frame_equal(pd.read_csv(d / "out" / "later.csv"), pd.read_csv(d / "one.csv"))


def test_out_dir_refuses_save_model_without_fit_on_and_a_forecaster_model(logs, capsys):
    d, _, _ = logs
    (d / "out").mkdir()
    _refused(capsys, d / "later.csv", "--out-dir", d / "out", "--save-model", d / "m",
             says=["--save-model", "--fit-on"])  # fmt: skip
    assert _filter(d / "cal.csv", "--horizon", 2, "--save-model", d / "fc", "-o", d / "x.csv") == 0
    _refused(capsys, d / "later.csv", "--out-dir", d / "out", "--model", d / "fc",
             says=["--model", "forecaster"])  # fmt: skip
    _refused(capsys, d / "later.csv", "--out-dir", d / "out", "--model", d / "fc", "--fit-on",
             d / "cal.csv", says=["--fit-on", "--model"])  # fmt: skip


def test_out_dir_takes_columns_for_a_model_saved_from_an_array_and_refuses_other_columns(
    logs, saved_filter, capsys
):
    # a model saved from Python after a fit on an array names no columns: --out-dir ended in
    # "TypeError: 'NoneType' object is not iterable"; and --columns other than the fitted
    # ones were silently ignored there (the one-file command refuses both)
    d, cal, _ = logs
    ProjectionFilter(window=16, embedding=2, degree=1).fit(
        _as_read(cal, ["a", "b"]).to_numpy()
    ).save(d / "arr")
    (d / "out").mkdir()
    run = ("--out-dir", d / "out", "--workers", 1, "--no-progress")
    _refused(capsys, d / "later.csv", *run, "--model", d / "arr", says="records no column names")
    assert _filter(d / "later.csv", *run, "--model", d / "arr", "--columns", "a", "b") == 0
    assert "b_filtered" in pd.read_csv(d / "out" / "later.csv").columns
    _refused(capsys, d / "later.csv", *run, "--model", saved_filter, "--columns", "a",
             says=["--columns ['a']", "fitted on the columns ['a', 'b']"])  # fmt: skip


def test_fit_on_save_model_tells_the_reference_files_notes(logs, capsys):
    d, cal, _ = logs
    cal.loc[150, "a"] = 300.0  # a glitch in the reference file: its note was dropped
    cal.to_csv(d / "cal.csv", index=False)
    (d / "out").mkdir()
    code = _filter(d / "later.csv", "--out-dir", d / "out", "--fit-on", d / "cal.csv",
                   "--params", PARAMS, "--save-model", d / "m", "--workers", 1,
                   "--no-progress")  # fmt: skip
    assert code == 0
    assert "cal.csv (--fit-on): note:" in capsys.readouterr().err
