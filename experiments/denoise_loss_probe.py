"""Two self-supervised denoising losses of docs/results/autofit.md, taken apart (benchmark
cells: for diagnosis, not for choosing anything).

``--cell fusion`` (IMU fusion gyroscope Z, 0 dB, seed 0): the noise level estimated and true,
and the test RMSE of ``ProjectionFilter(causal=False)`` with the local adaptation as ``fit``
decides it and forced over each width of LOCAL_WIDTHS, with the SURE figures ``fit(verbose)``
prints. ``--cell ar2`` (AR(2), 20 dB, seeds 0-2): the noise level estimate over the true one,
and a second bound tried: the mean periodogram of the differenced series over the top eighth
of frequencies, its gain divided out.

``--box`` runs ``local_margin_probe.py`` (the development cells) with centred moving averages
of 5-257 samples beside the Butterworth ladder among the local adaptation's candidates (a
patch of ``projection_local._candidates`` in this process): compare its tables with a plain
run of that script.

    .venv/bin/python experiments/denoise_loss_probe.py --cell fusion --data-dir ../shared/datasets
    .venv/bin/python experiments/denoise_loss_probe.py --cell ar2
    .venv/bin/python experiments/denoise_loss_probe.py --box --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as bench  # noqa: E402

from tssdpa.data import add_noise  # noqa: E402
from tssdpa.estimators.white_noise import noise_level  # noqa: E402
from tssdpa.filters import (
    ProjectionFilter,  # noqa: E402
    projection_local,  # noqa: E402
)

BOX_WIDTHS = (5, 9, 17, 33, 65, 129, 257)


def _cell(name, snr, seed, data_dir):
    z, sp = bench.split_series(name, seed, 2000, 3000, data_dir)
    noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + list(bench.SNRS).index(snr))
    return z, noisy, slice(sp.val, sp.test)


def fusion(data_dir) -> int:
    z, noisy, test = _cell("imu_fusion_gz", 0.0, 0, data_dir)
    print(f"noise level: estimated {noise_level(noisy[:, None])[0]:.4g}, "
          f"true {np.std(noisy - z):.4g}")  # fmt: skip
    for width in ("auto", *projection_local.LOCAL_WIDTHS):
        f = ProjectionFilter(causal=False, local_window=width).fit(noisy, verbose=True)
        y = np.asarray(f.filter(noisy))
        rmse = np.sqrt(np.mean((y[test] - z[test]) ** 2))
        print(f"local_window={width}: test RMSE {rmse:.4f}\n")
    return 0


def _top_band(v, share=0.125) -> float:
    d = np.diff(v - v.mean())
    f = np.fft.rfft(d)
    w = 2 * np.pi * np.arange(f.size) / d.size
    sel = (w >= np.pi * (1 - share)) & (w < np.pi)
    return float(np.sqrt(np.mean(np.abs(f[sel]) ** 2 / d.size / (2 - 2 * np.cos(w[sel])))))


def ar2() -> int:
    for seed in (0, 1, 2):
        z, noisy, _ = _cell("ar2", 20.0, seed, None)
        true = np.std(noisy - z)
        print(f"seed {seed}: estimate / true {noise_level(noisy[:, None])[0] / true:.3f}, "
              f"top band / true {_top_band(noisy) / true:.3f}")  # fmt: skip
    return 0


def _box(x, w):
    h, n = w // 2, x.size
    c = np.concatenate([[0.0], np.cumsum(x)])
    lo, hi = np.clip(np.arange(n) - h, 0, n), np.clip(np.arange(n) + h + 1, 0, n)
    return (c[hi] - c[lo]) / (hi - lo)


def box(data_dir) -> int:
    plain = projection_local._candidates

    def with_boxes(x, y, divergence):
        outs, divs = plain(x, y, divergence)
        if not np.isfinite(x).all():
            return outs, divs
        boxes = np.stack([_box(x, w) for w in BOX_WIDTHS])
        return np.concatenate([outs, boxes]), np.r_[divs, [1.0 / w for w in BOX_WIDTHS]]

    projection_local._candidates = with_boxes  # the probe's workers fork this process
    import local_margin_probe

    return local_margin_probe.main([] if data_dir is None else ["--data-dir", data_dir])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cell", choices=("fusion", "ar2"))
    p.add_argument("--box", action="store_true")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.box:
        return box(args.data_dir)
    return fusion(args.data_dir) if args.cell == "fusion" else ar2()


if __name__ == "__main__":
    raise SystemExit(main())
