"""Where a self-supervised denoising cell of the benchmark is lost: the test fifth or the fit.

The benchmark (``experiments/bench_autofit.py``) scores ``ProjectionFilter(causal=False)
.fit(noisy)`` -- fitted on the whole noisy series, by SURE -- on the test fifth only, against
peers tuned with the clean signal on the validation fifth. Where a recording's character
changes along its length, the best smoothing of the test fifth is not the best of the whole
series, and the peer's oracle choice on its neighbouring fifth is the nearer one.

For each series and SNR (the benchmark's split and noise, seed 0) this prints the RMSE against
the clean series of ours and of each peer family (moving average, Savitzky-Golay, zero-phase
Butterworth, the benchmark's grids) on the whole series and on the test fifth, each peer tuned
with the clean signal three ways: on the validation fifth (the benchmark's peer), on the test
fifth itself and on the whole series (both oracles of the region scored).

    .venv/bin/python experiments/denoise_region_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_autofit import (  # noqa: E402
    BW_GRID,
    MA_GRID,
    NOISE,
    SG_GRID,
    SNRS,
    ButterworthFilter,
    MovingAverageFilter,
    SavitzkyGolayFilter,
    split_series,
)

from tssdpa import ProjectionFilter  # noqa: E402
from tssdpa.data import add_noise  # noqa: E402

FAMILIES = {
    "moving avg": (MovingAverageFilter, MA_GRID),
    "Savitzky-Golay": (SavitzkyGolayFilter, SG_GRID),
    "Butterworth": (ButterworthFilter, BW_GRID),
}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--series", nargs="+", default=["imu_fusion_gz", "ar2"])
    p.add_argument("--snr", nargs="+", type=float, default=[0.0, 20.0], choices=SNRS)
    args = p.parse_args(argv)
    print("RMSE against the clean series: whole series / test fifth")
    for name in args.series:
        z, sp = split_series(name, 0, 2000, 3000, args.data_dir)
        regions = {
            "whole": slice(0, len(z)),
            "val": slice(sp.train, sp.val),
            "test": slice(sp.val, sp.test),
        }

        def rmse(y, region, z=z, regions=regions):
            r = regions[region]
            return float(np.sqrt(np.mean((y[r] - z[r]) ** 2)))

        for snr in args.snr:
            k = SNRS.index(snr)
            noisy = add_noise(z, NOISE, snr, seed=k)  # seed 0's noise, as the benchmark
            y = np.asarray(ProjectionFilter(causal=False).fit(noisy).filter(noisy))
            print(f"{name} {snr:g} dB: ours {rmse(y, 'whole'):.4f} / {rmse(y, 'test'):.4f}")
            for fam, (cls, grid) in FAMILIES.items():
                outs = []
                for params in grid:
                    try:
                        outs.append((params, np.asarray(cls(**params).fit(noisy).filter(noisy))))
                    except ValueError:
                        continue
                row = []
                for tuned_on in ("val", "test", "whole"):
                    params, out = min(outs, key=lambda o: rmse(o[1], tuned_on))
                    shown = ",".join(
                        f"{v:.3g}" if isinstance(v, float) else str(v)
                        for key, v in params.items()
                        if key not in ("causal", "zero_phase")
                    )
                    row.append(f"tuned on {tuned_on} ({shown}) "
                               f"{rmse(out, 'whole'):.4f} / {rmse(out, 'test'):.4f}")  # fmt: skip
                print(f"  {fam}: " + "; ".join(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
