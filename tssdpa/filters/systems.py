"""Lightning tier of the learned filters: :class:`DenoisingSystem`, :class:`ForecastingSystem`.

Kept apart from :mod:`tssdpa.filters.learned` so that importing the estimators does not import
Lightning (slow); the estimators import this module when they train or load.
"""

from __future__ import annotations

import copy
import math
import tempfile

import lightning as L
import torch
from torch import Tensor

from tssdpa.filters.learned import DenoisingNet, ForecastingNet

__all__ = ["DenoisingSystem", "ForecastingSystem", "train_system"]


class _SystemBase(L.LightningModule):
    def __init__(self, lr: float, weight_decay: float):
        super().__init__()
        self.lr, self.weight_decay = lr, weight_decay

    def _errors(self, batch) -> Tensor:
        inputs, targets = batch
        pred = self.net(inputs)
        ok = ~torch.isnan(targets)
        return pred[ok] - targets[ok]

    def _loss(self, batch) -> Tensor:
        return torch.mean(self._errors(batch) ** 2)

    def training_step(self, batch, batch_idx):
        loss = self._loss(batch)
        self.log("train_loss", loss, prog_bar=True, on_epoch=True, on_step=False)
        return loss

    def validation_step(self, batch, batch_idx):
        loss = self._loss(batch)
        self.log("val_loss", loss, prog_bar=True, on_epoch=True, on_step=False)
        return loss

    def test_step(self, batch, batch_idx):
        """Logs ``test_loss`` (MSE) and ``test_mae`` over the finite targets of the test set."""
        err = self._errors(batch)
        n = err.numel()
        loss = torch.mean(err**2)
        self.log("test_loss", loss, on_epoch=True, on_step=False, batch_size=n)
        self.log("test_mae", err.abs().mean(), on_epoch=True, on_step=False, batch_size=n)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class DenoisingSystem(_SystemBase):
    """LightningModule: a :class:`DenoisingNet` trained on (noisy, clean) windows, MSE loss.

    Batches are pairs of (B, T, C) tensors. ``net_kwargs`` go to :class:`DenoisingNet`.

    Examples
    --------
    >>> import torch
    >>> from tssdpa.filters import DenoisingSystem
    >>> system = DenoisingSystem(n_channels=1, d_model=8, num_heads=2, num_layers=1)
    >>> system(torch.randn(2, 20, 1)).shape
    torch.Size([2, 20, 1])
    """

    def __init__(self, n_channels: int, lr: float = 3e-3, weight_decay: float = 0.0, **net_kwargs):
        super().__init__(lr, weight_decay)
        self.save_hyperparameters()
        self.net = DenoisingNet(n_channels, **net_kwargs)


class ForecastingSystem(_SystemBase):
    """LightningModule: a :class:`ForecastingNet` trained on (past, future) windows, MSE loss.

    Batches are pairs ((B, lookback, C), (B, horizon, C)).

    ``linear_init="ridge"``: before training, the linear (DLinear) branch is set to the
    closed-form ridge DLinear fitted on the training split, its penalty (and level
    normalisation) chosen on the validation windows (:func:`~tssdpa.filters.learned.
    ridge_linear_init`); the attention head starts at zero, so training starts from that
    linear forecaster. Call :meth:`init_linear_ridge` yourself, or fit with a datamodule that
    has ``task`` (series ``task.y``, ``task.split.train``) and ``val_set`` like
    :class:`tssdpa.data.lightning.ForecastDataModule`, and it is done in ``setup("fit")``.
    ``linear_lr_scale`` multiplies the learning rate of the linear branch (0 freezes it).

    Examples
    --------
    >>> import torch
    >>> from tssdpa.filters import ForecastingSystem
    >>> system = ForecastingSystem(lookback=48, horizon=12, n_channels=2, d_model=16)
    >>> system(torch.randn(3, 48, 2)).shape
    torch.Size([3, 12, 2])
    """

    def __init__(
        self,
        lookback: int,
        horizon: int,
        n_channels: int,
        lr: float = 1e-3,
        weight_decay: float = 0.0,
        linear_init: str = "none",
        linear_lr_scale: float = 1.0,
        **net_kwargs,
    ):
        super().__init__(lr, weight_decay)
        if linear_init not in ("none", "ridge"):
            raise ValueError(f"linear_init must be 'none' or 'ridge'; got {linear_init!r}")
        if not float(linear_lr_scale) >= 0:
            raise ValueError(f"linear_lr_scale must be >= 0; got {linear_lr_scale!r}")
        self.save_hyperparameters()
        self.linear_init, self.linear_lr_scale = linear_init, float(linear_lr_scale)
        self.net = ForecastingNet(lookback, horizon, n_channels, **net_kwargs)
        for p in self._linear_params():
            p.requires_grad_(self.linear_lr_scale > 0)
        self.linear_init_info: dict | None = None

    def _linear_params(self):
        return [p for n, p in self.net.named_parameters() if n.startswith("linear_")]

    def init_linear_ridge(self, train_series, val_pairs, grid=None) -> dict:
        """Closed-form ridge DLinear on ``train_series`` (T, C) into the linear branch, the
        configuration chosen on ``val_pairs`` = (past, future) windows; returns its summary."""
        from tssdpa.filters.learned import ridge_linear_init

        self.linear_init_info = ridge_linear_init(self.net, train_series, val_pairs, grid)
        return self.linear_init_info

    def init_linear_from_datamodule(self, dm) -> dict:
        """:meth:`init_linear_ridge` with the training series and validation windows of a
        :class:`~tssdpa.data.lightning.ForecastDataModule` (set up here if needed)."""
        dm.setup("fit")
        task = dm.task
        past, future = dm.val_set.tensors
        return self.init_linear_ridge(task.y[: task.split.train], (past.numpy(), future.numpy()))

    def setup(self, stage: str) -> None:
        if stage != "fit" or self.linear_init != "ridge" or self.linear_init_info is not None:
            return
        from tssdpa.data.lightning import ForecastDataModule

        dm = getattr(self.trainer, "datamodule", None)
        if not isinstance(dm, ForecastDataModule):
            raise RuntimeError(
                "linear_init='ridge': call init_linear_ridge(train_series, val_pairs) before "
                "fitting, or fit with a ForecastDataModule"
            )
        self.init_linear_from_datamodule(dm)

    def configure_optimizers(self):
        lin = {id(p) for p in self._linear_params()}
        rest = [p for p in self.parameters() if id(p) not in lin and p.requires_grad]
        groups = [{"params": rest}] if rest else []
        if self.linear_lr_scale > 0:
            groups.append({"params": self._linear_params(), "lr": self.lr * self.linear_lr_scale})
        if not groups:
            raise ValueError("nothing to train: attention=False and linear_lr_scale=0")
        return torch.optim.AdamW(groups, lr=self.lr, weight_decay=self.weight_decay)


def train_system(
    system,
    train_pairs,
    val_pairs,
    *,
    max_epochs,
    batch_size,
    patience,
    accelerator,
    enable_progress_bar,
    checkpoint_dir,
    seed,
    trainer_kwargs,
):
    """Run a Lightning Trainer with early stopping + best checkpoint; returns the history."""
    from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
    from torch.utils.data import DataLoader, TensorDataset

    L.seed_everything(seed, verbose=False)
    to_t = [torch.as_tensor(a, dtype=torch.float32) for a in (*train_pairs, *val_pairs)]
    g = torch.Generator().manual_seed(seed)
    train_dl = DataLoader(
        TensorDataset(to_t[0], to_t[1]), batch_size=batch_size, shuffle=True, generator=g
    )
    val_dl = DataLoader(TensorDataset(to_t[2], to_t[3]), batch_size=batch_size)
    kwargs = dict(
        max_epochs=max_epochs,
        accelerator=accelerator,
        enable_progress_bar=enable_progress_bar,
        logger=False,
        enable_model_summary=False,
        deterministic=False,
    )
    kwargs.update(trainer_kwargs or {})
    early = EarlyStopping("val_loss", patience=patience, mode="min")
    callbacks = [early]
    ckpt = None
    tmp = None
    if kwargs.get("enable_checkpointing", True):
        if checkpoint_dir is None:
            tmp = tempfile.TemporaryDirectory(prefix="tssdpa-ckpt-")
            checkpoint_dir = tmp.name
        ckpt = ModelCheckpoint(
            dirpath=checkpoint_dir,
            monitor="val_loss",
            mode="min",
            save_top_k=1,
            save_weights_only=True,
        )
        callbacks.append(ckpt)
    trainer = L.Trainer(callbacks=callbacks, **kwargs)
    initial = trainer.validate(system, val_dl, verbose=False)[0]["val_loss"]
    if math.isfinite(initial):  # patience counts from the starting model too
        early.best_score = torch.tensor(float(initial))
    start = copy.deepcopy(system.state_dict())
    trainer.fit(system, train_dl, val_dl)
    if ckpt is not None and ckpt.best_model_path:
        state = torch.load(ckpt.best_model_path, map_location="cpu", weights_only=True)
        system.load_state_dict(state["state_dict"])
    final = trainer.validate(system, val_dl, verbose=False)[0]["val_loss"]
    # the starting point is a candidate too: training never returns a worse validation loss
    kept_initial = not final < initial
    if kept_initial:
        system.load_state_dict(start)
        final = initial
    if tmp is not None:
        tmp.cleanup()
    system.cpu().eval()
    return {
        "initial_val_loss": float(initial),
        "final_val_loss": float(final),
        "epochs": int(trainer.current_epoch),
        "kept_initial": bool(kept_initial),
    }
