"""The default fit on values that sit on a lattice (a gap fixed on 2026-12-06: lattice_step).

A calibrated sensor mixes its axes' counts (an IMU gyroscope: each axis a linear combination of
three quantised readings, plus a hair of jitter), so one axis's values sit on a lattice that no
one-channel step describes (``selection.resolution`` finds none). There SURE scored kernels
narrower than the lattice's cells -- whose output is nearly the input -- far below any real
filter (below 0), and the default fit gave the recording back, until ``selection.lattice_step``
gave the sigma grid a floor at half the lattice's step. ``--set lattice`` prints, for one axis
of a simulated calibrated three-axis sensor (a smooth signal plus white noise of ``L`` steps,
rounded to counts, mixed by a calibration near the identity, plus 1e-6 of jitter; L = 0.5, 1, 2;
seeds 0-2; and the same not rounded), the RMSE of the default causal and zero-phase fits over
the noisy series'; ``--set fusion`` the fusion IMU recording's three gyroscope columns as
recorded (first 800 rows, each alone, zero-phase): the noise level and the RMS change of the fit
(no clean signal to score against); ``--set cells`` the noisy denoising cells of
``bench_autofit.py``'s and ``autofit_heldout.py``'s series (Gaussian and Student-t noise, seeds
0-1, the benchmark's SNRs) where ``lattice_step`` finds a lattice (it should find none: noise
added to a series takes it off any grid).

    .venv/bin/python experiments/lattice_probe.py --set lattice
    .venv/bin/python experiments/lattice_probe.py --set fusion --data-dir DATA
    .venv/bin/python experiments/lattice_probe.py --set cells --data-dir DATA
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tssdpa.filters import ProjectionFilter  # noqa: E402

STEP = 0.0616  # the sensor's step in units (an IMU gyroscope's deg/s per count)


def sensor_axis(levels: float, seed: int, rounded: bool, n: int = 2000):
    """``(noisy, clean)``: one axis of the simulated calibrated three-axis sensor."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    raw = np.column_stack([0.3 * np.sin(2 * np.pi * t / 300 + k)
                           + 0.15 * np.sin(2 * np.pi * t / 71 + 2 * k)
                           for k in range(3)]) / STEP  # fmt: skip
    counts = raw + levels * rng.standard_normal(raw.shape)
    counts = np.round(counts) if rounded else counts
    mix = np.eye(3) + 0.02 * rng.standard_normal((3, 3))
    noisy = (counts @ mix.T)[:, 0] * STEP + 1e-6 * rng.standard_normal(n)
    return noisy, (raw @ mix.T)[:, 0] * STEP


def lattice() -> None:
    print("RMSE of the default fit over the noisy series' (1.0: the series given back)")
    for rounded in (True, False):
        for levels in (0.5, 1.0, 2.0):
            for seed in range(3):
                noisy, clean = sensor_axis(levels, seed, rounded)
                base = np.sqrt(np.mean((noisy - clean) ** 2))
                out = [np.sqrt(np.mean((ProjectionFilter(causal=c).fit(noisy).filter(noisy)
                                        - clean) ** 2)) / base for c in (True, False)]  # fmt: skip
                kind = "lattice" if rounded else "continuous"
                print(f"{kind:10s} L={levels:g} seed {seed}: causal {out[0]:.3f}  zero-phase "
                      f"{out[1]:.3f}", flush=True)  # fmt: skip


def fusion(data_dir) -> None:
    from tssdpa.data.real import load_imu

    df = load_imu("imu_fusion", data_dir, resample=False)  # the rows as a user has them
    for col in [c for c in df.columns if c.startswith("Gyroscope")]:
        x = df[col].to_numpy(dtype=np.float64)[:800]
        f = ProjectionFilter(causal=False).fit(x)
        change = float(np.sqrt(np.mean((f.filter(x) - x) ** 2)))
        print(f"{col:22s} noise level {f.noise_level_[0]:.3f}  RMS change {change:.4f}", flush=True)


def cells(data_dir) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import autofit_heldout as heldout  # the benchmark's series and more (bench_autofit's)
    import bench_autofit as bench

    from tssdpa.estimators.selection import lattice_step
    from tssdpa.estimators.white_noise import noise_level

    n, found = 0, []
    for name in list(bench.SERIES) + list(heldout.HELDOUT):
        for seed in (0, 1):
            try:
                z, _ = bench.split_series(name, seed, 2000, 3000, data_dir)
            except bench.Skip:
                continue
            for kind in ("gaussian", "student_t"):
                for k, snr in enumerate(bench.SNRS):
                    x2 = bench.add_noise(z, kind, snr, seed=1000 * seed + k)[:, None]
                    n += 1
                    if lattice_step(x2, noise_level(x2))[0] > 0:
                        found.append(f"{name} seed {seed} {kind} {snr:g} dB")
    print(f"{n} noisy cells; a lattice found in {len(found)}" + (": " + ", ".join(found)
                                                                 if found else ""))  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", choices=("lattice", "fusion", "cells"), required=True)
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    if args.set == "lattice":
        lattice()
    elif args.set == "fusion":
        fusion(args.data_dir)
    else:
        cells(args.data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
