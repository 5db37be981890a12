"""Which window the local adaptation of a zero-phase fit takes, and what each would give.

For one series of ``bench_autofit.py`` (or ``autofit_heldout.py``) at one SNR, fits
``ProjectionFilter(causal=False)`` self-supervised or with the clean training part as target,
with ``projection_local.LOCAL_WIDTHS`` set to each width alone and then to all of them, and
prints the window kept (None: no adaptation) and the RMSE against the clean series on the
training and test parts.

    .venv/bin/python experiments/local_width_probe.py mackey_glass 0 10 --target
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import autofit_heldout  # noqa: E402,F401 -- registers its channels in bench_autofit.SERIES
import bench_autofit as bench  # noqa: E402

from tssdpa import ProjectionFilter  # noqa: E402
from tssdpa.data import add_noise  # noqa: E402
from tssdpa.filters import projection_local  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("series", choices=sorted(bench.SERIES))
    p.add_argument("seed", type=int)
    p.add_argument("snr", type=float, choices=bench.SNRS)
    p.add_argument("--target", action="store_true", help="fit with the clean training part")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    z, sp = bench.split_series(args.series, args.seed, 2000, 3000, args.data_dir)
    noise_seed = 1000 * args.seed + bench.SNRS.index(args.snr)  # the benchmark's noise
    noisy = add_noise(z, "gaussian", args.snr, seed=noise_seed)
    train, test = slice(0, sp.train), slice(sp.val, sp.test)
    widths = projection_local.LOCAL_WIDTHS
    for choice in [(w,) for w in widths] + [widths]:
        projection_local.LOCAL_WIDTHS = choice
        f = ProjectionFilter(causal=False)
        f = f.fit(noisy[train], target=z[train]) if args.target else f.fit(noisy)
        y = np.asarray(f.filter(noisy))
        kept = f.local_["window"] if f.local_ else None
        r_train, r_test = bench.rmse(y[train], z[train])[0], bench.rmse(y[test], z[test])[0]
        print(f"widths {choice}: window kept {kept}, RMSE train {r_train:.4f}, test {r_test:.4f}")
    projection_local.LOCAL_WIDTHS = widths
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
