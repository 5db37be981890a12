"""The self-supervised denoising fit told the true noise level, against its default (issue 10).

For each ``series:snr`` given (the benchmark's and the unseen suites' series, seed 0, white
Gaussian noise as ``bench_autofit.denoise_unit`` adds it), this prints the default noise level
and the residual bound over the standard deviation of the noise added, and the test RMSE of
``ProjectionFilter(causal=False)`` fitted by default, with the true level (``noise_level=``) and
with the bound: whether a loss of the default fit is its noise level or its filter.

    .venv/bin/python experiments/true_level_probe.py arma21:20 growth:20 double_well:20 \\
        setar:20 sir_demographic:20 seasonal_arma:20 ettm2_hufl:20 chen:20 --data-dir DATA
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_autofit as bench  # noqa: E402
import noise_level_probe  # noqa: E402,F401 -- registers the unseen and held-out series

from tssdpa.data import add_noise  # noqa: E402
from tssdpa.estimators.white_noise import noise_level  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cells", nargs="+", help="series:snr, e.g. arma21:20")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    for cell in args.cells:
        name, snr = cell.split(":")
        z, sp = bench.split_series(name, 0, 2000, 3000, args.data_dir)
        k = list(bench.SNRS).index(float(snr))
        noisy = add_noise(z, "gaussian", float(snr), seed=k)  # seed 1000 * 0 + k
        test = slice(sp.val, sp.test)
        true = float(np.std(noisy - z))
        level = float(noise_level(noisy[:, None])[0])
        bound = float(noise_level(noisy[:, None], checked_floor=False)[0])
        rmse = {}
        for tag, given in (("default", None), ("true level", true), ("bound", bound)):
            y = np.asarray(
                ProjectionFilter(causal=False, noise_level=given).fit(noisy).filter(noisy)
            )
            rmse[tag] = float(np.sqrt(np.mean((y[test] - z[test]) ** 2)))
        print(f"{name} {snr} dB: level / noise added {level / true:.3f}, bound {bound / true:.3f}; "
              + ", ".join(f"RMSE {t} {v:.4g}" for t, v in rmse.items()), flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
