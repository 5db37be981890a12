"""pyEDM Simplex and S-map as forecasters: the same numbers as pyEDM, rolling origin, harness."""

import ast
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pyEDM = pytest.importorskip("pyEDM")

from tssdpa.baselines import SimplexForecaster, SMapForecaster  # noqa: E402
from tssdpa.compare import evaluate_forecaster, get_method  # noqa: E402
from tssdpa.data import forecast_tasks  # noqa: E402


def _series(n, seed=0, channels=1):
    """A noisy nonlinear oscillation (continuous values: no distance ties)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    x = np.sin(0.21 * t + np.arange(channels)) + 0.5 * np.sin(0.057 * t) ** 3
    return x + 0.05 * rng.standard_normal((n, channels))


def _direct(method, train, y, h, **kw):
    """pyEDM called as a user would: train then y in one frame (no gap), lib = the training
    rows, pred = the rows of y, Tp = h; returns {origin t in y: prediction of y[t + h]}."""
    x = np.concatenate([train, y])
    frame = pd.DataFrame({"Time": np.arange(1, len(x) + 1), "x": x})
    n = len(train)
    out = method(frame, "x", "x", lib=[1, n], pred=[n + 1, n + len(y)], Tp=h, **kw)
    proj = out["predictions"] if isinstance(out, dict) else out
    # the row at Time = p + Tp holds the forecast made from 1-based frame row p
    got = dict(zip(proj["Time"].astype(int), proj["Predictions"]))
    return {t: got[n + t + 1 + h] for t in range(len(y)) if n + t + 1 + h in got}


@pytest.mark.parametrize(
    "est,kw",
    [
        (SimplexForecaster(embedding=3, delay=2), {"E": 3, "tau": -2}),
        (SimplexForecaster(embedding=4, n_neighbors=7), {"E": 4, "tau": -1, "knn": 7}),
        (SMapForecaster(embedding=3, delay=2, theta=2.0), {"E": 3, "tau": -2, "theta": 2.0}),
        (SMapForecaster(embedding=2, theta=0.0), {"E": 2, "tau": -1, "theta": 0.0}),
        (SMapForecaster(embedding=3, theta=4.0, n_neighbors=40), {"E": 3, "knn": 40, "theta": 4.0}),
    ],
    ids=["simplex", "simplex_knn", "smap", "smap_theta0", "smap_knn"],
)
def test_forecasts_equal_a_direct_pyedm_call(est, kw):
    x = _series(260)
    train, y = x[:200, 0], x[200:, 0]
    est.fit(train)
    path = est.forecast_path(y, horizon=3)  # (T, 3)
    method = pyEDM.Simplex if isinstance(est, SimplexForecaster) else pyEDM.SMap
    shift = (kw["E"] - 1) * -kw.get("tau", -1)
    assert np.isnan(path[:shift]).all() and np.isfinite(path[shift:]).all()
    for h in (1, 3):
        want = _direct(method, train, y, h, **kw)
        origins = [t for t in (shift, shift + 1, 17, 33, len(y) - 1) if t in want]
        assert len(origins) == 5
        np.testing.assert_allclose(path[origins, h - 1], [want[t] for t in origins], rtol=1e-12)
        # forecast(y, h) runs pyEDM for Tp = h alone: the same numbers
        np.testing.assert_allclose(est.forecast(y, horizon=h), path[:, h - 1], rtol=1e-12)


def _simplex_reference(train, y, t, h, E, delay):
    """Simplex by hand: the E+1 nearest training states, weights exp(-d / d_min)."""
    s = (E - 1) * delay
    lib = np.arange(s, len(train) - h)  # complete states whose target is in the library
    states = np.stack([train[lib - k * delay] for k in range(E)], axis=1)
    q = np.array([y[t - k * delay] for k in range(E)])
    d = np.linalg.norm(states - q, axis=1)
    nn = np.argsort(d)[: E + 1]
    w = np.exp(-d[nn] / max(d[nn].min(), 1e-6))
    return float(w @ train[lib[nn] + h] / w.sum())


def _smap_reference(train, y, t, h, E, delay, theta):
    """S-map by hand: weighted least squares with intercept on all library states but one."""
    s = (E - 1) * delay
    lib = np.arange(s, len(train) - h)
    states = np.stack([train[lib - k * delay] for k in range(E)], axis=1)
    q = np.array([y[t - k * delay] for k in range(E)])
    d = np.linalg.norm(states - q, axis=1)
    nn = np.argsort(d)[: len(lib) - 1]  # pyEDM's default knn: every library row but one
    w = np.exp(-theta * d[nn] / d[nn].mean())
    A = w[:, None] * np.column_stack([np.ones(len(nn)), states[nn]])
    coef = np.linalg.lstsq(A, w * train[lib[nn] + h], rcond=None)[0]
    return float(coef @ np.concatenate([[1.0], q]))


def test_the_parameters_mean_what_the_docs_say():
    x = _series(240, seed=3)[:, 0]
    train, y = x[:180], x[180:]
    simplex = SimplexForecaster(embedding=3, delay=2).fit(train).forecast_path(y, 4)
    smap = SMapForecaster(embedding=2, delay=3, theta=1.5).fit(train).forecast_path(y, 4)
    for t in (5, 20, 59):
        for h in (1, 4):
            assert simplex[t, h - 1] == pytest.approx(_simplex_reference(train, y, t, h, 3, 2))
            assert smap[t, h - 1] == pytest.approx(_smap_reference(train, y, t, h, 2, 3, 1.5))


@pytest.mark.parametrize("engine", ["pyedm", "numpy"])
@pytest.mark.parametrize("cls", [SimplexForecaster, SMapForecaster])
def test_rolling_origin_no_value_after_an_origin_is_used(cls, engine):
    x = _series(300, seed=1)[:, 0]
    est = cls(embedding=3, delay=2, engine=engine).fit(x[:200])
    y = x[200:]
    base = est.forecast_path(y, horizon=5)
    # the numpy engine's matrix products round alike only within one block of origins
    same = (
        np.testing.assert_array_equal
        if engine == "pyedm"
        else lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    )
    for t in (4, 30, 71):
        changed = y.copy()
        changed[t + 1 :] = np.random.default_rng(t).standard_normal(len(y) - t - 1) * 5
        other = est.forecast_path(changed, horizon=5)
        same(other[: t + 1], base[: t + 1])
        # the forecast from t is that of the series cut at t
        same(est.forecast_path(y[: t + 1], horizon=5)[t], base[t])
    assert np.isnan(base[:4]).all() and np.isfinite(base[4:]).all()  # (3 - 1) * 2 = 4
    # predict: the path from the end of the training series
    np.testing.assert_allclose(est.predict(5), est.forecast_path(x[:200], 5)[-1])


@pytest.mark.parametrize("cls", [SimplexForecaster, SMapForecaster])
def test_rows_reused_from_the_last_call_are_those_of_a_fresh_call(cls):
    """The harness forecasts y[:v] (validation), then y[:t] (test): rows of the common
    prefix are reused, with the numbers of a fresh estimator."""
    x = _series(290, seed=4, channels=2)
    train, y = x[:200], x[200:]
    fresh = cls(embedding=3).fit(train)
    est = cls(embedding=3).fit(train)
    other = y.copy()
    other[50:] += 1.0
    calls = [(y[:60], 4), (y[:60], 2), (y, 4), (y[:61], 3), (other, 4), (y[:51], 5), (y, 5)]
    for series, h in calls:
        np.testing.assert_array_equal(
            est.forecast_path(series, h), fresh.clone().fit(train).forecast_path(series, h)
        )
        np.testing.assert_array_equal(est.forecast(series, h), est.forecast_path(series, h)[:, -1])
    # the test call after the validation call runs pyEDM on the new origins only
    seen = []
    est.fit(train)  # forget the calls above
    call = est._call
    est._call = lambda pyEDM, frame, lib, pred, h: (
        seen.append(pred) or call(pyEDM, frame, lib, pred, h)
    )
    est.forecast_path(y[:70], 2)
    est.forecast_path(y, 2)
    first = 200 + 2  # the frame row of y[0]: training rows, then (3 - 1) * 1 NaN rows
    assert seen == [[first + 1, first + 70]] * 4 + [[first + 71, first + 90]] * 4  # 2 h, 2 C
    est.set_params(embedding=2)  # new parameters: nothing reused
    np.testing.assert_array_equal(
        est.forecast_path(y, 3), cls(embedding=2).fit(train).forecast_path(y, 3)
    )


@pytest.mark.parametrize("engine", ["pyedm", "numpy"])
@pytest.mark.parametrize("cls", [SimplexForecaster, SMapForecaster])
def test_multichannel_one_model_per_channel(cls, engine):
    x = _series(230, seed=2, channels=3)
    est = cls(embedding=2, engine=engine).fit(x[:170])
    path = est.forecast_path(x[170:], horizon=4)
    assert path.shape == (60, 4, 3)
    one = cls(embedding=2, engine=engine).fit(x[:170, 1]).forecast_path(x[170:, 1], horizon=4)
    np.testing.assert_array_equal(path[:, :, 1], one)
    assert est.forecast(pd.DataFrame(x[170:]), horizon=2).shape == (60, 3)
    short = est.forecast_path(x[170:171], horizon=2)  # one sample: embedding 2 is incomplete
    assert short.shape == (1, 2, 3) and np.isnan(short).all()
    e1 = cls(embedding=1, engine=engine).fit(x[:170, 0])
    assert np.isfinite(e1.forecast_path(x[170:171, 0], horizon=2)).all()  # one sample is enough


@pytest.mark.parametrize("engine", ["pyedm", "numpy"])
@pytest.mark.parametrize("cls", [SimplexForecaster, SMapForecaster])
def test_a_huge_offset_gives_the_forecasts_of_the_signal_alone_plus_the_offset(cls, engine):
    x = _series(300, seed=3)[:, 0]
    want = cls(embedding=4, engine=engine).fit(x[:220]).forecast_path(x[220:], horizon=3)
    est = cls(embedding=4, engine=engine).fit(x[:220] + 1e9)
    got = est.forecast_path(x[220:] + 1e9, horizon=3) - 1e9
    np.testing.assert_allclose(got, want, atol=1e-5)  # float64 holds 1e9 to 1.2e-7


@pytest.mark.parametrize(
    "est,name,err",
    [
        (SimplexForecaster(embedding=0), "embedding", ValueError),
        (SimplexForecaster(delay=1.0), "delay", TypeError),
        (SimplexForecaster(n_neighbors=0), "n_neighbors", ValueError),
        (SMapForecaster(theta=-1.0), "theta", ValueError),
        (SMapForecaster(theta="2"), "theta", TypeError),
        (SMapForecaster(embedding=True), "embedding", TypeError),
        (SMapForecaster(engine="cuda"), "engine", ValueError),
    ],
)
def test_bad_parameters_raise_at_fit_naming_them(est, name, err):
    with pytest.raises(err, match=name):
        est.fit(_series(100)[:, 0])


def test_too_short_a_training_series_raises():
    x = _series(60)[:, 0]
    with pytest.raises(ValueError, match="library rows"):
        SimplexForecaster(embedding=10, delay=6).fit(x)
    # 30 - 2 - h library rows: at least 4 neighbours and pyEDM's 2 + h + 1 for h <= 12
    est = SimplexForecaster(embedding=3).fit(x[:30])
    assert est.forecast_path(x, horizon=12).shape == (60, 12)
    with pytest.raises(ValueError, match="horizon=13"):
        est.forecast_path(x, horizon=13)
    with pytest.raises(ValueError, match="horizon=13"):
        est.forecast(x, horizon=13)


def test_missing_pyedm_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyEDM", None)  # import pyEDM -> ImportError
    with pytest.raises(ImportError, match=r"tssdpa\[peers\]"):
        SimplexForecaster().fit(_series(100)[:, 0])
    # the numpy engine does not need it
    x = _series(100)[:, 0]
    for cls in (SimplexForecaster, SMapForecaster):
        assert np.isfinite(cls(engine="numpy").fit(x[:80]).forecast_path(x, 3)[2:]).all()


# ------------------------------------------------------------------ the numpy engine
def _quantised(n, seed=0):
    """Values on a 0.2 grid: many equal distances, so the tie order is tested too."""
    return np.round(_series(n, seed=seed)[:, 0] * 5) / 5


@pytest.mark.parametrize(
    "kw",
    [
        {"embedding": 3, "delay": 2},
        {"embedding": 4, "n_neighbors": 7},
        {"embedding": 1},
        {"embedding": 10, "n_neighbors": 3},
    ],
)
@pytest.mark.parametrize("make", [_series, _quantised], ids=["continuous", "ties"])
def test_numpy_simplex_is_pyedm_at_every_step(kw, make):
    x = make(420, seed=5).reshape(-1)
    train, y = x[:300], x[300:]
    ref = SimplexForecaster(**kw).fit(train)
    fast = SimplexForecaster(engine="numpy", **kw).fit(train)
    np.testing.assert_allclose(fast.forecast_path(y, 9), ref.forecast_path(y, 9), rtol=1e-13)
    np.testing.assert_allclose(fast.forecast(y, 6), ref.forecast(y, 6), rtol=1e-13)


@pytest.mark.parametrize(
    "kw",
    [
        {"embedding": 3, "delay": 2, "theta": 2.0},
        {"embedding": 2, "theta": 0.0},
        {"embedding": 8, "theta": 8.0},
        {"embedding": 3, "theta": 4.0, "n_neighbors": 40},
    ],
)
def test_numpy_smap_one_step_is_pyedm(kw):
    x = _series(420, seed=6)[:, 0]
    train, y = x[:300], x[300:]
    ref = SMapForecaster(**kw).fit(train)
    fast = SMapForecaster(engine="numpy", **kw).fit(train)
    for h in (1, 5):
        np.testing.assert_allclose(fast.forecast(y, h), ref.forecast(y, h), rtol=1e-9, atol=1e-12)


def test_numpy_smap_with_neighbours_picks_pyedms_rows_among_ties():
    """Integer values tie at the k-th distance: the same k-d tree returns the same rows."""
    x = np.round(_series(260, seed=3)[:, 0] * 4)
    kw = {"embedding": 2, "theta": 1.0, "n_neighbors": 25}
    ref = SMapForecaster(**kw).fit(x[:180]).forecast(x[180:], 1)
    fast = SMapForecaster(engine="numpy", **kw).fit(x[:180]).forecast(x[180:], 1)
    np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-12)


def test_numpy_smap_solves_ill_conditioned_fits_as_lstsq_does(monkeypatch):
    """A smooth flow at E = 10, theta = 8: the local fits are too ill-conditioned for the
    normal equations, and those origins go through the SVD, like pyEDM's lstsq."""
    from tssdpa.data.synthetic import lorenz

    x = np.asarray(lorenz(700, seed=1))
    train, y = x[:560], x[560:]
    ref = SMapForecaster(embedding=10, theta=8.0).fit(train).forecast(y, 2)
    svd_rows = []
    svd = np.linalg.svd
    monkeypatch.setattr(np.linalg, "svd", lambda a, **kw: svd_rows.append(len(a)) or svd(a, **kw))
    # nor an overflow on the way, whatever uninitialised float memory holds
    empty = np.empty

    def garbage(*a, **kw):
        out = empty(*a, **kw)
        if out.dtype == np.float64:
            out.fill(1e308)
        return out

    monkeypatch.setattr(np, "empty", garbage)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fast = SMapForecaster(embedding=10, theta=8.0, engine="numpy").fit(train).forecast(y, 2)
    assert sum(svd_rows) > 0
    np.testing.assert_allclose(fast, ref, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("cls", [SimplexForecaster, SMapForecaster])
def test_numpy_engine_forecasts_a_constant_series_as_that_constant(cls):
    """Every distance is 0 (pyEDM's S-map fails there: its weights are NaN)."""
    x = np.full(120, 2.5)
    path = cls(embedding=3, engine="numpy").fit(x[:90]).forecast_path(x, 4)
    np.testing.assert_allclose(path[2:], 2.5)


def test_numpy_smap_path_shares_a_library_per_group_of_steps():
    """Steps 1, 2, 3-4, 5-8 each use the library of the group's largest step: pyEDM's numbers
    at that step, and the hand-written S-map on that library at the others."""
    x = _series(360, seed=7)[:, 0]
    train, y = x[:260], x[260:]
    path = SMapForecaster(embedding=3, theta=3.0, engine="numpy").fit(train).forecast_path(y, 8)
    ref = SMapForecaster(embedding=3, theta=3.0).fit(train)
    for h in (1, 2, 4, 8):
        np.testing.assert_allclose(path[:, h - 1], ref.forecast(y, h), rtol=1e-9, atol=1e-12)
    for h, top in ((3, 4), (5, 8), (7, 8)):
        cut = train[: len(train) - (top - h)]  # the library of step `top`, targets h ahead
        for t in (2, 40, 97):
            want = _smap_reference(cut, y, t, h, 3, 1, 3.0)
            assert path[t, h - 1] == pytest.approx(want, rel=1e-9)


def test_pyedm_is_imported_lazily():
    """``import tssdpa.baselines`` works without pyEDM: no module-level import of it."""
    import tssdpa.baselines.edm as edm

    tree = ast.parse(Path(edm.__file__).read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    names = {a.name for n in top for a in n.names} | {getattr(n, "module", "") for n in top}
    assert not {m for m in names if m and m.startswith("pyEDM")}


@pytest.mark.parametrize("name", ["simplex", "smap"])
def test_the_harness_runs_them(name):
    task = forecast_tasks("ar2", seeds=(0,), n=400, horizons=(1, 3), lookback=16)[0]
    spec = get_method(name, "forecast")
    assert spec.family not in ("projection", "learned")  # peers, not ours
    rows, _ = evaluate_forecaster(spec, task, budget=2)
    assert [r["horizon"] for r in rows] == [1, 3]
    assert all(np.isfinite(r["mse"]) and np.isfinite(r["val_mse"]) for r in rows)
    assert all(r["n_origins"] > 0 and r["n_configs"] == 2 for r in rows)


def test_pyedm_smap_on_a_constant_channel_is_a_value_error_naming_it_and_the_numpy_engine():
    # pyEDM's S-map weights by distance over the mean distance, 0/0 on a constant library:
    # its numpy.linalg.LinAlgError ("SVD did not converge") escaped fit-then-forecast as is
    t = np.arange(300)
    y = np.c_[np.sin(0.2 * t), np.full(300, 5.0)]
    fc = SMapForecaster().fit(y[:200])
    with pytest.raises(ValueError, match="y channel 1: pyEDM could not solve.*engine='numpy'"):
        fc.forecast(y, 1)
    numpy_engine = SMapForecaster(engine="numpy").fit(y[:200]).forecast(y, 1)
    np.testing.assert_allclose(numpy_engine[2:, 1], 5.0)


@pytest.mark.parametrize("engine", ["pyedm", "numpy"])
@pytest.mark.parametrize("cls", [SimplexForecaster, SMapForecaster])
def test_a_channel_with_a_missing_tail_has_the_library_of_its_readings_not_a_filled_tail(
    cls, engine
):
    # filled forward, channel 0's last 100 samples were a constant run of library states
    # (Simplex forecasts off by up to 0.37 on this unit sine)
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(400) * 0.3) + 0.05 * rng.standard_normal(400)
    train = np.column_stack([x[:300], x[:300]])
    train[200:, 0] = np.nan
    test = np.column_stack([x[300:], x[300:]])
    both = cls(3, engine=engine).fit(train).forecast_path(test, 3)
    np.testing.assert_array_equal(
        both[:, :, 0], cls(3, engine=engine).fit(x[:200]).forecast_path(x[300:], 3)
    )
    np.testing.assert_array_equal(
        both[:, :, 1], cls(3, engine=engine).fit(x[:300]).forecast_path(x[300:], 3)
    )
    train[5:, 0] = np.nan  # 5 readings: too few for a library
    with pytest.raises(ValueError, match="library rows in y channel 0's readings of 5 samples"):
        cls(3, engine=engine).fit(train)
