"""A channel missing over a stretch beside channels that are known: how well the default fit
filters the known ones there. A sensor that starts late, or drops out for a while.

Until 2026-11-28's ninth session a key of the windowed filters needed every channel of its
sample, so where one channel was missing for longer than the window the others had no key:
they were held (causal) or interpolated (zero-phase), not filtered, and ``fit`` warned. Now a
key serves the channels it has (``tssdpa.signal.lags``). The script uses only the public API,
so it runs unchanged at an older commit for the figures before: ``git worktree add /tmp/old
92352b9``, copy this script into ``/tmp/old/experiments/`` and run it there with
``PYTHONPATH=/tmp/old`` (the editable install would import this checkout's tssdpa).

Signals (clean, then white noise at 10 dB of each channel's variance, seed ``1000 * seed``):
two sines (periods 100 and 70 samples, 2,000 samples), then those of
``channel_units_probe.py``: the three Lorenz-63 coordinates in units 1 / 0.001 / 50 (1,500
samples) and the gyroscope and accelerometer axes of the two IMU recordings (first 3,000
samples; ``--data-dir``, skipped where absent). Each channel in turn is made missing
(``late``: its first 40% of samples; ``dropout``: 30% in the middle), the default
``ProjectionFilter(causal=..., channel_independent=False).fit(x).filter(x)`` (the joint
fit, whose keys this probe is about) is run, and the RMSE of the *other* channels
over the stretch, against the clean signal over the added noise, is averaged (geometric mean
over channels and over the missing channel). ``no gap``: the same channels over the same
stretch with nothing missing.

    .venv/bin/python experiments/missing_channel_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from tssdpa.filters import ProjectionFilter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from channel_units_probe import signals as unit_signals  # noqa: E402 -- the same signals

GAPS = {"late": (0.0, 0.4), "dropout": (0.35, 0.65)}


def signals(data_dir: str):
    t = np.arange(2000)
    yield "sines", np.column_stack([np.sin(2 * np.pi * t / 100), np.cos(2 * np.pi * t / 70)])
    yield from unit_signals(data_dir)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")  # notes (before: of the missing stretch) are not scored
    print("RMSE / added noise of the known channels over the stretch where one is missing")
    print(f"{'signal':10s} {'gap':8s} {'fit':10s}  {'no gap':>8s}  {'with gap':>8s}")
    for name, clean in signals(args.data_dir):
        T, C = clean.shape
        rng = np.random.default_rng(1000 * args.seed)
        noise = clean.std(0) * 10 ** (-10 / 20)
        noisy = clean + noise * rng.normal(size=clean.shape)
        for gap, (a, b) in GAPS.items():
            stretch = slice(int(a * T), int(b * T))
            for causal in (True, False):
                whole = np.asarray(
                    ProjectionFilter(causal=causal, channel_independent=False)
                    .fit(noisy)
                    .filter(noisy)
                )
                logs = {"no gap": [], "with gap": []}
                for c in range(C):
                    x = noisy.copy()
                    x[stretch, c] = np.nan
                    y = np.asarray(
                        ProjectionFilter(causal=causal, channel_independent=False).fit(x).filter(x)
                    )
                    others = np.arange(C) != c
                    for key, out in (("no gap", whole), ("with gap", y)):
                        err = (out - clean)[stretch][:, others]
                        rmse = np.sqrt(np.mean(err**2, axis=0)) / noise[others]
                        logs[key].append(np.mean(np.log(rmse)))
                kind = "causal" if causal else "zero-phase"
                cells = "  ".join(f"{np.exp(np.mean(v)):8.3f}" for v in logs.values())
                print(f"{name:10s} {gap:8s} {kind:10s}  {cells}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
