"""Do two checkouts fit and forecast the same? A refactoring check of ProjectionForecaster.

For each checkout given (a folder holding a ``tssdpa`` package: a worktree of another commit,
or this one), in its own process: the default fit of four synthetic series (Lorenz h = 5,
Hénon h = 2, AR(2) h = 3, Mackey–Glass h = 10; 70% fitted), its chosen structure, its
forecasts of the whole series and its ``cv_results_`` MSEs. Prints, against the first
checkout, whether the choices and forecasts are identical and the largest relative
difference of each.

    git worktree add /tmp/old d9c19ed
    .venv/bin/python experiments/forecaster_equivalence.py /tmp/old .
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CASES = [("lorenz", 3000, 5), ("henon", 1500, 2), ("ar2", 1500, 3), ("mackey_glass", 2000, 10)]

_CHILD = """
import json, sys
sys.path.insert(0, {root!r})
import numpy as np
import tssdpa
from tssdpa import ProjectionForecaster
from tssdpa.data.synthetic import make_signal
assert tssdpa.__file__.startswith({root!r}), tssdpa.__file__
out, chosen = {{}}, {{}}
for name, n, h in {cases!r}:
    x = make_signal(name, n, 0)
    x = x[:, 0] if x.ndim > 1 else x
    tr = int(n * 0.7)
    z = (x - x[:tr].mean()) / x[:tr].std()
    fc = ProjectionForecaster(horizon=h).fit(z[:tr])
    out[name] = np.asarray(fc.forecast(z[tr - 64 :], h))
    out[name + "_cv"] = fc.cv_results_["mse"].to_numpy()
    chosen[name] = fc.best_params_[h]
np.savez({path!r}, **out)
print(json.dumps(chosen, default=str))
"""


def _relative(a, b) -> float:
    both = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return float("inf")
    return float(np.max(np.abs(a[both] - b[both]) / np.maximum(np.abs(a[both]), 1e-300)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("roots", nargs="+", help="folders holding a tssdpa package")
    args = p.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, r in enumerate(args.roots):
            root, path = str(Path(r).resolve()), str(Path(tmp) / f"{i}.npz")
            child = _CHILD.format(root=root, cases=CASES, path=path)
            out = subprocess.run([sys.executable, "-c", child], check=True,
                                 capture_output=True, text=True).stdout  # fmt: skip
            arrays = np.load(path)
            runs.append((root, json.loads(out.splitlines()[-1]), {k: arrays[k] for k in arrays}))
    ref_root, ref_chosen, ref = runs[0]
    for root, chosen, got in runs[1:]:
        print(f"{root} against {ref_root}:")
        for name, _, _ in CASES:
            same = "same" if chosen[name] == ref_chosen[name] else "DIFFERENT"
            print(f"  {name:13s} choice {same}; forecasts max rel. diff "
                  f"{_relative(ref[name], got[name]):.2g}; cv MSEs "
                  f"{_relative(ref[name + '_cv'], got[name + '_cv']):.2g}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
