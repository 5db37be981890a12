"""Probe: switch online between the two scorings' choices on a change of regime? (issue 10)

Where the fitted series changed regime, ``ProjectionForecaster(holdout="auto")`` keeps one
structure per horizon, the minimax-regret choice between leave-one-out and forward scoring: a
hedge, because the fit cannot see which regime the future resembles. The forecasts can: once
a few test targets are known, the recent errors say which choice suits the current regime.
This script measures, on the development channels of ``autofit_heldout.py`` that change regime
(the fusion recording's), the test RMSE ratio to the best of tuned AutoReg and Simplex of

* ``forward`` / ``loo`` / ``minimax`` -- the default forecaster with ``holdout=0.25``, ``None``
  and ``"auto"``;
* ``switch<n>`` -- at each test origin the forecast of whichever of ``forward`` and ``loo`` has
  the lower exponentially weighted squared error (half-life n origins) over the origins whose
  targets are known by then (causal; their mean until one is known).

    .venv/bin/python experiments/regime_switch_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout as heldout  # noqa: E402 -- the development channels (and the benchmark's units)
import bench_autofit as bench  # noqa: E402

from tssdpa.filters import ProjectionForecaster  # noqa: E402

HALF_LIVES = (10, 50)


def switched(a: np.ndarray, b: np.ndarray, truth: np.ndarray, h: int, half_life: int):
    """Per origin t, ``a[t]`` or ``b[t]`` by the lower discounted squared error of the
    origins ``s <= t - h`` (targets known at t); the mean of both before any is known."""
    decay = 0.5 ** (1.0 / half_life)
    err_a = err_b = weight = 0.0
    out = np.empty_like(truth)
    for t in range(len(truth)):
        s = t - h  # the newest origin whose target truth[s] (= z[t]) is known at origin t
        if s >= 0:
            err_a = decay * err_a + (a[s] - truth[s]) ** 2
            err_b = decay * err_b + (b[s] - truth[s]) ** 2
            weight = decay * weight + 1.0
        out[t] = (a[t] if err_a < err_b else b[t]) if weight > 0 else 0.5 * (a[t] + b[t])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default="../shared/datasets")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    names = [n for n in heldout.HELDOUT if n.startswith("imu_fusion")]
    peers = {k: v for k, v in bench.peers().items() if k != "S-map"}
    logs: dict[str, list[float]] = {}
    for name in names:
        z, sp = bench.split_series(name, 0, 2000, 3000, args.data_dir)
        truth = z[sp.val : sp.test]
        for h in heldout.HELDOUT[name][2]:
            grid = {"AutoReg": [{"lags": p} for p in bench.AR_LAGS if p <= sp.train // 10]}
            best = min(
                bench.tune_forecaster(cls, grid.get(peer, g), z, sp, h)["rmse"]
                for peer, (cls, g) in peers.items()
            )
            pred = {}
            for label, holdout in (("forward", 0.25), ("loo", None), ("minimax", "auto")):
                fc = ProjectionForecaster(horizon=h, holdout=holdout).fit(z[: sp.val])
                pred[label] = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
            for n in HALF_LIVES:
                pred[f"switch{n}"] = switched(pred["forward"], pred["loo"], truth, h, n)
            ratios = {k: float(np.sqrt(np.mean((p - truth) ** 2)) / best) for k, p in pred.items()}
            for k, v in ratios.items():
                logs.setdefault(k, []).append(np.log(v))
            print(f"{name:>20} h={h:<3} " + "  ".join(f"{k} {v:.3f}" for k, v in ratios.items()),
                  flush=True)  # fmt: skip
    for k, lg in logs.items():
        print(f"{k}: geometric mean ratio {np.exp(np.mean(lg)):.3f}, worst {np.exp(max(lg)):.3f}")


if __name__ == "__main__":
    main()
