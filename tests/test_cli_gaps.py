"""Gaps of ``tssdpa compare`` / ``filter`` left open by earlier reviews, each test failing
before its fix."""

import json

import numpy as np
import pandas as pd
import pytest

from tssdpa.cli import main
from tssdpa.cli.paths import check_output_folder
from tssdpa.filters import ProjectionFilter


def _compare(tmp_path, *extra):
    return ["compare", "denoise", "--seeds", "0", "--out", str(tmp_path / "run"),
            "--no-progress", "--no-plots", *extra]  # fmt: skip


def test_compare_records_and_shows_the_settings_an_auto_fitted_method_chose(tmp_path, capsys):
    # projection_zp searches no parameters ({}): its fit chooses them, and the tables said `{}`
    args = _compare(tmp_path, "--dataset", "ar2", "--n", "300", "--methods", "projection_zp",
                    "noisy")  # fmt: skip
    assert main(args) == 0
    rows = pd.read_csv(tmp_path / "run" / "results.csv")
    proj = rows[rows["method"] == "projection_zp"]
    assert (proj["params"] == "{}").all()
    chosen = [json.loads(f) for f in proj["fitted"]]
    assert all({"window", "embedding", "degree"} <= set(c) for c in chosen)
    assert rows.loc[rows["method"] == "noisy", "fitted"].isna().all()  # it chooses nothing
    table = (tmp_path / "run" / "tables" / "denoise_ar2.md").read_text()
    line = next(t for t in table.splitlines() if t.startswith("| projection_zp | projection"))
    assert "fit chose" in line and '"window"' in line


@pytest.mark.parametrize(
    ("datasets", "says"),
    [
        (["imu_fusion"], "imu_fusion is used whole"),
        (["imu_gait", "sunspots"], "imu_gait, sunspots are used whole"),
    ],
)
def test_compare_n_is_refused_where_no_synthetic_signal_is_compared(tmp_path, capsys, datasets,
                                                                      says):  # fmt: skip
    # --n was ignored without a word for the IMU recordings (they ran whole)
    args = _compare(tmp_path, "--n", "300", *[a for d in datasets for a in ("--dataset", d)])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--n sets the length of the synthetic signals" in err and says in err
    assert not (tmp_path / "run").exists()


def test_save_model_refuses_a_missing_parent_folder_as_out_does_before_the_fit(tmp_path, capsys):
    # --out, --out-dir and --summary refused a folder that does not exist; --save-model made
    # it (and every folder above it), so a misspelt path went unnoticed
    t = np.arange(200)
    pd.DataFrame({"a": np.sin(t / 9), "b": np.cos(t / 7)}).to_csv(tmp_path / "log.csv")
    out = tmp_path / "log_f.csv"
    args = ["filter", str(tmp_path / "log.csv"), "--out", str(out), "--params",
            '{"window": [16], "embedding": [2], "degree": [1]}', "--save-model"]  # fmt: skip
    assert main([*args, str(tmp_path / "no" / "such" / "model")]) == 2
    err = capsys.readouterr().err
    assert f"--save-model: the folder {str(tmp_path / 'no' / 'such')!r} does not exist" in err
    assert not (tmp_path / "no").exists() and not out.exists()
    assert main([*args, str(tmp_path / "model")]) == 0  # a new folder in an existing one
    assert (tmp_path / "model" / "config.json").is_file()


def test_one_check_of_an_output_folder_makes_its_parents_or_refuses_a_missing_one(
    tmp_path, monkeypatch
):
    # --save-model checked its missing parent after check_output_folder, in a copy of its own
    deep = tmp_path / "no" / "such" / "model"
    check_output_folder(deep, "--out")  # compare's --out: made with its parents
    with pytest.raises(ValueError, match=r"--save-model: the folder .*such' does not exist"):
        check_output_folder(deep, "--save-model", make_folders=False)
    monkeypatch.chdir(tmp_path)
    for fine in (tmp_path / "model", tmp_path, "model"):  # new in an existing one, existing
        check_output_folder(fine, "--save-model", make_folders=False)
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        check_output_folder(tmp_path / "f" / "model", "--save-model", make_folders=False)
    assert not (tmp_path / "no").exists()


def test_estimator_save_refuses_a_missing_parent_folder_as_to_onnx_does(tmp_path):
    f = ProjectionFilter(window=16, embedding=2, degree=1).fit(np.sin(np.arange(200) / 9))
    with pytest.raises(ValueError, match="path: the folder .* does not exist"):
        f.save(tmp_path / "no" / "such" / "model")
    assert not (tmp_path / "no").exists()
    f.save(tmp_path / "model")
    assert ProjectionFilter.load(tmp_path / "model").embedding_ == 2


@pytest.mark.parametrize("bad", [5, None, 2.5, ["model"]])
def test_save_load_and_to_onnx_name_path_when_it_is_no_path(bad):
    f = ProjectionFilter(window=16, embedding=2, degree=1).fit(np.sin(np.arange(200) / 9))
    for call in (f.save, ProjectionFilter.load):
        with pytest.raises(TypeError, match=r"path must be a str or os\.PathLike, got"):
            call(bad)
    pytest.importorskip("onnxscript")
    with pytest.raises(TypeError, match=r"path must be a str or os\.PathLike, got"):
        f.to_onnx(bad)


def test_iso_times_written_by_isoformat_are_the_sample_times_of_tau_and_their_gaps_are_noted(
    tmp_path, capsys
):
    # isoformat() writes 12:00:00 and 12:00:00.500000: every cell in the other precision was
    # read as no date, and tau refused the column ("data row 2 is no number or date") while
    # the note of a 10 s dropout said nothing
    times = pd.date_range("2026-05-01 12:00", periods=300, freq="500ms", tz="UTC")
    times = times[(times < times[100]) | (times > times[120])]  # a dropout of 20 samples
    x = np.sin(np.arange(len(times)) / 9.0)
    cells = [t.isoformat() for t in times.to_pydatetime()]
    pd.DataFrame({"time": cells, "a": x}).to_csv(tmp_path / "log.csv", index=False)
    args = ["filter", str(tmp_path / "log.csv"), "--out", str(tmp_path / "out.csv")]
    assert main([*args, "--method", "moving_average"]) == 0
    assert "1 gap(s) of 10 or more median steps (the longest 22)" in capsys.readouterr().err
    params = '{"tau": 1.0, "window": 8, "embedding": 1, "degree": 0, "sigma": 0.5}'
    assert main([*args, "--method", "projection", "--params", params]) == 0
    assert "used as the sample times (tau)" in capsys.readouterr().err
    got = pd.read_csv(tmp_path / "out.csv")["a_filtered"]
    seconds = (times - times[0]).total_seconds().to_numpy()  # the same times as numbers
    pd.DataFrame({"time": seconds, "a": x}).to_csv(tmp_path / "log.csv", index=False)
    assert main([*args, "--method", "projection", "--params", params]) == 0
    np.testing.assert_array_equal(got, pd.read_csv(tmp_path / "out.csv")["a_filtered"])


def test_iso_times_alternating_whole_seconds_and_nanoseconds_are_filtered(tmp_path, capsys):
    # 12:00:00 / 12:00:01.100000001: the second kind was read into the first's resolution
    # (us), which pandas refused with a TypeError: the command failed
    times = pd.date_range("2026-01-01 12:00", periods=200, freq="s")
    cells = [f"{t}.100000001" if i % 2 else str(t) for i, t in enumerate(times)]
    frame = pd.DataFrame({"time": cells, "a": np.sin(np.arange(200) / 7.0)})
    frame.to_csv(tmp_path / "log.csv", index=False)
    args = ["filter", str(tmp_path / "log.csv"), "--out", str(tmp_path / "out.csv")]
    assert main([*args, "-m", "projection", "--params", '{"tau": 1.0, "window": 8}']) == 0
    assert "used as the sample times (tau)" in capsys.readouterr().err


@pytest.mark.parametrize("written", ["decimal points", "decimal commas", "grouped thousands"])
def test_a_column_of_numbers_skipped_for_one_cell_is_told_with_that_cell(written, tmp_path, capsys):
    # a logger's "ERR" in one of 120 cells left the sensor out of the output (exit 0) with a
    # note naming the column only: the cell to fix had to be searched for by hand. In a ';'
    # file of decimal commas no cell of the column ("0,5", "1.234,5") was read as a number,
    # and the note was not given at all
    n = 300
    a = np.sin(np.arange(n) / 8.0).astype(object)
    comma = written != "decimal points"
    if comma:  # as text: pandas writes an object column's floats with decimal points
        a = np.array([f"{v:.4f}".replace(".", ",") for v in a], object)
    if written == "grouped thousands":
        a = np.array([f"1.{234 + i},{i % 10}" for i in range(n)], object)
    a[57] = "ERR"
    frame = pd.DataFrame({"time": np.arange(n), "a": a, "b": np.cos(np.arange(n) / 8.0)})
    frame.to_csv(tmp_path / "log.csv", index=False, sep=";" if comma else ",",
                 decimal="," if comma else ".")  # fmt: skip
    args = ["filter", str(tmp_path / "log.csv"), "-m", "moving_average"]
    assert main([*args, "--out", str(tmp_path / "out.csv")]) == 0
    assert ("skipped column(s) of text or true / false values, with no finite value or with no "
            "name ['a']; 'a' holds 'ERR' in data row 58, its other cells numbers: fix or "
            "empty that cell to filter the column") in \
        capsys.readouterr().err  # fmt: skip
