"""The local-linear fit's small systems: an eigendecomposition per query against the
elimination :func:`tssdpa.signal.neighbours.local_linear` uses, side by side in one run.

``ProjectionForecaster.fit`` scores the local-linear model for every (k, width) candidate of
every embedding: one (D, D) centred weighted Gram matrix per query (D = E, the embedding) and
the default ridges each (``RIDGES``: four until 2026-12-06, five since). Until 2026-12-03
``local_linear`` took one eigendecomposition per query and
applied every ridge in its eigenbasis; it now solves each ridge's positive definite system by
elimination over all queries and ridges at once (:func:`tssdpa.signal.spd.solve_spd`). Here
the two answer the same neighbourhoods, built as the forecaster builds them: the k nearest
delay-embedding keys of 958 queries in a Lorenz series, Gaussian weights at 0.25 of the k-th
distance, the default ridges. The last row, 30 dimensions (as wide as a three-channel pattern
of 10), is past D = 21, where the smallest default ridge no longer clears the elimination's
rounding bound and both forms take the eigenbasis. Prints the median milliseconds of
``--repeats`` calls of each, and the largest difference of each from the loop reference
(:func:`tssdpa.signal.reference.local_linear_reference`) on the first 100 queries.

    .venv/bin/python experiments/bench_local_linear.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_local_polynomial import _median_time  # noqa: E402

from tssdpa.data.synthetic import make_signal  # noqa: E402
from tssdpa.filters.analogues import RIDGES  # noqa: E402
from tssdpa.signal.embedding import delay_embedding  # noqa: E402
from tssdpa.signal.neighbours import (  # noqa: E402
    _finite,
    kernel_weights,
    local_linear,
    loo_neighbours,
)
from tssdpa.signal.reference import local_linear_reference  # noqa: E402


def eigh_form(weights, neighbours, queries, targets, ridges):
    """``local_linear`` as it was (1e98645): every ridge in the eigenbasis of each query's
    Gram matrix."""
    Q, k, D = neighbours.shape
    tot = weights.sum(axis=1, keepdims=True)
    w = np.divide(weights, tot, out=np.zeros_like(weights), where=tot > 0)  # (Q, k)
    keys = _finite(neighbours)
    t = _finite(targets)  # (Q, k, V)
    key_mean = np.matmul(w[:, None, :], keys)[:, 0, :]  # (Q, D)
    off_mean = key_mean - _finite(queries)
    t_mean = np.matmul(w[:, None, :], t)[:, 0, :]  # (Q, V)
    centred = keys - key_mean[:, None, :]  # (Q, k, D)
    wc = (centred * w[:, :, None]).transpose(0, 2, 1)  # (Q, D, k)
    gram = np.matmul(wc, centred)  # (Q, D, D)
    scale = (np.trace(gram, axis1=1, axis2=2) + (off_mean**2).sum(axis=1)) / max(D, 1)
    scale = np.where(scale > 0, scale, 1.0)[:, None]
    lam, vec = np.linalg.eigh(gram)
    lam = np.where(lam > 1e-15 * lam[:, -1:], lam, 0.0)
    Vtb = np.matmul(vec.transpose(0, 2, 1), np.matmul(wc, t - t_mean[:, None, :]))  # (Q, D, V)
    mean_along = np.matmul(vec.transpose(0, 2, 1), off_mean[:, :, None])[:, :, 0]  # (Q, D)
    empty = tot[:, 0] == 0
    outs = []
    for r in ridges:
        denom = lam + r * scale
        gain = np.divide(1.0, denom, out=np.zeros_like(lam), where=denom > 0)
        out = t_mean - np.matmul((mean_along * gain)[:, None, :], Vtb)[:, 0, :]
        out[empty] = np.nan
        outs.append(out)
    return outs


def _neighbourhood(z, E, k, n_queries=958, horizons=5):
    """Weights (Q, k), neighbour keys (Q, k, E), query keys (Q, E), their futures (Q, k, H)."""
    keys = delay_embedding(z[:, None], E)  # (T, E)
    T = len(z)
    fut = np.stack([np.r_[z[h:], np.full(h, np.nan)] for h in range(1, horizons + 1)], 1)
    keys[~np.isfinite(fut).all(1)] = np.nan
    rows = np.unique(np.linspace(E - 1, T - 1 - horizons, n_queries).astype(int))
    dist, idx = loo_neighbours(keys, k, E - 1 + horizons, rows=rows)
    w = kernel_weights(dist, 0.25, None)
    return w, keys[idx], keys[rows], fut[idx]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=50)
    args = p.parse_args(argv)
    x = make_signal("lorenz", 8000, 0)
    z = (x - x.mean()) / x.std()
    ridges = list(RIDGES)
    print("Lorenz, 958 queries, ridges", ridges, "; median ms per call")
    print(f"{'E':>3} {'k':>4} {'eigh form':>10} {'local_linear':>13} {'ratio':>6}"
          f" {'|eigh form - loop|':>19} {'|local_linear - loop|':>22}")  # fmt: skip
    for E, k in ((2, 12), (4, 20), (6, 28), (8, 36), (10, 44), (10, 88), (30, 124)):
        w, nb, q, t = _neighbourhood(z, E, k)
        old = 1e3 * _median_time(args.repeats, eigh_form, w, nb, q, t, ridges)
        new = 1e3 * _median_time(args.repeats, local_linear, w, nb, q, t, ridges)
        part = (w[:100], nb[:100], q[:100], t[:100])
        ref = [local_linear_reference(*part, ridge=r) for r in ridges]
        err_old = max(np.abs(a - b).max() for a, b in zip(eigh_form(*part, ridges), ref))
        err_new = max(np.abs(a - b).max() for a, b in zip(local_linear(*part, ridges), ref))
        print(f"{E:>3} {k:>4} {old:>10.2f} {new:>13.2f} {new / old:>6.2f}"
              f" {err_old:>19.1e} {err_new:>22.1e}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
