"""Development cells for the default fit on multichannel series (one joint pattern of all channels).

``bench_autofit.py`` forecasts one channel at a time; a robotics user fits all six IMU axes at
once, where the pattern of E samples has D = E * C coordinates and the neighbour models' cost
grows fast with D. This script measures the default ``ProjectionForecaster(horizon=H)`` on
multichannel series none of the benchmark's cells use -- synthetic systems at development
seeds, the gait recording after the benchmark's window (samples 10000-13000), the fusion
recording's later stretch (9000-12000, gyroscope and accelerometer) and ETTh2's seven columns
-- with the benchmark's split (60 / 20 / 20, z-scored with training statistics, fitted on
train + validation, scored on test): test RMSE per horizon (mean over channels of the per-channel
RMSE) and the seconds of fit + forecast.

    .venv/bin/python experiments/multichannel_dev.py run --out /tmp/mc.jsonl
    .venv/bin/python experiments/multichannel_dev.py run --max-dimension 24 --out /tmp/b.jsonl
    .venv/bin/python experiments/multichannel_dev.py compare /tmp/mc.jsonl /tmp/b.jsonl
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tssdpa.data import Split, load_ett, load_imu  # noqa: E402
from tssdpa.data.synthetic import make_signal  # noqa: E402
from tssdpa.filters import ProjectionForecaster  # noqa: E402

IMU6 = [f"{s} {a} ({u})" for s, u in (("Gyroscope", "deg/s"), ("Accelerometer", "g"))
        for a in "XYZ"]  # fmt: skip


def _system(name: str):
    """A synthetic system at a development seed, every component a channel."""
    return lambda seed, data_dir: make_signal(name, 3000, seed, component=None)


#: name: (loader(seed, data_dir) -> (T, C) array, horizons, seeds)
CASES = {
    "lorenz_xyz": (_system("lorenz"), (1, 10, 25), (1, 2)),
    "rossler_xyz": (_system("rossler"), (1, 10, 35), (1,)),
    "henon_xy": (_system("henon"), (1, 2, 3), (1,)),
    "lorenz96_10": (_system("lorenz96"), (1, 4, 8), (1,)),
    "gait_6": (lambda s, d: load_imu("imu_gait", d)[IMU6].to_numpy(float)[10000:13000],
               (1, 4, 10), (0,)),
    "fusion_6": (lambda s, d: load_imu("imu_fusion", d)[IMU6].to_numpy(float)[9000:12000],
                 (1, 2, 5, 10), (0,)),
    "etth2_7": (lambda s, d: load_ett("ETTh2", d).to_numpy(float)[:3000], (1, 6, 24), (0,)),
}  # fmt: skip


def _unit(args) -> list[dict]:
    name, seed, data_dir, ours, max_dimension = args
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # two processes side by side
    load, horizons, _ = CASES[name]
    try:
        x = load(seed, data_dir)
    except FileNotFoundError:
        return []
    sp = Split.fractions(len(x), 0.6, 0.2)
    mu, sd = x[: sp.train].mean(axis=0), x[: sp.train].std(axis=0)
    z = (x - mu) / np.where(sd > 0, sd, 1.0)
    if max_dimension:  # neighbour models on patterns of at most this many coordinates
        ours = {"max_embedding": max(1, min(10, max_dimension // z.shape[1])), **ours}
    tic = time.perf_counter()
    fc = ProjectionForecaster(horizon=max(horizons), **ours).fit(z[: sp.val])
    preds = {h: fc.forecast(z, h) for h in horizons}
    seconds = time.perf_counter() - tic
    best = fc.best_params_  # one dict, or one per channel (channel_independent=True)
    chosen = {h: best.get(h) if isinstance(best, dict) else [b.get(h) for b in best]
              for h in horizons}  # fmt: skip
    rows = []
    for h, p in preds.items():
        err = p[sp.val - h : sp.test - h] - z[sp.val : sp.test]
        rmse = float(np.mean(np.sqrt(np.nanmean(err**2, axis=0))))
        rows.append({"case": name, "seed": seed, "h": h, "channels": z.shape[1], "rmse": rmse,
                     "seconds": seconds, "chosen": chosen[h]})  # fmt: skip
    print(f"{name} seed={seed}: " + ", ".join(f"h={r['h']} {r['rmse']:.4g}" for r in rows)
          + f" ({seconds:.1f} s)", flush=True)  # fmt: skip
    return rows


def run(data_dir, out: str, ours: dict, names, max_dimension=None) -> None:
    units = [(n, s, data_dir, ours, max_dimension) for n in names for s in CASES[n][2]]
    with ProcessPoolExecutor(2) as pool:
        rows = [r for rs in pool.map(_unit, units) for r in rs]
    Path(out).write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))


def compare(before: str, after: str) -> None:
    def load(path):
        return {(r["case"], r["seed"], r["h"]): r for r in map(json.loads, open(path))}

    a, b = load(before), load(after)
    ratios, times = [], {}
    for key in sorted(set(a) & set(b)):
        r = b[key]["rmse"] / a[key]["rmse"]
        ratios.append(r)
        times[key[:2]] = (a[key]["seconds"], b[key]["seconds"])
        print(f"{key[0]} seed={key[1]} h={key[2]}: {a[key]['rmse']:.4g} -> {b[key]['rmse']:.4g}"
              f" ({r:.3f})")  # fmt: skip
    for (name, seed), (ta, tb) in times.items():
        print(f"{name} seed={seed}: fit + forecast {ta:.1f} s -> {tb:.1f} s")
    ratios = np.array(ratios)
    ta, tb = (sum(t[i] for t in times.values()) for i in (0, 1))
    print(f"{len(ratios)} cells: test RMSE after / before, geometric mean "
          f"{np.exp(np.log(ratios).mean()):.3f}, better by > 2% in {(ratios < 0.98).sum()}, "
          f"worse by > 2% in {(ratios > 1.02).sum()}, worst {ratios.max():.3f}; "
          f"seconds {ta:.0f} -> {tb:.0f}")  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--data-dir", default=None)
    r.add_argument("--out", required=True)
    r.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    r.add_argument("--ours", nargs="*", default=[], metavar="NAME=VALUE",
                   help="ProjectionForecaster arguments (Python literals)")  # fmt: skip
    r.add_argument(
        "--max-dimension",
        type=int,
        default=None,
        help="max_embedding per case: this many coordinates (E * channels) at most",
    )
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = p.parse_args(argv)
    if args.cmd == "compare":
        compare(args.before, args.after)
        return 0
    ours = {k: ast.literal_eval(v) for k, v in (kv.split("=", 1) for kv in args.ours)}
    run(args.data_dir, args.out, ours, args.cases, args.max_dimension)
    return 0


if __name__ == "__main__":
    sys.exit(main())
