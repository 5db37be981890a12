"""The local polynomial's small systems: LAPACK's batched solve against the elimination the
lag kernel uses, side by side in one run, and what a default zero-phase fit costs.

A zero-phase ``ProjectionFilter`` fit scores local polynomials of degree 2 and 4 (P = 3 and 5
unknowns) for every row of every candidate: many small symmetric positive definite systems
(:func:`tssdpa.signal.spd.solve_spd`). Prints the median time of each solver over
``--repeats`` calls on systems built as the kernel builds them, then the median time of the
default fit ``ProjectionFilter(causal=False).fit(x)`` on a noisy two-channel sine, then the
peak memory (tracemalloc) and time of one block of the lag kernel as a fit sweeps it: 2,064
rows, 127 lags, embedding 7, 15 sigmas with degrees 0, 2 and 4, one channel and three with 5%
of the samples missing (keys that lack a channel).

    .venv/bin/python experiments/bench_local_polynomial.py
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings

import numpy as np

from tssdpa.filters import ProjectionFilter
from tssdpa.signal.embedding import centred_embedding
from tssdpa.signal.lags import attend_lags
from tssdpa.signal.spd import solve_spd


def _systems(n: int, P: int, L: int = 127, seed: int = 0):
    """(n, P, P) weighted moment matrices of L time offsets (with the kernel's ridge) and
    (n, P, 2) right-hand sides."""
    rng = np.random.default_rng(seed)
    u = np.linspace(-1, 1, L)
    w = rng.random((n, L))
    moments = w @ u[:, None] ** np.arange(2 * P - 1)
    G = moments[:, np.add.outer(np.arange(P), np.arange(P))]
    G[:, np.arange(1, P), np.arange(1, P)] += 1e-12 * moments[:, :1]
    rhs = np.stack([(w * v) @ u[:, None] ** np.arange(P) for v in rng.normal(size=(2, 1, L))],
                   axis=2)  # fmt: skip
    return G, rhs


def _median_time(repeats: int, f, *args) -> float:
    f(*args)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--fit-repeats", type=int, default=3)
    args = p.parse_args(argv)
    print("systems: n rows, P unknowns; median us per call")
    print(f"{'n':>6} {'P':>2} {'LAPACK':>9} {'elimination':>12} {'ratio':>6}")
    for n in (300, 1200, 4000):
        for P in (3, 5):
            G, rhs = _systems(n, P)
            lapack = _median_time(args.repeats, np.linalg.solve, G, rhs)
            ours = _median_time(args.repeats, solve_spd, G, rhs)
            print(f"{n:>6} {P:>2} {lapack * 1e6:>9.0f} {ours * 1e6:>12.0f} {ours / lapack:>6.2f}")
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(3)
    print("\ndefault zero-phase fit, noisy sine, 2 channels: median s")
    for n in (600, 1500):
        t = np.arange(n)
        x = np.sin(2 * np.pi * t / 150)[:, None] + 0.1 * rng.normal(size=(n, 2))
        cost = _median_time(args.fit_repeats, ProjectionFilter(causal=False).fit, x)
        print(f"{n:>6} samples: {cost:.2f}")
    print("\none block of the lag kernel, 15 sigmas x degrees 0/2/4: peak MiB, s")
    for channels, gaps in ((1, 0.0), (3, 0.05)):
        peak, cost = _kernel_block(channels, gaps)
        print(f"{channels} channel(s), {gaps:.0%} missing: {peak:.1f} MiB, {cost:.2f} s")
    return 0


def _kernel_block(channels: int, gaps: float, half: int = 64, rows: int = 2064):
    """(peak traced MiB, seconds) of one ``attend_lags`` call over one block (``rows`` x
    ``2 half - 1`` lags fills the default ``block_elems``) with a fit's sigma sweep."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, channels))
    x[rng.random(x.shape) < gaps] = np.nan
    pad = np.full((half - 1, channels), np.nan)
    full = np.concatenate([pad, x, pad])
    E = centred_embedding(full, 7)
    configs = [(s, d) for s in [*np.geomspace(0.1, 10, 14), np.inf] for d in (0, 2, 4)]
    tracemalloc.start()
    t = time.perf_counter()
    attend_lags(E, full, (half - 1, half - 1 + rows), -(half - 1), half - 1, configs=configs)
    cost = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak, cost


if __name__ == "__main__":
    raise SystemExit(main())
