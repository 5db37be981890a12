"""How much SURE the local adaptation in time gains on development series, against what it does
to the error -- the evidence for the rule of ``projection_local.fit_local``.

For every development denoising cell (the real channels of ``autofit_heldout.py``, seed 0; the
synthetic series of ``bench_autofit.py``, seeds 1 and 2; 0, 10 and 20 dB) it fits
``ProjectionFilter(causal=False, local_window=101)`` (always adapting), and prints the SURE the
adaptation gains on the fit block, in units of the noise variance -- as ``fit`` computes it,
with the weights' own divergence, and with the weights taken as fixed -- next to the RMSE
ratio adapted / not adapted on the test part and on the whole series. Then, for a few margins,
the geometric mean and worst ratio if the adaptation were kept only above that gain. The
benchmark's own series (its test cells) are left out.

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
from tssdpa.filters.projection_local import (  # noqa: E402
    fit_local,
    output_divergence,
    weights_divergence,
)

MARGINS = (0.0, 0.01, 0.02, 0.03)


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
        f = ProjectionFilter(causal=False, local_window=101).fit(noisy)
        adapted = np.asarray(f.filter(noisy))
        local, f.local_ = f.local_, None
        plain = np.asarray(f.filter(noisy))
        _, (sure_plain, sure_local) = fit_local(
            f, noisy[: f.max_fit_samples, None], None, f.noise_level_
        )
        f.local_ = local
        xs = noisy[: f.max_fit_samples, None]
        y, div = output_divergence(f, xs, None, f.noise_level_)
        wdiv = weights_divergence(xs, y, div, f.noise_level_, (101,))[0]
        s2 = float(np.mean(f.noise_level_**2))
        rows.append({
            "series": name, "seed": seed, "snr": snr,
            "gain": (sure_plain - sure_local) / s2,  # what fit() uses
            "gain_fixed": (sure_plain - sure_local) / s2 + 2 * float(wdiv[0]),
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
    print("series seed dB | SURE gain / s^2: as fit() computes it, with the weights fixed | "
          "RMSE adapted / not: test, whole series")  # fmt: skip
    for r in rows:
        print(f"{r['series']:>20} {r['seed']} {r['snr']:>3g} | {r['gain']:+.4f} "
              f"{r['gain_fixed']:+.4f} | {r['test']:.3f} {r['whole']:.3f}")  # fmt: skip
    for margin in MARGINS:
        for group, real in (("real", True), ("synthetic", False)):
            picked = [r for r in rows if (r["seed"] == 0) == real]
            for gain in ("gain", "gain_fixed"):
                for part in ("test", "whole"):
                    v = [r[part] if r[gain] > margin else 1.0 for r in picked]
                    print(f"margin {margin:.2f} on {gain:>9} {group:>9} {part:>5}: geometric "
                          f"mean {np.exp(np.mean(np.log(v))):.3f}, worst {max(v):.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
