"""What streaming a causal filter fitted channel by channel costs, beside the joint filter.

A causal ``ProjectionFilter`` on several channels is fitted jointly (``channel_independent=
False``: one kernel over every channel), one filter per channel (``True``), or by the choice
per channel (``"auto"``, the default); either way it streams one state
(``tssdpa.filters.channel_streams``). This measures, for the three fits of one series, side by
side in one run:

* ``step``: microseconds per one-sample call from a full state (the robotics loop);
* ``filter(zi=)`` in chunks of 100 samples: samples per second;
* the one-shot ``filter`` of the whole series: samples per second;
* the exported ONNX model in onnxruntime (one thread), per one-sample call, where
  ``tssdpa[deploy]`` is installed;

and the ratio of each to the joint filter's. Then, for causal filters of the given settings
(window 32, embedding 3, sigma 0.5) of degree 0, 1 and 2 on the same series, ``step`` (the
one-row kernel, ``tssdpa.signal.lags.attend_newest``) beside the general path it falls back to
(``filter(sample[None], zi=state)``, a one-row chunk; the path every local polynomial's step
took before 2026-12-05). Series: the fusion IMU's gyroscope and
accelerometer (6 channels, samples 0-3,000 at 100 Hz, as recorded) where the shared data exist,
else three Lorenz coordinates in units of 1, 0.001 and 50 with white noise of a tenth of each
one's spread (seed 0). Timings are the best of ``--repeat`` passes, the three fits interleaved
so that a change in the machine's load hits them alike.

    .venv/bin/python experiments/bench_channel_streams.py --data-dir ../shared/datasets \\
        --out docs/results/channel_streams_bench.md
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from channel_units_probe import imu_axes  # noqa: E402

from tssdpa.data.synthetic import lorenz  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402

FITS = {"joint": False, "per channel": True, "auto": "auto"}
CHUNK = 100


def series(data_dir: str | None) -> tuple[str, np.ndarray]:
    x = imu_axes("imu_fusion", data_dir)
    if x is not None:
        return "fusion IMU, gyroscope + accelerometer, samples 0-3000", x
    print("Lorenz instead", flush=True)

    clean = lorenz(3000, seed=0, component=None)
    clean = (clean - clean.mean(0)) / clean.std(0) * np.array([1.0, 1e-3, 50.0])
    noisy = clean + 0.1 * clean.std(0) * np.random.default_rng(0).normal(size=clean.shape)
    return "Lorenz x, y, z in units of 1, 0.001, 50, noise 0.1 of each spread (seed 0)", noisy


def time_step(f, x: np.ndarray, n_steps: int) -> float:
    """Microseconds per ``step`` call from a full state."""
    _, state = f.filter(x[:500], zi=f.initial_state(x.shape[1]))
    t0 = time.perf_counter()
    for s in x[500 : 500 + n_steps]:
        _, state = f.step(s, state)
    return (time.perf_counter() - t0) / n_steps * 1e6


def time_one_row_filter(f, x: np.ndarray, n_steps: int) -> float:
    """Microseconds per one-row ``filter(zi=)`` call from a full state: the general path."""
    _, state = f.filter(x[:500], zi=f.initial_state(x.shape[1]))
    t0 = time.perf_counter()
    for s in x[500 : 500 + n_steps]:
        _, state = f.filter(s[None], zi=state)
    return (time.perf_counter() - t0) / n_steps * 1e6


def degree_rows(x: np.ndarray, n_steps: int, repeat: int) -> list[str]:
    rows = [
        "| degree | step us | one-row filter(zi=) us | general / step |",
        "|---|---|---|---|",
    ]
    for degree in (0, 1, 2):
        # sigma as a list of one: a single number is fit's starting point, a list its grid
        f = ProjectionFilter(causal=True, window=32, embedding=3, degree=degree, sigma=[0.5],
                             channel_independent=False)  # fmt: skip
        f.fit(x)
        step = general = np.inf
        for _ in range(repeat):  # interleaved
            step = min(step, time_step(f, x, n_steps))
            general = min(general, time_one_row_filter(f, x, n_steps))
        rows.append(f"| {degree} | {step:.1f} | {general:.1f} | {general / step:.1f} |")
        print(rows[-1], flush=True)
    return rows


def time_chunks(f, x: np.ndarray) -> float:
    """Samples per second of ``filter(zi=)`` over the series in chunks of ``CHUNK``."""
    state = f.initial_state(x.shape[1])
    t0 = time.perf_counter()
    for a in range(0, len(x), CHUNK):
        _, state = f.filter(x[a : a + CHUNK], zi=state)
    return len(x) / (time.perf_counter() - t0)


def time_offline(f, x: np.ndarray) -> float:
    t0 = time.perf_counter()
    f.filter(x)
    return len(x) / (time.perf_counter() - t0)


def onnx_session(f, n_channels: int, path: Path):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(f.to_onnx(path, n_channels)), opts)


def time_onnx(f, sess, x: np.ndarray, n_steps: int) -> float:
    from tssdpa.export import onnx_initial_state

    x32 = x.astype(np.float32)
    state = onnx_initial_state(f, x.shape[1])["state"]
    _, state = sess.run(None, {"x": x32[:500], "state": state})
    t0 = time.perf_counter()
    for s in x32[500 : 500 + n_steps]:
        _, state = sess.run(None, {"x": s[None], "state": state})
    return (time.perf_counter() - t0) / n_steps * 1e6


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--steps", type=int, default=2000, help="step calls timed per pass")
    p.add_argument("--repeat", type=int, default=3, help="passes; the best is kept")
    p.add_argument("--out", default=None, help="write the markdown table here")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")  # sampling notes of the recording: not this bench's subject
    name, x = series(args.data_dir)
    if not 0 < args.steps <= len(x) - 500:  # the steps start from a state of 500 samples
        p.error(f"--steps must be 1..{len(x) - 500} on this series")
    fitted, fit_s = {}, {}
    for label, value in FITS.items():
        t0 = time.perf_counter()
        fitted[label] = ProjectionFilter(causal=True, channel_independent=value).fit(x)
        fit_s[label] = time.perf_counter() - t0
        print(f"{label}: fitted in {fit_s[label]:.1f} s", flush=True)
    folder = Path(tempfile.mkdtemp())
    sessions = {k: onnx_session(f, x.shape[1], folder / f"{k.replace(' ', '_')}.onnx")
                for k, f in fitted.items()}  # fmt: skip
    best: dict = {k: {} for k in FITS}
    for _ in range(args.repeat):
        for label, f in fitted.items():  # interleaved: load changes hit every fit alike
            runs = {
                "step us": time_step(f, x, args.steps),
                "chunks samples/s": time_chunks(f, x),
                "one-shot samples/s": time_offline(f, x),
            }
            if sessions[label] is not None:
                runs["ONNX step us"] = time_onnx(f, sessions[label], x, args.steps)
            for key, v in runs.items():
                keep = min if key.endswith("us") else max
                best[label][key] = keep(best[label].get(key, v), v)
    keys = list(best["joint"])
    parts = {
        k: "-"
        if f.channel_models_ is None
        else "".join("j" if m is None else "A" for m in f.channel_models_)
        for k, f in fitted.items()
    }
    rows = [
        "| fit | parts (j joint, A alone) | fit s | "
        + " | ".join(f"{k} (x joint)" for k in keys)
        + " |",
        "|---|---|---|" + "---|" * len(keys),
    ]
    for label in FITS:
        cells = [
            f"{best[label][k]:.1f} ({best[label][k] / best['joint'][k]:.2f})"
            if k.endswith("us")
            else f"{best[label][k]:.0f} ({best[label][k] / best['joint'][k]:.2f})"
            for k in keys
        ]
        rows.append(
            f"| {label} | {parts[label]} | {fit_s[label]:.1f} | " + " | ".join(cells) + " |"
        )
    degrees = degree_rows(x, args.steps, args.repeat)
    head = git_head()
    text = "\n".join(
        [
            "# Streaming a causal filter fitted channel by channel",
            "",
            "Written by `experiments/bench_channel_streams.py`; every number below comes from "
            "that run.",
            "",
            f"- command: `.venv/bin/python experiments/bench_channel_streams.py "
            f"{' '.join(argv if argv is not None else sys.argv[1:])}`",
            f"- series: {name}, {x.shape[0]} x {x.shape[1]}",
            f"- machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
            f"python {platform.python_version()}, numpy {np.__version__}; tssdpa at {head}",
            f"- best of {args.repeat} interleaved passes; step: {args.steps} one-sample calls "
            f"from a full state; chunks of {CHUNK} samples through `filter(zi=)`; ONNX: "
            "onnxruntime, one thread",
            "",
            *rows,
            "",
            "Causal filters of given settings (window 32, embedding 3, sigma 0.5), all channels "
            "joint: `step` (the one-row kernel) beside the general path it falls back to, a "
            "one-row `filter(zi=)`:",
            "",
            *degrees,
            "",
        ]
    )
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


def git_head() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "?"


if __name__ == "__main__":
    raise SystemExit(main())
