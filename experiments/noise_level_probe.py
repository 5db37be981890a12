"""How far the white-noise level that self-supervised denoising uses is from the truth, and
what the error costs.

``ProjectionFilter().fit(x)`` scores candidates by SURE with the noise level of
``tssdpa.estimators.selection.noise_level``; a level too high makes SURE favour filters that
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

    .venv/bin/python experiments/noise_level_probe.py
    .venv/bin/python experiments/noise_level_probe.py --fit
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.signal import lfilter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- registers its channels in bench_autofit.SERIES
import autofit_unseen  # noqa: E402 -- registers its systems in bench_autofit.SERIES
import bench_autofit as bench  # noqa: E402

from tssdpa.data import Split, add_noise  # noqa: E402
from tssdpa.estimators.selection import noise_level  # noqa: E402
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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default="../shared/datasets")
    p.add_argument("--series", nargs="+", default=None)
    p.add_argument("--fit", action="store_true", help="also the fits' test RMSE (see above)")
    args = p.parse_args(argv)
    names = args.series or (ROUGH if args.fit else SYNTHETIC + list(autofit_heldout.HELDOUT))
    snrs = " / ".join(f"{s:g}" for s in bench.SNRS)
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
