"""How much SURE the local adaptation in time gains on development series, against what it does
to the error -- the evidence for the rule of ``projection_local.fit_local``.

For every development denoising cell (the real channels of ``autofit_heldout.py``, seed 0; the
synthetic series of ``bench_autofit.py``, seeds 1 and 2; 0, 10 and 20 dB) it fits
``ProjectionFilter(causal=False, local_window=None)``, scores the adaptation over each width of
``projection_local.LOCAL_WIDTHS`` and adapts by force over the width whose SURE gain is
largest. It prints that gain on the fit block, in units of the noise variance -- as ``fit``
computes it, with the weights' own divergence, and with the weights taken as fixed (at the
same width) -- next to the RMSE ratio adapted / not adapted on the test part and on the whole
series. Then, for a few margins, the geometric mean and worst ratio if the adaptation were
kept only where that gain exceeds the margin (on the first gain this is ``fit``'s rule with
``LOCAL_MARGIN`` set to the margin). The benchmark's own series (its test cells) are left out.
Last, the same for the stationary two-tone sines of ``tests/filters/test_projection_local.py``.

Usage::

    .venv/bin/python experiments/local_margin_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402 -- registers the real development series
import bench_autofit as bench  # noqa: E402

from tssdpa.filters import ProjectionFilter  # noqa: E402
from tssdpa.filters.projection_local import LOCAL_WIDTHS, width_scores  # noqa: E402

MARGINS = (0.0, 0.0025, 0.005, 0.01, 0.02)


def _force(noisy):
    """Fit without the adaptation, then adapt over the width of LOCAL_WIDTHS whose SURE gain
    is largest: ``(width, gain, gain with the weights fixed, plain output, adapted output)``,
    the gains in units of the noise variance."""
    f = ProjectionFilter(causal=False, local_window=None).fit(noisy)
    plain = np.asarray(f.filter(noisy))
    xs, noise = noisy[: f.max_fit_samples, None], f.noise_level_
    div, before, after, wdiv, _ = width_scores(f, xs, None, noise, LOCAL_WIDTHS)
    gains = (before[0] - after[:, 0]) / float(np.mean(noise**2))  # what fit() uses
    i = int(np.argmax(gains))  # fit() keeps the width of the lowest score
    f.local_window = LOCAL_WIDTHS[i]
    f.local_ = {"window": LOCAL_WIDTHS[i], "divergence": div, "noise": list(map(float, noise)),
                "channels": [True]}  # fmt: skip
    adapted = np.asarray(f.filter(noisy))
    return LOCAL_WIDTHS[i], float(gains[i]), float(gains[i] + 2 * wdiv[i, 0]), plain, adapted


def _tones() -> None:
    """The noisy two-tone sines of ``test_a_stationary_signal_keeps_the_fitted_output``
    (stationary: the adaptation has nothing to gain there)."""
    t = np.arange(2000)
    for tones, seed in (((1.0, 0.0), 1), *(((1.0, 0.5), s) for s in (11, 12, 13, 14))):
        clean = tones[0] * np.sin(2 * np.pi * t / 50) + tones[1] * np.sin(2 * np.pi * t / 17)
        noisy = clean + 0.3 * np.random.default_rng(seed).normal(size=t.size)
        width, gain, _, plain, adapted = _force(noisy)
        ratio = bench.rmse(adapted, clean)[0] / bench.rmse(plain, clean)[0]
        print(f"two-tone sine {tones} seed {seed}: width {width}, SURE gain {gain:+.4f}, RMSE "
              f"adapted / not {ratio:.3f}")  # fmt: skip


def _unit(args) -> list:
    name, seed, data_dir = args
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # two processes side by side, one BLAS thread each
    try:
        z, sp = bench.split_series(name, seed, 2000, 3000, data_dir)
    except bench.Skip:
        return []
    test, rows = slice(sp.val, sp.test), []
    for k, snr in enumerate(bench.SNRS):
        noisy = bench.add_noise(z, "gaussian", snr, seed=1000 * seed + k)
        width, gain, gain_fixed, plain, adapted = _force(noisy)
        rows.append({
            "series": name, "seed": seed, "snr": snr, "width": width, "gain": gain,
            "gain_fixed": gain_fixed,
            "test": bench.rmse(adapted[test], z[test])[0] / bench.rmse(plain[test], z[test])[0],
            "whole": bench.rmse(adapted, z)[0] / bench.rmse(plain, z)[0],
        })  # fmt: skip
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default="../shared/datasets")
    args = p.parse_args(argv)
    synthetic = [n for n, v in bench.SERIES.items() if v[0] not in ("sunspots", "imu", "ett")]
    units = [(n, 0, args.data_dir) for n in autofit_heldout.HELDOUT]
    units += [(n, s, args.data_dir) for s in (1, 2) for n in synthetic]
    with ProcessPoolExecutor(2) as pool:
        rows = [r for rs in pool.map(_unit, units) for r in rs]
    rows.sort(key=lambda r: r["gain"])
    print("series seed dB width | SURE gain / s^2: as fit() computes it, with the weights fixed | "
          "RMSE adapted / not: test, whole series")  # fmt: skip
    for r in rows:
        print(f"{r['series']:>20} {r['seed']} {r['snr']:>3g} {r['width']} | {r['gain']:+.4f} "
              f"{r['gain_fixed']:+.4f} | {r['test']:.3f} {r['whole']:.3f}")  # fmt: skip
    for margin in MARGINS:
        for group, real in (("real", True), ("synthetic", False)):
            picked = [r for r in rows if (r["seed"] == 0) == real]
            for gain in ("gain", "gain_fixed"):
                for part in ("test", "whole"):
                    v = [r[part] if r[gain] > margin else 1.0 for r in picked]
                    print(f"margin {margin:.4f} on {gain:>9} {group:>9} {part:>5}: geometric "
                          f"mean {np.exp(np.mean(np.log(v))):.3f}, worst {max(v):.3f}")  # fmt: skip
    _tones()
    return 0


if __name__ == "__main__":
    sys.exit(main())
