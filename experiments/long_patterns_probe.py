"""Probe: would longer linear patterns help the default fit at long horizons? (issue 10)

Until 2026-11-27 the default ``ProjectionForecaster`` tried the linear model with patterns up
to 48 samples (or a tenth of the series); on hourly ETT channels every anchor horizon then
picked the linear model at 19-47 lags, and at h = 720 it trailed the seasonal naive forecast on
the ETT tables. Since then it also tries a ladder of 64-336 samples. This script compares, on
development channels only (ETTh2 ``OT`` and ETTh1 ``HUFL``, never the
tables' ETTh1 ``OT`` test cells) and on their *validation* months, the default fit with one
restricted to the linear model over 24-336 lags. Scores: MSE over steps 1..h from every
validation origin (the DLinear protocol), on the series z-scored with training statistics.

    .venv/bin/python experiments/long_patterns_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tssdpa import ProjectionForecaster
from tssdpa.data.real import load_ett

HORIZONS = (96, 192, 336, 720)
TRAIN, VALIDATION = 8640, 2880  # the 12 / 4 / 4-month split of the hourly ETT files


def path_mse(path: np.ndarray, z: np.ndarray, first: int, last: int, h: int) -> float:
    """MSE over steps 1..h (and every channel) from origins first..last - h (``path[t, s-1]``
    predicts z[t+s])."""
    o = np.arange(first, last - h + 1)
    return float(np.mean([(path[o, s - 1] - z[o + s]) ** 2 for s in range(1, h + 1)]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()
    H = max(HORIZONS)
    print("| channel | forecaster | " + " | ".join(f"h={h}" for h in HORIZONS) + " | fit s |")
    print("|---|---|" + "---|" * (len(HORIZONS) + 1))
    for name, column in (("ETTh2", "OT"), ("ETTh1", "HUFL")):
        x = load_ett(name, args.data_dir)[column].to_numpy(float)[: TRAIN + VALIDATION]
        z = (x - x[:TRAIN].mean()) / x[:TRAIN].std()
        first, last = TRAIN - 1, len(z) - 1
        rows = {
            "default fit": {},
            "linear, 24-336 lags": {"embedding": [24, 48, 96, 168, 336], "model": "linear"},
        }
        for label, kw in rows.items():
            tic = time.perf_counter()
            fc = ProjectionForecaster(horizon=H, **kw).fit(z[:TRAIN])
            fit_s = time.perf_counter() - tic
            path = fc.forecast_path(z, H)
            mse = [path_mse(path, z, first, last, h) for h in HORIZONS]
            cells = " | ".join(f"{m:.4f}" for m in mse)
            print(f"| {name} {column} | {label} | {cells} | {fit_s:.1f} |", flush=True)
        # seasonal naive, period 24: z[t + s] forecast by the same hour of the last day
        naive_path = np.full((len(z), H), np.nan)
        t = np.arange(23, len(z))
        for s in range(1, H + 1):
            naive_path[t, s - 1] = z[t - 23 + (s - 1) % 24]
        naive = [path_mse(naive_path, z, first, last, h) for h in HORIZONS]
        cells = " | ".join(f"{m:.4f}" for m in naive)
        print(f"| {name} {column} | seasonal naive (24) | {cells} | 0.0 |", flush=True)


if __name__ == "__main__":
    main()
