"""``tssdpa compare ... --file PATH``: the comparison on the columns of a user's own file."""

import numpy as np
import pandas as pd
import pytest

from tssdpa.cli import main

N = 300


def _table(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = np.arange(N)
    a = np.sin(t / 10) + 0.1 * rng.standard_normal(N)
    return pd.DataFrame({
        "time": t * 0.01,
        "a": a,
        "b": np.cos(t / 7) + 0.05 * rng.standard_normal(N),
        "label": ["x"] * N,
        "a_noisy": a + 0.3 * rng.standard_normal(N),
    })  # fmt: skip


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "my run.csv"
    _table().to_csv(p, index=False)
    return p


def _run(path, task, out, *extra, methods=("noisy", "moving_average", "naive")):
    return main(["compare", task, "--file", str(path), "--out", str(out), "--seeds", "0",
                 "--quick", "--no-plots", "--no-progress", "--methods", *methods,
                 *extra])  # fmt: skip


def test_a_files_columns_are_compared_under_its_stem(data, tmp_path, capsys):
    assert _run(data, "all", tmp_path / "o", "--columns", "a", "b") == 0
    assert "my run" in capsys.readouterr().out  # the headline names it
    rows = pd.read_csv(tmp_path / "o" / "results.csv")
    assert set(rows["dataset"]) == {"my run"} and (rows["error"].isna()).all()
    assert set(rows["task"]) == {"denoise", "forecast"}
    assert {"gaussian@10dB", "impulsive@10dB", "multivariate"} <= set(rows["setting"])
    fc = rows[rows["task"] == "forecast"]  # horizons fitted to 60-row validation / test parts
    assert sorted(fc["horizon"].astype(int)) == [1, 2, 5, 10]
    assert rows["cell_settings"].str.contains(r"samples=300 split=180/240/300 .*data=sha256:").all()
    assert (tmp_path / "o" / "tables" / "denoise_my_run.md").exists()  # a safe file name


def test_a_files_split_is_chronological_editing_its_last_rows_changes_only_test_scores(
    data, tmp_path
):
    edited = _table()
    edited.loc[N - 20 :, ["a", "b"]] *= 3.0  # the last 20 rows: inside the test part (60)
    other = tmp_path / "edited" / data.name
    other.parent.mkdir()
    edited.to_csv(other, index=False)
    methods = ("moving_average", "naive", "autoreg")
    frames = []
    for i, path in enumerate((data, other)):
        assert _run(path, "all", tmp_path / f"o{i}", "--columns", "a", "b", methods=methods) == 0
        frames.append(pd.read_csv(tmp_path / f"o{i}" / "results.csv"))
    before, after = frames
    keys = ["task", "setting", "method", "horizon"]
    before, after = (f.set_index(keys).sort_index() for f in frames)
    # training statistics, the noise level, the chosen configuration and its validation
    # score do not see the test rows
    assert (before["params"] == after["params"]).all()
    for col in ("val_rmse", "val_mse"):
        np.testing.assert_allclose(after[col].dropna(), before[col].dropna(), rtol=1e-12)
    for col in ("rmse", "mse"):
        changed = ~np.isclose(after[col].dropna(), before[col].dropna(), rtol=1e-6)
        assert changed.all(), col


def test_a_recorded_pair_is_scored_against_its_clean_column_without_added_noise(data, tmp_path):
    out = tmp_path / "o"
    assert _run(data, "denoise", out, "--columns", "a_noisy", "--target", "a", "--seeds", "0",
                "1", methods=("noisy", "moving_average")) == 0  # fmt: skip
    rows = pd.read_csv(out / "results.csv")
    assert set(rows["setting"]) == {"recorded"}
    assert sorted(rows["method"]) == ["moving_average", "noisy"]  # the same data at seed 1
    df = _table()
    test = slice(240, N)
    clean, noisy = df["a"].to_numpy()[test], df["a_noisy"].to_numpy()[test]
    snr = 10 * np.log10(np.mean(clean**2) / np.mean((noisy - clean) ** 2))
    assert rows["snr_in_db"].iloc[0] == pytest.approx(snr, abs=0.5)  # the file's own noise
    assert (rows.loc[rows["method"] == "moving_average", "snr_gain_db"] > 0).all()


def test_missing_cells_of_the_clean_columns_are_counted_too(tmp_path, capsys):
    # a recorded pair with 2 missing noisy cells and 3 missing clean ones said "2 missing"
    df = _table()
    df.loc[[10, 200], "a_noisy"] = np.nan
    df.loc[[20, 210, 250], "a"] = np.nan
    path = tmp_path / "gaps.csv"
    df.to_csv(path, index=False)
    assert _run(path, "denoise", tmp_path / "o", "--columns", "a_noisy", "--target", "a") == 0
    err = capsys.readouterr().err
    assert "5 missing or infinite cell(s) (3 of them in --target columns)" in err


def test_a_resumed_run_never_mixes_in_rows_of_another_file_of_the_same_name(data, tmp_path, capsys):
    out = tmp_path / "o"
    assert _run(data, "forecast", out, "--horizons", "1") == 0
    n = len(pd.read_csv(out / "results.csv"))
    assert _run(data, "forecast", out, "--horizons", "1") == 0  # the same file: all done
    assert len(pd.read_csv(out / "results.csv")) == n
    capsys.readouterr()
    edited = _table()
    edited.loc[N - 1, "a"] = 7.0
    other = tmp_path / "elsewhere" / data.name
    other.parent.mkdir()
    edited.to_csv(other, index=False)
    assert _run(other, "forecast", out, "--horizons", "1") == 2
    err = capsys.readouterr().err
    assert "other settings" in err and "data=sha256:" in err and "Traceback" not in err
    assert len(pd.read_csv(out / "results.csv")) == n


def test_a_file_named_as_a_built_in_dataset_is_not_taken_for_it(tmp_path, capsys):
    # ar2.csv's rows were under "ar2": the tables counted them as the seeded synthetic
    # series', so naive (run once: the file is the same on every seed) was '1 seed(s)' next
    # to a learned method's 2 and left out of the headline; with --dataset ar2 they clashed
    from tssdpa.compare.tables import forecast_runs_once

    path = tmp_path / "ar2.csv"
    _table().to_csv(path, index=False)
    out = tmp_path / "o"
    assert _run(path, "forecast", out, "--horizons", "1", "--dataset", "ar2") == 0
    rows = pd.read_csv(out / "results.csv")
    assert set(rows["dataset"]) == {"ar2 (file)", "ar2"}
    assert forecast_runs_once("ar2 (file)", "classical")
    assert "ar2 (file)" in capsys.readouterr().out


def test_a_file_and_a_dataset_named_together_both_run(data, tmp_path):
    args = ["--dataset", "ar2", "--n", "300", "--horizons", "1", "2"]
    assert _run(data, "forecast", tmp_path / "o", *args, methods=("naive",)) == 0
    rows = pd.read_csv(tmp_path / "o" / "results.csv")
    assert set(rows["dataset"]) == {"my run", "ar2"}


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "task, extra, says",
    [
        ("forecast", ["--file", "{tmp}/absent.csv"], "--file: {tmp}/absent.csv: no such file"),
        ("forecast", ["--file", "{text}"], "no numeric column"),
        ("forecast", ["--file", "{short}"], "has 50 rows; a comparison needs at least 100"),
        ("forecast", ["--file", "{data}", "--horizons", "61"], "--horizons: 61 is longer than"),
        ("forecast", ["--file", "{data}", "--columns", "zz"], "--columns: ['zz'] not in the file"),
        ("denoise", ["--file", "{data}", "--columns", "label"], "--columns: column 'label' is not"),
        (
            "denoise",
            ["--file", "{data}", "--columns", "a_noisy", "--target", "a", "b"],
            "--target: give one column per compared column",
        ),  # fmt: skip
        ("forecast", ["--file", "{data}", "--target", "a"], "--target is for denoise"),
        ("forecast", ["--file", "{data}", "--n", "400"], "--n sets the length"),
        ("forecast", ["--columns", "a"], "--columns is for --file"),
        (
            "all",
            ["--file", "{late}"],
            "--file: column(s) ['b'] of {late} have no value in the "
            "training part (its first 180 rows)",
        ),  # fmt: skip
        (
            "denoise",
            ["--file", "{late}", "--columns", "a", "--target", "b"],
            "--target: column(s) ['b'] of {late} have no value",
        ),  # fmt: skip
    ],
)
def test_a_mistake_with_the_file_exits_2_in_one_line_and_writes_nothing(
    data, tmp_path, capsys, task, extra, says
):
    names = {
        "tmp": str(tmp_path),
        "data": str(data),
        "text": str(_write(tmp_path, "text.csv", "time,label\n1,x\n2,y\n")),
        "short": str(_write(tmp_path, "short.csv", "a\n" + "".join(f"{i}\n" for i in range(50)))),
        # b starts after the training part: its z-score was NaN everywhere, the run a KeyError
        "late": str(
            _write(
                tmp_path,
                "late.csv",
                "a,b\n"
                + "".join(
                    f"{np.sin(i / 9)},{np.cos(i / 7) if i >= 200 else ''}\n" for i in range(N)
                ),
            )
        ),
    }
    extra = [a.format(**names) for a in extra]
    out = tmp_path / "o"
    args = ["compare", task, *extra, "--methods", "noisy", "naive", "--out", str(out)]
    assert main([*args, "--no-progress", "--no-plots"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert says.format(**names) in err
    assert not out.exists()


def test_help_of_compare_explains_the_file_options(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("--file PATH", "--columns", "--time-column", "--target COLUMN", "stem",
                  "60/20/20 in time order"):  # fmt: skip
        assert words in text


def test_a_recorded_pair_gets_its_trace_plot_and_the_plots_folder_named_is_there(
    data, tmp_path, capsys
):
    # it printed 'plots: OUT/plots' and wrote no plot: traces were kept for gaussian@10dB only
    out = tmp_path / "o"
    args = ["compare", "denoise", "--file", str(data), "--columns", "a_noisy", "--target", "a"]
    args += ["--seeds", "0", "--methods", "noisy", "moving_average", "--no-progress"]
    assert main([*args, "--out", str(out)]) == 0
    assert f"plots: {out / 'plots'}" in capsys.readouterr().out
    assert (out / "plots" / "denoise_my_run_trace.png").is_file()


def test_two_files_of_one_name_are_refused_naming_both_before_anything_is_written(
    data, tmp_path, capsys
):
    # logs/a/run.csv and logs/b/run.csv are both 'run' in the tables: the run was refused
    # with "this run builds run univariate twice, with other settings ('samples=300 ...
    # data=sha256:...')", naming neither file, after commands.txt was written
    other = tmp_path / "elsewhere" / data.name
    other.parent.mkdir()
    _table(seed=1).to_csv(other, index=False)
    out = tmp_path / "o"
    assert _run(data, "forecast", out, "--file", str(other), "--horizons", "1") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"--file: {data} and {other} are both named 'my run'" in err
    assert not out.exists()
    assert _run(data, "forecast", out, "--file", str(data), "--horizons", "1") == 0  # one file


@pytest.mark.parametrize("order", ["newest first", "shuffled"])
def test_a_file_whose_rows_are_not_in_time_order_is_refused_naming_the_first_step_back(
    order, tmp_path, capsys
):
    # the split is 60/20/20 in row order: a log written newest first was trained on its
    # latest rows and tested on its earliest, with a note that spoke of "the filter" only
    table = _table()
    table = table.iloc[::-1] if order == "newest first" else table.sample(frac=1, random_state=0)
    path = tmp_path / "log.csv"
    table.to_csv(path, index=False)
    assert _run(path, "forecast", tmp_path / "o", "--columns", "a", "b") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tssdpa compare: --file {path}: the 60/20/20 split is in row order")
    assert "time column 'time' steps backwards at data row" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("rows", [N, 100])
def test_local_times_that_repeat_an_hour_at_the_end_of_daylight_saving_are_compared_with_a_note(
    rows, tmp_path, capsys
):
    # a logger writing local wall-clock times steps back an hour once a year, its rows in
    # order: the file was refused as out of time order, told to sort its rows (which would
    # interleave the two hours); at the fewest rows compared (100) one step back is over 1%
    table = _table().iloc[:rows]
    utc = pd.date_range("2026-10-25 00:00", periods=len(table), freq="min", tz="UTC")
    table["time"] = utc.tz_convert("Europe/Berlin").strftime("%Y-%m-%d %H:%M:%S")
    path = tmp_path / "log.csv"
    table.to_csv(path, index=False)
    assert _run(path, "forecast", tmp_path / "o", "--columns", "a", "b", "--horizons", "1") == 0
    err = capsys.readouterr().err
    assert "time column 'time' steps backwards at data row" in err
    assert "daylight saving" in err and "taken in file order" in err
    assert (tmp_path / "o" / "results.csv").exists()


def test_a_failed_cell_is_one_line_on_stderr_its_traceback_only_with_tssdpa_debug(
    tmp_path, capsys, monkeypatch
):
    # each failed cell printed its message and a 10-line traceback, once per noise setting
    table = _table()
    table.loc[10:, "a"] = np.nan  # the Wiener FIR has 10 training samples for its taps
    path = tmp_path / "log.csv"
    table.to_csv(path, index=False)
    args = ("--columns", "a", "b", "--budget", "1")
    assert _run(path, "denoise", tmp_path / "o", *args, methods=("wiener_fir",)) == 0
    err = capsys.readouterr().err
    failed = [line for line in err.splitlines() if line.startswith("[error]")]
    assert failed and "Traceback" not in err
    assert all(line.endswith("(TSSDPA_DEBUG=1 shows its traceback)") for line in failed)
    monkeypatch.setenv("TSSDPA_DEBUG", "1")
    assert _run(path, "denoise", tmp_path / "o", *args, methods=("wiener_fir",)) == 0
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_a_gap_in_the_time_column_is_noted_as_the_comparison_takes_the_rows(tmp_path, capsys):
    # the note said "the filter takes the rows as equally spaced": no filter is run by name
    table = _table()
    table.loc[150:, "time"] += 5.0  # 500 steps of 0.01 s missing: a dropout
    path = tmp_path / "log.csv"
    table.to_csv(path, index=False)
    assert _run(path, "forecast", tmp_path / "o", "--columns", "a", "b") == 0
    err = capsys.readouterr().err
    assert "1 gap(s) of 10 or more median steps" in err
    assert "the comparison takes the rows as equally spaced" in err and "the filter" not in err
