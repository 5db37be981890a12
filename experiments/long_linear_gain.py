"""How much the long linear patterns gain over the short ones, on the development fits -- the
evidence for ``analogue_selection.LINEAR_FAR_BEHIND`` (issue 10's speed goal).

The forecaster's fit also scores the global linear model on patterns longer than the
neighbour models' (up to 48 samples, then a ladder to 336). That costs about a quarter of
the fit on the benchmark's speed case (Lorenz), where the linear model is 10^5 times worse
than the best and cannot win. The fit skips those lengths where, at every anchor horizon,
the linear models of the short patterns are more than LINEAR_FAR_BEHIND times the best
error. This script fits the default forecaster with the rule off on the development cells
(the benchmark's synthetic series at seeds 1 and 2, and ``autofit_heldout.py``'s real
series; never the reported seed 0 or the benchmark's real cells) and prints, per fit and
anchor, the best linear error of the short patterns (``short``), of the long ones
(``long``) and the best of all (``best``):

* the largest gain ``short / long`` of a long pattern: the rule is safe while the factor
  stays well above it;
* per factor, the fits the rule would skip, and among them those where a long pattern came
  within 5% of the best or was chosen (the rule would have changed them).

    .venv/bin/python experiments/long_linear_gain.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- registers the real development series
import bench_autofit as bench  # noqa: E402

from tssdpa import ProjectionForecaster  # noqa: E402
from tssdpa.filters import analogue_selection  # noqa: E402

FACTORS = (3.0, 10.0, 30.0, 100.0)


def _fit_records(z, sp, h) -> list[dict]:
    """One record per anchor and scoring of the default fit at horizon ``h``, rule off."""
    analogue_selection.LINEAR_FAR_BEHIND = np.inf
    fc = ProjectionForecaster(horizon=h, **bench.OURS_FORECASTER)
    max_e = fc.max_embedding
    fc.fit(z[: sp.val])
    chosen = fc.best_params_ if isinstance(fc.best_params_, dict) else {}
    cv = fc.cv_results_
    cv = cv[np.isfinite(cv["mse"])]
    linear = cv["model"].isin(["linear", "recursive_linear"])
    out = []
    for (a, scoring), g in cv.groupby(["horizon", "scoring"]):
        short, lin = g[g["embedding"] <= max_e], linear[g.index]
        pick = chosen.get(a, {})
        out.append({
            "anchor": int(a), "scoring": scoring,
            "best": float(short["mse"].min()),
            "short": float(short.loc[lin[short.index], "mse"].min()),
            "long": float(g.loc[lin & (g["embedding"] > max_e), "mse"].min()),
            "chosen_long": bool(pick.get("embedding", 0) > max_e),
        })  # fmt: skip
    return out


def _unit(args) -> list:
    name, seed, data_dir = args
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # two processes side by side, one BLAS thread each
    try:
        z, sp = bench.split_series(name, seed, 2000, 3000, data_dir)
    except bench.Skip:
        return []
    return [(f"{name} s{seed} h{h}", _fit_records(z, sp, h)) for h in bench.SERIES[name][2]]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default="../shared/datasets")
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    args = p.parse_args(argv)
    real = ("sunspots", "imu", "ett")
    units = [
        (n, s, args.data_dir)
        for n, spec in bench.SERIES.items()
        if spec[0] not in real and n not in autofit_heldout.HELDOUT
        for s in args.seeds
    ]
    units += [(n, 0, args.data_dir) for n in autofit_heldout.HELDOUT]  # fmt: skip
    with ProcessPoolExecutor(2) as pool:
        fits = [fit for got in pool.map(_unit, units) for fit in got]
    rows = [r for _, recs in fits for r in recs if np.isfinite(r["long"])]
    gain = max(rows, key=lambda r: r["short"] / r["long"])
    print(f"{len(fits)} fits; largest gain of a long linear pattern: "
          f"{gain['short'] / gain['long']:.2f}x (short / long)")  # fmt: skip
    # the rule acts on each scoring of a fit apart (a drifted series is scored both ways)
    scorings = [(f"{cell} {s}", [r for r in recs if r["scoring"] == s])
                for cell, recs in fits for s in sorted({r["scoring"] for r in recs})]  # fmt: skip
    for factor in FACTORS:
        skipped = [(name, recs) for name, recs in scorings
                   if all(r["short"] > factor * r["best"] for r in recs)]  # fmt: skip
        changed = [
            name
            for name, recs in skipped
            if any(r["chosen_long"] or r["long"] <= 1.05 * min(r["best"], r["long"]) for r in recs)
        ]
        print(
            f"factor {factor:g}: skips the long patterns in {len(skipped)} of "
            f"{len(scorings)} scorings; would change {len(changed)}"
            f"{': ' + ', '.join(changed) if changed else ''}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
