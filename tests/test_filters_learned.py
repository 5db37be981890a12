"""Tests for the learned (torch + Lightning) projection filters and forecasters."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tssdpa.filters import LearnedProjectionFilter, LearnedProjectionForecaster
from tssdpa.filters.learned import DenoisingNet, ForecastingNet

TRAINER = dict(enable_checkpointing=False, accelerator="cpu", logger=False)


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """Tiny models: one thread avoids oversubscribing the shared cores (restored after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def square_wave(n=2400, noise=0.3, seed=0, channels=1):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 50, n)
    clean = np.stack([np.sign(np.sin(t * (1 + 0.3 * c))) for c in range(channels)], axis=1)
    noisy = clean + noise * rng.normal(size=clean.shape)
    return (clean[:, 0], noisy[:, 0]) if channels == 1 else (clean, noisy)


@pytest.fixture(scope="module")
def fitted_filter():
    clean, noisy = square_wave(1200, channels=2)
    f = LearnedProjectionFilter(
        window=6,
        seq_len=48,
        d_model=16,
        num_heads=2,
        num_layers=2,
        max_epochs=8,
        enable_progress_bar=False,
        trainer_kwargs=TRAINER,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f.fit(noisy, target=clean)
    return f, clean, noisy


@pytest.fixture(scope="module")
def fitted_forecaster():
    rng = np.random.default_rng(0)
    t = np.arange(1000)
    y = np.stack([np.sin(t * 0.13), np.cos(t * 0.05) + 0.1 * np.sin(t * 0.7)], 1)
    y = y + 0.05 * rng.normal(size=y.shape)
    fc = LearnedProjectionForecaster(
        lookback=48,
        horizon=12,
        patch_len=8,
        d_model=16,
        max_epochs=2,
        stride=4,
        enable_progress_bar=False,
        trainer_kwargs=TRAINER,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fc.fit(y)
    return fc, y


def test_tiny_lightning_run_lowers_validation_loss():
    import lightning as L
    from torch.utils.data import DataLoader, TensorDataset

    from tssdpa.filters import DenoisingSystem

    clean, noisy = square_wave(960, channels=1)
    xs = torch.tensor(noisy.reshape(-1, 32, 1), dtype=torch.float32)  # 30 windows of 32
    ys = torch.tensor(clean.reshape(-1, 32, 1), dtype=torch.float32)
    train = DataLoader(TensorDataset(xs[:24], ys[:24]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(xs[24:], ys[24:]), batch_size=8)
    L.seed_everything(0, verbose=False)
    system = DenoisingSystem(1, d_model=16, num_heads=2, num_layers=1, window=8, lr=1e-2)
    trainer = L.Trainer(
        max_epochs=3,
        enable_progress_bar=False,
        logger=False,
        enable_checkpointing=False,
        accelerator="cpu",
        enable_model_summary=False,
    )
    before = trainer.validate(system, val, verbose=False)[0]["val_loss"]
    trainer.fit(system, train, val)
    after = trainer.validate(system, val, verbose=False)[0]["val_loss"]
    assert after < before


def test_learned_filter_history_and_quality(fitted_filter):
    f, clean, noisy = fitted_filter
    assert f.history_["final_val_loss"] < f.history_["initial_val_loss"]
    y = f.filter(noisy)
    assert y.shape == noisy.shape
    # quality: closer to the clean signal than the noisy input, on the whole series and on
    # the validation tail the training never saw
    assert np.mean((y - clean) ** 2) < np.mean((noisy - clean) ** 2)
    v = slice(*f.split_["val"])
    assert np.mean((y[v] - clean[v]) ** 2) < np.mean((noisy[v] - clean[v]) ** 2)


def test_learned_validation_never_overlaps_training(fitted_filter, fitted_forecaster):
    """The series is split first (train | gap of one window | validation tail), then cut."""
    f, clean, noisy = fitted_filter
    (t0, t1), (v0, v1) = f.split_["train"], f.split_["val"]
    assert t0 == 0 and v1 == len(noisy) and v0 - t1 >= f.seq_len
    assert v1 - v0 == round(len(noisy) * f.val_fraction)
    fc, y = fitted_forecaster
    (t0, t1), (v0, v1) = fc.split_["train"], fc.split_["val"]
    assert v0 - t1 >= fc.lookback + fc.horizon and v1 == len(y)
    from tssdpa.filters.learned import _time_split

    for T, w, frac in [(1000, 48, 0.2), (300, 60, 0.1), (500, 7, 0.5)]:
        a, b = _time_split(T, w, frac)
        assert a >= w and b - a == w and T - b >= max(w, round(T * frac))
    with pytest.raises(ValueError, match="too short"):
        _time_split(100, 40, 0.2)
    with pytest.raises(ValueError, match="val_fraction"):
        _time_split(1000, 10, 1.0)


def test_denoising_net_is_causal_and_windowed_reference():
    """Block-wise evaluation == evaluating every t on just its receptive field (slow ref)."""
    torch.manual_seed(0)
    net = DenoisingNet(2, d_model=8, num_heads=2, num_layers=2, window=4).eval()
    with torch.no_grad():
        for p in net.head.parameters():
            p.normal_()  # make the attention path visible in the output
    x = torch.randn(1, 30, 2)
    with torch.no_grad():
        full = net(x)[0]
        rf = net.receptive_field
        ref = torch.stack([net(x[:, max(0, t - rf + 1) : t + 1])[0, -1] for t in range(30)])
    torch.testing.assert_close(full, ref, atol=1e-5, rtol=1e-5)


@settings(max_examples=3, deadline=None)
@given(cuts=st.lists(st.integers(1, 399), max_size=4))
def test_learned_filter_chunking_invariance(fitted_filter, cuts):
    f, clean, noisy = fitted_filter
    x = noisy[:400]
    y_once = f.filter(x)  # one pass, the reference for any chunking
    z = f.initial_state()
    parts = []
    bounds = [0, *sorted(set(cuts)), 400]
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            y, z = f.filter(x[a:b], zi=z)
            parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts), y_once, atol=1e-5)


def test_learned_filter_step_nan_and_save_load(fitted_filter, tmp_path):
    f, clean, noisy = fitted_filter
    x = noisy[:60].copy()
    x[10, 0] = np.nan
    y_once = f.filter(x)
    assert np.isfinite(y_once).all()
    s = f.initial_state()
    steps = []
    for i in range(60):
        y, s = f.step(x[i], s)
        steps.append(y)
    np.testing.assert_allclose(np.array(steps), y_once, atol=1e-5)
    f.save(tmp_path / "lf")
    g = LearnedProjectionFilter.load(tmp_path / "lf")
    np.testing.assert_array_equal(g.filter(noisy), f.filter(noisy))
    assert g.get_params() == f.get_params()
    with pytest.raises(ValueError, match="channel"):
        f.filter(noisy[:, :1])
    with pytest.raises(ValueError, match="zi"):
        f.filter(noisy, zi=np.zeros((2, 2)))


def test_forecasting_net_starts_as_dlinear():
    """With the attention head at zero the output equals a numpy DLinear reference."""
    torch.manual_seed(1)
    net = ForecastingNet(
        lookback=20, horizon=5, n_channels=2, moving_average=5, patch_len=4, d_model=8
    )
    with torch.no_grad():
        net.linear_trend.weight.normal_()
        net.linear_seasonal.weight.normal_()
    x = torch.randn(3, 20, 2, dtype=torch.float32)
    out = net(x).detach().numpy()
    xn = x.numpy().astype(np.float64)
    Wt, bt = (
        p.detach().numpy().astype(np.float64)
        for p in (net.linear_trend.weight, net.linear_trend.bias)
    )
    Ws, bs = (
        p.detach().numpy().astype(np.float64)
        for p in (net.linear_seasonal.weight, net.linear_seasonal.bias)
    )
    ref = np.empty((3, 5, 2))
    for b in range(3):
        for c in range(2):
            s = xn[b, :, c] - xn[b, -1, c]
            padded = np.r_[[s[0]] * 2, s, [s[-1]] * 2]
            trend = np.array([padded[i : i + 5].mean() for i in range(20)])
            ref[b, :, c] = Wt @ trend + bt + Ws @ (s - trend) + bs + xn[b, -1, c]
    np.testing.assert_allclose(out, ref, atol=1e-4)


def test_forecasting_net_gradients_reach_attention():
    net = ForecastingNet(lookback=16, horizon=4, n_channels=1, patch_len=4, d_model=8)
    x = torch.randn(2, 16, 1)
    net(x).pow(2).sum().backward()
    assert net.attn_head.weight.grad.abs().sum() > 0
    sig = [p for n, p in net.named_parameters() if "log_sigma" in n]
    assert sig  # sigma is learned


def test_learned_forecaster_interface(fitted_forecaster, tmp_path):
    fc, y = fitted_forecaster
    assert fc.history_["final_val_loss"] <= fc.history_["initial_val_loss"]
    path = fc.forecast_path(y, horizon=12)
    assert path.shape == (1000, 12, 2)
    assert np.isnan(path[:47]).all() and np.isfinite(path[47:]).all()
    np.testing.assert_array_equal(fc.forecast(y, horizon=5), path[:, 4])
    # causality: changing the future leaves earlier forecasts alone
    changed = y.copy()
    changed[900:] = 0.0
    np.testing.assert_array_equal(fc.forecast_path(changed, horizon=12)[:900], path[:900])
    assert fc.predict(12).shape == (12, 2)
    fc.save(tmp_path / "lfc")
    g = LearnedProjectionForecaster.load(tmp_path / "lfc")
    np.testing.assert_array_equal(g.forecast_path(y, horizon=12), path)
    np.testing.assert_array_equal(g.predict(3), fc.predict(3))
    with pytest.raises(ValueError, match="horizon"):
        fc.forecast(y, horizon=13)
    with pytest.raises(ValueError, match="channel"):
        fc.forecast(y[:, 0])


def test_learned_forecaster_multivariate_and_bad_input():
    y = np.sin(np.arange(400) * 0.2)[:, None] * np.array([[1.0, 0.5, 2.0]])
    fc = LearnedProjectionForecaster(
        lookback=24,
        horizon=4,
        channel_independent=False,
        patch_len=6,
        d_model=8,
        max_epochs=1,
        stride=4,
        enable_progress_bar=False,
        trainer_kwargs=TRAINER,
    )
    fc.fit(y[:300], y_val=y[300:])
    assert fc.forecast_path(y, horizon=4).shape == (400, 4, 3)
    with pytest.raises(ValueError, match="lookback"):
        LearnedProjectionForecaster(lookback=0).fit(y)
    with pytest.raises(ValueError, match="fit"):
        LearnedProjectionForecaster().forecast(y)


# ------------------------------------------------------------ ridge-initialised linear branch
def _ar_series(n=900, channels=2, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    y = np.stack([np.sin(t * (0.11 + 0.04 * c)) for c in range(channels)], 1)
    return y + 0.2 * rng.normal(size=y.shape)


def _pairs(z, lookback, horizon):
    w = np.lib.stride_tricks.sliding_window_view(z, lookback + horizon, axis=0)
    w = w.transpose(0, 2, 1)
    return w[:, :lookback], w[:, lookback:]


@pytest.mark.parametrize("normalize", ["none", "last"])
def test_ridge_init_equals_closed_form_dlinear(normalize):
    """Before training the ridge-initialised net forecasts like the closed-form DLinear."""
    from tssdpa.baselines import DLinearForecaster
    from tssdpa.filters import ForecastingSystem

    y = _ar_series()
    train, val = y[:600], _pairs(y[600:], 40, 8)
    system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8, linear_init="ridge")
    grid = [{"ridge": 1e-2, "normalize": normalize}]
    info = system.init_linear_ridge(train, val, grid=grid)
    assert (info["ridge"], info["normalize"]) == (1e-2, normalize)
    ref = DLinearForecaster(40, 8, kernel_size=25, ridge=1e-2, normalize=normalize).fit(train)
    want = ref.forecast_path(y, horizon=8)[39:]  # (T - 39, 8, 2)
    x = torch.as_tensor(
        np.lib.stride_tricks.sliding_window_view(y, 40, axis=0), dtype=torch.float32
    )
    with torch.no_grad():
        got = system.eval()(x.permute(0, 2, 1)).double().numpy()
    np.testing.assert_allclose(got, want, atol=2e-4, rtol=1e-4)
    # the validation MSE it reports is the linear model's on those windows
    pv = ref.forecast_path(y[600:], horizon=8)[39:-8]
    assert info["val_mse"] == pytest.approx(np.mean((pv - val[1]) ** 2), rel=1e-9)


def test_ridge_init_chooses_on_validation_the_harness_grid():
    from tssdpa.compare.registry import get_method
    from tssdpa.filters import ForecastingSystem
    from tssdpa.filters.learned import RIDGE_GRID

    assert sorted(map(str, get_method("dlinear", "forecast").grid({}))) == sorted(
        map(str, RIDGE_GRID)
    )
    y = _ar_series()
    system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8)
    info = system.init_linear_ridge(y[:600], _pairs(y[600:], 40, 8))
    assert len(info["scores"]) == len(RIDGE_GRID)
    assert info["val_mse"] == min(s["val_mse"] for s in info["scores"])
    assert system.net.level_norm.item() == float(info["normalize"] == "last")


def test_ridge_forecaster_starts_at_dlinear_and_never_ends_worse(tmp_path):
    """A learning rate that wrecks training: the starting (closed-form) model is kept."""
    from tssdpa.baselines import DLinearForecaster

    y = _ar_series(700)
    fc = LearnedProjectionForecaster(
        lookback=40,
        horizon=8,
        patch_len=8,
        d_model=8,
        dim_feedforward=16,
        lr=50.0,
        linear_lr_scale=1.0,
        max_epochs=2,
        stride=4,
        enable_progress_bar=False,
        trainer_kwargs=TRAINER,
    ).fit(y)
    h = fc.history_
    assert h["final_val_loss"] <= h["initial_val_loss"] and h["kept_initial"]
    assert fc.linear_init_["val_mse"] == pytest.approx(h["initial_val_loss"], rel=1e-4)
    a = fc.split_["train"][1]
    z = (y - fc.mean_) / fc.scale_
    ref = DLinearForecaster(
        40, 8, ridge=fc.linear_init_["ridge"], normalize=fc.linear_init_["normalize"]
    ).fit(z[:a])
    want = ref.forecast_path(z, horizon=8) * fc.scale_ + fc.mean_
    np.testing.assert_allclose(fc.forecast_path(y, horizon=8), want, atol=1e-3, equal_nan=True)
    # the choice and the level normalisation survive save / load
    fc.save(tmp_path / "m")
    g = LearnedProjectionForecaster.load(tmp_path / "m")
    assert g.linear_init_ == fc.linear_init_
    np.testing.assert_array_equal(g.forecast_path(y, horizon=8), fc.forecast_path(y, horizon=8))


def test_frozen_linear_branch_stays_closed_form():
    import lightning as L
    from torch.utils.data import DataLoader, TensorDataset

    from tssdpa.filters import ForecastingSystem

    y = _ar_series(500)
    xs, ys = (torch.as_tensor(a.copy(), dtype=torch.float32) for a in _pairs(y, 40, 8))
    system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8, lr=1e-2, linear_lr_scale=0.0)
    system.init_linear_ridge(y[:300], _pairs(y[300:], 40, 8))
    before = {k: v.clone() for k, v in system.net.state_dict().items() if "linear_" in k}
    trainer = L.Trainer(
        max_epochs=1,
        enable_progress_bar=False,
        logger=False,
        enable_checkpointing=False,
        accelerator="cpu",
        enable_model_summary=False,
    )
    dl = DataLoader(TensorDataset(xs, ys), batch_size=64)
    trainer.fit(system, dl)
    after = system.net.state_dict()
    for k, v in before.items():
        torch.testing.assert_close(after[k], v, rtol=0, atol=0)
    assert system.net.attn_head.weight.abs().sum() > 0  # the residual did train
    # test_step: LightningCLI's ``test`` subcommand
    [res] = trainer.test(system, dl, verbose=False)
    assert set(res) == {"test_loss", "test_mae"} and np.isfinite(list(res.values())).all()


def test_denoising_system_test_step():
    import lightning as L
    from torch.utils.data import DataLoader, TensorDataset

    from tssdpa.filters import DenoisingSystem

    clean, noisy = square_wave(256, channels=1)
    xs = torch.tensor(noisy.reshape(-1, 32, 1), dtype=torch.float32)
    ys = torch.tensor(clean.reshape(-1, 32, 1), dtype=torch.float32)
    system = DenoisingSystem(1, d_model=8, num_heads=2, num_layers=1, window=4)
    trainer = L.Trainer(logger=False, enable_progress_bar=False, accelerator="cpu")
    [res] = trainer.test(system, DataLoader(TensorDataset(xs, ys), batch_size=4), verbose=False)
    want = float(torch.mean((system(xs) - ys) ** 2))  # head at zero: the identity
    assert res["test_loss"] == pytest.approx(want, rel=1e-5)


def _quiet():
    return {
        "accelerator": "cpu",
        "enable_progress_bar": False,
        "trainer_kwargs": {"enable_checkpointing": False, "logger": False},
    }


def test_learned_fits_do_not_depend_on_the_global_random_state():
    rng = np.random.default_rng(0)
    clean = np.sin(np.arange(400) * 0.1)
    noisy = clean + 0.3 * rng.standard_normal(400)
    sums = []
    for burn in (0, 17):  # whatever consumed the global generator before must not matter
        torch.rand(burn)
        f = LearnedProjectionFilter(
            window=4,
            num_layers=1,
            d_model=8,
            dim_feedforward=8,
            seq_len=32,
            max_epochs=1,
            **_quiet(),
        ).fit(noisy, target=clean)
        g = LearnedProjectionForecaster(
            lookback=32,
            horizon=4,
            d_model=8,
            dim_feedforward=8,
            patch_len=8,
            max_epochs=1,
            **_quiet(),
        ).fit(noisy)
        sums.append([p.detach().clone() for m in (f, g) for p in m.system_.parameters()])
    for a, b in zip(*sums):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
