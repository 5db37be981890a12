"""The zero-phase Butterworth low-pass at the ends of a series: scipy's ``sosfiltfilt`` (what
``tssdpa.signal.lowpass.zero_phase_lowpass`` uses), its mean with the run on the reversed
series (time-symmetric), and a longer odd padding (3 / cutoff samples). Prints the RMSE against
the clean signal over the first and last 60 samples, as geometric mean and worst ratio to
``sosfiltfilt``'s, over development series (seeds 1, 2 of bench_autofit.py), the three SNRs
and cutoffs 0.02-0.2 (order 2).

    .venv/bin/python experiments/lowpass_edge_probe.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.signal as ss

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as bench  # noqa: E402

from tssdpa.data import add_noise  # noqa: E402

SERIES = ("lorenz", "rossler", "mackey_glass", "ar2", "lorenz96", "pulse_train")
EDGE = 60


def main() -> int:
    ways = {
        "sosfiltfilt": lambda sos, x, c: ss.sosfiltfilt(sos, x),
        "symmetrised": lambda sos, x, c: 0.5 * (ss.sosfiltfilt(sos, x)
                                                + ss.sosfiltfilt(sos, x[::-1])[::-1]),
        "long padding": lambda sos, x, c: ss.sosfiltfilt(sos, x, padlen=min(len(x) - 1,
                                                                              int(3 / c))),
    }  # fmt: skip
    errors = {name: [] for name in ways}
    for name in SERIES:
        for seed in (1, 2):
            z, _ = bench.split_series(name, seed, 2000, 3000, None)
            for k, snr in enumerate(bench.SNRS):
                x = add_noise(z, "gaussian", snr, seed=1000 * seed + k)
                for c in (0.02, 0.05, 0.1, 0.2):
                    sos = ss.butter(2, c, output="sos")
                    for way, fn in ways.items():
                        y = fn(sos, x, c)
                        err = np.r_[y[:EDGE] - z[:EDGE], y[-EDGE:] - z[-EDGE:]]
                        errors[way].append(np.sqrt(np.mean(err**2)))
    base = np.array(errors["sosfiltfilt"])
    for way, v in errors.items():
        r = np.array(v) / base
        print(f"{way}: edge RMSE / sosfiltfilt's: geometric mean {np.exp(np.mean(np.log(r))):.3f}, "
              f"worst {r.max():.3f} ({len(r)} cells)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
