"""The default forecaster's choice against the mean of its near-best candidates' forecasts.

A lead for ``ProjectionForecaster``: where the leave-one-out scores of many structures are
within noise of each other, which one is kept is close to a coin flip, and averaging the
forecasts of the ``K`` best distinct structures (within ``slack`` of the best leave-one-out
error; of the ridge variants of one structure only the best) would lower that variance. For
every cell of the development set (the channels of ``autofit_heldout.py``) or, for reporting
only (its cells must not steer a default), of the benchmark, this fits
``ProjectionForecaster(horizon=h)`` as the benchmark does and prints the test RMSE of its
forecasts and of that mean, both on the origins where both are known, and their ratio. Cells
whose fit scored forward too (a change of regime: other queries, and forecasts that may switch
among contenders) are left out.

    .venv/bin/python experiments/forecast_combination_probe.py dev --k 5 --slack 0.05
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- registers its channels in bench_autofit.SERIES
import bench_autofit as bench  # noqa: E402

from tssdpa import ProjectionForecaster  # noqa: E402
from tssdpa.filters.analogues import Structure, forecast  # noqa: E402

INTS = ("embedding", "delay", "n_neighbors")


def structure(row) -> Structure:
    """A ``cv_results_`` row as a Structure (pandas turns None into NaN)."""
    p = {}
    for k in Structure.__dataclass_fields__:
        v = row[k]
        v = None if isinstance(v, float) and math.isnan(v) else v
        p[k] = int(v) if k in INTS else v
    return Structure(**p)


def cell(h, z, sp, k, slack):
    fc = ProjectionForecaster(horizon=h).fit(z[: sp.val])
    if fc.holdout_ is not None:
        return None
    truth = z[sp.val : sp.test]
    chosen = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
    cv = fc.cv_results_
    cv = cv[(cv.horizon == h) & np.isfinite(cv.mse)].sort_values("mse", kind="stable")
    same = [c for c in Structure.__dataclass_fields__ if c != "ridge"]
    cv = cv.drop_duplicates(subset=same)  # the best ridge of each structure (sorted by mse)
    top = cv[cv.mse <= (1.0 + slack) * cv.mse.iloc[0]].head(k)
    z_train, series, overlap = fc._standardised(z[: sp.test, None])[:3]
    preds = [forecast(z_train, series, overlap, structure(r), [h])[:, 0, 0]
             for _, r in top.iterrows()]  # fmt: skip
    mean = np.mean(preds, axis=0) * fc.scale_[0] + fc.mean_[0]
    combined = mean[sp.val - h : sp.test - h]
    both = np.isfinite(chosen) & np.isfinite(combined)
    score = [bench.rmse(p[both], truth[both])[0] for p in (chosen, combined)]
    return score[0], score[1], len(preds)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cells", choices=("dev", "bench"))
    p.add_argument("--k", type=int, default=5, help="structures averaged at most")
    p.add_argument("--slack", type=float, default=0.05, help="relative excess over the best")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    held = autofit_heldout.HELDOUT
    names = list(held) if args.cells == "dev" else [n for n in bench.SERIES if n not in held]
    ratios = []
    for name in names:
        try:
            z, sp = bench.split_series(name, 0, 2000, 3000, args.data_dir)
        except bench.Skip:
            continue
        for h in bench.SERIES[name][2]:
            res = cell(h, z, sp, args.k, args.slack)
            if res is None:
                print(f"{name:>18} {h:>4}  scored forward too (a change of regime): left out",
                      flush=True)  # fmt: skip
                continue
            chosen, combined, n = res
            ratios.append(combined / chosen)
            print(f"{name:>18} {h:>4}  chosen {chosen:.4g}  mean of {n}: {combined:.4g}  "
                  f"ratio {ratios[-1]:.3f}", flush=True)  # fmt: skip
    r = np.array(ratios)
    print(
        f"{len(r)} cells: geometric mean ratio {np.exp(np.log(r).mean()):.4f}; "
        f"{(r < 0.98).sum()} better and {(r > 1.02).sum()} worse by more than 2%"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
