"""Why the supervised default fit loses to the oracle moving average on the IMU fusion gyroscope
at 0 dB in ``docs/results/autofit.md``: RMSE against the clean series on the benchmark's
train / validation / test parts for centred moving averages, the self-supervised fit (on the
whole noisy series and on its training part) and the supervised fit (training part and its
clean target, as the benchmark; and with ``holdout=0.5``).

Run (seconds; the benchmark's series, split and noise seed)::

    .venv/bin/python experiments/supervised_shift_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as B  # noqa: E402

from tssdpa.baselines import MovingAverageFilter  # noqa: E402
from tssdpa.data import add_noise  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--series", default="imu_fusion_gz", choices=sorted(B.SERIES))
    p.add_argument("--snr", type=float, default=0.0, choices=B.SNRS)
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    z, sp = B.split_series(args.series, 0, 2000, 3000, args.data_dir)
    k = B.SNRS.index(args.snr)
    noisy = add_noise(z, B.NOISE, args.snr, seed=k)  # the benchmark's noise seed at seed 0
    parts = {
        "train": slice(0, sp.train),
        "val": slice(sp.train, sp.val),
        "test": slice(sp.val, sp.test),
    }

    def row(name, y):
        y = np.asarray(y)
        cells = "  ".join(f"{p} {B.rmse(y[s], z[s])[0]:.4f}" for p, s in parts.items())
        print(f"{name:36s} {cells}")

    for w in (31, 61, 81, 121, 161):
        row(
            f"moving average {w}",
            MovingAverageFilter(window=w, causal=False).fit(noisy).filter(noisy),
        )
    tr = parts["train"]
    row("self-supervised (whole series)", ProjectionFilter(causal=False).fit(noisy).filter(noisy))
    row(
        "self-supervised (training part)",
        ProjectionFilter(causal=False).fit(noisy[tr]).filter(noisy),
    )
    sup = ProjectionFilter(causal=False).fit(noisy[tr], target=z[tr])
    row("supervised (training part)", sup.filter(noisy))
    half = ProjectionFilter(causal=False, holdout=0.5).fit(noisy[tr], target=z[tr])
    row("supervised, holdout 0.5", half.filter(noisy))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
