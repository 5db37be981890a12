"""Why a forecasting cell of ``bench_autofit.py`` is lost: the linear forecaster at every
embedding, scored on the validation block and on the test block.

A large gap between the two columns, or a different best embedding, says the series changed
between the blocks -- no choice made on the past can see that.

Usage::

    .venv/bin/python experiments/autofit_regime.py imu_fusion_gz 1 5 --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as bench  # noqa: E402 -- the benchmark's series, split and scores

from tssdpa.filters import ProjectionForecaster  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("series", choices=sorted(bench.SERIES))
    p.add_argument("horizons", nargs="+", type=int)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--embeddings", nargs="+", type=int, default=[1, 2, 3, 4, 6, 8, 11])
    args = p.parse_args(argv)
    z = bench.load_series(args.series, 0, 2000, 3000, args.data_dir)
    n = len(z)
    tr, va = int(0.6 * n), int(0.8 * n)  # the benchmark's 60 / 20 / 20 split
    z = (z - z[:tr].mean()) / z[:tr].std()
    for h in args.horizons:
        print(f"{args.series} h={h}: linear forecaster, RMSE per embedding")
        print("| embedding | validation (fit on train) | test (fit on train + validation) |")
        print("|---|---|---|")
        for e in args.embeddings:
            on_train = ProjectionForecaster(horizon=h, embedding=e, model="linear").fit(z[:tr])
            val = np.asarray(on_train.forecast(z[:va], h))[tr - h : va - h]
            on_val = ProjectionForecaster(horizon=h, embedding=e, model="linear").fit(z[:va])
            test = np.asarray(on_val.forecast(z, h))[va - h : n - h]
            rv, rt = bench.rmse(val, z[tr:va])[0], bench.rmse(test, z[va:])[0]
            print(f"| {e} | {rv:.5f} | {rt:.5f} |")
        chosen = ProjectionForecaster(horizon=h).fit(z[:va]).best_params_[h]
        print(f"default fit on train + validation chose: {chosen}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
