"""Self-supervised denoising of quantised recordings: ``ProjectionFilter().fit(x)`` where x
takes values on a grid (an ADC's counts, a logger keeping few decimals).

A quantised series repeats its values exactly. A kernel much narrower than one step weighs only
a sample's exact repeats, so its output is the input, while SURE's divergence, taken by a
perturbation that splits the repeats, comes out small: SURE then scores the identity as a
near-perfect filter. Since 2026-11-28 the default sigma grid stops at half the step
(``tssdpa.filters.projection_fit.RESOLUTION_SHARE``); ``--share 0`` takes the floor away, as
before.

For each smooth signal (z-scored), white noise of standard deviation ``noise`` is added, then
the sum is rounded to a step of ``step`` (in units of that noise). Printed: the test-free
RMSE against the clean signal over the whole series, of the recording as it is, of the
zero-phase fit and of the causal fit, each fitted on the recording alone.

    .venv/bin/python experiments/quantised_probe.py
    .venv/bin/python experiments/quantised_probe.py --share 0
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from tssdpa.data.synthetic import make_signal
from tssdpa.filters import ProjectionFilter, projection_fit

SIGNALS = ("sine", "lorenz", "mackey_glass", "pulse_train")
NOISES = (0.05, 0.1, 0.3)  # standard deviation of the white noise, in signal units
STEPS = (0.5, 1.0, 2.0)  # the grid's step in units of that noise


def clean_signal(name: str, n: int, seed: int) -> np.ndarray:
    if name == "sine":
        x = np.sin(2 * np.pi * np.arange(n) / 37.0)
    else:
        x = np.asarray(make_signal(name, n=n, seed=seed), dtype=float)
        x = x if x.ndim == 1 else x[:, 0]
    return (x - x.mean()) / x.std()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--share", type=float, default=projection_fit.RESOLUTION_SHARE,
                   help="the kernel's floor in steps (0: none, as before 2026-11-28)")  # fmt: skip
    p.add_argument("--n", type=int, default=1500)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    projection_fit.RESOLUTION_SHARE = args.share
    print(f"RMSE against the clean signal (floor: {args.share:g} of a step), seed {args.seed}")
    print("signal        noise  step/noise  recorded  zero-phase  causal")
    ratios = {"zero-phase": [], "causal": []}
    for name in SIGNALS:
        clean = clean_signal(name, args.n, args.seed)
        for k, noise in enumerate(NOISES):
            rng = np.random.default_rng(1000 * args.seed + k)
            noisy = clean + noise * rng.normal(size=clean.size)
            for step in STEPS:
                q = step * noise
                recorded = np.round(noisy / q) * q
                base = np.sqrt(np.mean((recorded - clean) ** 2))
                row = []
                for tag, causal in (("zero-phase", False), ("causal", True)):
                    y = np.asarray(ProjectionFilter(causal=causal).fit(recorded).filter(recorded))
                    err = np.sqrt(np.mean((y - clean) ** 2))
                    ratios[tag].append(err / base)
                    row.append(err)
                print(f"{name:13s} {noise:5.2f}  {step:10.1f}  {base:8.4f}  {row[0]:10.4f}  "
                      f"{row[1]:6.4f}", flush=True)  # fmt: skip
    for tag, r in ratios.items():
        print(f"{tag}: RMSE over the recording's, geometric mean {np.exp(np.mean(np.log(r))):.3f},"
              f" worst {max(r):.3f}, best {min(r):.3f} ({len(r)} cells)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
