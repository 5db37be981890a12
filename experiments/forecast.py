"""Forecasting experiments.

Learned model (LightningCLI; ``ForecastingSystem`` on the harness's windows):

    python experiments/forecast.py fit --config experiments/configs/forecast_etth1.yaml

With ``model.linear_init: ridge`` the linear branch starts as the closed-form ridge DLinear
fitted on the training split (penalty chosen on validation); the starting model is checkpointed
too (``start.ckpt``) and kept when no epoch beats its validation loss. After ``fit`` the best
checkpoint is scored on the test windows (DLinear protocol: z-scored data, every window,
stride 1) and one row per run is appended to ``--results_csv`` (test MSE/MAE, validation MSE,
epochs, fit time). The resolved config goes beside the CSV
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

    def before_fit(self):
        """``linear_init: ridge``: fit the closed-form linear branch on the training split,
        then score and checkpoint the starting model, a candidate for the best checkpoint."""
        self._tic = time.perf_counter()
        self._start = None
        model, dm = self.model, self.datamodule
        if model.linear_init != "ridge":
            return
        info = model.init_linear_ridge(dm.train_series(), dm.val_pairs())
        val = self.trainer.validate(model, datamodule=dm, verbose=False)[0]["val_loss"]
        cb = self.trainer.checkpoint_callback
        folder = Path(getattr(cb, "dirpath", None) or self.trainer.default_root_dir)
        path = folder / "start.ckpt"
        self.trainer.save_checkpoint(path, weights_only=True)
        self._start = (str(path), float(val))
        for es in self.trainer.early_stopping_callbacks:  # patience counts from the start too
            if es.monitor == "val_loss":
                es.best_score = torch.tensor(float(val))
        print(
            f"linear branch: closed-form ridge DLinear (ridge={penalty_text(info['ridge'])}, "
            f"normalize={info['normalize']}), val MSE {val:.4f}"
        )

    def after_fit(self):
        model, dm = self.model, self.datamodule
        cb = self.trainer.checkpoint_callback
        ckpt = getattr(cb, "best_model_path", "")
        best = getattr(cb, "best_model_score", None)
        if ckpt and best is not None and getattr(cb, "monitor", None) == "val_loss":
            val, load = float(best), ckpt  # the best epoch on validation
        else:
            # no checkpoint chosen on val_loss (Lightning's default ModelCheckpoint keeps the
            # latest epoch, with no score): the model as trained, validated now. The NaN that
            # stood here lost to the starting model: every epoch was thrown away
            val = float(self.trainer.validate(model, datamodule=dm, verbose=False)[0]["val_loss"])
            load, ckpt = None, ckpt if getattr(cb, "monitor", True) is None else ""
        start = getattr(self, "_start", None)
        if start is not None and not val < start[1]:  # no epoch beat the starting model
            ckpt, val = start
            load = ckpt
        if load:
            model = type(model).load_from_checkpoint(load)
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
            "start_val_mse": start[1] if start is not None else float("nan"),
            "epochs": int(self.trainer.current_epoch),
            "fit_s": round(fit_s, 1),
            "linear_init": model.linear_init,
            "linear_lr_scale": model.linear_lr_scale,
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
