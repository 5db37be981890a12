"""How far the white-noise level that self-supervised denoising uses is from the truth, and
what the error costs.

``ProjectionFilter().fit(x)`` scores candidates by SURE with the noise level of
``tssdpa.estimators.white_noise.noise_level``; a level too high makes SURE favour filters that
smooth too much. For each development series (the synthetic ones of ``bench_autofit.py`` at
seeds 1-2, the real channels of ``autofit_heldout.py``) and each of the benchmark's SNRs, this
prints the estimated level over the standard deviation of the noise added (the benchmark's
noise seeds). On a real recording the ratio also counts the recording's own noise.

``--fit`` also fits ``ProjectionFilter(causal=False)`` on the whole noisy series three times:
with the default estimate, with ``noise_level="spectral"`` and with the true level given, and
prints each one's test RMSE over the noisy series' (below 1: better than leaving the signal
alone). Its default
series are the rough ones, whose own white innovations the estimate takes for noise: the
benchmark's AR(2), two systems of ``autofit_unseen.py`` and an AR(1) (coefficient 0.5)
generated here.

``--tails`` prints what sets ``tssdpa.estimators.noise_tails.HEAVY_TAILS``: for Gaussian and
Student-t noise (3 degrees of freedom) on the same series (``student_t`` at the same SNRs and
seeds) and on the synthetic tasks of the default comparison (``tssdpa.data.denoise_tasks``,
seeds 0-2, the whole series and its training part), the ratio of the level with its tails
(``noise_tails.rms_off_slopes``, where ``noise_level`` would consider it) to the robust level:
1 where it is not considered (the interpolators are not the tightest bounds, or the series is
too short), and the quantiles of the others; and how many levels are raised, with the
estimate over the true level of the noise added, robust only and as ``noise_level`` has it.

``--spectrum`` prints, per series and SNR, the estimate over the true level, the floor of the
Whittle AR(p) + noise fit over the true level without the conditions ``noise_level="spectral"``
puts on it (``linear_noise.whittle_floor``), and the periodogram's means over 8 equal bands of
frequency from 0 to Nyquist over the estimate squared: bands near 1 at the top mean the
spectrum is flat there at the estimated level, the signal's own white innovations
indistinguishable from the noise by any second-order statistic.

    .venv/bin/python experiments/noise_level_probe.py
    .venv/bin/python experiments/noise_level_probe.py --fit
    .venv/bin/python experiments/noise_level_probe.py --tails
    .venv/bin/python experiments/noise_level_probe.py --spectrum --series growth ar1 ar2

``--stretches`` prints, for each channel of the fusion IMU recording and stretches of it
(samples 0-1,500, 0-3,000, 4,000-7,000, 9,000-12,000; each z-scored), the default and the
spectral estimate over the true level at each SNR (noise seeds 0, 1, 2): where the spectral
option would go wrong on real recordings.

    .venv/bin/python experiments/noise_level_probe.py --stretches --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy.signal import lfilter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- registers its channels in bench_autofit.SERIES
import autofit_unseen  # noqa: E402 -- registers its systems in bench_autofit.SERIES
import bench_autofit as bench  # noqa: E402

from tssdpa.data import Split, add_noise  # noqa: E402
from tssdpa.data.tasks import denoise_tasks  # noqa: E402
from tssdpa.estimators import noise_tails  # noqa: E402
from tssdpa.estimators.linear_noise import periodogram, whittle_floor  # noqa: E402
from tssdpa.estimators.noise_tails import HEAVY_TAILS  # noqa: E402
from tssdpa.estimators.white_noise import noise_level  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402

SYNTHETIC = [
    n
    for n, spec in bench.SERIES.items()
    if spec[0] not in ("imu", "ett", "sunspots") and n not in autofit_unseen.UNSEEN
]
ROUGH = ["ar1", "ar2", "growth", "double_well"]


def series(name: str, seed: int, data_dir):
    """``(z, split)`` as the benchmark's; "ar1" is x_t = 0.5 x_(t-1) + e_t, 2000 samples."""
    if name != "ar1":
        return bench.split_series(name, seed, 2000, 3000, data_dir)
    z = lfilter([1.0], [1.0, -0.5], np.random.default_rng(seed).normal(size=2000))
    sp = Split.fractions(len(z), 0.6, 0.2)
    return (z - z[: sp.train].mean()) / z[: sp.train].std(), sp


def rmse_ratios(z, noisy, sp) -> list[float]:
    """Test RMSE of the fit with the default estimate, the spectral one and the true noise
    level, over the noisy series' test RMSE."""
    test = slice(sp.val, sp.test)
    base = np.sqrt(np.mean((noisy[test] - z[test]) ** 2))
    out = []
    for level in (None, "spectral", float(np.std(noisy - z))):
        y = ProjectionFilter(causal=False, noise_level=level).fit(noisy).filter(noisy)
        out.append(float(np.sqrt(np.mean((y[test] - z[test]) ** 2)) / base))
    return out


def tails_levels(x: np.ndarray, true: float) -> tuple[float, float, float]:
    """For the 1-D ``x`` with noise of standard deviation ``true``: the robust level and
    ``noise_level``'s over ``true``, and the level with its tails over the robust level (1
    where not considered): ``noise_level`` with ``HEAVY_TAILS`` out of reach (none raised),
    as it is, and at 0 (any tail level taken)."""
    try:
        noise_tails.HEAVY_TAILS = math.inf
        robust = noise_level(x[:, None])[0]
        noise_tails.HEAVY_TAILS = 0.0
        considered = noise_level(x[:, None])[0]
    finally:
        noise_tails.HEAVY_TAILS = HEAVY_TAILS
    level = noise_level(x[:, None])[0]
    return robust / true, level / true, considered / robust


def tails(names, data_dir) -> int:
    """The ``--tails`` report (see the module's docstring)."""
    rows = {"gaussian": [], "student_t": []}
    for ds in ("steps", "lorenz", "sinusoids", "ar2", "mackey_glass", "sunspots"):
        for task in denoise_tasks(ds, seeds=(0, 1, 2)):
            if task.noise in rows:
                for part in (slice(None), slice(0, task.split.train)):
                    x = task.noisy[part, 0]
                    true = float(np.std(x - task.clean[part, 0]))
                    rows[task.noise].append(tails_levels(x, true))
    for name in names:
        real = name in autofit_heldout.HELDOUT
        for seed in (0,) if real else (1, 2):
            try:
                z, _ = series(name, seed, data_dir)
            except bench.Skip:
                continue
            for k, snr in enumerate(bench.SNRS):
                for kind, out in rows.items():
                    x = add_noise(z, kind, snr, seed=1000 * seed + k)
                    out.append(tails_levels(x, float(np.std(x - z))))
    for kind, values in rows.items():
        v = np.array(values)
        v = v[np.isfinite(v).all(axis=1)]
        ratio = v[:, 2]
        considered = ratio[ratio != 1.0]
        q = np.quantile(considered, [0.0, 0.05, 0.1, 0.25, 0.5, 0.95, 1.0])
        print(
            f"{kind}: {len(v)} series, considered in {len(considered)}; tail level over robust "
            "level, quantiles 0 / 5 / 10 / 25 / 50 / 95 / 100%: "
            + " / ".join(f"{r:.3f}" for r in q)
        )
        raised = v[:, 1] != v[:, 0]
        print(
            f"  raised at HEAVY_TAILS = {HEAVY_TAILS:g}: {int(raised.sum())}; estimate over "
            "the true level, median (range), robust -> now: "
            f"{np.median(v[:, 0]):.3f} ({v[:, 0].min():.3f}-{v[:, 0].max():.3f}) -> "
            f"{np.median(v[:, 1]):.3f} ({v[:, 1].min():.3f}-{v[:, 1].max():.3f})"
        )
    return 0


def spectrum(name: str, z: np.ndarray, seed: int) -> None:
    """The ``--spectrum`` lines of one series (see the module's docstring)."""
    for k, snr in enumerate(bench.SNRS):
        noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + k)
        true = float(np.std(noisy - z))
        level = noise_level(noisy[:, None])[0]
        floor, _ = whittle_floor(noisy[:4000], level)  # noise_level's max_samples
        _, power, _ = periodogram(noisy[:4000])
        bands = [float(b.mean()) / level**2 for b in np.array_split(power, 8)]
        print(f"{name} {seed} {snr:g} dB: estimate {level / true:.3f}, Whittle floor "
              f"{floor / true:.3f}; bands / estimate^2 " + " ".join(f"{b:.2f}" for b in bands),
              flush=True)  # fmt: skip


def stretches(data_dir) -> int:
    """The ``--stretches`` report (see the module's docstring)."""
    df = bench.load_imu("imu_fusion", data_dir)
    print("channel start length: default / spectral estimate over the true level at "
          + " / ".join(f"{s:g}" for s in bench.SNRS) + " dB")  # fmt: skip
    for col in [c for c in df.columns if "(" in c]:  # the sensor channels, not the time
        for start, n in ((0, 1500), (0, 3000), (4000, 3000), (9000, 3000)):
            x = df[col].to_numpy(dtype=np.float64)[start : start + n]
            x = (x - x.mean()) / x.std()
            cells = []
            for k, snr in enumerate(bench.SNRS):
                noisy = add_noise(x, "gaussian", snr, seed=k)
                true = float(np.std(noisy - x))
                default = noise_level(noisy[:, None])[0] / true
                cells.append(
                    f"{default:.3f}/{noise_level(noisy[:, None], spectral=True)[0] / true:.3f}"
                )
            print(f"{col:22s} {start:5d} {n:5d}  " + "  ".join(cells), flush=True)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default="../shared/datasets")
    p.add_argument("--series", nargs="+", default=None)
    p.add_argument("--fit", action="store_true", help="also the fits' test RMSE (see above)")
    p.add_argument("--tails", action="store_true", help="the heavy-tails threshold's figures")
    p.add_argument("--spectrum", action="store_true", help="the spectra's floors and bands")
    p.add_argument("--stretches", action="store_true", help="the fusion IMU's stretches")
    args = p.parse_args(argv)
    if args.stretches:
        return stretches(args.data_dir)
    if args.tails:
        return tails(args.series or SYNTHETIC + list(autofit_heldout.HELDOUT), args.data_dir)
    names = args.series or (ROUGH if args.fit else SYNTHETIC + list(autofit_heldout.HELDOUT))
    snrs = " / ".join(f"{s:g}" for s in bench.SNRS)
    if not args.spectrum:
        print(f"series seed: estimated / true noise level at {snrs} dB")
    if args.fit:
        print("  then, per SNR, test RMSE over the noisy series': default | spectral | true level")
    for name in names:
        real = name in autofit_heldout.HELDOUT or bench.SERIES.get(name, ("",))[0] in (
            "imu", "ett", "sunspots")  # fmt: skip
        for seed in (0,) if real else (1, 2):
            try:
                z, sp = series(name, seed, args.data_dir)
            except bench.Skip:
                continue
            if args.spectrum:
                spectrum(name, z, seed)
                continue
            ratios, fits, spectral = [], [], []
            for k, snr in enumerate(bench.SNRS):
                noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + k)
                ratios.append(noise_level(noisy[:, None])[0] / np.std(noisy - z))
                spectral.append(noise_level(noisy[:, None], spectral=True)[0] / np.std(noisy - z))
                if args.fit:
                    fits.append("{:.3f} | {:.3f} | {:.3f}".format(*rmse_ratios(z, noisy, sp)))
            line = f"{name} {seed}: " + " / ".join(f"{r:.3f}" for r in ratios)
            if args.fit:
                line += " (spectral " + " / ".join(f"{r:.3f}" for r in spectral) + ")"
            print(line + ("" if not fits else "   " + " / ".join(fits)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
