"""Peak memory of ``ProjectionForecaster.forecast_path`` over a long path of several channels.

``forecast`` gathers the futures of every origin's neighbours, (origins, k, horizons, C)
values; over a long path of many channels that is tens of GB (the default fit on ETTh1's seven
columns with ``horizon=720`` was killed for memory on a 23 GB machine). Since 2026-11-26 the
origins go in blocks of at most ``analogues._GATHER_ELEMS`` gathered values. This benchmark
forecasts the same path with the blocks and with one block for everything (the old way), side
by side in one run, and reports the peak of traced allocations and the seconds of each, and
whether the forecasts are identical.

    .venv/bin/python experiments/bench_path_memory.py
    # and the default fit on ETTh1's seven columns, horizon 720 (about 5 minutes)
    .venv/bin/python experiments/bench_path_memory.py --etth1 ../shared/datasets
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tssdpa.filters.analogues as analogues  # noqa: E402
from tssdpa.data import load_ett  # noqa: E402
from tssdpa.data.synthetic import make_signal  # noqa: E402
from tssdpa.filters import ProjectionForecaster  # noqa: E402


def _peak(fc, y, horizon, gather):
    default, analogues._GATHER_ELEMS = analogues._GATHER_ELEMS, gather
    tracemalloc.start()
    try:
        tic = time.perf_counter()
        path = np.asarray(fc.forecast_path(y, horizon))
        seconds = time.perf_counter() - tic
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
        analogues._GATHER_ELEMS = default
    return path, peak, seconds


def _etth1(data_dir) -> None:
    """The default fit on ETTh1's training rows (8,640 x 7), then the 720-step path over
    training + validation + test (+ 720) rows: seconds and the process's peak RSS."""
    x = load_ett("ETTh1", data_dir).to_numpy(float)
    tic = time.perf_counter()
    fc = ProjectionForecaster(horizon=720).fit(x[:8640])
    fit_s = time.perf_counter() - tic
    tic = time.perf_counter()
    fc.forecast_path(x[: 8640 + 2880 + 720], 720)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB -> GiB
    print(f"ETTh1 x 7, default fit with horizon=720: fit {fit_s:.0f} s, path "
          f"{time.perf_counter() - tic:.0f} s, peak RSS {rss:.1f} GiB")  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=3000, help="samples (the first 60%% fitted)")
    p.add_argument("--horizon", type=int, default=96)
    p.add_argument("--channels", type=int, default=7)
    p.add_argument("--etth1", metavar="DATA_DIR", help="also time the default fit on ETTh1")
    args = p.parse_args(argv)
    y = make_signal("lorenz96", args.n, 0, component=None)[:, : args.channels]
    y = y + 0.1 * np.random.default_rng(0).standard_normal(y.shape)  # a noisy recording
    # a structure like those the default fit chooses for ETT (hybrid, k in the hundreds)
    fc = ProjectionForecaster(
        horizon=args.horizon, embedding=4, delay=1, n_neighbors=232, bandwidth=0.5,
        model="hybrid", ridge=1e-3,
    ).fit(y[: int(0.6 * args.n)])  # fmt: skip
    blocked = _peak(fc, y, args.horizon, analogues._GATHER_ELEMS)
    whole = _peak(fc, y, args.horizon, 1 << 62)
    print(f"{args.n} samples x {args.channels} channels, path of {args.horizon} steps, "
          f"k = 232 neighbours")  # fmt: skip
    for name, (_, peak, s) in (("blocks (default)", blocked), ("one block", whole)):
        print(f"  {name}: peak traced {peak:.0f} MiB, {s:.1f} s")
    print(f"  identical forecasts: {np.array_equal(blocked[0], whole[0], equal_nan=True)}")
    if args.etth1:
        _etth1(args.etth1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
