"""Probe: the default forecaster on ETT columns whose training months change regime (issue 10).

``holdout="auto"`` scores differently where the last quarter of the fitted series has a spread
more than 2x from the rest's. The ETT tables score ``OT`` and all seven columns on the test
months; this script uses the hourly files' other columns on their *validation* months only
(development data): every column of ETTh1 / ETTh2 but ``OT`` whose 12 training months change
regime by that test, fitted by the default ``ProjectionForecaster(horizon=720)`` on the
training months (z-scored with their statistics). ``--joint`` fits ETTh2's seven columns as
one joint pattern instead (their training months change regime too; a fit of 8 to 17
minutes). Scores: MSE over steps 1..h from every validation origin (the DLinear protocol;
over all channels) and the seconds of the fit. Run it at two revisions to compare them;
``--switch-half-lives`` scores the one fit's forecasts at each ``switch_half_life`` given (0:
None, the fit's choice alone).

    .venv/bin/python experiments/regime_channels_probe.py --data-dir ../shared/datasets [--joint]
        [--switch-half-lives 0 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tssdpa import ProjectionForecaster  # noqa: E402
from tssdpa.data.real import load_ett  # noqa: E402
from tssdpa.filters.analogue_selection import drift_holdout  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_patterns_probe import HORIZONS, TRAIN, VALIDATION, path_mse  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--joint", action="store_true", help="ETTh2's seven columns, one pattern")
    ap.add_argument("--switch-half-lives", type=float, nargs="+", default=None)
    args = ap.parse_args()
    print("| column | " + " | ".join(f"h={h}" for h in HORIZONS) + " | fit s |")
    print("|---|" + "---|" * (len(HORIZONS) + 1))
    if args.joint:
        y = load_ett("ETTh2", args.data_dir).to_numpy(float)[: TRAIN + VALIDATION]
        _row(
            "ETTh2, seven columns",
            (y - y[:TRAIN].mean(0)) / y[:TRAIN].std(0),
            args.switch_half_lives,
        )
        return
    for name in ("ETTh1", "ETTh2"):
        df = load_ett(name, args.data_dir)
        for column in df.columns.drop("OT"):
            x = df[column].to_numpy(float)[: TRAIN + VALIDATION]
            z = (x - x[:TRAIN].mean()) / x[:TRAIN].std()
            if drift_holdout(z[:TRAIN, None])[0] is not None:  # else leave-one-out, as before
                _row(f"{name} {column}", z, args.switch_half_lives)


def _row(label: str, z, half_lives=None) -> None:
    """Fit the default forecaster on the training months of ``z``; print its validation MSE
    (one row per ``switch_half_life`` in ``half_lives``; 0: None)."""
    H = max(HORIZONS)
    tic = time.perf_counter()
    fc = ProjectionForecaster(horizon=H).fit(z[:TRAIN])
    fit_s = time.perf_counter() - tic
    for half_life in half_lives or [fc.switch_half_life]:
        fc.switch_half_life = half_life or None
        path = fc.forecast_path(z, H)
        mse = [path_mse(path, z, TRAIN - 1, len(z) - 1, h) for h in HORIZONS]
        tag = f", switch_half_life={fc.switch_half_life}" if half_lives else ""
        print(f"| {label}{tag} | {' | '.join(f'{m:.4f}' for m in mse)} | {fit_s:.1f} |",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
