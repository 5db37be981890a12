"""Self-supervised denoising of quantised recordings: ``ProjectionFilter().fit(x)`` where x
takes values on a grid (an ADC's counts, a logger keeping few decimals); with ``--held``, of
recordings whose readings are held between samples instead (a slower sensor, forward-filled).

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

``--held``: each noisy signal (noise 0.1 and 0.3) is sampled every ``k``-th sample and each
reading held for ``k`` samples (k = 2, 3, 4); printed: the RMSE of the recording, of the
zero-phase fit on it as it is (``fit`` warns: ``selection.repeating_channels``),
with the repeats marked missing (NaN), and of the distinct readings filtered as a series of
their own, each then held again as recorded (since 2026-11-28 the noise level of a held
channel is measured on the samples that change; before, on all of them). Then the fusion IMU
recording's magnetometer (``--data-dir``, skipped where absent), which is held so: its noise
level and how much the fit changes it, as held and with the repeats missing.

    .venv/bin/python experiments/quantised_probe.py --held --data-dir ../shared/datasets

``--plateau``: a sine of amplitude 1.5 with noise 0.3 clipped at +-1, and a sine with noise
0.3 idle at exactly 0 half of the time: the RMSE of the recording and of the zero-phase fit,
as it is and with the true noise level given, against the clean (clipped / gated) signal.
Since 2026-11-28 the noise level of such a channel is measured on the samples that change.

    .venv/bin/python experiments/quantised_probe.py --plateau

``--exact``: series whose residuals are exactly 0 at most samples (a staircase, 0/1 pulses,
set-points, slow sines rounded to integers with noise well below the step): their noise
level and what the zero-phase fit changes (since 2026-12-05 such a series keeps a level far
below its values and comes back as it was; before, the level was a tenth of its spread).

    .venv/bin/python experiments/quantised_probe.py --exact

``--bench-cells``: whether either change touches the benchmarks' denoising cells: for every
series of ``bench_autofit.py``, ``autofit_heldout.py`` and ``autofit_unseen.py`` (seeds 0-2,
0 / 10 / 20 dB, their noise seeds), whether the noisy series has a repeating channel or a
step whose floor is above the grid's smallest width (embedding 1), and whether it has a
glitch (``tssdpa.estimators.glitches``, which a zero-phase filter would treat as missing).

    .venv/bin/python experiments/quantised_probe.py --bench-cells --data-dir ../shared/datasets

``--ett``: the ETT columns as recorded (first 3,000 samples, no noise added), each stored on a
grid: its step, the estimated noise level, and the RMS change the zero-phase fit makes with
the floor and without it.

    .venv/bin/python experiments/quantised_probe.py --ett --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from tssdpa.data import add_noise, load_ett, load_imu
from tssdpa.data.synthetic import make_signal
from tssdpa.estimators.glitches import glitch_mask
from tssdpa.estimators.selection import repeating_channels, resolution
from tssdpa.estimators.white_noise import noise_level
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


def repeats_missing(x: np.ndarray) -> np.ndarray:
    """``x`` with every sample equal to the one before set to NaN."""
    out = np.array(x, dtype=float)
    out[1:][x[1:] == x[:-1]] = np.nan
    return out


def readings_filtered(x: np.ndarray) -> np.ndarray:
    """The distinct readings of ``x`` (each sample that differs from the one before) filtered
    as a series of their own, each held again as in ``x``."""
    new = np.r_[True, x[1:] != x[:-1]]
    return zero_phase(x[new])[1][np.cumsum(new) - 1]


def zero_phase(x: np.ndarray):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the held-samples warning: what is measured here
        f = ProjectionFilter(causal=False).fit(x)
    return f, np.asarray(f.filter(x))


def held(n: int, seed: int, data_dir: str) -> None:
    print(f"RMSE against the clean signal, readings held for k samples, seed {seed}")
    print("signal        noise  k  recorded  fit as held  repeats missing  readings filtered")
    for name in SIGNALS:
        for j, noise in enumerate(NOISES[1:]):
            for k in (2, 3, 4):
                clean = clean_signal(name, n * k, seed)
                rng = np.random.default_rng(1000 * seed + 10 * j + k)
                noisy = clean + noise * rng.normal(size=clean.size)
                recorded = np.repeat(noisy[::k], k)[: clean.size]
                gaps = zero_phase(repeats_missing(recorded))[1]
                outputs = (recorded, zero_phase(recorded)[1], gaps, readings_filtered(recorded))
                errs = [np.sqrt(np.mean((y - clean) ** 2)) for y in outputs]
                print(f"{name:13s} {noise:5.2f}  {k}  {errs[0]:8.4f}  {errs[1]:11.4f}  "
                      f"{errs[2]:15.4f}  {errs[3]:17.4f}", flush=True)  # fmt: skip
    try:
        df = load_imu("imu_fusion", data_dir)
    except (FileNotFoundError, OSError) as err:
        print(f"fusion recording skipped: {err}")
        return
    x = df.to_numpy(dtype=float)[:4000]
    found = repeating_channels(x)
    print("fusion recording, first 4,000 samples: noise level / RMS change of the fit")
    for c, (share, _) in found.items():
        col = x[:, c]
        (f, y), (g, z) = zero_phase(col), zero_phase(repeats_missing(col))
        print(f"{df.columns[c]}: {share:.0%} repeats; as held {f.noise_level_[0]:.4g} / "
              f"{np.std(y - col):.3g}, repeats missing {g.noise_level_[0]:.4g} / "
              f"{np.std(z - col):.3g}")  # fmt: skip


def plateau(seed: int) -> None:
    t = np.arange(2000)
    rng = np.random.default_rng(seed)
    wave = np.sin(2 * np.pi * t / 37)
    on = np.sin(t / 50) > 0
    cases = {
        "clipped": (np.clip(1.5 * wave + 0.3 * rng.normal(size=t.size), -1, 1),
                    np.clip(1.5 * wave, -1, 1)),
        "idle at 0": (np.where(on, wave + 0.3 * rng.normal(size=t.size), 0.0),
                      np.where(on, wave, 0.0)),
    }  # fmt: skip
    print(f"RMSE against the clean signal, seed {seed}: recorded | fit | fit, noise level given")
    for name, (x, clean) in cases.items():
        found = repeating_channels(x[:, None])
        errs = [np.sqrt(np.mean((x - clean) ** 2))]
        for level in (None, 0.3):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                y = ProjectionFilter(causal=False, noise_level=level).fit(x).filter(x)
            errs.append(np.sqrt(np.mean((np.asarray(y) - clean) ** 2)))
        print(f"{name}: {found}  {errs[0]:.4f} | {errs[1]:.4f} | {errs[2]:.4f}")


def bench_cells(data_dir: str, share: float) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import autofit_heldout  # noqa: F401 -- registers its channels in bench_autofit.SERIES
    import autofit_unseen  # noqa: F401 -- registers its systems in bench_autofit.SERIES
    import bench_autofit as bench

    cells, touched, glitched = 0, [], []
    for name in bench.SERIES:
        for seed in (0, 1, 2):
            try:
                z, _ = bench.split_series(name, seed, 2000, 3000, data_dir)
            except bench.Skip:
                continue
            for k, snr in enumerate(bench.SNRS):
                noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + k)[:, None]
                cells += 1
                floor = share * resolution(noisy)[0]
                if repeating_channels(noisy) or floor > 0.25 * noise_level(noisy)[0]:
                    touched.append(f"{name} seed {seed} {snr:g} dB")
                if glitch_mask(noisy).any():
                    glitched.append(f"{name} seed {seed} {snr:g} dB")
    print(f"{cells} denoising cells; touched by the floor or the repeat check: {len(touched)}"
          + (": " + ", ".join(touched) if touched else ""))  # fmt: skip
    print(f"with a glitch: {len(glitched)}" + (": " + ", ".join(glitched) if glitched else ""))


def ett(data_dir: str, share: float) -> None:
    print(f"ETT columns as recorded, first 3,000 samples: RMS change of the zero-phase fit with "
          f"the floor ({share:g} of a step) and without")  # fmt: skip
    print("dataset column  step  noise level  change (floor)  change (none)")
    for name in ("ETTh1", "ETTh2", "ETTm1", "ETTm2"):
        try:
            df = load_ett(name, data_dir)
        except (FileNotFoundError, OSError) as err:
            print(f"{name} skipped: {err}")
            continue
        for col in df.columns:
            v = df[col].to_numpy(dtype=float)[:3000]
            changes = []
            for floor in (share, 0.0):
                projection_fit.RESOLUTION_SHARE = floor
                f, y = zero_phase(v)
                changes.append(float(np.std(y - v)))
            print(f"{name} {col:5s} {resolution(v[:, None])[0]:.4g}  {f.noise_level_[0]:.4g}  "
                  f"{changes[0]:.4g}  {changes[1]:.4g}", flush=True)  # fmt: skip


def exact_series(seed: int) -> None:
    """``--exact``: series whose residual bounds are all 0 (exact at most samples): each
    one's noise level and the zero-phase fit's largest and RMS change, and for the rounded
    sines the RMSE against the sine of the recording, of the fit and of the fit given
    ``noise_level=1/sqrt(12)`` (rounding to integers: uniform error of a unit step)."""
    t = np.arange(2000)
    rng = np.random.default_rng(seed)
    series = {"staircase floor(t/37)": (np.floor(t / 37.0), None),
              "the same x10": (10 * np.floor(t / 37.0), None),
              "0/1 pulses (5 of 50)": ((t % 50 < 5).astype(float), None),
              "set-points (60 each)": (np.repeat(rng.normal(size=t.size // 60 + 1), 60)[: t.size],
                                       None)}  # fmt: skip
    for amp, sd in ((5, 0.05), (20, 0.1)):
        sine = amp * np.sin(t / 200.0)
        series[f"round({amp} sin + {sd:g} noise)"] = (np.round(sine + sd * rng.normal(size=t.size)),
                                                     sine)  # fmt: skip
    print(f"{'series':28s} level      max change  RMS change  RMSE: recorded / fit / told")
    for name, (x, clean) in series.items():
        f, y = zero_phase(x)
        err = ""
        if clean is not None:  # and told the grid's rounding error: step / sqrt(12), step 1
            told = ProjectionFilter(causal=False, noise_level=1 / np.sqrt(12)).fit(x).filter(x)
            err = " / ".join(f"{np.sqrt(np.mean((np.asarray(v) - clean) ** 2)):.3f}"
                             for v in (x, y, told))  # fmt: skip
        print(f"{name:28s} {f.noise_level_[0]:.3g}  {np.max(np.abs(y - x)):10.3g}  "
              f"{np.sqrt(np.mean((y - x) ** 2)):10.3g}  {err}", flush=True)  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--share", type=float, default=projection_fit.RESOLUTION_SHARE,
                   help="the kernel's floor in steps (0: none, as before 2026-11-28)")  # fmt: skip
    p.add_argument("--n", type=int, default=1500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--held", action="store_true", help="held readings instead (see above)")
    p.add_argument("--ett", action="store_true", help="the ETT columns as recorded (see above)")
    p.add_argument("--plateau", action="store_true", help="clipped and idle signals (see above)")
    p.add_argument("--bench-cells", action="store_true", help="the benchmarks' cells (see above)")
    p.add_argument("--exact", action="store_true", help="series exact at most samples (above)")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    if args.exact:
        exact_series(args.seed)
        return 0
    if args.held:
        held(args.n, args.seed, args.data_dir)
        return 0
    if args.bench_cells:
        bench_cells(args.data_dir, args.share)
        return 0
    if args.plateau:
        plateau(args.seed)
        return 0
    if args.ett:
        ett(args.data_dir, args.share)
        return 0
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
