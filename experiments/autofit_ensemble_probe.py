"""Would averaging the best few structures beat choosing one? A probe of the default fit.

For every forecasting cell of ``bench_autofit.py`` on the development seeds (synthetic series
only: the real series do not depend on the seed, so their cells are the benchmark's own test
cells and are left out), fit ``ProjectionForecaster(horizon=h)`` as the benchmark does, then
forecast the test block with (a) the structure ``fit`` chose (the simplest within two standard
errors of the lowest leave-one-out error), (b) the structure of lowest leave-one-out error,
and (c) the equal-weight mean of the forecasts of the best ``m`` distinct structures whose
leave-one-out error is within a factor ``1 + slack`` of the lowest. Prints each cell's test
RMSE ratio to (a) and the geometric mean per variant.

    .venv/bin/python experiments/autofit_ensemble_probe.py --seeds 1 2
    # the real development channels of autofit_heldout.py instead (not benchmark cells)
    .venv/bin/python experiments/autofit_ensemble_probe.py --heldout --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as bench  # noqa: E402 -- the benchmark's series, split and scores

from tssdpa.filters import ProjectionForecaster  # noqa: E402
from tssdpa.filters.analogues import (  # noqa: E402
    Structure,
    anchor_horizons,
    forecast,
    nearest_anchor,
    training_overlap,
)
from tssdpa.signal.embedding import standardise  # noqa: E402

ENSEMBLES = ((3, 0.05), (5, 0.1), (10, 0.2))  # (m, slack)
REAL = ("sunspots", "imu", "ett")


def _ranked(fc, anchor) -> list[tuple[Structure, float]]:
    """Distinct structures of ``fc.cv_results_`` at ``anchor``, lowest error first."""
    cv = fc.cv_results_
    cv = cv[(cv.horizon == anchor) & np.isfinite(cv.mse)].sort_values("mse", kind="stable")
    out, seen = [], set()
    for _, r in cv.iterrows():
        p = {f: r[f] for f in Structure.__dataclass_fields__}
        p = {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in p.items()}
        s = Structure(**{**p, **{k: int(p[k]) for k in ("embedding", "delay", "n_neighbors")}})
        if s not in seen:
            seen.add(s)
            out.append((s, float(r.mse)))
    return out


def _cell(z, sp, h) -> dict:
    fc = ProjectionForecaster(horizon=h).fit(z[: sp.val])
    anchor = nearest_anchor(h, anchor_horizons(fc.horizon))
    a = z[: sp.test, None]
    lib = fc._library(standardise(fc.train_, fc.mean_, fc.scale_))
    za, overlap, truth = (
        standardise(a, fc.mean_, fc.scale_),
        training_overlap(fc.train_, a),
        z[sp.val : sp.test],
    )

    def pred(s):
        out = forecast(lib, za, overlap, s, [h])[:, 0, 0] * fc.scale_[0] + fc.mean_[0]
        return out[sp.val - h : sp.test - h]

    def rmse(p):
        return float(np.sqrt(np.nanmean((p - truth) ** 2)))

    ranked = _ranked(fc, anchor)
    row = {"chosen": rmse(pred(fc.structures_[anchor])), "lowest": rmse(pred(ranked[0][0]))}
    for m, slack in ENSEMBLES:
        top = [s for s, e in ranked if e <= (1 + slack) * ranked[0][1]][:m]
        row[f"mean of {m} within {slack:g}"] = rmse(np.mean([pred(s) for s in top], axis=0))
    return row


def _unit(args) -> list[dict]:
    name, seed, data_dir = args
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    try:
        z, sp = bench.split_series(name, seed, 2000, 3000, data_dir)
    except bench.Skip:
        return []
    return [
        {"series": name, "seed": seed, "h": h, **_cell(z, sp, h)} for h in bench.SERIES[name][2]
    ]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    p.add_argument(
        "--heldout",
        action="store_true",
        help="the real development channels of autofit_heldout.py instead of the synthetic series",
    )
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    if args.heldout:
        import autofit_heldout  # registers its channels in bench.SERIES

        units = [(n, 0, args.data_dir) for n in autofit_heldout.HELDOUT]
    else:
        units = [
            (n, s, None)
            for n, spec in bench.SERIES.items()
            if spec[0] not in REAL
            for s in args.seeds
        ]
    with ProcessPoolExecutor(2) as pool:
        rows = [r for rs in pool.map(_unit, units) for r in rs]
    variants = [k for k in rows[0] if k not in ("series", "seed", "h", "chosen")]
    for r in rows:
        ratios = " ".join(f"{r[k] / r['chosen']:.3f}" for k in variants)
        print(f"{r['series']} seed={r['seed']} h={r['h']}: {ratios}")
    print(f"{len(rows)} cells; ratio to the chosen structure's test RMSE:")
    for k in variants:
        ratio = np.array([r[k] / r["chosen"] for r in rows])
        print(f"  {k}: geometric mean {np.exp(np.log(ratio).mean()):.3f}, better by > 2% in "
              f"{(ratio < 0.98).sum()}, worse by > 2% in {(ratio > 1.02).sum()}, "
              f"worst {ratio.max():.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
