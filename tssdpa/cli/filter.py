"""``tssdpa filter``: fit a filter (or forecaster) on the columns of a CSV file and apply it.

With ``--out-dir`` it takes many files and glob patterns (CSV or Parquet) and filters each
one, on a Dask cluster or this machine's cores (:mod:`tssdpa.cli.batch`).

Every mistake a user can make with the file or the arguments ends in one line on stderr that
says what is wrong and what to do, and exit code 2 (:class:`UsageError`); never a traceback.
What was done goes to stderr too: the columns filtered, the settings ``fit`` chose, the
missing / infinite cells treated as missing, the columns skipped.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import sys
import warnings
from glob import has_magic
from pathlib import Path

from tssdpa.cli import batch as batch_command
from tssdpa.cli.errors import UsageError
from tssdpa.cli.helptext import DefaultsFormatter

__all__ = ["add_parser", "run"]

#: column names taken for sample times when no --time-column is given (case-insensitive)
_TIME_NAMES = re.compile(r"^(t|time|times|timestamp|timestamps|datetime|date)\b", re.IGNORECASE)


def add_parser(sub) -> None:
    f = sub.add_parser(
        "filter",
        help="fit a filter (or forecaster) on columns of a CSV file and apply it",
        description="Fit a denoiser on columns of a CSV file and write the filtered columns "
        "next to the originals (or, with --horizon, forecasts). The chosen settings, the "
        "missing cells and the skipped columns are reported on stderr.",
        formatter_class=DefaultsFormatter,
    )
    f.add_argument(
        "input",
        nargs="+",
        help="a CSV file (comma, semicolon or tab separated; header row); with --out-dir any "
        "number of CSV / Parquet files and glob patterns such as 'logs/*.csv' (quoted)",
    )
    f.add_argument(
        "--columns",
        nargs="+",
        default=None,
        help="columns to filter (default: every numeric column but the time column)",
    )
    f.add_argument(
        "--time-column",
        default=None,
        help="the column of sample times, copied through unchanged and never filtered "
        "(default: a column named time / timestamp / 'Time (s)' ..., or a datetime column)",
    )
    f.add_argument(
        "--method",
        "-m",
        default="projection_zp",
        help="a denoiser or forecaster from `tssdpa methods`; projection_zp is the zero-phase "
        "projection filter with every setting chosen by its fit ('projection' with --horizon)",
    )
    f.add_argument(
        "--target",
        nargs="+",
        default=None,
        metavar="COLUMN",
        help="clean reference columns, one per filtered column: fit against them "
        "(supervised) instead of self-supervised; needed by the methods `tssdpa methods` "
        "marks 'needs --target'",
    )
    f.add_argument(
        "--params",
        default="{}",
        help="constructor arguments as a JSON object, e.g. '{\"window\": 16}'",
    )
    f.add_argument(
        "--horizon",
        type=int,
        default=None,
        help="forecast this many steps ahead instead: column <col>_forecast_h<H> at row t "
        "predicts <col> at row t+H from rows up to t",
    )
    f.add_argument(
        "--fit-fraction",
        type=float,
        default=None,
        help="fit on this leading fraction of the rows (default: all rows when filtering; "
        "0.7 when forecasting, whose forecasts before the end of the fitted rows are left "
        "empty unless --in-sample)",
    )
    f.add_argument(
        "--in-sample",
        action="store_true",
        help="forecasting: also write forecasts from the rows the forecaster was fitted on",
    )
    f.add_argument(
        "--suffix",
        default="_filtered",
        help="the filtered column <col> goes to <col><suffix>",
    )
    f.add_argument("--inplace", action="store_true", help="overwrite the original columns instead")
    f.add_argument("--out", "-o", default=None, help="output CSV (default: standard output)")
    batch_command.add_arguments(f)


def _read(path: str):
    import pandas as pd

    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    if p.is_dir():
        raise UsageError(f"{path} is a folder; give a CSV file")
    try:
        df = pd.read_csv(p)
        if df.shape[1] == 1 and re.search(r"[;\t]", str(df.columns[0])):
            df = pd.read_csv(p, sep=None, engine="python")  # sniff ';' or tab
    except pd.errors.EmptyDataError:
        raise UsageError(f"{path} is empty; expected a header row and data rows") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise UsageError(f"{path} is not a readable CSV file ({first})") from None
    if len(df) == 0:
        raise UsageError(f"{path} has a header but no data rows")
    return df


def _time_column(df, name):
    import pandas as pd

    if name is not None:
        if name not in df.columns:
            raise UsageError(f"--time-column: {name!r} is not a column of the file")
        return name
    for c in df.columns:
        if pd.api.types.is_datetime64_any_dtype(df[c]) or _TIME_NAMES.match(str(c).strip()):
            return c
    return None


def _numeric(df, col: str, what: str):
    """Column ``col`` as float64; text cells are an error naming the first one."""
    import numpy as np
    import pandas as pd

    values = pd.to_numeric(df[col], errors="coerce")
    bad = values.isna() & df[col].notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise UsageError(
            f"{what} {col!r} is not numeric: {df[col].iloc[row]!r} in data row {row + 1}; "
            "clean the file or choose other columns"
        )
    return values.to_numpy(dtype=np.float64)


def _params(text: str, factory) -> dict:
    try:
        params = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--params must be a JSON object ({exc})") from None
    if not isinstance(params, dict):
        raise UsageError(f'--params must be a JSON object like {{"window": 16}}, got {text!r}')
    valid = [
        n for n in inspect.signature(factory.__init__).parameters if n not in ("self", "kwargs")
    ]
    unknown = sorted(set(params) - set(valid) - set(getattr(factory, "_renamed_params", {})))
    if unknown:
        raise UsageError(
            f"--params: unknown parameter(s) {unknown} for {factory.__name__}; valid: "
            + ", ".join(valid)
        )
    return params


def _report_fit(est, method: str, cols) -> None:
    """Print what ``fit`` chose (``best_params_``, per horizon for forecasters) to stderr."""
    best = getattr(est, "best_params_", None)
    if not best:
        return
    items = best.items() if all(isinstance(v, dict) for v in best.values()) else [(None, best)]
    for key, params in items:
        where = "" if key is None else f" h={key}"
        chosen = ", ".join(f"{k}={_fmt(v)}" for k, v in params.items() if v is not None)
        print(f"{method}{where} on {cols}: chose {chosen}", file=sys.stderr)


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def run(args) -> int:
    """The ``filter`` subcommand; raises :class:`UsageError` for the user's mistakes."""
    if args.out_dir is not None:
        return batch_command.run(args, _params)
    if len(args.input) > 1 or (not Path(args.input[0]).exists() and has_magic(args.input[0])):
        raise UsageError(
            "several inputs (or a pattern) need --out-dir: each output goes there under its "
            "input's name"
        )
    batch_command.check_single_file_args(args)
    args.input = args.input[0]
    import numpy as np

    from tssdpa.compare import get_method

    kind = "denoise" if args.horizon is None else "forecast"
    method = args.method
    if kind == "forecast" and method == "projection_zp":
        method = "projection"  # the default names the filter; a forecaster is causal anyway
    try:
        spec = get_method(method, kind)
    except (KeyError, ValueError):
        raise UsageError(
            f"--method: no {kind} method {method!r}; `tssdpa methods` lists them"
        ) from None
    if args.horizon is not None and args.horizon < 1:
        raise UsageError(f"--horizon must be a positive integer, got {args.horizon}")
    if args.out is not None and not Path(args.out).resolve().parent.is_dir():
        raise UsageError(f"--out: the folder {str(Path(args.out).parent)!r} does not exist")
    params = _params(args.params, spec.factory)
    df = _read(args.input)
    time_col = _time_column(df, args.time_column)
    if args.columns is not None:
        missing = [c for c in args.columns if c not in df.columns]
        if missing:
            raise UsageError(
                f"--columns: not in {args.input}: {missing}; its columns: {list(df.columns)}"
            )
        if time_col in args.columns:
            raise UsageError(f"--columns: {time_col!r} is the time column; it is not filtered")
        cols, skipped = list(args.columns), []
    else:
        import pandas as pd

        rest = [c for c in df.columns if c != time_col]
        cols = [c for c in rest if pd.api.types.is_numeric_dtype(df[c])]
        skipped = [c for c in rest if c not in cols]
        if not cols:
            raise UsageError(
                f"{args.input} has no numeric column to filter (columns: {list(df.columns)})"
            )
    x = np.stack([_numeric(df, c, "column") for c in cols], axis=1)
    n_inf = int(np.isinf(x).sum())
    n_nan = int(np.isnan(x).sum())
    x[np.isinf(x)] = np.nan  # a sensor glitch: treated as a missing sample, like NaN
    if np.isnan(x).all(axis=0).any():
        empty = [c for c, e in zip(cols, np.isnan(x).all(axis=0)) if e]
        raise UsageError(f"column(s) {empty} have no finite value")
    target = None
    if args.target is not None:
        if kind == "forecast":
            raise UsageError("--target: forecasters fit on the series itself; drop --target")
        absent = [c for c in args.target if c not in df.columns]
        if absent:
            raise UsageError(f"--target: not in {args.input}: {absent}")
        if len(args.target) != len(cols):
            raise UsageError(
                f"--target: give one column per filtered column ({len(cols)}: {cols}), "
                f"got {len(args.target)}"
            )
        target = np.stack([_numeric(df, c, "--target column") for c in args.target], axis=1)
    elif getattr(spec.factory, "requires_target", False):
        raise UsageError(f"--method {method} needs a clean reference: give --target COLUMN")
    fraction = args.fit_fraction if args.fit_fraction is not None else (
        1.0 if kind == "denoise" else 0.7
    )  # fmt: skip
    if not 0 < fraction <= 1:
        raise UsageError(f"--fit-fraction must be in (0, 1]; got {fraction}")
    n_fit = max(3, int(round(len(x) * fraction)))
    out = df.copy()
    if spec.family == "learned":
        import lightning.pytorch  # noqa: F401 -- it sets its loggers' levels when imported

        for name in ("lightning.pytorch", "lightning.pytorch.utilities.rank_zero",
                     "lightning.fabric", "lightning.fabric.utilities.rank_zero"):  # fmt: skip
            logging.getLogger(name).setLevel(logging.ERROR)  # "GPU available: ..." banners
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecations and tips are not for a CLI user
        try:
            if kind == "denoise":
                est = spec.build(**params)
                if target is None:
                    est.fit(x[:n_fit])
                else:
                    est.fit(x[:n_fit], target=target[:n_fit])
                _report_fit(est, method, cols)
                y = np.asarray(est.filter(x), dtype=np.float64).reshape(x.shape)
                names = cols if args.inplace else [f"{c}{args.suffix}" for c in cols]
                for i, c in enumerate(names):
                    out[c] = y[:, i]
            else:
                lookback = params.pop("lookback", min(64, max(1, n_fit // 4)))
                est = spec.build({"max_horizon": args.horizon, "lookback": lookback}, **params)
                est.fit(x[:n_fit])
                _report_fit(est, method, cols)
                pred = np.asarray(est.forecast(x, horizon=args.horizon)).reshape(x.shape)
                if not args.in_sample:
                    pred[: n_fit - 1] = np.nan  # origins inside the fitted rows: not written
                names = [f"{c}_forecast_h{args.horizon}" for c in cols]
                for i, c in enumerate(names):
                    out[c] = pred[:, i]
        except (ValueError, TypeError) as exc:
            raise UsageError(f"{method}: {exc}") from None
    notes = []
    if n_nan or n_inf:
        notes.append(f"{n_nan} missing and {n_inf} infinite cell(s) treated as missing")
    if skipped:
        notes.append(f"skipped non-numeric column(s) {skipped}")
    if time_col is not None:
        notes.append(f"time column {time_col!r} copied through")
    if kind == "forecast":
        first = 0 if args.in_sample else n_fit - 1
        notes.append(f"fitted on rows 1-{n_fit}; forecasts written from row {first + 1} on")
    where = args.out or "standard output"
    print(f"{method} on {cols} -> {names} ({len(out)} rows, {where})", file=sys.stderr)
    for n in notes:
        print(f"  {n}", file=sys.stderr)
    if args.out:
        out.to_csv(args.out, index=False)
    else:
        out.to_csv(sys.stdout, index=False)
    return 0
