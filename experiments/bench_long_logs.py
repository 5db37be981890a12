"""Filtering a long log with the default fit: ``ProjectionFilter(causal=...).fit(x)`` on the
first samples (``max_fit_samples``), then ``filter`` over the whole of it, for growing lengths.

A robot's IMU logged for an hour at 400 Hz is 1.44 million samples. The causal default keeps
its cost per sample fixed by the window; the zero-phase default often picks the non-local
filter (``window="all"``: the ``n_neighbors`` nearest patterns of the whole series, found by a
k-d tree in the delay-embedding space), whose cost per sample depends on that search. Each
length runs in its own process, so that its peak resident memory (``ru_maxrss``) is its own.

Series: the three Lorenz-63 coordinates (dt 0.02, z-scored) plus white noise of 0.3, seed 0.
Printed: the chosen window and embedding, fit and filter seconds, samples filtered per
second, peak resident MiB, and the RMSE against the clean series. Last, the zero-phase fit
limited to windowed filters (``window=[8, 16, 32, 64]``) at the largest length.

    .venv/bin/python experiments/bench_long_logs.py
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

LENGTHS = (50_000, 100_000, 200_000)


WINDOWED = [8, 16, 32, 64]


def one(n: int, causal: bool, windowed: bool = False) -> dict:
    from tssdpa.data.synthetic import lorenz
    from tssdpa.filters import ProjectionFilter

    clean = lorenz(n, seed=0, component=None)
    clean = (clean - clean.mean(0)) / clean.std(0)
    x = clean + 0.3 * np.random.default_rng(0).normal(size=clean.shape)
    t0 = time.perf_counter()
    f = ProjectionFilter(causal=causal, **({"window": WINDOWED} if windowed else {})).fit(x)
    t1 = time.perf_counter()
    y = f.filter(x)
    t2 = time.perf_counter()
    return {"window": str(f.window_), "embedding": int(f.embedding_), "fit": t1 - t0,
            "filter": t2 - t1, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rmse": float(np.sqrt(np.mean((y - clean) ** 2)))}  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    p.add_argument("--one", nargs=3, metavar=("N", "CAUSAL", "WINDOWED"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1] == "1", args.one[2] == "1")))
        return 0
    print("fit                  samples window embedding  fit s  filter s  samples/s  peak MiB"
          "   RMSE")  # fmt: skip
    runs = [(causal, n, False) for causal in (True, False) for n in args.lengths]
    for causal, n, windowed in [*runs, (False, max(args.lengths), True)]:
        cmd = [sys.executable, __file__, "--one", str(n), str(int(causal)), str(int(windowed))]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        kind = "causal" if causal else "zero-phase" + (" windowed" if windowed else "")
        print(f"{kind:19s} {n:8d} {r['window']:>6s} {r['embedding']:9d} {r['fit']:6.1f} "
              f"{r['filter']:9.1f} {n / r['filter']:10.0f} {r['peak']:9.0f} {r['rmse']:6.3f}",
              flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
