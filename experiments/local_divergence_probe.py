"""What if the local adaptation knew the unadapted output's ``dy_t/dx_t`` sample by sample?

:mod:`tssdpa.filters.projection_local` scores the filter's own output in each window with one
``dy_t/dx_t`` for the whole fit block (its mean), and ``channels_alone_probe.py --adaptation``
found it far from constant on the fusion IMU (lower where the adaptation hands the output to
the low-passes). This rebuilds the adaptation (its candidates, window, channels and temperature
as fitted) twice from the unadapted output: with that constant (it must give the fitted output:
the column "constant" checks the rebuild) and with the divergence probed per sample (8 random
+-1 probes of the fitted filter, step 1e-3 of the noise level). Measure: mean over the channels
of the squared error against the clean signal over the added noise's variance, on the whole
series (the fit block). Zero-phase default fits, joint (``channel_independent=False``), on the
Lorenz coordinates and the two IMU recordings (``channel_units_probe.signals``; "1ch" its first
channel alone, "all" every channel), white noise at 0 / 10 / 20 dB; cells where the fit keeps
no adaptation are left out. Not what ``fit`` does: 8 probes cost 8 more filter passes, at fit
and at ``filter`` time.

    .venv/bin/python experiments/local_divergence_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from channel_units_probe import SNRS, signals  # noqa: E402

import tssdpa.filters.projection_local as local  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402
from tssdpa.filters.projection_divergence import lowpass_diagonal  # noqa: E402
from tssdpa.signal.lowpass import zero_phase_lowpass  # noqa: E402

PROBES = 8


def adapted(x, y, divergence, noise, width, channels):
    """The adaptation of ``y`` (T, C) on ``x``, the own output's ``dy_t/dx_t`` (T, C) given."""
    out = y.copy()
    ladder = local._LADDER
    for c in np.flatnonzero(channels):
        Y = np.stack([y[:, c]] + [zero_phase_lowpass(x[:, [c]], **p)[:, 0] for p in ladder])
        diag = [lowpass_diagonal(p["cutoff"], p["order"]) for p in ladder]
        D = np.stack([divergence[:, c]] + [np.full(len(x), d) for d in diag])
        s2 = noise[c] ** 2
        r = (Y - x[:, c]) ** 2 - s2 + 2 * s2 * D
        K, n = r.shape
        sums = np.concatenate([np.zeros((K, 1)), np.cumsum(r, axis=1)], axis=1)
        lo = np.clip(np.arange(n) - width // 2, 0, n)
        hi = np.clip(np.arange(n) + width // 2 + 1, 0, n)
        mean = (sums[:, hi] - sums[:, lo]) / (hi - lo)
        w = np.exp(-(hi - lo) * (mean - mean.min(axis=0)) / (local.LOCAL_TEMPERATURE * s2))
        out[:, c] = (w / w.sum(axis=0) * Y).sum(axis=0)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    print("squared error over the noise variance, mean over the channels")
    for name, clean in signals(args.data_dir):
        for k, snr in enumerate(SNRS):
            rng = np.random.default_rng(1000 * args.seed + k)
            noise = clean.std(0) * 10 ** (-snr / 20)
            noisy = clean + noise * rng.normal(size=clean.shape)
            for cols in ([0], list(range(clean.shape[1]))):
                x, truth, level = noisy[:, cols], clean[:, cols], noise[cols]
                f = ProjectionFilter(causal=False, channel_independent=False).fit(x)
                if not f.local_:
                    continue
                fitted = np.asarray(f.filter(x)).reshape(x.shape)
                loc, f.local_ = f.local_, None
                y = np.asarray(f.filter(x)).reshape(x.shape)
                s = f.noise_level_
                d = np.zeros(x.shape)
                for j in range(PROBES):
                    probe = np.random.default_rng(100 + j).choice([-1.0, 1.0], x.shape)
                    moved = np.asarray(f.filter(x + 1e-3 * s * probe)).reshape(x.shape)
                    d += probe * (moved - y) / (1e-3 * s) / PROBES
                args_ = (s, loc["window"], np.asarray(loc["channels"]))
                constant = adapted(x, y, np.full(x.shape, loc["divergence"]), *args_)
                probed = adapted(x, y, d, *args_)

                def error(z, truth=truth, level=level):
                    return float(np.mean(np.mean((z - truth) ** 2, axis=0) / level**2))

                kind = "1ch" if len(cols) == 1 else "all"
                print(f"{name:10s} {snr:4.0f} {kind:3s}  without {error(y):.4f}  fitted "
                      f"{error(fitted):.4f}  constant {error(constant):.4f}  probed "
                      f"{error(probed):.4f}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
