"""Tests for tssdpa.filters.ProjectionForecaster."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from tssdpa.filters import ProjectionForecaster


def logistic_map(n, seed=0, noise=0.005):
    rng = np.random.default_rng(seed)
    x = np.empty(n)
    x[0] = 0.3 + 0.1 * rng.random()
    for t in range(1, n):
        x[t] = 3.8 * x[t - 1] * (1 - x[t - 1])
    return x + noise * rng.normal(size=n)


def ar2(n, seed=0):
    rng = np.random.default_rng(seed)
    z = np.zeros(n)
    e = rng.normal(size=n)
    for t in range(2, n):
        z[t] = 1.5 * z[t - 1] - 0.7 * z[t - 2] + e[t]
    return z


def mse(pred, y, h):
    return float(np.nanmean((pred[:-h] - y[h:]) ** 2))


def reference_analogue(fc, y, h):
    """Explicit loops: entry t = weighted mean of y[j+h] over complete patterns j <= t-h."""
    p, W, s = fc.embedding, fc.library_size, fc.sigma_
    z = (y - fc.mean_[0]) / fc.scale_[0]
    out = np.full(len(y), np.nan)
    for t in range(p - 1, len(y)):
        q = z[t - p + 1 : t + 1][::-1]
        logw, vals = [], []
        for j in range(max(p - 1, t - h - W + 1), t - h + 1):
            k = z[j - p + 1 : j + 1][::-1]
            lw = -np.sum((q - k) ** 2) / (2 * s**2)
            if fc.decay is not None:
                lw += (t - h - j) * np.log(fc.decay)
            logw.append(lw)
            vals.append(y[j + h])
        if logw:
            w = np.exp(np.array(logw) - max(logw))
            out[t] = np.sum(w * np.array(vals)) / w.sum()
    return out


@pytest.mark.parametrize("decay", [None, 0.99])
@pytest.mark.parametrize("h", [1, 4])
def test_analogue_matches_reference(decay, h):
    y = logistic_map(300)
    fc = ProjectionForecaster(embedding=3, horizon=h, library_size=50, decay=decay).fit(y)
    np.testing.assert_allclose(
        fc.forecast(y, horizon=h), reference_analogue(fc, y, h), atol=1e-12, equal_nan=True
    )


@pytest.mark.parametrize("model", ["analogue", "hybrid"])
def test_forecast_uses_only_the_past(model):
    y = logistic_map(400)
    fc = ProjectionForecaster(embedding=4, horizon=3, library_size=100, model=model).fit(y)
    base = fc.forecast(y, horizon=3)
    t = 250
    changed = y.copy()
    changed[t + 1 :] = np.random.default_rng(9).normal(size=len(y) - t - 1)
    np.testing.assert_array_equal(fc.forecast(changed, horizon=3)[: t + 1], base[: t + 1])
    # not enough history -> NaN. The analogue needs a complete pattern with a known future
    # (t >= lags - 1 + h); the hybrid falls back to its linear part from t >= lags - 1.
    first = 4 - 1 + 3 if model == "analogue" else 4 - 1
    assert np.isnan(base[:first]).all()
    assert np.isfinite(base[first:]).all()


def test_forecast_path_and_predict_are_consistent():
    y = np.column_stack([logistic_map(300), logistic_map(300, seed=1)])
    fc = ProjectionForecaster(embedding=3, horizon=2, library_size=80).fit(y)
    path = fc.forecast_path(y, horizon=4)
    assert path.shape == (300, 4, 2)
    np.testing.assert_array_equal(path[:, 2], fc.forecast(y, horizon=3))
    np.testing.assert_array_equal(fc.predict(4), path[-1])
    one = ProjectionForecaster(embedding=3, horizon=1, library_size=80).fit(y[:, 0])
    assert one.forecast_path(y[:, 0], horizon=3).shape == (300, 3)
    assert one.predict(3).shape == (3,)


def test_analogue_beats_persistence_on_chaotic_map():
    y = logistic_map(3000)
    train, test = y[:2000], y[2000:]
    fc = ProjectionForecaster(embedding=3, horizon=1).fit(train)
    pred = fc.forecast(test, horizon=1)
    persistence = test.copy()
    assert mse(pred, test, 1) < 0.2 * mse(persistence, test, 1)


def test_hybrid_beats_analogue_on_linear_process():
    y = ar2(3000)
    train, test = y[:2000], y[2000:]
    errs = {}
    for model in ("analogue", "hybrid"):
        fc = ProjectionForecaster(embedding=4, horizon=1, model=model).fit(train)
        errs[model] = mse(fc.forecast(test, horizon=1), test, 1)
    assert errs["hybrid"] < errs["analogue"]


def test_fit_picks_lowest_score():
    y = logistic_map(600)
    fc = ProjectionForecaster(embedding=3, horizon=1, sigma=[0.01, 0.1, 10.0]).fit(y)
    best = fc.cv_results_.sort_values("mse").iloc[0]["sigma"]
    assert fc.sigma_ == best == fc.best_params_["sigma"]
    assert list(fc.cv_results_["sigma"]) == [0.01, 0.1, 10.0]


def test_pandas_and_save_load(tmp_path):
    idx = pd.date_range("2024-01-01", periods=300, freq="h")
    s = pd.Series(logistic_map(300), index=idx, name="load")
    fc = ProjectionForecaster(embedding=3, horizon=2, model="hybrid", library_size=64).fit(s)
    out = fc.forecast(s, horizon=2)
    assert isinstance(out, pd.Series) and out.index.equals(idx)
    fc.save(tmp_path / "fc")
    g = ProjectionForecaster.load(tmp_path / "fc")
    np.testing.assert_array_equal(g.forecast(s, horizon=2).to_numpy(), out.to_numpy())
    np.testing.assert_array_equal(g.predict(2), fc.predict(2))


def test_forecaster_bad_inputs():
    y = logistic_map(100)
    with pytest.raises(ValueError, match="embedding"):
        ProjectionForecaster(embedding=0).fit(y)
    with pytest.raises(TypeError, match="library_size"):
        ProjectionForecaster(library_size=10.5).fit(y)
    with pytest.raises(ValueError, match="model"):
        ProjectionForecaster(model="neural").fit(y)
    with pytest.raises(ValueError, match="fit"):
        ProjectionForecaster().forecast(y)
    fc = ProjectionForecaster(embedding=3, horizon=2, model="hybrid").fit(y)
    with pytest.raises(ValueError, match="horizon"):
        fc.forecast(y, horizon=0)
    with pytest.raises(ValueError, match="horizon 2"):
        fc.forecast(y, horizon=3)
    with pytest.raises(ValueError, match="channel"):
        fc.forecast(np.column_stack([y, y]))
    with pytest.raises(ValueError, match="empty"):
        ProjectionForecaster().fit(np.zeros(0))
    with pytest.raises(ValueError, match="all NaN"):
        ProjectionForecaster().fit(np.full(50, np.nan))


def test_channel_independent_equals_separate_fits(tmp_path):
    y = np.column_stack([logistic_map(400), ar2(400)])
    joint = ProjectionForecaster(
        embedding=3, horizon=2, library_size=100, model="hybrid", channel_independent=True
    ).fit(y)
    sep = [
        ProjectionForecaster(embedding=3, horizon=2, library_size=100, model="hybrid").fit(y[:, c])
        for c in range(2)
    ]
    expected = np.column_stack([m.forecast(y[:, c], horizon=2) for c, m in enumerate(sep)])
    np.testing.assert_array_equal(joint.forecast(y, horizon=2), expected)
    assert joint.forecast_path(y, horizon=2).shape == (400, 2, 2)
    joint.save(tmp_path / "ci")
    again = ProjectionForecaster.load(tmp_path / "ci")
    np.testing.assert_array_equal(again.forecast(y, horizon=2), expected)
    np.testing.assert_array_equal(again.predict(2), joint.predict(2))


def test_old_parameter_names_still_work_with_a_deprecation_warning(tmp_path):
    y = logistic_map(300)
    with pytest.warns(DeprecationWarning, match="deprecated"):
        old = ProjectionForecaster(lags=3, window=50, horizon=2).fit(y)
    new = ProjectionForecaster(embedding=3, library_size=50, horizon=2).fit(y)
    np.testing.assert_array_equal(old.forecast(y, horizon=2), new.forecast(y, horizon=2))
    with pytest.warns(DeprecationWarning, match="library_size"):
        assert new.set_params(window=60) is new and new.library_size == 60


def test_nested_channel_states_are_checked_on_load(tmp_path):
    y = np.column_stack([logistic_map(300), ar2(300)])
    ProjectionForecaster(embedding=3, channel_independent=True).fit(y).save(tmp_path / "f")
    cfg_path = tmp_path / "f" / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["fitted"]["channel_models_"][0]["_forecast_h"] = 1  # would shadow a method
    cfg_path.write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="unknown fitted attribute '_forecast_h'"):
        ProjectionForecaster.load(tmp_path / "f")


def test_channel_independent_saves_from_before_0_2_still_load(tmp_path):
    """Before 0.2 each channel's model was saved in its own sub-folder channel_<c>/."""
    from safetensors.numpy import save_file

    y = np.column_stack([logistic_map(300), ar2(300)])
    new = ProjectionForecaster(embedding=3, channel_independent=True).fit(y)
    old = tmp_path / "old"
    old.mkdir()
    for c, m in enumerate(new.channel_models_):
        m.save(old / f"channel_{c}")
    params = {**new.get_params(), "lags": 3, "window": 1000}
    del params["embedding"], params["library_size"]
    cfg = {"kind": "ProjectionForecaster", "format": 1, "params": params,
           "fitted": {"sigma_": new.sigma_, "n_channels_": 2}}  # fmt: skip
    (old / "config.json").write_text(json.dumps(cfg))
    save_file({"series_": y}, str(old / "arrays.safetensors"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # old names in a file are mapped silently
        again = ProjectionForecaster.load(old)
    np.testing.assert_array_equal(again.forecast(y, horizon=1), new.forecast(y, horizon=1))
    (old / "channel_1" / "config.json").unlink()
    with pytest.raises(FileNotFoundError, match="channel_1"):
        ProjectionForecaster.load(old)
