"""What a longer ladder of neighbourhood sizes would do to the default forecaster (issue 10).

``ProjectionForecaster`` without ``n_neighbors`` scores k in ``(E + 1) x (1, 2, 4, 8)`` for an
embedding of E samples (24 at most for E = 2). On the third unseen suite's SETAR at h = 5 (a
stochastic threshold AR: 1.026 against S-map, a loss) the leave-one-out scores of the 12 best
candidates lay within 0.8% of each other, and S-map's theta 4 weighs every library point. This
fits the default and the default with the ladder ``(E + 1) x (1, 2, 4, 8, 16, 32)`` on the
benchmark's protocol (``bench_autofit.ours_forecast``: fit on train + validation, test RMSE) for
each series and horizon given, and prints both errors, their ratio and the fit + forecast
seconds (one BLAS thread). A probe: the default is not changed by it. (``local_linear_k_probe.py``
scores fixed settings of the local-linear model; this, the whole default fit.)

``--given JSON`` compares the default with ``ProjectionForecaster(**JSON)`` instead of the
longer ladder (e.g. a local-linear fit over 1,000 neighbours, S-map's every library point);
``--horizons`` keeps some of each series' horizons.

    .venv/bin/python experiments/neighbour_ladder_probe.py setar arma21 ecg competition
    .venv/bin/python experiments/neighbour_ladder_probe.py setar --horizons 1 5 \
        --given '{"n_neighbors": [24, 96, 400, 1000], "model": "local_linear"}'
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_autofit as bench  # noqa: E402
import noise_level_probe  # noqa: E402,F401 -- registers the unseen and held-out series

from tssdpa.filters import forecaster  # noqa: E402

LONGER = (1, 2, 4, 8, 16, 32)  # multiples of E + 1


def longer_ladder(default):
    """``ProjectionForecaster._candidates`` with the k ladder ``LONGER`` where k is left to fit."""

    def candidates(self, z):
        out = default(self, z)
        if self.n_neighbors is None:
            out["n_neighbors"] = lambda D: [m * (D + 1) for m in LONGER]
        return out

    return candidates


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("series", nargs="+", choices=sorted(bench.SERIES))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", default=None)
    p.add_argument(
        "--given",
        type=json.loads,
        default=None,
        help="ProjectionForecaster settings (JSON) to compare in place of the ladder",
    )
    p.add_argument("--horizons", type=int, nargs="+", default=None)
    args = p.parse_args(argv)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    default = forecaster.ProjectionForecaster._candidates
    longer = longer_ladder(default)
    for name in args.series:
        z, sp = bench.split_series(name, args.seed, 2000, 3000, args.data_dir)
        for h in bench.SERIES[name][2]:
            if args.horizons and h not in args.horizons:
                continue
            out = []
            for variant in ("default", "other"):
                given = args.given if variant == "other" and args.given else {}
                ladder = variant == "other" and not args.given
                forecaster.ProjectionForecaster._candidates = longer if ladder else default
                bench.OURS_FORECASTER.clear()
                bench.OURS_FORECASTER.update(given)
                tic = time.perf_counter()
                out.append((bench.ours_forecast(z, sp, h)["rmse"], time.perf_counter() - tic))
            forecaster.ProjectionForecaster._candidates = default
            bench.OURS_FORECASTER.clear()
            (a, ta), (b, tb) = out
            what = "given" if args.given else "longer ladder"
            print(f"{name:22s} h={h:4d}  default {a:.4g} ({ta:.1f} s)  {what} {b:.4g} "
                  f"({tb:.1f} s)  ratio {b / a:.3f}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
