"""Self-supervised denoising of channels recorded in different units: ``ProjectionFilter().fit(x)``
on a (T, C) recording whose channels are, say, a gyroscope in deg/s beside an accelerometer in g.

One kernel width cannot suit both: in the units of x the distances between patterns are the
gyroscope's alone. Since 2026-11-28 the fit divides each channel by its standard deviation over
their median before the kernel (``channel_scale="std"``, the default; ``tssdpa.filters.
channel_scale``); ``channel_scale=None`` compares the channels as they are, as before.

Signals, each in its own units:

* ``lorenz``: the three Lorenz-63 coordinates (1,500 samples, dt 0.02), z-scored and then
  multiplied by 1, 0.001 and 50 (deg/s, g, uT);
* ``imu_fusion`` / ``imu_gait``: the gyroscope (deg/s) and accelerometer (g) axes of the two
  IMU recordings (first 3,000 samples; ``--data-dir``, skipped where absent), taken as clean.
  Every fit also removes the recordings' own noise, which this measure counts as error: at 10
  and 20 dB that dominates the walking recording's figures (above 1 for every fit).

White noise is added to every channel at the SNR (0, 10, 20 dB of that channel's variance;
seed ``1000 * seed + k``). Printed per cell: the RMSE against the clean signal over the
added noise's standard deviation, the geometric mean over the channels (the worst channel in
brackets), causal and zero-phase, for four fits: the joint fit with the channels divided by
their standard deviations (now), as they are (before), divided by their noise levels
(``white_noise.noise_level``, the alternative not taken), and one fit per channel (each in its
own units, for reference).

Then ``reference``: why not the noise levels. A noisy sensor (two sines, noise 0.3, 1,500
samples) beside a clean reference (a slow cosine, noise 0 or 1e-4): the sensor channel's RMSE
over its noise, for the same four fits.

With ``--glitch``, instead: one glitch, a sample 300 standard deviations out, at sample 700 of
the fit block, added to each channel in turn of ``lorenz`` and ``imu_fusion`` and to three
single channels (Lorenz x, Mackey–Glass, the pulse train; 1,500 samples), at 10 dB. Printed:
the RMSE over the added noise more than 200 samples from the glitch, geometric mean over
channels and over the glitched channel, for the default fit without the glitch, with it as
before 2026-11-28's eighth session (the plain standard deviation as the channel scale, which
the glitch inflates, applied outside with ``channel_scale=None``; the glitch kept,
``glitches=None``), and with it now (the spread taken with the glitch clipped,
``channel_spread``; a zero-phase filter treats it as missing, ``tssdpa.estimators.glitches``).

    .venv/bin/python experiments/channel_units_probe.py --data-dir ../shared/datasets
    .venv/bin/python experiments/channel_units_probe.py --data-dir ../shared/datasets --glitch
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from tssdpa.data import load_imu
from tssdpa.data.synthetic import lorenz, make_signal
from tssdpa.estimators.white_noise import noise_level
from tssdpa.filters import ProjectionFilter

UNITS = np.array([1.0, 1e-3, 50.0])
SNRS = (0.0, 10.0, 20.0)


def imu_axes(name: str, data_dir: str | None, start: int = 0, n: int = 3000):
    """The gyroscope and accelerometer axes of an IMU recording, samples ``start`` to
    ``start + n``, or None (said) where the shared data are absent."""
    try:
        df = load_imu(name, data_dir)
    except (FileNotFoundError, OSError) as err:
        print(f"{name} skipped: {err}")
        return None
    cols = [c for c in df.columns if c.startswith(("Gyroscope", "Accelerometer"))]
    return df[cols].to_numpy(dtype=float)[start : start + n]


def signals(data_dir: str):
    clean = lorenz(1500, seed=0, component=None)
    yield "lorenz", (clean - clean.mean(0)) / clean.std(0) * UNITS
    for name in ("imu_fusion", "imu_gait"):
        x = imu_axes(name, data_dir)
        if x is not None:
            yield name, x


def fitted(x: np.ndarray, causal: bool, mode: str) -> np.ndarray:
    if mode == "per channel":
        return np.column_stack([ProjectionFilter(causal=causal).fit(x[:, c]).filter(x[:, c])
                                for c in range(x.shape[1])])  # fmt: skip
    if mode == "noise levels":  # the filter is equivariant to the scale: apply it outside
        u = noise_level(x[:4000])
        u = u / np.median(u)
        f = ProjectionFilter(causal=causal, channel_scale=None).fit(x / u)
        return np.asarray(f.filter(x / u)) * u
    scale = "std" if mode == "std" else None
    return np.asarray(ProjectionFilter(causal=causal, channel_scale=scale).fit(x).filter(x))


MODES = ("std", "as they are", "noise levels", "per channel")


def reference(seed: int) -> None:
    print("a noisy sensor beside a clean reference: the sensor's RMSE / its noise")
    print(f"{'reference noise':16s} {'fit':10s}  " + "  ".join(f"{m:>12s}" for m in MODES))
    t = np.arange(1500)
    signal = np.sin(2 * np.pi * t / 80) + 0.5 * np.sin(2 * np.pi * t / 23)
    for k, ref_noise in enumerate((0.0, 1e-4)):
        rng = np.random.default_rng(1000 * seed + k)
        ref = np.cos(2 * np.pi * t / 500) + ref_noise * rng.normal(size=t.size)
        x = np.column_stack([signal + 0.3 * rng.normal(size=t.size), ref])
        for causal in (True, False):
            errs = [np.sqrt(np.mean((fitted(x, causal, m)[:, 0] - signal) ** 2)) / 0.3
                    for m in MODES]  # fmt: skip
            kind = "causal" if causal else "zero-phase"
            print(f"{ref_noise:<16g} {kind:10s}  " + "  ".join(f"{e:12.3f}" for e in errs))


def glitch_signals(data_dir: str):
    """The multichannel signals of :func:`signals` but the walking IMU, then three single
    channels (z-scored, 1,500 samples, seed 0)."""
    for name, clean in signals(data_dir):
        if name != "imu_gait":
            yield name, clean
    for name in ("lorenz", "mackey_glass", "pulse_train"):
        x = np.asarray(make_signal(name, 1500, 0), dtype=float)
        yield name + " (1 ch)", ((x - x.mean()) / x.std())[:, None]


def glitch(data_dir: str, seed: int) -> None:
    print("one glitch of 300 standard deviations at 10 dB: RMSE / added noise more than 200"
          " samples from it, geometric mean over channels and glitched channels")  # fmt: skip
    print(f"{'signal':20s} {'fit':10s}  {'no glitch':>10s}  {'before':>10s}  {'now':>10s}")
    for name, clean in glitch_signals(data_dir):
        rng = np.random.default_rng(1000 * seed + 1)
        noise = clean.std(0) * 10 ** (-10 / 20)
        noisy = clean + noise * rng.normal(size=clean.shape)
        away = np.abs(np.arange(len(clean)) - 700) > 200

        def score(y, clean=clean, away=away, noise=noise):
            return np.mean(np.log(np.sqrt(np.mean((y - clean)[away] ** 2, axis=0)) / noise))

        for causal in (True, False):
            logs = {"no glitch": [score(fitted(noisy, causal, "std"))], "before": [], "now": []}
            for c in range(clean.shape[1]):
                x = noisy.copy()
                x[700, c] += 300 * noisy[:, c].std()
                # before: the plain standard deviation (the same filter as the default's with
                # its scale) and the glitch kept
                u = np.std(x[:4000], axis=0)
                u = u / np.median(u)
                kept = ProjectionFilter(causal=causal, channel_scale=None, glitches=None)
                logs["before"].append(score(np.asarray(kept.fit(x / u).filter(x / u)) * u))
                logs["now"].append(score(fitted(x, causal, "std")))
            kind = "causal" if causal else "zero-phase"
            cells = "  ".join(f"{np.exp(np.mean(v)):10.3f}" for v in logs.values())
            print(f"{name:20s} {kind:10s}  {cells}", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--glitch", action="store_true", help="the glitch probe only")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")  # held-readings notes: not this probe's subject
    if args.glitch:
        glitch(args.data_dir, args.seed)
        return 0
    print("RMSE / added noise, geometric mean over channels (worst channel); seconds")
    print(f"{'signal':10s} {'SNR':>4s} {'fit':10s}  " + "  ".join(f"{m:>20s}" for m in MODES))
    logs = {(kind, m): [] for kind in ("causal", "zero-phase") for m in MODES}
    for name, clean in signals(args.data_dir):
        for k, snr in enumerate(SNRS):
            rng = np.random.default_rng(1000 * args.seed + k)
            noise = clean.std(0) * 10 ** (-snr / 20)
            noisy = clean + noise * rng.normal(size=clean.shape)
            for causal in (True, False):
                cells = []
                for mode in MODES:
                    t0 = time.perf_counter()
                    y = fitted(noisy, causal, mode)
                    ratio = np.sqrt(np.mean((y - clean) ** 2, axis=0)) / noise
                    logs["causal" if causal else "zero-phase", mode].append(np.log(ratio))
                    cells.append(f"{np.exp(np.mean(np.log(ratio))):.3f} ({ratio.max():.2f}) "
                                 f"{time.perf_counter() - t0:4.1f}s")  # fmt: skip
                kind = "causal" if causal else "zero-phase"
                print(f"{name:10s} {snr:4.0f} {kind:10s}  " + "  ".join(f"{c:>20s}" for c in cells),
                      flush=True)  # fmt: skip
    every = {m: np.concatenate([a for (_, mode), v in logs.items() if mode == m for a in v])
             for m in MODES}  # fmt: skip
    print("geometric mean over every channel of every cell: " + ", ".join(
        f"{m} {np.exp(np.mean(v)):.3f}" for m, v in every.items()))  # fmt: skip
    for kind in ("causal", "zero-phase"):
        means = [np.exp(np.mean(np.concatenate(logs[kind, m]))) for m in MODES]
        print(f"  {kind} fits alone: " + ", ".join(f"{m} {v:.3f}" for m, v in zip(MODES, means)))
    reference(args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
