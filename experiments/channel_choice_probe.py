"""Would ``channel_independent="auto"`` choose better per horizon? (issue 10)

``ProjectionForecaster(channel_independent="auto")`` makes one choice for every horizon: the
geometric mean over the anchor horizons of the per-channel over the joint validation error
(the last quarter of the fitted series, forecast from fits on the first three quarters). This
prints, per horizon of a case of ``multichannel_dev.py`` (its split: fitted on train +
validation, scored on test), that validation ratio next to the test ratio of the two kinds --
whether a choice per horizon would pick the better kind.

    .venv/bin/python experiments/channel_choice_probe.py fusion_6 etth2_7
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import multichannel_dev as md  # noqa: E402 -- its cases and split

from tssdpa import ProjectionForecaster  # noqa: E402
from tssdpa.data import Split  # noqa: E402
from tssdpa.filters.analogues import anchor_horizons, nearest_anchor  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cases", nargs="+", choices=list(md.CASES))
    p.add_argument("--data-dir", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    print("| case | h | validation: per channel / joint | test: per channel / joint |")
    print("|---|---|---|---|")
    for name in args.cases:
        load, horizons, seeds = md.CASES[name]
        x = load(seeds[0], args.data_dir)
        sp = Split.fractions(len(x), 0.6, 0.2)
        z = (x - x[: sp.train].mean(0)) / x[: sp.train].std(0)
        H = max(horizons)
        auto = ProjectionForecaster(horizon=H, channel_independent="auto").fit(z[: sp.val])
        other = ProjectionForecaster(horizon=H, channel_independent=not auto.channel_independent_)
        other.fit(z[: sp.val])
        by_kind = {auto.channel_independent_: auto, not auto.channel_independent_: other}
        choice = auto.channel_choice_
        for h in horizons:
            test = {}
            for independent, m in by_kind.items():
                pred = np.asarray(m.forecast(z, h))[sp.val - h : len(z) - h]
                test[independent] = np.mean(np.sqrt(np.nanmean((pred - z[sp.val :]) ** 2, 0)))
            a = nearest_anchor(h, anchor_horizons(H))
            val = choice["independent"][a] / choice["joint"][a] if len(choice) == 2 else np.nan
            print(f"| {name} | {h} | {val:.3f} | {test[True] / test[False]:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
