"""What the default forecaster's choice leaves on the table in the benchmark's worst cells.

On the benchmark's split (``experiments/bench_autofit.py``, seed 0): ``--part cv`` prints, for
Lorenz-96 at h = 8 (the benchmark's one loss), the best leave-one-out MSE of each model in
the default fit's ``cv_results_`` and the structure kept; ``--part models`` the test RMSE of
the default fit restricted to each model (and to the hybrid at E = 10); ``--part neighbours``
the test RMSE of fits at a fixed pattern length with the default k = (1, 2, 4, 8) (D + 1)
and with k = (2, 4, 8, 16, 32) (D + 1), for the local-linear and hybrid models, on Lorenz-96
h = 8 and the gait gyroscope h = 1 / 4. These cells are test cells: the figures explain, they
choose nothing (changes are judged on ``autofit_dev.py`` / ``autofit_heldout.py`` /
``autofit_unseen.py``).

    .venv/bin/python experiments/forecast_gap_probe.py --data-dir ../shared/datasets --part cv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_autofit import split_series  # noqa: E402

from tssdpa import ProjectionForecaster  # noqa: E402


def test_rmse(name, h, data_dir, **kw):
    z, sp = split_series(name, 0, 2000, 3000, data_dir)
    fc = ProjectionForecaster(horizon=h, **kw).fit(z[: sp.val])
    pred = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
    return float(np.sqrt(np.nanmean((pred - z[sp.val : sp.test]) ** 2))), fc


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--part", choices=("cv", "models", "neighbours"), default="cv")
    args = p.parse_args(argv)
    if args.part == "cv":
        rmse, fc = test_rmse("lorenz96", 8, args.data_dir)
        cv = fc.cv_results_[fc.cv_results_.horizon == 8]
        best = cv.mse.min()
        for model in ("recursive_linear", "linear", "hybrid", "local_linear", "mean"):
            row = cv[cv.model == model].sort_values("mse").iloc[0]
            print(f"{model:17s} E={row.embedding:3d} k={row.n_neighbors:3d} loo MSE "
                  f"{row.mse:.4f} ({row.mse / best:.4f} of the best)")  # fmt: skip
        print(f"kept: {fc.best_params_[8]}; its test RMSE {rmse:.4f}")
    elif args.part == "models":
        models = ("recursive_linear", "linear", "hybrid", "local_linear")
        for kw in [{"model": m} for m in models] + [{"embedding": 10, "model": "hybrid"}]:
            rmse = test_rmse("lorenz96", 8, args.data_dir, **kw)[0]
            print(f"lorenz96 h=8 {kw}: test RMSE {rmse:.4f}")
    else:
        for name, h, E in [("lorenz96", 8, 10), ("lorenz96", 8, 6), ("imu_gait_gy", 1, 9),
                           ("imu_gait_gy", 1, 6), ("imu_gait_gy", 4, 9)]:  # fmt: skip
            for mults in ((1, 2, 4, 8), (2, 4, 8, 16, 32)):
                ks = [m * (E + 1) for m in mults]
                for model in ("local_linear", "hybrid"):
                    rmse, fc = test_rmse(name, h, args.data_dir, embedding=E, delay=1,
                                         n_neighbors=ks, model=model)  # fmt: skip
                    print(f"{name} h={h} E={E} k={ks} {model}: test RMSE {rmse:.4f} "
                          f"(k={fc.best_params_[h]['n_neighbors']})", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
