"""The ``tssdpa`` command.

``tssdpa compare denoise|forecast|all --dataset NAME --out DIR``
    Run a comparison (resumable: finished cells in ``DIR/results.csv`` are not recomputed),
    write tables and plots, print the headline table. ``--dataset default`` is the embedded
    comparison (synthetic signals + statsmodels sunspots; no downloads).
``tssdpa filter INPUT.csv --columns a b [--method NAME] [--target c d] --out OUT.csv``
    Fit and apply any registered denoiser (default: the zero-phase projection filter, every
    setting chosen by its ``fit``) or, with ``--horizon``, forecaster to a CSV file; the
    chosen settings go to stderr. ``--target`` names clean reference columns to fit against.
``tssdpa methods``
    List the method names.
``tssdpa download``
    Fetch the real datasets into the user cache, checking sha256.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tssdpa", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("compare", help="denoising / forecasting comparison")
    c.add_argument("task", choices=["denoise", "forecast", "all"])
    c.add_argument(
        "--dataset",
        "-d",
        action="append",
        default=None,
        help="dataset name (repeatable); 'default' = the embedded comparison",
    )
    c.add_argument("--out", "-o", default="runs/compare", help="output folder")
    c.add_argument("--methods", nargs="+", default=None, help="method names (default: all)")
    c.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=None,
        help="seeds (default 0 1 2; 0 1 for 'default')",
    )
    c.add_argument(
        "--budget",
        type=int,
        default=None,
        help="max configurations per method (default 8; 4 for 'default')",
    )
    c.add_argument("--n", type=int, default=None, help="length of synthetic signals")
    c.add_argument(
        "--features",
        choices=["M", "S", "both"],
        default="both",
        help="ETT: multivariate, OT only, or both",
    )
    c.add_argument("--horizons", nargs="+", type=int, default=None)
    c.add_argument(
        "--max-origins",
        type=int,
        default=None,
        help="cap on evaluated test origins for expensive methods",
    )
    c.add_argument("--data-dir", default=None, help="folder holding the shared datasets")
    c.add_argument(
        "--quick",
        action="store_true",
        help="small grids for learned methods (always on for 'default')",
    )
    c.add_argument("--no-progress", action="store_true")
    c.add_argument("--no-plots", action="store_true")
    c.add_argument("--full", action="store_true", help="print every table, not the headline")
    c.add_argument(
        "--docs",
        default=None,
        help="also write tables, plots, results.csv and a headline README here "
        "(e.g. docs/results/default)",
    )

    f = sub.add_parser("filter", help="filter (or forecast) columns of a CSV file")
    f.add_argument("input")
    f.add_argument("--columns", nargs="+", default=None, help="columns (default: all numeric)")
    f.add_argument(
        "--method",
        "-m",
        default="projection_zp",
        help="a denoiser or forecaster from `tssdpa methods` (default: projection_zp, the "
        "zero-phase projection filter; projection with --horizon)",
    )
    f.add_argument(
        "--target",
        nargs="+",
        default=None,
        metavar="COLUMN",
        help="clean reference columns, one per --columns entry: fit against them (supervised) "
        "instead of self-supervised",
    )
    f.add_argument("--params", default="{}", help="JSON constructor arguments")
    f.add_argument(
        "--horizon",
        type=int,
        default=None,
        help="forecast this many steps ahead with a forecasting method instead",
    )
    f.add_argument(
        "--fit-fraction",
        type=float,
        default=1.0,
        help="fit on this leading fraction of the rows (default: all)",
    )
    f.add_argument("--out", "-o", default=None, help="output CSV (default: stdout)")

    sub.add_parser("methods", help="list method names")

    dl = sub.add_parser("download", help="download the real datasets (sha256-checked)")
    dl.add_argument("--names", nargs="+", default=None)
    dl.add_argument("--cache-dir", default=None)
    dl.add_argument("--force", action="store_true")
    return p


def _tasks(args, kind: str):
    from tssdpa.data import DEFAULT_DATASETS, ETT_NAMES, denoise_tasks, forecast_tasks

    names = args.dataset or ["default"]
    out = []
    for name in names:
        sets = DEFAULT_DATASETS[kind] if name == "default" else [name]
        default = name == "default"
        n = args.n or (1000 if default else 4000)
        for ds in sets:
            if kind == "denoise":
                out += denoise_tasks(
                    ds,
                    seeds=_seeds(args, default),
                    n=n,
                    data_dir=args.data_dir,
                    settings=_DEFAULT_SETTINGS if default else None,
                    quick=default or args.quick,
                )
            else:
                feats = ["M", "S"] if args.features == "both" else [args.features]
                for ft in feats if ds in ETT_NAMES else ["M"]:
                    out += forecast_tasks(
                        ds,
                        seeds=_seeds(args, default),
                        n=n,
                        data_dir=args.data_dir,
                        features=ft,
                        horizons=args.horizons,
                        max_origins=args.max_origins,
                        quick=default or args.quick,
                    )
    return out


_DEFAULT_SETTINGS = [("gaussian", 0.0), ("gaussian", 10.0), ("gaussian", 20.0), ("impulsive", 10.0)]


def _seeds(args, default: bool) -> tuple:
    if args.seeds is not None:
        return tuple(args.seeds)
    return (0, 1) if default else (0, 1, 2)


def _compare(args) -> int:
    from tssdpa.compare import run_tasks
    from tssdpa.compare.plots import write_plots
    from tssdpa.compare.tables import markdown_tables, overview_markdown, write_tables

    kinds = ["denoise", "forecast"] if args.task == "all" else [args.task]
    tic = time.perf_counter()
    tasks = []
    try:
        for k in kinds:
            tasks += _tasks(args, k)
    except (FileNotFoundError, ValueError) as exc:
        raise SystemExit(f"tssdpa compare: {exc}") from None
    out = Path(args.out)
    is_default = "default" in (args.dataset or ["default"])
    budget = args.budget or (4 if is_default else 8)
    res = run_tasks(
        tasks,
        methods=args.methods,
        out=out,
        budget=budget,
        progress=not args.no_progress,
        log=lambda m: print(m, file=sys.stderr),
    )
    frame = res.frame
    write_tables(frame, out / "tables")
    if not args.no_plots:
        write_plots(out, frame, out / "plots")
    if args.docs:
        _write_docs(Path(args.docs), out, frame, argv_line=" ".join(sys.argv[1:]) or "compare ...")
    if args.full:
        for k in kinds:
            print(markdown_tables(frame, k))
    print("\n## Headline: best classical vs best tssdpa method (test split)\n")
    print(overview_markdown(frame))
    print(
        f"\nFull tables: {out / 'tables'}   plots: {out / 'plots'}   "
        f"rows: {out / 'results.csv'}   ({time.perf_counter() - tic:.0f} s)"
    )
    return 0


def _write_docs(docs: Path, out: Path, frame, argv_line: str) -> None:
    """Committable copy of a run: Markdown tables, summary CSVs, PNG plots, raw rows."""
    import shutil

    from tssdpa.compare.plots import write_plots
    from tssdpa.compare.tables import overview_markdown, write_tables

    docs.mkdir(parents=True, exist_ok=True)
    write_tables(frame, docs)
    write_plots(out, frame, docs)
    shutil.copyfile(out / "results.csv", docs / "results.csv")
    md = sorted(p.name for p in docs.glob("*.md") if p.name != "README.md")
    png = sorted(p.name for p in docs.glob("*.png"))
    text = (
        [
            f"# Results: `tssdpa {argv_line}`",
            "",
            "Generated by the command above (seeded; hyperparameters chosen on the validation "
            "split only; scores on the test split). Do not edit by hand.",
            "",
            "## Headline: best classical vs best tssdpa method",
            "",
            overview_markdown(frame),
            "",
            "## Tables",
            "",
        ]
        + [f"- [{m}]({m})" for m in md]
        + ["", "## Plots", ""]
        + [f"![{p}]({p})" for p in png]
    )
    (docs / "README.md").write_text("\n".join(text) + "\n")


def _filter(args) -> int:
    import numpy as np
    import pandas as pd

    from tssdpa.compare import get_method

    df = pd.read_csv(args.input)
    cols = args.columns or [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise SystemExit(f"--columns: not in {args.input}: {missing}")
    try:
        params = json.loads(args.params)
    except json.JSONDecodeError as exc:
        raise SystemExit(f"--params must be JSON: {exc}") from None
    if not 0 < args.fit_fraction <= 1:
        raise SystemExit(f"--fit-fraction must be in (0, 1]; got {args.fit_fraction}")
    target = None
    if args.target is not None:
        absent = [c for c in args.target if c not in df.columns]
        if absent:
            raise SystemExit(f"--target: not in {args.input}: {absent}")
        if len(args.target) != len(cols):
            raise SystemExit(
                f"--target: give one column per filtered column ({len(cols)}: {cols}), "
                f"got {len(args.target)}"
            )
        if args.horizon is not None:
            raise SystemExit("--target: forecasters fit on the series itself; drop --target")
        target = df[args.target].to_numpy(dtype=np.float64)
    x = df[cols].to_numpy(dtype=np.float64)
    n_fit = max(3, int(round(len(x) * args.fit_fraction)))
    out = df.copy()
    method = args.method
    if args.horizon is not None and method == "projection_zp":
        method = "projection"  # the default names the filter; a forecaster is causal anyway
    try:
        if args.horizon is None:
            spec = get_method(method, "denoise")
            est = spec.build(**params)
            if target is None:
                est.fit(x[:n_fit])
            else:
                est.fit(x[:n_fit], target=target[:n_fit])
            _report_fit(est, method, cols)
            out[cols] = np.asarray(est.filter(x), dtype=np.float64).reshape(x.shape)
        else:
            spec = get_method(method, "forecast")
            est = spec.build(
                {
                    "max_horizon": args.horizon,
                    "lookback": params.pop("lookback", min(64, n_fit // 4)),
                },
                **params,
            )
            est.fit(x[:n_fit])
            _report_fit(est, method, cols)
            pred = np.asarray(est.forecast(x, horizon=args.horizon)).reshape(x.shape)
            for i, c in enumerate(cols):
                out[f"{c}_forecast_h{args.horizon}"] = pred[:, i]
    except ValueError as exc:
        raise SystemExit(f"tssdpa filter: {exc}") from None
    if args.out:
        out.to_csv(args.out, index=False)
        print(f"wrote {args.out} ({len(out)} rows; {method} on {cols})", file=sys.stderr)
    else:
        out.to_csv(sys.stdout, index=False)
    return 0


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


def _methods(args) -> int:
    from tssdpa.compare import available_methods, get_method

    for kind in ("denoise", "forecast"):
        print(f"{kind}:")
        for n in available_methods(kind):
            s = get_method(n, kind)
            flag = "" if kind == "forecast" else (" causal" if s.causal else " zero-phase")
            print(f"  {n:<20} [{s.family}{flag}] {s.description}")
    return 0


def _download(args) -> int:
    from tssdpa.data import download

    download(args.names, args.cache_dir, force=args.force)
    return 0


def _single_threaded_blas(argv: list[str] | None) -> None:
    """Re-run the console command with single-threaded OpenBLAS.

    The comparison fits thousands of tiny models (Kalman likelihoods, small least squares);
    multi-threaded BLAS only adds synchronisation cost there (about 1.5x slower on 2 cores).
    The environment variable must be set before numpy loads, hence the re-exec. Only done for
    the console script (``argv is None``), never inside a caller's process.
    """
    if argv is not None or os.environ.get("OPENBLAS_NUM_THREADS"):
        return
    if len(sys.argv) < 2 or sys.argv[1] != "compare":
        return
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    os.execve(sys.executable, [sys.executable, "-m", "tssdpa.cli", *sys.argv[1:]], env)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tssdpa`` console script."""
    _single_threaded_blas(argv)
    args = build_parser().parse_args(argv)
    return {"compare": _compare, "filter": _filter, "methods": _methods, "download": _download}[
        args.command
    ](args)


def experiment_main(task: str, cli_class, system_class, datamodule_class, argv=None) -> int:
    """Entry point shared by ``experiments/denoise.py`` and ``experiments/forecast.py``.

    ``classical ...`` runs the classical harness (``tssdpa compare TASK ...``); anything else
    goes to the LightningCLI of the learned model.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "classical":
        return main(["compare", task, *argv[1:]])
    cli_class(
        system_class,
        datamodule_class,
        args=argv,
        seed_everything_default=0,
        save_config_kwargs={"overwrite": True},
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
