"""Iterated one-step AR against our direct h-step structures on one development cell.

A lead for ``ProjectionForecaster``: on ``autofit_heldout.py``'s IMU fusion gyroscope Y at
h = 2 (busy training part, validation at rest), AutoReg tuned on validation takes p = 1 and,
iterated, beats every structure the default fit can choose. This prints the test RMSE of
AutoReg(p) iterated, of ``ProjectionForecaster(model="linear")`` on 1..32 lags (direct h-step)
and of the default fit, on the benchmark's split (fit on train + validation). The iterated
model was then tried as a candidate of the default fit and not kept (``docs/results.md``, the
leads for the forecasting losses): on the Y cell it scored behind the direct models both
leave-one-out and forward on the last quarter, though it is the best on the test part.

    .venv/bin/python experiments/iterated_linear_probe.py imu_fusion_gy 2
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402,F401 -- registers its channels in bench_autofit.SERIES
import bench_autofit as bench  # noqa: E402

from tssdpa import ProjectionForecaster  # noqa: E402
from tssdpa.baselines import AutoRegForecaster  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("series", choices=sorted(bench.SERIES))
    p.add_argument("h", type=int)
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    z, sp = bench.split_series(args.series, 0, 2000, 3000, args.data_dir)
    h, test = args.h, slice(sp.val, sp.test)
    print(f"std of train / validation / test: {z[: sp.train].std():.3f} / "
          f"{z[sp.train : sp.val].std():.3f} / {z[test].std():.3f}")  # fmt: skip
    for lags in (1, 2, 4, 8, 16, 32):
        est = AutoRegForecaster(lags=lags).fit(z[: sp.val])
        pred = bench.h_step(est, z, sp.val, sp.test, h)
        print(f"AutoReg({lags}), iterated: {bench.rmse(pred, z[test])[0]:.4f}")
    fits = {f"linear on {e} lags, direct": {"embedding": e, "delay": 1, "model": "linear"}
            for e in (1, 2, 4, 8, 16, 32)}  # fmt: skip
    fits["default fit"] = {}
    for name, params in fits.items():
        fc = ProjectionForecaster(horizon=h, **params).fit(z[: sp.val])
        pred = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
        print(f"{name}: {bench.rmse(pred, z[test])[0]:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
