"""The LightningModules DenoisingSystem / ForecastingSystem and the ridge start."""

from __future__ import annotations

import inspect

import lightning as L
import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from tssdpa.models import RIDGE_GRID, DenoisingSystem, ForecastingSystem

# tiny models: one torch thread, and Lightning's chatter silenced (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread", "quiet_warnings")


def _trainer(**kw):
    base = dict(
        enable_progress_bar=False,
        logger=False,
        enable_checkpointing=False,
        accelerator="cpu",
        enable_model_summary=False,
    )
    return L.Trainer(**{**base, **kw})


def _square_wave(n, noise=0.3, seed=0):
    rng = np.random.default_rng(seed)
    clean = np.sign(np.sin(np.linspace(0, 50, n)))[:, None]
    return clean, clean + noise * rng.normal(size=clean.shape)


def _ar_series(n=900, channels=2, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    y = np.stack([np.sin(t * (0.11 + 0.04 * c)) for c in range(channels)], 1)
    return y + 0.2 * rng.normal(size=y.shape)


def _pairs(z, lookback, horizon):
    w = np.lib.stride_tricks.sliding_window_view(z, lookback + horizon, axis=0)
    w = w.transpose(0, 2, 1)
    return w[:, :lookback], w[:, lookback:]


@pytest.mark.parametrize("cls", [DenoisingSystem, ForecastingSystem])
def test_systems_list_every_hyperparameter_in_init_and_save_them(cls):
    """LightningCLI reads the signature: no ``**kwargs``, a type for every argument."""
    sig = inspect.signature(cls.__init__)
    params = [p for n, p in sig.parameters.items() if n != "self"]
    assert all(p.kind == p.POSITIONAL_OR_KEYWORD for p in params)
    assert all(p.annotation is not inspect.Parameter.empty for p in params)
    args = {"n_channels": 2} if cls is DenoisingSystem else {"lookback": 16, "horizon": 4}
    system = cls(**{"n_channels": 2, **args})
    assert set(system.hparams) == {p.name for p in params}


def test_tiny_lightning_run_lowers_validation_loss():
    clean, noisy = _square_wave(960)
    xs = torch.tensor(noisy.reshape(-1, 32, 1), dtype=torch.float32)  # 30 windows of 32
    ys = torch.tensor(clean.reshape(-1, 32, 1), dtype=torch.float32)
    train = DataLoader(TensorDataset(xs[:24], ys[:24]), batch_size=8, shuffle=True)
    val = DataLoader(TensorDataset(xs[24:], ys[24:]), batch_size=8)
    L.seed_everything(0, verbose=False)
    system = DenoisingSystem(1, d_model=16, num_heads=2, num_layers=1, window=8, lr=1e-2)
    trainer = _trainer(max_epochs=3)
    before = trainer.validate(system, val, verbose=False)[0]["val_loss"]
    trainer.fit(system, train, val)
    after = trainer.validate(system, val, verbose=False)[0]["val_loss"]
    assert after < before


def test_a_denoising_system_refuses_to_train_on_windows_shorter_than_its_window():
    # lags beyond the training windows went untrained, and filtering used them
    clean, noisy = _square_wave(256)
    xs = torch.tensor(noisy.reshape(-1, 8, 1), dtype=torch.float32)
    ys = torch.tensor(clean.reshape(-1, 8, 1), dtype=torch.float32)
    system = DenoisingSystem(1, d_model=8, num_heads=2, num_layers=1, window=16)
    before = {k: v.clone() for k, v in system.state_dict().items()}
    with pytest.raises(ValueError, match=r"^the training windows hold 8 samples, fewer than "
                       r"window=16: take window <= 8, or longer windows \(seq_len\)$"):  # fmt: skip
        _trainer(max_epochs=1).fit(system, DataLoader(TensorDataset(xs, ys), batch_size=8))
    for k, v in system.state_dict().items():  # refused before a step
        torch.testing.assert_close(v, before[k])


def test_denoising_system_test_step_logs_mse_and_mae():
    clean, noisy = _square_wave(256)
    xs = torch.tensor(noisy.reshape(-1, 32, 1), dtype=torch.float32)
    ys = torch.tensor(clean.reshape(-1, 32, 1), dtype=torch.float32)
    system = DenoisingSystem(1, d_model=8, num_heads=2, num_layers=1, window=4)
    trainer = _trainer()
    [res] = trainer.test(system, DataLoader(TensorDataset(xs, ys), batch_size=4), verbose=False)
    want = float(torch.mean((system(xs) - ys) ** 2))  # head at zero: the identity
    assert res["test_loss"] == pytest.approx(want, rel=1e-5)
    assert res["test_mae"] == pytest.approx(float(torch.mean((xs - ys).abs())), rel=1e-5)


def test_epoch_losses_are_the_mse_over_all_finite_targets_a_batch_without_any_included():
    """A batch with no finite target adds nothing (its mean was NaN, so was the epoch's
    val_loss: train_system stopped after one epoch and kept the untrained weights), and a batch
    with a few counts by its finite targets, not by its windows."""
    clean, noisy = _square_wave(384)
    xs = torch.tensor(noisy.reshape(-1, 32, 1), dtype=torch.float32)  # 12 windows
    ys = torch.tensor(clean.reshape(-1, 32, 1), dtype=torch.float32)
    ys[4:8] = float("nan")  # the second batch of 4: no target at all
    ys[8:11, 5:] = float("nan")  # the third: a few
    system = DenoisingSystem(1, d_model=8, num_heads=2, num_layers=1, window=4)
    data = DataLoader(TensorDataset(xs, ys), batch_size=4)
    with torch.no_grad():
        err = system(xs) - ys
    ok = ~torch.isnan(ys)
    want_mse, want_mae = float(err[ok].square().mean()), float(err[ok].abs().mean())
    [val] = _trainer().validate(system, data, verbose=False)
    assert val["val_loss"] == pytest.approx(want_mse, rel=1e-5)
    [res] = _trainer().test(system, data, verbose=False)
    assert res["test_loss"] == pytest.approx(want_mse, rel=1e-5)
    assert res["test_mae"] == pytest.approx(want_mae, rel=1e-5)


# ------------------------------------------------------------------ ridge-initialised linear branch
@pytest.mark.parametrize("normalize", ["none", "last"])
def test_ridge_init_equals_closed_form_dlinear(normalize):
    """Before training the ridge-initialised net forecasts like the closed-form DLinear."""
    from tssdpa.baselines import DLinearForecaster

    y = _ar_series()
    train, val = y[:600], _pairs(y[600:], 40, 8)
    system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8, linear_init="ridge")
    grid = [{"ridge": 1e-2, "normalize": normalize}]
    info = system.init_linear_ridge(train, val, grid=grid)
    assert (info["ridge"], info["normalize"]) == (1e-2, normalize)
    assert system.linear_init_info is info
    ref = DLinearForecaster(40, 8, moving_average=25, ridge=1e-2, normalize=normalize).fit(train)
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

    assert sorted(map(str, get_method("dlinear", "forecast").grid({}))) == sorted(
        map(str, RIDGE_GRID)
    )
    y = _ar_series()
    system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8)
    info = system.init_linear_ridge(y[:600], _pairs(y[600:], 40, 8))
    assert len(info["scores"]) == len(RIDGE_GRID)
    # chosen per step, so at least as good as the best single configuration
    assert info["val_mse"] <= min(s["val_mse"] for s in info["scores"]) * (1 + 1e-12)
    assert system.net.level_norm.item() == float(info["normalize"] == "last")


def test_a_normalize_given_to_the_system_is_kept_by_the_ridge_start():
    # the ridge start chose the normalisation on validation whatever the user had given
    # (normalize="last" on Lorenz came back "none"); it now chooses the penalties only
    y = _ar_series()
    train, val = y[:600], _pairs(y[600:], 40, 8)
    for given in ("none", "last"):  # one of them is not the one validation would choose
        system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8, normalize=given)
        info = system.init_linear_ridge(train, val)
        assert info["normalize"] == given
        assert system.net.level_norm.item() == float(given == "last")
        assert {s["normalize"] for s in info["scores"]} == {given}
    with pytest.raises(ValueError, match=r"^grid: no configuration with normalize='last'"):
        ForecastingSystem(40, 8, 2, patch_len=8, d_model=8, normalize="last").init_linear_ridge(
            train, val, grid=[{"ridge": 1.0, "normalize": "none"}]
        )


def test_a_normalize_the_system_does_not_know_is_refused_listing_none_among_the_choices():
    # the net's own message listed 'none' and 'last' only, while the system also takes None
    with pytest.raises(ValueError, match=r"^normalize must be one of \(None, 'last', 'none'\)"):
        ForecastingSystem(40, 8, 2, patch_len=8, d_model=8, normalize="mean")


def test_ridge_init_chooses_the_penalty_of_each_step_on_its_own_validation_error():
    from tssdpa.baselines import DLinearForecaster

    # a short chaotic-like series: near steps want no penalty, far steps heavy shrinkage
    t = np.arange(700)
    y = np.sin(0.3 * t + 2 * np.sin(0.05 * t))[:, None] + 0.05 * np.random.default_rng(0).normal(
        size=(700, 1)
    )
    train, (Xv, Yv) = y[:400], _pairs(y[460:], 40, 24)
    system = ForecastingSystem(40, 24, 1, patch_len=8, d_model=8)
    info = system.init_linear_ridge(train, (Xv, Yv))
    ridges = info["ridge"] if isinstance(info["ridge"], list) else [info["ridge"]] * 24
    ref = DLinearForecaster(40, 24, ridge=ridges, normalize=info["normalize"]).fit(train)
    got = ref.forecast_path(y[460:], horizon=24)[39:-24]  # the chosen per-step model
    err = ((got - Yv) ** 2).mean(axis=(0, 2))
    for r in {c["ridge"] for c in RIDGE_GRID}:  # no single penalty beats it at any step
        one = DLinearForecaster(40, 24, ridge=r, normalize=info["normalize"]).fit(train)
        e1 = ((one.forecast_path(y[460:], horizon=24)[39:-24] - Yv) ** 2).mean(axis=(0, 2))
        assert np.all(err <= e1 * (1 + 1e-9))
    assert info["val_mse"] == pytest.approx(err.mean(), rel=1e-9)


def test_ridge_init_needs_a_finite_validation_target():
    y = _ar_series(300)
    past, future = _pairs(y[200:], 40, 8)
    system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8)
    with pytest.raises(ValueError, match="finite target"):
        system.init_linear_ridge(y[:200], (past, np.full_like(future, np.nan)))


def test_ridge_init_refuses_non_finite_validation_inputs_naming_val_pairs():
    """A NaN in one past window made every score NaN, and the grid's first configuration was
    kept without a word (val_mse NaN)."""
    y = _ar_series(400, channels=1)
    past, future = _pairs(y[300:], 24, 6)
    system = ForecastingSystem(lookback=24, horizon=6, n_channels=1, linear_init="ridge")
    for part, value, match in [(past, np.nan, "past windows hold NaN"),
                               (past, np.inf, "past windows hold NaN or inf"),
                               (future, np.inf, "future windows hold inf")]:  # fmt: skip
        bad = part.copy()
        bad[3, 5, 0] = value
        pair = (bad, future) if part is past else (past, bad)
        with pytest.raises(ValueError, match=f"val_pairs: the {match}"):
            system.init_linear_ridge(y[:300], pair)
    future = future.copy()
    future[3, 5, 0] = np.nan  # a missing target is no target: still chosen
    assert np.isfinite(system.init_linear_ridge(y[:300], (past, future))["val_mse"])


def test_ridge_init_refuses_windows_of_another_shape_naming_val_pairs():
    """A one-channel past was broadcast against two target channels and scored without a
    word; other shapes failed inside numpy's einsum or broadcasting, unnamed."""
    y = _ar_series(400, channels=1)
    past, future = _pairs(y[300:], 24, 6)
    system = ForecastingSystem(lookback=24, horizon=6, n_channels=1, linear_init="ridge")
    for pair in [
        (past, np.concatenate([future, future], 2)),
        (past[:, 1:], future),
        (past, future[:, :5]),
        (past[:-1], future),
        (past[..., 0], future[..., 0]),
    ]:
        with pytest.raises(ValueError, match=r"val_pairs must be \(past \(N, 24, C\)"):
            system.init_linear_ridge(y[:300], pair)
    assert np.isfinite(system.init_linear_ridge(y[:300, 0], (past, future))["val_mse"])


def test_ridge_init_refuses_an_empty_grid_naming_it():
    # "cannot unpack non-iterable NoneType object"
    y = _ar_series(400)
    system = ForecastingSystem(lookback=32, horizon=4, n_channels=1, linear_init="ridge")
    with pytest.raises(ValueError, match="grid: no configuration to try"):
        system.init_linear_ridge(y[:300], _pairs(y[300:], 32, 4), grid=[])


def test_ridge_system_refuses_to_fit_before_init_linear_ridge():
    y = _ar_series(300)
    xs, ys = (torch.as_tensor(a.copy(), dtype=torch.float32) for a in _pairs(y, 40, 8))
    system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8, linear_init="ridge")
    with pytest.raises(RuntimeError, match="init_linear_ridge"):
        _trainer(max_epochs=1).fit(system, DataLoader(TensorDataset(xs, ys), batch_size=64))


def test_a_forecasting_system_with_an_even_moving_average_builds_but_refuses_to_fit_naming_it():
    # as DLinearForecaster: a checkpoint saved with one (rounded up) still loads
    system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8, moving_average=24)
    assert system.net.moving_average == 25
    xs, ys = (
        torch.as_tensor(a.copy(), dtype=torch.float32) for a in _pairs(_ar_series(300), 40, 8)
    )
    with pytest.raises(ValueError, match=r"^moving_average must be odd .*got 24: take 23 or 25"):
        _trainer(max_epochs=1).fit(system, DataLoader(TensorDataset(xs, ys), batch_size=64))


def test_a_forecasting_system_warns_once_at_fit_of_a_moving_average_built_shorter():
    # lookback 16: moving_average=25 was built as 17 without a word
    system = ForecastingSystem(16, 2, 1, patch_len=8, d_model=8, num_heads=2,
                               dim_feedforward=16, moving_average=25)  # fmt: skip
    assert system.net.moving_average == 17
    xs, ys = (torch.as_tensor(a.copy(), dtype=torch.float32) for a in _pairs(_ar_series(200, 1),
                                                                              16, 2))  # fmt: skip
    with pytest.warns(UserWarning) as told:
        system.check_fit_settings()
        _trainer(max_epochs=1).fit(system, DataLoader(TensorDataset(xs, ys), batch_size=64))
    notes = [str(w.message) for w in told if "is built as" in str(w.message)]
    assert notes == ["ForecastingSystem: moving_average=25 is built as 17 (at most lookback=16, "
                     "+ 1 as it is even); net.moving_average and net.patch_len hold the values "
                     "used"]  # fmt: skip


def test_a_denoising_system_without_a_decay_refuses_to_learn_one_at_fit_naming_both():
    # learn_decay=True (the default) with decay=None learned no decay, unsaid. It builds (a
    # checkpoint saved with it loads as trained) and is refused at fit
    system = DenoisingSystem(n_channels=1, d_model=8, num_heads=2, num_layers=1, decay=None)
    assert not [n for n, _ in system.named_parameters() if "decay" in n]
    clean, noisy = _square_wave(200)
    xs, ys = (torch.as_tensor(a[None].repeat(4, 0), dtype=torch.float32) for a in (noisy, clean))
    message = r"^learn_decay=True needs a decay to start from, got decay=None"
    with pytest.raises(ValueError, match=message):
        system.check_fit_settings()
    with pytest.raises(ValueError, match=message):
        _trainer(max_epochs=1).fit(system, DataLoader(TensorDataset(xs, ys), batch_size=2))
    DenoisingSystem(n_channels=1, d_model=8, num_heads=2, decay=None,
                    learn_decay=False).check_fit_settings()  # fmt: skip


def test_forecasting_system_rejects_bad_settings():
    with pytest.raises(ValueError, match="linear_init"):
        ForecastingSystem(16, 4, 1, linear_init="lasso")
    with pytest.raises(ValueError, match="linear_lr_scale"):
        ForecastingSystem(16, 4, 1, linear_lr_scale=-1.0)


def test_frozen_linear_branch_stays_closed_form():
    y = _ar_series(500)
    xs, ys = (torch.as_tensor(a.copy(), dtype=torch.float32) for a in _pairs(y, 40, 8))
    system = ForecastingSystem(40, 8, 2, patch_len=8, d_model=8, lr=1e-2, linear_lr_scale=0.0)
    system.init_linear_ridge(y[:300], _pairs(y[300:], 40, 8))
    before = {k: v.clone() for k, v in system.net.state_dict().items() if "linear_" in k}
    trainer = _trainer(max_epochs=1)
    dl = DataLoader(TensorDataset(xs, ys), batch_size=64)
    trainer.fit(system, dl)
    after = system.net.state_dict()
    for k, v in before.items():
        torch.testing.assert_close(after[k], v, rtol=0, atol=0)
    assert system.net.attn_head.weight.abs().sum() > 0  # the residual did train
    # test_step: LightningCLI's ``test`` subcommand
    [res] = trainer.test(system, dl, verbose=False)
    assert set(res) == {"test_loss", "test_mae"} and np.isfinite(list(res.values())).all()


def test_nothing_to_train_without_attention_and_a_frozen_linear_branch():
    system = ForecastingSystem(16, 4, 1, attention=False, linear_lr_scale=0.0)
    assert not any(p.requires_grad for p in system.parameters())
    with pytest.raises(ValueError, match="nothing to train"):
        system.configure_optimizers()


def test_checkpoint_keeps_the_ridge_start(tmp_path):
    y = _ar_series(400)
    system = ForecastingSystem(32, 4, 2, patch_len=8, d_model=8, linear_init="ridge")
    system.init_linear_ridge(y[:300], _pairs(y[300:], 32, 4))
    trainer = _trainer()
    trainer.strategy.connect(system)
    trainer.save_checkpoint(tmp_path / "m.ckpt", weights_only=True)
    loaded = ForecastingSystem.load_from_checkpoint(tmp_path / "m.ckpt")
    assert loaded.linear_init_info == system.linear_init_info
    assert loaded.hparams == system.hparams
    x = torch.randn(3, 32, 2)
    with torch.no_grad():
        torch.testing.assert_close(loaded.eval()(x), system.eval()(x))


def test_a_checkpoint_without_a_recorded_start_counts_as_started(tmp_path):
    """Checkpoints written before the start was recorded hold trained weights: fitting them
    again must not ask for (and overwrite them with) a new ridge start."""
    system = ForecastingSystem(32, 4, 2, patch_len=8, d_model=8, linear_init="ridge")
    system.init_linear_ridge(_ar_series(400)[:300], _pairs(_ar_series(400)[300:], 32, 4))
    trainer = _trainer()
    trainer.strategy.connect(system)
    trainer.save_checkpoint(tmp_path / "m.ckpt", weights_only=True)
    ckpt = torch.load(tmp_path / "m.ckpt", weights_only=True)
    del ckpt["linear_init_info"]
    torch.save(ckpt, tmp_path / "old.ckpt")
    loaded = ForecastingSystem.load_from_checkpoint(tmp_path / "old.ckpt")
    assert loaded.linear_init_info == {"from_checkpoint": True}
    loaded.on_fit_start()  # no RuntimeError: the weights are the start


def test_forecast_datamodule_gives_the_ridge_start_its_data():
    """The LightningCLI path of experiments/forecast.py, on a small synthetic task."""
    from tssdpa.data.lightning import ForecastDataModule

    dm = ForecastDataModule(dataset="lorenz", lookback=32, horizon=4, n=800, batch_size=64)
    train = dm.train_series()
    past, future = dm.val_pairs()
    assert train.shape == (dm.task.split.train, dm.n_channels)
    assert past.shape[1:] == (32, dm.n_channels) and future.shape[1:] == (4, dm.n_channels)
    assert len(past) == len(dm.val_set)
    system = ForecastingSystem(32, 4, dm.n_channels, patch_len=8, d_model=8, linear_init="ridge")
    info = system.init_linear_ridge(train, (past, future))
    trainer = _trainer(max_epochs=1, limit_train_batches=2)
    [res] = trainer.validate(system, datamodule=dm, verbose=False)
    assert res["val_loss"] == pytest.approx(info["val_mse"], rel=1e-4)
    trainer.fit(system, datamodule=dm)
    assert trainer.current_epoch == 1


def test_train_system_without_checkpoint_files_keeps_the_best_epoch_not_the_last(tmp_path):
    """enable_checkpointing=False (as the learned estimators' examples and tests train) kept
    the last epoch's weights: 0.299 on validation here, where the best epoch had 0.164."""
    from tssdpa.models.systems import train_system

    y = np.sin(0.1 * np.arange(500))[:, None]
    y = y + 0.3 * np.random.default_rng(0).normal(size=y.shape)
    train, val = _pairs(y[:350], 32, 4), _pairs(y[350:], 32, 4)
    kw = dict(max_epochs=8, batch_size=8, patience=8, enable_progress_bar=False,
              accelerator="cpu")  # fmt: skip
    losses, weights = [], []
    for checkpoints in (str(tmp_path), False):
        torch.manual_seed(0)
        system = ForecastingSystem(32, 4, 1, patch_len=8, d_model=8, num_heads=2,
                                   dim_feedforward=16, lr=0.05, linear_init="none")  # fmt: skip
        extra = {"enable_checkpointing": False} if checkpoints is False else {}
        h = train_system(system, train, val, checkpoint_dir=checkpoints or None,
                         trainer_kwargs={"logger": False, **extra}, **kw)  # fmt: skip
        losses.append(h["final_val_loss"])
        weights.append(system.net.state_dict())
    assert losses[1] == pytest.approx(losses[0], rel=1e-6)  # the same best epoch, in memory
    for k, v in weights[0].items():
        torch.testing.assert_close(weights[1][k], v)


def test_train_system_refuses_a_checkpoint_dir_with_checkpointing_turned_off(tmp_path):
    # the folder was ignored: the fit ran, and nothing was written where the user asked
    from tssdpa.models.systems import train_system

    y = _ar_series(300, channels=1)
    train, val = _pairs(y[:200], 16, 2), _pairs(y[200:], 16, 2)
    system = ForecastingSystem(16, 2, 1, patch_len=8, d_model=8, num_heads=2,
                               dim_feedforward=16, linear_init="none")  # fmt: skip
    with pytest.raises(ValueError, match=r"^checkpoint_dir='.*ck' is given but trainer_kwargs "
                       r"sets enable_checkpointing=False"):  # fmt: skip
        train_system(system, train, val, max_epochs=1, batch_size=32, patience=1,
                     accelerator="cpu", enable_progress_bar=False,
                     checkpoint_dir=tmp_path / "ck",
                     trainer_kwargs={"logger": False, "enable_checkpointing": False})  # fmt: skip
    assert not (tmp_path / "ck").exists()


@pytest.mark.parametrize("part", ["train_pairs", "val_pairs"])
def test_train_system_refuses_a_set_without_a_finite_target_naming_it(part):
    # a validation set without one: every val_loss NaN, early stopping ended the fit after
    # one epoch, and the untrained start was kept without a word
    from tssdpa.models.systems import train_system

    y = _ar_series(300, channels=1)
    train, val = _pairs(y[:200], 16, 2), _pairs(y[200:], 16, 2)
    if part == "train_pairs":
        train = (train[0], np.full_like(train[1], np.nan))
    else:
        val = (val[0], np.full_like(val[1], np.nan))
    system = ForecastingSystem(16, 2, 1, patch_len=8, d_model=8, num_heads=2,
                               dim_feedforward=16, linear_init="none")  # fmt: skip
    with pytest.raises(ValueError, match=f"{part}: the targets hold no finite value"):
        train_system(system, train, val, max_epochs=2, batch_size=32, patience=2,
                     accelerator="cpu", enable_progress_bar=False,
                     trainer_kwargs={"logger": False, "enable_checkpointing": False})  # fmt: skip


def test_train_system_runs_the_callers_own_callbacks_from_trainer_kwargs():
    """trainer_kwargs=dict(callbacks=[...]) raised TypeError: Trainer() got multiple values
    for keyword argument 'callbacks'."""
    from lightning.pytorch.callbacks import Callback

    from tssdpa.models.systems import train_system

    class Epochs(Callback):
        count = 0

        def on_train_epoch_end(self, trainer, module):
            self.count += 1

    y = _ar_series(300, channels=1)
    train, val = _pairs(y[:200], 16, 2), _pairs(y[200:], 16, 2)
    for given in ([Epochs()], Epochs()):  # a list, or one callback, as Trainer takes them
        system = ForecastingSystem(16, 2, 1, patch_len=8, d_model=8, num_heads=2,
                                   dim_feedforward=16, linear_init="none")  # fmt: skip
        kw = {"logger": False, "enable_checkpointing": False, "callbacks": given}
        train_system(system, train, val, max_epochs=2, batch_size=32, patience=2,
                     accelerator="cpu", enable_progress_bar=False, trainer_kwargs=kw)  # fmt: skip
        assert (given[0] if isinstance(given, list) else given).count == 2


def test_predict_gives_the_nets_outputs_on_the_test_windows_of_the_data_module():
    # LightningCLI's `predict` was a MisconfigurationException traceback (no
    # predict_dataloader), and Lightning's default predict_step called the net on the
    # (inputs, targets) pair
    from tssdpa.data.lightning import DenoiseDataModule

    dm = DenoiseDataModule(n=800, seq_len=32, batch_size=5)
    system = DenoisingSystem(n_channels=dm.n_channels, d_model=8, num_heads=2, num_layers=1)
    out = _trainer().predict(system.eval(), datamodule=dm)
    inputs = dm.test_set.tensors[0]
    with torch.no_grad():
        torch.testing.assert_close(torch.cat(out), system(inputs))


@pytest.mark.parametrize("step", ["training_step", "validation_step", "test_step"])
def test_the_systems_epoch_losses_are_averaged_over_ddp_processes(step):
    # logged per process, each DDP process chose its checkpoint, stopped early and reported
    # by its own share of the validation windows (Lightning warned "use sync_dist=True")
    system = DenoisingSystem(n_channels=1, d_model=8, num_heads=2, num_layers=1)
    logged = []
    system.log = lambda name, value, **kw: logged.append((name, kw.get("sync_dist")))
    getattr(system, step)((torch.randn(2, 20, 1), torch.randn(2, 20, 1)), 0)
    assert logged and all(sync for _, sync in logged), logged


@pytest.mark.parametrize("given", [5, ["not a callback"], "EarlyStopping"])
def test_train_system_names_trainer_kwargs_callbacks_that_are_no_callbacks(given):
    # "'int' object is not iterable", or Lightning's error from inside the Trainer, named
    # no argument (tssdpa filter --params '{"trainer_kwargs": {"callbacks": 5}}')
    from tssdpa.models.systems import train_system

    y = _ar_series(300, channels=1)
    train, val = _pairs(y[:200], 16, 2), _pairs(y[200:], 16, 2)
    system = ForecastingSystem(16, 2, 1, patch_len=8, d_model=8, num_heads=2,
                               dim_feedforward=16, linear_init="none")  # fmt: skip
    kw = {"logger": False, "enable_checkpointing": False, "callbacks": given}
    with pytest.raises(TypeError, match=r"trainer_kwargs\['callbacks'\] must be a Lightning "):
        train_system(system, train, val, max_epochs=1, batch_size=32, patience=2,
                     accelerator="cpu", enable_progress_bar=False, trainer_kwargs=kw)  # fmt: skip
