"""The zero-phase filter's local adaptation on a series longer than its fit block.

``ProjectionFilter(causal=False).fit(x)`` scores its candidates on the first
``max_fit_samples`` (4000) samples of ``x``, and a supervised fit on the part that has a
target; ``filter`` then runs on the whole series. The local adaptation weighs the filter's
output against low-passes by a sliding SURE that needs the output's mean ``dy_t/dx_t``. The
non-local filter's part of it -- the weight each sample keeps on itself -- falls as the series
grows (more patterns near each one), so since 2026-11-27 ``filter`` takes that part on the
series it filters (``local_["nonlocal_divergence"]``); before, the fit block's value held
everywhere, which overrates the filter's error and hands the low-passes too much.

For each series and SNR this prints the test RMSE against the clean signal with the
divergence taken on the series (as ``filter`` does now), with the fit block's
(``nonlocal_divergence`` None: what a file saved before that date does, and what every fit
did), and without the adaptation; cells whose filter has no non-local component or does not
adapt print the same three numbers.

* ``self``: ``fit(noisy)`` on a 12000-sample series (the first 4000 are the fit block), RMSE
  over the whole series.
* ``sup``: the benchmark's supervised cell on its 2000 / 3000 samples (fit on the first 60%
  with the clean target, filter the whole, RMSE on the last 20%), development seeds 1 and 2.

    .venv/bin/python experiments/long_series_probe.py --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402, F401 -- registers its channels in bench_autofit.SERIES
import bench_autofit as bench  # noqa: E402

from tssdpa.data import add_noise  # noqa: E402
from tssdpa.filters import ProjectionFilter  # noqa: E402

SELF_SERIES = ("lorenz", "rossler", "mackey_glass", "pulse_train", "lorenz96",
               "imu_fusion_gx", "imu_gait_gx", "etth2_ot")  # fmt: skip
SUP_SERIES = [n for n, s in bench.SERIES.items() if s[0] not in ("imu", "ett", "sunspots")]


def _three(f, noisy, clean, part):
    """Test RMSE with the divergence on the series, with the fit block's, unadapted."""
    out = []
    for mode in ("series", "block", "off"):
        g = copy.deepcopy(f)
        if g.local_ is not None and mode == "block":
            g.local_ = {**g.local_, "nonlocal_divergence": None}
        if mode == "off":
            g.local_ = None
        y = np.asarray(g.filter(noisy))
        out.append(float(np.sqrt(np.mean((y[part] - clean[part]) ** 2))))
    return out


def _line(tag, name, n, snr, r, f) -> float:
    nonlocal_ = any(c["window"] == "all" for c in (f.mixture_ or [f.best_params_]))
    print(f"{tag} {name} {n} {snr:g} dB: series {r[0]:.5f}  block {r[1]:.5f} "
          f"({r[0] / r[1]:.3f})  unadapted {r[2]:.5f}  adapts={f.local_ is not None} "
          f"non-local={nonlocal_}", flush=True)  # fmt: skip
    return r[0] / r[1]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--length", type=int, default=12000)
    args = p.parse_args(argv)
    ratios: dict[str, list[float]] = {"self": [], "sup": []}
    for name in SELF_SERIES:
        try:
            z, _ = bench.split_series(name, 1, args.length, args.length, args.data_dir)
        except bench.Skip as err:
            print(f"skipped: {err}")
            continue
        for k, snr in enumerate(bench.SNRS):
            noisy = add_noise(z, "gaussian", snr, seed=1000 + k)
            f = ProjectionFilter(causal=False).fit(noisy)
            r = _three(f, noisy, z, slice(None))
            ratios["self"].append(_line("self", name, len(z), snr, r, f))
    for name in SUP_SERIES:
        for seed in (1, 2):
            z, sp = bench.split_series(name, seed, 2000, 3000, args.data_dir)
            for k, snr in enumerate(bench.SNRS):
                noisy = add_noise(z, "gaussian", snr, seed=1000 * seed + k)
                f = ProjectionFilter(causal=False).fit(noisy[: sp.train], target=z[: sp.train])
                r = _three(f, noisy, z, slice(sp.val, sp.test))
                ratios["sup"].append(_line(f"sup seed={seed}", name, len(z), snr, r, f))
    for tag, v in ratios.items():
        if v:
            v = np.asarray(v)
            gm, better, worse = np.exp(np.log(v).mean()), (v < 0.99).sum(), (v > 1.01).sum()
            print(f"{tag}: series / block divergence, geometric mean {gm:.3f}, best "
                  f"{v.min():.3f}, worst {v.max():.3f}; better / worse by more than 1%: "
                  f"{better} / {worse} of {len(v)} cells")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
