"""How far the white-noise level that self-supervised denoising uses is from the truth.

``ProjectionFilter().fit(x)`` scores candidates by SURE with the noise level of
``tssdpa.estimators.selection.noise_level``; a level too high makes SURE favour filters that
smooth too much. For each development series (the synthetic ones of ``bench_autofit.py`` at
seeds 1-2, the real channels of ``autofit_heldout.py``) and each of the benchmark's SNRs, this
prints the estimated level over the standard deviation of the noise added (the benchmark's
noise seeds). On a real recording the ratio also counts the recording's own noise.

    .venv/bin/python experiments/noise_level_probe.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- registers its channels in bench_autofit.SERIES
import bench_autofit as bench  # noqa: E402

from tssdpa.data import add_noise  # noqa: E402
from tssdpa.estimators.selection import noise_level  # noqa: E402

SYNTHETIC = [n for n, spec in bench.SERIES.items() if spec[0] not in ("imu", "ett", "sunspots")]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default="../shared/datasets")
    p.add_argument("--series", nargs="+", default=SYNTHETIC + list(autofit_heldout.HELDOUT))
    args = p.parse_args(argv)
    print("series seed: estimated / true noise level at " + " / ".join(f"{s:g}" for s in
          bench.SNRS) + " dB")  # fmt: skip
    for name in args.series:
        for seed in (1, 2) if name in SYNTHETIC else (0,):
            try:
                z, _ = bench.split_series(name, seed, 2000, 3000, args.data_dir)
            except bench.Skip:
                continue
            ratios = []
            for k, snr in enumerate(bench.SNRS):
                noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + k)
                ratios.append(noise_level(noisy[:, None])[0] / np.std(noisy - z))
            print(f"{name} {seed}: " + " / ".join(f"{r:.3f}" for r in ratios), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
