"""The default fit on systems the project never tuned on, against the benchmark's tuned peers.

``bench_autofit.py`` scores fixed systems, and ``autofit_dev.py`` reruns the same systems on
other seeds: both steer the defaults. The systems below were written down (equations,
sampling, horizons) on 2026-11-27 before ours was run on any of them, and nothing is tuned
on them; they ask whether the default ``fit()`` generalises to dynamics it has not seen. Each
runs the benchmark's own units (same split, peers tuned on validation, noise, verdicts):
forecasting against Simplex, S-map and AutoReg, denoising against the oracle-tuned moving
average, Savitzky-Golay and Butterworth.

    .venv/bin/python experiments/autofit_unseen.py run --out /tmp/unseen.jsonl \
        --report docs/results/autofit_unseen.md
    .venv/bin/python experiments/autofit_unseen.py table /tmp/unseen.jsonl [BEFORE.jsonl]
    # the second suite (experiments/unseen_suite_2.py), written down on 2026-12-06
    .venv/bin/python experiments/autofit_unseen.py run --suite 2 --out /tmp/unseen2.jsonl \
        --report docs/results/autofit_unseen_2.md
    # the third suite (experiments/unseen_suite_3.py), written down on 2026-12-07
    .venv/bin/python experiments/autofit_unseen.py run --suite 3 --out /tmp/unseen3.jsonl \
        --report docs/results/autofit_unseen_3.md
    # the fourth suite (experiments/unseen_suite_4.py), written down on 2026-12-07
    .venv/bin/python experiments/autofit_unseen.py run --suite 4 --out /tmp/unseen4.jsonl \
        --report docs/results/autofit_unseen_4.md
    # the fifth suite (experiments/unseen_suite_5.py), written down on 2026-12-08
    .venv/bin/python experiments/autofit_unseen.py run --suite 5 --out /tmp/unseen5.jsonl \
        --report docs/results/autofit_unseen_5.md
    # the denoising cells only, under Student-t noise (3 degrees of freedom)
    .venv/bin/python experiments/autofit_unseen.py run --tasks denoise --noise student_t \
        --out /tmp/unseen_t.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- its ratio table
import bench_autofit as bench  # noqa: E402 -- the benchmark's split, units and verdicts
import unseen_suite_2  # noqa: E402 -- the second suite's series
import unseen_suite_3  # noqa: E402 -- the third suite's series
import unseen_suite_4  # noqa: E402 -- the fourth suite's series
import unseen_suite_5  # noqa: E402 -- the fifth suite's series

from tssdpa.data import synthetic  # noqa: E402
from tssdpa.data.synthetic import _flow, _maps  # noqa: E402 -- the benchmark's integrators


def duffing(n: int, seed: int) -> np.ndarray:
    """Forced Duffing ``x'' + 0.3 x' - x + x^3 = 0.5 cos(1.2 t)`` (chaotic), every 0.2."""
    rng = np.random.default_rng(seed)

    def f(s):
        x, v, t = s
        return np.array([v, -0.3 * v + x - x**3 + 0.5 * math.cos(1.2 * t), 1.0])

    return _flow(f, [*rng.normal(0, 0.5, 2), 0.0], n, 0.2, 500, max_step=0.01)[:, 0].copy()


def chua(n: int, seed: int) -> np.ndarray:
    """Chua's circuit, double scroll (alpha 15.6, beta 28, m0 -8/7, m1 -5/7), every 0.05."""
    rng = np.random.default_rng(seed)
    m0, m1 = -8.0 / 7.0, -5.0 / 7.0

    def f(s):
        x, y, z = s
        g = m1 * x + 0.5 * (m0 - m1) * (abs(x + 1.0) - abs(x - 1.0))
        return np.array([15.6 * (y - x - g), x - y + z, -28.0 * y])

    return _flow(f, [0.7, 0.0, 0.0] + rng.normal(0, 0.05, 3), n, 0.05, 1000, max_step=0.005)[
        :, 0
    ].copy()


def lozi(n: int, seed: int) -> np.ndarray:
    """Lozi map ``x' = 1 - 1.7 |x| + y``, ``y' = 0.5 x``, one sample per iterate."""
    rng = np.random.default_rng(seed)
    return _maps(lambda x, y: (1.0 - 1.7 * abs(x) + y, 0.5 * x), rng.uniform(-0.1, 0.1, 2), n,
                 1000)[:, 0].copy()  # fmt: skip


def growth(n: int, seed: int) -> np.ndarray:
    """The univariate nonstationary growth model of the particle-filter literature:
    ``x_t = x/2 + 25 x / (1 + x^2) + 8 cos(1.2 t) + v``, ``v ~ N(0, 10)``."""
    rng = np.random.default_rng(seed)
    x, out = 0.1, np.empty(n)
    for t in range(n + 200):
        x = 0.5 * x + 25.0 * x / (1.0 + x * x) + 8.0 * math.cos(1.2 * t) + rng.normal(0, 10**0.5)
        if t >= 200:
            out[t - 200] = x
    return out


def forced_van_der_pol(n: int, seed: int) -> np.ndarray:
    """``x'' - 8.53 (1 - x^2) x' + x = 1.2 sin(2 pi t / 10)`` (Parlitz & Lauterborn's chaotic
    relaxation oscillator), every 0.1."""
    rng = np.random.default_rng(seed)
    w = 2.0 * math.pi / 10.0

    def f(s):
        x, v, t = s
        return np.array([v, 8.53 * (1.0 - x * x) * v - x + 1.2 * math.sin(w * t), 1.0])

    return _flow(f, [*rng.normal(0, 0.5, 2), 0.0], n, 0.1, 500, max_step=0.002)[:, 0].copy()


def torus(n: int, seed: int) -> np.ndarray:
    """Quasi-periodic ``sin(t + a) + 0.5 sin(sqrt(2) t + b)^2``, every 0.3 (random phases)."""
    a, b = np.random.default_rng(seed).uniform(0, 2 * math.pi, 2)
    t = 0.3 * np.arange(n)
    return np.sin(t + a) + 0.5 * np.sin(math.sqrt(2.0) * t + b) ** 2


def double_well(n: int, seed: int) -> np.ndarray:
    """Langevin ``dx = (x - x^3) dt + 0.45 dW`` (Euler-Maruyama, dt 0.01), every 0.2: noise-
    driven hops between two wells."""
    rng = np.random.default_rng(seed)
    steps = rng.normal(0, 0.45 * 0.1, (n + 100) * 20)
    x, out = 1.0, np.empty(n + 100)
    for i in range(n + 100):
        for e in steps[20 * i : 20 * (i + 1)]:
            x += (x - x**3) * 0.01 + e
        out[i] = x
    return out[100:]


#: name: (generator, horizons, what sets the horizons); written down before any run
UNSEEN = {
    "duffing": (duffing, (1, 5, 15, 35), "lambda ~0.15/tu: T_L ~35 samples"),
    "chua": (chua, (1, 10, 40, 80), "lambda ~0.25/tu: T_L ~80 samples"),
    "lozi": (lozi, (1, 2, 3), "lambda ~0.47/step: T_L ~2"),
    "growth": (growth, (1, 2, 5), "stochastic; forced with period ~5.2"),
    "forced_van_der_pol": (forced_van_der_pol, (1, 10, 50, 100), "forcing period 100 samples"),
    "torus": (torus, (1, 10, 50), "quasi-periodic, not chaotic"),
    "double_well": (double_well, (1, 5, 20), "stochastic; hops between wells"),
}
#: the suites by number: 1 as above; 2, written down on 2026-12-06 after suite 1 had informed
#: a change (unseen_suite_2.py), with two real channels no script had scored; 3, written down
#: on 2026-12-07 after suites 1 and 2 had (unseen_suite_3.py), with two more such channels;
#: 4, written down later that day after suites 1-3 had (unseen_suite_4.py), with two more;
#: 5, written down on 2026-12-08 after suites 1-4 had (unseen_suite_5.py), with two more
SUITES = {
    1: UNSEEN,
    2: {**unseen_suite_2.SYNTHETIC, **unseen_suite_2.REAL},
    3: {**unseen_suite_3.SYNTHETIC, **unseen_suite_3.REAL},
    4: {**unseen_suite_4.SYNTHETIC, **unseen_suite_4.REAL},
    5: {**unseen_suite_5.SYNTHETIC, **unseen_suite_5.REAL},
}
for _name, (_make, _horizons, _note) in {
    **UNSEEN,
    **unseen_suite_2.SYNTHETIC,
    **unseen_suite_3.SYNTHETIC,
    **unseen_suite_4.SYNTHETIC,
    **unseen_suite_5.SYNTHETIC,
}.items():
    synthetic.BENCHMARK_SIGNALS[_name] = _make  # make_signal looks names up at call time
    bench.SERIES[_name] = (_name, {}, _horizons, _note)
bench.SERIES.update(
    {**unseen_suite_2.REAL, **unseen_suite_3.REAL, **unseen_suite_4.REAL, **unseen_suite_5.REAL}
)
#: what each suite's report says of when and how its series were chosen
WRITTEN = {
    1: "the systems, their sampling and horizons were written down before ours ran on any of "
    "them; nothing was tuned on them",
    2: "written down on 2026-12-06 (experiments/unseen_suite_2.py: equations, sampling, "
    "horizons from estimated Lyapunov times, two real channels no script had scored) before "
    "ours ran on any of them; nothing was tuned on them",
    3: "written down on 2026-12-07 (experiments/unseen_suite_3.py: equations, sampling, "
    "horizons from estimated Lyapunov times or periods, two real channels no script had "
    "scored alone) before ours ran on any of them; nothing was tuned on them",
    4: "written down on 2026-12-07 (experiments/unseen_suite_4.py: equations, sampling, "
    "horizons from estimated Lyapunov times, periods or a few steps, two real channels no "
    "script had scored) before ours ran on any of them; nothing was tuned on them",
    5: "written down on 2026-12-08 (experiments/unseen_suite_5.py: equations, sampling, "
    "horizons from estimated Lyapunov times, periods or a few steps, two real channels no "
    "script had scored) before ours ran on any of them; nothing was tuned on them",
}


TASKS = ("forecast", "denoise")


def _unit(args) -> list:
    name, seed, task, noise, data_dir = args
    bench.NOISE = noise
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # two processes side by side, one BLAS thread each
    try:
        z, sp = bench.split_series(name, seed, 2000, 3000, data_dir)
    except bench.Skip as err:  # a real channel whose data is not here
        print(f"  skipped: {err}", flush=True)
        return []
    if task == "denoise":
        rows = bench.denoise_unit(name, seed, z, sp)
    else:
        rows = bench.forecast_unit(name, seed, z, sp, bench.SERIES[name][2], bench.peers())
    for row in rows:  # squared errors: kept for the verdicts as lists
        for v in row.values():
            if isinstance(v, dict) and "se" in v:
                v["se"] = np.asarray(v["se"], float).tolist()
    return rows


def run(out: str, report: str | None, seeds, names, tasks=TASKS, noise="gaussian", suite=1,
        data_dir=None) -> None:  # fmt: skip
    tic = time.perf_counter()
    units = [(n, s, t, noise, data_dir) for t in tasks for n in names for s in seeds]
    with ProcessPoolExecutor(2) as pool:
        rows = [row for rows in pool.map(_unit, units) for row in rows]
    Path(out).write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    for kind in tasks:
        split_table(out, kind, None)
    if report:
        write_report(out, report, seeds, names, time.perf_counter() - tic, suite, data_dir)


def _task_file(path: str, kind: str) -> str:
    """The rows of one task (``kind``) of a run, written beside it for autofit_heldout."""
    rows = Path(path).read_text().splitlines()
    keep = [r for r in rows if ('"snr"' in r) == (kind == "denoise")]
    out = Path(path).with_suffix(f".{kind}.jsonl")
    out.write_text("".join(r + "\n" for r in keep))
    return str(out)


def split_table(path: str, kind: str, before: str | None) -> str:
    """autofit_heldout's ratio table of one task's rows, printed and returned."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        autofit_heldout.table(_task_file(path, kind), before and _task_file(before, kind))
    print(buf.getvalue(), end="")
    return buf.getvalue()


def write_report(out: str, report: str, seeds, names, seconds: float, suite: int = 1,
                 data_dir=None) -> None:  # fmt: skip
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True, cwd=bench.ROOT).stdout.strip()  # fmt: skip
    rows = Path(out).read_text()
    skipped = [n for n in names if f'"series": "{n}"' not in rows]  # a real channel's data absent
    names = [n for n in names if n not in skipped]
    suite_said = ("" if suite == 1 else f" --suite {suite}") + (
        f" --data-dir {data_dir}" if data_dir else ""
    )
    lines = [
        "# Default fit on unseen systems (issue 10)" + ("" if suite == 1 else f", suite {suite}"),
        "",
        "Written by `experiments/autofit_unseen.py`; every number below comes from that run.",
        "",
        f"- command: `.venv/bin/python experiments/autofit_unseen.py run{suite_said} --out {out} "
        f"--report {report}`",
        f"- tssdpa at {rev}; python {platform.python_version()}; seeds {list(seeds)}; "
        f"run time {seconds:.0f} s on 2 processes",
        f"- {WRITTEN[suite]}",
        *([f"- skipped, their data not found: {', '.join(skipped)}"] if skipped else []),
        "- split, peers, noise and verdicts as in `bench_autofit.py` (autofit.md): ratio = "
        "our test RMSE / the best peer's; verdict from paired squared errors, two standard "
        "errors of block means",
        "- where the best peer's RMSE is below 1e-10 (a linear recurrence that S-map's "
        "theta = 0 solves exactly) both forecasts are exact to rounding, and their ratio and "
        "verdict say nothing",
        "",
        "| series | horizons | note |",
        "|---|---|---|",
        *(
            f"| {n} | {', '.join(map(str, bench.SERIES[n][2]))} | {bench.SERIES[n][3]} |"
            for n in names
        ),
        "",
        "## Forecasting (peers: Simplex, S-map, AutoReg tuned on validation)",
        "",
        "```",
        split_table(out, "forecast", None).rstrip(),
        "```",
        "",
        "## Denoising (peers: moving average, Savitzky-Golay, Butterworth tuned on the clean "
        "validation part)",
        "",
        "```",
        split_table(out, "denoise", None).rstrip(),
        "```",
        "",
    ]
    Path(report).write_text("\n".join(lines))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True, help="JSON lines of every cell")
    r.add_argument("--report", help="markdown report to write")
    r.add_argument("--seeds", nargs="+", type=int, default=[0])
    r.add_argument(
        "--suite",
        type=int,
        choices=sorted(SUITES),
        default=1,
        help="which suite of series (2, 3, 4, 5: unseen_suite_2.py, _3.py, _4.py, _5.py)",
    )
    r.add_argument(
        "--series",
        nargs="+",
        choices=sorted(set().union(*SUITES.values())),
        help="some of the suite's series (default: all of them)",
    )
    r.add_argument(
        "--data-dir",
        help="folder of the shared datasets (the real channels of suites 2-5; "
        "default: the search path of tssdpa.data, then skipped)",
    )
    r.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    bench.add_noise_option(r)
    t = sub.add_parser("table")
    t.add_argument("run")
    t.add_argument("before", nargs="?")
    args = p.parse_args(argv)
    if args.command == "table":
        lines = Path(args.run).read_text().splitlines()
        present = {"denoise" if '"snr"' in line else "forecast" for line in lines}
        for kind in [k for k in TASKS if k in present]:  # a run may hold one task only
            split_table(args.run, kind, args.before)
    else:
        if args.report and (set(args.tasks) != set(TASKS) or args.noise != "gaussian"):
            p.error("--report writes the whole run: both tasks under Gaussian noise")
        if args.noise != "gaussian" and "denoise" not in args.tasks:
            p.error("--noise is the denoising cells' noise: give --tasks denoise")
        other = sorted(set(args.series or ()) - set(SUITES[args.suite]))
        if other:
            p.error(f"--series {' '.join(other)}: not in suite {args.suite}")
        run(
            args.out,
            args.report,
            args.seeds,
            args.series or list(SUITES[args.suite]),
            args.tasks,
            args.noise,
            args.suite,
            args.data_dir,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
