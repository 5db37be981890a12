"""The default forecaster's choice against the mean of its near-best candidates' forecasts.

A lead for ``ProjectionForecaster``: the remaining forecasting losses of
``bench_autofit.py`` sit where the leave-one-out scores of many structures are within noise of
each other (ETTh1 ``OT`` at h = 24: linear on 1 to 96 lags all within 4% on the fitted
series, 0.56-0.62 test RMSE), so which one is kept is close to a coin flip. Averaging the
forecasts of the ``K`` candidates with the lowest leave-one-out error (within ``slack`` of
the best) would lower that variance. For every cell of the development set (the channels of
``autofit_heldout.py``) or of the benchmark, this fits ``ProjectionForecaster(horizon=h)`` as
the benchmark does and prints the test RMSE of its forecasts and of that mean, as a ratio.
Cells whose fit switches among contenders (a change of regime) are left out: there the
forecasts are not one structure's.

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
    """A ``cv_results_`` row as a Structure (pandas turns None into NaN, ints into floats)."""
    p = {}
    for k in Structure.__dataclass_fields__:
        v = row[k]
        v = None if isinstance(v, float) and math.isnan(v) else v
        p[k] = int(v) if k in INTS else v
    return Structure(**p)


def cell(name, h, z, sp, k, slack):
    fc = ProjectionForecaster(horizon=h).fit(z[: sp.val])
    if fc.contenders_:
        return None
    truth = z[sp.val : sp.test]
    chosen = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
    anchor = h if h in fc.structures_ else max(fc.structures_)
    cv = fc.cv_results_
    cv = cv[(cv.horizon == anchor) & np.isfinite(cv.mse)].sort_values("mse", kind="stable")
    top = cv[cv.mse <= (1.0 + slack) * cv.mse.iloc[0]].head(k)
    z_train, series, overlap = fc._standardised(z[: sp.test, None])
    preds = [forecast(z_train, series, overlap, structure(r), [h])[:, 0, 0]
             for _, r in top.iterrows()]  # fmt: skip
    mean = np.mean(preds, axis=0) * fc.scale_[0] + fc.mean_[0]
    combined = mean[sp.val - h : sp.test - h]
    return bench.rmse(chosen, truth)[0], bench.rmse(combined, truth)[0], len(preds)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cells", choices=("dev", "bench"))
    p.add_argument("--k", type=int, default=5, help="candidates averaged at most")
    p.add_argument("--slack", type=float, default=0.05, help="relative excess over the best")
    p.add_argument("--data-dir", default="../shared/datasets")
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
            res = cell(name, h, z, sp, args.k, args.slack)
            if res is None:
                print(f"{name:>18} {h:>4}  switches among contenders: left out", flush=True)
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
