"""Probe: the default forecaster on ETT columns whose training months change regime (issue 10).

``holdout="auto"`` scores differently where the last quarter of the fitted series has a spread
more than 2x from the rest's. The ETT tables score ``OT`` and all seven columns on the test
months; this script uses the hourly files' other columns on their *validation* months only
(development data): every column of ETTh1 / ETTh2 but ``OT`` whose 12 training months change
regime by that test, fitted by the default ``ProjectionForecaster(horizon=720)`` on the
training months (z-scored with their statistics); ``--with-ot`` adds the ``OT`` column of each
file that changes regime (ETTh1 and ETTm1), the tables' own, on its validation months.
``--joint`` fits ETTh2's seven columns as one joint pattern instead (their training months
change regime too; a fit of 8 to 17 minutes). Scores: MSE over steps 1..h from every
validation origin (the DLinear protocol; over all channels) and the seconds of the fit. Run
it at two revisions to compare them; ``--switch-half-lives`` scores the one fit's forecasts at
each ``switch_half_life`` given (0: None, the fit's choice alone), ``--switch-margin`` with
another ``SWITCH_MARGIN``.

    .venv/bin/python experiments/regime_channels_probe.py --data-dir ../shared/datasets [--joint]
        [--with-ot] [--switch-half-lives 0 20] [--switch-margin 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tssdpa import ProjectionForecaster  # noqa: E402
from tssdpa.data.real import ETT_COLUMNS, ETT_NAMES, load_ett  # noqa: E402
from tssdpa.filters import analogues  # noqa: E402
from tssdpa.filters.analogue_selection import drift_holdout  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_patterns_probe import HORIZONS, TRAIN, VALIDATION, path_mse  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--joint", action="store_true", help="ETTh2's seven columns, one pattern")
    ap.add_argument("--switch-half-lives", type=float, nargs="+", default=None)
    margin = getattr(analogues, "SWITCH_MARGIN", 0.0)  # none before 9282824
    ap.add_argument("--switch-margin", type=float, default=margin)
    ap.add_argument("--with-ot", action="store_true", help="also the OT column of each file")
    args = ap.parse_args()
    analogues.SWITCH_MARGIN = args.switch_margin
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
    series = [(n, c, 1) for n in ("ETTh1", "ETTh2") for c in ETT_COLUMNS if c != "OT"]
    if args.with_ot:  # the tables' own columns, on validation months (15-min: 4x the rows)
        series += [(n, "OT", 4 if n.startswith("ETTm") else 1) for n in ETT_NAMES]
    for name, column, per_hour in series:
        train, n = TRAIN * per_hour, (TRAIN + VALIDATION) * per_hour
        x = load_ett(name, args.data_dir)[column].to_numpy(float)[:n]
        z = (x - x[:train].mean()) / x[:train].std()
        if drift_holdout(z[:train, None])[0] is not None:  # else leave-one-out, as before
            _row(f"{name} {column}", z, args.switch_half_lives, train)


def _row(label: str, z, half_lives=None, train: int = TRAIN) -> None:
    """Fit the default forecaster on the first ``train`` rows (the training months) of ``z``;
    print its validation MSE (one row per ``switch_half_life`` in ``half_lives``; 0: None)."""
    H = max(HORIZONS)
    tic = time.perf_counter()
    fc = ProjectionForecaster(horizon=H).fit(z[:train])
    fit_s = time.perf_counter() - tic
    for half_life in half_lives or [fc.switch_half_life]:
        fc.switch_half_life = half_life or None
        path = fc.forecast_path(z, H)
        mse = [path_mse(path, z, train - 1, len(z) - 1, h) for h in HORIZONS]
        tag = f", switch_half_life={fc.switch_half_life}" if half_lives else ""
        print(f"| {label}{tag} | {' | '.join(f'{m:.4f}' for m in mse)} | {fit_s:.1f} |",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
