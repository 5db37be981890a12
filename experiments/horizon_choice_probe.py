"""Does the structure a forecaster fitted for a long horizon chooses for a short one forecast
as well as the one fitted for that short horizon alone?

``ProjectionForecaster(horizon=H)`` chooses a structure at each anchor horizon in one search:
every anchor is scored on the same query rows, with the exclusion window of the longest
(``analogue_selection.choose_structures``). So ``forecast(y, h)`` of a fit with ``horizon=H``
need not equal that of a fit with ``horizon=h``. Per series of ``bench_autofit.py`` (its split
and z-scoring, seed 0), both fits on train + validation, test RMSE at step h of each, their
ratio and the paired verdict of the benchmark (two standard errors of block means).

    .venv/bin/python experiments/horizon_choice_probe.py --series lorenz_dt0.1 imu_gait_gy \\
        pulse_train --long 40 --short 1 4 10
    .venv/bin/python experiments/horizon_choice_probe.py --series sunspots imu_fusion_gz \\
        --long 10 --short 1 2 5
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as bench  # noqa: E402

from tssdpa import ProjectionForecaster  # noqa: E402
from tssdpa.filters.forecaster_horizons import params_at  # noqa: E402


def _short(params: dict) -> str:
    keys = ("embedding", "delay", "n_neighbors", "bandwidth", "model", "ridge")
    return ",".join(f"{k[:3]}={params[k]}" for k in keys if params.get(k) is not None)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--series", nargs="+", required=True, choices=sorted(bench.SERIES))
    p.add_argument("--long", type=int, required=True, help="the long fit's horizon")
    p.add_argument("--short", type=int, nargs="+", required=True, help="the steps compared")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    warnings.simplefilter("ignore")
    for name in args.series:
        z, sp = bench.split_series(name, 0, 2000, 3000, args.data_dir)
        y = z[sp.val : sp.test]
        long = ProjectionForecaster(horizon=args.long).fit(z[: sp.val])
        for h in args.short:
            own = ProjectionForecaster(horizon=h).fit(z[: sp.val])
            pl, po = (np.asarray(f.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
                      for f in (long, own))  # fmt: skip
            rl, ro = bench.rmse(pl, y)[0], bench.rmse(po, y)[0]
            said = bench.verdict([bench.sq_err(pl, y)], [bench.sq_err(po, y)], max(h, 10))
            print(f"{name} h={h}: horizon={args.long} {rl:.4g} [{_short(params_at(long, h))}]  "
                  f"horizon={h} {ro:.4g} [{_short(own.best_params_[h])}]  ratio {rl / ro:.3f} "
                  f"{said}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
