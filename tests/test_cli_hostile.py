"""The command line as a new user meets it (issue 11): every mistake with the file or the
arguments ends in one line on stderr and exit code 2, and never a Python traceback -- run in a
subprocess, as a user would, where a fresh interpreter shows what the test process would hide
(import banners, warnings), and through the same ``main`` in this process for the many
one-message cases."""

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    good = pd.DataFrame({"Time (s)": np.arange(300) * 0.01, "gyro": rng.normal(size=300)})
    good.to_csv(tmp_path / "good.csv", index=False)
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("time,gyro\n")
    good.assign(gyro=good["gyro"].astype(object).where(good.index != 7, "oops")).to_csv(
        tmp_path / "text.csv", index=False
    )
    pd.DataFrame({"name": ["a", "b", "c"]}).to_csv(tmp_path / "words.csv", index=False)
    # with a byte-order mark, as some spreadsheets write it: the first name is still "time"
    (tmp_path / "twice.csv").write_text("\ufefftime;time;gyro\n0;1;2\n1;2;3\n2;3;4\n")
    good.assign(clean=0.0).to_csv(tmp_path / "clean_ref.csv", index=False)
    clean = good.assign(gyro2=good["gyro"], clean=np.sin(np.arange(300) / 9), clean2=0.5)
    clean.loc[7, "clean"] = np.nan
    clean.to_csv(tmp_path / "clean_gap.csv", index=False)
    good.assign(gyro=good["gyro"] * 1e200).to_csv(tmp_path / "huge.csv", index=False)
    good.assign(gyro_filtered=1.0).to_csv(tmp_path / "refiltered.csv", index=False)
    (tmp_path / "a_folder").mkdir()
    pd.DataFrame({"gyro": good["gyro"]}).to_csv(tmp_path / "words_and_numbers.csv", index=False)
    pd.DataFrame({"time": np.arange(300.0)[::-1], "gyro": good["gyro"]}).to_csv(
        tmp_path / "backwards.csv", index=False
    )
    # a stray comma in one row: pandas took every row's first field for its index and
    # shifted each column one place left (exit 0, gyro_filtered of another column)
    (tmp_path / "stray.csv").write_text(
        "time,gyro,temp\n0,0.5,20,oops\n" + "".join(f"{i},0.{i},2{i}\n" for i in range(1, 9))
    )
    (tmp_path / "broken.csv.gz").write_bytes(b"\x1f\x8b\x08\x00junk")  # exit 1 (EOFError)
    (tmp_path / "broken.csv.xz").write_bytes(b"garbage\n")  # exit 1 (LZMAError)
    return tmp_path


CASES = {
    "a row with a field more than the others": (
        ["filter", "stray.csv"],
        "stray.csv: line 2 has 4 fields, the header 3",
    ),
    "a broken gzip file": (["filter", "broken.csv.gz"], "broken.csv.gz is not a readable CSV"),
    "a broken xz file": (["filter", "broken.csv.xz"], "broken.csv.xz is not a readable CSV"),
    # --suffix "" wrote the filtered values over the columns, as --inplace, unasked
    "empty suffix": (["filter", "good.csv", "--suffix", ""], "--suffix: empty"),
    "missing file": (["filter", "nope.csv"], "nope.csv: no such file"),
    "empty file": (["filter", "empty.csv"], "empty.csv is empty"),
    "header only": (["filter", "header.csv"], "has a header but no data rows"),
    "text in the column": (["filter", "text.csv", "--columns", "gyro"], "'oops' in data row 8"),
    "no numeric column": (["filter", "words.csv"], "no numeric column"),
    "misspelt parameter": (
        ["filter", "good.csv", "--params", '{"windw": 8}'],
        "unknown parameter(s) ['windw'] for ProjectionFilter; valid: window",
    ),
    "params not an object": (["filter", "good.csv", "--params", "[1, 2]"], "a JSON object"),
    "params not JSON": (["filter", "good.csv", "--params", "{window: 8}"], "a JSON object"),
    "out folder missing": (
        ["filter", "good.csv", "--out", "no/such/dir/out.csv"],
        "--out: the folder",
    ),
    "out is a folder": (["filter", "good.csv", "--out", "a_folder"], "'a_folder' is a folder"),
    # --inplace --out good.csv replaced the recording with its filtered copy
    "out is the input file": (
        ["filter", "good.csv", "--inplace", "--out", "./good.csv"],
        "--out: './good.csv' is the input file",
    ),
    "output column already there": (
        ["filter", "refiltered.csv", "--columns", "gyro"],
        "output column(s) ['gyro_filtered'] already in the table: give another --suffix",
    ),
    "unknown method": (["filter", "good.csv", "--method", "kalmann"], "tssdpa methods"),
    "bad parameter value": (
        ["filter", "good.csv", "--params", '{"window": -3}'],
        "window must be an integer >= 0",
    ),
    "time column filtered": (["filter", "good.csv", "--columns", "Time (s)"], "time column"),
    "supervised method without target": (
        ["filter", "good.csv", "--method", "projection_residual"],
        "needs a clean reference: give --target",
    ),
    # the sample times were taken for the clean signal: exit 0 and a nonsense filter
    "time column as the target": (
        ["filter", "good.csv", "--method", "projection_residual", "--target", "Time (s)"],
        "--target: 'Time (s)' is the time column",
    ),
    # --target was ignored: a fit on the noisy column alone, exit 0, as if supervised
    "a target for a method that ignores it": (
        ["filter", "clean_ref.csv", "--method", "butterworth", "--target", "clean"],
        "--target: --method butterworth does not fit against a clean reference",
    ),
    # "target channel 0 is missing ...": a channel number where the user named a column
    "a target column with a missing cell": (
        [
            "filter",
            "clean_gap.csv",
            "--method",
            "projection_residual",
            "--columns",
            "gyro",
            "gyro2",
            "--target",
            "clean2",
            "clean",
        ],  # fmt: skip
        "--target column 'clean' is missing at sample 7",
    ),
    "unknown dataset": (["compare", "denoise", "--dataset", "nope"], "dataset must be one of"),
    # --n 0 fell back to the default length; --horizons 0 ran the comparison, then KeyError
    "zero length": (["compare", "denoise", "--n", "0"], "--n must be a positive integer, got 0"),
    "zero horizon": (["compare", "forecast", "--horizons", "0"], "must be a positive integer"),
    "negative origins": (["compare", "forecast", "--max-origins", "-5"], "positive integer"),
    # the second "gyro" came back as "gyro.1" (pandas' renaming)
    "a column name twice": (["filter", "twice.csv"], "['time'] appear more than once"),
    # numpy's "expected non-negative integer" named no option; an unknown method exited 1
    "negative seed": (["compare", "denoise", "--seeds", "-1"], "--seeds must be integers >= 0"),
    "unknown compared method": (
        ["compare", "denoise", "--methods", "nosuch", "projection"],
        "--methods: unknown name(s) ['nosuch']",
    ),
    "values whose squares overflow": (["filter", "huge.csv"], "column 'gyro' reaches magnitude"),
    # "KeyError: 'task'" after running nothing; "KeyError: 'mse'" after running everything
    "no method of the task": (
        ["compare", "denoise", "--methods", "naive"],
        "--methods: none of ['naive'] is a denoise method",
    ),
    "horizon past the test part": (
        ["compare", "forecast", "--horizons", "100000"],
        "horizons: 100000 is longer than",
    ),
    # FileExistsError; for --docs after the whole run
    "out is a file": (["compare", "denoise", "--out", "good.csv"], "--out: 'good.csv' is a file"),
    "docs is a file": (
        ["compare", "denoise", "--docs", "good.csv"],
        "--docs: 'good.csv' is a file",
    ),
    # it exited 1 ("ValueError: ...")
    "unknown download": (["download", "--names", "bogus"], "--names: unknown dataset(s)"),
    # the task builder's message came prefixed with "--n 300:", naming another option
    "repeated seeds": (["compare", "denoise", "--seeds", "0", "0"], "--seeds must differ"),
    # it fetched into the working directory / ended in NotADirectoryError (exit 1)
    "empty download cache-dir": (["download", "--cache-dir", ""], "--cache-dir: '' is no folder"),
    "download cache-dir is a file": (
        ["download", "--cache-dir", "good.csv"],
        "--cache-dir: 'good.csv' is no folder",
    ),
    # tau needs the sample times: it said "pass timestamps=", which the CLI has no way to do
    "tau without a time column": (
        ["filter", "words_and_numbers.csv", "--params", '{"tau": 5.0}'],
        "tau (a time constant) needs the sample times",
    ),
    "tau with times out of order": (
        ["filter", "backwards.csv", "--params", '{"tau": 5.0}'],
        "time column 'time' steps backwards at data row 2 (298.0 after 299.0)",
    ),
}


# these run as the user's command in a fresh interpreter, start to end; the others through
# the same main() in this process (a subprocess costs 2-3 s of imports a case)
IN_A_SUBPROCESS = {"missing file", "values whose squares overflow"}


@pytest.mark.parametrize("case", list(CASES))
def test_a_user_mistake_exits_2_with_one_line_and_no_traceback(cli, cli_in_process, files, case):
    args, message = CASES[case]
    r = (cli if case in IN_A_SUBPROCESS else cli_in_process)(*args, cwd=files)
    cli.assert_usage_error(r, message)


def test_a_semicolon_file_with_inf_cells_is_read_and_the_inf_reported(cli, files):
    df = pd.read_csv(files / "good.csv")
    df.loc[5, "gyro"] = np.inf
    df.to_csv(files / "semi.csv", index=False, sep=";")
    r = cli("filter", "semi.csv", "--out", "out.csv", cwd=files)
    assert r.returncode == 0, r.stderr
    assert "1 infinite cell(s) treated as missing" in r.stderr
    assert "chose" in r.stderr and "Traceback" not in r.stderr
    assert "Lightning" not in r.stderr and "Warning" not in r.stderr
    out = pd.read_csv(files / "out.csv", sep=";")  # written as it was read
    assert list(out.columns) == ["Time (s)", "gyro", "gyro_filtered"]
    assert np.isfinite(out["gyro_filtered"]).all()


def test_help_of_filter_names_every_option_and_its_default(cli, files):
    r = cli("filter", "--help", cwd=files)
    assert r.returncode == 0
    for option in ("--columns", "--time-column", "--target", "--params", "--horizon",
                   "--fit-fraction", "--suffix", "--inplace", "--out", "default:"):  # fmt: skip
        assert option in r.stdout


@pytest.mark.slow  # ~7 s; the learned forecaster's run below checks the same banners by default
def test_a_learned_filter_prints_no_lightning_banner(cli, files):
    params = '{"max_epochs": 1, "d_model": 8, "window": 8, "seq_len": 32}'
    args = ["filter", "good.csv", "--method", "learned_projection", "--params", params]
    r = cli(*args, "--out", "out.csv", cwd=files)
    assert r.returncode == 0, r.stderr
    for banner in ("GPU available", "TPU available", "Tip", "Warning", "Traceback"):
        assert banner not in r.stderr


def test_a_learned_setting_built_otherwise_than_given_is_told_once_as_a_note(cli, files):
    # the command silenced every warning: patch_len=16 was built as 8 without a word
    params = '{"max_epochs": 1, "d_model": 8, "lookback": 8, "patch_len": 16}'
    args = ["filter", "good.csv", "--method", "learned_projection", "--horizon", "2"]
    r = cli(*args, "--params", params, "--out", "out.csv", cwd=files)
    assert r.returncode == 0, r.stderr
    assert [line for line in r.stderr.splitlines() if "is built as" in line] == [
        "learned_projection on ['gyro']: note: LearnedProjectionForecaster: moving_average=25 "
        "is built as 9 (at most lookback=8, + 1 as it is even); patch_len=16 is built as 8 (at "
        "most lookback=8); moving_average_ and patch_len_ hold the values used"
    ]
    for banner in ("GPU available", "TPU available", "Tip", "Warning", "Traceback"):
        assert banner not in r.stderr  # Lightning's banners too, as for a learned filter


def test_import_and_a_numpy_filter_from_the_command_line_never_load_torch(files):
    """torch and Lightning take seconds to import: ``import tssdpa`` and ``tssdpa filter`` with
    a numpy method must not pay for them (a learned method loads them, above)."""
    code = (
        "import sys, tssdpa; light = 'torch' not in sys.modules; "
        "from tssdpa.cli import main; code = main(['filter', 'good.csv', '--out', 'out.csv']); "
        "print(light, code, [m for m in ('torch', 'lightning') if m in sys.modules])"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=files,
                       env=env, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "True 0 []"
    assert (files / "out.csv").is_file()


def test_help_of_compare_describes_every_option(cli, files):
    r = cli("compare", "--help", cwd=files)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    for i, line in enumerate(lines):  # an option alone on its line has its help below it
        if line.strip().startswith("--") and "  " not in line.strip():
            assert lines[i + 1].startswith(" " * 10), f"{line.strip()} has no help text"


def test_every_option_of_every_subcommand_has_help_and_no_empty_default():
    """--help says what each option does; '(default: None)' and a default stated twice say
    nothing."""
    from tssdpa.cli import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(sub.choices) >= {"compare", "filter", "methods", "download"}
    for name, command in sub.choices.items():
        assert command.description, f"tssdpa {name} has no description"
        formatter = command._get_formatter()
        for action in command._actions:
            if action.dest == "help":
                continue
            text = (formatter._get_help_string(action) or "").replace("%(default)s", "X")
            assert text, f"tssdpa {name} {action.option_strings} has no help"
            assert text.count("(default") <= 1, f"tssdpa {name} {action.option_strings}: {text}"
        text = command.format_help()
        assert "(default: None)" not in text and "(default: False)" not in text, name


def test_a_reader_that_stops_early_ends_the_output_without_a_traceback(tmp_path):
    # `tssdpa filter big.csv | head -1` ended in "BrokenPipeError: [Errno 32] Broken pipe"
    pd.DataFrame({"a": np.sin(np.arange(50_000) / 10)}).to_csv(tmp_path / "big.csv", index=False)
    cmd = [sys.executable, "-m", "tssdpa", "filter", "big.csv", "--method", "moving_average"]
    p = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline().decode().strip() == "a,a_filtered"
    p.stdout.close()  # as head does once it has its line
    err = p.stderr.read().decode()
    p.wait(timeout=120)
    assert p.returncode == 141 and "Error" not in err and "Traceback" not in err


def test_main_called_in_a_program_leaves_its_standard_output_alone_on_a_broken_pipe(
    files, monkeypatch
):
    from tssdpa.cli import main

    class Closed:  # a reader that went away, and no file descriptor (a StringIO, Jupyter)
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

        def fileno(self):
            raise OSError("no file descriptor")

    monkeypatch.setattr(sys, "stdout", Closed())
    monkeypatch.chdir(files)
    assert main(["filter", "good.csv", "--method", "moving_average"]) == 141
