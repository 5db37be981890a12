"""Lightning tier of the learned filters: :class:`DenoisingSystem`, :class:`ForecastingSystem`.

Kept apart from :mod:`tssdpa.filters.learned` so that importing the estimators does not import
Lightning (slow); the estimators import this module when they train or load.
"""

from __future__ import annotations

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

    def _loss(self, batch) -> Tensor:
        inputs, targets = batch
        pred = self.net(inputs)
        ok = ~torch.isnan(targets)
        return torch.mean((pred[ok] - targets[ok]) ** 2)

    def training_step(self, batch, batch_idx):
        loss = self._loss(batch)
        self.log("train_loss", loss, prog_bar=True, on_epoch=True, on_step=False)
        return loss

    def validation_step(self, batch, batch_idx):
        loss = self._loss(batch)
        self.log("val_loss", loss, prog_bar=True, on_epoch=True, on_step=False)
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
        **net_kwargs,
    ):
        super().__init__(lr, weight_decay)
        self.save_hyperparameters()
        self.net = ForecastingNet(lookback, horizon, n_channels, **net_kwargs)


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
    callbacks = [EarlyStopping("val_loss", patience=patience, mode="min")]
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
    trainer.fit(system, train_dl, val_dl)
    if ckpt is not None and ckpt.best_model_path:
        state = torch.load(ckpt.best_model_path, map_location="cpu", weights_only=True)
        system.load_state_dict(state["state_dict"])
    final = trainer.validate(system, val_dl, verbose=False)[0]["val_loss"]
    if tmp is not None:
        tmp.cleanup()
    system.cpu().eval()
    return {
        "initial_val_loss": float(initial),
        "final_val_loss": float(final),
        "epochs": int(trainer.current_epoch),
    }
