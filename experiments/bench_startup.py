"""How long a user waits before anything happens: the start of ``import tssdpa`` and of the
``tssdpa`` command, each in a fresh interpreter (as a user meets them), median of repeats.

Cases: ``import tssdpa``; ``import tssdpa`` and ``tssdpa.ProjectionFilter``; a robot's node:
``ProjectionFilter.load`` of a fitted causal filter and the filtering of 20 samples through it;
``tssdpa --help``; ``tssdpa filter`` on a 600-sample noisy sine (the default zero-phase fit
included). Run it on
two checkouts side by side to compare them (``PYTHONPATH`` picks the one imported)::

    .venv/bin/python experiments/bench_startup.py --repeats 5
    PYTHONPATH=/tmp/before .venv/bin/python experiments/bench_startup.py --repeats 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _seconds(argv, cwd, env) -> float:
    tic = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - tic


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    env = dict(os.environ)
    root = env.get("PYTHONPATH") or str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        t = np.arange(600)
        x = np.sin(2 * np.pi * t / 60) + 0.3 * np.random.default_rng(0).normal(size=t.size)
        np.savetxt(Path(tmp) / "sine.csv", x[:, None], delimiter=",", header="x", comments="")
        saved = Path(tmp) / "causal"
        fit_and_save = (
            f"from tssdpa import ProjectionFilter as P; import numpy as np; "
            f"P().fit(np.loadtxt('sine.csv', skiprows=1)).save({str(saved)!r})"
        )
        subprocess.run([py, "-c", fit_and_save], cwd=tmp, env=env, check=True)
        node = (
            f"import numpy as np; from tssdpa import ProjectionFilter as P; "
            f"f = P.load({str(saved)!r}); f.filter(np.ones(20), zi=f.initial_state())"
        )
        cases = {
            "import tssdpa": [py, "-c", "import tssdpa"],
            "import tssdpa; tssdpa.ProjectionFilter": [
                py, "-c", "import tssdpa; tssdpa.ProjectionFilter"],
            "load a causal filter, filter 20 samples": [py, "-c", node],
            "tssdpa --help": [py, "-m", "tssdpa.cli", "--help"],
            "tssdpa filter sine.csv (600 samples)": [
                py, "-m", "tssdpa.cli", "filter", "sine.csv", "--out", "out.csv"],
        }  # fmt: skip
        print(f"checkout: {root}; median of {args.repeats} fresh interpreters")
        for label, cmd in cases.items():
            times = [_seconds(cmd, tmp, env) for _ in range(args.repeats)]
            print(f"{label:42s} {statistics.median(times):6.2f} s "
                  f"(min {min(times):.2f}, max {max(times):.2f})", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
