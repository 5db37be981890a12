"""Our side of ``bench_autofit.py``'s forecasting tables on development seeds, and the
comparison of two such runs -- how a change to the default fit is judged before the
reported seed 0 is run (no peers, so a few minutes).

Usage::

    # at each of the two checkouts (seeds 1 and 2, 2 processes)
    .venv/bin/python experiments/autofit_dev.py run --seeds 1 2 --out /tmp/before.jsonl
    .venv/bin/python experiments/autofit_dev.py run --seeds 1 2 --out /tmp/after.jsonl
    # per-cell RMSE ratios after / before (denoising: each fit, its synthetic and real cells
    # apart), cells more than 2% apart, total fit + forecast time
    .venv/bin/python experiments/autofit_dev.py compare /tmp/before.jsonl /tmp/after.jsonl
    # the denoising cells instead (0, 10, 20 dB; ours self-supervised and with the target);
    # --ours gives the filter's arguments, e.g. local_window=None: no local adaptation
    .venv/bin/python experiments/autofit_dev.py run --denoise --synthetic-only --out /tmp/dn.jsonl
    # under Student-t noise (3 degrees of freedom) instead of Gaussian
    .venv/bin/python experiments/autofit_dev.py run --denoise --synthetic-only --noise student_t \
        --out /tmp/dn_t.jsonl
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
import bench_autofit as bench  # noqa: E402 -- the benchmark's series, split and scores

from tssdpa.filters import forecaster  # noqa: E402


def _unit(args) -> list:
    name, seed, data_dir, ours, no_ladder, denoise, noise = args
    (bench.OURS_FILTER if denoise else bench.OURS_FORECASTER).update(ours)
    bench.NOISE = noise
    if no_ladder:  # the linear model's patterns stop at 48 samples, as before 2026-11-27
        forecaster.LONG_LINEAR_LADDER = ()
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # two processes side by side, one BLAS thread each
    try:
        z, sp = bench.split_series(name, seed, 2000, 3000, data_dir)
    except bench.Skip:
        return []
    if denoise:  # the benchmark's denoising unit (its peers are cheap): ours, both fits
        return [{"series": name, "seed": seed, "snr": r["snr"], "fit": fit, "rmse": r[tag]["rmse"],
                 "time": r[tag]["time"], "peer": min(r[f]["rmse"] for f in PEERS)}
                for r in bench.denoise_unit(name, seed, z, sp)
                for fit, tag in (("self", "ours (self)"), ("sup", "ours (sup)"))]  # fmt: skip
    rows = []
    for h in bench.SERIES[name][2]:
        r = bench.ours_forecast(z, sp, h)
        rows.append({"series": name, "seed": seed, "h": h, "rmse": r["rmse"], "time": r["time"]})
    return rows


#: the denoising peers (tuned with the clean signal); a row's "peer" is the best of them
PEERS = ("moving avg", "Savitzky-Golay", "Butterworth")


def run(seeds, data_dir, out, ours, synthetic_only: bool, no_ladder=False, denoise=False,
        noise="gaussian") -> None:  # fmt: skip
    real = ("sunspots", "imu", "ett")
    units = [
        (name, seed, data_dir, ours, no_ladder, denoise, noise)
        for name, spec in bench.SERIES.items()
        if not (synthetic_only and spec[0] in real)
        for seed in (seeds[:1] if spec[0] in real else seeds)
    ]
    with ProcessPoolExecutor(2) as pool:
        rows = [row for rows in pool.map(_unit, units) for row in rows]
    Path(out).write_text("".join(json.dumps(r) + "\n" for r in rows))


def compare(before: str, after: str) -> None:
    def load(p):
        rows = map(json.loads, Path(p).read_text().splitlines())
        return {(r["series"], r["seed"], r.get("h", r.get("snr")), r.get("fit", "")): r
                for r in rows}  # fmt: skip

    a, b = load(before), load(after)
    cells = sorted(set(a) & set(b))
    ratio = {c: b[c]["rmse"] / a[c]["rmse"] for c in cells}
    logs = np.log([ratio[c] for c in cells])
    t_a, t_b = (sum(run[c]["time"] for c in cells) for run in (a, b))
    print(f"{len(cells)} cells: geometric mean ratio {np.exp(logs.mean()):.3f}, worst "
          f"{np.exp(logs.max()):.3f}; fit + apply {t_a:.0f} s -> {t_b:.0f} s")  # fmt: skip
    real = {name for name, spec in bench.SERIES.items() if spec[0] in ("sunspots", "imu", "ett")}
    for fit in sorted({c[3] for c in cells} - {""}):  # denoising: each fit on its own
        lg = np.log([ratio[c] for c in cells if c[3] == fit])
        print(f"  ours ({fit}): geometric mean ratio {np.exp(lg.mean()):.3f}, worst "
              f"{np.exp(lg.max()):.3f}")  # fmt: skip
        for part, keep in (
            ("synthetic", lambda c: c[0] not in real),
            ("real", lambda c: c[0] in real),
        ):
            r = [ratio[c] for c in cells if c[3] == fit and keep(c)]
            if r:
                up, down = sum(x < 1 / 1.02 for x in r), sum(x > 1.02 for x in r)
                print(f"    {part} ({len(r)} cells): geometric mean ratio "
                      f"{np.exp(np.mean(np.log(r))):.3f}, worst {max(r):.3f}, better / worse "
                      f"by more than 2%: {up} / {down}")  # fmt: skip
    for run_, label in ((a, "before"), (b, "after")):  # denoising rows: against the peers
        peer = [run_[c]["rmse"] / run_[c]["peer"] for c in cells if "peer" in run_[c]]
        if peer:
            print(f"ours / best clean-tuned peer, {label}: geometric mean "
                  f"{np.exp(np.mean(np.log(peer))):.3f}, worst {max(peer):.3f}")  # fmt: skip
    for label, keep in (("worse", lambda r: r > 1.02), ("better", lambda r: r < 1 / 1.02)):
        picked = [f"{c[0]} seed {c[1]} {c[2]:g} {c[3]}: {ratio[c]:.3f}".replace(" :", ":")
                  for c in cells if keep(ratio[c])]  # fmt: skip
        print(f"{label} by more than 2% ({len(picked)}):", "; ".join(picked) or "none")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    r.add_argument("--data-dir", default=None)
    r.add_argument("--out", required=True)
    r.add_argument(
        "--ours",
        nargs="*",
        default=[],
        metavar="NAME=VALUE",
        help="ProjectionForecaster (with --denoise ProjectionFilter) arguments, a Python "
        "literal each",
    )
    r.add_argument(
        "--synthetic-only",
        action="store_true",
        help="leave out the real series (their cells are the benchmark's test "
        "cells; experiments/autofit_heldout.py has real development series)",
    )
    r.add_argument(
        "--no-ladder",
        action="store_true",
        help="without the linear model's 64-336-sample patterns (what they change alone)",
    )
    r.add_argument("--denoise", action="store_true", help="the denoising cells instead")
    bench.add_noise_option(r)
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = p.parse_args(argv)
    if args.command == "run":
        ours = {k: ast.literal_eval(v) for k, v in (a.split("=", 1) for a in args.ours)}
        run(
            args.seeds,
            args.data_dir,
            args.out,
            ours,
            args.synthetic_only,
            args.no_ladder,
            args.denoise,
            args.noise,
        )
    else:
        compare(args.before, args.after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
