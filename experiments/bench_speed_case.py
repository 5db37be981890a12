"""The speed case of ``bench_autofit.py`` timed at several checkouts, alternately (issue 10).

The benchmark's speed case is a fit on 8,000 samples of Lorenz + forecasts of the 4,000 test
origins at h = 5, on 2 cores; one run's timing noise on this machine is tens of percent. This
times the same work for each checkout given (a folder holding a ``tssdpa`` package: a
worktree of another commit, or this one), in turn, ``--repeats`` times, each in a fresh
process (``--fits`` times in each), and prints the seconds -- a before / after comparison on
one machine. ``--case etth1`` times a wider fit instead: a joint pattern of the seven columns
of ETTh1. ``--case denoise`` times a self-supervised ``ProjectionFilter(causal=False).fit`` of
the benchmark's Lorenz series (2,000 samples) at 10 dB. ``--case recursive`` times the
forecast path alone of a fitted recursive linear model over a long horizon (four coupled
AR(2) channels, 8,000 rows, a 48-sample pattern, 336 steps: eleven anchor horizons).

    git worktree add /tmp/old a644150
    .venv/bin/python experiments/bench_speed_case.py /tmp/old . --repeats 3
    .venv/bin/python experiments/bench_speed_case.py /tmp/old . --repeats 6 --fits 3
    .venv/bin/python experiments/bench_speed_case.py /tmp/old . --repeats 1 --case etth1
    .venv/bin/python experiments/bench_speed_case.py /tmp/old . --repeats 3 --fits 3 --case denoise
    .venv/bin/python experiments/bench_speed_case.py /tmp/old . --repeats 3 --case recursive
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

_CHILD = """
import sys, time
sys.path.insert(0, {root!r})
import numpy as np
import tssdpa
from tssdpa import ProjectionFilter, ProjectionForecaster
from tssdpa.data import add_noise
from tssdpa.data.synthetic import make_signal
assert tssdpa.__file__.startswith({root!r}), tssdpa.__file__
if {case!r} == "lorenz":
    n, n_test, h = 12000, 4000, 5
    x = make_signal("lorenz", n, 0)
    tr = n - n_test
    z = (x - x[:tr].mean()) / x[:tr].std()
elif {case!r} == "etth1":  # the seven columns of ETTh1, a joint pattern: the fit alone
    from tssdpa.data import load_ett
    z, tr, h = load_ett("ETTh1", {data_dir!r}).to_numpy()[:6000], 6000, 24
elif {case!r} == "recursive":  # four coupled AR(2) channels; the path's time alone
    rng = np.random.default_rng(0)
    z = np.zeros((8000, 4))
    for t in range(2, 8000):
        z[t] = 0.9 * z[t - 1] - 0.3 * z[t - 2] + 0.1 * z[t - 1, ::-1] + rng.normal(size=4)
    path_of = ProjectionForecaster(model="recursive_linear", horizon=336, embedding=48).fit(
        z[:6000])
else:  # the benchmark's Lorenz series at 10 dB, denoised self-supervised: the fit alone
    x = make_signal("lorenz", 2000, 0, dt=0.02)
    noisy = add_noise((x - x[:1200].mean()) / x[:1200].std(), "gaussian", 10.0, seed=1)

def work():
    if {case!r} == "denoise":
        return ProjectionFilter(causal=False).fit(noisy)
    if {case!r} == "recursive":
        return np.asarray(path_of.forecast_path(z, 336))
    fc = ProjectionForecaster(horizon=h).fit(z[:tr])
    if tr < len(z):
        np.asarray(fc.forecast(z[tr - 64:], h))

for _ in range({fits}):
    tic = time.perf_counter()
    work()
    print(time.perf_counter() - tic)
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("roots", nargs="+", help="folders holding a tssdpa package")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--case", choices=("lorenz", "etth1", "denoise", "recursive"), default="lorenz",
                   help="lorenz: the benchmark's speed case; etth1: a default fit on the seven "
                   "columns of ETTh1 (6,000 rows, horizon 24); denoise: a self-supervised "
                   "zero-phase ProjectionFilter fit (Lorenz, 2,000 samples, 10 dB); "
                   "recursive: the forecast path of a recursive linear fit, 336 steps")  # fmt: skip
    p.add_argument("--data-dir", default=None, help="for --case etth1 (default: as tssdpa "
                   "finds its datasets)")  # fmt: skip
    p.add_argument("--fits", type=int, default=1, help="fits timed in each process (the first "
                   "is cold: the later ones measure the search alone)")  # fmt: skip
    args = p.parse_args(argv)
    roots = [str(Path(r).resolve()) for r in args.roots]
    times: dict[str, list[float]] = {r: [] for r in roots}
    for _ in range(args.repeats):
        for r in roots:
            child = _CHILD.format(root=r, fits=args.fits, case=args.case, data_dir=args.data_dir)
            out = subprocess.run([sys.executable, "-c", child], check=True,
                                 capture_output=True, text=True).stdout  # fmt: skip
            times[r] += [float(t) for t in out.split()]
    for r, ts in times.items():
        print(f"{r}: " + " ".join(f"{t:.2f}" for t in ts) + f" s; median {np.median(ts):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
