"""Development cells for the default fit on real data the benchmark does not score.

``bench_autofit.py`` scores three real recordings (one IMU channel each from the fusion and gait
recordings, ETTh1 ``OT``); as they do not depend on a seed, their cells are test cells and must
not steer the defaults. This script runs the benchmark's own units (same split, peers, noise
and verdicts) on *other* channels and datasets -- the development set for changes aimed at real
signals. Synthetic series are left to ``autofit_dev.py`` (seeds 1, 2).

Usage::

    # denoising (peers are cheap: about 2 minutes on 2 cores); --ours gives our filter's
    # arguments (e.g. --ours local_window=None: no local adaptation in time)
    .venv/bin/python experiments/autofit_heldout.py denoise --out /tmp/dn.jsonl
    # under Student-t noise (3 degrees of freedom) instead of Gaussian
    .venv/bin/python experiments/autofit_heldout.py denoise --noise student_t --out /tmp/dn_t.jsonl
    # forecasting against AutoReg and Simplex (S-map's grid is slow; --smap adds it); --ours
    # gives our forecaster arguments (e.g. --ours holdout=0.25)
    .venv/bin/python experiments/autofit_heldout.py forecast --out /tmp/fc.jsonl
    # print the ratio table of a run (and, given two runs, ours after / before per cell)
    .venv/bin/python experiments/autofit_heldout.py table /tmp/dn.jsonl [/tmp/dn_before.jsonl]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as bench  # noqa: E402 -- the benchmark's series, split, peers and verdicts


def _imu(name: str, col: str, start: int, note: str) -> tuple:
    """An IMU channel, with the benchmark's horizons for its sampling rate."""
    horizons = (1, 2, 5, 10) if name == "imu_fusion" else (1, 4, 10, 40)
    return ("imu", {"name": name, "col": col, "start": start}, horizons, note)


#: name: as bench_autofit.SERIES; none of them is a benchmark cell (other channels, other
#: datasets), horizons chosen as there by sampling rate
HELDOUT = {
    "imu_fusion_gx": _imu("imu_fusion", "Gyroscope X (deg/s)", 4000, "100 Hz gyroscope X"),
    "imu_fusion_gy": _imu("imu_fusion", "Gyroscope Y (deg/s)", 4000, "100 Hz gyroscope Y"),
    "imu_fusion_ax": _imu("imu_fusion", "Accelerometer X (g)", 4000, "100 Hz accelerometer X"),
    "imu_fusion_gz_late": _imu("imu_fusion", "Gyroscope Z (deg/s)", 9000,
                               "the benchmark's channel, a later stretch"),
    "imu_gait_gx": _imu("imu_gait", "Gyroscope X (deg/s)", 7000, "400 Hz gyroscope X, walking"),
    "imu_gait_gz": _imu("imu_gait", "Gyroscope Z (deg/s)", 7000, "400 Hz gyroscope Z, walking"),
    "etth2_ot": ("ett", {"name": "ETTh2", "col": "OT", "start": 0}, (1, 6, 24), "hourly"),
    "ettm1_ot": ("ett", {"name": "ETTm1", "col": "OT", "start": 0}, (1, 4, 16), "15 min"),
    "etth1_hufl": ("ett", {"name": "ETTh1", "col": "HUFL", "start": 0}, (1, 6, 24), "hourly load"),
}  # fmt: skip
bench.SERIES.update(HELDOUT)


def _unit(args) -> list:
    task, name, data_dir, smap, ours, noise = args
    (bench.OURS_FILTER if task == "denoise" else bench.OURS_FORECASTER).update(ours)
    bench.NOISE = noise
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # two processes side by side, one BLAS thread each
    try:
        z, sp = bench.split_series(name, 0, 2000, 3000, data_dir)
    except bench.Skip:
        return []
    if task == "denoise":
        rows = bench.denoise_unit(name, 0, z, sp)
    else:
        peer_set = {k: v for k, v in bench.peers().items() if smap or k != "S-map"}
        rows = bench.forecast_unit(name, 0, z, sp, HELDOUT[name][2], peer_set)
    for row in rows:  # squared errors: kept for the verdicts as lists
        for v in row.values():
            if isinstance(v, dict) and "se" in v:
                v["se"] = np.asarray(v["se"], float).tolist()
    return rows


def run(task: str, data_dir, out: str, smap: bool, names, ours: dict, noise="gaussian") -> None:
    units = [(task, name, data_dir, smap, ours, noise) for name in (names or HELDOUT)]
    with ProcessPoolExecutor(2) as pool:
        rows = [row for rows in pool.map(_unit, units) for row in rows]
    Path(out).write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    table(out, None)


def table(path: str, before: str | None) -> None:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    old = {}
    if before:
        for r in map(json.loads, Path(before).read_text().splitlines()):
            old[(r["series"], r.get("snr", r.get("h")))] = r
        # denoising runs under different noise (rows before 2026-12-02 hold no kind: Gaussian)
        kinds = {r.get("noise", "gaussian") for r in [*rows, *old.values()] if "snr" in r}
        if len(kinds) > 1:
            sys.exit(f"{path} and {before} add different noise ({', '.join(sorted(kinds))})")
    ours = [k for k in ("ours", "ours (self)", "ours (sup)") if k in rows[0]]
    peers = [k for k, v in rows[0].items() if isinstance(v, dict) and k not in ours]
    block = bench.DENOISE_BLOCK if "snr" in rows[0] else None
    logs = {k: [] for k in ours}
    for r in rows:
        cell = r.get("snr", r.get("h"))
        best = min(peers, key=lambda p: r[p]["rmse"] if np.isfinite(r[p]["rmse"]) else np.inf)
        parts = [f"{r['series']:>20} {cell:>4g}"]
        for k in ours:
            ratio = r[k]["rmse"] / r[best]["rmse"]
            logs[k].append(np.log(ratio))
            v = bench.verdict([r[k]["se"]], [r[best]["se"]], block or max(int(cell), 10))
            parts.append(f"{k} {ratio:.3f} {v:<4}")
            if (r["series"], cell) in old:
                parts.append(f"(x{r[k]['rmse'] / old[(r['series'], cell)][k]['rmse']:.3f})")
        print("  ".join(parts) + f"  best {best} {r[best]['rmse']:.4g}")
    for k in ours:
        lg = np.array(logs[k])
        print(f"{k}: geometric mean ratio {np.exp(lg.mean()):.3f}, worst {np.exp(lg.max()):.3f}, "
              f"{int((lg <= 0).sum())} of {lg.size} at or ahead")  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for task in ("denoise", "forecast"):
        r = sub.add_parser(task)
        r.add_argument("--data-dir", default=None)
        r.add_argument("--out", required=True)
        r.add_argument("--series", nargs="+", choices=sorted(HELDOUT))
        if task == "forecast":
            r.add_argument("--smap", action="store_true", help="also tune pyEDM S-map (slow)")
        else:
            bench.add_noise_option(r)
        r.add_argument(
            "--ours",
            nargs="*",
            default=[],
            metavar="NAME=VALUE",
            help=f"{'ProjectionFilter' if task == 'denoise' else 'ProjectionForecaster'} "
            "arguments of ours (a Python literal each)",
        )
    t = sub.add_parser("table")
    t.add_argument("run")
    t.add_argument("before", nargs="?")
    args = p.parse_args(argv)
    if args.command == "table":
        table(args.run, args.before)
    else:
        ours = {
            k: ast.literal_eval(v) for k, v in (a.split("=", 1) for a in getattr(args, "ours", []))
        }
        run(args.command, args.data_dir, args.out, getattr(args, "smap", False), args.series, ours,
            getattr(args, "noise", "gaussian"))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
