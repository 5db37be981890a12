"""Are two comparison runs the same? Row by row, ignoring timings (a refactoring check).

    python experiments/compare_runs.py runs/before/results.csv runs/after/results.csv

Rows are matched on (task, dataset, setting, seed, method, horizon); every metric must agree
to ``--rtol`` (default 1e-9; NaN equals NaN); ``fit_s`` / ``apply_s`` are ignored. The
``params`` column is compared after mapping the parameter names renamed in 0.2 (``taps``,
``window_length``, ``kernel_size``, ``mysize`` -> ``window``; a projection forecaster's
``lags`` -> ``embedding``; AutoReg's own ``lags`` inside ``base_params`` stays). Rows of one run
only are named (the first 5 of each side) and the rows both have are still compared. Exit
status 1 when anything differs; 2, in one line, when a file cannot be read as a CSV.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import pandas as pd

KEY = ["task", "dataset", "setting", "seed", "method", "horizon"]
TIMINGS = ["fit_s", "apply_s"]
RENAMED = {"taps": "window", "window_length": "window", "kernel_size": "window", "mysize": "window"}


def current_params(text) -> dict | None:
    """A ``params`` cell in today's names (top-level keys only; nested dicts are kept)."""
    if not isinstance(text, str):
        return None
    params = json.loads(text)
    out = {RENAMED.get(k, k): v for k, v in params.items()}
    if "lags" in out and ("model" in out or "base" in out):  # projection forecasters
        out["embedding"] = out.pop("lags")
    return out


def _keys(frame: pd.DataFrame) -> list[tuple]:
    return list(frame[KEY].fillna(-1).itertuples(index=False, name=None))


def _shown(key: tuple) -> list:
    return [k for k in key if k != -1]  # a denoise row's horizon is none


def differences(a: pd.DataFrame, b: pd.DataFrame, rtol: float) -> list[str]:
    # a denoise-only run writes no horizon column: sorting by it was KeyError: 'horizon'
    a = a.reindex(columns=list(dict.fromkeys([*a.columns, *KEY])))
    b = b.reindex(columns=list(dict.fromkeys([*b.columns, *KEY])))
    a = a.sort_values(KEY).reset_index(drop=True)
    b = b.sort_values(KEY).reset_index(drop=True)
    # rows of one run only are named, and the shared ones still compared: "different rows:
    # 4 vs 4" said neither which rows nor whether the others agreed
    out = []
    ka, kb = _keys(a), _keys(b)
    in_a, in_b = set(ka), set(kb)
    for which, mine, theirs in (("first", ka, in_b), ("second", kb, in_a)):
        only = [k for k in mine if k not in theirs]
        if only:
            shown = "; ".join(str(_shown(k)) for k in only[:5])
            out.append(f"{len(only)} row(s) only in the {which} run, e.g. {shown}")
    shared = [k for k in ka if k in in_b]
    a = a[[k in in_b for k in ka]].reset_index(drop=True)
    b = b[[k in in_a for k in kb]].reset_index(drop=True)
    for col in a.columns:
        if col in TIMINGS or col in KEY or col not in b:
            continue
        x, y = a[col], b[col]
        if col == "params":
            bad = x.map(current_params) != y.map(current_params)
        elif x.dtype.kind in "fi" and y.dtype.kind in "fi":
            bad = ~np.isclose(x, y, rtol=rtol, atol=0.0, equal_nan=True)
        else:
            bad = ~((x == y) | (x.isna() & y.isna()))
        for i in np.flatnonzero(bad)[:5]:
            out.append(f"{col}: {_shown(shared[i])}: {x[i]!r} vs {y[i]!r}")
        if bad.sum() > 5:
            out.append(f"{col}: ... {int(bad.sum())} rows in all")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--rtol", type=float, default=1e-9)
    args = p.parse_args(argv)
    frames = []
    for name in (args.before, args.after):
        try:
            frames.append(pd.read_csv(name))
        except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
            p.error(f"{name}: cannot be read as a results CSV ({type(e).__name__}: {e})")
    a, b = frames
    diff = differences(a, b, args.rtol)
    print("\n".join(diff) if diff else f"same: {len(a)} rows (timings ignored)")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
