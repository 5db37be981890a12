"""Why two self-supervised denoising cells of ``bench_autofit.py`` stay behind the oracle
smoothers, and one causal multichannel case (the figures of stop 67's note on issue 10).

* ``ar2`` at 20 dB (and Sunspots, Ikeda at 20 dB): the estimated noise level against the
  true one, and the zero-phase Butterworth cut-off SURE picks with each, with its RMSE
  against the clean series over the whole series.
* ``imu_fusion_gz`` at 0 dB (``--data-dir``): the default fit's RMSE on train / validation /
  test against centred moving averages of several widths, and with ``local_window`` fixed.
* a causal joint fit of a noisy sine beside a clean 0/1 flag: the sine's RMSE against it
  fitted alone, and the largest change made to the flag.

    .venv/bin/python experiments/denoise_misses_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_autofit as bench  # noqa: E402

from tssdpa import ProjectionFilter  # noqa: E402
from tssdpa.baselines import MovingAverageFilter  # noqa: E402
from tssdpa.data.noise import add_noise  # noqa: E402
from tssdpa.signal.lowpass import LOWPASS_CUTOFFS, zero_phase_lowpass  # noqa: E402


def rmse(a, b) -> float:
    return float(np.sqrt(np.mean((np.asarray(a) - b) ** 2)))


def sure_cutoff(x, z, level):
    """The (cutoff, order) of the lowest SURE with noise ``level``, and its RMSE against z."""
    rng, eps, best = np.random.default_rng(0), 1e-4, None
    probe = rng.choice([-1.0, 1.0], x.shape)
    for c in LOWPASS_CUTOFFS:
        for o in (2, 4):
            y = zero_phase_lowpass(x, cutoff=c, order=o)
            div = np.sum((zero_phase_lowpass(x + eps * probe, cutoff=c, order=o) - y) * probe) / eps
            score = np.mean((y - x) ** 2) - level**2 + 2 * level**2 * div / x.size
            if best is None or score < best[0]:
                best = (score, c, o, rmse(y[:, 0], z))
    return best[1:]


def rough(data_dir) -> None:
    print("20 dB: noise level estimated / true; SURE's Butterworth (cutoff, order, RMSE) with each")
    for name in ("ar2", "sunspots", "ikeda"):
        z, _ = bench.split_series(name, 0, 2000, 3000, data_dir)
        noisy = add_noise(z, bench.NOISE, 20.0, seed=2)
        est = ProjectionFilter(causal=False).fit(noisy).noise_level_[0]
        true = float(np.std(noisy - z))
        a, b = sure_cutoff(noisy[:, None], z, est), sure_cutoff(noisy[:, None], z, true)
        told = f"true: ({b[0]:.3g}, {b[1]}, {b[2]:.4f})  noisy RMSE {rmse(noisy, z):.4f}"
        print(
            f"{name:9s} {est:.3f} / {true:.3f}  estimated: ({a[0]:.3g}, {a[1]}, {a[2]:.4f})  "
            + told
        )


def fusion(data_dir) -> None:
    try:
        z, sp = bench.split_series("imu_fusion_gz", 0, 2000, 3000, data_dir)
    except bench.Skip as err:
        print(f"imu_fusion_gz skipped: {err}")
        return
    noisy = add_noise(z, bench.NOISE, 0.0, seed=0)
    parts = {"train": slice(0, sp.train), "val": slice(sp.train, sp.val),
             "test": slice(sp.val, sp.test)}  # fmt: skip

    def row(tag, y):
        print(f"{tag:24s} " + "  ".join(f"{k} {rmse(y[s], z[s]):.4f}" for k, s in parts.items()))

    print("imu_fusion_gz at 0 dB, RMSE against the recording by part")
    for lw in ("auto", 101, 201, 401):
        f = ProjectionFilter(causal=False, local_window=lw).fit(noisy)
        row(f"ours local_window={lw}", np.asarray(f.filter(noisy)))
    for w in (41, 81, 121, 161, 241):
        row(f"moving average {w}", np.asarray(MovingAverageFilter(window=w, causal=False)
                                              .fit(noisy).filter(noisy)))  # fmt: skip


def flag_beside_sine() -> None:
    rng, t = np.random.default_rng(0), np.arange(2000)
    clean = np.sin(2 * np.pi * t / 100)
    noisy, flag = clean + 0.3 * rng.normal(size=t.size), (t % 200 < 20).astype(float)
    joint = np.asarray(ProjectionFilter(causal=True).fit(np.c_[noisy, flag]).filter(
        np.c_[noisy, flag]))  # fmt: skip
    alone = np.asarray(ProjectionFilter(causal=True).fit(noisy).filter(noisy))
    print(f"causal, noisy sine beside a 0/1 flag: sine RMSE joint {rmse(joint[:, 0], clean):.4f}"
          f", alone {rmse(alone, clean):.4f}; largest change to the flag "
          f"{np.max(np.abs(joint[:, 1] - flag)):.4f}")  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    rough(args.data_dir)
    fusion(args.data_dir)
    flag_beside_sine()
    return 0


if __name__ == "__main__":
    sys.exit(main())
