"""Probe: the default forecaster fitted on a series' increments, its forecasts integrated.

A fitted level model reverts towards the levels it saw: where a recording holds a level it did
not hold in training (a gyroscope turning steadily after a stretch at rest), every structure
the fit can choose forecasts with a bias. A model of the increments ``d_t = y_t - y_{t-1}``
has no level to revert to: ``y_{t+h} = y_t + sum_{s<=h} d_{t+s}``, each ``d_{t+s}`` forecast
by ``ProjectionForecaster(horizon=h).fit(d)`` (ARIMA's d = 1, with our structures).

This script reruns the real development cells of ``autofit_heldout.py forecast`` (same
series, split and peers; not the benchmark's cells) with that differenced forecaster in place
of ours, and writes rows in the same form, so that ``autofit_heldout.py table`` compares
them: the ratio to the best peer, and ``(xR)`` the differenced forecaster's RMSE over the
level forecaster's of the given run.

Usage::

    .venv/bin/python experiments/autofit_heldout.py forecast --out /tmp/level.jsonl
    .venv/bin/python experiments/difference_probe.py /tmp/level.jsonl --out /tmp/diff.jsonl
    .venv/bin/python experiments/autofit_heldout.py table /tmp/diff.jsonl /tmp/level.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- its series (added to the benchmark's on import)
import bench_autofit as bench  # noqa: E402 -- the split, errors and verdicts

from tssdpa import ProjectionForecaster  # noqa: E402


def differenced_forecast(z: np.ndarray, sp, h: int) -> dict:
    """Ours on the increments of ``z`` (fitted on train + validation), scored as
    ``bench_autofit.ours_forecast`` scores the level forecaster: test origins, step ``h``."""
    tic = time.perf_counter()
    d = np.diff(z)  # d[i] = z[i + 1] - z[i]: the increment into sample i + 1
    fc = ProjectionForecaster(horizon=h).fit(d[: sp.val - 1])  # the increments up to z[val-1]
    path = fc.forecast_path(d[: sp.test - 1], h)  # path[i, s - 1] forecasts d[i + s]
    origins = np.arange(sp.val - h, sp.test - h)  # y[t + h] forecast from y[: t + 1]
    pred = z[origins] + path[origins - 1].sum(axis=1)  # from d[: t], i.e. z[: t + 1]
    target = z[sp.val : sp.test]
    err, missing = bench.rmse(pred, target)
    return {"rmse": err, "time": time.perf_counter() - tic, "missing": missing,
            "se": bench.sq_err(pred, target).tolist(), "params": fc.best_params_}  # fmt: skip


def _unit(args) -> list:
    name, rows, data_dir = args
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # two processes side by side, one BLAS thread each
    z, sp = bench.split_series(name, 0, 2000, 3000, data_dir)
    for row in rows:
        row["ours"] = differenced_forecast(z, sp, row["h"])
        print(f"  {name} h={row['h']}: differenced {row['ours']['rmse']:.4g}", flush=True)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", help="a run of autofit_heldout.py forecast (its peers are reused)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    rows = [json.loads(line) for line in Path(args.run).read_text().splitlines()]
    by_series: dict[str, list] = {}
    for row in rows:
        if row["series"] in autofit_heldout.HELDOUT:
            by_series.setdefault(row["series"], []).append(row)
    units = [(name, group, args.data_dir) for name, group in by_series.items()]
    with ProcessPoolExecutor(2) as pool:
        out = [row for group in pool.map(_unit, units) for row in group]
    Path(args.out).write_text("".join(json.dumps(r, default=str) + "\n" for r in out))
    autofit_heldout.table(args.out, args.run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
