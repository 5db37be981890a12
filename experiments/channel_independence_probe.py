"""Probe: one joint forecaster of all seven ETT columns, or one per column? (issue 10)

On the ETT tables the default ``ProjectionForecaster`` of the ``M`` setting embeds all seven
columns jointly; with ten rows per coefficient its linear model then stops at 123-sample
patterns on the hourly files, and at h = 720 it trails the seasonal naive forecast. The
DLinear-style models ahead of it treat each column alone. This script compares, on the
*validation* months only (the tables score the test months), the default joint fit with
``channel_independent=True``: MSE over steps 1..h from every validation origin, on the
columns z-scored with training statistics.

    .venv/bin/python experiments/channel_independence_probe.py --data-dir ../shared/datasets
    # channel_independent="auto" (which of the two it chose in brackets)
    .venv/bin/python experiments/channel_independence_probe.py --kinds auto --datasets ETTh1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from tssdpa import ProjectionForecaster
from tssdpa.data.real import ett_split, load_ett

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_patterns_probe import HORIZONS, path_mse  # noqa: E402 -- the same scores

KINDS = {
    "joint": ("joint (default)", {}),
    "independent": ("one per column", {"channel_independent": True}),
    "auto": ("auto", {"channel_independent": "auto"}),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--datasets", nargs="+", default=["ETTh1", "ETTh2"])
    ap.add_argument(
        "--kinds",
        nargs="+",
        default=["joint", "independent"],
        choices=list(KINDS),
        help="which forecasters (default: the first two)",
    )
    args = ap.parse_args()
    H = max(HORIZONS)
    print("| dataset | forecaster | " + " | ".join(f"h={h}" for h in HORIZONS) + " | fit s |")
    print("|---|---|" + "---|" * (len(HORIZONS) + 1))
    for name in args.datasets:
        sp = ett_split(name)
        x = load_ett(name, args.data_dir).to_numpy(float)[: sp.val]
        z = (x - x[: sp.train].mean(0)) / x[: sp.train].std(0)
        first, last = sp.train - 1, len(z) - 1
        for label, kw in (KINDS[k] for k in args.kinds):
            tic = time.perf_counter()
            fc = ProjectionForecaster(horizon=H, **kw).fit(z[: sp.train])
            fit_s = time.perf_counter() - tic
            # from a chunk that starts inside the fitted series (the same forecasts as the
            # whole series') with room for the longest pattern: validation origins only
            start = first - 1000
            path = np.asarray(fc.forecast_path(z[start:], H))  # (T - start, H, C)
            mse = [path_mse(path, z[start:], first - start, last - start, h) for h in HORIZONS]
            cells = " | ".join(f"{m:.4f}" for m in mse)
            if kw.get("channel_independent") == "auto":
                label += f" ({'per column' if fc.channel_independent_ else 'joint'})"
            print(f"| {name} M | {label} | {cells} | {fit_s:.0f} |", flush=True)


if __name__ == "__main__":
    main()
