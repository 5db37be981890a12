"""Neighbours per query of the forecaster's local-linear model, beyond the default list.

A lead for the forecasting ties of ``bench_autofit.py`` against S-map (the walking gyroscope
at h = 1 and 4): S-map with theta = 8 weighs every library point, while the local-linear
model of ``ProjectionForecaster`` fits on at most ``8 (E + 1)`` nearest keys. For one series
and horizon this fits ``ProjectionForecaster(model="local_linear")`` with E, k and the
bandwidth fixed, on the benchmark's split (fit on train + validation), and prints for each
the leave-one-out MSE its fit scored (what ``fit`` would choose by) and the test RMSE (what the
benchmark reports). Reporting only; nothing here changes a default.

    .venv/bin/python experiments/local_linear_k_probe.py imu_gait_gy 1 --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as bench  # noqa: E402

from tssdpa import ProjectionForecaster  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("series", choices=sorted(bench.SERIES))
    p.add_argument("h", type=int)
    p.add_argument("--embeddings", type=int, nargs="+", default=[6, 9])
    p.add_argument("--neighbors", type=int, nargs="+", default=[40, 80, 160, 320, 640])
    p.add_argument("--bandwidths", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    z, sp = bench.split_series(args.series, 0, 2000, 3000, args.data_dir)
    h = args.h
    print(f"{args.series} h={h}: local-linear, delay 1, ridge 1e-6; fit on train + validation")
    print(f"{'E':>3} {'k':>4} {'bandwidth':>9} {'leave-one-out MSE':>18} {'test RMSE':>10}")
    for E in args.embeddings:
        for k in args.neighbors:
            for bw in args.bandwidths:
                fc = ProjectionForecaster(horizon=h, embedding=E, delay=1, n_neighbors=k,
                                          bandwidth=bw, model="local_linear",
                                          ridge=[1e-6]).fit(z[: sp.val])  # fmt: skip
                pred = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
                err = float(np.sqrt(np.mean((pred - z[sp.val : sp.test]) ** 2)))
                loo = float(fc.cv_results_["mse"].min())
                print(f"{E:>3} {k:>4} {bw:>9} {loo:>18.4g} {err:>10.4g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
