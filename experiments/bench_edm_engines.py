"""pyEDM's Simplex and S-map: the numpy engine against pyEDM itself, side by side in one run.

Both engines forecast the same path (every step ``1..H`` from every origin of a test series)
with the same fitted library; the table gives their times, the speed-up, the largest
difference between their forecasts, and both test RMSEs. S-map's numpy engine shares one
library within each group of steps (1, 2, 3-4, 5-8, ...; see ``tssdpa/baselines/edm_numpy.py``),
so its difference is reported at the groups' largest steps (exactly pyEDM's library) and over
every step.

    .venv/bin/python experiments/bench_edm_engines.py --data-dir ../shared/datasets \\
        --out docs/results/edm_engines.md

Without the ETT data (``--data-dir``) the series is a Lorenz-63 component instead.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

from tssdpa.baselines import SimplexForecaster, SMapForecaster
from tssdpa.baselines.edm_numpy import step_groups


def _series(data_dir: str | None, n: int) -> tuple[np.ndarray, str]:
    if data_dir:
        from tssdpa.data.real import load_ett

        x = load_ett("ETTh1", data_dir)["OT"].to_numpy(float)[:n]
        name = f"ETTh1 OT, first {n} hours"
    else:
        from tssdpa.data.synthetic import lorenz

        x, name = np.asarray(lorenz(n, seed=0)), f"Lorenz-63 x, dt 0.02, {n} samples"
    return (x - x.mean()) / x.std(), name


def _run(est, train, y, horizon):
    est.fit(train)
    tic = time.perf_counter()
    path = est.forecast_path(y, horizon)
    return path, time.perf_counter() - tic


def _rmse(path, y, horizon):
    T = len(y)
    err = [path[: T - h, h - 1] - y[h:] for h in range(1, horizon + 1)]
    e = np.concatenate(err)
    return float(np.sqrt(np.nanmean(e**2)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--train", type=int, default=4000, help="library (training) samples")
    ap.add_argument("--test", type=int, default=600, help="forecast origins")
    ap.add_argument("--horizons", type=int, nargs="+", default=[24, 96])
    ap.add_argument("--out", default=None, help="write the table here (Markdown)")
    args = ap.parse_args()
    x, name = _series(args.data_dir, args.train + args.test)
    train, y = x[: args.train], x[args.train :]
    configs = [
        ("Simplex", SimplexForecaster, {"embedding": 3}),
        ("Simplex", SimplexForecaster, {"embedding": 10}),
        ("S-map", SMapForecaster, {"embedding": 3, "theta": 2.0}),
        ("S-map", SMapForecaster, {"embedding": 10, "theta": 8.0}),
    ]
    rows = []
    for label, cls, kw in configs:
        for H in args.horizons:
            ref, t_ref = _run(cls(**kw), train, y, H)
            fast, t_fast = _run(cls(engine="numpy", **kw), train, y, H)
            exact = [g[-1] - 1 for g in step_groups(range(1, H + 1))]
            diff_all = float(np.nanmax(np.abs(fast - ref)))
            diff_top = float(np.nanmax(np.abs(fast[:, exact] - ref[:, exact])))
            rows.append(
                f"| {label} | {kw} | {H} | {t_ref:.2f} | {t_fast:.3f} | {t_ref / t_fast:.0f} "
                f"| {diff_top:.1e} | {diff_all:.1e} | {_rmse(ref, y, H):.4f} "
                f"| {_rmse(fast, y, H):.4f} |"
            )
            print(rows[-1], flush=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    text = "\n".join(
        [
            "# pyEDM engines: pyEDM against numpy",
            "",
            "Written by `experiments/bench_edm_engines.py`; every number below comes from that "
            "run.",
            "",
            f"- command: `.venv/bin/python experiments/bench_edm_engines.py"
            f"{' --data-dir ' + args.data_dir if args.data_dir else ''}"
            f"{' --out ' + args.out if args.out else ''}`",
            f"- series: {name} (z-scored); library {args.train} samples, "
            f"{args.test} forecast origins, every step 1..H from each",
            f"- machine: {platform.processor() or platform.machine()}, "
            f"{platform.platform()}; tssdpa at {commit}",
            "",
            "Seconds are those of `forecast_path` on the fitted forecaster. 'max diff at "
            "exact steps': the largest step of each S-map step group (every step for Simplex); "
            "'max diff, every step': all steps. RMSE over every step and origin.",
            "",
            "| method | parameters | H | pyEDM s | numpy s | speed-up | max diff at exact steps "
            "| max diff, every step | RMSE pyEDM | RMSE numpy |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
