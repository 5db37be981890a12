"""The ``tssdpa`` command.

``tssdpa compare denoise|forecast|all --dataset NAME --out DIR``
    Run a comparison (resumable: finished cells in ``DIR/results.csv`` are not recomputed,
    failed ones run again; cells stored there with other settings -- ``--n``,
    ``--horizons``, ``--budget``... -- are refused rather than mixed in),
    write tables and plots, print the headline table. ``--dataset default`` is the embedded
    comparison (synthetic signals + statsmodels sunspots; no downloads).
``tssdpa compare denoise|forecast|all --file DATA.csv [--columns a b] [--target c d]``
    The same comparison on the columns of your own CSV / Parquet file
    (:mod:`tssdpa.cli.compare_file`).
``tssdpa filter INPUT.csv [--columns a b] [--method NAME] [--target c d] --out OUT.csv``
    Fit and apply any registered denoiser (default: the zero-phase projection filter, every
    setting chosen by its ``fit``) or, with ``--horizon``, forecaster to a CSV file
    (:mod:`tssdpa.cli.filter`); filtered columns go next to the originals, the chosen
    settings to stderr. ``--target`` names clean reference columns to fit against.
``tssdpa filter 'logs/*.csv' --out-dir DIR [--fit-on FILE] [--scheduler threads|processes|ADDR]``
    Many CSV / Parquet files, each fitted and filtered on its own (or by one filter fitted on
    FILE) on a Dask cluster, one output per input in DIR, a summary table on stdout
    (:mod:`tssdpa.cli.batch`, :func:`tssdpa.batch.filter_files`).
``tssdpa methods``
    List the method names.
``tssdpa download``
    Fetch the real datasets into the user cache, checking sha256.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import time
from pathlib import Path

from tssdpa.cli import compare_file
from tssdpa.cli import filter as filter_command
from tssdpa.cli.errors import UsageError, note, usage_errors
from tssdpa.cli.helptext import DefaultsFormatter, add_version, parse_args
from tssdpa.cli.paths import check_output_folder
from tssdpa.cli.said import DroppedWhenClosed
from tssdpa.files import same_path

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tssdpa", description=__doc__.split("\n\n")[0])
    add_version(p)
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser(
        "compare",
        help="denoising / forecasting comparison",
        description="Run every method on the datasets' tasks (hyperparameters chosen on "
        "validation, scores on test), write tables, plots and results.csv, and print the "
        "headline table. Resumable: finished cells in OUT/results.csv are not recomputed; "
        "cells stored there with other settings (--n, --horizons, --budget, --max-origins...) "
        "are refused, not mixed in; failed cells run again.",
        formatter_class=DefaultsFormatter,
    )
    c.add_argument("task", choices=["denoise", "forecast", "all"], help="what to compare")
    c.add_argument(
        "--dataset",
        "-d",
        action="append",
        default=None,
        help="dataset name (repeatable); 'default' = the embedded comparison (default: "
        "'default', none with --file)",
    )
    compare_file.add_arguments(c)
    c.add_argument(
        "--out", "-o", default="runs/compare", help="output folder (default: runs/compare)"
    )
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
    c.add_argument(
        "--n",
        type=int,
        default=None,
        help="length of synthetic signals (default 1000 for 'default', else 4000)",
    )
    c.add_argument(
        "--features",
        choices=["M", "S", "both"],
        default=None,
        help="ETT forecasting: multivariate, OT only, or both (default)",
    )
    c.add_argument(
        "--horizons",
        nargs="+",
        type=int,
        default=None,
        help="forecast horizons (default: each dataset's own, e.g. 96 192 336 720 for ETT)",
    )
    c.add_argument(
        "--max-origins",
        type=int,
        default=None,
        help="cap on evaluated test origins for expensive methods",
    )
    c.add_argument(
        "--data-dir",
        default=None,
        help="folder holding the shared datasets (default: $TSSDPA_DATA, ../shared/datasets, "
        "the download cache)",
    )
    c.add_argument(
        "--quick",
        action="store_true",
        help="small grids for learned methods, trained on the first seed and, denoising, on "
        "gaussian@10dB only (always on for 'default')",
    )
    c.add_argument("--no-progress", action="store_true", help="no progress bars")
    c.add_argument("--no-plots", action="store_true", help="write no plots (faster)")
    c.add_argument("--full", action="store_true", help="print every table, not the headline")
    c.add_argument(
        "--docs",
        default=None,
        help="also write tables, plots, results.csv and a headline README here "
        "(e.g. docs/results/default)",
    )

    filter_command.add_parser(sub)

    sub.add_parser(
        "methods",
        help="list method names",
        description="List the denoisers (causal or zero-phase; 'needs --target' marks the "
        "supervised ones) and forecasters that compare and filter accept, with their family.",
    )

    dl = sub.add_parser(
        "download",
        help="download the real datasets (sha256-checked)",
        description="Fetch the real datasets into the user cache and check their sha256; a "
        "file already there with the right checksum is kept, a mismatch is deleted.",
        formatter_class=DefaultsFormatter,
    )
    dl.add_argument(
        "--names", nargs="+", default=None, help="files to fetch (default: all of them)"
    )
    dl.add_argument(
        "--cache-dir",
        default=None,
        help="where to put them (default: $XDG_CACHE_HOME/tssdpa, i.e. ~/.cache/tssdpa)",
    )
    dl.add_argument("--force", action="store_true", help="download again even when cached")
    return p


def _tasks(args, kind: str):
    from tssdpa.data import DEFAULT_DATASETS, ETT_NAMES, denoise_tasks, forecast_tasks

    names = args.dataset or ([] if args.file else ["default"])
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
                feats = ["M", "S"] if args.features in (None, "both") else [args.features]
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


def _check_forecast_only(args, kinds) -> None:
    """Refuse ``--features`` and ``--horizons`` where nothing reads them (they were ignored:
    ``--features S`` on imu_fusion ran its multivariate table)."""
    from tssdpa.data import DEFAULT_DATASETS, ETT_NAMES

    for flag in ("features", "horizons"):
        if getattr(args, flag) is not None and "forecast" not in kinds:
            runs = "compare denoise takes none" if args.task == "denoise" else \
                f"none of --methods {' '.join(args.methods)} forecasts"  # fmt: skip
            raise UsageError(f"--{flag} is for forecasting; {runs}")
    names = args.dataset or ([] if args.file else ["default"])
    sets = {d for n in names for d in (DEFAULT_DATASETS["forecast"] if n == "default" else [n])}
    if args.features is not None and not sets & set(ETT_NAMES):
        raise UsageError(f"--features: only the ETT datasets ({', '.join(ETT_NAMES)}) have "
                         "M / S variants; the others (and --file) are forecast with every "
                         "column")  # fmt: skip


def _seeds(args, default: bool) -> tuple:
    if args.seeds is not None:
        return tuple(args.seeds)
    return (0, 1) if default else (0, 1, 2)


def _compare(args) -> int:
    for flag in ("n", "budget", "max_origins", "horizons"):  # 0 fell back to a default, or
        value = getattr(args, flag)  # ran a whole comparison before failing
        if value is not None and min(value if isinstance(value, list) else [value]) < 1:
            name = "--" + flag.replace("_", "-")
            raise UsageError(f"{name} must be a positive integer, got {value}")
    if args.seeds is not None and min(args.seeds) < 0:  # numpy's message named no option
        raise UsageError(f"--seeds must be integers >= 0, got {args.seeds}")
    if args.seeds is not None and len(set(args.seeds)) < len(args.seeds):  # was "--n 300: ..."
        raise UsageError(f"--seeds must differ from each other, got {args.seeds}")
    compare_file.check_arguments(args)
    from tssdpa.compare import available_methods, run_tasks
    from tssdpa.compare.harness import ResumeError
    from tssdpa.compare.plots import write_plots
    from tssdpa.compare.tables import markdown_tables, overview_markdown, write_tables

    unknown = sorted(set(args.methods or ()) - set(available_methods()))
    if unknown:  # before any task is built (it was exit 1, "ValueError: methods: ...")
        raise UsageError(f"--methods: unknown name(s) {unknown}; `tssdpa methods` lists them")
    kinds = ["denoise", "forecast"] if args.task == "all" else [args.task]
    if args.methods:  # of no task asked: it ran nothing, then failed on "KeyError: 'task'"
        kinds = [k for k in kinds if set(args.methods) & set(available_methods(k))]
        if not kinds:
            raise UsageError(f"--methods: none of {args.methods} is a {args.task} method; "
                             "`tssdpa methods` lists them")  # fmt: skip
    from tssdpa.compare.harness import read_results
    from tssdpa.data import DATASETS, DEFAULT_DATASETS

    unknown = sorted(set(args.dataset or ()) - {"default", *DATASETS})
    if unknown:  # before any task is built
        raise UsageError(f"--dataset must be one of {DATASETS} or 'default'; got {unknown}")
    _check_forecast_only(args, kinds)
    for flag, folder in (("--out", args.out), ("--docs", args.docs)):
        if folder is not None:  # before the run (it ran, then failed on the write)
            with usage_errors(""):
                check_output_folder(folder, flag)
    if args.docs and same_path(args.docs, args.out):
        raise UsageError("--docs: the --out folder; give another one")  # ran, then SameFileError
    tic = time.perf_counter()
    tasks, names = [], args.dataset or ([] if args.file else ["default"])
    if args.file is not None:  # its mistakes before the datasets' (a download, a long build)
        tasks += compare_file.file_tasks(args, kinds, _seeds(args, default=False))
    try:
        for k in kinds:
            tasks += _tasks(args, k)
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(_naming_the_option(exc, args)) from None
    out = Path(args.out)
    try:  # before anything is written (commands.txt was, then run_tasks failed on the file)
        read_results(out)
    except ResumeError as exc:
        raise UsageError(str(exc)) from None
    earlier, before, existed = _logged_commands(out), _rows_state(out), out.exists()
    # logged before the run, so that the rows of an interrupted run are named too
    commands = earlier if earlier[-1:] == [args.argv_line] else earlier + [args.argv_line]
    _log_commands(out, commands)
    # 4 for the default's datasets, 8 for those named (the default's 4 was applied to them)
    small = {d for k in kinds for d in DEFAULT_DATASETS[k]} if "default" in names else set()
    try:
        res = run_tasks(
            tasks,
            methods=args.methods,
            out=out,
            budget=lambda task: args.budget or (4 if task.dataset in small else 8),
            progress=not args.no_progress,
            log=note,
        )
    except ResumeError as exc:
        if not existed:  # refused before any cell ran: it left a folder of its commands.txt
            (out / "commands.txt").unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                out.rmdir()
        raise UsageError(str(exc)) from None
    finally:
        if _rows_state(out) == before and out.exists():  # nothing added: not one of the
            commands = earlier or commands  # commands behind the rows
            _log_commands(out, commands)
    frame = res.frame
    write_tables(frame, out / "tables")
    made = [] if args.no_plots else write_plots(out, frame, out / "plots")
    if args.docs:
        _write_docs(Path(args.docs), out, frame, commands)
    if args.full:
        for k in kinds:
            print(markdown_tables(frame, k))
    print("\n## Headline: best classical vs best tssdpa method (test split)\n")
    print(overview_markdown(frame))
    # not a folder it lacks: --no-plots, or nothing to plot (no saved trace or path)
    plots = "none (--no-plots)" if args.no_plots else out / "plots" if made else "none"
    print(
        f"\nFull tables: {out / 'tables'}   plots: {plots}   "
        f"rows: {out / 'results.csv'}   ({time.perf_counter() - tic:.0f} s)"
    )
    return 0


def _naming_the_option(exc: Exception, args) -> str:
    """A task builder's message, naming the option behind it (it named ``n`` or none)."""
    msg = str(exc)
    if isinstance(exc, FileNotFoundError):
        return msg
    if msg.startswith("horizons:") and args.horizons:
        return "--" + msg
    return f"--n {args.n}: {msg}" if args.n is not None else msg


def _rows_state(out: Path) -> str:
    """A digest of ``out/results.csv``: unchanged where a run added nothing. Not its row count:
    a failed cell run again replaces its error rows with as many scored ones, and the command
    that scored them was taken for one that added nothing, left out of ``commands.txt``."""
    import hashlib

    path = out / "results.csv"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def _logged_commands(out: Path) -> list[str]:
    """The commands whose rows ``out/results.csv`` holds, in order (``out/commands.txt``): a
    run adds only the cells missing there, so several commands can fill one folder (a new
    method, say). Empty for a new folder."""
    log = out / "commands.txt"
    if not (out / "results.csv").exists() or not log.exists():
        return []
    return [line for line in log.read_text().splitlines() if line.strip()]


def _log_commands(out: Path, commands: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "commands.txt").write_text("".join(c + "\n" for c in commands))


def _write_docs(docs: Path, out: Path, frame, commands: list[str]) -> None:
    """Committable copy of a run: Markdown tables, summary CSVs, PNG plots, raw rows."""
    import shutil

    from tssdpa.compare.plots import write_plots
    from tssdpa.compare.tables import overview_markdown, write_tables

    docs.mkdir(parents=True, exist_ok=True)
    # this run's files only (another run's were listed under its command, rows not copied)
    tables = write_tables(frame, docs)
    plots = write_plots(out, frame, docs)
    shutil.copyfile(out / "results.csv", docs / "results.csv")
    md = sorted(p.name for p in tables if p.suffix == ".md")
    png = sorted(p.name for p in plots)
    how = (
        "(seeded; hyperparameters chosen on the validation split only; scores on the test "
        "split). Do not edit by hand."
    )
    if len(commands) == 1:
        head = [f"# Results: `tssdpa {commands[0]}`", "", f"Generated by the command above {how}"]
    else:
        head = [
            "# Results",
            "",
            "Generated by these commands, in this order, into one output "
            f"folder, each adding the rows the folder lacked {how}",
            "",
        ]
        head += [f"{i}. `tssdpa {c}`" for i, c in enumerate(commands, 1)]
    text = (
        head
        + [
            "",
            "## Headline: best classical vs best tssdpa method",
            "",
            "Winner: only when the paired difference over seeds (log ratio of MSE, difference "
            "of dB gains) is beyond two standard errors, else tie; '(1 run)': one seed, so no "
            "spread to judge the difference by. 'classical' includes the pyEDM peers.",
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


def _methods(args) -> int:
    from tssdpa.compare import available_methods, get_method

    for kind in ("denoise", "forecast"):
        print(f"{kind}:")
        for n in available_methods(kind):
            s = get_method(n, kind)
            flag = "" if kind == "forecast" else (" causal" if s.causal else " zero-phase")
            if s.requires_target:
                flag += ", needs --target"
            print(f"  {n:<20} [{s.family}{flag}] {s.description}")
    return 0


def _download(args) -> int:
    from tssdpa.data import MANIFEST, download

    unknown = [n for n in args.names or [] if n not in MANIFEST]
    if unknown:
        raise UsageError(f"--names: unknown dataset(s) {unknown}; known: {sorted(MANIFEST)}")
    # "" downloaded into the working directory; a file ended in NotADirectoryError, exit 1
    if args.cache_dir is not None and (not args.cache_dir or os.path.isfile(args.cache_dir)):
        raise UsageError(f"--cache-dir: {args.cache_dir!r} is no folder")
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
    """Entry point of the ``tssdpa`` console script.

    A user's mistake ends in one line on stderr and exit code 2, never a traceback; so does
    an unexpected error, with exit code 1 (``TSSDPA_DEBUG=1`` shows its traceback).
    """
    _single_threaded_blas(argv)
    args = parse_args(build_parser(), argv)
    args.argv_line = shlex.join(sys.argv[1:] if argv is None else argv)
    run = {
        "compare": _compare,
        "filter": filter_command.run,
        "methods": _methods,
        "download": _download,
    }[args.command]
    notes, sys.stderr = sys.stderr, DroppedWhenClosed(sys.stderr)  # `2>&1 | head -1`
    try:
        return run(args)
    except UsageError as exc:
        print(f"tssdpa {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tssdpa {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of the output stopped (`... | head`): no more to say
        if argv is None:  # the console command: Python flushes stdout again at exit, so
            # point it at devnull (a caller's own process keeps its stdout)
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                os.close(devnull)
            except (OSError, ValueError):  # stdout is no file descriptor
                pass
        return 141  # as a shell reports a command ended by SIGPIPE
    except Exception as exc:  # noqa: BLE001 -- the command line shows no traceback
        if os.environ.get("TSSDPA_DEBUG"):
            raise
        print(
            f"tssdpa {args.command}: {type(exc).__name__}: {exc} (TSSDPA_DEBUG=1 shows the "
            "traceback)",
            file=sys.stderr,
        )
        return 1
    finally:
        sys.stderr = notes


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
