"""Where SURE's risk floor acts on the default fit, and what it does there.

``tssdpa.estimators.selection.sure_mse`` raises a candidate's SURE to the least error its
output can have (``selection.risk_floor``: the triangle inequality with the noise level)
where SURE falls below it -- values on a lattice, where a kernel narrower than the lattice's
cells gives the input back and SURE scores it a perfect filter. For each cell this fits
``ProjectionFilter`` (causal and zero-phase) by default, counting the scores the floor
raised; where it raised any, it fits again without the floor (the default before 2026-12-06)
and prints the RMSE of the default over that fit's against the clean signal. Then, per set:
the cells, those the floor touched and changed, the geometric mean of the RMSE ratios and the
cells made worse (the largest).

Sets (``--set``):

* ``lattice``: a calibrated three-axis sensor simulated -- a smooth signal plus white noise of
  ``L`` steps, rounded to its counts (the ADC), mixed by a calibration matrix near the identity
  and scaled to units, plus a hair (1e-6) of jitter -- one axis filtered; L = 0.5, 1, 2, 4;
  seeds 0-4; and the same without the rounding (continuous), which the floor must leave alone;
* ``cells``: the series of ``bench_autofit.py`` (the unseen systems and the held-out real
  channels included) at the benchmark's SNRs, Gaussian and Student-t noise, synthetic seeds
  0-2, real series once (``checked_floor_probe.bench_cells``);
* ``recordings``: every fourth stretch of ``noise_level_probe.py --scan`` at 20 dB;
* ``fusion``: the fusion IMU recording's three gyroscope columns as recorded (first 800 rows,
  each alone, zero-phase): the noise level and the RMS change of the fit with and without the
  floor (no clean signal to score against).

    .venv/bin/python experiments/risk_floor_probe.py --set lattice
    .venv/bin/python experiments/risk_floor_probe.py --set cells --data-dir DATA
    .venv/bin/python experiments/risk_floor_probe.py --set recordings --data-dir DATA
    .venv/bin/python experiments/risk_floor_probe.py --set fusion --data-dir DATA
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import checked_floor_probe as floor_probe  # noqa: E402 -- registers the unseen series

from tssdpa.filters import ProjectionFilter, projection_fit  # noqa: E402

STEP = 0.0616  # the sensor's step in units (an IMU gyroscope's deg/s per count)


def lattice_cells():
    """``(label, noisy, clean, scored part)``: one axis of a calibrated three-axis sensor."""
    for levels in (0.5, 1.0, 2.0, 4.0):
        for seed in range(5):
            rng = np.random.default_rng(seed)
            t = np.arange(2000)
            raw = np.column_stack([0.3 * np.sin(2 * np.pi * t / 300 + k)
                                   + 0.15 * np.sin(2 * np.pi * t / 71 + 2 * k)
                                   for k in range(3)]) / STEP  # fmt: skip
            noisy_counts = raw + levels * rng.standard_normal(raw.shape)
            mix = np.eye(3) + 0.02 * rng.standard_normal((3, 3))
            clean = (raw @ mix.T)[:, 0] * STEP
            jitter = 1e-6 * rng.standard_normal(len(t))
            for kind, counts in (("lattice", np.round(noisy_counts)), ("continuous", noisy_counts)):
                noisy = (counts @ mix.T)[:, 0] * STEP + jitter
                yield f"{kind} L={levels:g} seed {seed}", noisy, clean, slice(None)


def bench_cells(data_dir):
    for args in floor_probe.bench_cells(data_dir):
        if int(args[0].split()[1]) <= 2:  # "name seed snr dB kind": synthetic seeds 0-2
            yield args


def recording_cells(data_dir):
    for i, args in enumerate(floor_probe.recording_cells(data_dir)):
        if i % 8 == 1:  # every fourth stretch (two SNRs each), at 20 dB
            yield args


@contextmanager
def counted(on: bool):
    """The fit's SURE with its floor (``on``) or without, counting the scores the floor
    raised."""
    original, raised = projection_fit.sure_mse, [0]

    def sure(*args, floor=None, **kwargs):
        score = original(*args, **kwargs)
        floored = original(*args, floor=floor, **kwargs)
        raised[0] += floored != score
        return floored if on else score

    projection_fit.sure_mse = sure
    try:
        yield raised
    finally:
        projection_fit.sure_mse = original


def _rmse(noisy, clean, part, causal: bool) -> float:
    y = ProjectionFilter(causal=causal).fit(noisy).filter(noisy)
    return float(np.sqrt(np.mean((y[part] - clean[part]) ** 2)))


def cell(args) -> list:
    """``[(label, causal, RMSE ratio or None, RMSE noisy / clean)]``: None where the floor
    raised no score (the fit is the one without it)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    label, noisy, clean, part = args
    noisy_rmse = float(np.sqrt(np.mean((noisy[part] - clean[part]) ** 2)))
    out = []
    for causal in (True, False):
        with counted(True) as raised:
            after = _rmse(noisy, clean, part, causal)
        ratio = None
        if raised[0]:
            with counted(False):
                ratio = after / _rmse(noisy, clean, part, causal)
        out.append((label, causal, ratio, after / noisy_rmse))
    return out


def run(cells) -> None:
    rows = []
    with ProcessPoolExecutor(2) as pool:
        for lines in pool.map(cell, list(cells)):
            for label, causal, ratio, over_noisy in lines:
                rows.append((ratio, label))
                if ratio is not None and ratio != 1.0:
                    print(f"{label:40s} {'causal' if causal else 'zero-phase':10s} RMSE over "
                          f"without the floor {ratio:.3f} (over the noisy series "
                          f"{over_noisy:.3f})", flush=True)  # fmt: skip
    touched = [r for r, _ in rows if r is not None]
    changed = [r for r in touched if r != 1.0]
    print(
        f"{len(rows)} fits; the floor raised a score in {len(touched)}, the output changed in "
        f"{len(changed)}: geometric mean {floor_probe.geometric_mean(changed):.3f}, worse in "
        f"{sum(r > 1.0 for r in changed)} (largest {max(changed, default=float('nan')):.3f})"
    )


def fusion(data_dir) -> None:
    from tssdpa.data.real import load_imu

    df = load_imu("imu_fusion", data_dir, resample=False)  # the rows as a user has them
    for col in [c for c in df.columns if c.startswith("Gyroscope")]:
        x = df[col].to_numpy(dtype=np.float64)[:800]
        changes = []
        for on in (True, False):
            with counted(on):
                f = ProjectionFilter(causal=False).fit(x)
                changes.append(float(np.sqrt(np.mean((f.filter(x) - x) ** 2))))
        print(f"{col:22s} noise level {f.noise_level_[0]:.3f}  RMS change {changes[0]:.4f} "
              f"(without the floor {changes[1]:.4f})", flush=True)  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", choices=("lattice", "cells", "recordings", "fusion"), required=True)
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    if args.set == "lattice":
        run(lattice_cells())
    elif args.set == "fusion":
        fusion(args.data_dir)
    elif args.set == "cells":
        run(bench_cells(args.data_dir))
    else:
        run(recording_cells(args.data_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
