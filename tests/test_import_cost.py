"""What a program pays to start: a robot's node that loads a fitted causal filter and streams
through it imports none of the heavy libraries the fitting uses (pandas, scipy.signal /
spatial / optimize, torch). Checked in a fresh interpreter, where nothing is loaded yet."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from tssdpa import ProjectionFilter

HEAVY = ("pandas", "scipy.signal", "scipy.spatial", "scipy.optimize", "scipy.ndimage", "torch")


def test_a_saved_causal_filter_loads_and_streams_without_the_fitting_libraries(tmp_path):
    x = np.sin(np.arange(300) / 10) + 0.3 * np.random.default_rng(0).normal(size=300)
    f = ProjectionFilter().fit(x)
    f.save(tmp_path / "node_filter")
    code = (
        "import sys, numpy as np; from tssdpa import ProjectionFilter; "
        f"f = ProjectionFilter.load({str(tmp_path / 'node_filter')!r}); "
        "y, zf = f.filter(np.ones(20), zi=f.initial_state()); "
        f"print(bool(np.isfinite(y).all()), [m for m in {HEAVY!r} if m in sys.modules])"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "True []"
