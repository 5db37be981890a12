"""Denoising experiments.

Learned model (LightningCLI; ``DenoisingSystem`` on (noisy, clean) windows):

    python experiments/denoise.py fit --config experiments/configs/denoise_lorenz.yaml

The untrained start (the identity: the net's head starts at zero) is scored on validation and
checkpointed too (``start.ckpt``; ``start-v1.ckpt`` beside an earlier run's) and kept when no
epoch beats it, so a run never ends worse on validation than the noisy input itself. After
``fit`` the chosen model filters the test windows and one row (RMSE, SNR gain, validation MSE
of the model and of the start) is appended to ``--results_csv``. The resolved config goes
beside it
(``runs/denoise_learned.config.yaml``; never over the ``--config`` file).

Classical baselines and nonparametric projection filters (the comparison harness):

    python experiments/denoise.py classical --dataset lorenz --out runs/denoise_lorenz

which is ``tssdpa compare denoise --dataset lorenz --out ...``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from lightning.pytorch.cli import LightningCLI

from tssdpa.cli.experiment import (
    chosen_checkpoint,
    chosen_model,
    settings_row,
    start_checkpoint,
)
from tssdpa.data.lightning import DenoiseDataModule
from tssdpa.files import replacing


class DenoiseCLI(LightningCLI):
    def add_arguments_to_parser(self, parser):
        parser.link_arguments("data.n_channels", "model.n_channels", apply_on="instantiate")
        parser.add_argument("--results_csv", default="runs/denoise_learned.csv")

    def instantiate_classes(self):
        super().instantiate_classes()
        if self.subcommand == "fit":  # refused at the first training batch: a traceback
            self.datamodule.setup("fit")
            T, window = self.datamodule.train_set.tensors[0].shape[1], self.model.net.window
            if T < window:  # a ValueError is one line of experiment_main's
                raise ValueError(f"--model.window {window} is longer than the training windows "
                                 f"({T} samples, --data.seq_len {self.datamodule.hparams.seq_len})"
                                 f": take --model.window <= {T}, or longer windows")  # fmt: skip

    def before_fit(self):
        """Score and checkpoint the starting model, a candidate for the best checkpoint: the
        best epoch was reported even where it was worse on validation than the untrained
        identity (test SNR gain -2.1 dB at lr 0.3, where the start gains 0 dB)."""
        self._start = start_checkpoint(self.trainer, self.model, self.datamodule)

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
        err = sig = noise = 0.0
        with torch.no_grad():
            for x, y in dm.test_dataloader():
                p = model(x)
                err += float(((p - y) ** 2).sum())
                noise += float(((x - y) ** 2).sum())
                sig += float(((y - y.mean(dim=1, keepdim=True)) ** 2).sum())
        h = dm.hparams
        n = sum(int(b[1].numel()) for b in dm.test_dataloader())
        row = {
            "dataset": h.dataset,
            "setting": f"{h.noise}@{h.snr_db:g}dB",
            "seed": h.seed,
            # the seed of the weights' initialisation and the shuffling (``seed`` is the
            # data's): runs of --seed_everything 0 and 1 read as the same run without it
            "seed_everything": self.config[self.subcommand]["seed_everything"],
            "method": "learned_projection_system",
            "rmse": float(np.sqrt(err / n)),
            "snr_gain_db": float(10 * np.log10(noise / err)),
            "checkpoint": ckpt,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "val_mse": val,
            "start_val_mse": start[1],
            **settings_row(self.config[self.subcommand]),  # lr, d_model, ...: what differs
        }
        out = Path(self.config[self.subcommand]["results_csv"])
        out.parent.mkdir(parents=True, exist_ok=True)
        table = pd.DataFrame([row])
        if out.exists():  # other columns (forecast.py's, an older file's): by name, not shifted
            table = pd.concat([pd.read_csv(out), table], ignore_index=True)
        with replacing(out) as tmp:  # whole or not at all
            table.to_csv(tmp, index=False)
        print(f"test RMSE {row['rmse']:.4f}  SNR gain {row['snr_gain_db']:.2f} dB -> {out}")


def main(argv=None):
    from tssdpa.cli.experiment import experiment_main
    from tssdpa.models import DenoisingSystem

    return experiment_main("denoise", DenoiseCLI, DenoisingSystem, DenoiseDataModule, argv)


if __name__ == "__main__":
    sys.exit(main())
