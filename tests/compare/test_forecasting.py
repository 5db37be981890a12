"""Forecasting evaluation: rolling origins, per-horizon choice on validation, no leakage."""

import json

import numpy as np
import pytest

from tssdpa import baselines as B
from tssdpa.compare import (
    MethodSpec,
    available_methods,
    evaluate_forecaster,
    get_method,
    rolling_errors,
)
from tssdpa.data import Split
from tssdpa.data.tasks import ForecastTask, forecast_tasks

CLASSICAL = [
    m
    for m in available_methods("forecast")
    if get_method(m, "forecast").family not in ("projection", "learned")
]


@pytest.mark.parametrize("name", CLASSICAL)
def test_every_classical_forecaster_runs_through_the_harness(name, small_forecast):
    rows, extras = evaluate_forecaster(
        get_method(name, "forecast"), small_forecast, budget=1, keep_path=True
    )
    assert [r["horizon"] for r in rows] == [1, 3]
    assert all(np.isfinite(r["mse"]) and r["n_origins"] > 0 for r in rows)
    assert extras["path"].shape == (3, 1)


@pytest.mark.parametrize("name", ["projection", "projection_residual"])
def test_projection_forecasters_plug_into_the_harness(name, small_forecast):
    rows, _ = evaluate_forecaster(get_method(name, "forecast"), small_forecast, budget=1)
    assert all(np.isfinite(r["mse"]) for r in rows)


def test_optimal_linear_beats_naive_on_ar2(small_forecast):
    ar = evaluate_forecaster(get_method("autoreg", "forecast"), small_forecast)[0]
    nv = evaluate_forecaster(get_method("naive", "forecast"), small_forecast)[0]
    assert ar[0]["mse"] < nv[0]["mse"]


class _Spy:
    """Records every array passed to fit / forecast_path."""

    log: list = []

    def __init__(self, k=1):
        self.k = k

    def fit(self, y):
        _Spy.log.append(("fit", np.array(y, copy=True)))
        return self

    def forecast_path(self, y, horizon=1):
        _Spy.log.append(("path", np.array(y, copy=True)))
        y = np.asarray(y)
        return np.repeat(y[:, None, :], horizon, axis=1) * (1.0 / self.k)


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


def test_high_cost_methods_are_scored_on_subsampled_origins():
    y = np.arange(400, dtype=float)[:, None]
    sp = Split(200, 300, 400, context=20)
    task = ForecastTask("lin", y, sp, (1, 10), 20, 0, metric="path", max_origins=40)
    spec = MethodSpec("naive_high", "forecast", B.NaiveForecaster, cost="high")
    rows, _ = evaluate_forecaster(spec, task)
    assert all(r["n_origins"] <= 40 and r["note"].startswith("subsampled") for r in rows)
    assert rows[1]["mse"] == pytest.approx(np.mean(np.arange(1, 11) ** 2))
    # a cap above the number of test origins subsamples nothing: the rows of no cap, no note
    roomy = ForecastTask("lin", y, sp, (1, 10), 20, 0, metric="path", max_origins=1000)
    full, _ = evaluate_forecaster(spec, ForecastTask("lin", y, sp, (1, 10), 20, 0, metric="path"))
    for capped, plain in zip(evaluate_forecaster(spec, roomy)[0], full):
        assert capped["note"] == "" and capped["n_origins"] == plain["n_origins"]
        assert capped["mse"] == pytest.approx(plain["mse"])


def test_rolling_errors_chunked_equals_full():
    rng = np.random.default_rng(2)
    y = np.cumsum(rng.standard_normal((900, 2)), axis=0) * 0.1
    f = B.DLinearForecaster(lookback=24, horizon=12).fit(y[:500])
    full = rolling_errors(f, y, 600, 880, 12)
    chunk = rolling_errors(f, y, 600, 880, 12, history=30)
    np.testing.assert_allclose(full[0], chunk[0])
    sub = rolling_errors(f, y, 600, 880, 12, max_origins=40)
    assert sub[2] == 40 and sub[0].shape == (40, 12)


@pytest.mark.parametrize("name", ["simplex", "smap"])
def test_edm_peers_score_the_same_with_their_short_history(name, small_forecast):
    # a forecast from t reads the state vector and the fixed training library only, so the
    # 32 samples of history the harness gives the EDM peers change no score (and spare pyEDM
    # forecasting from every earlier origin); subsampled origins, as on the long recordings
    pytest.importorskip("pyEDM")
    spec = get_method(name, "forecast")
    assert spec.history == 32
    from dataclasses import replace

    task = replace(small_forecast, max_origins=40)
    short, _ = evaluate_forecaster(spec, task, budget=2)
    full, _ = evaluate_forecaster(replace(spec, history=None), task, budget=2)
    for a, b in zip(short, full):
        assert a["params"] == b["params"] and a["n_origins"] == b["n_origins"]
        np.testing.assert_allclose([a["val_mse"], a["mse"]], [b["val_mse"], b["mse"]], rtol=1e-12)


@pytest.mark.parametrize("max_origins", [None, 10_000, 40])
def test_nan_forecasts_are_counted_whatever_the_origin_cap(max_origins):
    # with max_origins set, an expensive method's errors were averaged over its finite
    # forecasts only: NaN from half the origins gave a finite MSE, "subsampled: 40 of 80"
    from tssdpa.baselines import NaiveForecaster
    from tssdpa.compare.forecasting import evaluate_forecaster
    from tssdpa.compare.registry import MethodSpec
    from tssdpa.data.tasks import forecast_tasks

    class HalfMissing(NaiveForecaster):
        def _path(self, a, horizon):
            out = super()._path(a, horizon).copy()
            out[1::2] = np.nan
            return out

    task = forecast_tasks("ar2", seeds=(0,), n=400, max_origins=max_origins)[0]
    for cls, finite in ((HalfMissing, False), (NaiveForecaster, True)):
        spec = MethodSpec("m", "forecast", cls, cost="high")
        rows, _ = evaluate_forecaster(spec, task, budget=1)
        assert all(np.isfinite(r["mse"]) == finite for r in rows)


def test_a_repeated_horizon_is_scored_once():
    # `--horizons 1 5 5` gave two rows per (seed, method) at h=5: a shrunken std, n_seeds 2x
    task = forecast_tasks("ar2", seeds=(0,), n=400, horizons=(5, 1, 5), lookback=16)[0]
    assert task.horizons == (1, 5)
    rows, _ = evaluate_forecaster(get_method("naive", "forecast"), task, budget=1)
    assert [r["horizon"] for r in rows] == [1, 5]


@pytest.mark.parametrize("cap", [1, 3, 7, 8, 13])
def test_the_origin_cap_is_never_exceeded(cap):
    # 8 blocks of at least one origin each: a cap of 3 scored 8 origins
    y = np.cumsum(np.random.default_rng(3).standard_normal((700, 1)), axis=0) * 0.1
    f = B.NaiveForecaster().fit(y[:500])
    se, _, n_used = rolling_errors(f, y, 600, 680, 4, max_origins=cap)[:3]
    blocks = min(8, cap)  # as many blocks as fit, of cap // blocks origins each
    assert n_used == len(se) == cap // blocks * blocks <= cap


@pytest.mark.parametrize("metric", ["step", "path"])
def test_a_gap_in_the_series_is_no_target_and_the_choice_is_still_made_on_the_others(metric):
    # one missing value in the validation (test) part made every configuration's validation
    # (test) MSE NaN: inf for all, so the first configuration was "chosen", test MSE NaN
    from dataclasses import replace

    task = forecast_tasks("ar2", seeds=(0,), n=400, horizons=(1, 3), lookback=16)[0]
    y = task.y.copy()
    y[[250, 300, 330, 370]] = np.nan  # validation 240..320, test 320..400
    gappy = replace(task, y=y, metric=metric)
    rows, _ = evaluate_forecaster(get_method("autoreg", "forecast"), gappy, budget=4)
    full, _ = evaluate_forecaster(get_method("autoreg", "forecast"), task, budget=4)
    for r, f in zip(rows, full):
        assert np.isfinite(r["val_mse"]) and np.isfinite(r["mse"]) and np.isfinite(r["mae"])
        assert r["params"] == f["params"]  # four of 80 targets missing: the same choice
        # by hand: the fitted AR's forecasts from every test origin, over the known targets
        est = get_method("autoreg", "forecast").build(task.ctx, seed=0, **json.loads(r["params"]))
        est.fit(y[: task.split.train])
        h, (t0, t1) = r["horizon"], task.split.bounds("test")
        path = est.forecast_path(y[:t1], horizon=h)
        origins = np.arange(t0 - 1, t1 - h)
        steps = range(h) if metric == "path" else [h - 1]
        err = np.concatenate([path[origins, s, 0] - y[origins + s + 1, 0] for s in steps])
        want = [np.nanmean(err**2), np.nanmean(np.abs(err))]
        np.testing.assert_allclose([r["mse"], r["mae"]], want, rtol=1e-12)


def test_ets_tries_a_seasonal_model_only_where_two_seasons_fit_in_the_training_part():
    # a period of 48 on 90 training samples: the seasonal configurations could not be fitted
    # and failed the whole method, though the others fit
    t = np.arange(150)
    y = np.sin(2 * np.pi * t / 30)[:, None] + 0.2 * np.random.default_rng(0).standard_normal(
        (150, 1)
    )
    task = ForecastTask("short", y, Split(90, 120, 150, context=16), (1, 5), 16, 0, period=48)
    rows, _ = evaluate_forecaster(get_method("ets", "forecast"), task, budget=8)
    assert all(np.isfinite(r["mse"]) and r["n_configs"] == 3 for r in rows)
    assert len(get_method("ets", "forecast").grid({**task.ctx, "n_train": 96})) == 5


def test_seasonal_naive_with_a_period_longer_than_the_task_history_scores_every_origin():
    # the task's history (the IMU's lookback + 1000) was given whatever the period: a season
    # longer than it (periods are searched up to half the training part) left the first
    # period's origins of every block without a value one period earlier, and the MSE NaN
    t = np.arange(3000)
    y = np.sin(2 * np.pi * t / 120)[:, None]
    task = ForecastTask(
        "long_season", y, Split(1800, 2400, 3000, context=16), (1, 5), 16, 0, period=120,
        history=40,
    )  # fmt: skip
    rows, _ = evaluate_forecaster(get_method("seasonal_naive", "forecast"), task)
    assert [r["n_origins"] for r in rows] == [600, 596]  # every test origin of h = 1, 5
    np.testing.assert_allclose([r["mse"] for r in rows], 0.0, atol=1e-20)
