"""How much the long linear patterns gain over the short ones, on the development fits -- the
evidence for ``analogue_selection.LINEAR_FAR_BEHIND`` (issue 10's speed goal).

The forecaster's fit also scores the global linear model on patterns longer than the
neighbour models' (up to 48 samples, then a ladder to 336). That costs about a quarter of
the fit on the benchmark's speed case (Lorenz), where the linear model is 10^5 times worse
than the best and cannot win. The fit skips those lengths where, at every anchor horizon,
the linear models of the short patterns are more than LINEAR_FAR_BEHIND times the best
error. (A series scored both ways keeps them: see ``choose_structures``.) This script fits the
default forecaster with the rule off and on, on the development cells (the benchmark's
synthetic series at seeds 1 and 2, and ``autofit_heldout.py``'s real series; never the
reported seed 0 or the benchmark's real cells), and prints:

* the fits whose choices (``best_params_``, ``contenders_``) differ between the two: the
  rule is meant to change none;
* from the fits with the rule off, per anchor, the best linear error of the short patterns
  (``short``), of the long ones (``long``) and the best of all (``best``): the largest gain
  ``short / long`` of a long pattern (the factor should stay well above it), and per
  factor the scorings the rule would skip and those among them where a long pattern came
  within 5% of the best or was chosen (a single scoring's choice could move there).

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


def _fit_records(z, sp, h) -> tuple[list[dict], bool]:
    """One record per anchor and scoring of the default fit at horizon ``h`` with the rule
    off, and whether the fit with the rule on made the same choices."""
    on = ProjectionForecaster(horizon=h, **bench.OURS_FORECASTER).fit(z[: sp.val])
    rule = analogue_selection.LINEAR_FAR_BEHIND
    analogue_selection.LINEAR_FAR_BEHIND = np.inf
    try:
        fc = ProjectionForecaster(horizon=h, **bench.OURS_FORECASTER).fit(z[: sp.val])
    finally:
        analogue_selection.LINEAR_FAR_BEHIND = rule
    same = (on.best_params_, on.contenders_) == (fc.best_params_, fc.contenders_)
    max_e = fc.max_embedding
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
    return out, same


def _unit(args) -> list:
    name, seed, _ = args
    split = bench.worker_split(*args)  # None: no data
    horizons = bench.SERIES[name][2] if split is not None else []
    return [(f"{name} s{seed} h{h}", _fit_records(*split, h)) for h in horizons]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
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
        got = [fit for done in pool.map(_unit, units) for fit in done]
    moved = [cell for cell, (_, same) in got if not same]
    print(f"{len(got)} fits with the rule on and off; choices differ in {len(moved)}"
          f"{': ' + ', '.join(moved) if moved else ''}")  # fmt: skip
    fits = [(cell, recs) for cell, (recs, _) in got]
    rows = [r for _, recs in fits for r in recs if np.isfinite(r["long"])]
    gain = max(rows, key=lambda r: r["short"] / r["long"])
    print(f"rule off: largest gain of a long linear pattern: "
          f"{gain['short'] / gain['long']:.2f}x (short / long)")  # fmt: skip
    # the rule acts on fits scored one way only (a drifted series scored both ways keeps
    # every long pattern)
    scorings = [(f"{cell} {recs[0]['scoring']}", recs) for cell, recs in fits
                if len({r["scoring"] for r in recs}) == 1]  # fmt: skip
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
            f"{len(scorings)} fits scored one way; would change {len(changed)}"
            f"{': ' + ', '.join(changed) if changed else ''}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
