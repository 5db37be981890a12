"""What one forecast call costs in a live loop: the fitted views kept between calls, beside the
path that rebuilt them every call.

A control loop forecasts from its newest samples at every tick:
``fc.forecast_path(buffer)[-1]`` on a buffer of the last B samples, slid one sample per tick.
``ProjectionForecaster`` keeps what its forecasts derive from the fitted series alone
(``tssdpa/filters/library_cache.py``: the library's embeddings and ridge fits, its k-d tree,
the glitch reach) and forecasts a short buffer in one thread; ``predict(steps, y=buffer)``
forecasts the buffer's last origin alone. This measures, per fitted length N, horizon h and
buffer length B, milliseconds per call of

* ``now``: ``forecast_path(buffer, h)[-1]``, the default (views kept, built by a first call
  before the timing);
* ``rebuilt``: the same with the views dropped before every call and the thread limits of
  before (``analogues._MIN_BLOCK = 1``, ``neighbours._MIN_THREADED_QUERIES = 0``): the cost
  of a call before 2026-12-06, less one saving of the same day (the glitch candidates of the
  buffer found once per call, not once per anchor horizon);
* ``predict(y)``: ``predict(h, y=buffer)``, the newest origin alone;

interleaved tick by tick (a change of the machine's load hits them alike); ``now`` and
``rebuilt`` must give the same forecasts to the bit at every tick, and the largest difference
of ``predict(y)`` from them is reported. Series: Lorenz-63 ``x`` (dt 0.02, seed 0, white noise
of 1% of its spread, z-scored), the forecaster fitted by default on its first N samples, the
buffers taken after them; and where the shared data exist the gait recording's gyroscope (400
Hz) as ``bench_autofit.py`` reads it, fitted on its first 800 samples.

    .venv/bin/python experiments/bench_forecast_latency.py --data-dir ../shared/datasets \\
        --out docs/results/forecast_latency.md
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tssdpa import ProjectionForecaster  # noqa: E402
from tssdpa.data.synthetic import lorenz  # noqa: E402
from tssdpa.filters import analogues  # noqa: E402
from tssdpa.signal import neighbours  # noqa: E402

TICKS = 40
BUFFERS = (64, 512, 2048)
MODES = ("rebuilt", "now", "predict(y)")


def lorenz_series(n: int) -> np.ndarray:
    x = np.asarray(lorenz(n, dt=0.02, seed=0))
    x = x + 0.01 * x.std() * np.random.default_rng(0).standard_normal(n)
    return (x - x.mean()) / x.std()


def gait_series(data_dir) -> np.ndarray | None:
    import bench_autofit

    try:  # (not worker_split: it limits BLAS to one thread for the whole process)
        return bench_autofit.split_series("imu_gait_gy", 0, 2000, 3000, data_dir)[0]
    except bench_autofit.Skip:
        return None


def old_limits(on: bool) -> None:
    analogues._MIN_BLOCK = 1 if on else MIN_BLOCK
    neighbours._MIN_THREADED_QUERIES = 0 if on else MIN_QUERIES


MIN_BLOCK, MIN_QUERIES = analogues._MIN_BLOCK, neighbours._MIN_THREADED_QUERIES


def measure(fc, series: np.ndarray, start: int, buffer: int) -> tuple[dict, float]:
    """Milliseconds per call of each mode, and the largest difference of ``predict(y=)`` from
    the path's last row (standardised units: the series are z-scored)."""
    times, worst = {m: [] for m in MODES}, 0.0
    h = fc.horizon
    fc.forecast_path(series[start - buffer : start], h)  # builds the views once
    for tick in range(TICKS):
        buf = series[start + tick - buffer : start + tick]
        out = {}
        order = MODES if tick % 2 else MODES[::-1]
        for mode in order:
            if mode == "rebuilt":
                fc.__dict__.pop("_fitted_views", None)
            old_limits(mode == "rebuilt")
            tic = time.perf_counter()
            if mode == "predict(y)":
                out[mode] = np.asarray(fc.predict(h, y=buf))
            else:
                out[mode] = np.asarray(fc.forecast_path(buf, h))[-1]
            times[mode].append(time.perf_counter() - tic)
            old_limits(False)
        if not np.array_equal(out["now"], out["rebuilt"], equal_nan=True):
            raise AssertionError(f"tick {tick}: the kept views changed a forecast")
        worst = max(worst, float(np.max(np.abs(out["predict(y)"] - out["now"]))))
    return {m: 1e3 * np.array(v) for m, v in times.items()}, worst


def revision() -> str:
    """The tssdpa commit the run measured (with "+ uncommitted changes" where the tree has)."""
    try:
        git = ["git", "-C", str(ROOT)]
        out = [subprocess.run([*git, *args], capture_output=True, text=True, check=True)
               for args in (["rev-parse", "--short", "HEAD"],
                            ["status", "--porcelain", "--untracked-files=no"])]  # fmt: skip
        rev, dirty = (o.stdout.strip() for o in out)
    except Exception:  # noqa: BLE001 -- only a label
        return "unknown (no git)"
    return rev + (" + uncommitted changes" if dirty else "")


def machine() -> str:
    try:
        cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        name = next(ln.split(":", 1)[1].strip() for ln in cpu.splitlines() if "Model name" in ln)
    except Exception:  # noqa: BLE001 -- only a label
        name = platform.processor() or "unknown CPU"
    return f"{name}, {os.cpu_count()} logical cores, {platform.platform()}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=None, help="the shared datasets (gait gyroscope)")
    ap.add_argument("--out", default=None, help="write a markdown report here")
    ap.add_argument("--lengths", default="2000,20000", help="fitted lengths N (Lorenz)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    cases = [(f"Lorenz x, N = {n}", lorenz_series(n + max(BUFFERS) + TICKS), n)
             for n in map(int, args.lengths.split(","))]  # fmt: skip
    gait = gait_series(args.data_dir)
    if gait is not None:
        cases.append(("gait gyroscope (400 Hz), N = 800", gait, 800))
    rows = []
    for name, series, n in cases:
        for h in (1, 10):
            tic = time.perf_counter()
            fc = ProjectionForecaster(horizon=h).fit(series[:n])
            fit_s = time.perf_counter() - tic
            model = fc.best_params_[h]["model"]
            for buffer in BUFFERS:
                t, worst = measure(fc, series, n + buffer, buffer)
                cells = [f"{np.percentile(t[m], q):.2f}" for m in MODES for q in (50, 99)]
                ratio = np.median(t["rebuilt"]) / np.array([np.median(t[m]) for m in MODES[1:]])
                row = (name, h, model, f"{fit_s:.1f}", buffer, *cells,
                       *(f"{r:.1f}" for r in ratio), f"{worst:.1e}")  # fmt: skip
                rows.append(row)
                print(" | ".join(map(str, row)), flush=True)
    head = ("series", "h", "model (h)", "fit s", "buffer B",
            *(f"{m} ms ({q})" for m in MODES for q in ("median", "p99")),
            "rebuilt / now", "rebuilt / predict(y)", "predict(y) - path, max |d|")  # fmt: skip
    data = f" --data-dir {args.data_dir}" if args.data_dir else ""
    lines = [
        "# One forecast call in a live loop: fitted views kept vs rebuilt",
        "",
        "Written by `experiments/bench_forecast_latency.py`; every number below comes from "
        "that run.",
        "",
        f"- command: `.venv/bin/python experiments/bench_forecast_latency.py{data} "
        f"--out {args.out}`",
        f"- machine: {machine()}; tssdpa at {revision()}",
        f"- {TICKS} ticks per row, the buffer slid one sample per tick; modes interleaved: "
        "`rebuilt` and `now` are `forecast_path(buffer, h)[-1]` (their forecasts equal to the "
        "bit at every tick), `predict(y)` is `predict(h, y=buffer)`; the last column its "
        "largest difference from the path's row (z-scored units)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(map(str, r)) + " |" for r in rows),
        "",
    ]
    text = "\n".join(lines)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
