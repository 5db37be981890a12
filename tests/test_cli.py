"""The ``tssdpa`` command: filter round trip on a temporary CSV, compare, methods."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.signal import lfilter

from tssdpa.cli import main


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    t = np.arange(500)
    df = pd.DataFrame(
        {
            "time": t * 0.01,
            "a": np.sin(t / 20) + 0.3 * rng.standard_normal(500),
            "b": np.cos(t / 30),
            "label": ["x"] * 500,
        }
    )
    p = tmp_path / "in.csv"
    df.to_csv(p, index=False)
    return p, df


def test_python_dash_m_tssdpa_is_the_tssdpa_command():
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    r = subprocess.run([sys.executable, "-m", "tssdpa", "filter", "--help"],
                       capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: tssdpa filter")


def test_tssdpa_version_prints_the_package_version_and_exits_0():
    import tssdpa

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    r = subprocess.run([sys.executable, "-m", "tssdpa", "--version"],
                       capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"tssdpa {tssdpa.__version__}"


def test_filter_round_trip(csv, tmp_path):
    p, df = csv
    out = tmp_path / "out.csv"
    assert (
        main(
            [
                "filter",
                str(p),
                "--columns",
                "a",
                "--method",
                "butterworth_zp",
                "--params",
                '{"cutoff": 0.1}',
                "--out",
                str(out),
            ]
        )
        == 0
    )
    res = pd.read_csv(out)
    assert list(res.columns) == [*df.columns, "a_filtered"] and len(res) == 500
    for c in df.columns:  # the originals, the time column and the text column pass through
        np.testing.assert_array_equal(res[c], df[c])
    clean = np.sin(np.arange(500) / 20)
    assert np.mean((res["a_filtered"] - clean) ** 2) < np.mean((df["a"] - clean) ** 2)


def test_filter_inplace_and_suffix(csv, tmp_path):
    p, df = csv
    out = tmp_path / "out.csv"
    base = ["filter", str(p), "--columns", "a", "--method", "butterworth_zp", "--out", str(out)]
    assert main([*base, "--inplace"]) == 0
    res = pd.read_csv(out)
    assert list(res.columns) == list(df.columns) and not np.allclose(res["a"], df["a"])
    assert main([*base, "--suffix", "_smooth"]) == 0
    assert "a_smooth" in pd.read_csv(out).columns


def test_without_columns_the_time_column_is_copied_and_text_columns_are_skipped(
    csv, tmp_path, capsys
):
    p, df = csv
    out = tmp_path / "out.csv"
    assert main(["filter", str(p), "--method", "butterworth_zp", "--out", str(out)]) == 0
    res = pd.read_csv(out)
    assert {"a_filtered", "b_filtered"} <= set(res.columns)
    assert "time_filtered" not in res.columns
    np.testing.assert_array_equal(res["time"], df["time"])
    err = capsys.readouterr().err
    assert (
        "skipped column(s) of text or true / false values, with no finite value or with no name "
        "['label']"
        in err
        and "time column 'time'" in err
    )


def test_filter_forecast_mode(csv, tmp_path):
    p, _ = csv
    out = tmp_path / "fc.csv"
    assert (
        main(
            [
                "filter",
                str(p),
                "--columns",
                "a",
                "b",
                "--method",
                "autoreg",
                "--horizon",
                "2",
                "--fit-fraction",
                "0.5",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    res = pd.read_csv(out)
    assert {"a_forecast_h2", "b_forecast_h2"} <= set(res.columns)
    # fitted on the first 250 rows: forecasts from the last fitted row on, not before
    assert res["b_forecast_h2"].iloc[:249].isna().all()
    assert res["b_forecast_h2"].iloc[249:].notna().all()


def test_filter_errors(csv, capsys):
    p, _ = csv
    for args, message in (
        (["--method", "nope"], "--method: no denoise method 'nope'"),
        (["--columns", "zzz"], "--columns: ['zzz'] not in the file"),
        (["--params", "{bad"], "--params must be a JSON object"),
    ):
        assert main(["filter", str(p), *args]) == 2
        assert message in capsys.readouterr().err


def test_compare_command_is_resumable(tmp_path, capsys):
    args = [
        "compare",
        "denoise",
        "--dataset",
        "ar2",
        "--methods",
        "noisy",
        "butterworth",
        "median_zp",
        "--seeds",
        "0",
        "--n",
        "300",
        "--out",
        str(tmp_path),
        "--no-progress",
        "--no-plots",
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "Headline" in text and "butterworth" in text
    n = len(pd.read_csv(tmp_path / "results.csv"))
    assert n == 6 * 3  # six default noise settings x three methods
    assert (tmp_path / "tables" / "denoise_ar2.md").exists()
    assert main(args) == 0
    assert len(pd.read_csv(tmp_path / "results.csv")) == n
    capsys.readouterr()
    longer = [*args[: args.index("--n") + 1], "400", *args[args.index("--n") + 2 :]]
    assert main(longer) == 2  # other settings: a usage error, no traceback, nothing appended
    err = capsys.readouterr().err
    assert "other settings" in err and "Traceback" not in err
    assert len(pd.read_csv(tmp_path / "results.csv")) == n


def test_compare_with_no_plots_names_no_plots_folder(tmp_path, capsys):
    # it printed 'plots: OUT/plots', a folder it had not written
    args = ["compare", "denoise", "--dataset", "ar2", "--methods", "noisy", "--seeds", "0",
            "--n", "300", "--out", str(tmp_path), "--no-progress"]  # fmt: skip
    assert main([*args, "--no-plots"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert "plots: none (--no-plots)" in last and not (tmp_path / "plots").exists()
    assert main(args) == 0
    assert f"plots: {tmp_path / 'plots'}" in capsys.readouterr().out
    assert (tmp_path / "plots").is_dir()


def test_docs_name_every_command_that_filled_the_folder(tmp_path):
    out, docs = tmp_path / "run", tmp_path / "docs"
    base = ["compare", "denoise", "--dataset", "ar2", "--seeds", "0", "--n", "300"]
    base += ["--out", str(out), "--docs", str(docs), "--no-progress", "--no-plots"]
    first = base + ["--methods", "noisy"]
    second = base + ["--methods", "noisy", "butterworth"]
    readme = docs / "README.md"
    assert main(first) == 0
    assert readme.read_text().startswith(f"# Results: `tssdpa {' '.join(first)}`")
    assert main(first) == 0  # the same command again: still one
    assert readme.read_text().startswith(f"# Results: `tssdpa {' '.join(first)}`")
    assert main(second) == 0  # adds butterworth's rows: both commands, in order
    text = readme.read_text()
    assert f"1. `tssdpa {' '.join(first)}`" in text and f"2. `tssdpa {' '.join(second)}`" in text
    assert main(first) == 0  # adds nothing: not logged again
    assert readme.read_text() == text
    (out / "results.csv").unlink()  # a fresh folder: the log starts again
    assert main(second) == 0
    assert readme.read_text().startswith(f"# Results: `tssdpa {' '.join(second)}`")


def test_docs_list_the_tables_and_plots_of_their_run_not_others_in_the_folder(tmp_path):
    # a second run into the same --docs folder listed the first's forecast_ab.md and plots
    # under its own command as "generated by the command above", beside a results.csv
    # without their rows
    base = ["compare", "denoise", "--seeds", "0", "--n", "300", "--methods", "noisy",
            "--docs", str(tmp_path / "docs"), "--no-progress", "--no-plots"]  # fmt: skip
    assert main([*base, "--dataset", "ar2", "--out", str(tmp_path / "a")]) == 0
    assert main([*base, "--dataset", "sinusoids", "--out", str(tmp_path / "b")]) == 0
    text = (tmp_path / "docs" / "README.md").read_text()
    assert "denoise_sinusoids.md" in text and "denoise_sinusoids_trace.png" in text
    assert "ar2" not in text


def test_an_interrupted_compare_run_is_logged_with_its_rows(tmp_path, monkeypatch):
    import tssdpa.compare as compare

    out = tmp_path / "run"
    args = ["compare", "denoise", "--dataset", "ar2", "--seeds", "0", "--n", "300"]
    args += ["--methods", "noisy", "--out", str(out), "--no-progress", "--no-plots"]
    run_tasks = compare.run_tasks

    def interrupted(*a, **kw):
        run_tasks(*a, **kw)  # its rows reach results.csv, then the user presses Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(compare, "run_tasks", interrupted)
    assert main(args) == 130
    assert len(pd.read_csv(out / "results.csv")) > 0
    assert (out / "commands.txt").read_text() == " ".join(args) + "\n"


def test_methods_lists_both_tasks(capsys):
    assert main(["methods"]) == 0
    text = capsys.readouterr().out
    assert "denoise:" in text and "forecast:" in text and "kalman_level" in text


def test_compare_rejects_unknown_dataset(tmp_path, capsys):
    assert main(["compare", "denoise", "--dataset", "nope", "--out", str(tmp_path)]) == 2
    assert "dataset must be one of" in capsys.readouterr().err


def test_filter_defaults_to_the_fitted_projection_filter_and_reports_its_choice(
    csv, tmp_path, capsys
):
    p, df = csv
    out = tmp_path / "out.csv"
    assert main(["filter", str(p), "--columns", "a", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "projection_zp on ['a']: chose " in err and "window=" in err and "degree=" in err
    assert "outputs the weighted mean of the" in err  # a zero-phase fit averages its best
    clean = np.sin(np.arange(500) / 20)
    res = pd.read_csv(out)
    assert np.mean((res["a_filtered"] - clean) ** 2) < 0.5 * np.mean((df["a"] - clean) ** 2)


def test_filter_notes_a_column_whose_readings_are_held_between_samples(tmp_path, capsys):
    rng = np.random.default_rng(0)
    held = np.repeat(np.sin(np.arange(150) / 5) + 0.3 * rng.normal(size=150), 4)
    p = tmp_path / "held.csv"
    pd.DataFrame({"mag": held, "gyro": rng.normal(size=held.size)}).to_csv(p, index=False)
    quick = ["--params", '{"window": [16], "embedding": [1]}']  # the note does not depend on it
    assert main(["filter", str(p), "--out", str(tmp_path / "out.csv"), *quick]) == 0
    err = capsys.readouterr().err
    assert (
        "note: 'mag' repeats its previous value exactly at 75%" in err
        and "'gyro' repeats" not in err
    )


def test_filter_notes_the_spikes_of_a_column_with_impulsive_noise(tmp_path, capsys):
    from tssdpa.data import add_noise

    rng = np.random.default_rng(1)
    smooth = np.sin(np.arange(1500) / 25)
    spiky = add_noise(smooth, "impulsive", 10.0, seed=2)  # 2% of the samples hit by 10x
    p = tmp_path / "spiky.csv"
    pd.DataFrame({"gyro": spiky, "acc": smooth + 0.1 * rng.normal(size=1500)}).to_csv(
        p, index=False
    )
    quick = ["--params", '{"window": [16], "embedding": [1], "channel_independent": false}']
    assert main(["filter", str(p), "--out", str(tmp_path / "out.csv"), *quick]) == 0
    err = capsys.readouterr().err
    assert "note: 'gyro' has " in err and "% of its samples): impulsive noise" in err
    assert "'acc' has" not in err


def test_filter_says_which_columns_noise_has_heavy_tails(tmp_path, capsys):
    rng = np.random.default_rng(6)
    smooth = np.sin(np.arange(1500) / 25)
    p = tmp_path / "t.csv"
    pd.DataFrame({"gyro": smooth + 0.1 * rng.standard_t(3, 1500) / np.sqrt(3),
                  "acc": smooth + 0.1 * rng.normal(size=1500)}).to_csv(p, index=False)  # fmt: skip
    quick = ["--params", '{"window": [16], "embedding": [1], "channel_independent": false}']
    assert main(["filter", str(p), "--out", str(tmp_path / "out.csv"), *quick]) == 0
    assert "heavy-tailed noise in ['gyro']: its level counts the tails" in capsys.readouterr().err


def test_filter_reports_the_noise_level_sure_used_and_takes_a_known_one(csv, tmp_path, capsys):
    p, _ = csv
    out = tmp_path / "out.csv"
    quick = ["--params", '{"window": [16], "embedding": [1]}']  # the level does not depend on it
    assert main(["filter", str(p), "--columns", "a", "--out", str(out), *quick]) == 0
    said = re.search(r"SURE's noise level \(estimated\) ([0-9.]+)", capsys.readouterr().err)
    assert 0.25 < float(said[1]) < 0.4  # the truth: 0.3
    known = ["--params", '{"noise_level": 0.25, "window": [16], "embedding": [1]}']
    assert main(["filter", str(p), "--columns", "a", "--out", str(out), *known]) == 0
    assert "SURE's noise level (given) 0.25" in capsys.readouterr().err
    bad = ["--params", '{"noise_level": [0.1, 0.2]}']
    assert main(["filter", str(p), "--columns", "a", "--out", str(out), *bad]) == 2
    err = capsys.readouterr().err
    assert "noise_level gives 2 level(s) but x has 1 channel(s)" in err and "Traceback" not in err


def test_filter_reports_how_it_compares_columns_in_different_units(tmp_path, capsys):
    rng = np.random.default_rng(0)
    t = np.arange(600)
    gyro = 40 * np.sin(t / 15) + 4 * rng.normal(size=600)  # deg/s
    accel = 0.02 * np.cos(t / 25) + 0.002 * rng.normal(size=600)  # g
    p = tmp_path / "imu.csv"
    pd.DataFrame({"gyro": gyro, "accel": accel}).to_csv(p, index=False)
    # auto filters these apart; the reports, not the choices, are checked: one window and
    # embedding where auto is not needed
    quick = '"window": [16], "embedding": [1]'
    joint = ["--params", '{"channel_independent": false, ' + quick + "}"]
    assert main(["filter", str(p), *joint, "--out", str(tmp_path / "out.csv")]) == 0
    said = re.search(r"compares the channels divided by ([0-9.e+-]+), ([0-9.e+-]+) \(their "
                     r"standard deviations over the median", capsys.readouterr().err)  # fmt: skip
    assert said is not None and float(said[1]) / float(said[2]) > 1000  # about 28 / 0.014
    # auto (the quick search too) filters each column alone: no joint kernel to tell of
    alone = ["--params", "{" + quick + "}"]
    assert main(["filter", str(p), *alone, "--out", str(tmp_path / "out.csv")]) == 0
    err = capsys.readouterr().err
    assert "filters gyro, accel alone" in err and "compares the channels" not in err
    one = ["--columns", "gyro", "--params", "{" + quick + "}"]
    assert main(["filter", str(p), *one, "--out", str(tmp_path / "o.csv")]) == 0
    assert "compares the channels" not in capsys.readouterr().err  # one column: its own units


def test_filter_target_fits_against_a_clean_column(csv, tmp_path, capsys):
    p, df = csv
    df = df.assign(clean=np.sin(np.arange(500) / 20))
    df.to_csv(p, index=False)
    out = tmp_path / "out.csv"
    args = ["filter", str(p), "--columns", "a", "--target", "clean", "--out", str(out)]
    assert main(args) == 0
    assert "chose" in capsys.readouterr().err
    res = pd.read_csv(out)
    err = np.mean((res["a_filtered"] - df["clean"]) ** 2)
    assert err < np.mean((df["a"] - df["clean"]) ** 2)
    assert main(["filter", str(p), "--columns", "a", "--target", "nope"]) == 2
    assert "--target: not in" in capsys.readouterr().err
    assert main(["filter", str(p), "--columns", "a", "b", "--target", "clean"]) == 2
    assert "one column per filtered column" in capsys.readouterr().err


def test_filter_target_leaves_the_target_columns_out_of_the_filtered_ones(tmp_path, capsys):
    rng = np.random.default_rng(0)
    clean = np.sin(np.arange(400) / 20)
    p, out = tmp_path / "in.csv", tmp_path / "out.csv"
    noisy = clean + 0.3 * rng.normal(size=400)
    flag = np.arange(400) % 2 == 0
    pd.DataFrame({"time": np.arange(400), "noisy": noisy, "clean": clean, "flag": flag}).to_csv(
        p, index=False
    )
    # the obvious command: it was "give one column per filtered column (2: [noisy, clean])"
    assert main(["filter", str(p), "--target", "clean", "--out", str(out)]) == 0
    written = pd.read_csv(out)
    assert "noisy_filtered" in written and "clean_filtered" not in written
    assert "flag_filtered" not in written  # true / false flags are skipped, not filtered
    capsys.readouterr()
    # a column fitted against itself (the advice followed) is refused
    assert main(["filter", str(p), "--columns", "noisy", "clean", "--target", "noisy",
                 "clean"]) == 2  # fmt: skip
    assert "given as --target too" in capsys.readouterr().err


def test_filter_reports_a_local_adaptation_on_a_busy_then_quiet_recording(tmp_path, capsys):
    rng = np.random.default_rng(0)
    t = np.arange(1600)
    busy = lfilter([1.0], [1, -1.8, 0.85], rng.normal(size=t.size))  # irregular motion
    clean = np.where(t < 800, 2 * busy / busy.std(), 0.1 * np.sin(2 * np.pi * t / 400))
    p = tmp_path / "imu.csv"
    pd.DataFrame({"gyro": clean + 0.5 * rng.normal(size=t.size)}).to_csv(p, index=False)
    assert main(["filter", str(p), "--out", str(tmp_path / "out.csv")]) == 0
    assert "mixes in zero-phase low-passes where SURE over 101 samples" in capsys.readouterr().err


def test_filter_forecasting_reports_the_online_switch_on_a_series_that_changed_regime(
    tmp_path, capsys
):
    rng = np.random.default_rng(16)
    y = np.sin(np.arange(1200) * 0.13) ** 3 + 0.05 * rng.standard_normal(1200)
    y[630:840] *= 0.3  # the last quarter of the fitted 70% is quiet
    p = tmp_path / "gyro.csv"
    pd.DataFrame({"gyro": y}).to_csv(p, index=False)
    out = tmp_path / "out.csv"
    assert main(["filter", str(p), "--horizon", "2", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "the forecasts switch online" in err and "h=1,2" in err
    assert np.isfinite(pd.read_csv(out)["gyro_forecast_h2"].to_numpy()[900:-2]).all()


def test_filter_with_tau_says_the_unit_it_read_from_the_time_columns_name(tmp_path, capsys):
    # t_ns's numbers are nanoseconds for tau (in seconds) since f4498a6: a tau given in the
    # column's unit, as it was taken before, smoothed 1e9 times as long, and the summary said
    # only "used as the sample times (tau)"
    x = np.sin(np.arange(300) / 10) + 0.1 * np.random.default_rng(1).normal(size=300)
    for name, said in (("t_ns", "x 1e-09 s, by its name"), ("time", None)):
        p = tmp_path / f"{name}.csv"
        pd.DataFrame({name: np.arange(300) * 10_000_000, "a": x}).to_csv(p, index=False)
        args = ["filter", str(p), "--method", "projection", "--params", '{"tau": 0.05}']
        assert main([*args, "--out", str(tmp_path / "out.csv")]) == 0
        err = capsys.readouterr().err
        assert "used as the sample times (tau" in err
        assert (said in err) if said else "by its name" not in err


def test_filter_with_tau_takes_the_time_column_as_the_sample_times(tmp_path, capsys):
    rng = np.random.default_rng(1)
    x = np.sin(np.arange(300) / 10) + 0.1 * rng.normal(size=300)
    outs = []
    for name, t in (("even", np.arange(300.0)), ("uneven", np.cumsum(rng.uniform(0.2, 3, 300)))):
        p, out = tmp_path / f"{name}.csv", tmp_path / f"{name}_out.csv"
        pd.DataFrame({"time": t, "a": x}).to_csv(p, index=False)
        args = ["filter", str(p), "--method", "projection", "--params", '{"tau": 5.0}']
        assert main([*args, "--out", str(out)]) == 0
        assert "used as the sample times (tau)" in capsys.readouterr().err
        outs.append(pd.read_csv(out)["a_filtered"].to_numpy())
    assert np.isfinite(outs[0]).all() and not np.allclose(outs[0], outs[1])  # the times count


def test_compare_all_with_methods_of_one_task_runs_that_task(tmp_path):
    # refused ("none of ... is a forecast method") once the task check came in
    out = tmp_path / "cmp"
    args = ["compare", "all", "--methods", "noisy", "moving_average", "--seeds", "0"]
    assert main([*args, "--out", str(out), "--no-plots", "--no-progress"]) == 0
    assert set(pd.read_csv(out / "results.csv")["task"]) == {"denoise"}


_RUN = ["compare", "forecast", "-d", "ar2", "--n", "300", "--seeds", "0", "--horizons", "1"]
_RUN += ["--methods", "naive", "--no-progress", "--no-plots"]


@pytest.mark.parametrize(
    "content, says",
    [
        ("a,b\n1,2\n", "lacks the column(s)"),  # a foreign CSV: was KeyError 'task'
        ("task,dataset,setting,method\nforecast,ar2,univariate,naive\n", "['seed']"),
        ("task,dataset,setting,seed,method\nforecast,ar2,univariate,zero,naive\n", "'zero'"),
        (b"\x89PNG\r\n\x1a\n\x00\xe0\xff\xfe" * 8, "UnicodeDecodeError"),
        (None, "IsADirectoryError"),  # results.csv a folder
    ],
)
def test_a_corrupted_results_csv_is_a_usage_error_before_anything_is_written(
    tmp_path, capsys, content, says
):
    f = tmp_path / "results.csv"
    if content is None:
        f.mkdir()
    else:
        f.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main([*_RUN, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(f) in err and says in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv"]  # no commands.txt


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--out", "{tmp}/afile/sub"], "--out: "),  # was NotADirectoryError, exit 1
        (["--out", "{tmp}/o", "--docs", "{tmp}/o/"], "--docs: the --out folder"),  # SameFileError
        (["--n", "2"], "--n 2: split boundaries"),
        (["--n", "1"], "--n 1: n must be"),
        (["-d", "bogus"], "--dataset must be one of"),
        # ignored before: --features S on a dataset without M / S variants ran its M table
        (["-d", "imu_fusion", "--features", "S"], "--features: only the ETT datasets"),
        (["--features", "M"], "--features: only the ETT datasets"),
    ],
)
def test_a_compare_usage_error_names_its_option_and_runs_nothing(tmp_path, capsys, extra, says):
    (tmp_path / "afile").write_text("x")
    extra = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    out = [] if "--out" in extra else ["--out", str(tmp_path / "run")]
    assert main([*_RUN, *out, *extra]) == 2
    assert says in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_a_dataset_named_next_to_the_default_gets_its_own_budget(tmp_path):
    # the default's budget (4) was applied to every dataset named with it
    args = ["compare", "forecast", "--dataset", "default", "-d", "chirp", "--seeds", "0"]
    args += ["--horizons", "1", "--methods", "naive", "--no-progress", "--no-plots"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    rows = pd.read_csv(tmp_path / "results.csv")
    budget = rows.set_index("dataset")["cell_settings"].str.extract(r"budget=(\d+)")[0]
    assert budget.to_dict() == {"lorenz": "4", "mackey_glass": "4", "ar2": "4", "sunspots": "4",
                                "chirp": "8"}  # fmt: skip
    alone = [a for a in args if a not in ("--dataset", "default")]  # was refused: other settings
    assert main([*alone, "--out", str(tmp_path)]) == 0
    assert len(pd.read_csv(tmp_path / "results.csv")) == len(rows)


def test_filter_notes_repeated_times_steps_backwards_and_gaps_in_the_time_column(tmp_path, capsys):
    # the rows were filtered as equally spaced without a word about a time column that
    # repeats, goes back (logs concatenated out of order) or skips (a logger's dropouts)
    t = np.arange(200) * 0.01
    t[50] = t[49]  # a repeated time
    t[120:] -= 0.3  # a step backwards
    t[150:] += 0.5  # a dropout of 50 steps
    gyro = np.sin(np.arange(200) / 9.0)
    pd.DataFrame({"time": t, "gyro": gyro}).to_csv(tmp_path / "log.csv", index=False)
    args = ["filter", str(tmp_path / "log.csv"), "--method", "moving_average"]
    assert main([*args, "--out", str(tmp_path / "out.csv")]) == 0
    err = capsys.readouterr().err
    assert ("time column 'time' has 1 repeated time(s), 1 step(s) backwards, 1 gap(s) of 10 or "
            "more median steps (the longest 51): the filter takes the rows as equally "
            "spaced") in err  # fmt: skip
    pd.DataFrame({"time": np.arange(200) * 0.01, "gyro": gyro}).to_csv(
        tmp_path / "log.csv", index=False
    )
    assert main([*args, "--out", str(tmp_path / "out.csv")]) == 0
    assert "equally spaced" not in capsys.readouterr().err  # a jitter-free clock: nothing


def test_a_time_step_below_min_step_is_named_by_the_time_column_and_its_row(tmp_path, capsys):
    # it said "projection: timestamps has a step smaller than min_step=0.002": no option or
    # column of the user's is called timestamps, and the row was left to find
    t = np.arange(300) * 0.0025
    t[100] = t[99]  # a logger's repeated timestamp
    gyro = np.sin(np.arange(300) / 9.0)
    pd.DataFrame({"Time (s)": t, "gyro": gyro}).to_csv(tmp_path / "log.csv", index=False)
    params = '{"tau": 0.02, "window": null, "min_step": 0.002}'
    args = ["filter", str(tmp_path / "log.csv"), "--method", "projection", "--params", params]
    assert main([*args, "--out", str(tmp_path / "out.csv")]) == 2
    assert capsys.readouterr().err.strip() == (
        "tssdpa filter: projection: time column 'Time (s)' has a step smaller than "
        "min_step=0.002, first at data row 101 (0 s after data row 100); give a smaller "
        "min_step, or a window"
    )


def test_a_csv_filtered_into_parquet_keeps_its_numbers_as_numbers(tmp_path):
    # every column copied from the CSV was written as text (the cells as read, for a CSV
    # output): a Parquet reader got strings for the time and the sensor columns
    t = np.arange(300) * 0.01
    df = pd.DataFrame({"time": t, "gyro": np.sin(t * 7), "label": ["still"] * 300})
    df.to_csv(tmp_path / "log.csv", index=False)
    for extra in ([], ["--inplace"]):
        out = tmp_path / "out.parquet"
        args = ["filter", str(tmp_path / "log.csv"), "--method", "moving_average", *extra]
        assert main([*args, "--out", str(out)]) == 0
        back = pd.read_parquet(out)
        assert back["time"].dtype == np.float64 and back["gyro"].dtype == np.float64
        np.testing.assert_array_equal(back["time"], t)
        assert back["label"].tolist() == ["still"] * 300
        filtered = back["gyro"] if extra else back["gyro_filtered"]
        assert filtered.dtype == np.float64 and not np.allclose(filtered, df["gyro"])


def test_horizon_with_the_zero_phase_filter_named_is_refused_not_swapped_for_a_forecaster(
    tmp_path, capsys
):
    # '--horizon 3 --method projection_zp' ran the projection forecaster without a word;
    # without --method the forecaster is still the default
    t = np.arange(300) * 0.01
    pd.DataFrame({"time": t, "gyro": np.sin(t * 7)}).to_csv(tmp_path / "log.csv", index=False)
    args = ["filter", str(tmp_path / "log.csv"), "--horizon", "3", "--out", str(tmp_path / "o.csv")]
    assert main([*args, "--method", "projection_zp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tssdpa filter: --method projection_zp is a zero-phase filter")
    assert not (tmp_path / "o.csv").exists()
    assert main(args) == 0
    assert "projection on ['gyro'] -> ['gyro_forecast_h3']" in capsys.readouterr().err


def test_inplace_with_horizon_is_refused_not_ignored(tmp_path, capsys):
    # the forecasts went to gyro_forecast_h3 as without --inplace, exit code 0
    t = np.arange(300) * 0.01
    pd.DataFrame({"time": t, "gyro": np.sin(t * 7)}).to_csv(tmp_path / "log.csv", index=False)
    args = ["filter", str(tmp_path / "log.csv"), "--horizon", "3", "--inplace",
            "--out", str(tmp_path / "o.csv")]  # fmt: skip
    assert main(args) == 2
    assert capsys.readouterr().err == (
        "tssdpa filter: --inplace: forecasts go to new columns <col>_forecast_h3, never over "
        "the series; drop --inplace\n"
    )
    assert not (tmp_path / "o.csv").exists()


def test_suffix_with_horizon_is_refused_not_ignored(tmp_path, capsys):
    # the forecasts went to gyro_forecast_h3 whatever --suffix said, exit code 0
    t = np.arange(300) * 0.01
    pd.DataFrame({"time": t, "gyro": np.sin(t * 7)}).to_csv(tmp_path / "log.csv", index=False)
    args = ["filter", str(tmp_path / "log.csv"), "--horizon", "3", "--out", str(tmp_path / "o.csv")]
    assert main([*args, "--suffix", "_smooth"]) == 2
    assert capsys.readouterr().err == (
        "tssdpa filter: --suffix: forecasts go to new columns <col>_forecast_h3; drop --suffix\n"
    )
    assert not (tmp_path / "o.csv").exists()
    assert main(args) == 0  # without it, as before


def test_in_sample_without_horizon_is_refused_not_ignored(tmp_path, capsys):
    t = np.arange(300) * 0.01
    pd.DataFrame({"time": t, "gyro": np.sin(t * 7)}).to_csv(tmp_path / "log.csv", index=False)
    args = ["filter", str(tmp_path / "log.csv"), "--in-sample", "--out", str(tmp_path / "o.csv")]
    assert main(args) == 2
    assert capsys.readouterr().err.startswith("tssdpa filter: --in-sample is for forecasting")
    assert not (tmp_path / "o.csv").exists()


def test_an_input_swallowed_by_columns_is_explained(tmp_path, capsys):
    # 'tssdpa filter --columns gyro log.csv' said only "the following arguments are
    # required: input": --columns had taken log.csv as a second column name
    t = np.arange(300) * 0.01
    pd.DataFrame({"time": t, "gyro": np.sin(t * 7)}).to_csv(tmp_path / "log.csv", index=False)
    with pytest.raises(SystemExit) as exit_:
        main(["filter", "--columns", "gyro", str(tmp_path / "log.csv")])
    assert exit_.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "required: input (an input given after --columns or --target is read as" in last
    assert "give the input first, as in tssdpa filter log.csv --columns a b)" in last


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--method", "autoreg"], "--method: autoreg is a forecaster: give --horizon H"),
        (["--method", "butterworth", "--horizon", "2"], "--method: butterworth is a denoiser"),
        (["--method", "autoreg", "--out-dir", "."], "--method: autoreg is a forecaster"),
    ],
)
def test_a_method_of_the_other_task_is_named_as_such_not_as_unknown(csv, capsys, args, says):
    """`tssdpa methods` lists autoreg, so 'no denoise method' sent the user to a list that
    holds it; the message says what it is and which option runs it."""
    p, _ = csv
    assert main(["filter", str(p), *args]) == 2
    err = capsys.readouterr().err
    assert says in err and "no denoise method" not in err and "no forecast method" not in err


@pytest.mark.parametrize("flag", [["--horizons", "2"], ["--features", "S"]])
def test_compare_denoise_refuses_the_forecasting_options_it_would_ignore(tmp_path, capsys, flag):
    args = ["compare", "denoise", "-d", "ETTh1", "--no-progress", "--out", str(tmp_path / "o")]
    assert main([*args, *flag]) == 2
    assert f"{flag[0]} is for forecasting" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("flag", [["--horizons", "2"], ["--features", "S"]])
def test_compare_all_with_denoise_methods_only_names_the_methods_not_compare_denoise(
    tmp_path, capsys, flag
):
    # compare all whose --methods are all denoisers runs no forecast: the refusal said
    # "compare denoise takes none", a command the user did not type
    args = ["compare", "all", "-d", "ETTh1", "--methods", "moving_average", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "o"), *flag]) == 2
    err = capsys.readouterr().err
    assert f"{flag[0]} is for forecasting" in err and "compare denoise" not in err
    assert "--methods" in err and "moving_average" in err
    assert not (tmp_path / "o").exists()


def _documented_compare_commands():
    """Every ``tssdpa compare ...`` of README.md and docs/*.md: inline code (which may wrap
    over lines) and lines of code blocks; a synopsis with alternatives (``a|b``) is no
    command."""
    import shlex

    root = Path(__file__).resolve().parents[1]
    found = []
    for f in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = f.read_text(encoding="utf-8")
        spans = []
        for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
            spans += block.replace("\\\n", " ").splitlines()
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        spans += [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", prose)]
        for s in spans:
            if "tssdpa compare" in s and "|" not in s:
                cmd = s[s.index("tssdpa compare") :].split(" #")[0]
                found.append((f.name, shlex.split(cmd)[1:]))
    return found


def test_every_compare_command_in_the_docs_parses():
    from tssdpa.cli import build_parser

    commands = _documented_compare_commands()
    assert len(commands) >= 5  # README's --file example, docs/results.md's runs...
    parser = build_parser()
    for name, argv in commands:
        try:
            parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"{name}: tssdpa {' '.join(argv)} does not parse")


def test_a_command_that_reran_a_failed_cell_is_logged_with_its_rows(tmp_path, fails_once):
    # the rows of a retried cell replace its error rows, so the row count stays: the
    # command that scored them was taken for one that added nothing and left out of the log
    from tssdpa.compare import MethodSpec, register
    from tssdpa.compare.registry import _REGISTRY

    out = tmp_path / "run"
    base = ["compare", "denoise", "--dataset", "ar2", "--seeds", "0", "--n", "300"]
    base += ["--out", str(out), "--no-progress", "--no-plots"]
    first, second = base + ["--methods", "fails_once_test"], base + ["--budget", "8"]
    register(MethodSpec("fails_once_test", "denoise", fails_once), overwrite=True)
    try:
        assert main(first) == 0
        assert "transient" in pd.read_csv(out / "results.csv")["error"].iloc[0]
        assert main(second + ["--methods", "fails_once_test"]) == 0  # retries it
    finally:
        _REGISTRY.pop(("denoise", "fails_once_test"), None)
    assert pd.read_csv(out / "results.csv")["error"].isna().all()
    logged = (out / "commands.txt").read_text().splitlines()
    assert len(logged) == 2 and logged[1].endswith("--methods fails_once_test")


def test_a_run_refused_before_any_cell_leaves_no_new_folder(tmp_path, capsys):
    # --dataset default --dataset ar2 builds ar2 twice with other settings: refused, exit 2,
    # but the --out folder it named was left behind holding a commands.txt of that command
    out = tmp_path / "run"
    args = ["compare", "forecast", "--dataset", "default", "--dataset", "ar2", "--methods",
            "naive", "--out", str(out), "--no-progress", "--no-plots"]  # fmt: skip
    assert main(args) == 2
    assert "builds ar2 univariate twice" in capsys.readouterr().err
    assert not out.exists()
