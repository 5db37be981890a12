"""What the non-local filter (``ProjectionFilter(window="all")``) costs as the series grows.

Its keys are the ``n_neighbors`` (64) patterns of the whole series nearest to each query's
(:mod:`tssdpa.signal.nonlocal_filter`), found with a k-d tree or, for long patterns among many
keys (``BLAS_DIM``, ``BLAS_KEYS``), by blocked matrix products: a k-d tree's search slows down
as the pattern length grows, the more so where noise fills the pattern's dimensions, and the
products cost the same whatever the data. This script times one filter pass
(:func:`~tssdpa.signal.nonlocal_filter.run_nonlocal`, one kernel width) with each search
forced, side by side, at the pattern lengths ``fit`` tries (7, 15, 31, 63) and series of 4,000
samples (what ``fit`` scores) to 160,000, on a pulse train, a Mackey–Glass series and a sum of
three sinusoids at 10 dB. Beside it, the windowed zero-phase filter of the largest window
``fit`` tries (half-width 64, embedding 7) on the same data, timed in the same run. Median of
``--repeats`` timings; the k-d tree queries run on ``tssdpa.signal.neighbours.THREADS``
threads, the matrix products on the BLAS's.

Usage::

    .venv/bin/python experiments/bench_nonlocal.py --out docs/results/nonlocal_bench.md
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tssdpa.data.synthetic import make_signal  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402
from tssdpa.signal import nonlocal_filter  # noqa: E402
from tssdpa.signal.neighbours import THREADS  # noqa: E402
from tssdpa.signal.nonlocal_filter import BLAS_DIM, BLAS_KEYS, run_nonlocal  # noqa: E402

EMBEDDINGS = (7, 15, 31, 63)
LENGTHS = (4000, 10000, 40000, 160000)
SEARCHES = {"k-d tree": (10**9, 0), "products": (1, 0)}  # (BLAS_DIM, BLAS_KEYS) forcing each


def noisy(name: str, n: int, seed: int = 0) -> np.ndarray:
    x = np.asarray(make_signal(name, n, seed), dtype=np.float64)
    x = (x - x.mean()) / x.std()
    return (x + 10 ** (-10 / 20) * np.random.default_rng(seed + 1).normal(size=n))[:, None]


def timed(fn, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        tic = time.perf_counter()
        fn()
        out.append(time.perf_counter() - tic)
    return float(np.median(out))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=None, help="Markdown file to write")
    p.add_argument("--repeats", type=int, default=1)
    args = p.parse_args(argv)
    rows = []
    ProjectionFilter(window=64, sigma=1.0, causal=False).filter(noisy("pulse_train", 500))  # warm
    for name in ("pulse_train", "mackey_glass", "sinusoids"):
        for n in LENGTHS:
            x = noisy(name, n)
            windowed = ProjectionFilter(window=64, embedding=7, sigma=1.0, causal=False)
            t = timed(lambda f=windowed, x=x: f.filter(x), args.repeats)
            row = [name, n, f"{t:.2f}"]
            for m in EMBEDDINGS:
                times = []
                for dim, keys in SEARCHES.values():
                    nonlocal_filter.BLAS_DIM, nonlocal_filter.BLAS_KEYS = dim, keys
                    times.append(
                        timed(lambda x=x, m=m: run_nonlocal(x, m, 64, [1.0]), args.repeats)
                    )
                nonlocal_filter.BLAS_DIM, nonlocal_filter.BLAS_KEYS = BLAS_DIM, BLAS_KEYS
                row.append(" / ".join(f"{t:.2f}" for t in times))
            rows.append(row)
            print(" | ".join(map(str, row)), flush=True)
    head = ["series (10 dB)", "samples", "windowed (64, m=7) s"]
    head += [f"non-local m={m}: tree / products s" for m in EMBEDDINGS]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    md = [
        '# Cost of the non-local filter (`window="all"`)',
        "",
        "Written by `experiments/bench_nonlocal.py`; every number below comes from that run.",
        "",
        f"- command: `.venv/bin/python experiments/bench_nonlocal.py "
        f"{' '.join(argv if argv is not None else sys.argv[1:])}`",
        f"- machine: {platform.processor() or platform.machine()}, {cores} cores available, "
        f"k-d tree threads {THREADS}; python {platform.python_version()}, numpy "
        f"{np.__version__}",
        f"- one filter pass, 64 neighbours, one kernel width; median of {args.repeats}; each "
        f"search forced; the filter takes the products for patterns of {BLAS_DIM} coordinates "
        f"(m - 1) or more among {BLAS_KEYS} keys or more, the k-d tree otherwise",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(map(str, r)) + " |" for r in rows),
    ]
    text = "\n".join(md) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
