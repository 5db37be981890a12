"""ProjectionForecaster: the analogue model against an explicit loop, exact causality, the
cross-validated choice of its structure, and what a user gets from fit() alone."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa.baselines import AutoRegForecaster
from tssdpa.estimators.persistence import UncheckedFileWarning
from tssdpa.filters import ProjectionForecaster, analogue_selection, analogues
from tssdpa.filters.analogue_data import AnalogueData, iterate_one_step
from tssdpa.filters.analogue_selection import drift_holdout
from tssdpa.filters.analogues import (
    DEFAULT_RIDGE,
    RANGE_MARGIN,
    anchor_horizons,
    nearest_anchor,
    training_overlap,
)
from tssdpa.filters.residual import ResidualProjectionForecaster
from tssdpa.signal import neighbours
from tssdpa.signal.embedding import delay_embedding
from tssdpa.signal.neighbours import OFF_CLOUD_LEVERAGE, OFF_CLOUD_SHIFT


def logistic_map(n, seed=0, noise=0.0):
    rng = np.random.default_rng(seed)
    x = np.empty(n)
    x[0] = 0.3 + 0.1 * rng.random()
    for t in range(1, n):
        x[t] = 3.9 * x[t - 1] * (1 - x[t - 1])
    return x + noise * rng.normal(size=n)


def ar2(n, seed=0):
    rng = np.random.default_rng(seed)
    z = np.zeros(n)
    e = rng.normal(size=n)
    for t in range(2, n):
        z[t] = 1.5 * z[t - 1] - 0.7 * z[t - 2] + e[t]
    return z


def rmse(pred, y, h, start):
    return float(np.sqrt(np.nanmean((pred[start:-h] - y[start + h :]) ** 2)))


def reference_forecast(fc, train, y, h, run=0, start=0):
    """Explicit loops for the fitted structure of horizon h: keys are the training patterns
    and the patterns of y, each once its future is known at the origin, less those of its
    first ``run`` rows (which repeat the training series from its row ``start``) whose twin
    in the training series is a training key (its h-step future inside the series)."""
    s = fc.structures_[h]
    z_tr = (train - fc.mean_[0]) / fc.scale_[0]
    z = (y - fc.mean_[0]) / fc.scale_[0]
    E_tr = delay_embedding(z_tr[:, None], s.embedding, delay=s.delay)
    E_y = delay_embedding(z[:, None], s.embedding, delay=s.delay)
    lib = [(E_tr[j], z_tr[j + h]) for j in range(len(z_tr) - h) if np.isfinite(E_tr[j]).all()]
    # the global linear model (fitted on the training patterns, as fit does); the recursive
    # one fits the next step and feeds each forecast back as the newest sample, h times
    recursive = s.model == "recursive_linear"
    fit_h = 1 if recursive else h
    pairs = [(E_tr[j], z_tr[j + fit_h]) for j in range(len(z_tr) - fit_h)]
    X = np.array([np.r_[1.0, k] for k, _ in pairs if np.isfinite(k).all()])
    Y = np.array([v for k, v in pairs if np.isfinite(k).all()])
    ridge = s.ridge if s.ridge is not None else DEFAULT_RIDGE  # the mean has no linear part
    G = X.T @ X
    G += np.eye(len(G)) * (ridge * np.trace(G) / len(G) + 1e-12)
    beta = np.linalg.solve(G, X.T @ Y)
    lib_keys, lib_vals = np.array([k for k, _ in lib]), np.array([v for _, v in lib])
    finite_y = np.isfinite(E_y).all(axis=1)
    out = np.full(len(z), np.nan)
    for t in range(len(z)):
        q = E_y[t]
        if not np.isfinite(q).all():
            continue
        own = [
            j
            for j in range(0, t - h + 1)
            if finite_y[j] and not (j < run and start + j + h < len(z_tr))
        ]
        cand_keys = np.vstack([lib_keys, E_y[own]])  # the training keys first, then y's
        cand_vals = np.r_[lib_vals, z[np.array(own, dtype=int) + h]]
        lin_q = np.r_[1.0, q] @ beta
        if s.model == "linear":
            out[t] = lin_q
            continue
        if recursive:
            pattern = list(q)
            for _ in range(h):
                pattern = [np.r_[1.0, pattern] @ beta, *pattern[:-1]]
            out[t] = pattern[0]
            continue
        d = np.sqrt(np.sum((cand_keys - q) ** 2, axis=1))
        order = np.argsort(d, kind="stable")[: s.n_neighbors]
        dk, keys, vals = d[order], cand_keys[order], cand_vals[order]
        sig = s.bandwidth * dk.max() if s.sigma is None else s.sigma
        w = np.exp(-(dk**2) / (2 * sig**2))
        w /= w.sum()
        if s.model == "mean":
            out[t] = w @ vals
        elif s.model == "hybrid":
            lin_k = np.array([np.r_[1.0, k] @ beta for k in keys])
            out[t] = lin_q + w @ (vals - lin_k)
        else:  # local_linear: weighted ridge regression on [1, key - q]
            A = np.column_stack([np.ones(len(keys)), keys - q])
            D = A.shape[1] - 1
            scale = np.sum(w[:, None] * A[:, 1:] ** 2) / D
            pen = np.sqrt(ridge * scale) * np.eye(D + 1)[1:]  # the slopes' penalty as rows
            rows = np.vstack([np.sqrt(w)[:, None] * A, pen])
            out[t] = np.linalg.lstsq(rows, np.r_[np.sqrt(w) * vals, np.zeros(D)], rcond=None)[0][0]
            # far off the neighbours' cloud, moved far by the slope: their weighted mean
            off = w @ keys - q
            centred = keys - w @ keys
            gram = centred.T @ (w[:, None] * centred)
            lifted = gram + ridge * (np.trace(gram) + off @ off) / D * np.eye(D)
            leverage = off @ np.linalg.lstsq(lifted, off, rcond=None)[0]
            spread = np.sqrt(w @ (vals - w @ vals) ** 2)
            if leverage > OFF_CLOUD_LEVERAGE and abs(out[t] - w @ vals) > OFF_CLOUD_SHIFT * spread:
                out[t] = w @ vals
            # within the range of the values known at t, widened by RANGE_MARGIN of it
            known = np.r_[z_tr, z[: t + 1]]
            low, high = np.nanmin(known), np.nanmax(known)
            pad = RANGE_MARGIN * (high - low)
            out[t] = min(max(out[t], low - pad), high + pad)
    return out * fc.scale_[0] + fc.mean_[0]


def test_a_local_linear_forecast_stays_within_the_widened_range_of_what_is_known(monkeypatch):
    """Five neighbours and no ridge on a noisy map: planes that extrapolate far off the
    series (beyond 6 where it stays within [-0.2, 1.2]) unguarded; guarded, each forecast from
    origin t is the unguarded one clipped to the range of the fitted series and x[:t+1],
    widened by RANGE_MARGIN of it on each side."""
    x = logistic_map(420, noise=0.05)
    kw = {"embedding": 3, "n_neighbors": 5, "bandwidth": 0.8, "ridge": 0.0, "horizon": 3}
    fc = ProjectionForecaster(model="local_linear", **kw).fit(x[:300])
    guarded = fc.forecast(x, horizon=3)
    monkeypatch.setattr(analogues, "RANGE_MARGIN", np.inf)
    free = fc.forecast(x, horizon=3)
    low = np.fmin(x[:300].min(), np.minimum.accumulate(x))
    high = np.fmax(x[:300].max(), np.maximum.accumulate(x))
    pad = RANGE_MARGIN * (high - low)
    outside = (free < low - pad) | (free > high + pad)
    assert outside.sum() >= 3 and np.nanmax(free) > 6
    np.testing.assert_allclose(guarded, np.clip(free, low - pad, high + pad), rtol=1e-12)
    assert np.isnan(guarded[:2]).all()  # origins without a full pattern stay missing


@pytest.mark.parametrize("channels", [1, 2])
def test_predict_beyond_the_horizon_keeps_local_linear_forecasts_within_the_fitted_range(
    channels,
):
    """Each round of predict reads the last round's forecasts as history; they must not
    widen the range the next round is held to (25% a round, compounding), so every step
    stays within the fitted series' range widened by RANGE_MARGIN, channel by channel."""
    x = np.column_stack([logistic_map(300, seed=s, noise=0.05) for s in range(channels)])
    kw = {"embedding": 3, "n_neighbors": 5, "bandwidth": 0.8, "ridge": 0.0, "horizon": 3}
    fc = ProjectionForecaster(model="local_linear", channel_independent=True, **kw).fit(x)
    pred = fc.predict(300).reshape(300, channels)
    pad = RANGE_MARGIN * (x.max(axis=0) - x.min(axis=0))
    assert (pred >= x.min(axis=0) - pad).all() and (pred <= x.max(axis=0) + pad).all()
    # the case needs the guard: unguarded, the recursion diverges
    with pytest.MonkeyPatch.context() as m:
        m.setattr(analogues, "RANGE_MARGIN", np.inf)
        m.setattr(neighbours, "OFF_CLOUD_LEVERAGE", np.inf)
        assert np.abs(fc.predict(300)).max() > 1e6


def test_predict_with_a_library_size_equals_the_last_row_of_forecast_path_for_local_linear():
    """Both hold a local-linear forecast to the range of the whole fitted series, not to that
    of the library ``library_size`` keeps: predict clipped -1.47 to -0.31 (the library's range
    widened), where forecast_path's last row kept it within the early samples' [-5, 5]."""
    x = logistic_map(800, noise=0.01)
    x[:300] = 10 * x[:300] - 5  # early values far outside the library's range
    x[-1] = 1.6  # the last pattern off the library's cloud: the plane extrapolates
    kw = {"embedding": 2, "n_neighbors": 12, "bandwidth": 1.0, "ridge": 1e-6, "horizon": 3}
    fc = ProjectionForecaster(model="local_linear", library_size=200, **kw).fit(x)
    path = fc.forecast_path(x, 3)[-1]
    np.testing.assert_allclose(fc.predict(3), path, rtol=1e-12)
    library = x[-(200 + 1 + 3) :]
    pad = RANGE_MARGIN * np.ptp(library)
    assert path.min() < library.min() - pad  # the case needs the whole series' range


def _flow(n=3000, dt=0.02):
    """The x coordinate of the Lorenz system (Euler steps of dt / 10)."""
    s, out = np.array([1.0, 1.0, 20.0]), np.empty(n)
    for t in range(n):
        for _ in range(10):
            x, y, z = s
            s = s + dt / 10 * np.array([10 * (y - x), x * (28 - z) - y, x * y - 8 / 3 * z])
        out[t] = s[0]
    return out


def test_a_held_newest_sample_on_a_clean_flow_gets_its_neighbours_mean_not_a_wild_plane(
    monkeypatch,
):
    """On a clean flow the fit chooses a tiny ridge; a buffer whose newest sample repeats the
    one before (a held reading) lies far off its neighbours' thin cloud, where the plane
    extrapolated to the range guard's bound. There the forecast is their weighted mean
    (not every such forecast is caught: the guard must not fire on clean development data),
    and on the clean buffers nothing changes."""
    x = _flow()
    kw = {"embedding": 8, "n_neighbors": 40, "bandwidth": 0.25, "ridge": 1e-12}
    fc = ProjectionForecaster(model="local_linear", horizon=3, **kw).fit(x[:2000])
    ends = range(2200, 2800, 50)
    errors = {"guarded": [], "free": []}
    for end in ends:
        buf = x[end - 200 : end].copy()
        buf[-1] = buf[-2]
        errors["guarded"].append(np.abs(fc.predict(3, y=buf) - x[end : end + 3]).max())
        with monkeypatch.context() as m:
            m.setattr(neighbours, "OFF_CLOUD_LEVERAGE", np.inf)
            errors["free"].append(np.abs(fc.predict(3, y=buf) - x[end : end + 3]).max())
    free, guarded = np.array(errors["free"]), np.array(errors["guarded"])
    assert np.mean(free > 0.2 * np.ptp(x[:2000])) > 2 / 3  # most buffers need the guard
    assert guarded.mean() < free.mean() / 3 and (guarded <= free).all()
    clean = [fc.predict(3, y=x[e - 200 : e]) for e in ends]
    monkeypatch.setattr(neighbours, "OFF_CLOUD_LEVERAGE", np.inf)
    np.testing.assert_array_equal(clean, [fc.predict(3, y=x[e - 200 : e]) for e in ends])


@pytest.mark.parametrize(
    "model, delay",
    [(m, d) for m in ("mean", "local_linear", "linear", "hybrid") for d in (1, 2)]
    + [("recursive_linear", 1)],
)
def test_forecasts_equal_the_explicit_loop(model, delay):
    x = logistic_map(420, noise=0.01)
    fc = ProjectionForecaster(
        embedding=3, delay=delay, n_neighbors=7, bandwidth=0.8, model=model, horizon=3
    ).fit(x[:300])
    for h in (1, 3):
        got = fc.forecast(x, horizon=h)
        want = reference_forecast(fc, x[:300], x, h, run=300)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
        # a series that repeats the fitted one from row 100 to its end, then goes on
        got = fc.forecast(x[100:], horizon=h)
        want = reference_forecast(fc, x[:300], x[100:], h, run=200, start=100)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
        # one that departs from it at row 250, 50 rows before its end
        y = np.concatenate([x[:250], x[330:]])
        got = fc.forecast(y, horizon=h)
        want = reference_forecast(fc, x[:300], y, h, run=250)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    # a series that does not start with the fitted one: all of its patterns are new keys
    got = fc.forecast(x[300:], horizon=1)
    want = reference_forecast(fc, x[:300], x[300:], 1)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def test_a_fixed_sigma_replaces_the_adaptive_width():
    x = logistic_map(300, noise=0.01)
    fc = ProjectionForecaster(embedding=2, n_neighbors=9, sigma=0.3, model="mean").fit(x[:200])
    assert fc.structures_[1].sigma == 0.3 and fc.structures_[1].bandwidth is None
    np.testing.assert_allclose(
        fc.forecast(x, horizon=1), reference_forecast(fc, x[:200], x, 1, 200), rtol=1e-8
    )


def test_a_bandwidth_given_beside_a_fixed_sigma_is_refused_not_ignored():
    x = logistic_map(300, noise=0.01)
    kw = dict(embedding=2, n_neighbors=9, model="mean")
    with pytest.raises(ValueError, match="bandwidth or sigma, not both"):
        ProjectionForecaster(**kw, sigma=0.3, bandwidth=[0.5, 2.0]).fit(x)
    fc = ProjectionForecaster(**kw, bandwidth=[0.5, 2.0]).fit(x)  # each alone is fine
    assert fc.best_params_[1]["bandwidth"] in (0.5, 2.0)


def test_forecasts_use_nothing_after_the_origin():
    x = logistic_map(600, noise=0.01)
    fc = ProjectionForecaster(horizon=3).fit(x[:400])
    full = fc.forecast_path(x, horizon=3)
    for t in (400, 457, 520, 596):
        changed = x.copy()
        changed[t + 1 :] = 10.0 * np.random.default_rng(t).normal(size=len(x) - t - 1)
        np.testing.assert_array_equal(fc.forecast_path(changed, horizon=3)[t], full[t])
        np.testing.assert_array_equal(fc.forecast_path(x[: t + 1], horizon=3)[t], full[t])


def test_a_chunk_that_starts_inside_the_fitted_series_gives_the_same_forecasts():
    x = logistic_map(700, noise=0.01)
    fc = ProjectionForecaster(horizon=2).fit(x[:500])
    whole = fc.forecast_path(x, horizon=2)
    chunk = fc.forecast_path(x[380:], horizon=2)
    np.testing.assert_allclose(chunk[120:], whole[500:], rtol=1e-12)


def test_a_gap_in_a_copy_of_the_fitted_series_leaves_the_forecasts_after_it_unchanged():
    # the rows after the gap still repeat the fitted series: their patterns are training keys
    # and must not be counted a second time as keys of the series forecast
    x = logistic_map(700, noise=0.01)
    fc = ProjectionForecaster(horizon=2).fit(x[:500])
    whole = fc.forecast_path(x, horizon=2)
    gappy = x.copy()
    gappy[200:205] = np.nan
    assert (
        training_overlap(fc.train_, gappy[:, None])
        == training_overlap(fc.train_, x[:, None])
        == (500, 0)
    )
    after = 205 + 8  # past every pattern that spans the gap
    np.testing.assert_array_equal(fc.forecast_path(gappy, horizon=2)[after:], whole[after:])


def test_fit_alone_beats_a_tuned_autoregression_on_a_chaotic_map():
    x = logistic_map(1500)
    fc = ProjectionForecaster(horizon=1).fit(x[:500])
    ours = rmse(fc.forecast(x, horizon=1), x, 1, 500)
    best_ar = min(
        rmse(AutoRegForecaster(lags=p).fit(x[:500]).forecast(x, horizon=1), x, 1, 500)
        for p in (1, 2, 4, 8, 16)
    )
    assert ours < 0.1 * best_ar
    assert fc.best_params_[1]["embedding"] <= 3  # a one-dimensional map needs a short pattern


def test_fit_alone_is_close_to_autoregression_on_a_linear_process():
    y = ar2(3000, seed=1)
    fc = ProjectionForecaster(horizon=1).fit(y[:2000])
    ours = rmse(fc.forecast(y, horizon=1), y, 1, 2000)
    ar = rmse(AutoRegForecaster(lags=2).fit(y[:2000]).forecast(y, horizon=1), y, 1, 2000)
    assert ours <= 1.02 * ar


def test_search_results_and_verbose_report(capsys):
    x = logistic_map(400, noise=0.01)
    fc = ProjectionForecaster(horizon=20, embedding=[1, 2, 3], model=["mean", "linear"])
    fc.fit(x[:300], verbose=True)
    out = capsys.readouterr().out
    assert "horizon 1:" in out and "horizon 20:" in out
    # every horizon up to 12 has its own structure; beyond, geometric anchors up to 20
    anchors = sorted(fc.best_params_)
    assert anchors[:12] == list(range(1, 13)) or anchors[0] == 1 and anchors[-1] == 20
    cv = fc.cv_results_
    assert set(cv["model"]) == {"mean", "linear"} and set(cv["embedding"]) <= {1, 2, 3}
    for h, params in fc.best_params_.items():
        at_h = cv[cv["horizon"] == h]
        top = at_h.sort_values("mse").iloc[0]
        chosen = at_h[
            (at_h["embedding"] == params["embedding"]) & (at_h["model"] == params["model"])
            & (at_h["n_neighbors"] == params["n_neighbors"])
        ]  # fmt: skip
        # the one-standard-error rule: never far from the best
        assert chosen["mse"].min() <= 1.5 * top["mse"]


def test_the_verbose_report_gives_the_error_of_the_chosen_structure_and_of_the_best():
    import contextlib
    import io
    import re

    x = logistic_map(300, noise=0.3)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fc = ProjectionForecaster(horizon=2, model=["mean", "local_linear"], max_fit_samples=200)
        fc.fit(x, verbose=True)
    cv = fc.cv_results_
    for h, params in fc.best_params_.items():
        line = next(s for s in out.getvalue().splitlines() if s.startswith(f"horizon {h}:"))
        said, best = map(float, re.search(r"MSE ([\d.e-]+), best ([\d.e-]+)", line).groups())
        at_h = cv[cv["horizon"] == h]
        row = at_h[np.logical_and.reduce([at_h[k].eq(v) if v is not None else at_h[k].isna()
                                          for k, v in params.items()])]  # fmt: skip
        np.testing.assert_allclose(said, row["mse"].iloc[0], rtol=1e-3)
        np.testing.assert_allclose(best, at_h["mse"].min(), rtol=1e-3)


def test_a_linear_process_keeps_the_linear_model_and_a_chaotic_one_does_not():
    y = ar2(2000, seed=2)
    assert ProjectionForecaster(horizon=1).fit(y).best_params_[1]["model"] == "linear"
    x = logistic_map(600)
    assert ProjectionForecaster(horizon=1).fit(x).best_params_[1]["model"] != "linear"


def test_long_linear_patterns_keep_ten_rows_per_coefficient_of_every_channel():
    rng = np.random.default_rng(0)
    y = ar2(600, seed=3)[:, None] + 0.1 * rng.normal(size=(600, 3))  # 3 channels
    fc = ProjectionForecaster(horizon=1, model="linear").fit(y)
    longest = int(fc.cv_results_["embedding"].max())
    # a pattern of E samples of 3 channels has 3E coefficients: at most 600 / 30 = 20 samples
    assert 10 < longest <= 600 // 30
    assert int(ProjectionForecaster(horizon=1, model="linear").fit(y[:, 0])
               .cv_results_["embedding"].max()) > longest  # fmt: skip


def test_the_linear_model_reaches_a_dependence_further_back_than_48_samples():
    # y[t] = 0.9 y[t - 96] + noise: only a pattern of 96 samples sees the lag that matters
    rng = np.random.default_rng(0)
    e, y = rng.standard_normal(3000), np.zeros(3000)
    for t in range(3000):
        y[t] = e[t] + (0.9 * y[t - 96] if t >= 96 else 0.0)
    best = ProjectionForecaster(horizon=1).fit(y).best_params_[1]
    assert best["model"] == "linear" and best["embedding"] >= 96
    # a pattern needs ten rows per coefficient: on 900 samples 64 is tried, 96 is not
    short = ProjectionForecaster(horizon=1).fit(y[:900]).cv_results_
    assert int(short["embedding"].max()) <= 90


def test_the_long_linear_patterns_are_left_out_only_where_the_linear_model_is_far_behind(
    monkeypatch,
):
    chaotic, linear = logistic_map(600), ar2(600, seed=3)
    # the logistic map: neighbour models are exact, the linear model 100x worse at best
    assert ProjectionForecaster(horizon=1).fit(chaotic).cv_results_["embedding"].max() <= 10
    assert ProjectionForecaster(horizon=1).fit(linear).cv_results_["embedding"].max() > 10
    # a series that changed regime is scored both ways, and minimax pairs the candidates
    # both scorings reached: one scoring leaving the long patterns out could move its pick
    # (the logistic map gone quiet: forward, the linear model is far behind; leave-one-out,
    # not)
    drifted = np.concatenate([chaotic[:450], 0.2 * chaotic[450:]])
    cv = ProjectionForecaster(horizon=1).fit(drifted).cv_results_
    assert set(cv["scoring"]) == {"leave-one-out", "forward"}
    assert all(g["embedding"].max() > 10 for _, g in cv.groupby("scoring"))
    monkeypatch.setattr(analogue_selection, "LINEAR_FAR_BEHIND", np.inf)  # the rule off
    assert ProjectionForecaster(horizon=1).fit(chaotic).cv_results_["embedding"].max() > 10


def test_the_linear_model_is_far_behind_only_where_it_is_at_every_anchor():
    from tssdpa.filters.analogue_selection import _Scores
    from tssdpa.filters.analogues import Structure

    scores = _Scores([1, 2], "leave-one-out")
    assert not scores.linear_far_behind(100.0)  # nothing scored yet
    lin = Structure(3, 1, 0, None, None, "linear", 1e-3)
    near = Structure(3, 1, 8, 0.5, None, "local_linear", 1e-3)
    scores.record(lin, np.array([[1.0, 1.0]]))
    scores.record(near, np.array([[1e-3, 0.5]]))  # 1000x better at anchor 1, 2x at anchor 2
    assert not scores.linear_far_behind(100.0)
    scores.record(near, np.array([[1e-3, 1e-3]]))
    assert scores.linear_far_behind(100.0) and not scores.linear_far_behind(1e4)
    no_linear = _Scores([1], "leave-one-out")
    no_linear.record(near, np.array([[1.0]]))
    assert no_linear.linear_far_behind(100.0)  # no linear score: behind


def test_a_longer_candidate_drops_early_queries_but_does_not_move_the_others(monkeypatch):
    y = ar2(2000, seed=4)[:, None]
    base = {"embedding": [1, 2, 3], "delay": [1], "n_neighbors": lambda D: [8],
            "width": [("bandwidth", 1.0)], "model": ["linear", "mean"],
            "ridge": [1e-3]}  # fmt: skip
    errors: dict = {3: {}, 200: {}}
    record = analogue_selection._Scores.record

    def spy(self, structure, sq, *mse):  # keeps each run's per-query errors (``longest``: the run)
        errors[longest][(structure.embedding, structure.model)] = sq
        return record(self, structure, sq, *mse)

    monkeypatch.setattr(analogue_selection._Scores, "record", spy)
    for longest in (3, 200):
        cands = {**base, "linear_embedding": [longest] if longest > 3 else []}
        analogue_selection.choose_structures(y, 1, cands, max_queries=500)
    short, long = errors[3], errors[200]
    assert (200, "linear") in long and len(long[(200, "linear")]) < len(short[(1, "mean")])
    for key, sq in short.items():  # the same query times, less the early ones
        np.testing.assert_array_equal(long[key], sq[len(sq) - len(long[key]) :])


def test_pandas_save_load_and_predict(tmp_path):
    idx = pd.date_range("2024-01-01", periods=400, freq="h")
    s = pd.Series(logistic_map(400, noise=0.01), index=idx, name="x")
    fc = ProjectionForecaster(horizon=3).fit(s[:300])
    out = fc.forecast(s, horizon=2)
    assert isinstance(out, pd.Series) and out.index.equals(idx)
    # pandas out: predict on the hours after the fit, forecast_path a row per origin
    assert fc.predict(3).index.equals(idx[300:303]) and fc.predict(3).name == "x"
    np.testing.assert_allclose(fc.predict(3), fc.forecast_path(s[:300], horizon=3).iloc[-1])
    fc.save(tmp_path / "fc")
    g = ProjectionForecaster.load(tmp_path / "fc")
    np.testing.assert_array_equal(g.forecast(s, horizon=2).to_numpy(), out.to_numpy())
    pd.testing.assert_series_equal(g.predict(3), fc.predict(3))


def test_channel_independent_equals_separate_fits(tmp_path):
    y = np.column_stack([logistic_map(400, noise=0.01), ar2(400)])
    kw = dict(horizon=2, embedding=[1, 2, 3], model=["mean", "local_linear"])
    joint = ProjectionForecaster(channel_independent=True, **kw).fit(y)
    sep = [ProjectionForecaster(**kw).fit(y[:, c]) for c in range(2)]
    expected = np.column_stack([m.forecast(y[:, c], horizon=2) for c, m in enumerate(sep)])
    np.testing.assert_array_equal(joint.forecast(y, horizon=2), expected)
    assert joint.forecast_path(y, horizon=2).shape == (400, 2, 2)
    joint.save(tmp_path / "ci")
    again = ProjectionForecaster.load(tmp_path / "ci")
    np.testing.assert_array_equal(again.forecast(y, horizon=2), expected)
    np.testing.assert_array_equal(again.predict(2), joint.predict(2))


def test_nested_channel_states_are_checked_on_load(tmp_path):
    y = np.column_stack([logistic_map(300), ar2(300)])
    ProjectionForecaster(embedding=2, channel_independent=True).fit(y).save(tmp_path / "f")
    cfg_path = tmp_path / "f" / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["fitted"]["channel_models_"][0]["_forecast_h"] = 1  # would shadow a method
    cfg_path.write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="unknown fitted attribute '_forecast_h'"):
        ProjectionForecaster.load(tmp_path / "f")


def _set_structure_field(field, value):
    def edit(cfg):
        for p in cfg["fitted"]["best_params_"].values():
            p[field] = value

    return edit


@pytest.mark.parametrize(
    "edit, message",
    [
        (_set_structure_field("model", "neural"), "model must be one of"),
        (_set_structure_field("embedding", 0), "embedding must be"),
        (_set_structure_field("embedding", "3"), "embedding must be an int"),
        (_set_structure_field("embedding", 10**9), "longer than the fitted series"),
        (_set_structure_field("delay", 0), "delay must be"),
        (_set_structure_field("n_neighbors", 0), "n_neighbors must be"),
        (_set_structure_field("n_neighbors", 10**9), "n_neighbors 1000000000 exceeds"),
        (_set_structure_field("bandwidth", -0.5), "bandwidth must be"),
        (_set_structure_field("sigma", 0.3), "exactly one of bandwidth and sigma"),
        (_set_structure_field("ridge", float("nan")), "ridge must be"),
        (
            lambda cfg: [
                p.update(model="recursive_linear", delay=2, n_neighbors=0, bandwidth=None)
                for p in cfg["fitted"]["best_params_"].values()
            ],
            "'recursive_linear' needs delay 1",
        ),  # fmt: skip
        (_set_structure_field("weight", 1.0), "unknown fields \\['weight'\\]"),
        (lambda cfg: cfg["fitted"]["best_params_"].pop("2"), "must hold the horizons \\[1, 2\\]"),
        (lambda cfg: cfg["fitted"]["best_params_"].update({"1": [3]}), "must be an object"),
    ],
)
def test_a_tampered_saved_structure_is_refused_on_load_naming_the_field(
    edit, message, tmp_path, edit_config
):
    y = logistic_map(300, noise=0.01)
    fc = ProjectionForecaster(horizon=2, embedding=2, model="mean").fit(y)
    fc.save(tmp_path / "f")
    edit_config(tmp_path / "f", edit)
    with pytest.raises(ValueError, match=message):
        ProjectionForecaster.load(tmp_path / "f")


@pytest.mark.parametrize("dtype", [np.int64, np.float16, np.float32])
def test_a_saved_training_series_of_another_dtype_is_refused(dtype, tmp_path):
    # an int64 train_ loaded and moved the forecasts
    from safetensors.numpy import load_file, save_file

    y = logistic_map(300, noise=0.01)
    ProjectionForecaster(horizon=2, embedding=2, model="mean").fit(y).save(tmp_path / "f")
    arrays = load_file(str(tmp_path / "f" / "arrays.safetensors"))
    arrays["train_"] = arrays["train_"].astype(dtype)
    save_file(arrays, str(tmp_path / "f" / "arrays.safetensors"))
    with pytest.raises(ValueError, match="array 'train_' must be float64"):
        ProjectionForecaster.load(tmp_path / "f")


def test_a_saved_forecaster_without_its_structures_is_refused(tmp_path, edit_config):
    # it loaded, then predict raised AttributeError: no structures_
    ProjectionForecaster(horizon=2, embedding=2).fit(logistic_map(300, noise=0.01)).save(
        tmp_path / "f"
    )
    edit_config(tmp_path / "f", lambda cfg: cfg["fitted"].pop("best_params_"))
    with pytest.raises(ValueError, match="missing fitted 'best_params_'"):
        ProjectionForecaster.load(tmp_path / "f")


def test_a_saved_forecaster_without_its_training_series_is_refused(tmp_path):
    from safetensors.numpy import load_file, save_file

    y = logistic_map(300, noise=0.01)
    ProjectionForecaster(horizon=2).fit(y).save(tmp_path / "f")
    arrays = load_file(str(tmp_path / "f" / "arrays.safetensors"))
    save_file(
        {k: v for k, v in arrays.items() if k != "train_"},
        str(tmp_path / "f" / "arrays.safetensors"),
    )
    with pytest.raises(ValueError, match="missing array 'train_'"):
        ProjectionForecaster.load(tmp_path / "f")


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("scale_", np.ones(3), "scale_ must hold one value per channel, each > 0"),
        ("scale_", np.zeros(1), "scale_ must hold one value per channel, each > 0"),
        ("mean_", np.full(1, np.nan), "array 'mean_' holds NaN"),
    ],
)
def test_a_tampered_saved_standardisation_is_refused_naming_it(name, value, message, tmp_path):
    from safetensors.numpy import load_file, save_file

    ProjectionForecaster(horizon=2).fit(logistic_map(300, noise=0.01)).save(tmp_path / "f")
    path = str(tmp_path / "f" / "arrays.safetensors")
    save_file({**load_file(path), name: value}, path)
    with pytest.raises(ValueError, match=message):
        ProjectionForecaster.load(tmp_path / "f")


def test_bad_arguments_raise_at_fit_naming_them():
    y = logistic_map(200)
    cases = [
        ({"embedding": 0}, ValueError, "embedding"),
        ({"embedding": [2, 2.5]}, TypeError, "embedding"),
        ({"delay": 0}, ValueError, "delay"),
        ({"n_neighbors": [0]}, ValueError, "n_neighbors"),
        ({"bandwidth": -1.0}, ValueError, "bandwidth"),
        ({"sigma": 0.0}, ValueError, "sigma"),
        ({"model": "neural"}, ValueError, "model"),
        ({"ridge": -1.0}, ValueError, "ridge"),
        ({"ridge": float("nan")}, ValueError, "ridge"),
        ({"library_size": 2}, ValueError, "library_size"),
        ({"horizon": 0}, ValueError, "horizon"),
        ({"embedding": []}, ValueError, "embedding is an empty list"),
        ({"n_neighbors": []}, ValueError, "n_neighbors is an empty list"),
        ({"bandwidth": ()}, ValueError, "bandwidth is an empty list"),
        ({"model": []}, ValueError, "model is an empty list"),
    ]
    for kwargs, exc, name in cases:
        with pytest.raises(exc, match=name):
            ProjectionForecaster(**kwargs).fit(y)
    with pytest.raises(ValueError, match="fit"):
        ProjectionForecaster().forecast(y)
    fc = ProjectionForecaster(embedding=2, horizon=2).fit(y)
    with pytest.raises(ValueError, match="horizon 2"):
        fc.forecast(y, horizon=3)
    with pytest.raises(ValueError, match="channel"):
        fc.forecast(np.column_stack([y, y]))
    with pytest.raises(ValueError, match="all NaN"):
        ProjectionForecaster().fit(np.full(50, np.nan))


def test_candidates_given_as_numpy_arrays_are_the_same_candidates_as_lists():
    y = logistic_map(300, noise=0.01)
    kw = dict(embedding=2, n_neighbors=9, model="mean", horizon=1)
    for name, values in (("bandwidth", [0.5, 1.0]), ("delay", [1, 2])):
        extra = {"model": ["mean", "recursive_linear"]} if name == "delay" else {}
        as_list = ProjectionForecaster(**{**kw, **extra, name: values}).fit(y)
        as_array = ProjectionForecaster(**{**kw, **extra, name: np.array(values)}).fit(y)
        assert as_array.best_params_ == as_list.best_params_
        assert len(as_array.cv_results_) == len(as_list.cv_results_)


@pytest.mark.parametrize("model", ["mean", "linear", "recursive_linear", "hybrid"])
def test_a_refit_given_the_chosen_structure_chooses_it_and_forecasts_alike(model):
    y = ar2(400, seed=3)
    fc = ProjectionForecaster(horizon=1, model=model, max_fit_samples=200).fit(y[:300])
    again = ProjectionForecaster(horizon=1, max_fit_samples=200, **fc.best_params_[1])
    again.fit(y[:300])
    assert again.best_params_ == fc.best_params_
    np.testing.assert_array_equal(again.forecast(y, horizon=1), fc.forecast(y, horizon=1))
    with pytest.raises(ValueError, match="n_neighbors must be an integer >= 1"):
        ProjectionForecaster(n_neighbors=0, model=["mean", "linear"]).fit(y)


def test_old_parameter_names_still_work_with_a_deprecation_warning():
    y = logistic_map(300, noise=0.01)
    with pytest.warns(DeprecationWarning, match="deprecated"):
        old = ProjectionForecaster(lags=3, window=200, model="analogue", horizon=2).fit(y)
    new = ProjectionForecaster(embedding=3, library_size=200, model="mean", horizon=2).fit(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(old.forecast(y, horizon=2), new.forecast(y, horizon=2))


def test_library_size_keeps_the_newest_patterns_only():
    x = logistic_map(900, noise=0.01)
    fc = ProjectionForecaster(embedding=2, n_neighbors=5, model="mean", library_size=100)
    fc.fit(x[:600])
    same = ProjectionForecaster(embedding=2, n_neighbors=5, model="mean").fit(x[600 - 102 : 600])
    np.testing.assert_allclose(fc.forecast(x[600:], 1), same.forecast(x[600:], 1), rtol=1e-12)


def test_library_size_keeps_the_newest_patterns_with_readings_before_a_missing_tail():
    # the library was the newest rows of the series: a tail of 150 missing samples left none
    # of the newest 102 with a reading, and fit said "y has 600 samples, 450 of them known:
    # too few complete patterns" (and a shorter tail left fewer than library_size patterns)
    x = logistic_map(900, noise=0.01)
    train = x[:600].copy()
    train[450:] = np.nan
    kw = dict(embedding=2, n_neighbors=5, bandwidth=1.0, model="mean")
    fc = ProjectionForecaster(library_size=100, **kw).fit(train)
    same = ProjectionForecaster(**kw).fit(x[450 - 102 : 450])
    np.testing.assert_allclose(fc.forecast(x[600:], 1), same.forecast(x[600:], 1), rtol=1e-12)


def test_a_holdout_is_the_last_part_of_the_readings_before_a_missing_tail():
    # holdout=0.25 scored on the last 150 of 600 rows, all missing: "y has 600 samples, 400
    # of them known: too few complete patterns"; a tail of 100 left it 50 readings to choose on
    x = logistic_map(800, noise=0.01)
    for tail in (100, 200):
        train = x[:600].copy()
        train[600 - tail :] = np.nan
        fc = ProjectionForecaster(horizon=2, holdout=0.25).fit(train)
        same = ProjectionForecaster(horizon=2, holdout=0.25).fit(x[: 600 - tail])
        assert fc.best_params_ == same.best_params_
        np.testing.assert_allclose(fc.forecast(x[600:], 1), same.forecast(x[600:], 1), rtol=1e-12)


def test_a_fit_with_a_missing_tail_forecasts_a_series_that_repeats_its_readings_as_a_fit_on_them():
    # the missing tail counted as training rows that the series repeated: the patterns of the
    # series whose future fell there were neither its keys nor library keys (2 keys lost)
    x = logistic_map(800, noise=0.01)
    train = x[:600].copy()
    train[300:] = np.nan
    kw = dict(embedding=2, n_neighbors=5, bandwidth=1.0, model="mean", horizon=2)
    fc = ProjectionForecaster(**kw).fit(train)
    same = ProjectionForecaster(**kw).fit(x[:300])
    np.testing.assert_allclose(fc.forecast_path(x, 2), same.forecast_path(x, 2), rtol=1e-12)


def test_library_size_fits_a_given_embedding_longer_than_max_embedding_on_that_many_patterns(
    monkeypatch,
):
    # the fit cut its library for patterns of max_embedding=10: 60 + 9 + 1 rows left E=50
    # 20 patterns with a future (its forecasts use 60), and 600 known samples were "too few
    # complete patterns and futures for any candidate structure"
    x = logistic_map(700, noise=0.01)
    seen = []
    real = analogue_selection._score_all
    monkeypatch.setattr(
        analogue_selection, "_score_all", lambda z, *a, **k: seen.append(len(z)) or real(z, *a, **k)
    )
    fc = ProjectionForecaster(library_size=60, embedding=50, horizon=1, model="mean")
    fc.fit(x[:600])
    assert seen == [60 + 49 + 1]  # the rows its forecasts read: 60 patterns of 50 samples
    assert np.isfinite(fc.forecast(x, 1)[600:]).all()


def test_library_size_caps_the_long_linear_patterns_at_ten_library_rows_per_coefficient():
    from tssdpa.filters.analogue_data import default_delays
    from tssdpa.signal.embedding import standardise

    y = ar2(5000, seed=5)
    fc = ProjectionForecaster(horizon=1, library_size=300, holdout=None).fit(y)
    tau = max(default_delays(standardise(fc.train_, fc.mean_, fc.scale_), 10))
    rows = 300 + (10 - 1) * tau + 1  # the library and the span of the longest pattern tried
    assert 10 < int(fc.cv_results_["embedding"].max()) <= rows // 10
    assert int(ProjectionForecaster(horizon=1).fit(y).cv_results_["embedding"].max()) > 48


@pytest.mark.parametrize(
    ("rows", "channels", "longest"),
    [(8000, 1, 336), (100_000, 1, 256), (34_560, 7, 128), (8_640, 7, 96)],
)
def test_the_long_linear_patterns_stop_where_their_embedding_would_exceed_2_to_the_25_values(
    rows, channels, longest
):
    z = np.zeros((rows, channels))
    ladder = ProjectionForecaster(horizon=1)._candidates(z)["linear_ladder"]
    assert max(ladder) == longest and max(ladder) * channels * rows <= 1 << 25


def test_a_simpler_structure_whose_excess_error_sits_in_a_few_queries_is_not_near_best():
    """Paired standard errors are as large as the mean excess when the excess sits in one
    query; the relative cap keeps such a candidate (1000x worse) from being called near."""
    from tssdpa.filters.analogue_selection import _Scores
    from tssdpa.filters.analogues import Structure

    scores = _Scores([1], "leave-one-out")
    complex_ = Structure(8, 1, 20, 0.5, None, "local_linear", 1e-9)
    simple = Structure(2, 1, 20, 0.5, None, "mean")
    rng = np.random.default_rng(0)
    good = rng.exponential(1e-6, size=(1000, 1))
    bad = good.copy()
    bad[500] = 1.0  # one query: MSE 1e-3, a thousand times the complex model's
    scores.record(complex_, good)
    scores.record(simple, bad)
    assert scores.simplest_near_best(0) == complex_
    nearly = good * rng.uniform(0.9, 1.1, size=good.shape)  # as good, up to noise
    scores.record(simple, nearly)
    assert scores.simplest_near_best(0) == simple


def test_among_the_linear_models_near_the_best_the_lower_error_is_kept_not_the_shorter():
    """A longer linear pattern nests the shorter: within the near-best set its length is no
    complexity, while a neighbour model's shorter pattern is still preferred."""
    from tssdpa.filters.analogue_selection import _Scores
    from tssdpa.filters.analogues import Structure

    base = 1.0 + np.random.default_rng(0).exponential(1.0, size=(400, 1))  # MSE about 2
    swing = np.where(np.arange(400) % 2, -0.5, 0.5)[:, None]  # paired 2 SE: 0.05

    def worse_by(excess):  # near the best: inside two paired standard errors and the 5% cap
        return base + swing + excess

    best = Structure(10, 1, 22, 0.5, None, "hybrid", 1e-9)
    short, long_ = (Structure(E, 1, 0, None, None, "recursive_linear", 1e-6) for E in (6, 24))
    scores = _Scores([1], "leave-one-out")
    scores.record(best, base)
    scores.record(short, worse_by(0.04))
    scores.record(long_, worse_by(0.01))
    assert set(scores.near(0, 0)) == {0, 1, 2}
    assert scores.simplest_near_best(0) == long_
    near_short, near_long = (Structure(E, 1, 22, 0.5, None, "mean") for E in (3, 8))
    scores = _Scores([1], "leave-one-out")
    scores.record(near_long, base)
    scores.record(near_short, worse_by(0.04))
    assert scores.simplest_near_best(0) == near_short


@pytest.mark.parametrize("h", [1, 2])
def test_default_fit_beats_simplex_and_smap_tuned_on_validation_on_the_henon_map(h):
    """The issue-10 goal on a small case: default fit() against the pyEDM peers, each tuned
    on a validation block (E 1..6; S-map theta 0..8), all scored on the same test block."""
    pytest.importorskip("pyEDM")
    from tssdpa.baselines.edm import SimplexForecaster, SMapForecaster
    from tssdpa.data.synthetic import make_signal

    x = make_signal("henon", 900, 0)
    x = (x - x[:540].mean()) / x[:540].std()
    tr, va = 540, 720

    def score(est, lo, hi):
        return rmse(est.forecast(x[:hi], horizon=h), x[:hi], h, lo)

    def tuned(cls, grid):
        best = min(grid, key=lambda p: score(cls(**p).fit(x[:tr]), tr, va))
        return score(cls(**best).fit(x[:va]), va, len(x))

    ours = score(ProjectionForecaster(horizon=h).fit(x[:va]), va, len(x))
    simplex = tuned(SimplexForecaster, [{"embedding": e} for e in range(1, 7)])
    smap = tuned(SMapForecaster, [{"embedding": e, "theta": t} for e in (1, 2, 3, 4)
                                  for t in (0.0, 2.0, 8.0)])  # fmt: skip
    assert ours < min(simplex, smap)


def test_default_fit_beats_smap_tuned_on_validation_one_step_ahead_on_a_clean_flow():
    """Clean Lorenz, h = 1: the neighbours lie within about 1e-3 of the query, where only a
    precise local-linear solve with a small ridge follows the flow (the earlier normal
    equations were 2.9x worse than S-map here, now about 0.7x). S-map by its numpy engine, the
    harness's: at one step it gives pyEDM's forecasts (tests/baselines/test_edm.py), in
    less than half the time."""
    from tssdpa.baselines.edm import SMapForecaster
    from tssdpa.data.synthetic import make_signal

    x = make_signal("lorenz", 1500, 0, dt=0.02)
    x = (x - x[:900].mean()) / x[:900].std()
    tr, va = 900, 1200

    def score(est, lo, hi):
        return rmse(est.forecast(x[:hi], horizon=1), x[:hi], 1, lo)

    ours = score(ProjectionForecaster(horizon=1).fit(x[:va]), va, len(x))
    grid = [{"embedding": e, "theta": t} for e in (6, 8, 10) for t in (4.0, 8.0)]
    best = min(grid, key=lambda p: score(SMapForecaster(**p, engine="numpy").fit(x[:tr]), tr, va))
    assert ours < score(SMapForecaster(**best, engine="numpy").fit(x[:va]), va, len(x))


def test_predict_past_the_fitted_horizon_is_recursive_over_the_last_pattern():
    y = logistic_map(300)
    fc = ProjectionForecaster(horizon=3).fit(y)
    p = fc.predict(7)
    np.testing.assert_array_equal(p[:3], fc.predict(3))
    # round two forecasts from the last pattern of the series extended by round one
    span = fc._predict_context()
    ext = np.concatenate([y, p[:3]])[-span:]
    np.testing.assert_allclose(p[3:6], fc.forecast_path(ext, horizon=3)[-1], rtol=1e-12)
    with pytest.raises(ValueError, match="steps"):
        fc.predict(0)


def test_predict_after_a_trailing_gap_longer_than_the_pattern_forecasts_past_it():
    # predict reads the last pattern's span of the series; where that span was all missing
    # it gave NaN; then it carried the last reading over the gap (2026-12-07: past the gap)
    y = np.sin(np.arange(400) / 20) + 0.2 * np.random.default_rng(0).normal(size=400)
    y[-60:] = np.nan
    fc = ProjectionForecaster(horizon=3).fit(y)
    assert fc._predict_context() < 60
    p = fc.predict(7)
    np.testing.assert_allclose(p, fc.predict(67, y=y[:-60])[60:], rtol=1e-12)
    assert np.isfinite(p).all()


@pytest.mark.parametrize(
    "cls", [ProjectionForecaster, AutoRegForecaster, ResidualProjectionForecaster]
)
def test_saving_an_unfitted_forecaster_says_it_is_not_fitted(cls, tmp_path):
    with pytest.raises(ValueError, match=f"{cls.__name__} is not fitted"):
        cls().save(tmp_path / "f")
    assert not (tmp_path / "f").exists()


def _ar1_linear_fit(holdout):
    """An AR(1) series of 400 samples and the linear model of embedding 1 fitted on it."""
    rng = np.random.default_rng(4)
    y = np.zeros(400)
    for t in range(1, 400):
        y[t] = 0.8 * y[t - 1] + rng.standard_normal()
    fc = ProjectionForecaster(
        horizon=1, embedding=1, delay=1, model="linear", ridge=1e-3, holdout=holdout
    ).fit(y)
    return y, fc


def test_holdout_scores_the_linear_model_by_its_fit_on_the_rows_before_the_holdout():
    y, fc = _ar1_linear_fit(holdout=0.25)
    z = (y - y.mean()) / y.std()
    cut = 300
    X = np.column_stack([np.ones(cut - 1), z[: cut - 1]])  # rows whose future is before cut
    G0 = X.T @ X
    coef = np.linalg.solve(G0 + 1e-3 * np.trace(G0) / 2 * np.eye(2) + 1e-12 * np.eye(2),
                           X.T @ z[1:cut])  # fmt: skip
    q = np.arange(cut, 399)
    expected = np.mean((z[q + 1] - coef[0] - coef[1] * z[q]) ** 2)
    row = fc.cv_results_.query("model == 'linear'")
    np.testing.assert_allclose(row["mse"].iloc[0], expected, rtol=1e-6)


def _smooth_series(seed, n=600):
    rng = np.random.default_rng(seed)
    y = np.convolve(rng.standard_normal(n + 29), np.ones(30) / 30, mode="valid")
    return ((y - y.mean()) / y.std())[:, None]


def _fresh_ridge(data, fit, ridge):
    """Ridge coefficients solved afresh on library rows ``fit`` (the reference)."""
    X = np.column_stack([np.ones(len(fit)), data.keys[fit]])
    G = X.T @ X
    G[np.diag_indices_from(G)] += ridge * np.trace(X.T @ X) / len(G) + 1e-12
    return np.linalg.solve(G, X.T @ data.futures[fit].reshape(len(fit), -1))


@pytest.mark.parametrize("channels, gap", [(1, 12), (2, 2)])
def test_blocked_linear_equals_fits_without_the_rows_near_each_block(channels, gap):
    # the reference: each block's ridge fit solved afresh on the library rows outside the
    # block and its two neighbours, against blocked_linear's downdated moments; blocks of gap
    # rows, or of 1/100 of the series where that is longer (6 rows for gap = 2)
    z = np.hstack([_smooth_series(c) for c in range(channels)])
    E, ridge = 6, 1e-3
    data = AnalogueData(z, E, 1, [3, 7], [ridge])
    rows = np.arange(E - 1, len(z))
    got = data.blocked_linear(ridge, rows, gap)
    library = np.flatnonzero(data.usable)
    same, fits = data.blocked_linear(ridge, rows, gap, fits=True)  # each row's fit, for a hybrid
    np.testing.assert_array_equal(same, got)
    length = max(gap, len(z) // 100)
    for a in range(0, len(z), length):
        b = a + length
        coef = _fresh_ridge(data, library[(library < a - length) | (library >= b + length)], ridge)
        mine = rows[(rows >= a) & (rows < b)]
        want = np.column_stack([np.ones(len(mine)), data.keys[mine]]) @ coef
        np.testing.assert_allclose(got[mine - rows[0]].reshape(len(mine), -1), want, rtol=1e-7,
                                   atol=1e-9)  # fmt: skip
        np.testing.assert_allclose(fits[mine - rows[0]], np.broadcast_to(coef, (len(mine),
                                   *coef.shape)), rtol=1e-7, atol=1e-9)  # fmt: skip


@pytest.mark.parametrize("per_query", [False, True])
def test_a_hybrid_forecast_is_the_linear_one_plus_the_weighted_mean_of_neighbour_residuals(
    per_query,
):
    # the reference forms each neighbour's residual against the query's fit; the hybrid
    # gets the same weighted mean without forming them. Padding (weight 0, NaN key and
    # target) and a query without weight (NaN) included
    from tssdpa.filters.analogues import neighbour_forecasts

    rng = np.random.default_rng(3)
    Q, k, D, nh, C = 6, 5, 4, 2, 3
    w = rng.random((Q, k))
    w[1, 3:] = 0.0
    w[4] = 0.0
    w = w / np.maximum(w.sum(axis=1, keepdims=True), 1e-300)
    keys = rng.standard_normal((Q, k, D))
    targets = rng.standard_normal((Q, k, nh, C))
    keys[1, 3:], targets[1, 3:] = np.nan, np.nan
    coef = rng.standard_normal((Q, D + 1, nh * C) if per_query else (D + 1, nh * C))
    lin_q = rng.standard_normal((Q, nh, C))
    got = neighbour_forecasts("hybrid", w, keys, keys[:, 0], targets, {0.1: lin_q},
                              {0.1: coef}, [0.1])[0]  # fmt: skip
    for q in range(Q):
        if q == 4:
            assert np.isnan(got[q]).all()
            continue
        c = coef[q] if per_query else coef
        used = w[q] > 0
        residuals = (
            targets[q, used].reshape(used.sum(), -1)
            - np.column_stack([np.ones(used.sum()), keys[q, used]]) @ c
        )
        want = lin_q[q] + (w[q, used] @ residuals).reshape(nh, C)
        np.testing.assert_allclose(got[q], want, rtol=1e-12, atol=1e-12)


def test_leave_one_out_scores_the_linear_model_by_the_blocked_fits():
    # end to end: the linear row of cv_results_ is the mean squared error of forecasts by
    # fits without the query's block and its neighbours (blocks of 4 rows: 1/100 of 400)
    y, fc = _ar1_linear_fit(holdout=None)
    z = ((y - y.mean()) / y.std())[:, None]
    data = AnalogueData(z, 1, 1, [1], [1e-3])
    library = np.flatnonzero(data.usable)  # rows 0 .. 398
    errors = []
    for q in library:
        a = q // 4 * 4
        coef = _fresh_ridge(data, library[(library < a - 4) | (library >= a + 8)], 1e-3)
        errors.append(z[q + 1, 0] - coef[0, 0] - coef[1, 0] * z[q, 0])
    row = fc.cv_results_.query("model == 'linear'")
    np.testing.assert_allclose(row["mse"].iloc[0], np.mean(np.square(errors)), rtol=1e-6)


def test_leave_one_out_scores_the_linear_model_by_fits_that_never_saw_the_query_future():
    # plain leave-one-out of a global fit keeps the query's neighbours in time, which on a
    # smooth series hold nearly its future; the scored forecast of query t must not change
    # when z[t + h], its future, does (every row holding that sample is within the gap)
    z = _smooth_series(1)
    E, h, ridge = 8, 10, 1e-3
    t = 300
    before = AnalogueData(z, E, 1, [h], [ridge]).blocked_linear(ridge, [t], E - 1 + h)
    z2 = z.copy()
    z2[t + h] += 5.0
    after = AnalogueData(z2, E, 1, [h], [ridge]).blocked_linear(ridge, [t], E - 1 + h)
    np.testing.assert_allclose(after, before, rtol=1e-9)
    # the fit on every row (what leave-one-out's leverage correction starts from) moves
    full = []
    for x in (z, z2):
        data = AnalogueData(x, E, 1, [h], [ridge])
        full.append(data.linear(data.keys[[t]], ridge))
    assert not np.allclose(*full, rtol=1e-6)


def test_holdout_forecasts_its_queries_from_keys_whose_future_was_known_before_them():
    # [noise | S | S]: with leave-one-out, a query in the first copy of S finds its exact
    # match in the second copy (its future); scoring forward, only past keys count
    rng = np.random.default_rng(5)
    seg = rng.standard_normal(100)
    y = np.concatenate([rng.standard_normal(600), seg, seg])
    one = dict(horizon=1, embedding=4, delay=1, n_neighbors=1, bandwidth=0.5, model="mean")
    loo = ProjectionForecaster(**one, holdout=None).fit(y).cv_results_["mse"].iloc[0]
    fwd = ProjectionForecaster(**one, holdout=0.25).fit(y).cv_results_["mse"].iloc[0]
    # the first copy has no past match (the future one is not used: an error of order one),
    # the second copy finds the first: about half the error of unmatched noise
    assert 0.3 < fwd < 0.8 * loo


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, "a"])
def test_holdout_must_be_a_fraction(bad):
    with pytest.raises((ValueError, TypeError), match="holdout"):
        ProjectionForecaster(holdout=bad).fit(np.sin(np.arange(200) * 0.1))


def _quiet_after(y, factor):
    """``y`` with its last quarter scaled by ``factor`` (a change of regime)."""
    y = y.copy()
    y[3 * len(y) // 4 :] *= factor
    return y


@pytest.mark.parametrize("factor", [0.3, 3.0])
def test_auto_holdout_scores_both_ways_where_the_last_quarter_changed_regime(factor):
    rng = np.random.default_rng(6)
    y = _quiet_after(np.sin(np.arange(600) * 0.2) + 0.1 * rng.standard_normal(600), factor)
    small = dict(horizon=1, embedding=[1, 2], n_neighbors=[4], bandwidth=[1.0])
    auto = ProjectionForecaster(**small).fit(y)
    assert auto.holdout_ == 0.25
    cv = auto.cv_results_
    for holdout, scoring in ((0.25, "forward"), (None, "leave-one-out")):
        alone = ProjectionForecaster(**small, holdout=holdout).fit(y).cv_results_
        assert set(alone["scoring"]) == {scoring}
        mine = cv[cv["scoring"] == scoring].reset_index(drop=True)
        # the scores, not "chosen": scored both ways, the choice is the minimax one
        pd.testing.assert_frame_equal(mine.drop(columns="chosen"), alone.drop(columns="chosen"))


def test_auto_holdout_scores_a_joint_pattern_of_several_channels_forward_only():
    rng = np.random.default_rng(17)
    base = np.sin(np.arange(600) * 0.2) + 0.1 * rng.standard_normal(600)
    y = np.column_stack([base, _quiet_after(np.cos(np.arange(600) * 0.2), 0.2)])
    small = dict(horizon=1, embedding=[1, 2], n_neighbors=[4], bandwidth=[1.0])
    auto = ProjectionForecaster(**small).fit(y)
    fwd = ProjectionForecaster(**small, holdout=0.25).fit(y)
    assert auto.holdout_ == 0.25 and set(auto.cv_results_["scoring"]) == {"forward"}
    pd.testing.assert_frame_equal(auto.cv_results_, fwd.cv_results_)
    assert auto.best_params_ == fwd.best_params_


def _none_for_nan(v):
    return None if isinstance(v, float) and np.isnan(v) else v


def test_auto_holdout_keeps_the_candidate_least_worse_than_the_best_of_either_scoring():
    # the reference: from cv_results_ alone, per horizon, the candidate whose larger ratio to
    # the best MSE of either scoring is least
    rng = np.random.default_rng(16)
    y = _quiet_after(np.sin(np.arange(900) * 0.13) ** 3 + 0.05 * rng.standard_normal(900), 0.3)
    fc = ProjectionForecaster(horizon=3, embedding=[1, 2, 3], n_neighbors=[4, 8]).fit(y)
    cv = fc.cv_results_
    keys = [c for c in cv.columns if c not in ("scoring", "mse")]
    wide = cv.pivot_table(index=keys, columns="scoring", values="mse", dropna=False)
    wide = wide.dropna().reset_index()
    for h, rows in wide.groupby("horizon"):
        fwd, loo = rows["forward"], rows["leave-one-out"]
        regret = np.maximum(fwd / fwd.min(), loo / loo.min())
        top = rows.loc[regret.idxmin(), keys].to_dict()
        chosen = fc.best_params_[h]
        fields = ("embedding", "delay", "n_neighbors", "bandwidth", "model")
        assert {k: chosen[k] for k in fields} == {k: _none_for_nan(top[k]) for k in fields}
    assert len(wide) > 10  # candidates scored both ways were compared


def test_auto_holdout_is_leave_one_out_on_a_series_without_a_change_of_regime():
    rng = np.random.default_rng(7)
    y = _quiet_after(np.sin(np.arange(600) * 0.2) + 0.1 * rng.standard_normal(600), 0.6)
    small = dict(horizon=2, embedding=[1, 2], n_neighbors=[4], bandwidth=[1.0])
    auto = ProjectionForecaster(**small).fit(y)
    loo = ProjectionForecaster(**small, holdout=None).fit(y)
    assert auto.holdout_ is None
    pd.testing.assert_frame_equal(auto.cv_results_, loo.cv_results_)


def test_auto_holdout_decides_per_channel_for_channel_independent_forecasters():
    rng = np.random.default_rng(8)
    base = np.sin(np.arange(600) * 0.2) + 0.1 * rng.standard_normal(600)
    y = np.column_stack([base, _quiet_after(base, 0.2)])
    small = dict(horizon=1, embedding=[1, 2], n_neighbors=[4], bandwidth=[1.0])
    fc = ProjectionForecaster(**small, channel_independent=True).fit(y)
    assert [m.holdout_ for m in fc.channel_models_] == [None, 0.25]
    joint = ProjectionForecaster(**small).fit(y)  # one pattern of both: the quiet one decides
    assert joint.holdout_ == 0.25


def test_auto_holdout_ignores_channels_flat_or_missing_in_both_parts():
    y = np.column_stack([np.sin(np.arange(400) * 0.3), np.ones(400), np.full(400, np.nan)])
    y[300:, 1] = np.nan  # constant, then missing: no spread on either side
    fc = ProjectionForecaster(horizon=1, embedding=[2], n_neighbors=[4], bandwidth=[1.0])
    assert fc.fit(y[:, :2]).holdout_ is None
    assert drift_holdout(y) == (None, pytest.approx(1.0, abs=0.1))


@pytest.mark.parametrize("flat", ["before", "after"])
def test_auto_holdout_counts_a_channel_flat_on_one_side_only_as_a_change_of_regime(flat):
    # a machine at rest that starts to move (ratio inf), one that stops (ratio 0)
    y = np.sin(np.arange(400) * 0.3)
    if flat == "before":
        y[:300] = 0.5
    else:
        y[300:] = 0.5
    holdout, ratio = drift_holdout(y[:, None])
    assert holdout == 0.25 and ratio == (np.inf if flat == "before" else 0.0)


def test_auto_holdout_falls_back_to_leave_one_out_without_complete_recent_rows():
    # the last quarter changes regime in channel 0 but channel 1 is missing there: no query
    # of the last quarter is complete, so forward scoring has nothing to score on
    rng = np.random.default_rng(9)
    y = np.column_stack([np.sin(np.arange(600) * 0.2), np.cos(np.arange(600) * 0.2)])
    y += 0.05 * rng.standard_normal(y.shape)
    y[450:, 0] *= 0.1
    y[450:, 1] = np.nan
    assert drift_holdout(y)[0] == 0.25
    fc = ProjectionForecaster(horizon=2, embedding=[1, 2], n_neighbors=[4], bandwidth=[1.0])
    assert fc.fit(y).holdout_ is None
    loo = ProjectionForecaster(**{**fc.get_params(), "holdout": None}).fit(y)
    assert fc.best_params_ == loo.best_params_


def test_holdout_is_saved_and_a_file_without_it_loads_with_its_setting(tmp_path, edit_config):
    y = _quiet_after(np.sin(np.arange(600) * 0.2), 0.2)
    small = dict(horizon=1, embedding=[2], n_neighbors=[4], bandwidth=[1.0])
    ProjectionForecaster(**small).fit(y).save(tmp_path / "a")
    assert ProjectionForecaster.load(tmp_path / "a").holdout_ == 0.25
    ProjectionForecaster(**small, holdout=0.5).fit(y).save(tmp_path / "b")
    # an older file (written before the fitted state's digest too)
    edit_config(
        tmp_path / "b",
        lambda cfg: (cfg["fitted"].pop("holdout_"), cfg.pop("fitted_sha256"), cfg.update(format=1)),
    )
    with pytest.warns(UncheckedFileWarning):
        assert ProjectionForecaster.load(tmp_path / "b").holdout_ == 0.5


@pytest.mark.parametrize("bad", [0, 1.0, -0.5, 5.0, "auto", [0.25]])
def test_a_tampered_saved_holdout_is_refused_on_load(bad, tmp_path, edit_config):
    y = np.sin(np.arange(300) * 0.2)
    ProjectionForecaster(horizon=1, embedding=[2]).fit(y).save(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: cfg["fitted"].update(holdout_=bad))
    with pytest.raises(ValueError, match="holdout_"):
        ProjectionForecaster.load(tmp_path / "f")


def test_a_refit_with_library_size_chooses_as_a_fresh_forecaster():
    rng = np.random.default_rng(10)
    y = np.sin(np.arange(900) * 0.13) + 0.1 * rng.standard_normal(900)
    fresh = ProjectionForecaster(horizon=2, library_size=300).fit(y)
    fc = ProjectionForecaster(horizon=2, library_size=300).fit(y[::-1].copy())
    fc.fit(y)  # the library must not depend on the span of the first fit's structures
    pd.testing.assert_frame_equal(fc.cv_results_, fresh.cv_results_)
    assert fc.best_params_ == fresh.best_params_


def test_fit_verbose_says_how_auto_holdout_scored(capsys):
    y = _quiet_after(np.sin(np.arange(600) * 0.2), 0.2)
    ProjectionForecaster(horizon=1, embedding=[2], n_neighbors=[4], bandwidth=[1.0]).fit(
        y, verbose=True
    )
    assert "both leave-one-out and forward on the last quarter" in capsys.readouterr().out


@pytest.mark.parametrize("channels, share", [(3, 0.05), (1, 0.3)])
def test_default_fit_forecasts_a_series_with_scattered_missing_samples(channels, share):
    # the long patterns of the linear model are rarely complete here: they are skipped (this
    # stopped with numpy's "cannot reshape array of size 0")
    rng = np.random.default_rng(12)
    t = np.arange(600)
    clean = np.column_stack([np.sin(t * 0.1 * (c + 1)) for c in range(channels)])
    y = clean + 0.05 * rng.standard_normal(clean.shape)
    y[rng.random(y.shape) < share] = np.nan
    fc = ProjectionForecaster(horizon=3).fit(y[:450])
    pred = np.asarray(fc.forecast(y, 1)).reshape(600, channels)[449:-1]
    known = np.isfinite(pred).all(axis=1)
    assert known.mean() > 0.2  # origins whose chosen pattern is complete
    err = np.mean((pred[known] - clean[450:][known]) ** 2)
    assert err < 0.1 * np.mean(clean[450:] ** 2)


def test_a_joint_fit_with_too_few_rows_known_in_every_channel_says_so_and_what_to_do():
    rng = np.random.default_rng(37)
    y = np.column_stack([np.sin(0.1 * np.arange(150) * (c + 1)) for c in range(3)])
    y[rng.random(y.shape) < 0.5] = np.nan  # a row has all 3 channels in 1 case of 8
    with pytest.raises(ValueError, match=r"y has 150 samples, \d+ of them with every channel "
                                         r"known.*channel_independent=True"):  # fmt: skip
        ProjectionForecaster(horizon=2).fit(y)
    fc = ProjectionForecaster(horizon=2, channel_independent=True).fit(y)
    assert np.isfinite(np.asarray(fc.forecast(y, 1))[-20:]).all()


@pytest.mark.parametrize("model", ["mean", "local_linear", "hybrid"])
def test_forecasts_do_not_depend_on_the_block_of_origins_gathered_at_once(model, monkeypatch):
    import tssdpa.filters.analogues as analogues

    y = np.column_stack([logistic_map(500, seed=1, noise=0.01), ar2(500, seed=1)])
    fc = ProjectionForecaster(horizon=6, embedding=2, n_neighbors=8, model=model).fit(y[:300])
    whole = np.asarray(fc.forecast_path(y, 6))
    monkeypatch.setattr(analogues, "_GATHER_ELEMS", 100)  # blocks of one origin
    np.testing.assert_array_equal(np.asarray(fc.forecast_path(y, 6)), whole)


def _scores_of(scoring, mses: dict):
    """Hand-built scores: each structure's per-query squared errors all equal its MSE."""
    from tssdpa.filters.analogue_selection import _Scores

    scores = _Scores([1], scoring)
    for s, mse in mses.items():
        scores.record(s, np.full((50, 1), mse))
    return scores


def _structures(n):
    from tssdpa.filters.analogues import Structure

    return [Structure(E, 1, 0, None, None, "linear", 1e-3) for E in range(1, n + 1)]


def test_minimax_regret_keeps_the_candidate_least_worse_than_either_scorings_best():
    from tssdpa.filters.analogue_selection import minimax_regret

    a, b, c = _structures(3)  # a: best leave-one-out, b: best forward, c: good in both
    loo = _scores_of("leave-one-out", {a: 1.0, b: 3.0, c: 1.2})
    fwd = _scores_of("forward", {a: 3.0, b: 1.0, c: 1.3})
    assert minimax_regret(0, loo, fwd) == c
    fwd = _scores_of("forward", {a: 1.1, b: 1.0, c: 1.3})  # now a is within 10% in both
    assert minimax_regret(0, loo, fwd) == a


def test_minimax_regret_with_a_perfect_score_or_a_scoring_without_finite_scores():
    from tssdpa.filters.analogue_selection import minimax_regret

    a, b = _structures(2)
    loo = _scores_of("leave-one-out", {a: 0.0, b: 1.0})  # a perfect leave-one-out score
    fwd = _scores_of("forward", {a: 2.0, b: 1.0})
    assert minimax_regret(0, loo, fwd) == a  # b is infinitely worse than perfect
    empty = _scores_of("forward", {a: np.nan, b: np.nan})
    assert minimax_regret(0, loo, empty) == loo.simplest_near_best(0) == a
    empty_loo = _scores_of("leave-one-out", {a: np.nan, b: np.nan})
    assert minimax_regret(0, empty_loo, fwd) == fwd.simplest_near_best(0) == b


def _switch_reference(preds, y, overlap, h, half_life):
    """The online switch written as a loop: at origin t, the contender of least discounted
    squared error (half-life ``half_life * h`` origins) over the origins s <= t - h whose
    target y[s+h] is new (s + h >= overlap) and known for every contender, the others' than
    the first's counted 1 + SWITCH_MARGIN times; the best-ranked with a value at t."""
    from tssdpa.filters.analogues import SWITCH_MARGIN

    decay = 0.5 ** (1.0 / (half_life * h))
    n, T = len(preds), len(y)
    score = np.zeros(n)
    out = np.full(T, np.nan)
    for t in range(T):
        s = t - h
        if s >= 0:
            score *= decay
            e = (preds[:, s] - y[s + h]) ** 2
            if s + h >= overlap and np.isfinite(e).all():
                score += e
        handicap = [1.0] + [1.0 + SWITCH_MARGIN] * (n - 1)
        for c in sorted(range(n), key=lambda c: (score[c] * handicap[c], c)):
            if np.isfinite(preds[c, t]):
                out[t] = preds[c, t]
                break
    return out


@pytest.mark.parametrize("overlap", [0, 37])
def test_switch_forecasts_equals_the_loop_reference(overlap):
    from tssdpa.filters.analogues import switch_forecasts

    rng = np.random.default_rng(40)
    T, hs = 120, [1, 3, 7]
    y = rng.standard_normal((T, 1))
    y[[20, 55]] = np.nan  # unknown targets are no errors
    spread = np.array([0.3, 1.0, 0.6])[:, None, None, None]  # each horizon its own forecasts
    preds = y[None, :, None] + spread * rng.standard_normal((3, T, len(hs), 1))
    preds[1, 60:70] = np.nan  # a contender without a value: unpaired, and skipped at t
    preds[:, :5] = np.nan  # no contender has a value yet
    got = switch_forecasts(preds, y, overlap, hs, 4.0)
    for j, h in enumerate(hs):
        want = _switch_reference(preds[:, :, j, 0], y[:, 0], overlap, h, 4.0)
        np.testing.assert_allclose(got[:, j, 0], want, equal_nan=True)


def test_switch_forecasts_follows_the_contender_right_in_the_current_regime():
    from tssdpa.filters.analogues import switch_forecasts

    rng = np.random.default_rng(41)
    y = rng.standard_normal((400, 1))
    future = np.append(y[1:], np.nan)[:, None]  # what the forecast at origin t predicts
    early, late = future.copy(), future.copy()  # each is right in one half, poor in the other
    early[200:] += rng.standard_normal((200, 1))
    late[:200] += rng.standard_normal((200, 1))
    preds = np.stack([early, late])[:, :, None]  # (2, T, 1 horizon, 1)
    got = switch_forecasts(preds, y, 0, [1], 10.0)[:, 0, 0]
    mse = [np.mean((p[:-1] - future[:-1, 0]) ** 2) for p in (got, early[:, 0], late[:, 0])]
    assert mse[0] < 0.2 * min(mse[1:])


def _regime_series(seed=16, n=1200):
    """A series quiet over the last quarter of its first 900 samples, then back to normal."""
    rng = np.random.default_rng(seed)
    y = np.sin(np.arange(n) * 0.13) ** 3 + 0.05 * rng.standard_normal(n)
    y[675:900] *= 0.3
    return y


@pytest.fixture(scope="module")
def switching():
    y = _regime_series()
    # without the recursive model, whose contender at horizon 3 is never ahead by the margin:
    # these tests need a fit whose forecasts do switch at every horizon
    models = ["mean", "local_linear", "linear", "hybrid"]
    fc = ProjectionForecaster(horizon=3, embedding=[1, 2, 3], n_neighbors=[4, 8], model=models)
    return fc.fit(y[:900]), y


def test_a_fit_that_scored_both_ways_keeps_each_scorings_choice_as_a_contender(switching):
    fc, _ = switching
    assert fc.holdout_ == 0.25 and set(fc.contenders_) == {1, 2, 3}
    loo = ProjectionForecaster(**{**fc.get_params(), "holdout": None}).fit(fc.train_)
    fwd = ProjectionForecaster(**{**fc.get_params(), "holdout": 0.25}).fit(fc.train_)
    for h, each in fc.contenders_.items():
        assert each[0] == fc.best_params_[h]
        want = [fc.best_params_[h], loo.best_params_[h], fwd.best_params_[h]]
        assert each == [p for i, p in enumerate(want) if p not in want[:i]]
        assert len(each) >= 2


@pytest.mark.parametrize("h", [1, 2, 3])
def test_forecasts_switch_among_the_contenders_by_their_errors_on_new_targets(switching, h):
    import copy

    from tssdpa.filters.analogues import Structure, anchor_horizons, nearest_anchor

    fc, y = switching
    anchor = nearest_anchor(h, anchor_horizons(fc.horizon))
    preds = []
    for params in fc.contenders_[anchor]:  # each contender alone: the fit's choice replaced
        alone = copy.deepcopy(fc)
        alone.structures_ = {**alone.structures_, anchor: Structure(**params)}
        alone.contenders_ = {}
        preds.append(np.asarray(alone.forecast(y, h)))
    # the first 900 samples repeat the fitted series: their targets are no evidence
    want = _switch_reference(np.array(preds), y, 900, h, fc.switch_half_life)
    got = np.asarray(fc.forecast(y, h))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert not np.allclose(got[900:], preds[0][900:], equal_nan=True)  # it did switch


def test_switched_forecasts_are_causal_under_any_split_of_the_series(switching):
    fc, y = switching
    whole = np.asarray(fc.forecast_path(y, 3))
    for n in (905, 950, 1111):
        np.testing.assert_array_equal(np.asarray(fc.forecast_path(y[:n], 3)), whole[:n])
    for h in (1, 2, 3):
        np.testing.assert_array_equal(np.asarray(fc.forecast(y, h)), whole[:, h - 1])


def test_without_new_targets_forecasts_and_predict_are_the_fits_choice(switching):
    import copy

    fc, y = switching
    fixed = copy.deepcopy(fc)
    fixed.switch_half_life = None
    for series in (y[:900], y[500:900]):  # the fitted series, or its tail: nothing new
        got, want = np.asarray(fc.forecast_path(series, 3)), fixed.forecast_path(series, 3)
        # where the fit's choice has no value yet (a pattern longer than the history), the
        # next contender in order gives one
        np.testing.assert_array_equal(got[np.isfinite(want)], want[np.isfinite(want)])
        assert np.isfinite(want).sum() > 0.9 * want.size
    np.testing.assert_array_equal(fc.predict(7), fixed.predict(7))
    assert not np.array_equal(fc.forecast_path(y, 3), fixed.forecast_path(y, 3))


def test_contenders_are_saved_and_a_file_without_them_loads_without_switching(
    switching, tmp_path, edit_config
):
    fc, y = switching
    fc.save(tmp_path / "a")
    back = ProjectionForecaster.load(tmp_path / "a")
    assert back.contenders_ == fc.contenders_
    np.testing.assert_array_equal(back.forecast_path(y, 3), fc.forecast_path(y, 3))
    # an older file (written before the fitted state's digest too)
    edit_config(
        tmp_path / "a",
        lambda cfg: (
            cfg["fitted"].pop("contenders_"),
            cfg.pop("fitted_sha256"),
            cfg.update(format=1),
        ),
    )
    with pytest.warns(UncheckedFileWarning):
        old = ProjectionForecaster.load(tmp_path / "a")
    assert old.contenders_ == {}
    old.switch_half_life = fc.switch_half_life = None
    try:
        np.testing.assert_array_equal(old.forecast_path(y, 3), fc.forecast_path(y, 3))
    finally:
        fc.switch_half_life = 20


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c.update({"9": c["1"]}), "no anchor horizon"),
        (lambda c: c.update({"1": c["1"][:1]}), "two or three"),
        (lambda c: c.update({"1": c["1"] + c["2"][1:] + c["3"][1:]}), "two or three"),
        (lambda c: c.update({"1": c["1"][::-1]}), "start with best_params_"),
        (lambda c: c.update({"1": [c["1"][0], c["1"][0]]}), "distinct"),
        (lambda c: c["1"][1].update(embedding=0), r"contenders_\[1\]\[1\]\.embedding"),
        (lambda c: c["1"][1].update(model="magic"), r"contenders_\[1\]\[1\]\.model"),
    ],
)
def test_tampered_saved_contenders_are_refused_on_load(
    switching, edit, message, tmp_path, edit_config
):
    fc, _ = switching
    fc.save(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: edit(cfg["fitted"]["contenders_"]))
    with pytest.raises(ValueError, match=message):
        ProjectionForecaster.load(tmp_path / "f")


@pytest.mark.parametrize("bad", [0, -1.0, "fast", float("nan")])
def test_switch_half_life_must_be_positive(bad):
    with pytest.raises((ValueError, TypeError), match="switch_half_life"):
        ProjectionForecaster(switch_half_life=bad).fit(np.sin(np.arange(200) * 0.1))


def test_switched_forecast_paths_equal_the_reference_where_anchors_cover_several_horizons():
    import copy

    from tssdpa.filters.analogues import Structure

    y = _regime_series(seed=3)
    fc = ProjectionForecaster(horizon=20, embedding=[1, 2], n_neighbors=[4, 8], bandwidth=[1.0])
    fc.fit(y[:900])
    path = np.asarray(fc.forecast_path(y, 20))
    shared = [a for a in fc.contenders_ if a > 12]  # anchors beyond 12 cover several horizons
    assert shared
    for anchor in shared:
        alone = []
        for params in fc.contenders_[anchor]:
            one = copy.deepcopy(fc)
            one.structures_ = {**one.structures_, anchor: Structure(**params)}
            one.contenders_ = {}
            alone.append(np.asarray(one.forecast_path(y, 20)))
        for h in range(1, 21):
            if nearest_anchor(h, anchor_horizons(20)) == anchor:
                preds = np.array([p[:, h - 1] for p in alone])
                want = _switch_reference(preds, y, 900, h, fc.switch_half_life)
                np.testing.assert_allclose(path[:, h - 1], want, rtol=1e-12, atol=1e-12,
                                           equal_nan=True)  # fmt: skip


def test_contenders_do_not_move_the_fits_own_forecasts_with_a_library_size():
    import copy

    y = _regime_series()
    fc = ProjectionForecaster(horizon=3, embedding=[1, 2, 3], n_neighbors=[4, 8], library_size=300)
    fc.fit(y[:900])
    longer = {**fc.best_params_[1], "embedding": 40, "delay": 1, "n_neighbors": 0,
              "bandwidth": None, "sigma": None, "model": "linear", "ridge": 1e-3}  # fmt: skip
    fc.contenders_[1] = [fc.best_params_[1], longer]  # a longer pattern than any chosen
    fixed = copy.deepcopy(fc)
    fixed.switch_half_life, fixed.contenders_ = None, {}
    fc.switch_half_life = None
    np.testing.assert_array_equal(fc.forecast_path(y, 3), fixed.forecast_path(y, 3))
    np.testing.assert_array_equal(fc.predict(5), fixed.predict(5))


def test_a_saved_structure_without_a_complete_pattern_and_future_fails_clearly(
    switching, tmp_path, edit_config
):
    fc, y = switching
    fc.save(tmp_path / "f")
    linear = {"embedding": 899, "delay": 1, "n_neighbors": 0, "bandwidth": None, "sigma": None,
              "model": "linear", "ridge": 0.001}  # fmt: skip
    edit_config(
        tmp_path / "f", lambda cfg: cfg["fitted"]["contenders_"]["3"].__setitem__(1, linear)
    )
    with pytest.raises(ValueError, match="'fitted' state is not the one it was saved with"):
        ProjectionForecaster.load(tmp_path / "f")
    edit_config(
        tmp_path / "f", lambda cfg: (cfg.pop("fitted_sha256"), cfg.update(format=1))
    )  # older
    with pytest.warns(UncheckedFileWarning):
        back = ProjectionForecaster.load(tmp_path / "f")
    with pytest.raises(ValueError, match="no complete pattern and future"):
        back.forecast_path(y, 3)


def test_a_channel_independent_state_with_top_level_contenders_is_refused(tmp_path, edit_config):
    y = np.column_stack([_regime_series()[:900], _regime_series(seed=3)[:900]])
    small = dict(horizon=2, embedding=[1, 2], n_neighbors=[4], bandwidth=[1.0])
    fc = ProjectionForecaster(**small, channel_independent=True).fit(y)
    fc.save(tmp_path / "f")
    back = ProjectionForecaster.load(tmp_path / "f")
    assert back.contenders_ == fc.contenders_ and len(back.contenders_) == 2
    edit_config(tmp_path / "f", lambda cfg: cfg["fitted"].update(contenders_={"1": [1]}))
    with pytest.raises(ValueError, match="channel_models_ only"):
        ProjectionForecaster.load(tmp_path / "f")
    fc.save(tmp_path / "g")
    edit = lambda cfg: cfg["fitted"]["channel_models_"][1]["best_params_"]["1"].update(delay=0)  # noqa: E731
    edit_config(tmp_path / "g", edit)
    with pytest.raises(ValueError, match=r"channel_models_\[1\]: best_params_\[1\]\.delay"):
        ProjectionForecaster.load(tmp_path / "g")


def test_a_saved_best_params_list_in_a_joint_state_is_refused_by_name(tmp_path, edit_config):
    # best_params_ is a list only for per-channel fits; a joint state holding one is tampered
    ProjectionForecaster(horizon=2, embedding=[1, 2]).fit(ar2(300)).save(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: cfg["fitted"].update(best_params_=[{"1": 1}, {"2": 2}]))
    with pytest.raises(ValueError, match="best_params_ must hold the horizons"):
        ProjectionForecaster.load(tmp_path / "f")


def test_forecasts_of_a_series_that_repeats_part_of_the_fitted_one_are_causal(switching):
    # a stretch of the fitted series that departs from it before its end: every prefix must
    # give the same forecasts as the whole (the repeated run is the same for both)
    fc, y = switching
    y2 = y[600:1100].copy()
    y2[250:] += 0.2  # departs from the fitted series at row 250, before its end (row 300)
    whole = np.asarray(fc.forecast_path(y2, 3))
    assert training_overlap(fc.train_, y2[:, None]) == (
        250,
        50,
    )  # the fitted series goes on for 50 rows
    for n in (100, 250, 251, 320, 499):
        np.testing.assert_array_equal(np.asarray(fc.forecast_path(y2[:n], 3)), whole[:n])


def _companion_forecasts(design, coef, C, h):
    """The reference for an iterated one-step fit: the state-space form. The state
    ``[1, z_t, ..., z_(t-E+1)]`` moves one step by the companion matrix; h steps are its h-th
    power, and the forecast is the new state's first C values."""
    D1 = len(coef)
    M = np.zeros((D1, D1))
    M[0, 0] = 1.0
    M[1 : 1 + C] = coef.T  # the next sample
    M[1 + C :, 1 : D1 - C] = np.eye(D1 - 1 - C)  # every other sample moves one lag back
    return (np.linalg.matrix_power(M, h) @ design.T).T[:, 1 : 1 + C]


@pytest.mark.parametrize("channels, embedding", [(1, 1), (1, 4), (2, 3)])
def test_iterated_one_step_forecasts_equal_powers_of_the_companion_matrix(channels, embedding):
    rng = np.random.default_rng(channels + embedding)
    D1 = 1 + channels * embedding
    coef = 0.3 * rng.normal(size=(D1, channels))
    design = np.column_stack([np.ones(6), rng.normal(size=(6, D1 - 1))])
    horizons = [1, 2, 5, 9]
    got = iterate_one_step(design, coef, channels, horizons)
    for i, h in enumerate(horizons):
        want = _companion_forecasts(design, coef, channels, h)
        np.testing.assert_allclose(got[:, i], want, rtol=1e-10, atol=1e-12)
    # a fit per row: each row's forecasts are its own fit's
    per_row = coef[None] + 0.1 * rng.normal(size=(6, D1, channels))
    got = iterate_one_step(design, per_row, channels, horizons)
    for n in range(6):
        want = iterate_one_step(design[n : n + 1], per_row[n], channels, horizons)
        np.testing.assert_allclose(got[n : n + 1], want, rtol=1e-12)


@pytest.mark.parametrize("channels, gap", [(1, 12), (2, 2)])
def test_blocked_recursive_forecasts_iterate_the_one_step_part_of_each_blocks_fit(channels, gap):
    z = np.hstack([_smooth_series(c) for c in range(channels)])
    E, ridge, horizons = 4, 1e-3, [1, 3, 7]
    data = AnalogueData(z, E, 1, horizons, [ridge])
    rows = np.arange(E - 1, len(z))
    got = data.blocked_linear(ridge, rows, gap, recursive=True)
    library = np.flatnonzero(data.usable)
    length = max(gap, len(z) // 100)
    for a in range(0, len(z), length):
        b = a + length
        coef = _fresh_ridge(data, library[(library < a - length) | (library >= b + length)], ridge)
        mine = rows[(rows >= a) & (rows < b)]
        design = np.column_stack([np.ones(len(mine)), data.keys[mine]])
        for i, h in enumerate(horizons):  # the horizon-1 columns come first
            want = _companion_forecasts(design, coef[:, :channels], channels, h)
            np.testing.assert_allclose(got[mine - rows[0], i], want, rtol=1e-7, atol=1e-9)
    # with every row of the series, as scored forward and as forecast
    np.testing.assert_allclose(
        data.recursive(data.keys[rows], ridge, horizons),
        iterate_one_step(
            np.column_stack([np.ones(len(rows)), data.keys[rows]]),
            data.coef[ridge][:, :channels], channels, horizons,
        ),
        rtol=1e-12,
    )  # fmt: skip


def test_a_long_pattern_on_a_short_linear_series_forecasts_far_ahead_better_iterated():
    # 150 samples of an AR(2) and 12 lags: an 8-step fit has as many coefficients as the
    # one-step fit, with noisier targets; the one-step fit iterated is the efficient forecast,
    # and the fit offered both keeps it (the paired errors of a few seeds: one may tie)
    kw = dict(horizon=8, embedding=12, ridge=1e-6)
    ratios, chosen = [], 0
    for seed in range(4, 10):
        y = ar2(2150, seed=seed)
        both = ProjectionForecaster(model=["linear", "recursive_linear"], **kw).fit(y[:150])
        direct = ProjectionForecaster(model="linear", **kw).fit(y[:150])
        chosen += both.best_params_[8]["model"] == "recursive_linear"
        assert both.best_params_[1]["model"] == "linear"  # one step: the same model
        ratios.append(rmse(both.forecast(y, 8), y, 8, 150) / rmse(direct.forecast(y, 8), y, 8, 150))
        assert (
            both.cv_results_.query("model == 'recursive_linear' and horizon == 1")["mse"]
            .isna()
            .all()
        )  # scored where it differs from the direct model only
    assert chosen >= 5
    assert np.mean(ratios) < 1.0 and max(ratios) < 1.01


def test_the_recursive_model_needs_delay_1():
    y = ar2(300)
    for model in ("recursive_linear", ["recursive_linear", "mean"]):  # never scored: an error
        with pytest.raises(ValueError, match="delay"):
            ProjectionForecaster(model=model, delay=2).fit(y)
    # among other models it is scored at delay 1 only
    fc = ProjectionForecaster(horizon=3, delay=[1, 2], model=["recursive_linear", "mean"]).fit(y)
    assert set(fc.cv_results_.query("model == 'recursive_linear'")["delay"]) == {1}


def noisy_sine(n=600, seed=0):
    # the long linear patterns (E 35 at delay 1) forecast it best: the fit took them though
    # the delay given was 3
    return np.sin(np.arange(n) * 0.2) + 0.05 * np.random.default_rng(seed).standard_normal(n)


@pytest.mark.parametrize(
    "given",
    [{"delay": 3}, {"delay": 3, "model": "linear"}, {"delay": [2, 3], "model": ["linear", "mean"]}],
)
def test_a_given_delay_is_kept_by_every_candidate_the_fit_scores(given):
    fc = ProjectionForecaster(horizon=3, **given).fit(noisy_sine())
    delays = set(np.atleast_1d(given["delay"]).tolist())
    assert set(fc.cv_results_["delay"]) <= delays
    assert {p["delay"] for p in fc.best_params_.values()} <= delays
    # no long linear pattern at the given delay either: the fit's own lengths only
    assert fc.cv_results_["embedding"].max() <= fc.max_embedding


def test_the_recursive_model_is_scored_only_where_the_delays_given_include_1():
    # left to the fit, the model is a candidate: at a given delay 3 it has none to be scored at
    fc = ProjectionForecaster(horizon=3, delay=3).fit(noisy_sine())
    assert "recursive_linear" not in set(fc.cv_results_["model"])


def test_the_long_linear_patterns_are_scored_at_delay_1_where_the_delays_given_include_it():
    fc = ProjectionForecaster(horizon=3, delay=[1, 3], model=["linear", "recursive_linear"])
    cv = fc.fit(noisy_sine()).cv_results_
    long = cv[cv["embedding"] > fc.max_embedding]
    assert len(long) and set(long["delay"]) == {1}
    assert set(long["model"]) == {"linear", "recursive_linear"}
    assert set(cv.query("model == 'recursive_linear'")["delay"]) == {1}


def test_recursive_forecasts_of_two_channels_with_gaps_equal_the_feed_back_loop():
    # the literal loop: the one-step ridge fit on the complete training rows, each origin's
    # pattern with gaps carried forward, each forecast fed back; horizons on geometric anchors
    rng = np.random.default_rng(0)
    z = np.zeros((600, 2))
    for t in range(2, 600):
        z[t, 0] = 1.2 * z[t - 1, 0] - 0.5 * z[t - 2, 0] + 0.3 * z[t - 1, 1] + 0.5 * rng.normal()
        z[t, 1] = 0.7 * z[t - 1, 1] - 0.2 * z[t - 1, 0] + 0.5 * rng.normal()
    y = z + [3.0, -2.0]
    y[100:103, 0] = np.nan
    y[450, 1] = np.nan
    y[520:522] = np.nan
    H = 30
    fc = ProjectionForecaster(model="recursive_linear", horizon=H, embedding=[2, 3]).fit(y[:400])
    got = np.asarray(fc.forecast_path(y, H))
    z_tr, zz = (y[:400] - fc.mean_) / fc.scale_, (y - fc.mean_) / fc.scale_
    filled = zz.copy()
    for t in range(1, len(filled)):
        filled[t] = np.where(np.isnan(filled[t]), filled[t - 1], filled[t])
    for anchor, s in fc.structures_.items():
        E, ridge = s.embedding, s.ridge
        rows = [(np.r_[1.0, z_tr[j - E + 1 : j + 1][::-1].ravel()], z_tr[j + 1])
                for j in range(E - 1, 399)]  # fmt: skip
        rows = [(x, v) for x, v in rows if np.isfinite(x).all() and np.isfinite(v).all()]
        X, Y = np.array([x for x, _ in rows]), np.array([v for _, v in rows])
        G = X.T @ X
        G += np.eye(len(G)) * (ridge * np.trace(G) / len(G) + 1e-12)
        beta = np.linalg.solve(G, X.T @ Y)
        hs = [h for h in range(1, H + 1) if nearest_anchor(h, list(fc.structures_)) == anchor]
        for t in range(E - 1, len(zz), 7):
            pattern = list(filled[t - E + 1 : t + 1][::-1])
            for h in range(1, max(hs) + 1):
                pattern = [np.r_[1.0, np.ravel(pattern)] @ beta, *pattern[:-1]]
                if h in hs:
                    want = pattern[0] * fc.scale_ + fc.mean_
                    np.testing.assert_allclose(got[t, h - 1], want, rtol=1e-8, atol=1e-10)


def test_a_recursive_path_iterates_once_per_structure_and_equals_each_horizons_forecast(
    monkeypatch,
):
    # one fit iterated to the farthest horizon serves every anchor with that structure: the
    # path equals the forecasts of one horizon at a time (each its own anchor's iteration)
    import tssdpa.filters.forecaster as forecaster_module

    y = ar2(700, seed=5)
    fc = ProjectionForecaster(model="recursive_linear", horizon=40, embedding=[2, 4]).fit(y[:500])
    each = np.column_stack([np.asarray(fc.forecast(y, h)) for h in range(1, 41)])
    calls = []
    real = forecaster_module.forecast

    def counted(*args):
        calls.append(args[3])
        return real(*args)

    monkeypatch.setattr(forecaster_module, "forecast", counted)
    path = np.asarray(fc.forecast_path(y, 40))
    np.testing.assert_allclose(path.reshape(len(y), 40), each, rtol=1e-12, atol=1e-12)
    assert len(fc.structures_) == 11 and sorted(calls, key=str) == sorted(
        set(fc.structures_.values()), key=str
    )
    # an anchor that switches among contenders keeps its own forecasts (and switching)
    other = {**fc.best_params_[5], "embedding": 6 - fc.best_params_[5]["embedding"]}
    fc.contenders_ = {5: [fc.best_params_[5], other]}
    each = np.column_stack([np.asarray(fc.forecast(y, h)) for h in range(1, 41)])
    calls.clear()
    path = np.asarray(fc.forecast_path(y, 40))
    np.testing.assert_allclose(path.reshape(len(y), 40), each, rtol=1e-12, atol=1e-12)
    assert len(calls) == len(set(fc.structures_.values())) + 2  # anchor 5's two contenders


def test_a_series_too_short_to_fit_says_so_and_names_gaps_only_where_there_are_some():
    # ten complete samples of two channels: it said "fill the gaps", and there were none
    t = np.arange(10)
    y = np.c_[np.sin(t / 3.0), np.cos(t / 5.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="too few complete patterns") as err:
            ProjectionForecaster(horizon=2, holdout=0.5).fit(y)
        assert "fill the gaps" not in str(err.value)
        y[3:7, 1] = np.nan
        with pytest.raises(ValueError, match="fill the gaps or fit each channel on its own"):
            ProjectionForecaster(horizon=2, holdout=0.5).fit(y)


def test_a_series_too_short_to_score_forward_names_the_holdout():
    # 15 samples fit with leave-one-out; scored forward they were refused with "y has 15
    # samples, 15 of them known: too few complete patterns", the holdout unnamed
    y = logistic_map(15, noise=0.01)
    ProjectionForecaster(horizon=2, holdout=None).fit(y)
    with pytest.raises(ValueError, match=r"forward on the last 0.25 of y \(holdout=0.25\): "
                                         "holdout=None scores leave-one-out"):  # fmt: skip
        ProjectionForecaster(horizon=2, holdout=0.25).fit(y)


def test_a_library_size_too_small_to_score_on_is_named_not_the_series():
    # it said "y has 400 samples, 400 of them known: too few complete patterns": the 10
    # patterns library_size keeps are each within a pattern and 12 steps of every query
    x = logistic_map(400, noise=0.01)
    with pytest.raises(ValueError, match=r"library \(library_size=10\) keeps .* of y's 400"):
        ProjectionForecaster(horizon=12, library_size=10, max_embedding=3).fit(x)


def test_a_saved_channel_independent_fit_missing_a_channel_model_is_refused(tmp_path, edit_config):
    # one channel model short, it loaded and forecast two of three channels
    t = np.arange(400)
    y = np.c_[np.sin(t / 7.0), np.cos(t / 11.0), np.sin(t / 5.0)]
    fc = ProjectionForecaster(embedding=[1, 2], horizon=1, channel_independent=True).fit(y)
    fc.save(tmp_path / "f")
    edit_config(tmp_path / "f", lambda cfg: cfg["fitted"]["channel_models_"].pop())
    with pytest.raises(ValueError, match="channel_models_ must be a list of 3 states"):
        ProjectionForecaster.load(tmp_path / "f")


def test_a_chunk_of_a_quantised_series_is_found_in_the_fitted_one():
    # a thermometer at 0.1 degC: the chunk's first value occurs 20 times in the fitted series,
    # and only the first 16 places were tried, so the chunk's rows were counted twice as keys
    rng = np.random.default_rng(0)
    n = 4000
    drift = np.cumsum(0.05 * rng.standard_normal(n)) * 0.2
    y = np.round(20 + 5 * np.sin(np.arange(n) * 0.05) + drift, 1)
    fc = ProjectionForecaster(horizon=2, embedding=[2, 3], model="mean").fit(y[:3000])
    assert (y[:3000] == y[2900]).sum() > 16
    assert training_overlap(fc.train_, y[2900:, None]) == (100, 0)


def test_a_channel_independent_fit_has_the_channel_models_cv_results():
    # AttributeError: the docstring promised cv_results_ and only joint fits set it
    t = np.arange(400)
    y = np.c_[np.sin(t / 7.0), np.cos(t / 11.0)]
    fc = ProjectionForecaster(embedding=[1, 2], horizon=1, channel_independent=True).fit(y)
    cv = fc.cv_results_
    assert sorted(set(cv["channel"])) == [0, 1]
    for c, m in enumerate(fc.channel_models_):
        part = cv[cv["channel"] == c].drop(columns="channel").reset_index(drop=True)
        pd.testing.assert_frame_equal(part, m.cv_results_.reset_index(drop=True))


def test_a_library_size_fit_scores_the_default_delays_as_the_same_delays_given():
    # before fit the library's span was taken with delay 1: the default τ = 22 candidates
    # were scored on a library cut too short for them (0 rows against 32)
    from tssdpa.filters.analogue_data import default_delays
    from tssdpa.signal.embedding import standardise

    rng = np.random.default_rng(0)
    t = np.arange(2000)
    y = np.sin(0.02 * t) + 0.3 * np.sin(0.047 * t) + 0.02 * rng.standard_normal(2000)
    kw = dict(horizon=1, library_size=60, model="mean")
    auto = ProjectionForecaster(**kw).fit(y)
    z = standardise(auto.train_, auto.mean_, auto.scale_)
    delays = default_delays(z, auto.max_embedding)
    assert max(delays) > 1
    given = ProjectionForecaster(delay=delays, **kw).fit(y)
    count = lambda f: f.cv_results_.groupby("delay")["mse"].count()  # noqa: E731
    pd.testing.assert_series_equal(count(auto), count(given))


@pytest.mark.parametrize("series", ["logistic", "random_walk"])
def test_a_horizon_of_the_path_is_the_forecast_at_that_horizon_past_twelve(series):
    """Past 12 horizons share anchors' structures; a horizon's forecast depends on its
    anchor's group (keys whose future reaches the group's last horizon), and forecast(h),
    forecast_path(H) and a shorter forecast_path all compute that whole group: they agree
    (forecast(h) once used h alone, so local-linear, hybrid and switching forecasts differed).
    The random walk changes regime in its last quarter: its forecasts switch among contenders."""
    if series == "logistic":
        y, kw = logistic_map(700), dict(model=["local_linear", "hybrid"], embedding=[1, 2])
    else:
        y = np.cumsum(np.random.default_rng(0).normal(size=700))
        kw = dict(model=["linear", "local_linear"], embedding=[1, 2, 3])
    fc = ProjectionForecaster(horizon=16, **kw).fit(y[:500])
    assert series == "logistic" or fc.contenders_
    path, short = np.asarray(fc.forecast_path(y, 16)), np.asarray(fc.forecast_path(y, 9))
    np.testing.assert_array_equal(short, path[:, :9])
    for h in range(1, 17):
        np.testing.assert_array_equal(np.asarray(fc.forecast(y, horizon=h)), path[:, h - 1])


@pytest.mark.parametrize("model", ["mean", "local_linear", "hybrid", "linear"])
def test_a_series_beyond_reach_of_the_fitted_scale_is_refused_naming_y_and_its_channel(model):
    # fitted at a scale of 1e-100, a value of 1e100 (inside the range every input may hold) is
    # 1e200 standard deviations out: its squared distances were inf, and the neighbour
    # search's missing index raised IndexError ("index 399 is out of bounds")
    x = logistic_map(500) * 1e-100
    fc = ProjectionForecaster(horizon=2, embedding=2, model=model).fit(x[:400])
    far = x.copy()
    far[450] = 1e100
    with pytest.raises(ValueError, match="y channel 0 lies more than 1e.150 fitted standard"):
        fc.forecast(far, 1)
    with pytest.raises(ValueError, match="y channel 0"):
        fc.forecast_path(far, 2)
    assert np.isfinite(fc.forecast(x, 1)[1:]).all()  # the fitted scale itself is fine


@pytest.mark.parametrize("width", ["sigma", "bandwidth"])
def test_a_kernel_width_too_narrow_for_float64_fits_as_the_nearest_neighbour_forecaster(width):
    # every weight underflowed to 0: each candidate scored NaN, and the fit of 400 known
    # samples said "too few complete patterns and futures for any candidate structure"
    x = logistic_map(500)
    kw = dict(horizon=1, embedding=2, n_neighbors=3, model="mean")
    fc = ProjectionForecaster(**kw, **{width: 1e-300}).fit(x[:400])
    narrow = ProjectionForecaster(**kw, **{width: 1e-100}).fit(x[:400])  # nearest alone too
    np.testing.assert_array_equal(fc.forecast(x, 1), narrow.forecast(x, 1))
    assert np.isfinite(fc.forecast(x, 1)[1:]).all()


def test_a_channel_independent_forecaster_names_the_channel_beyond_reach_of_its_scale():
    # each channel model checked its own one-channel slice: it said "y channel 0" for any
    x = logistic_map(500)
    y = np.c_[x, x * 1e-100]
    fc = ProjectionForecaster(horizon=1, embedding=2, model="mean", channel_independent=True)
    fc.fit(y[:400])
    y[450, 1] = 1e100
    with pytest.raises(ValueError, match="y channel 1 lies more than"):
        fc.forecast(y, 1)


def test_cv_results_mark_the_structure_kept_at_each_anchor_which_need_not_score_best():
    y = np.sin(np.arange(600) / 7) + 0.05 * np.random.default_rng(0).normal(size=600)
    f = ProjectionForecaster(horizon=3).fit(y)
    cv = f.cv_results_
    for h, params in f.best_params_.items():
        kept = cv[(cv["horizon"] == h) & cv["chosen"]]
        assert len(kept) == 1
        row = kept.iloc[0]
        assert {k: row[k] for k in ("embedding", "delay", "model")} == {
            k: params[k] for k in ("embedding", "delay", "model")
        }
        assert row["mse"] >= cv[cv["horizon"] == h]["mse"].min()


def test_max_embedding_caps_the_neighbour_models_and_is_documented_not_to_cap_long_linear():
    # the docstring said "Largest pattern length tried when embedding is None", and the fit
    # chose a linear pattern of 128 samples under max_embedding=3
    t = np.arange(3000)
    y = np.sin(t / 12) + 0.5 * np.sin(t / 40) + 0.1 * np.random.default_rng(0).normal(size=3000)
    fc = ProjectionForecaster(horizon=1, max_embedding=3).fit(y)
    tried = pd.DataFrame(fc.cv_results_).groupby("model")["embedding"].max()
    assert (tried.drop(["linear", "recursive_linear"]) <= 3).all()
    assert tried["linear"] > 3  # the long linear patterns go beyond it
    doc = " ".join(ProjectionForecaster.__doc__.split())
    said = doc[doc.index("max_embedding : int") :][:400]
    assert 'Not a cap on the "linear" and "recursive_linear" models' in said
    assert "to cap them, give ``embedding``" in said
    # embedding given caps every model
    capped = ProjectionForecaster(horizon=1, embedding=[1, 2, 3]).fit(y)
    assert pd.DataFrame(capped.cv_results_)["embedding"].max() <= 3
