"""Forecasting experiments.

Learned model (LightningCLI; ``ForecastingSystem`` on the harness's windows):

    python experiments/forecast.py fit --config experiments/configs/forecast_etth1.yaml

With ``model.linear_init: ridge`` the linear branch starts as the closed-form ridge DLinear
fitted on the training split (penalty chosen on validation). The starting model (that one, or
the untrained DLinear average) is checkpointed too (``start.ckpt``; ``start-v1.ckpt`` beside an
earlier run's) and kept when no epoch beats its validation loss. After ``fit`` the chosen
checkpoint is scored on the test windows (DLinear protocol: z-scored data, every window,
stride 1) and one row per run is appended to ``--results_csv`` (test MSE/MAE, validation MSE
of the model and of its start, epochs, fit time). The resolved config goes beside the CSV
(``<its stem>.config.yaml``). ``test --config ... --ckpt_path CKPT`` scores a checkpoint through
``ForecastingSystem.test_step`` (``test_loss`` = MSE, ``test_mae``).

Classical baselines and nonparametric projection forecasters (the comparison harness):

    python experiments/forecast.py classical --dataset ETTh1 --out runs/forecast_etth1

which is ``tssdpa compare forecast --dataset ETTh1 --out ...``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd
import torch
from lightning.pytorch.cli import LightningCLI

from tssdpa.cli.experiment import (
    chosen_checkpoint,
    chosen_model,
    settings_row,
    start_checkpoint,
)
from tssdpa.data.lightning import ForecastDataModule
from tssdpa.files import replacing


def penalty_text(ridge) -> str:
    """The ridge penalty of the linear start as text: one value, or the per-step list."""
    if isinstance(ridge, (list, tuple)):
        return "[" + ", ".join(f"{float(r):g}" for r in ridge) + "]"
    return f"{float(ridge):g}"


class ForecastCLI(LightningCLI):
    def add_arguments_to_parser(self, parser):
        parser.link_arguments("data.lookback", "model.lookback")
        parser.link_arguments("data.horizon", "model.horizon")
        parser.link_arguments("data.n_channels", "model.n_channels", apply_on="instantiate")
        parser.add_argument("--results_csv", default="runs/forecast_learned.csv")

    def instantiate_classes(self):
        super().instantiate_classes()
        model = self.model
        if self.subcommand == "fit" and not model.hparams.attention and not model.linear_lr_scale:
            # failed in configure_optimizers, after the start was validated: a traceback (the
            # closed-form start alone is LearnedProjectionForecaster's, or test --ckpt_path)
            raise ValueError("--model.attention false with --model.linear_lr_scale 0: nothing "
                             "to train; train the linear branch (linear_lr_scale > 0) or the "
                             "attention")  # fmt: skip

    def before_fit(self):
        """``linear_init: ridge``: fit the closed-form linear branch on the training split;
        then score and checkpoint the starting model, a candidate for the best checkpoint.
        Without the ridge start it was none: at lr 0.3 the best epoch was kept at val MSE
        7.72 against the untrained start's 1.32."""
        self._tic = time.perf_counter()
        model, dm = self.model, self.datamodule
        info = None
        if model.linear_init == "ridge":
            info = model.init_linear_ridge(dm.train_series(), dm.val_pairs())
        self._start = start_checkpoint(self.trainer, model, dm)
        if info is not None:
            print(
                "linear branch: closed-form ridge DLinear (ridge="
                f"{penalty_text(info['ridge'])}, normalize={info['normalize']}), val MSE "
                f"{self._start[1]:.4f}"
            )

    def after_fit(self):
        from tssdpa.cli.experiment import smoke_run

        if smoke_run(self.trainer):
            return
        model, dm = self.model, self.datamodule
        start = self._start
        load, ckpt, val = chosen_checkpoint(self.trainer, model, dm, start)
        if not self.trainer.is_global_zero:  # one row per run, not one per DDP process
            return
        model = chosen_model(model, load)
        model.eval()
        se = ae = n = 0.0
        with torch.no_grad():
            for x, y in dm.test_dataloader():
                p = model(x)
                se += float(((p - y) ** 2).sum())
                ae += float((p - y).abs().sum())
                n += y.numel()
        h = dm.hparams
        fit_s = time.perf_counter() - getattr(self, "_tic", time.perf_counter())
        row = {
            "dataset": h.dataset,
            # the task's, as the harness records it: --data.features (M or S) is ETT's alone,
            # and a Lorenz row said "M" (or "S") of a univariate series
            "setting": dm.task.setting,
            "horizon": h.horizon,
            "seed": h.seed,
            # the seed of the weights' initialisation and the shuffling (``seed`` is the
            # data's): runs of --seed_everything 0 and 1 read as the same run without it
            "seed_everything": self.config[self.subcommand]["seed_everything"],
            "method": "learned_projection_system",
            "mse": se / n,
            "mae": ae / n,
            "n_windows": len(dm.test_set),
            "checkpoint": ckpt,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "val_mse": val,
            "start_val_mse": start[1],
            "epochs": int(self.trainer.current_epoch),
            "fit_s": round(fit_s, 1),
            **settings_row(self.config[self.subcommand]),  # lr, d_model, ...: what differs
        }
        out = Path(self.config[self.subcommand]["results_csv"])
        out.parent.mkdir(parents=True, exist_ok=True)
        table = pd.DataFrame([row])
        if out.exists():  # older files may lack the newer columns
            table = pd.concat([pd.read_csv(out), table], ignore_index=True)
            table["epochs"] = table["epochs"].astype("Int64")
        with replacing(out) as tmp:  # the whole file is rewritten: whole or not at all
            table.to_csv(tmp, index=False)
        print(
            f"test MSE {row['mse']:.4f}  MAE {row['mae']:.4f}  (val MSE {val:.4f}, "
            f"{row['epochs']} epochs, {fit_s:.0f} s)  -> {out}"
        )


def main(argv=None):
    from tssdpa.cli.experiment import experiment_main
    from tssdpa.models import ForecastingSystem

    return experiment_main("forecast", ForecastCLI, ForecastingSystem, ForecastDataModule, argv)


if __name__ == "__main__":
    sys.exit(main())
