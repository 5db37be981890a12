"""A finer grid of zero-phase windows for the self-supervised filter, on three 0 dB cells.

The default zero-phase windows (half-widths 2, 4, ..., 64) double from one to the next; on
the fusion gyroscope at 0 dB the best clean-tuned moving average has 81 taps, between two of
them (63 and 127). This fits ``ProjectionFilter(causal=False)`` on the benchmark's noisy
series (``experiments/bench_autofit.py``'s split and noise, seed 0) with the default windows
and with steps of about sqrt(2), and prints the test RMSE against the clean series and the
fit + filter seconds.

    .venv/bin/python experiments/denoise_window_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_autofit import SNRS, split_series  # noqa: E402

from tssdpa import ProjectionFilter  # noqa: E402
from tssdpa.data import add_noise  # noqa: E402

FINE = [2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, "all"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--series", nargs="+", default=["imu_fusion_gz", "ar2", "imu_gait_gy"])
    p.add_argument("--snr", type=float, default=0.0, choices=SNRS)
    args = p.parse_args(argv)
    print(f"{'series':>14s} {'windows':>8s} {'RMSE':>7s} {'s':>5s}")
    for name in args.series:
        z, sp = split_series(name, 0, 2000, 3000, args.data_dir)
        noisy = add_noise(z, "gaussian", args.snr, seed=SNRS.index(args.snr))  # as the benchmark
        test = slice(sp.val, sp.test)
        for label, windows in (("default", "auto"), ("fine", FINE)):
            tic = time.perf_counter()
            y = np.asarray(ProjectionFilter(causal=False, window=windows).fit(noisy).filter(noisy))
            err = float(np.sqrt(np.mean((y[test] - z[test]) ** 2)))
            print(
                f"{name:>14s} {label:>8s} {err:7.4f} {time.perf_counter() - tic:5.1f}", flush=True
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
