"""Where the default noise level's extrapolation (SIMEX) acts, and what it does there.

``tssdpa.estimators.white_noise.noise_level`` replaces its neighbour bound, where that bound is
below every interpolator's by more than ``NEAR_MIN``, with the bound extrapolated to no
noise in the neighbours' context (``white_noise._extrapolated_level``) where that is lower.
For every cell below where the level changes this prints the level before (the extrapolation
switched off, the default before 2026-12-06) and after, over the noise added, and the RMSE of
``ProjectionFilter(causal=False)`` fitted by default over the same fit before, on the test
part (the recordings: the whole stretch, against the recording). Then, per set: the cells
changed, the geometric mean of those RMSE ratios and the cells made worse (the largest), and
the levels after below 0.95 of the noise added.

Sets (``--set``), as in ``checked_floor_probe.py``:

* ``cells``: every series of ``bench_autofit.py`` (the unseen systems and the held-out real
  channels included) at the benchmark's SNRs, Gaussian and Student-t noise, synthetic seeds
  0-5, real series once;
* ``recordings``: the stretches of ``noise_level_probe.py --scan`` (both IMU recordings,
  ETTh1, ETTh2, ETTm1; 1,500 and 3,000 samples), 10 and 20 dB.

    .venv/bin/python experiments/extrapolated_noise_probe.py --set cells --data-dir DATA
    .venv/bin/python experiments/extrapolated_noise_probe.py --set recordings --data-dir DATA
"""

from __future__ import annotations

import argparse
import math
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import checked_floor_probe as floor_probe  # noqa: E402 -- registers the unseen series

from tssdpa.estimators import white_noise  # noqa: E402


@contextmanager
def not_extrapolated():
    """The default noise level as it was before the extrapolation (``min(level, inf)``: the
    level of the bounds, as ``noise_level(x, extrapolated=False)``)."""
    original = white_noise._extrapolated_level
    white_noise._extrapolated_level = lambda v, m, k, residual: math.inf
    try:
        yield
    finally:
        white_noise._extrapolated_level = original


def level(noisy: np.ndarray) -> float:
    return float(white_noise.noise_level(noisy[:, None])[0])


def cell(label: str, noisy: np.ndarray, clean: np.ndarray, part: slice, out: list) -> None:
    """One cell's line where the level changes; appends ``(rmse ratio, level / noise added)``
    to ``out``: the default's RMSE over the fit's without the extrapolation."""
    true = float(np.std(noisy - clean))
    after = level(noisy)
    with not_extrapolated():
        before = level(noisy)
        if after == before:
            return
        rmse_before = floor_probe.fit_rmse(noisy, clean, part)
    ratio = floor_probe.fit_rmse(noisy, clean, part) / rmse_before
    out.append((ratio, after / true))
    print(f"{label:36s} level {before / true:.3f} -> {after / true:.3f}  RMSE over before "
          f"{ratio:.3f}", flush=True)  # fmt: skip


def summary(rows: list, n_cells: int) -> None:
    ratios = [r for r, _ in rows]
    print(
        f"{n_cells} cells; the level changed in {len(rows)}: RMSE over before, geometric mean "
        f"{floor_probe.geometric_mean(ratios):.3f}, worse in {sum(r > 1.0 for r in ratios)} "
        f"(largest {max(ratios, default=float('nan')):.3f}); level below 0.95 of the noise "
        f"added in {sum(lv < 0.95 for _, lv in rows)}"
    )


def run(cells) -> None:
    rows, n_cells = [], 0
    for args in cells:
        n_cells += 1
        cell(*args, rows)
    summary(rows, n_cells)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", choices=("cells", "recordings"), required=True)
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    if args.set == "cells":
        run(floor_probe.bench_cells(args.data_dir))
    else:
        run(floor_probe.recording_cells(args.data_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
