"""Harness, protocols, metrics, tables and plots on small data (seconds)."""

import numpy as np
import pandas as pd
import pytest

from tssdpa import baselines as B
from tssdpa.compare import (
    DenoiseTask,
    ForecastTask,
    MethodSpec,
    available_methods,
    denoise_tasks,
    evaluate_denoiser,
    evaluate_forecaster,
    forecast_tasks,
    get_method,
    metrics,
    rolling_errors,
    run_tasks,
    search_space,
)
from tssdpa.compare.plots import write_plots
from tssdpa.compare.tables import markdown_tables, overview, published_results, write_tables
from tssdpa.data import Split

CLASSICAL_DENOISE = [
    m
    for m in available_methods("denoise")
    if get_method(m, "denoise").family not in ("projection", "learned")
]
CLASSICAL_FORECAST = [
    m
    for m in available_methods("forecast")
    if get_method(m, "forecast").family not in ("projection", "learned")
]


@pytest.fixture(scope="module")
def small_denoise():
    return denoise_tasks("sinusoids", seeds=(0,), settings=[("gaussian", 10.0)], n=400)[0]


@pytest.fixture(scope="module")
def small_forecast():
    return forecast_tasks("ar2", seeds=(0,), n=400, horizons=(1, 3), lookback=16)[0]


def test_metrics():
    t = np.array([0.0, 1.0, 2.0])
    assert metrics.mse(t, t + 1) == 1.0 and metrics.mae(t, t - 2) == 2.0
    assert metrics.rmse(t, t) == 0.0
    s = np.sin(np.linspace(0, 20, 1000))
    n = s + 0.1
    assert metrics.snr_db(s, n) == pytest.approx(10 * np.log10(np.var(s) / 0.01))
    assert metrics.snr_improvement_db(s, n, s + 0.01) == pytest.approx(20.0)
    assert np.isnan(metrics.snr_improvement_db(s, n, np.full_like(s, np.nan)))
    with pytest.raises(ValueError, match="shape"):
        metrics.mse(t, t[:2])
    m, a = metrics.horizon_errors(np.zeros((5, 3, 2)), np.ones((5, 3, 2)))
    np.testing.assert_array_equal(m, [1, 1, 1])


@pytest.mark.parametrize("name", CLASSICAL_DENOISE)
def test_every_classical_denoiser_runs_through_the_harness(name, small_denoise):
    row, trace = evaluate_denoiser(
        get_method(name, "denoise"), small_denoise, budget=2, keep_trace=True
    )
    assert np.isfinite(row["rmse"]) and np.isfinite(row["snr_gain_db"])
    assert trace.shape == (80, 1)
    assert row["n_configs"] <= 2 and row["params"].startswith("{")
    assert row["snr_in_db"] == pytest.approx(10.0, abs=1.0)
    assert row["causal"] == get_method(name, "denoise").causal


@pytest.mark.parametrize("name", CLASSICAL_FORECAST)
def test_every_classical_forecaster_runs_through_the_harness(name, small_forecast):
    rows, extras = evaluate_forecaster(
        get_method(name, "forecast"), small_forecast, budget=1, keep_path=True
    )
    assert [r["horizon"] for r in rows] == [1, 3]
    assert all(np.isfinite(r["mse"]) and r["n_origins"] > 0 for r in rows)
    assert extras["path"].shape == (3, 1)


def test_optimal_linear_beats_naive_on_ar2(small_forecast):
    ar = evaluate_forecaster(get_method("autoreg", "forecast"), small_forecast)[0]
    nv = evaluate_forecaster(get_method("naive", "forecast"), small_forecast)[0]
    assert ar[0]["mse"] < nv[0]["mse"]


class _Spy:
    """Records every array passed to fit / filter / forecast_path."""

    log: list = []

    def __init__(self, k=1):
        self.k = k
        self.causal = True

    def get_params(self):
        return {"k": self.k}

    def fit(self, x, target=None):
        _Spy.log.append(("fit", np.array(x, copy=True)))
        return self

    def filter(self, x):
        _Spy.log.append(("filter", np.array(x, copy=True)))
        return np.asarray(x) * 0.0 + np.nanmean(x)

    def forecast_path(self, y, horizon=1):
        _Spy.log.append(("path", np.array(y, copy=True)))
        y = np.asarray(y)
        return np.repeat(y[:, None, :], horizon, axis=1) * (1.0 / self.k)


def test_denoise_split_never_leaks_test_into_fit_or_selection():
    rng = np.random.default_rng(0)
    clean = rng.standard_normal((300, 1))
    noisy = clean + 0.1
    sp = Split(180, 240, 300)
    task = DenoiseTask("spy", clean, noisy, sp, "gaussian", 10.0, 0, warmup=0)
    spec = MethodSpec("spy", "denoise", _Spy, lambda c: [{"k": 1}, {"k": 2}])
    _Spy.log = []
    evaluate_denoiser(spec, task)
    fits = [a for k, a in _Spy.log if k == "fit"]
    assert all(np.array_equal(a, noisy[:180]) for a in fits)
    filt = [a for k, a in _Spy.log if k == "filter"]
    # selection only ever filtered validation data; the test part is filtered once at the end
    assert all(np.array_equal(a, noisy[180:240]) for a in filt[:-1])
    assert np.array_equal(filt[-1], noisy[240:])


def test_forecast_split_never_leaks_test_into_fit_or_selection():
    rng = np.random.default_rng(1)
    y = rng.standard_normal((300, 2))
    sp = Split(180, 240, 300, context=10)
    task = ForecastTask("spy", y, sp, (1, 5), 10, 0, metric="path")
    spec = MethodSpec("spy", "forecast", _Spy, lambda c: [{"k": 1}, {"k": 2}])
    _Spy.log = []
    rows, _ = evaluate_forecaster(spec, task)
    fits = [a for k, a in _Spy.log if k == "fit"]
    assert fits and all(np.array_equal(a, y[:180]) for a in fits)
    paths = [a for k, a in _Spy.log if k == "path"]
    val_calls = paths[:2]  # one per configuration, before the test evaluation
    assert all(len(a) <= 240 - 1 for a in val_calls)
    # changing the test part changes neither the choice nor the validation scores
    y2 = y.copy()
    y2[240:] = 100.0
    task2 = ForecastTask("spy", y2, sp, (1, 5), 10, 0, metric="path")
    rows2, _ = evaluate_forecaster(spec, task2)
    assert [r["params"] for r in rows] == [r["params"] for r in rows2]
    assert [r["val_mse"] for r in rows] == [r["val_mse"] for r in rows2]
    assert rows[0]["mse"] != rows2[0]["mse"]


def test_forecast_protocol_counts_dlinear_windows():
    """Test windows: first target = first test row, one window per origin (stride 1)."""
    y = np.arange(400, dtype=float)[:, None]
    sp = Split(200, 300, 400, context=20)
    task = ForecastTask("lin", y, sp, (1, 10), 20, 0, metric="path")
    rows, _ = evaluate_forecaster(get_method("naive", "forecast"), task)
    assert [r["n_origins"] for r in rows] == [100, 91]
    # naive error on a ramp: step k has error k, mean over steps 1..h of k^2
    assert rows[1]["mse"] == pytest.approx(np.mean(np.arange(1, 11) ** 2))
    task_step = ForecastTask("lin", y, sp, (1, 10), 20, 0, metric="step")
    rows_s, _ = evaluate_forecaster(get_method("naive", "forecast"), task_step)
    assert rows_s[1]["mse"] == pytest.approx(100.0)


def test_rolling_errors_chunked_equals_full():
    rng = np.random.default_rng(2)
    y = np.cumsum(rng.standard_normal((900, 2)), axis=0) * 0.1
    f = B.DLinearForecaster(lookback=24, horizon=12).fit(y[:500])
    full = rolling_errors(f, y, 600, 880, 12)
    chunk = rolling_errors(f, y, 600, 880, 12, history=30)
    np.testing.assert_allclose(full[0], chunk[0])
    sub = rolling_errors(f, y, 600, 880, 12, max_origins=40)
    assert sub[2] == 40 and sub[0].shape == (40, 12)


def test_search_space_respects_budget():
    spec = get_method("butterworth", "denoise")
    assert len(search_space(spec, {}, budget=3)) == 3
    assert search_space(spec, {}, budget=3, seed=1) == search_space(spec, {}, budget=3, seed=1)
    with pytest.raises(ValueError, match="method"):
        get_method("nope", "denoise")


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


def test_failing_method_is_recorded_not_fatal(tmp_path):
    class Broken(_Spy):
        def fit(self, x, target=None):
            raise RuntimeError("boom")

    from tssdpa.compare import register
    from tssdpa.compare.registry import _REGISTRY

    register(MethodSpec("broken_test", "denoise", Broken), overwrite=True)
    tasks = denoise_tasks("ar2", seeds=(0,), settings=[("gaussian", 10.0)], n=200)
    try:
        res = run_tasks(tasks, methods=["broken_test", "noisy"], out=tmp_path, progress=False)
    finally:
        _REGISTRY.pop(("denoise", "broken_test"), None)
    err = res.frame.set_index("method").loc["broken_test", "error"]
    assert "boom" in err
    assert "boom" in markdown_tables(res.frame, "denoise")


def test_published_numbers_file():
    pub = published_results()
    row = pub[(pub["model"] == "DLinear") & (pub["dataset"] == "ETTh1") & (pub["horizon"] == 96)]
    assert float(row["mse"].iloc[0]) == 0.375
    assert set(pub["horizon"]) == {96, 192, 336, 720}
    assert pub["source"].str.len().min() > 5


@pytest.mark.data("ett/ETTh1.csv.gz")
def test_ett_forecast_protocol_shapes():
    [t] = forecast_tasks("ETTh1", seeds=(0,), features="M")
    assert t.y.shape == (14400, 7) and t.metric == "path" and t.lookback == 336
    np.testing.assert_allclose(t.y[:8640].mean(0), 0, atol=1e-9)
    np.testing.assert_allclose(t.y[:8640].std(0), 1, atol=1e-9)
    [s] = forecast_tasks("ETTh1", seeds=(0,), features="S")
    assert s.y.shape == (14400, 1)


def _projection_available(task):
    try:
        return "projection" in available_methods(task)
    except Exception:
        return False


@pytest.mark.skipif(not _projection_available("denoise"), reason="tssdpa.filters not ready")
def test_projection_denoiser_plugs_into_the_harness(small_denoise):
    for name in ("projection", "projection_zp"):
        spec = get_method(name, "denoise")
        assert spec.family == "projection"
        row, _ = evaluate_denoiser(spec, small_denoise, budget=1)
        assert np.isfinite(row["rmse"]) and row["causal"] == spec.causal


@pytest.mark.skipif(not _projection_available("forecast"), reason="tssdpa.filters not ready")
def test_projection_forecaster_plugs_into_the_harness(small_forecast):
    rows, _ = evaluate_forecaster(get_method("projection", "forecast"), small_forecast, budget=1)
    assert all(np.isfinite(r["mse"]) for r in rows)


def test_headline_calls_scores_equal_up_to_rounding_a_tie():
    from tssdpa.compare.tables import _duel

    fam = {"dlinear": "linear", "projection_residual": "projection"}
    same = pd.Series({"dlinear": 0.3327, "projection_residual": 0.3327 * (1 - 1e-12)})
    assert _duel("d", "forecast", "MSE", same, fam, higher=False)["winner"] == "tie"
    better = pd.Series({"dlinear": 0.3327, "projection_residual": 0.3300})
    assert _duel("d", "forecast", "MSE", better, fam, higher=False)["winner"] == "tssdpa"
    worse = pd.Series({"dlinear": 2.0, "projection_residual": 1.9})
    assert _duel("d", "denoise", "dB", worse, fam, higher=True)["winner"] == "classical"
