"""LightningModules that train the nets of :mod:`tssdpa.models.nets`, and a training helper.

* :class:`DenoisingSystem` -- a :class:`~tssdpa.models.DenoisingNet` on (noisy, clean) windows;
* :class:`ForecastingSystem` -- a :class:`~tssdpa.models.ForecastingNet` on (past, future)
  windows, optionally starting from the closed-form ridge DLinear
  (:func:`~tssdpa.models.ridge.ridge_linear_init`);
* :func:`train_system` -- a Lightning ``Trainer`` run with early stopping that never returns a
  model worse on validation than the one it started from (used by the learned estimators).

Every hyperparameter is an explicit argument of ``__init__`` (what LightningCLI reads), and the
systems know nothing about where their data comes from: the caller hands them the training
series for the ridge start.
"""

from __future__ import annotations

import copy
import math
import tempfile
from typing import Literal

import lightning as L
import torch
from torch import Tensor

from tssdpa.checks import check_choice, check_moving_average, check_positive
from tssdpa.estimators.input_notes import SettingChangedWarning, tell
from tssdpa.models.nets import DenoisingNet, ForecastingNet, check_learn_decay, clipped_settings
from tssdpa.models.quiet import lightning_info_hidden
from tssdpa.models.ridge import RIDGE_GRID, ridge_linear_init

__all__ = ["DenoisingSystem", "ForecastingSystem", "train_system"]


class _SystemBase(L.LightningModule):
    """MSE on the finite targets; AdamW; ``train_loss`` / ``val_loss`` / ``test_*`` logged,
    averaged over the processes of a DDP run (logged per process, each had chosen its
    checkpoint and its early stop on its own share of the windows)."""

    net: torch.nn.Module

    def __init__(self, lr: float, weight_decay: float):
        super().__init__()
        check_positive(lr, "lr")
        check_positive(weight_decay, "weight_decay", allow_zero=True)
        self.lr, self.weight_decay = lr, weight_decay

    def _errors(self, batch) -> Tensor:
        inputs, targets = batch
        pred = self.net(inputs)
        ok = ~torch.isnan(targets)
        return pred[ok] - targets[ok]

    def _loss(self, batch) -> tuple[Tensor, int]:
        """``(MSE over the batch's finite targets, how many there are)``: 0 (with zero
        gradients) for a batch with none, logged with that weight, so that an epoch's loss is
        the MSE over all its finite targets. ``mean`` of none was NaN, which made the epoch's
        ``val_loss`` NaN: training stopped after one epoch and its weights were discarded."""
        err = self._errors(batch)
        n = err.numel()
        return err.square().sum() / max(n, 1), n

    def training_step(self, batch, batch_idx):
        loss, n = self._loss(batch)
        self.log("train_loss", loss, prog_bar=True, on_epoch=True, on_step=False, batch_size=n,
                 sync_dist=True)  # fmt: skip
        return loss

    def validation_step(self, batch, batch_idx):
        loss, n = self._loss(batch)
        self.log("val_loss", loss, prog_bar=True, on_epoch=True, on_step=False, batch_size=n,
                 sync_dist=True)  # fmt: skip
        return loss

    def test_step(self, batch, batch_idx):
        """Logs ``test_loss`` (MSE) and ``test_mae`` over the finite targets of the test set."""
        err = self._errors(batch)
        n = err.numel()
        loss = err.square().sum() / max(n, 1)
        self.log("test_loss", loss, on_epoch=True, on_step=False, batch_size=n, sync_dist=True)
        mae = err.abs().sum() / max(n, 1)
        self.log("test_mae", mae, on_epoch=True, on_step=False, batch_size=n, sync_dist=True)
        return loss

    def predict_step(self, batch, batch_idx):
        """The net's output on the inputs of an (inputs, targets) batch (Lightning's default
        called the net on the pair itself: a TypeError)."""
        inputs = batch[0] if isinstance(batch, (tuple, list)) else batch
        return self.net(inputs)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)

    def forward(self, x: Tensor) -> Tensor:
        """The net's output on a batch."""
        return self.net(x)


class DenoisingSystem(_SystemBase):
    """LightningModule: a :class:`~tssdpa.models.DenoisingNet` trained on (noisy, clean)
    windows with an MSE loss. Batches are pairs of (B, T, C) tensors.

    Parameters
    ----------
    n_channels : int
        Channels C.
    lr, weight_decay : float
        AdamW settings.
    d_model, num_heads, num_layers, dim_feedforward, window, sigma, learn_sigma, decay,
    learn_decay, dropout
        Network settings, as in :class:`~tssdpa.models.DenoisingNet`. ``learn_decay=True``
        (the default) with ``decay=None`` is refused at fit (:meth:`check_fit_settings`); it
        builds, with no decay, so that a checkpoint saved with it (before 2026-12-06, when
        it learned no decay without a word) loads as it was trained.

    Examples
    --------
    >>> import torch
    >>> from tssdpa.models import DenoisingSystem
    >>> system = DenoisingSystem(n_channels=1, d_model=8, num_heads=2, num_layers=1)
    >>> system(torch.randn(2, 20, 1)).shape
    torch.Size([2, 20, 1])
    """

    def __init__(
        self, n_channels: int, lr: float = 3e-3, weight_decay: float = 0.0, d_model: int = 32,
        num_heads: int = 4, num_layers: int = 2, dim_feedforward: int = 64, window: int = 16,
        sigma: float = 2.0, learn_sigma: bool = True, decay: float | None = 0.9,
        learn_decay: bool = True, dropout: float = 0.0,
    ):  # fmt: skip
        super().__init__(lr, weight_decay)
        self.save_hyperparameters()
        self.net = DenoisingNet(
            n_channels,
            d_model=d_model,
            num_heads=num_heads,
            num_layers=num_layers,
            dim_feedforward=dim_feedforward,
            window=window,
            sigma=sigma,
            learn_sigma=learn_sigma,
            decay=decay,
            learn_decay=learn_decay and decay is not None,  # refused at fit, loaded as saved
            dropout=dropout,
        )

    def check_fit_settings(self) -> None:
        """``ValueError`` naming the settings that build (a checkpoint loads) but are not
        fitted: ``learn_decay=True`` with ``decay=None``, no decay to learn (it was dropped
        without a word)."""
        check_learn_decay(self.hparams.learn_decay, self.hparams.decay)

    def on_fit_start(self) -> None:
        self.check_fit_settings()

    def on_train_batch_start(self, batch, batch_idx) -> None:
        # windows shorter than the attention window hold none of its longer lags: they were
        # never trained, and filtering on a longer series used them (LearnedProjectionFilter:
        # window 64 on windows of 16, test MSE 0.041 where window 16 gave 0.029)
        T = batch[0].shape[1]
        if T < self.net.window:
            raise ValueError(f"the training windows hold {T} samples, fewer than window="
                             f"{self.net.window}: take window <= {T}, or longer windows "
                             "(seq_len)")  # fmt: skip


class ForecastingSystem(_SystemBase):
    """LightningModule: a :class:`~tssdpa.models.ForecastingNet` trained on (past, future)
    windows with an MSE loss. Batches are pairs ((B, lookback, C), (B, horizon, C)).

    Parameters
    ----------
    lookback, horizon, n_channels : int
        Window lengths and channels.
    lr, weight_decay : float
        AdamW settings.
    linear_init : {"none", "ridge"}
        ``"ridge"``: the linear (DLinear) branch starts as the closed-form ridge DLinear of
        the training split, its penalty and level normalisation (unless given) chosen on
        validation windows; the caller sets it with :meth:`init_linear_ridge` before
        ``Trainer.fit`` (which raises ``RuntimeError`` otherwise). The attention head starts
        at zero, so training starts from that linear forecaster. ``"none"``: DLinear's
        averaging start.
    linear_lr_scale : float
        Learning-rate multiplier of the linear branch (0 freezes it).
    channel_independent, moving_average, patch_len, d_model, num_heads, num_layers,
    dim_feedforward, sigma, learn_sigma, decay, learn_decay, dropout, attention
        Network settings, as in :class:`~tssdpa.models.ForecastingNet`.
    normalize : {None, "last", "none"}
        Level normalisation of the linear branch (NLinear or DLinear). None: the ridge start
        chooses it on validation (``"last"`` without one). A given one is kept: the ridge
        start searches its penalties with that normalisation only (before 2026-12-06 it
        chose the normalisation on validation whatever was given).

    Examples
    --------
    >>> import torch
    >>> from tssdpa.models import ForecastingSystem
    >>> system = ForecastingSystem(lookback=48, horizon=12, n_channels=2, d_model=16)
    >>> system(torch.randn(3, 48, 2)).shape
    torch.Size([3, 12, 2])
    """

    def __init__(
        self, lookback: int, horizon: int, n_channels: int, lr: float = 1e-3,
        weight_decay: float = 0.0, linear_init: Literal["none", "ridge"] = "none",
        linear_lr_scale: float = 1.0, channel_independent: bool = True, moving_average: int = 25,
        patch_len: int = 16, d_model: int = 64, num_heads: int = 4, num_layers: int = 1,
        dim_feedforward: int = 128, sigma: float = 4.0, learn_sigma: bool = True,
        decay: float | None = None, learn_decay: bool = False, dropout: float = 0.0,
        attention: bool = True, normalize: Literal["last", "none"] | None = None,
    ):  # fmt: skip
        super().__init__(lr, weight_decay)
        check_choice(linear_init, "linear_init", ("none", "ridge"))
        check_choice(normalize, "normalize", (None, "last", "none"))  # the net's has no None
        check_positive(linear_lr_scale, "linear_lr_scale", allow_zero=True)
        self.save_hyperparameters()
        self.linear_init, self.linear_lr_scale = linear_init, float(linear_lr_scale)
        self.net = ForecastingNet(
            lookback,
            horizon,
            n_channels,
            channel_independent=channel_independent,
            moving_average=moving_average,
            patch_len=patch_len,
            d_model=d_model,
            num_heads=num_heads,
            num_layers=num_layers,
            dim_feedforward=dim_feedforward,
            sigma=sigma,
            learn_sigma=learn_sigma,
            decay=decay,
            learn_decay=learn_decay,
            dropout=dropout,
            attention=attention,
            normalize="last" if normalize is None else normalize,
        )
        for p in self._linear_params():
            p.requires_grad_(self.linear_lr_scale > 0)
        self._clipping_told = False  # check_fit_settings warns once
        #: summary of the ridge start (None until :meth:`init_linear_ridge`); checkpointed
        self.linear_init_info: dict | None = None

    def _linear_params(self):
        return [p for n, p in self.net.named_parameters() if n.startswith("linear_")]

    def init_linear_ridge(self, train_series, val_pairs, grid=None) -> dict:
        """Closed-form ridge DLinear on ``train_series`` (T, C) into the linear branch, the
        configuration chosen on ``val_pairs`` = (past, future) windows.

        See :func:`~tssdpa.models.ridge.ridge_linear_init`; returns its summary, also kept in
        ``linear_init_info``. With a :class:`~tssdpa.data.lightning.ForecastDataModule`:
        ``system.init_linear_ridge(dm.train_series(), dm.val_pairs())``. A ``normalize`` given
        to the system keeps the configurations of ``grid`` (default
        :data:`~tssdpa.models.ridge.RIDGE_GRID`) with that normalisation only.
        """
        given = self.hparams.normalize
        if given is not None:  # the user's choice, not the one validation prefers
            grid = [c for c in (RIDGE_GRID if grid is None else grid) if c["normalize"] == given]
            if not grid:
                raise ValueError(f"grid: no configuration with normalize={given!r}, the "
                                 "system's; give one, or normalize=None to choose it on "
                                 "validation")  # fmt: skip
        self.linear_init_info = ridge_linear_init(self.net, train_series, val_pairs, grid)
        return self.linear_init_info

    def check_fit_settings(
        self, owner: str = "ForecastingSystem", recorded: str = "net.moving_average and "
        "net.patch_len",
    ) -> None:  # fmt: skip
        """``ValueError`` naming a setting that is built (a saved model loads) but not fitted:
        an even ``moving_average`` (it was rounded up; ``DLinearForecaster`` refuses it).

        A ``moving_average`` or ``patch_len`` longer than the lookback is built shorter
        (:func:`~tssdpa.models.nets.clipped_settings`): warned of once, by ``owner``, saying
        that ``recorded`` hold the values used (a user who set 51 believed the model used 51)."""
        check_moving_average(self.hparams.moving_average)
        clipped = clipped_settings(self.net, self.hparams.moving_average, self.hparams.patch_len)
        if clipped and not self._clipping_told:
            self._clipping_told = True
            # a note, not a bare warning: the CLI tells it where it silences the others
            tell(SettingChangedWarning(f"{owner}: {'; '.join(clipped)}; {recorded} hold the "
                                       "values used"))  # fmt: skip

    def on_fit_start(self) -> None:
        self.check_fit_settings()
        # the ridge start needs the training series, which only the caller knows
        if self.linear_init == "ridge" and self.linear_init_info is None:
            raise RuntimeError(
                "ForecastingSystem(linear_init='ridge'): call "
                "system.init_linear_ridge(train_series, val_pairs) before fitting (with a "
                "ForecastDataModule: init_linear_ridge(dm.train_series(), dm.val_pairs()))"
            )

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["linear_init_info"] = self.linear_init_info

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        # Weights from a checkpoint are a start of their own: a checkpoint written before the
        # start was recorded must not ask for a ridge start that would overwrite them.
        info = checkpoint.get("linear_init_info")
        if info is None and self.linear_init == "ridge":
            info = {"from_checkpoint": True}
        self.linear_init_info = info

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
    system: L.LightningModule,
    train_pairs,
    val_pairs,
    *,
    max_epochs: int,
    batch_size: int,
    patience: int,
    accelerator: str = "auto",
    enable_progress_bar: bool = True,
    checkpoint_dir: str | None = None,
    random_state: int = 0,
    trainer_kwargs: dict | None = None,
) -> dict:
    """Train ``system`` with early stopping on ``val_loss``, keeping the best model.

    The starting model is a candidate too: patience counts from its validation loss, and it
    is restored when no epoch beats it, so training never ends worse on validation.

    Parameters
    ----------
    system : LightningModule
        Logs ``val_loss`` in ``validation_step`` (as the systems of this module do).
    train_pairs, val_pairs : tuple of array_like
        ``(inputs, targets)`` windows, e.g. (N, T, C) each; cast to float32.
    max_epochs, batch_size, patience : int
        Training settings (training batches shuffled by a generator seeded with
        ``random_state``).
    accelerator : str
        Lightning accelerator.
    enable_progress_bar : bool
        False also hides Lightning's info lines ("GPU available: ...", tips) from this thread.
    checkpoint_dir : str or None
        Where the best checkpoint goes (a temporary folder, removed after, when None); refused
        with ``enable_checkpointing=False`` in ``trainer_kwargs``.
    random_state : int
        Seeds Lightning's generators and the shuffling.
    trainer_kwargs : dict or None
        Extra ``lightning.Trainer`` arguments (override the above).

    Returns
    -------
    dict
        ``{"initial_val_loss", "final_val_loss", "epochs", "kept_initial"}``; ``system`` is
        left on the CPU in eval mode.
    """
    from lightning.pytorch.callbacks import Callback, EarlyStopping, ModelCheckpoint
    from torch.utils.data import DataLoader, TensorDataset

    L.seed_everything(random_state, verbose=False)
    to_t = [torch.as_tensor(a, dtype=torch.float32) for a in (*train_pairs, *val_pairs)]
    for name, targets in (("train_pairs", to_t[1]), ("val_pairs", to_t[3])):
        # no finite target, no loss: every val_loss was NaN, early stopping ended the fit
        # after one epoch and the untrained start was kept, without a word
        if not bool(torch.isfinite(targets).any()):
            raise ValueError(f"{name}: the targets hold no finite value, so there is no loss "
                             "to train or validate on")  # fmt: skip
    g = torch.Generator().manual_seed(random_state)
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
    if checkpoint_dir is not None and not kwargs.get("enable_checkpointing", True):
        # the folder was ignored: no file written there, and no word of it
        raise ValueError(f"checkpoint_dir={str(checkpoint_dir)!r} is given but trainer_kwargs "
                         "sets enable_checkpointing=False, so nothing would be written there: "
                         "drop one of them")  # fmt: skip
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
    else:  # no checkpoint files: the best epoch's weights in memory (the last epoch's were
        # kept, worse on validation than the best: 0.299 against 0.164 in the test)

        class BestWeights(Callback):
            best, state = math.inf, None

            def on_validation_end(self, trainer, module):
                loss = trainer.callback_metrics.get("val_loss")
                fitting = trainer.state.fn == "fit" and not trainer.sanity_checking
                if fitting and loss is not None and float(loss) < self.best:
                    self.best, self.state = float(loss), copy.deepcopy(module.state_dict())

        callbacks.append(best := BestWeights())
    # the caller's own callbacks (trainer_kwargs) run beside these: passed on as a second
    # callbacks= they raised TypeError ("got multiple values for keyword argument")
    extra = kwargs.pop("callbacks", None)
    extra = [] if extra is None else [extra] if isinstance(extra, Callback) else extra
    if not isinstance(extra, list | tuple) or not all(isinstance(c, Callback) for c in extra):
        # "'int' object is not iterable", or Lightning's error, named no argument
        raise TypeError("trainer_kwargs['callbacks'] must be a Lightning Callback or a list of "
                        f"them, got {extra!r}")  # fmt: skip
    callbacks += list(extra)
    # a fit without a progress bar prints nothing of Lightning's own (devices found, tips)
    with lightning_info_hidden(not kwargs["enable_progress_bar"]):
        trainer = L.Trainer(callbacks=callbacks, **kwargs)
        initial = trainer.validate(system, val_dl, verbose=False)[0]["val_loss"]
        if math.isfinite(initial):  # patience counts from the starting model too
            early.best_score = torch.tensor(float(initial))
        start = copy.deepcopy(system.state_dict())
        trainer.fit(system, train_dl, val_dl)
        if ckpt is not None and ckpt.best_model_path:
            state = torch.load(ckpt.best_model_path, map_location="cpu", weights_only=True)
            system.load_state_dict(state["state_dict"])
        elif ckpt is None and best.state is not None:
            system.load_state_dict(best.state)
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
