"""Is the local adaptation's standard error right? Its formula against the spread over noise draws.

``projection_local.gain_standard_errors`` gives a first-order standard error of the SURE gain
of the adaptation in time, and ``fit`` adapts only where the gain passes it (and the margin).
This redraws the noise on one clean series of the benchmark (``bench_autofit.py``'s split;
noise seeds 500, 501, ...; the benchmark's own draw is left out) and, per draw and per width
of ``LOCAL_WIDTHS``, prints the SURE gain and the formula's standard error (both over the noise
variance, as ``experiments/local_margin_probe.py`` computes them) and the RMSE ratio adapted /
not on the test part and on the whole series (adapted by force). Last, per width: the mean and
standard deviation of the gain over the draws beside the formula's mean. Where the two
spreads agree, a gain that does not pass is one SURE cannot tell from chance on that series.

    .venv/bin/python experiments/local_gain_spread_probe.py --series imu_fusion_gz --snr 0 \
        --draws 12 --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as bench  # noqa: E402
import local_margin_probe  # noqa: E402

from tssdpa.filters.projection_local import LOCAL_WIDTHS  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--series", default="imu_fusion_gz", choices=sorted(bench.SERIES))
    p.add_argument("--snr", type=float, default=0.0, choices=bench.SNRS)
    p.add_argument("--draws", type=int, default=12)
    args = p.parse_args(argv)
    if args.draws < 2:
        p.error("--draws must be at least 2 (a spread over draws)")
    z, sp = bench.split_series(args.series, 0, 2000, 3000, args.data_dir)
    test = slice(sp.val, sp.test)
    print("draw, then per width: SURE gain / s^2, formula standard error / s^2, "
          "RMSE adapted / not on test and whole series")  # fmt: skip
    rows = []
    for d in range(args.draws):
        noisy = bench.add_noise(z, "gaussian", args.snr, seed=500 + d)
        widths = local_margin_probe._widths(noisy, z, test)
        rows.append([(w["gain"], w["error"], w["test"], w["whole"]) for w in widths])
        print(f"{d:>3} " + "  ".join(f"{g:+.4f} {e:.4f} {t:.3f} {wh:.3f}"
                                     for g, e, t, wh in rows[-1]), flush=True)  # fmt: skip
    a = np.array(rows)  # (draws, widths, 4)
    for i, width in enumerate(LOCAL_WIDTHS):
        print(f"width {width}: gain mean {a[:, i, 0].mean():+.4f}, standard deviation "
              f"{a[:, i, 0].std(ddof=1):.4f}; the formula's mean {a[:, i, 1].mean():.4f}; RMSE "
              f"ratio mean test {a[:, i, 2].mean():.3f}, whole {a[:, i, 3].mean():.3f}; passes "
              f"the standard error in {int((a[:, i, 0] > a[:, i, 1]).sum())} of "
              f"{len(a)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
