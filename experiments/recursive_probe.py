"""The recursive linear model at fixed pattern lengths on the benchmark's sunspots cells.

``ProjectionForecaster(horizon=h, embedding=E, model=m)`` for m = "linear" (one fit per
horizon) and "recursive_linear" (the one-step fit iterated), fitted on the benchmark's
training + validation years (``experiments/bench_autofit.py``'s split) and scored on its test
years: what the default fit's choice of E by leave-one-out leaves on the table.

    .venv/bin/python experiments/recursive_probe.py --horizons 4 8
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_autofit import split_series  # noqa: E402

from tssdpa import ProjectionForecaster  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--horizons", type=int, nargs="+", default=[4, 8])
    p.add_argument("--embeddings", type=int, nargs="+", default=list(range(8, 21)))
    args = p.parse_args(argv)
    z, sp = split_series("sunspots", 0, 0, 0, None)
    print(f"{'h':>3s} {'E':>3s} {'linear':>8s} {'recursive':>9s}  (test RMSE, z-scored)")
    for h in args.horizons:
        for E in args.embeddings:
            cells = []
            for model in ("linear", "recursive_linear"):
                fc = ProjectionForecaster(horizon=h, embedding=E, model=model).fit(z[: sp.val])
                pred = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
                cells.append(float(np.sqrt(np.mean((pred - z[sp.val : sp.test]) ** 2))))
            print(f"{h:3d} {E:3d} {cells[0]:8.3f} {cells[1]:9.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
