"""Many files at once (issue 14): tssdpa.batch.filter_files in this process and on a Dask
LocalCluster of 2 worker processes, and `tssdpa filter 'logs/*.csv' --out-dir` as a user runs
it. Every output is compared with the sequential run and with a direct fit / filter."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dask.distributed import Client, LocalCluster

from tssdpa.batch import SUMMARY_COLUMNS, expand_paths, filter_files, filter_table, read_table
from tssdpa.compare import get_method
from tssdpa.filters import ProjectionFilter

N_GOOD = 5
#: the search of the runs below, narrowed (files, workers and outputs are tested here, not the
#: search): the same params for the sequential run, the direct fits, the cluster and the CLI
PARAMS = {"window": [8, 16], "embedding": [1, 3]}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Five small good logs (one Parquet, one with NaN and inf cells), an unreadable file and
    an all-NaN one."""
    folder = tmp_path_factory.mktemp("logs")
    rng = np.random.default_rng(0)
    t = np.arange(300) * 0.01
    for i in range(N_GOOD):
        df = pd.DataFrame({"time": t, "a": np.sin(t * (3 + i)) + 0.2 * rng.normal(size=300),
                           "b": np.cos(t * 2) + 0.2 * rng.normal(size=300)})  # fmt: skip
        if i == 1:
            df.loc[[10, 11, 50], "a"] = np.nan
            df.loc[70, "b"] = np.inf
        if i == 4:
            df.to_parquet(folder / f"log{i}.parquet", index=False)
        else:
            df.to_csv(folder / f"log{i}.csv", index=False)
    (folder / "broken.csv").write_bytes(b"a,b\n\xff\xfe\x00garbage\n1,2\n")
    pd.DataFrame({"time": t[:20], "a": np.nan}).to_csv(folder / "allnan.csv", index=False)
    return folder


GOOD = [f"log{i}.csv" for i in range(N_GOOD - 1)] + [f"log{N_GOOD - 1}.parquet"]
BAD = {"broken.csv": "not a readable CSV file", "allnan.csv": "have no finite value"}


def _inputs(folder):
    return [str(folder / "*.csv"), str(folder / "*.parquet")]


@pytest.fixture(scope="module")
def sequential(logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("sequential")
    return out, filter_files(_inputs(logs), out, params=PARAMS, progress=False)


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=50)  # fmt: skip
    with cluster, Client(cluster) as c:
        yield c


def _check_summary(summary, folder, out, bad=BAD):
    assert list(summary.columns) == list(SUMMARY_COLUMNS)
    by_name = {Path(f).name: r for f, r in zip(summary["file"], summary.to_dict("records"))}
    assert set(by_name) == set(GOOD) | set(BAD)
    for name in GOOD:
        r = by_name[name]
        assert r["status"] == "ok" and r["error"] == "" and r["rows"] == 300
        assert r["output"] == str(out / name) and "sigma=" in r["params"]
    assert by_name["log1.csv"]["nan_handled"] == 4
    for name, reason in bad.items():
        r = by_name[name]
        assert r["status"] == "failed" and reason in r["error"] and pd.isna(r["output"])
    # one output per good input, nothing under a failed one's name, no temporary leftovers
    assert sorted(os.listdir(out)) == sorted(GOOD)


def test_sequential_run_equals_a_direct_fit_and_filter(logs, sequential):
    out, summary = sequential
    _check_summary(summary, logs, out)
    for name in GOOD:
        df = read_table(logs / name)
        x = np.array(df[["a", "b"]], dtype=float)
        x[~np.isfinite(x)] = np.nan
        est = get_method("projection", "denoise").build(**PARAMS).fit(x)
        got = read_table(out / name)
        np.testing.assert_allclose(got[["a_filtered", "b_filtered"]], est.filter(x), rtol=1e-12)
        pd.testing.assert_frame_equal(got[df.columns], df)  # the originals copied through


def test_a_two_worker_cluster_equals_the_sequential_run(logs, sequential, client, tmp_path):
    seq_out, seq = sequential
    summary = filter_files(_inputs(logs), tmp_path, client=client, params=PARAMS, progress=False)
    _check_summary(summary, logs, tmp_path)
    assert summary["file"].tolist() == seq["file"].tolist()  # input order, whatever finished
    for name in GOOD:
        pd.testing.assert_frame_equal(read_table(tmp_path / name), read_table(seq_out / name))
    # both workers took part
    assert len(client.scheduler_info()["workers"]) == 2


def test_one_shared_fitted_filter(logs, client, tmp_path):
    summary = filter_files(_inputs(logs), tmp_path, client=client, fit_on=logs / "log0.csv",
                           params={"window": [8, 16]}, progress=False)  # fmt: skip
    # the shared filter runs on the columns it was fitted on, which allnan.csv lacks
    _check_summary(summary, logs, tmp_path, {**BAD, "allnan.csv": "['b'] not in the file"})
    x0 = np.array(read_table(logs / "log0.csv")[["a", "b"]], dtype=float)
    est = get_method("projection", "denoise").build(window=[8, 16]).fit(x0)
    assert summary["params"].nunique() == 1  # the same chosen settings for every file
    for name in GOOD:
        x = np.array(read_table(logs / name)[["a", "b"]], dtype=float)
        x[~np.isfinite(x)] = np.nan
        got = read_table(tmp_path / name)[["a_filtered", "b_filtered"]]
        np.testing.assert_allclose(got, est.filter(x), rtol=1e-12)


def test_a_failed_write_leaves_nothing_under_the_output_name(logs, tmp_path, monkeypatch):
    def half_then_fail(self, handle, *args, **kwargs):
        handle.write("time,a\n0.0,")  # a partial file, then the disk fills up
        raise OSError("No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_fail)
    summary = filter_files(str(logs / "log0.csv"), tmp_path, params=PARAMS, progress=False)
    assert summary["status"].tolist() == ["failed"]
    assert "No space left" in summary["error"][0]
    assert os.listdir(tmp_path) == []


def test_argument_errors_name_the_argument(logs, tmp_path):
    with pytest.raises(ValueError, match="paths_or_glob.*matches no file"):
        filter_files(str(logs / "*.txt"), tmp_path)
    with pytest.raises(ValueError, match="out_dir"):
        filter_files(str(logs / "*.csv"), tmp_path / "missing")
    with pytest.raises(ValueError, match="out_dir.*overwrite"):
        filter_files(str(logs / "log0.csv"), logs)
    twin = tmp_path / "other"
    twin.mkdir()
    (twin / "log0.csv").write_text((logs / "log0.csv").read_text())
    with pytest.raises(ValueError, match="several inputs are named"):
        filter_files([logs / "log0.csv", twin / "log0.csv"], tmp_path)
    with pytest.raises(ValueError, match="method must be one of"):
        filter_files(str(logs / "log0.csv"), tmp_path, method="kalmann")
    with pytest.raises(ValueError, match="fit_on"):
        filter_files(str(logs / "log0.csv"), tmp_path, fit_on=logs / "allnan.csv")
    # once, naming it: every file failed with "__init__() got an unexpected keyword argument"
    with pytest.raises(ValueError, match=r"params: unknown parameter\(s\) \['windw'\]"):
        filter_files(str(logs / "*.csv"), tmp_path, params={"windw": 8})


# ------------------------------------------------------------------ the command line


def test_cli_filters_a_folder_and_reports_the_bad_file(cli, logs, sequential, tmp_path):
    seq_out, _ = sequential
    out = tmp_path / "filtered"
    out.mkdir()
    r = cli("filter", str(logs / "*.csv"), str(logs / "*.parquet"), "--out-dir", str(out),
               "--method", "projection", "--params", json.dumps(PARAMS), "--workers", "2",
               "--summary", str(tmp_path / "summary.csv"), cwd=tmp_path)  # fmt: skip
    assert r.returncode == 1, r.stderr  # some files failed
    assert "Traceback" not in r.stderr
    assert f"{len(GOOD)} of {len(GOOD) + len(BAD)} file(s) filtered" in r.stderr
    for name in [*GOOD, *BAD]:
        assert name in r.stdout  # the summary table
    assert "have no finite value" in r.stdout
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert sorted(summary.loc[summary["status"] == "ok", "file"].map(lambda f: Path(f).name)) == (
        sorted(GOOD)
    )
    for name in GOOD:
        pd.testing.assert_frame_equal(read_table(out / name), read_table(seq_out / name))


def test_cli_runs_on_a_running_scheduler(cli, logs, sequential, client, tmp_path):
    """--scheduler ADDRESS: the command connects to a running cluster (here the 2-worker
    LocalCluster of the other tests) instead of starting one."""
    seq_out, _ = sequential
    r = cli("filter", str(logs / "log0.csv"), str(logs / "log2.csv"), "--out-dir",
               str(tmp_path), "--method", "projection", "--params", json.dumps(PARAMS),
               "--no-progress", "--scheduler", client.scheduler.address, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "2 of 2 file(s) filtered" in r.stderr
    for name in ("log0.csv", "log2.csv"):
        pd.testing.assert_frame_equal(read_table(tmp_path / name), read_table(seq_out / name))


HOSTILE = {
    "pattern matches nothing": (["filter", "nothing/*.csv", "--out-dir", "."], "matches no file"),
    "out dir missing": (["filter", "a.csv", "--out-dir", "no/such"], "--out-dir"),
    "pattern without out dir": (["filter", "*.csv"], "need --out-dir"),
    "several files without out dir": (["filter", "a.csv", "b.csv"], "need --out-dir"),
    "fit-on without out dir": (["filter", "a.csv", "--fit-on", "a.csv"], "need(s) --out-dir"),
    "bad scheduler": (
        ["filter", "a.csv", "--out-dir", ".", "--scheduler", "fast"],
        "--scheduler must be",
    ),  # fmt: skip
    # nothing listens on the discard port: refused for 2 s (Dask alone retries for 10 s)
    "unreachable scheduler": (
        ["filter", "a.csv", "--out-dir", ".", "--scheduler", "tcp://127.0.0.1:9"],
        "--scheduler: cannot reach tcp://127.0.0.1:9",
    ),  # fmt: skip
    "malformed scheduler address": (
        ["filter", "a.csv", "--out-dir", ".", "--scheduler", "tcp://[::1:8786"],
        "--scheduler: cannot reach tcp://[::1:8786",
    ),  # fmt: skip
    "one-file option": (["filter", "a.csv", "--out-dir", ".", "--horizon", "3"], "--horizon"),
    "fit-on missing": (["filter", "a.csv", "--out-dir", ".", "--fit-on", "b.csv"], "--fit-on"),
    # each overwrote a file: the summary an output, an output the file fitted on
    "summary over an output": (
        ["filter", "a.csv", "--out-dir", "out", "--summary", "out/a.csv"],
        "--summary: 'out/a.csv' is the output of an input file",
    ),
    # every file was filtered, then writing the summary failed: IsADirectoryError, exit 1
    "summary a folder": (
        ["filter", "a.csv", "--out-dir", "out", "--summary", "."],
        "--summary: '.' is a folder; give a file name",
    ),
    # each file failed on its own: "output column(s) ['a'] already in the table"
    "empty suffix": (["filter", "a.csv", "--out-dir", "out", "--suffix="], "--suffix: empty"),
    # the message named filter_files' argument: "paths_or_glob: a.txt is not ..."
    "not a table": (["filter", "a.txt", "--out-dir", "out"], "input: a.txt is not a .csv"),
    "two inputs of one name": (
        ["filter", "a.csv", "out/a.csv", "--out-dir", "."],
        "input: several inputs are named ['a.csv']; each output takes its input's name in the "
        "output folder",  # it said "in out_dir", the Python argument's name
    ),
    # "method: projection_residual fits ...", the Python argument's name, after a cluster started
    "supervised method": (
        ["filter", "a.csv", "--out-dir", "out", "--method", "projection_residual"],
        "--method: projection_residual fits against a clean reference (--target)",
    ),
    # every file failed on its own, "sigma must be a number > 0", exit 1
    "bad parameter value": (
        ["filter", "a.csv", "--out-dir", "out", "--params", '{"sigma": -1}'],
        "--params: sigma must be a number > 0, got -1",
    ),
    "output over the fit-on file": (
        ["filter", "a.csv", "--out-dir", "out", "--fit-on", "out/a.csv"],
        "--out-dir: the output of a.csv would overwrite the fit_on file",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_cli_mistakes_exit_2_with_one_line(cli, cli_in_process, tmp_path, case):
    (tmp_path / "a.csv").write_text("a\n1\n2\n3\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.csv").write_text("a\n4\n5\n6\n")  # stays as it is
    args, message = HOSTILE[case]
    # one case as the user's command in a fresh interpreter; the rest through the same main()
    r = (cli if case == "pattern matches nothing" else cli_in_process)(*args, cwd=tmp_path)
    cli.assert_usage_error(r, message)
    assert (tmp_path / "out" / "a.csv").read_text() == "a\n4\n5\n6\n"


def test_the_summary_says_when_a_zero_phase_fit_averages_its_best_settings(logs, tmp_path):
    # a narrowed search (what the summary says is tested, not the search): it averages too
    narrow = {"window": [8, 16, "all"], "embedding": [1, 7]}
    summary = filter_files(str(logs / "log0.csv"), tmp_path, method="projection_zp",
                           params=narrow, progress=False)  # fmt: skip
    assert summary["status"].tolist() == ["ok"]
    assert "averaged)" in summary["params"][0] and "window=" in summary["params"][0]
    (tmp_path / "c").mkdir()
    causal = filter_files(str(logs / "log0.csv"), tmp_path / "c", progress=False)
    assert "window=" in causal["params"][0] and "averaged" not in causal["params"][0]


def test_the_summary_and_the_cli_tell_each_files_glitches(cli, tmp_path):
    """A batch run treats glitches as missing like a one-file run and says so: in the
    summary's ``notes`` (with the column's name) and on stderr under the file's name."""
    logs_dir = tmp_path / "in"
    logs_dir.mkdir()
    rng = np.random.default_rng(3)
    t = np.arange(1500)
    for name, where in (("spiky.csv", 700), ("clean.csv", None)):
        a = np.sin(2 * np.pi * t / 150)[:, None] + 0.1 * rng.normal(size=(t.size, 2))
        if where is not None:
            a[where, 0] += 100.0  # a logger's glitch
            a[where + 300, 1] -= 100.0
        pd.DataFrame({"gyro": a[:, 0], "acc": a[:, 1]}).to_csv(logs_dir / name, index=False)
    out = tmp_path / "out"
    out.mkdir()
    small = {"window": [16], "embedding": [1], "channel_independent": False}  # a quick fit
    summary = filter_files(str(logs_dir / "*.csv"), out, method="projection_zp", params=small,
                           progress=False)  # fmt: skip
    notes = dict(zip(summary["file"].map(lambda f: Path(f).name), summary["notes"]))
    both = "'gyro' has 1 glitch (the first at sample 700); 'acc' has 1 glitch (the first at sample"
    assert both in notes["spiky.csv"]
    assert notes["clean.csv"] == ""
    (tmp_path / "cli").mkdir()
    r = cli("filter", str(logs_dir / "*.csv"), "--out-dir", str(tmp_path / "cli"),
            "--method", "projection_zp", "--params", json.dumps(small), "--no-progress",
            cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"spiky.csv: note: {both} 1,000)" in r.stderr and "clean.csv: note" not in r.stderr
    # the files are filtered side by side in threads (the default cluster): the notes are told
    # once each, as notes, never as a raw warning with a line of the scheduler's code
    assert "Warning" not in r.stderr, r.stderr


def test_filter_table_refuses_to_overwrite_a_column_already_in_the_table():
    df = pd.DataFrame({"a": np.sin(np.arange(100) / 5), "a_filtered": 0.0})
    est = ProjectionFilter(window=8, sigma=1.0)
    with pytest.raises(ValueError, match=r"\['a_filtered'\] already in the table"):
        filter_table(df, est, columns=["a"], fit=False)
    out, _ = filter_table(df, est, columns=["a"], fit=False, suffix="_smooth")
    assert (out["a_filtered"] == 0.0).all() and "a_smooth" in out


def test_a_tau_filter_takes_each_files_time_column_as_its_sample_times(logs, tmp_path):
    # it failed every file with "tau is set: pass timestamps=" (the CLI's --out-dir too)
    summary = filter_files(str(logs / "log0.csv"), tmp_path, method="projection",
                           params={"tau": 0.05}, progress=False)  # fmt: skip
    assert summary["status"].tolist() == ["ok"], summary["error"].tolist()


def test_a_factory_that_is_a_function_takes_its_own_parameters():
    from tssdpa.estimators.base import unknown_parameters

    def make(window=3, causal=True):
        return ProjectionFilter(window=window, causal=causal)

    assert unknown_parameters(make, {"window": 5}) == ([], ["window", "causal"])
    assert unknown_parameters(make, {"windw": 5})[0] == ["windw"]
    assert unknown_parameters(lambda **kw: None, {"anything": 1})[0] == []
    from tssdpa.filters import ProjectionForecaster  # lags: embedding's old name

    assert unknown_parameters(ProjectionForecaster, {"horizon": 5, "lags": 2})[0] == []


@pytest.mark.parametrize("sep", [";", "\t", ","])
def test_each_output_has_its_inputs_separator(logs, tmp_path, sep):
    # a semicolon or tab file was written back comma-separated, though the outputs are
    # documented to keep their input's format
    src = tmp_path / "in"
    src.mkdir()
    pd.read_csv(logs / "log0.csv").to_csv(src / "log0.csv", index=False, sep=sep)
    out = tmp_path / "out"
    out.mkdir()
    summary = filter_files(str(src / "log0.csv"), out, params=PARAMS, progress=False)
    assert summary["status"].tolist() == ["ok"], summary["error"].tolist()
    header = (out / "log0.csv").read_text().splitlines()[0]
    assert header == sep.join(["time", "a", "b", "a_filtered", "b_filtered"])
    assert read_table(out / "log0.csv").attrs["sep"] == sep


def test_a_spreadsheet_export_with_trailing_separators_is_read(tmp_path):
    # its empty header names are pandas' "Unnamed: n" columns, not a name given twice
    p = tmp_path / "export.csv"
    p.write_text("time,a,b,,\n" + "".join(f"{t},{np.sin(t)},{np.cos(t)},,\n" for t in range(50)))
    df = read_table(p)
    assert list(df.columns[:3]) == ["time", "a", "b"]
    out, info = filter_table(df, ProjectionFilter(window=8, sigma=1.0), columns=["a", "b"],
                             fit=False)  # fmt: skip
    assert info["columns"] == ["a", "b"] and np.isfinite(out["a_filtered"]).all()


def test_the_outputs_copy_each_input_column_as_its_text(tmp_path):
    # pandas wrote what it parsed: "true" as "True", "2.50" as "2.5", "NaN" as an empty cell
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    flag = ["true" if i % 3 else "FALSE" for i in range(60)]
    temp = ["NaN" if i == 5 else f"{20 + i / 4:.2f}" for i in range(60)]
    lines = ["flag;temp;a"] + [
        f"{f};{t};{float(np.sin(i / 5))!r}" for i, (f, t) in enumerate(zip(flag, temp))
    ]
    (src / "log.csv").write_text("\n".join(lines) + "\n")
    summary = filter_files(str(src / "log.csv"), out, columns=["a"], progress=False)
    assert summary["status"].tolist() == ["ok"], summary["error"].tolist()
    written = (out / "log.csv").read_text().splitlines()
    assert written[0] == "flag;temp;a;a_filtered"
    assert [line.split(";")[:3] for line in written[1:]] == [l.split(";") for l in lines[1:]]


def test_columns_given_as_one_string_is_that_one_column_not_its_letters(logs, tmp_path):
    # a string is one column's name, as numeric_columns takes it: "a" filters a (it raised
    # TypeError, though it had filtered a), "ab" is a column the file lacks, not a and b
    summary = filter_files(str(logs / "log0.csv"), tmp_path, columns="a", progress=False)
    assert summary["status"].tolist() == ["ok"]
    assert pd.read_csv(tmp_path / "log0.csv").columns.tolist() == ["time", "a", "b", "a_filtered"]
    out, info = filter_table(read_table(logs / "log0.csv"), ProjectionFilter(window=8), columns="a")
    assert info["columns"] == ["a"] and "b_filtered" not in out.columns
    with pytest.raises(ValueError, match=r"\['ab'\] not in the file"):
        filter_table(read_table(logs / "log0.csv"), ProjectionFilter(window=8), columns="ab")


@pytest.mark.parametrize("suffix, error", [("", ValueError), (None, TypeError), (3, TypeError)])
def test_a_suffix_that_is_empty_or_no_string_is_refused_before_any_file(
    logs, tmp_path, suffix, error
):
    # None wrote the columns aNone and bNone; "" failed every file, one by one
    with pytest.raises(error, match="suffix"):
        filter_files(str(logs / "log0.csv"), tmp_path, suffix=suffix, progress=False)
    with pytest.raises(error, match="suffix"):
        filter_table(read_table(logs / "log0.csv"), ProjectionFilter(window=8), suffix=suffix)
    assert os.listdir(tmp_path) == []


def test_compressed_csv_logs_are_filtered_into_outputs_compressed_alike(logs, sequential, tmp_path):
    # refused: "log0.csv.gz is not a .csv or .parquet file" (tssdpa filter reads and writes it)
    import gzip

    seq_out, _ = sequential
    src = tmp_path / "in"
    src.mkdir()
    (src / "log0.csv.gz").write_bytes(gzip.compress((logs / "log0.csv").read_bytes()))
    out = tmp_path / "out"
    out.mkdir()
    summary = filter_files(str(src / "*.csv.gz"), out, params=PARAMS, progress=False)
    assert summary["status"].tolist() == ["ok"], summary["error"].tolist()
    assert os.listdir(out) == ["log0.csv.gz"]
    with gzip.open(out / "log0.csv.gz", "rb") as fh:  # gzip, not plain text under .gz
        assert fh.read() == (seq_out / "log0.csv").read_bytes()
    with pytest.raises(ValueError, match=r"log0.parquet.gz is not a .csv \(.csv.gz"):
        filter_files(str(src / "log0.parquet.gz"), out, progress=False)


def test_cli_a_fit_on_file_without_data_is_named_as_the_option(cli_in_process, tmp_path):
    # "tssdpa filter: fit_on: e.csv: ...", the Python argument's name
    (tmp_path / "a.csv").write_text("a\n1\n2\n3\n")
    (tmp_path / "e.csv").write_text("a\n")
    (tmp_path / "out").mkdir()
    r = cli_in_process("filter", "a.csv", "--out-dir", "out", "--fit-on", "e.csv", cwd=tmp_path)
    cli_in_process.assert_usage_error(r, "tssdpa filter: --fit-on: e.csv: e.csv has a header but "
                                         "no data rows")  # fmt: skip
    assert os.listdir(tmp_path / "out") == []


def test_a_bad_parameter_value_is_refused_once_before_any_file(logs, tmp_path):
    # each file failed with it: "sigma must be a number > 0, got -1" five times over
    with pytest.raises(ValueError, match=r"params: sigma must be a number > 0, got -1"):
        filter_files(str(logs / "*.csv"), tmp_path, params={"sigma": -1}, progress=False)
    with pytest.raises(ValueError, match=r"params: causal must be one of \(True, False\)"):
        filter_files(str(logs / "*.csv"), tmp_path, params={"causal": "no"}, progress=False)
    assert os.listdir(tmp_path) == []


def test_params_that_are_no_dict_are_refused_naming_the_argument(logs, tmp_path):
    # "cannot convert dictionary update sequence element #0 to a sequence"
    with pytest.raises(TypeError, match=r"params must be a dict .*, got list \[8\]"):
        filter_files(str(logs / "log0.csv"), tmp_path, params=[8], progress=False)


def test_a_file_named_twice_in_other_spellings_is_filtered_once(logs, tmp_path, monkeypatch):
    # "several inputs are named ['log0.csv']": expand_paths kept ./log0.csv and its absolute
    # path as two files, whose outputs clashed
    monkeypatch.chdir(logs)
    assert expand_paths(["log0.csv", str(logs / "log0.csv"), "./log0.csv", "log2.csv"]) == [
        "log0.csv",
        "log2.csv",
    ]
    small = {"window": [16], "embedding": [1]}  # the files' names are checked, not the fits
    summary = filter_files(["./log0.csv", str(logs / "*.csv")], tmp_path, params=small,
                           progress=False)  # fmt: skip
    names = [Path(f).name for f in summary["file"]]
    assert names.count("log0.csv") == 1 and summary["file"][0] == "./log0.csv"


def test_a_file_whose_name_holds_glob_brackets_is_filtered_as_named(tmp_path):
    # "'run[1].csv' matches no file": the name was taken as a pattern only (the shell passes
    # such a name as it is when no file matches it, as an unquoted pattern's listing does)
    (tmp_path / "out").mkdir()
    x = np.sin(np.arange(200) / 7.0)
    pd.DataFrame({"a": x}).to_csv(tmp_path / "run[1].csv", index=False)
    assert expand_paths([tmp_path / "run[1].csv"]) == [str(tmp_path / "run[1].csv")]
    summary = filter_files(str(tmp_path / "run[1].csv"), tmp_path / "out", params=PARAMS,
                           progress=False)  # fmt: skip
    assert summary["status"].tolist() == ["ok"], summary["error"].tolist()
    assert (tmp_path / "out" / "run[1].csv").is_file()
    pd.DataFrame({"a": x}).to_csv(tmp_path / "run1.csv", index=False)  # a match: as the shell
    assert expand_paths([str(tmp_path / "run[1].csv")]) == [str(tmp_path / "run1.csv")]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_an_output_folder_where_no_file_can_be_written_is_refused_once_naming_it(
    cli, cli_in_process, tmp_path
):
    # each file failed on its own, naming '/proc/.a.csv.7d759210.partial', a temporary file
    # the user never gave
    (tmp_path / "a.csv").write_text("a\n1\n2\n3\n")
    with pytest.raises(ValueError, match="out_dir: cannot write files in '/proc'"):
        filter_files(str(tmp_path / "a.csv"), "/proc", progress=False)
    r = cli_in_process("filter", "a.csv", "--out-dir", "/proc", cwd=tmp_path)
    cli.assert_usage_error(r, "--out-dir: cannot write files in '/proc'")


def test_a_bad_parameter_value_is_refused_before_a_cluster_starts(
    cli, cli_in_process, tmp_path, monkeypatch
):
    # the value was checked inside filter_files, after the Dask cluster had started
    import tssdpa.cli.batch as cli_batch

    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(cli_batch, "_client", no_cluster)
    (tmp_path / "a.csv").write_text("a\n1\n2\n3\n")
    (tmp_path / "out").mkdir()
    args = ["filter", "a.csv", "--out-dir", "out", "--params", '{"sigma": -1}']
    r = cli_in_process(*args, cwd=tmp_path)
    cli.assert_usage_error(r, "--params: sigma must be a number > 0, got -1")


def test_filter_table_notes_a_time_column_that_steps_backwards():
    from tssdpa.baselines import MovingAverageFilter

    t = np.arange(100) * 0.01
    t[60:] -= 0.2
    df = pd.DataFrame({"time": t, "a": np.sin(np.arange(100) / 9.0)})
    _, info = filter_table(df, MovingAverageFilter())
    assert any("1 step(s) backwards" in n and "equally spaced" in n for n in info["notes"])


def test_filter_table_notes_the_columns_it_left_out():
    # a column of numbers with one '?' cell was left out of the output, the summary's notes
    # empty (tssdpa filter on one file says so)
    from tssdpa.baselines import MovingAverageFilter

    b = np.cos(np.arange(100) / 7.0).astype(object)
    b[14] = "?"
    df = pd.DataFrame({"time": np.arange(100) * 0.01, "a": np.sin(np.arange(100) / 9.0), "b": b})
    out, info = filter_table(df, MovingAverageFilter())
    assert info["columns"] == ["a"] and "b_filtered" not in out
    assert any("skipped" in n and "['b']" in n for n in info["notes"]), info["notes"]
    assert any("'b' holds '?' in data row 15" in n for n in info["notes"]), info["notes"]


def test_filter_table_names_the_column_an_error_is_about():
    # "x channel 1 reaches magnitude ...": the summary's error named no column of the file
    df = pd.DataFrame({"a": np.sin(np.arange(100) / 9.0), "b": 1e300 * np.cos(np.arange(100))})
    with pytest.raises(ValueError, match=r"^column 'b' reaches magnitude"):
        filter_table(df, ProjectionFilter(window=8))
