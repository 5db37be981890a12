"""Exact k-nearest-neighbour search for the analogue forecaster: which library (issue 10).

``ProjectionForecaster`` asks for the k nearest delay-embedding keys of every query, exactly
(the Gaussian weights and the local-linear fit need the true neighbours). This script times the
candidates side by side, in one run, on the forecaster's workload: keys and queries are delay
embeddings of a Lorenz series (dimension D = E, the embedding), k = 4 (D + 1) -- the largest
neighbourhood ``fit`` tries by default -- and every index answers the same queries:

* ``scipy.spatial.cKDTree`` (what tssdpa uses): build + query, ``workers=1``;
* ``pykdtree`` (``KDTree``), where installed;
* ``faiss-cpu`` exact search (``IndexFlatL2``), where installed, one thread;
* brute force in numpy (distances by a matrix product, blocks of queries).

Each result is checked against brute force (the same neighbour distances to 1e-9); the table
gives the median of ``--repeats`` timings and the ratio to cKDTree. Approximate indexes (HNSW,
annoy) are left out: they do not return the exact neighbours the method needs.

Usage::

    .venv/bin/python experiments/bench_neighbours.py --out docs/results/neighbours_bench.md
    # the non-local filter's search: noisy patterns of 30-62 samples, 127 neighbours
    .venv/bin/python experiments/bench_neighbours.py --keys 24000 --dims 30 62 --k 127 \
        --noise-db 10 --repeats 1
    # with the optional libraries (not tssdpa dependencies):
    .venv/bin/pip install pykdtree faiss-cpu
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.spatial import cKDTree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tssdpa.data.synthetic import make_signal  # noqa: E402
from tssdpa.signal.embedding import delay_embedding  # noqa: E402


def brute(keys, queries, k, block=512):
    kn = (keys**2).sum(1)
    out = np.empty((len(queries), k))
    for s in range(0, len(queries), block):
        q = queries[s : s + block]
        d2 = (q**2).sum(1)[:, None] - 2.0 * q @ keys.T + kn[None, :]
        part = np.partition(d2, k - 1, axis=1)[:, :k]
        out[s : s + block] = np.sqrt(np.maximum(np.sort(part, axis=1), 0.0))
    return out


def ckdtree(keys, queries, k):
    return cKDTree(keys).query(queries, k=k, workers=1)[0]


def pykdtree(keys, queries, k):
    from pykdtree.kdtree import KDTree

    return KDTree(keys).query(queries, k=k)[0].astype(np.float64)


def faiss_flat(keys, queries, k):
    import faiss

    faiss.omp_set_num_threads(1)
    index = faiss.IndexFlatL2(keys.shape[1])
    index.add(keys.astype(np.float32))
    d2, _ = index.search(queries.astype(np.float32), k)
    return np.sqrt(np.maximum(d2, 0.0)).astype(np.float64)


METHODS = {"cKDTree": ckdtree, "pykdtree": pykdtree, "faiss IndexFlatL2": faiss_flat,
           "numpy brute force": brute}  # fmt: skip


def available():
    out = {}
    for name, fn in METHODS.items():
        try:
            fn(np.zeros((8, 2)), np.zeros((2, 2)), 2)
            out[name] = fn
        except ImportError:
            print(f"note: {name} not installed, skipped", file=sys.stderr)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--keys", type=int, nargs="+", default=[8000, 100000])
    p.add_argument("--queries", type=int, default=4000)
    p.add_argument("--dims", type=int, nargs="+", default=[2, 5, 10, 20])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None)
    p.add_argument("--k", type=int, default=None, help="neighbours per query (default 4 (D + 1); "
                   "the non-local filter asks for 64 + D + 1)")  # fmt: skip
    p.add_argument("--noise-db", type=float, default=None, help="white noise added to the "
                   "series at this SNR before embedding (the non-local filter's noisy patterns; "
                   "default none)")  # fmt: skip
    args = p.parse_args(argv)
    methods = available()
    x = make_signal("lorenz", max(args.keys) + args.queries + max(args.dims), 0, dt=0.02)
    x = (x - x.mean()) / x.std()
    if args.noise_db is not None:
        x = x + 10 ** (-args.noise_db / 20) * np.random.default_rng(0).normal(size=x.shape)
    rows = []
    for n in args.keys:
        for D in args.dims:
            E = delay_embedding(x[:, None], D)[D - 1 :]  # (T, D), complete rows only
            keys, queries = E[:n], E[n : n + args.queries]
            k = args.k or 4 * (D + 1)
            ref = brute(keys, queries, k)
            times = {}
            for name, fn in methods.items():
                runs = []
                for _ in range(args.repeats):
                    tic = time.perf_counter()
                    d = fn(keys, queries, k)
                    runs.append(time.perf_counter() - tic)
                # float32 indexes round the distances: compare at their precision
                tol = 1e-3 if name.startswith("faiss") else 1e-9
                if not np.allclose(d, ref, rtol=tol, atol=tol):
                    raise AssertionError(f"{name} disagrees with brute force at N={n} D={D}")
                times[name] = float(np.median(runs))
            base = times["cKDTree"]
            rows.append([n, D, k] + [f"{times[m]:.3f} ({times[m] / base:.2f}x)" for m in methods])
            print(rows[-1], flush=True)
    head = ["keys", "D", "k"] + [f"{m} s (/ cKDTree)" for m in methods]
    md = [
        "# Exact k-nearest-neighbour search: cKDTree and the alternatives",
        "",
        "Written by `experiments/bench_neighbours.py`; build + query of "
        f"{args.queries} queries, median of {args.repeats}, one thread each.",
        "",
        f"- machine: {platform.processor() or platform.machine()}, "
        f"{len(os.sched_getaffinity(0))} cores available, {platform.platform()}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *["| " + " | ".join(str(c) for c in r) + " |" for r in rows],
    ]
    text = "\n".join(md) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
