"""How much of the `projection_residual` forecast is the projection? (diagnostic, not a test)

For each ETT dataset (multivariate, the DLinear protocol of `tssdpa compare`), fits the
`ResidualProjectionForecaster` configuration the comparison chose on validation at h = 96 (read
from ``--results``, the comparison's ``results.csv``) on the training split, and prints the
share of (horizon, channel) cells with a correction (alpha > 0) and the test MSE at h = 96 of the
hybrid and of its linear base alone. Seeded by construction (closed-form fits, no randomness).

Usage::

    .venv/bin/python experiments/residual_share.py --results runs/ett/results.csv
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd

from tssdpa.data.tasks import forecast_tasks
from tssdpa.filters import ResidualProjectionForecaster


def share(dataset: str, params: dict, data_dir=None, h: int = 96) -> dict:
    task = forecast_tasks(dataset, seeds=(0,), features="M", data_dir=data_dir)[0]
    y, sp = task.y, task.split
    t0, t1 = sp.bounds("test")
    fc = ResidualProjectionForecaster(
        horizon=max(task.horizons), lookback=task.lookback, **params
    ).fit(y[: sp.train])
    hist = task.lookback + 1
    seg = y[t0 - 1 - hist : t1]
    origins = np.arange(hist, len(seg) - h)  # test origins t0-1 .. t1-1-h
    idx = origins[:, None] + np.arange(1, h + 1)
    truth = seg[idx]
    hybrid = fc.forecast_path(seg, h)[origins]
    base = fc.base_.forecast_path(seg, h)[origins]
    return {
        "dataset": dataset,
        "alpha>0 (h<=96)": float((fc.alpha_[:h] > 0).mean()),
        "alpha>0 (all h)": float((fc.alpha_ > 0).mean()),
        "test MSE hybrid": float(np.mean((hybrid - truth) ** 2)),
        "test MSE base alone": float(np.mean((base - truth) ** 2)),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", required=True, help="results.csv of `tssdpa compare` on ETT")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    rows = pd.read_csv(args.results)
    rows = rows[
        (rows.method == "projection_residual") & (rows.setting == "M") & (rows.horizon == 96)
    ]
    out = [
        share(r.dataset, json.loads(r.params), args.data_dir)
        for r in rows.drop_duplicates("dataset").itertuples()
    ]
    print(pd.DataFrame(out).to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
