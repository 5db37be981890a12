"""Forecasting experiments.

Learned model (LightningCLI; ``ForecastingSystem`` on the harness's windows):

    python experiments/forecast.py fit --config experiments/configs/forecast_etth1.yaml

After ``fit`` the best checkpoint is scored on the test windows (DLinear protocol: z-scored
data, every window, stride 1) and one row per run is appended to ``--results_csv``.

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


class ForecastCLI(LightningCLI):
    def add_arguments_to_parser(self, parser):
        parser.link_arguments("data.lookback", "model.lookback")
        parser.link_arguments("data.horizon", "model.horizon")
        parser.link_arguments("data.n_channels", "model.n_channels", apply_on="instantiate")
        parser.add_argument("--results_csv", default="runs/forecast_learned.csv")

    def after_fit(self):
        model, dm = self.model, self.datamodule
        ckpt = getattr(self.trainer.checkpoint_callback, "best_model_path", "")
        if ckpt:
            model = type(model).load_from_checkpoint(ckpt)
        model.eval()
        se = ae = n = 0.0
        with torch.no_grad():
            for x, y in dm.test_dataloader():
                p = model(x)
                se += float(((p - y) ** 2).sum())
                ae += float((p - y).abs().sum())
                n += y.numel()
        h = dm.hparams
        row = {"dataset": h.dataset, "setting": h.features, "horizon": h.horizon,
               "seed": h.seed, "method": "learned_projection_system", "mse": se / n,
               "mae": ae / n, "n_windows": len(dm.test_set), "checkpoint": ckpt,
               "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
        out = Path(self.config[self.subcommand]["results_csv"])
        out.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame([row]).to_csv(out, mode="a", header=not out.exists(), index=False)
        print(f"test MSE {row['mse']:.4f}  MAE {row['mae']:.4f}  -> {out}")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "classical":
        from tssdpa.cli import main as tssdpa_main

        return tssdpa_main(["compare", "forecast", *argv[1:]])
    from tssdpa.filters import ForecastingSystem

    ForecastCLI(ForecastingSystem, ForecastDataModule, args=argv, seed_everything_default=0,
                save_config_kwargs={"overwrite": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
