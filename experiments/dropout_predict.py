"""``predict(steps, y=buffer)`` after a dropout at the buffer's end: forecasting from the last
row seen past the gap (the rule since 2026-12-07) against forecasting from its values carried
over the gap (the rule before, emulated by filling the gap with them).

On the benchmark's split (``experiments/bench_autofit.py``, seed 0), the default forecaster
is fitted (horizon 5) on the fitting part; on test, 200 buffer ends spread evenly, each buffer
the 300 rows before its end with its last ``g`` rows missing, forecast 5 steps past its end.
Printed: the RMSE (z-units) of the two rules over those 1,000 forecasts, per series and gap.

``--held``: the buffers' last ``g`` rows instead hold the value before them (a reading held,
which no rule tells from a real one), forecast with the local-linear guard
(``neighbours.OFF_CLOUD_LEVERAGE``, since 2026-12-07) and without it; and the clean buffers'
forecasts the guard changed (it must change none).

    .venv/bin/python experiments/dropout_predict.py --data-dir ../shared/datasets
    .venv/bin/python experiments/dropout_predict.py --data-dir ../shared/datasets --held
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_autofit import split_series  # noqa: E402

from tssdpa import ProjectionForecaster  # noqa: E402
from tssdpa.signal import neighbours  # noqa: E402

NAMES = ("henon", "lorenz", "mackey_glass", "pulse_train", "imu_gait_gy")
STEPS, BUFFER, ENDS = 5, 300, 200


def errors(name: str, gaps, data_dir) -> dict:
    z, sp = split_series(name, 0, 2000, 3000, data_dir)
    fc = ProjectionForecaster(horizon=STEPS).fit(z[: sp.val])
    ends = np.linspace(sp.val + BUFFER, sp.test - STEPS, ENDS).astype(int)
    out = {}
    for g in gaps:
        sq = {"past the gap": [], "carried over": []}
        for e in ends:
            buf = z[e - BUFFER : e].copy()
            buf[BUFFER - g :] = np.nan
            carried = buf.copy()
            carried[BUFFER - g :] = buf[BUFFER - g - 1]
            truth = z[e : e + STEPS]
            sq["past the gap"].append((fc.predict(STEPS, y=buf) - truth) ** 2)
            sq["carried over"].append((fc.predict(STEPS, y=carried) - truth) ** 2)
        out[g] = {k: float(np.sqrt(np.mean(v))) for k, v in sq.items()}
    return out


def held_errors(name: str, gaps, data_dir) -> dict:
    z, sp = split_series(name, 0, 2000, 3000, data_dir)
    fc = ProjectionForecaster(horizon=STEPS).fit(z[: sp.val])
    ends = np.linspace(sp.val + BUFFER, sp.test - STEPS, ENDS).astype(int)
    guard = neighbours.OFF_CLOUD_LEVERAGE

    def both(buf):
        neighbours.OFF_CLOUD_LEVERAGE = guard
        guarded = fc.predict(STEPS, y=buf)
        neighbours.OFF_CLOUD_LEVERAGE = np.inf
        free = fc.predict(STEPS, y=buf)
        neighbours.OFF_CLOUD_LEVERAGE = guard
        return guarded, free

    clean = [both(z[e - BUFFER : e]) for e in ends]
    out = {"clean changed": sum(int((g != f).sum()) for g, f in clean)}
    for g in gaps:
        sq = {"guarded": [], "unguarded": []}
        for e in ends:
            buf = z[e - BUFFER : e].copy()
            buf[BUFFER - g :] = buf[BUFFER - g - 1]
            guarded, free = both(buf)
            sq["guarded"].append((guarded - z[e : e + STEPS]) ** 2)
            sq["unguarded"].append((free - z[e : e + STEPS]) ** 2)
        out[g] = {k: float(np.sqrt(np.mean(v))) for k, v in sq.items()}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[1].parent
                                             / "shared" / "datasets"))  # fmt: skip
    p.add_argument("--gaps", type=int, nargs="+", default=[1, 3, 10])
    p.add_argument("--held", action="store_true", help="held readings, the guard on and off")
    args = p.parse_args()
    if args.held:
        print("| series | held rows | RMSE guarded | RMSE unguarded | clean forecasts changed |")
        print("|---|---|---|---|---|")
        for name in NAMES:
            r = held_errors(name, args.gaps, args.data_dir)
            for g in args.gaps:
                a, b = r[g]["guarded"], r[g]["unguarded"]
                print(f"| {name} | {g} | {a:.4f} | {b:.4f} | {r['clean changed']} |", flush=True)
        return
    print("| series | gap | RMSE past the gap | RMSE carried over | ratio |")
    print("|---|---|---|---|---|")
    for name in NAMES:
        for g, r in errors(name, args.gaps, args.data_dir).items():
            a, b = r["past the gap"], r["carried over"]
            print(f"| {name} | {g} | {a:.4f} | {b:.4f} | {a / b:.3f} |", flush=True)


if __name__ == "__main__":
    main()
