"""The local polynomial's small systems: LAPACK's batched solve against the elimination the
lag kernel uses, side by side in one run, and what a default zero-phase fit costs.

A zero-phase ``ProjectionFilter`` fit scores local polynomials of degree 2 and 4 (P = 3 and 5
unknowns) for every row of every candidate: many small symmetric positive definite systems
(:func:`tssdpa.signal.spd.solve_spd`). Prints the median time of each solver over
``--repeats`` calls on systems built as the kernel builds them, then the median time of the
default fit ``ProjectionFilter(causal=False).fit(x)`` on a noisy two-channel sine.

    .venv/bin/python experiments/bench_local_polynomial.py
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from tssdpa.filters import ProjectionFilter
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
