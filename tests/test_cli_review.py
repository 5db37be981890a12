"""Findings of a new user's review of ``tssdpa filter`` / ``compare``: each test is one of them,
failing before its fix."""

import warnings

import numpy as np
import pandas as pd

from tssdpa.cli import main
from tssdpa.cli.said import library_warnings
from tssdpa.data.tables import read_table
from tssdpa.data.text_dates import parse_dates


def _noisy(n=300, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return np.sin(t / 15) + 0.2 * rng.standard_normal(n), np.cos(
        t / 25
    ) + 0.2 * rng.standard_normal(n)


def test_filter_tells_the_librarys_warning_that_it_returned_the_columns_unchanged(tmp_path, capsys):
    a, b = _noisy()
    p = tmp_path / "ms.csv"
    stamps = 1_700_000_000_000 + 100 * np.arange(len(a))  # epoch milliseconds, read as seconds
    pd.DataFrame({"timestamp": stamps, "a": a, "b": b}).to_csv(p, index=False)
    assert (
        main(["filter", str(p), "--params", '{"tau": 0.3}', "--out", str(tmp_path / "o.csv")]) == 0
    )
    err = capsys.readouterr().err
    told = [line for line in err.splitlines() if "returns x unchanged" in line]
    assert len(told) == 1 and told[0].startswith(
        "projection_zp on ['a', 'b']: note: time column 'timestamp'"
    )
    assert "Warning" not in err and "warnings.warn" not in err  # a note, not Python's warning
    # it said "nanosecond times: divide by 1e9", which a command's user cannot do to a file
    assert told[0].endswith("these look like milliseconds since the epoch: name the unit in "
                            "the column's name, 'timestamp (ms)')")  # fmt: skip
    frame = pd.read_csv(p).rename(columns={"timestamp": "timestamp (ms)"})
    frame.to_csv(p, index=False)  # the advice followed: read as milliseconds, nothing to tell
    assert (
        main(["filter", str(p), "--params", '{"tau": 0.3}', "--out", str(tmp_path / "o.csv")]) == 0
    )
    err = capsys.readouterr().err
    assert "returns x unchanged" not in err and "its numbers x 0.001 s, by its name" in err


def test_library_warnings_keeps_the_librarys_category_and_drops_every_other():
    from tssdpa.checks import LibraryWarning
    from tssdpa.estimators import spacing

    def in_library(code):  # run as if written in a module of the package
        exec(compile(code, spacing.__file__, "exec"), {"warnings": warnings, "np": np})

    with library_warnings() as said:
        warnings.warn("a tip from another package's code", stacklevel=1)
        np.log(np.zeros(1))  # numpy's RuntimeWarning
        for _ in range(2):  # the library's category: told once
            warnings.warn("the library says so", LibraryWarning, stacklevel=1)
        in_library("warnings.warn('old', DeprecationWarning)")
        # torch's UserWarning raised in C under a call from the library's code (its
        # "Triggered internally at ...cpp" came back as a note): not the library's
        in_library("import torch\na = np.zeros(3); a.flags.writeable = False\ntorch.as_tensor(a)")
        in_library("warnings.warn('a plain UserWarning in a library file')")
    assert said == ["the library says so"]


def test_every_warning_the_library_raises_is_of_its_category():
    """No ``warnings.warn`` in the package gives a plain UserWarning (the default category, or
    ``UserWarning`` by name): the CLI would drop it."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "tssdpa"
    plain = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "warnings.warn"):
                continue
            category = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "category"), None
            )  # fmt: skip
            # warnings.warn(SettingWarning(...)); input_notes.tell's note is an InputNote
            instance = isinstance(node.args[0], ast.Call) or (
                path.name == "input_notes.py" and ast.unparse(node.args[0]) == "note"
            )
            if (category is None and not instance) or (
                category is not None and ast.unparse(category) == "UserWarning"
            ):
                plain.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    assert plain == []


def _dated(tmp_path, stamps, name="when.csv"):
    a, _ = _noisy(len(stamps))
    p = tmp_path / name
    pd.DataFrame({"when": stamps, "a": a}).to_csv(p, index=False)
    return p


def test_day_first_hourly_dates_are_read_day_first_and_the_note_says_so(tmp_path, capsys):
    hours = pd.date_range("2026-05-01", periods=240, freq="h")
    p = _dated(tmp_path, hours.strftime("%d/%m/%Y %H:%M"))
    times, note = parse_dates(pd.read_csv(p)["when"], "when")
    assert (times.diff().dropna() == pd.Timedelta("1h")).all()
    assert main(["filter", str(p), "--params", '{"tau": 3600}', "-o", str(tmp_path / "o.csv")]) == 0
    err = capsys.readouterr().err
    assert "time column 'when': dates read day-first ('01/05/2026 00:00' is 2026-05-01)" in err


def test_a_day_first_column_of_dates_alone_is_found_and_used_as_the_sample_times(tmp_path, capsys):
    p = _dated(tmp_path, pd.date_range("2026-05-01", periods=60, freq="D").strftime("%d/%m/%Y"))
    assert (
        main(["filter", str(p), "--params", '{"tau": 86400}', "-o", str(tmp_path / "o.csv")]) == 0
    )
    assert "time column 'when' used as the sample times (tau)" in capsys.readouterr().err


def test_dates_that_read_alike_in_both_orders_are_refused_where_the_filter_reads_them(
    tmp_path, capsys
):
    p = _dated(tmp_path, ["01/02/2026", "03/04/2026", "05/06/2026"])  # 1 Feb or 2 Jan, ...
    assert main(["filter", str(p), "--params", '{"tau": 86400}']) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'when'" in err and "with the same largest step" in err


def test_an_output_path_that_cannot_be_written_is_refused_before_the_fit(tmp_path, capsys):
    a, b = _noisy()
    p = tmp_path / "in.csv"
    pd.DataFrame({"a": a, "b": b}).to_csv(p, index=False)
    cases = {
        "/proc/x.csv": "--out: cannot write in the folder '/proc' (it takes no new files)",
        str(p / "x.csv"): f"--out: {str(p)!r} is a file, not a folder; give another path",
        "": "--out: empty; give a file name",
    }
    for out, said in cases.items():
        assert main(["filter", str(p), "--out", out]) == 2
        assert capsys.readouterr().err == f"tssdpa filter: {said}\n"  # one line, no fit


def test_compare_refuses_an_output_folder_that_cannot_be_written_before_the_run(tmp_path, capsys):
    assert main(["compare", "denoise", "--out", "/proc/cmp"]) == 2
    said = "tssdpa compare: --out: cannot write in the folder '/proc' (it takes no new files)\n"
    assert capsys.readouterr().err == said


def test_spaces_after_the_header_commas_are_not_part_of_the_column_names(tmp_path, capsys):
    p = tmp_path / "spaced.csv"
    p.write_text("time, a, b\n" + "".join(f"{i},{np.sin(i)},{np.cos(i)}\n" for i in range(50)))
    out = tmp_path / "o.csv"
    assert main(["filter", str(p), "--columns", "a", "-m", "moving_average", "-o", str(out)]) == 0
    assert pd.read_csv(out).columns.tolist() == ["time", "a", "b", "a_filtered"]


def test_names_that_differ_only_by_spaces_are_refused_as_a_name_given_twice(tmp_path, capsys):
    p = tmp_path / "twice.csv"
    p.write_text("time,a, a\n0,1,2\n1,2,3\n")
    assert main(["filter", str(p)]) == 2
    assert "['a'] appear more than once in the header once the spaces" in capsys.readouterr().err


def test_zeit_unix_time_and_ts_are_time_columns_and_tsx_is_a_signal():
    from tssdpa.data.tables import find_time_column

    for name in ("Zeit [s]", "unix_time", "ts", "ts_ms"):
        assert find_time_column(pd.DataFrame({"a": [1.0, 2.0], name: [0, 1]})) == name
    for name in ("tsX", "ts_x", "Zeit [degC]"):
        assert find_time_column(pd.DataFrame({"a": [1.0, 2.0], name: [0, 1]})) is None


def test_a_causal_setting_that_contradicts_the_method_is_refused_naming_both(tmp_path, capsys):
    a, b = _noisy()
    p = tmp_path / "in.csv"
    pd.DataFrame({"a": a, "b": b}).to_csv(p, index=False)
    (tmp_path / "out").mkdir()
    for method, causal, other in (("projection_zp", "true", "projection"),
                                  ("projection", "false", "projection_zp")):  # fmt: skip
        for where in ([], ["--out-dir", str(tmp_path / "out")]):
            assert (
                main(
                    ["filter", str(p), "-m", method, "--params", f'{{"causal": {causal}}}', *where]
                )
                == 2
            )
            err = capsys.readouterr().err
            assert f"--params: causal={causal} contradicts --method {method}" in err
            assert err.count("\n") == 1 and err.rstrip().endswith(f"give --method {other}")
    agreed = ["-m", "projection", "--params", '{"causal": true}', "--columns", "a"]
    assert main(["filter", str(p), *agreed, "--out", str(tmp_path / "o.csv")]) == 0


def test_inplace_with_a_suffix_is_refused_not_the_suffix_ignored(tmp_path, capsys):
    a, b = _noisy()
    p = tmp_path / "in.csv"
    pd.DataFrame({"a": a, "b": b}).to_csv(p, index=False)
    assert (
        main(["filter", str(p), "--inplace", "--suffix", "_f", "-o", str(tmp_path / "o.csv")]) == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("tssdpa filter: --suffix: --inplace writes") and err.count("\n") == 1
    assert not (tmp_path / "o.csv").exists()


def test_notes_to_a_closed_pipe_are_dropped_and_the_output_file_still_written(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    a, b = _noisy()
    p = tmp_path / "in.csv"
    pd.DataFrame({"a": a, "b": b}).to_csv(p, index=False)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    quick = '{"window": [16], "embedding": [1], "degree": [0], "channel_independent": false}'
    args = [sys.executable, "-m", "tssdpa", "filter", str(p), "--out", str(tmp_path / "o.csv"),
            "--params", quick]  # a quick fit, which tells six lines of notes too  # fmt: skip
    run = subprocess.Popen(args, stderr=subprocess.PIPE, env=env)
    run.stderr.close()  # `2>&1 | head -0`: the reader of the notes is gone before the first
    assert run.wait(timeout=300) == 0
    assert pd.read_csv(tmp_path / "o.csv").columns.tolist() == [
        "a",
        "b",
        "a_filtered",
        "b_filtered",
    ]


def _columns(tmp_path, **columns):
    p = tmp_path / "log.csv"
    pd.DataFrame({"time": np.arange(300) * 0.01, **columns}).to_csv(p, index=False)
    return p


def test_compare_names_a_constant_column_by_its_name_not_its_channel_number(tmp_path, capsys):
    a, b = _noisy()
    p = _columns(tmp_path, a=a, b=b, c=np.full(300, 3.3))
    assert main(["compare", "denoise", "--file", str(p), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert "clean: column(s) ['c'] are constant" in err and err.count("\n") == 1
    # the advice was the Python API's ("add noise of a set std"), which no option gives
    assert "add noise of a set std" not in err
    assert "leave them out: --columns a b" in err
    # every column constant: no --columns leaves them out
    p = _columns(tmp_path, c=np.full(300, 3.3))
    assert main(["compare", "denoise", "--file", str(p), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert err.endswith("clean: column(s) ['c'] are constant, so no noise level gives an SNR "
                        "of 0.0 dB; no column varies\n")  # fmt: skip


def test_compare_refuses_a_value_beyond_1e150_naming_its_column_as_filter_does(tmp_path, capsys):
    a, b = _noisy()
    a[100] = 1e160
    p = _columns(tmp_path, a=a, b=b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning was printed too
        assert main(["compare", "denoise", "--file", str(p), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"--file {p}: column 'a' reaches magnitude 1e+160, beyond 1e+150" in err


def test_compare_refuses_a_column_below_1e_150_as_filter_does(tmp_path, capsys):
    # only the upper bound was checked: a column of values near 1e-200 (squares underflow to 0)
    # was compared, where filter refuses it
    a, b = _noisy()
    p = _columns(tmp_path, a=a, b=b * 1e-200)
    assert main(["compare", "denoise", "--file", str(p), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    said = "column 'b' is at most 1.33e-200 in magnitude, below 1e-150 where squares underflow"
    assert f"--file {p}: {said}" in err and err.count("\n") == 1
    assert main(["filter", str(p), "--out", str(tmp_path / "o.csv")]) == 2
    assert said in capsys.readouterr().err


def test_a_loggers_comment_lines_before_the_header_are_skipped(tmp_path, capsys):
    a, _ = _noisy()
    p = tmp_path / "log.csv"
    rows = "".join(f"{i},{v}\n" for i, v in enumerate(a))
    p.write_text("# logger v1.2\n# rate 100 Hz\n\ntime,a\n" + rows)
    out = tmp_path / "o.csv"
    assert main(["filter", str(p), "-m", "moving_average", "-o", str(out)]) == 0
    assert pd.read_csv(out).columns.tolist() == ["time", "a", "a_filtered"]
    assert "time column 'time' copied through" in capsys.readouterr().err


def test_a_comment_over_a_header_of_numbers_is_skipped_and_a_commented_header_is_not(
    tmp_path, capsys
):
    from tssdpa.data.csv_files import leading_comments

    p = tmp_path / "spectra.csv"  # wavelengths as the header, under the instrument's comment
    p.write_text("# spectrometer v2\n400,410,420\n" + "0.1,0.2,0.3\n" * 50)
    assert leading_comments(p) == 1
    assert read_table(p).columns.tolist() == ["400", "410", "420"]
    p.write_text("# time,a\n" + "".join(f"{i},{i * 0.5}\n" for i in range(50)))
    assert leading_comments(p) == 0  # the header itself behind a '#': not skipped
    for text in ("# time;a\n0,5;1\n1,0;2\n", "# time,a\n0,\n1,2\n2,3\n"):
        p.write_text(text)  # decimal commas under ';', an empty first cell: still its header
        assert leading_comments(p) == 0


def test_a_misspelt_option_shows_the_subcommands_usage_and_its_closest_option(tmp_path, capsys):
    import pytest

    with pytest.raises(SystemExit) as ended:
        main(["filter", "log.csv", "--colums", "a"])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: tssdpa filter")
    assert err.rstrip().endswith("tssdpa filter: error: unrecognized argument(s): --colums a; "
                                 "did you mean --columns?")  # fmt: skip


def test_a_method_that_chooses_nothing_prints_the_settings_it_ran_with(tmp_path, capsys):
    # only the projection methods said what they ran with: butterworth's cutoff 0.1 and
    # order 4, autoreg's 2 lags were the user's to guess
    a, b = _noisy()
    p = tmp_path / "in.csv"
    pd.DataFrame({"a": a, "b": b}).to_csv(p, index=False)
    assert main(["filter", str(p), "-m", "butterworth", "-o", str(tmp_path / "o.csv")]) == 0
    assert "butterworth on ['a', 'b']: settings cutoff=0.1, order=4" in capsys.readouterr().err
    args = ["filter", str(p), "-m", "autoreg", "--horizon", "2", "--params", '{"lags": 3}']
    assert main([*args, "-o", str(tmp_path / "f.csv")]) == 0
    assert "autoreg on ['a', 'b']: settings lags=3" in capsys.readouterr().err


def test_a_params_horizon_below_the_forecast_horizon_is_refused_before_the_fit(tmp_path, capsys):
    # it fitted for horizons up to 2, then failed: 'projection: horizon must be <= the fitted
    # horizon 2; got 3', naming neither --params nor --horizon
    a, b = _noisy()
    p = tmp_path / "in.csv"
    pd.DataFrame({"a": a, "b": b}).to_csv(p, index=False)
    out = tmp_path / "o.csv"
    args = ["filter", str(p), "--horizon", "3", "--out", str(out), "--params"]
    assert main([*args, '{"horizon": 2}']) == 2
    err = capsys.readouterr().err
    assert "--params: horizon=2 is below --horizon 3" in err
    assert "chose" not in err and not out.exists()  # nothing fitted
    # a larger one is kept: a model saved for horizons up to it (--save-model)
    assert main([*args, '{"horizon": 4, "embedding": 2, "model": "linear"}']) == 0
    assert "a_forecast_h3" in pd.read_csv(out).columns


def _told_unchanged(path, tmp_path, capsys) -> str:
    params = '{"tau": 0.05, "causal": true, "window": 8}'
    args = ["filter", str(path), "-m", "projection", "--params", params]
    assert main([*args, "--out", str(tmp_path / "o.csv")]) == 0
    told = [x for x in capsys.readouterr().err.splitlines() if "returns x unchanged" in x]
    assert len(told) == 1
    return told[0]


def test_filter_names_the_time_column_in_each_unit_it_may_be_in_with_its_own_unit_replaced(
    tmp_path, capsys
):
    # times 0, 10, 20 ... (milliseconds or nanoseconds, by their size): only the first of
    # "divide them by 1e3 or 1e9" was rewritten ("'t (ms)' or 1e9)"), and a column named
    # 'timestamp (s)' was told to become 'timestamp (s) (ms)'
    a, _ = _noisy(200)
    for name, want in (("t", "'t (ms)' or 't (ns)'"),
                       ("timestamp (s)", "'timestamp (ms)' or 'timestamp (ns)'"),
                       ("t_s", "'t (ms)' or 't (ns)'")):  # fmt: skip
        pd.DataFrame({name: 10 * np.arange(200), "a": a}).to_csv(tmp_path / "ms.csv", index=False)
        told = _told_unchanged(tmp_path / "ms.csv", tmp_path, capsys)
        assert told.endswith(f"(times in milliseconds or nanoseconds: name the unit in the "
                             f"column's name, {want})")  # fmt: skip


def test_filter_tells_a_column_of_dates_far_apart_for_tau_that_tau_is_likely_in_another_unit(
    tmp_path, capsys
):
    # dates are exact in seconds: renaming the column to 'time (ms)' cannot help
    a, _ = _noisy(200)
    times = pd.date_range("2026-01-01", periods=200, freq="10s").astype(str)
    pd.DataFrame({"time": times, "a": a}).to_csv(tmp_path / "dates.csv", index=False)
    told = _told_unchanged(tmp_path / "dates.csv", tmp_path, capsys)
    assert told.endswith("(the times are dates or durations, exact in seconds: tau is likely "
                         "in another unit)")  # fmt: skip
