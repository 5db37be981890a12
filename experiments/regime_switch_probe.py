"""Probe: switch online among the contenders on a change of regime (issue 10)

Where the fitted series changed regime, ``ProjectionForecaster(holdout="auto")`` chooses a
structure per horizon by minimax regret between leave-one-out and forward scoring: a hedge,
because the fit cannot see which regime the future resembles. The forecasts can: once a few
test targets are known, the recent errors say which structure suits the current regime.
This script measures, on the development channels of ``autofit_heldout.py`` that change regime
(the fusion recording's), the test RMSE ratio to the best of tuned AutoReg and Simplex of

* ``forward`` / ``loo`` -- the default forecaster with ``holdout=0.25`` and ``None``;
* ``minimax`` -- ``holdout="auto"`` with ``switch_half_life=None``: the fit's choice alone;
* ``switch<n>`` -- ``holdout="auto"`` with ``switch_half_life=n``: each forecast from whichever
  of the contenders (the minimax choice and each scoring's own) has the least squared error,
  halving its weights every n * h origins, over the origins whose targets are known by then,
  the others' than the minimax choice's counted ``1 + SWITCH_MARGIN`` times (``m<margin>`` in
  the label for each ``--switch-margins`` given);
* ``posthoc<n>`` -- the same switch written out here (a loop) over the forecasts of the
  three single choices: a check of the built one (equal up to ties).

    .venv/bin/python experiments/regime_switch_probe.py --data-dir ../shared/datasets
        [--switch-margins 0 0.1]
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

from tssdpa.filters import ProjectionForecaster, analogues  # noqa: E402

HALF_LIVES = (10, 20, 50)


def switched(cands: list[np.ndarray], truth: np.ndarray, h: int, half_life: float, margin):
    """Per origin t, the forecast of the candidate with the least discounted squared error
    (half-life ``half_life * h``) over the origins ``s <= t - h`` (targets known at t), the
    others' than the first's counted ``1 + margin`` times; the first's before any is known."""
    decay = 0.5 ** (1.0 / (half_life * h))
    handicap = np.r_[1.0, np.full(len(cands) - 1, 1.0 + margin)]
    err = np.zeros(len(cands))
    out = np.empty_like(truth)
    for t in range(len(truth)):
        s = t - h  # the newest origin whose target truth[s] (= z[t]) is known at origin t
        if s >= 0:
            err = decay * err + np.array([(c[s] - truth[s]) ** 2 for c in cands])
        out[t] = cands[int(np.argmin(err * handicap))][t]  # all zero before: the first
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--switch-margins", type=float, nargs="+", default=[analogues.SWITCH_MARGIN])
    args = ap.parse_args()
    margin = analogues.SWITCH_MARGIN
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
            pred, fits = {}, {}
            for label, holdout in (("forward", 0.25), ("loo", None), ("minimax", "auto")):
                fc = ProjectionForecaster(horizon=h, holdout=holdout, switch_half_life=None)
                fits[label] = fc.fit(z[: sp.val])
                pred[label] = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
            for m in args.switch_margins:  # the minimax fit's forecasts, switched
                analogues.SWITCH_MARGIN = m
                for n in HALF_LIVES:
                    fits["minimax"].switch_half_life = n
                    tag = f"switch{n}" + (f"m{m:g}" if len(args.switch_margins) > 1 else "")
                    fc = fits["minimax"]
                    pred[tag] = np.asarray(fc.forecast(z[: sp.test], h))[sp.val - h : sp.test - h]
            analogues.SWITCH_MARGIN = margin
            three = [pred["minimax"], pred["loo"], pred["forward"]]
            for n in HALF_LIVES:
                pred[f"posthoc{n}"] = switched(three, truth, h, n, margin)
            ratios = {k: float(np.sqrt(np.mean((p - truth) ** 2)) / best) for k, p in pred.items()}
            for k, v in ratios.items():
                logs.setdefault(k, []).append(np.log(v))
            print(f"{name:>20} h={h:<3} " + "  ".join(f"{k} {v:.3f}" for k, v in ratios.items()),
                  flush=True)  # fmt: skip
    for k, lg in logs.items():
        print(f"{k}: geometric mean ratio {np.exp(np.mean(lg)):.3f}, worst {np.exp(max(lg)):.3f}")


if __name__ == "__main__":
    main()
