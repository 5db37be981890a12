"""The runner: resumable results.csv, failures recorded, tables and plots from a run."""

import numpy as np
import pandas as pd
import pytest

from tssdpa.compare import MethodSpec, register, run_tasks
from tssdpa.compare.plots import write_plots
from tssdpa.compare.registry import _REGISTRY
from tssdpa.compare.tables import markdown_tables, overview, write_tables
from tssdpa.data.tasks import denoise_tasks, forecast_tasks


def test_run_tasks_resumable_tables_and_plots(tmp_path):
    tasks = denoise_tasks("ar2", seeds=(0, 1), settings=[("gaussian", 10.0)], n=300)
    tasks += forecast_tasks("ar2", seeds=(0,), n=300, horizons=(1, 2), lookback=8)
    methods = ["noisy", "butterworth", "savgol_zp", "naive", "autoreg", "dlinear"]
    res = run_tasks(tasks, methods=methods, out=tmp_path, progress=False)
    assert set(res.frame["method"]) == set(methods)
    n_rows = len(pd.read_csv(tmp_path / "results.csv"))
    assert n_rows == 2 * 3 + 3 * 2
    # second run: nothing recomputed
    res2 = run_tasks(tasks, methods=methods, out=tmp_path, progress=False)
    assert len(pd.read_csv(tmp_path / "results.csv")) == n_rows
    assert len(res2.frame) == n_rows
    md = markdown_tables(res2.frame, "denoise")
    assert "SNR improvement" in md and "**" in md and "± " in md
    assert "ar2 (univariate): forecasting" in markdown_tables(res2.frame, "forecast")
    assert res2.summary() == md + "\n\n" + markdown_tables(res2.frame, "forecast")
    files = write_tables(res2.frame, tmp_path / "tables")
    assert any(p.name == "denoise_ar2.md" for p in files)
    pngs = write_plots(tmp_path, res2.frame, tmp_path / "plots")
    names = {p.name for p in pngs}
    assert {
        "denoise_ar2_trace.png",
        "forecast_ar2_univariate_error.png",
        "forecast_ar2_univariate_paths.png",
    } <= names
    assert all(p.stat().st_size > 1000 for p in pngs)
    ov = overview(res2.frame)
    assert {"dataset", "best classical", "winner"} <= set(ov.columns)
    assert "params" in res2.chosen_params("forecast")
    assert len(res2.aggregate("denoise")) == 3  # one row per method, mean over two seeds


def test_a_resume_with_other_settings_is_refused_not_mixed_into_the_tables(tmp_path):
    """Rows of another --n or other horizons are not taken for this run's cells (they were
    skipped as done, and the new horizons never computed); other methods with other settings
    share the folder (docs/results/ett fills one folder in steps), and a file written before
    the settings were stored is resumed as it is."""
    den = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=300)
    run_tasks(den + den, methods=["noisy"], out=tmp_path, progress=False)  # named twice: once
    rows = pd.read_csv(tmp_path / "results.csv")
    assert rows["cell_settings"].str.contains("samples=300").all()
    longer = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=400)
    with pytest.raises(ValueError, match=r"out: .*results.csv holds rows .* for 1 of .*=300"):
        run_tasks(longer, methods=["noisy"], out=tmp_path, progress=False)
    other_seed = denoise_tasks("ar2", seeds=(1,), settings=[("gaussian", 10.0)], n=400)
    with pytest.raises(ValueError, match="samples=300"):  # else averaged over the seeds
        run_tasks(other_seed, methods=["noisy"], out=tmp_path, progress=False)
    with pytest.raises(ValueError, match="builds ar2 gaussian@10dB twice"):  # in one run
        run_tasks(den + other_seed, methods=["butterworth"], out=tmp_path, progress=False)
    # another method on another series (n=400) was let in: one table set it beside noisy's
    # scores on n=300; refused now (this line pinned that it ran). On the same series it runs
    with pytest.raises(ValueError, match="holds rows of ar2 gaussian@10dB scored on another"):
        run_tasks(longer, methods=["butterworth"], out=tmp_path, progress=False)
    run_tasks(den, methods=["butterworth"], out=tmp_path, progress=False)  # another method
    fc = forecast_tasks("ar2", seeds=(0,), n=300, horizons=(1,), lookback=8)
    run_tasks(fc, methods=["naive"], out=tmp_path, progress=False)
    more = forecast_tasks("ar2", seeds=(0,), n=300, horizons=(1, 2), lookback=8)
    with pytest.raises(ValueError, match="stored '.*horizons=1 lookback"):
        run_tasks(more, methods=["naive"], out=tmp_path, progress=False)
    run_tasks(more, methods=["autoreg"], out=tmp_path, progress=False)
    turned = forecast_tasks("ar2", seeds=(0,), n=300, horizons=(2, 1), lookback=8)
    run_tasks(turned, methods=["autoreg"], out=tmp_path, progress=False)  # the same cells
    for cap in (None, 10_000):  # a cap above the 59 origins caps nothing: the same cells
        capped = forecast_tasks("ar2", seeds=(0,), n=300, horizons=(1, 2), lookback=8,
                                max_origins=cap)  # fmt: skip
        run_tasks(capped, methods=["arima"], out=tmp_path, progress=False)
    assert len(pd.read_csv(tmp_path / "results.csv")) == 7  # nothing appended by a refusal
    old = pd.read_csv(tmp_path / "results.csv").drop(columns="cell_settings")
    old.to_csv(tmp_path / "results.csv", index=False)
    res = run_tasks(longer, methods=["noisy"], out=tmp_path, progress=False)
    assert len(res.frame) == 7  # reused: nothing says what made those rows


def test_run_tasks_rejects_unknown_method_names():
    tasks = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=200)
    with pytest.raises(ValueError, match="unknown name.*nope"):
        run_tasks(tasks, methods=["noisy", "nope"], progress=False)


class _Broken:
    causal = True

    def fit(self, x, target=None):
        raise RuntimeError("boom")


def test_failing_method_is_recorded_not_fatal(tmp_path):
    register(MethodSpec("broken_test", "denoise", _Broken), overwrite=True)
    tasks = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=200)
    logged = []
    try:
        res = run_tasks(
            tasks, methods=["broken_test", "noisy"], out=tmp_path, progress=False, log=logged.append
        )
    finally:
        _REGISTRY.pop(("denoise", "broken_test"), None)
    err = res.frame.set_index("method").loc["broken_test", "error"]
    assert "boom" in err and any("boom" in m for m in logged)
    assert "boom" in markdown_tables(res.frame, "denoise")
    assert np.isfinite(res.frame.set_index("method").loc["noisy", "rmse"])


@pytest.mark.parametrize("debug", [False, True])
def test_a_failed_cell_is_logged_in_one_line_its_traceback_only_with_tssdpa_debug(
    monkeypatch, debug
):
    # the harness logged each failed cell's traceback and the command line cut it off again
    register(MethodSpec("broken_test", "denoise", _Broken), overwrite=True)
    tasks = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=200)
    if debug:
        monkeypatch.setenv("TSSDPA_DEBUG", "1")
    else:
        monkeypatch.delenv("TSSDPA_DEBUG", raising=False)
    logged = []
    try:
        run_tasks(tasks, methods=["broken_test"], progress=False, log=logged.append)
    finally:
        _REGISTRY.pop(("denoise", "broken_test"), None)
    (message,) = logged
    head = "[error] ar2 gaussian@10dB broken_test: RuntimeError: boom"
    if debug:
        assert message.startswith(head + "\nTraceback (most recent call last):")
        assert not message.endswith("\n")
    else:
        assert message == head + " (TSSDPA_DEBUG=1 shows its traceback)"


def test_a_callers_own_seeded_forecast_series_is_forecast_on_every_seed():
    # the harness ran a classical forecaster on the first seed only of any dataset not named
    # like a synthetic one: three series of a caller's own (seeded_data=True, the default)
    # gave one naive row, shown as the mean over three seeds; a series the same on every
    # seed (seeded_data=False, as forecast_tasks sets for the recordings) still runs once
    from tssdpa.data import Split
    from tssdpa.data.tasks import ForecastTask

    def task(seed, seeded):
        y = np.cumsum(np.random.default_rng(seed if seeded else 0).standard_normal((300, 1)), 0)
        return ForecastTask("mine", y, Split(180, 240, 300, context=8), (1,), 8, seed,
                            seeded_data=seeded)  # fmt: skip

    for seeded, runs in ((True, [0, 1, 2]), (False, [0])):
        res = run_tasks([task(s, seeded) for s in range(3)], methods=["naive"], progress=False)
        assert sorted(res.frame["seed"]) == runs
        assert res.aggregate("forecast")["n_seeds"].tolist() == [len(runs)]


def test_a_dataset_named_by_its_path_is_scored_and_its_files_are_written(tmp_path):
    # a caller's own series named "logs/run1.csv": saving its trace into traces/logs/ (no such
    # folder) failed every method after it was scored, and write_tables raised
    from tssdpa.data import Split
    from tssdpa.data.tasks import DenoiseTask, ForecastTask

    c = np.sin(np.arange(300) / 6.0)[:, None]
    noisy = c + 0.3 * np.random.default_rng(0).standard_normal(c.shape)
    name = "logs/run1.csv"
    tasks = [DenoiseTask(name, c, noisy, Split(180, 240, 300), "gaussian", 10.0, 0),
             ForecastTask(name, c, Split(180, 240, 300, context=8), (1, 2), 8, 0)]  # fmt: skip
    res = run_tasks(tasks, methods=["moving_average", "naive"], out=tmp_path, progress=False)
    assert (res.frame["error"] == "").all() and res.frame["mse"].notna().sum() == 2
    written = {p.name for p in write_tables(res.frame, tmp_path / "tables")}
    assert {"denoise_logs_run1.csv.md", "forecast_logs_run1.csv.md"} <= written
    pngs = {p.name for p in write_plots(tmp_path, res.frame, tmp_path / "plots")}
    assert {
        "denoise_logs_run1.csv_trace.png",
        "forecast_logs_run1.csv_univariate_paths.png",
    } <= pngs


def test_the_tables_count_seeds_by_what_the_harness_ran_not_by_the_datasets_name(tmp_path):
    # the tables took every dataset not named like a synthetic one for seed-independent and
    # counted a deterministic method's one row as a run on every seed: a caller's own seeded
    # series, naive run on seed 0 alone (an earlier, shorter run into the folder), stood as
    # complete beside autoreg's three seeds -- no "1 seed(s)", its one seed paired with each
    # of autoreg's in the headline. The harness records what it ran; the tables read that.
    from tssdpa.compare.tables import markdown_tables, overview
    from tssdpa.data import Split
    from tssdpa.data.tasks import ForecastTask

    def task(seed):
        y = np.cumsum(np.random.default_rng(seed).standard_normal((300, 1)), 0)
        return ForecastTask("mine", y, Split(180, 240, 300, context=8), (1,), 8, seed)

    run_tasks([task(0)], methods=["naive"], out=tmp_path, progress=False)
    res = run_tasks([task(s) for s in range(3)], methods=["autoreg"], out=tmp_path,
                    progress=False)  # fmt: skip
    naive = next(line for line in markdown_tables(res.frame, "forecast").splitlines()
                 if line.startswith("| naive"))  # fmt: skip
    assert "1 seed(s)" in naive and "**" not in naive
    assert overview(res.frame).iloc[0]["best classical"] == "autoreg"


@pytest.mark.parametrize("cut", ["after its method", "inside its params"])
def test_a_run_killed_while_writing_a_row_resumes_to_what_an_uninterrupted_run_gives(tmp_path, cut):
    # a run killed while appending a cell's rows left a half-written last row: cut inside a
    # quoted field it made results.csv unreadable (every resume refused); cut elsewhere it
    # was read with NaN scores and its cell counted as done, h=2 of autoreg never scored,
    # and the next row was appended onto the half line. The half row is dropped (with a
    # note), with the rows its cell wrote before it, and the cell runs again
    from tssdpa.data import Split
    from tssdpa.data.tasks import ForecastTask

    y = np.cumsum(np.random.default_rng(0).standard_normal((300, 1)), 0)
    task = ForecastTask("mine", y, Split(180, 240, 300, context=8), (1, 2), 8, 0)
    whole = run_tasks([task], methods=["naive", "autoreg"], out=tmp_path / "a", progress=False)
    text = (tmp_path / "a" / "results.csv").read_text()
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    assert last.startswith("forecast,mine,univariate,2,step,0,autoreg,")
    at = (
        len(text.rstrip("\n"))
        - len(last)
        + (last.index(",autoreg,") + 8 if cut == "after its method" else last.index('""lags') + 3)
    )
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "results.csv").write_text(text[:at])
    notes = []
    res = run_tasks([task], methods=["naive", "autoreg"], out=tmp_path / "b", progress=False,
                    log=notes.append)  # fmt: skip
    assert any("incomplete last row" in n for n in notes)
    cols = ["method", "horizon", "mse", "mae", "params"]
    rows = pd.read_csv(tmp_path / "b" / "results.csv")[cols]
    want = whole.frame[cols].sort_values(["method", "horizon"], ignore_index=True)
    pd.testing.assert_frame_equal(rows.sort_values(["method", "horizon"], ignore_index=True),
                                  want)  # fmt: skip
    pd.testing.assert_frame_equal(
        res.frame[cols].sort_values(["method", "horizon"], ignore_index=True), want
    )


def test_a_results_row_with_missing_fields_is_refused_naming_it(tmp_path):
    # a row short of fields (a line cut and glued to the next) was read with NaN scores
    from tssdpa.compare.harness import ResumeError, read_results

    (tmp_path / "results.csv").write_text(
        "task,dataset,setting,seed,method,mse\nforecast,d,u,0,naive,1.0\nforecast,d,u,0,ar\n"
        "forecast,d,u,1,naive,2.0\n"
    )
    with pytest.raises(ResumeError, match="row 2 has 5 fields, the header 6"):
        read_results(tmp_path)


def test_a_table_never_sets_methods_scored_on_other_series_side_by_side(tmp_path):
    # naive on 300 samples of a series and autoreg on 3000 of another filled one table, each
    # method's settings its own (budget, --max-origins): the series a table is scored on is
    # the same for all of its methods
    def fc(n):
        return forecast_tasks("ar2", seeds=(0,), n=n, horizons=(1,), lookback=8)

    run_tasks(fc(300), methods=["naive"], out=tmp_path / "f", progress=False)
    with pytest.raises(ValueError, match="scored on another series .*samples=300.*samples=3000"):
        run_tasks(fc(3000), methods=["autoreg"], out=tmp_path / "f", progress=False)
    run_tasks(fc(300), methods=["autoreg"], out=tmp_path / "f", budget=2, progress=False)


def test_a_learned_forecaster_too_long_for_a_short_series_is_skipped_with_one_note():
    # 60 training samples, lookback 7 and horizon 20: the learned forecaster's own split
    # (training windows, a gap of 27, a validation tail of 27) does not fit; every seed's
    # cell was an [error] row "y has 60 samples: too short ..." and a traceback on stderr
    from tssdpa.data import Split
    from tssdpa.data.tasks import ForecastTask

    y = np.sin(np.arange(100) / 5.0)[:, None]
    tasks = [ForecastTask("short", y, Split(60, 80, 100, context=7), (20,), 7, s)
             for s in (0, 1)]  # fmt: skip
    notes = []
    res = run_tasks(tasks, methods=["learned_projection", "naive"], progress=False,
                    log=notes.append)  # fmt: skip
    assert set(res.frame["method"]) == {"naive"} and not res.frame["error"].any()
    assert notes == ["learned_projection skipped on short univariate: its training part of 60 "
                     "samples is shorter than the 81 the method needs; a longer series or "
                     "shorter horizons would let it run"]  # fmt: skip
    # nothing but it asked for: no rows at all; the headline was "KeyError: 'task'"
    alone = run_tasks(tasks, methods=["learned_projection"], progress=False, log=notes.append)
    assert alone.frame.empty and overview(alone.frame).empty and not str(alone)


_BAD_BUDGETS = [(0, ValueError), (-1, ValueError), (2.5, TypeError), (None, TypeError),
                (lambda task: 0, ValueError)]  # fmt: skip


@pytest.mark.parametrize("budget, error", _BAD_BUDGETS)
def test_a_budget_that_is_no_count_is_refused_naming_it_before_any_cell_runs(
    tmp_path, budget, error
):
    # it ran every cell and recorded each as failed: "cannot unpack non-iterable NoneType
    # object" (0), "Sample larger than population or is negative" (-1), ...
    tasks = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=300)
    with pytest.raises(error, match="budget"):
        run_tasks(tasks, methods=["butterworth"], budget=budget, out=tmp_path, progress=False)
    assert not (tmp_path / "results.csv").exists()


def test_a_noise_setting_drawn_with_another_seed_is_not_mixed_into_its_table(tmp_path):
    # the noise of a setting is seeded by its place in the settings list: impulsive@10dB is
    # 4th in `--dataset default`'s list, 5th in a named dataset's (and 1st alone), so the
    # "same" cell had other noise (3.5 apart here) and both runs' rows filled one table
    def den(settings):
        tasks = denoise_tasks("ar2", seeds=(0,), settings=settings, n=300)
        return [t for t in tasks if t.setting == "impulsive@10dB"]

    alone, second = den([("impulsive", 10.0)]), den([("gaussian", 0.0), ("impulsive", 10.0)])
    assert np.abs(alone[0].noisy - second[0].noisy).max() > 1
    run_tasks(alone, methods=["noisy"], out=tmp_path, progress=False)
    with pytest.raises(ValueError, match="scored on another series .*noise_index=0.*noise_index=1"):
        run_tasks(second, methods=["butterworth"], out=tmp_path, progress=False)
    run_tasks(alone, methods=["butterworth"], out=tmp_path, progress=False)  # the same noise


def test_a_results_file_from_before_the_noise_draw_was_recorded_is_refused_saying_so(tmp_path):
    # rows written before noise_index was stored: the refusal advised "the stored run's
    # settings", which differ only by a noise_index no option gives
    tasks = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=300)
    run_tasks(tasks, methods=["noisy"], out=tmp_path, progress=False)
    rows = pd.read_csv(tmp_path / "results.csv")
    rows["cell_settings"] = rows["cell_settings"].str.replace(r" noise_index=\d+", "", regex=True)
    rows.to_csv(tmp_path / "results.csv", index=False)
    for methods in (["noisy"], ["butterworth"]):  # the same method's rows, another method's
        with pytest.raises(ValueError, match="before the noise draw of a setting was recorded"):
            run_tasks(tasks, methods=methods, out=tmp_path, progress=False)


def test_a_resumed_run_retries_a_failed_cell_and_keeps_no_stale_error_row(tmp_path, fails_once):
    # a failed cell counted as done: the resumed run never retried it, and its error stayed
    # in the tables for good
    register(MethodSpec("fails_once_test", "denoise", fails_once), overwrite=True)
    tasks = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=200)
    logged = []
    try:
        first = run_tasks(tasks, methods=["fails_once_test", "noisy"], out=tmp_path,
                          progress=False, log=logged.append)  # fmt: skip
        assert "transient" in first.frame.set_index("method").loc["fails_once_test", "error"]
        res = run_tasks(tasks, methods=["fails_once_test", "noisy"], out=tmp_path,
                        progress=False, log=logged.append)  # fmt: skip
    finally:
        _REGISTRY.pop(("denoise", "fails_once_test"), None)
    for frame in (res.frame, pd.read_csv(tmp_path / "results.csv")):
        assert sorted(frame["method"]) == ["fails_once_test", "noisy"]  # one row each
        row = frame.set_index("method").loc["fails_once_test"]
        assert not isinstance(row["error"], str) or row["error"] == ""
        assert np.isfinite(row["rmse"])
    assert any("failed" in m and "run again" in m for m in logged)
    assert "transient" not in markdown_tables(res.frame, "denoise")


def test_seasonal_naive_on_a_series_without_a_season_is_skipped_with_a_note_not_run():
    # a 300-row random walk (a --file): its "period" was the lookback's edge, and
    # seasonal_naive scored MSE 1.15 at h=1 beside naive's 0.05, a broken baseline unsaid
    from tssdpa.data.tasks import TableSeries

    def file_tasks(y):
        series = TableSeries("mine", y[:, None], ("v",), "sha256:0")
        return forecast_tasks(series, seeds=(0,))

    walk = np.cumsum(np.random.default_rng(0).standard_normal(300))
    notes = []
    res = run_tasks(file_tasks(walk), methods=["naive", "seasonal_naive"], progress=False,
                    log=notes.append)  # fmt: skip
    assert set(res.frame["method"]) == {"naive"}
    assert len(notes) == 1 and notes[0].startswith("seasonal_naive skipped on mine univariate: "
                                                   "no season")  # fmt: skip
    t = np.arange(1200)  # where there is one, it runs with it, beating naive
    seasonal = np.sin(2 * np.pi * t / 24) + 0.1 * np.random.default_rng(0).standard_normal(1200)
    res = run_tasks(file_tasks(seasonal), methods=["naive", "seasonal_naive"], progress=False)
    rows = res.frame[res.frame["horizon"] == 10].set_index("method")
    assert rows.loc["seasonal_naive", "params"] == '{"period": 24}'
    assert rows.loc["seasonal_naive", "mse"] < rows.loc["naive", "mse"] / 10


def test_a_quick_learned_denoiser_without_its_setting_is_named_in_a_note_not_dropped():
    # quick runs train learned denoisers on gaussian@10dB only: where the caller's settings
    # lacked it, learned_projection vanished from the results without a word
    tasks = denoise_tasks("ar2", seeds=(0, 1), settings=[("gaussian", 0.0), ("dropout", 10.0)],
                          n=300, quick=True)  # fmt: skip
    notes = []
    res = run_tasks(tasks, methods=["noisy", "learned_projection"], progress=False,
                    log=notes.append)  # fmt: skip
    assert set(res.frame["method"]) == {"noisy"}
    assert notes == ["learned_projection skipped on ar2: quick runs train learned denoisers on "
                     "gaussian@10dB only, not among this run's settings (gaussian@0dB, "
                     "dropout@10dB); add it or run without quick"]  # fmt: skip


def test_a_dataset_denoised_and_forecast_on_other_seeds_runs_each_task_on_its_first_seed():
    # the first seed was taken over both kinds: denoised on seed 0, forecast on 1 and 2, a
    # deterministic forecaster (run on the first seed alone) ran on none, without a word
    tasks = denoise_tasks("sunspots", seeds=(0,), settings=[("gaussian", 10.0)])
    tasks += forecast_tasks("sunspots", seeds=(1, 2))
    res = run_tasks(tasks, methods=["noisy", "naive"], progress=False)
    ran = res.frame.groupby(["task", "method"])["seed"].apply(sorted).to_dict()
    assert ran == {("denoise", "noisy"): [0], ("forecast", "naive"): [1, 1, 1, 1]}


def test_a_method_asked_for_with_no_task_of_its_kind_is_named_in_a_note():
    # naive asked for on denoising tasks alone: no row, no word
    tasks = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=300)
    notes = []
    res = run_tasks(tasks, methods=["noisy", "naive", "projection"], progress=False,
                    log=notes.append)  # fmt: skip
    assert set(res.frame["method"]) == {"noisy", "projection"}  # projection: both kinds
    assert notes == ["naive skipped: a forecasting method, and no forecasting task was given"]


def _naive_failing_once():
    from tssdpa.baselines import NaiveForecaster

    class FailsOnce(NaiveForecaster):
        failed = False

        def _fit(self, a):
            if not FailsOnce.failed:
                FailsOnce.failed = True
                raise RuntimeError("transient")

    return FailsOnce


def test_a_method_run_once_is_not_run_again_when_a_resumed_run_starts_on_another_seed(tmp_path):
    # sunspots is the same on every seed: naive runs on the first seed alone. Resumed with
    # seeds 0 and 1 after a run on seed 1, it ran again on seed 0 (a copy counted as a
    # second seed); a failed stored run still runs again
    run_tasks(forecast_tasks("sunspots", seeds=(1,)), methods=["naive"], out=tmp_path,
              progress=False)  # fmt: skip
    res = run_tasks(forecast_tasks("sunspots", seeds=(0, 1)), methods=["naive"], out=tmp_path,
                    progress=False)  # fmt: skip
    stored = pd.read_csv(tmp_path / "results.csv")
    assert len(stored) == len(res.frame) == 4 and set(stored["seed"]) == {1}
    register(MethodSpec("naive_fails_once_test", "forecast", _naive_failing_once()),
             overwrite=True)  # fmt: skip
    try:
        for seeds in ((1,), (0, 1)):
            res = run_tasks(forecast_tasks("sunspots", seeds=seeds),
                            methods=["naive_fails_once_test"], out=tmp_path / "f",
                            progress=False, log=lambda m: None)  # fmt: skip
    finally:
        _REGISTRY.pop(("forecast", "naive_fails_once_test"), None)
    assert (res.frame["error"].fillna("") == "").all()
    assert sorted(res.frame["seed"]) == [0, 0, 0, 0]


def test_traces_and_paths_are_saved_for_a_run_without_seed_0(tmp_path):
    # traces and forecast paths were saved for seed 0 alone: a run on seeds 1 and 2 saved
    # none and drew no trace or path plot, unsaid
    tasks = denoise_tasks("ar2", seeds=(1, 2), settings=[("gaussian", 10.0)], n=300)
    tasks += forecast_tasks("ar2", seeds=(1, 2), n=300, horizons=(1, 2), lookback=8)
    res = run_tasks(tasks, methods=["moving_average", "naive"], out=tmp_path, progress=False)
    assert {p.name for p in (tmp_path / "traces").iterdir()} == {
        "ar2__gaussian@10dB__truth.npz", "ar2__gaussian@10dB__moving_average.npz"}  # fmt: skip
    assert (tmp_path / "curves" / "ar2__univariate__naive__path.npz").exists()
    names = {p.name for p in write_plots(tmp_path, res.frame, tmp_path / "plots")}
    assert {"denoise_ar2_trace.png", "forecast_ar2_univariate_paths.png"} <= names


def _assert_same_traces(a_dir, b_dir, names):
    """The ar2 gaussian@10dB traces ``names`` saved in the two run folders are equal."""
    for name in names:
        a, b = (np.load(d / "traces" / f"ar2__gaussian@10dB__{name}.npz") for d in (a_dir, b_dir))
        for key in b.files:
            np.testing.assert_array_equal(a[key], b[key])


def test_a_resumed_run_saves_its_traces_for_the_seed_of_the_truth_already_there(tmp_path):
    # after a run on seed 1, one resumed with seeds 0 and 1 saved the new method's trace for
    # seed 0 beside seed 1's truth and traces: one plot mixed two realisations of the series
    settings = [("gaussian", 10.0)]
    run_tasks(denoise_tasks("ar2", seeds=(1,), settings=settings, n=300),
              methods=["moving_average"], out=tmp_path / "a", progress=False)  # fmt: skip
    run_tasks(denoise_tasks("ar2", seeds=(0, 1), settings=settings, n=300),
              methods=["moving_average", "median"], out=tmp_path / "a", progress=False)  # fmt: skip
    run_tasks(denoise_tasks("ar2", seeds=(1,), settings=settings, n=300),
              methods=["median"], out=tmp_path / "b", progress=False)  # fmt: skip
    _assert_same_traces(tmp_path / "a", tmp_path / "b", ("truth", "median"))


def test_an_explicit_trace_seed_is_never_saved_beside_the_truth_of_another_seed(tmp_path):
    # the truth is saved once per (dataset, setting): a resumed run given trace_seed=1 saved
    # seed 1's traces beside seed 0's truth and traces, one plot of two realisations
    tasks = denoise_tasks("ar2", seeds=(0, 1), settings=[("gaussian", 10.0)], n=300)
    run_tasks(tasks, methods=["moving_average"], out=tmp_path, progress=False)
    before = (tmp_path / "results.csv").read_bytes()
    with pytest.raises(ValueError, match=r"^trace_seed: .* truth of seed 0 .* trace_seed=0"):
        run_tasks(tasks, methods=["median"], out=tmp_path, progress=False, trace_seed=1)
    assert not (tmp_path / "traces" / "ar2__gaussian@10dB__median.npz").exists()
    assert (tmp_path / "results.csv").read_bytes() == before
    run_tasks(tasks, methods=["median"], out=tmp_path, progress=False, trace_seed=0)
    assert (tmp_path / "traces" / "ar2__gaussian@10dB__median.npz").exists()
    # in a folder of its own, the truth and every trace are those of the seed given
    run_tasks(tasks, methods=["median"], out=tmp_path / "one", progress=False, trace_seed=1)
    run_tasks(tasks[1:], methods=["median"], out=tmp_path / "alone", progress=False)
    _assert_same_traces(tmp_path / "one", tmp_path / "alone", ("truth", "median"))


def test_a_trace_seed_not_among_the_seeds_run_is_refused(tmp_path):
    # no trace was saved and no trace plot drawn, unsaid
    tasks = denoise_tasks("ar2", seeds=(0, 1), settings=[("gaussian", 10.0)], n=300)
    with pytest.raises(ValueError, match=r"^trace_seed: 2 is not among this run's seeds \[0, 1\]"):
        run_tasks(tasks, methods=["median"], out=tmp_path, progress=False, trace_seed=2)
    with pytest.raises(TypeError, match="trace_seed"):
        run_tasks(tasks, methods=["median"], out=tmp_path, progress=False, trace_seed=1.0)
    assert not (tmp_path / "results.csv").exists()
