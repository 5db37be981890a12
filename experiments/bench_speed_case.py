"""The speed case of ``bench_autofit.py`` timed at several checkouts, alternately (issue 10).

The benchmark times its speed case once (fit on 8,000 samples of Lorenz + forecasts of the
4,000 test origins at h = 5, on 2 cores); one run's timing noise on this machine is tens of
percent. This times the same work for each checkout given (a folder holding a ``tssdpa``
package: a worktree of another commit, or this one), in turn, ``--repeats`` times, each in a
fresh process, and prints the seconds -- a before / after comparison on one machine.

    git worktree add /tmp/old a644150
    .venv/bin/python experiments/bench_speed_case.py /tmp/old . --repeats 3
    .venv/bin/python experiments/bench_speed_case.py /tmp/old . --repeats 6 --fits 3
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
from tssdpa import ProjectionForecaster
from tssdpa.data.synthetic import make_signal
assert tssdpa.__file__.startswith({root!r}), tssdpa.__file__
n, n_test, h = 12000, 4000, 5
x = make_signal("lorenz", n, 0)
tr = n - n_test
z = (x - x[:tr].mean()) / x[:tr].std()
for _ in range({fits}):
    tic = time.perf_counter()
    fc = ProjectionForecaster(horizon=h).fit(z[:tr])
    pred = np.asarray(fc.forecast(z[tr - 64:], h))
    print(time.perf_counter() - tic)
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("roots", nargs="+", help="folders holding a tssdpa package")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--fits", type=int, default=1, help="fits timed in each process (the first "
                   "is cold: the later ones measure the search alone)")  # fmt: skip
    args = p.parse_args(argv)
    roots = [str(Path(r).resolve()) for r in args.roots]
    times: dict[str, list[float]] = {r: [] for r in roots}
    for _ in range(args.repeats):
        for r in roots:
            child = _CHILD.format(root=r, fits=args.fits)
            out = subprocess.run([sys.executable, "-c", child], check=True,
                                 capture_output=True, text=True).stdout  # fmt: skip
            times[r] += [float(t) for t in out.split()]
    for r, ts in times.items():
        print(f"{r}: " + " ".join(f"{t:.2f}" for t in ts) + f" s; median {np.median(ts):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
