"""``tssdpa filter 'logs/*.csv' --out-dir filtered/``: many files, one output each.

Each file is fitted and filtered on its own (or with ``--fit-on FILE`` by one shared fitted
filter) by :func:`tssdpa.batch.filter_files` on a Dask cluster: ``--scheduler threads``
(default; a ``LocalCluster`` of one in-process worker with one thread per core -- numpy
releases the GIL in the kernel), ``processes`` (a ``LocalCluster`` of single-threaded worker
processes) or the address of a running scheduler (``tcp://host:8786``). A progress bar goes
to stderr, the summary table (file, status, rows, chosen parameters, NaN handled, seconds,
error) to stdout. Exit code 0 when every file was filtered, 1 when some failed (each failure
is in the summary with its reason), 2 for a mistake in the arguments.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path

from tssdpa.cli import saved_model
from tssdpa.cli.errors import UsageError, usage_errors
from tssdpa.cli.paths import check_output_file
from tssdpa.cli.settings import check_causal
from tssdpa.files import check_table_name, same_path

__all__ = ["add_arguments", "check_single_file_args", "method_error", "run"]

#: options of the one-file command that the many-file one does not take
_SINGLE_ONLY = {"target": "--target", "horizon": "--horizon", "fit_fraction": "--fit-fraction",
                "in_sample": "--in-sample", "out": "--out", "inplace": "--inplace"}  # fmt: skip
#: options of the many-file command, for the error when one is given without --out-dir
_BATCH_ONLY = {"fit_on": "--fit-on", "scheduler": "--scheduler", "workers": "--workers",
               "summary": "--summary"}  # fmt: skip


def add_arguments(f) -> None:
    """The many-file options of ``tssdpa filter``."""
    f.add_argument(
        "--out-dir",
        default=None,
        help="filter many files: write each output (same name and format as its input) into "
        "this existing folder; the inputs may be glob patterns and Parquet files",
    )
    f.add_argument(
        "--fit-on",
        default=None,
        metavar="FILE",
        help="with --out-dir: fit one filter on FILE and apply it to every input (default: "
        "fit each file on itself)",
    )
    f.add_argument(
        "--scheduler",
        default=None,
        help="with --out-dir: 'threads' (the default: one process, a thread per core), "
        "'processes' (a worker process per core) or a Dask scheduler address "
        "(tcp://host:8786) of a running cluster",
    )
    f.add_argument(
        "--workers",
        type=int,
        default=None,
        help="with --out-dir and threads / processes: the number of threads / worker "
        "processes (default: the CPU cores)",
    )
    f.add_argument(
        "--summary", default=None, help="with --out-dir: also write the summary table to this CSV"
    )
    f.add_argument("--no-progress", action="store_true", help="with --out-dir: no progress bar")


def check_single_file_args(args) -> None:
    """The one-file command refuses the many-file options (they need --out-dir)."""
    given = [flag for name, flag in _BATCH_ONLY.items() if getattr(args, name) is not None]
    if given:
        raise UsageError(f"{', '.join(given)} need(s) --out-dir (filtering many files)")


def method_error(method: str, kind: str) -> UsageError:
    """The error for a ``--method`` that is no ``kind`` ("denoise" or "forecast") method.

    A method of the other task is named as such, with the option that runs it: `tssdpa
    methods` lists both tasks, so "no denoise method 'autoreg'" sent the user to a list that
    holds it.
    """
    from tssdpa.compare import get_method

    other = "forecast" if kind == "denoise" else "denoise"
    try:
        get_method(method, other)
    except (KeyError, ValueError):
        return UsageError(f"--method: no {kind} method {method!r}; `tssdpa methods` lists them")
    if other == "forecast":
        return UsageError(f"--method: {method} is a forecaster: give --horizon H (one file, "
                          "not --out-dir) to forecast with it, or choose a denoiser")  # fmt: skip
    return UsageError(f"--method: {method} is a denoiser: drop --horizon to filter with it, "
                      "or choose a forecaster")  # fmt: skip


def _client(scheduler: str | None, workers: int | None):
    """A dask.distributed Client for --scheduler, or UsageError; the caller closes it."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--out-dir runs on Dask: pip install 'tssdpa[distributed]'") from None
    scheduler = scheduler or "threads"
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be a positive integer, got {workers}")
    n = workers or os.cpu_count() or 1
    # no dashboard on a fixed port (8787 may be taken), no cluster logs for a CLI user
    quiet = dict(dashboard_address=":0", silence_logs=50)
    if scheduler == "threads":
        return Client(LocalCluster(n_workers=1, threads_per_worker=n, processes=False, **quiet))
    if scheduler == "processes":
        return Client(LocalCluster(n_workers=n, threads_per_worker=1, processes=True, **quiet))
    if "://" not in scheduler and ":" not in scheduler:
        raise UsageError(
            f"--scheduler must be 'threads', 'processes' or a scheduler address such as "
            f"tcp://host:8786; got {scheduler!r}"
        )
    if workers is not None:
        raise UsageError("--workers: a running cluster has its own workers; drop --workers")
    _refuse_closed_port(scheduler)
    try:
        return Client(scheduler, timeout=10)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--scheduler: cannot reach {scheduler} ({exc})") from None


def _refuse_closed_port(scheduler: str, wait: float = 2.0) -> None:
    """UsageError where nothing listens at a ``tcp://host:port`` (or ``host:port``) address
    for ``wait`` seconds (a scheduler started just before may still be opening its port):
    Dask's Client would retry a refused connection for its whole 10 s timeout. Other schemes
    (tls, ucx, ...), malformed addresses and unreachable hosts are left to the Client, whose
    own error says what is wrong."""
    import socket
    import time
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
        host, port = parts.hostname, parts.port
    except ValueError:  # a malformed address or a port that is not a number
        return
    if parts.scheme.lower() != "tcp" or not host or port is None:
        return
    deadline = time.monotonic() + wait
    while True:
        try:
            socket.create_connection((host, port), timeout=2).close()
            return
        except ConnectionRefusedError:
            if time.monotonic() >= deadline:
                raise UsageError(
                    f"--scheduler: cannot reach {scheduler} (connection refused for "
                    f"{wait:g} s: no scheduler listens there)"
                ) from None
            time.sleep(0.25)
        except (OSError, ValueError):  # a timeout, an unknown host, a malformed name
            return


def run(args, parse_params) -> int:
    """``tssdpa filter ... --out-dir DIR``; raises :class:`UsageError` for the user's mistakes.

    ``parse_params(text, factory)``: the ``--params`` check of the one-file command.
    """
    given = [
        flag for name, flag in _SINGLE_ONLY.items() if getattr(args, name) not in (None, False)
    ]
    if given:
        raise UsageError(f"{', '.join(given)}: not available with --out-dir (one file only)")
    saved = saved_model.prepare_batch(args)  # --model loaded; --save-model's folder checked
    out_dir = Path(args.out_dir)
    if not out_dir.is_dir():
        raise UsageError(f"--out-dir: {args.out_dir!r} is not an existing folder; create it first")
    if args.fit_on is not None and not Path(args.fit_on).is_file():
        raise UsageError(f"--fit-on: {args.fit_on}: no such file")
    if args.summary is not None:
        with usage_errors(""):
            check_output_file(args.summary, "--summary")
            check_table_name(args.summary, "--summary")
    if args.suffix == "":  # every file failed, its columns already in the table
        raise UsageError("--suffix: empty, the filtered columns would take the input columns' "
                         "names; give a suffix such as '_filtered'")  # fmt: skip
    # the cheap checks above run before the estimators are imported
    import pandas as pd

    from tssdpa.batch import check_params, expand_paths, filter_files
    from tssdpa.compare import get_method

    args.method = args.method or "projection_zp"
    spec = params = None  # --model: nothing to fit (prepare_batch refused --method, --params)
    if saved is None:
        try:
            spec = get_method(args.method, "denoise")
        except ValueError:
            raise method_error(args.method, "denoise") from None
        if spec.requires_target:  # said by filter_files, as 'method: ...', once a cluster ran
            raise UsageError(f"--method: {args.method} fits against a clean reference "
                             "(--target), which --out-dir does not take; choose a "
                             "self-supervised one")  # fmt: skip
        params = parse_params(args.params, spec.resolve_factory())
        check_causal(spec, params, args.method)
        try:  # before a cluster starts
            check_params(spec, params)
        except ValueError as exc:
            raise UsageError(str(exc).replace("params: ", "--params: ", 1)) from None
    try:
        inputs = expand_paths(args.input)  # before a cluster starts: a typo fails fast
    except ValueError as exc:
        raise UsageError(str(exc).replace("paths_or_glob: ", "input: ")) from None
    if args.summary is not None:
        read = [*inputs, *([args.fit_on] if args.fit_on else [])]
        if any(same_path(args.summary, p) for p in read):
            raise UsageError(f"--summary: {args.summary!r} is one of the input files; write "
                             "the summary elsewhere")  # fmt: skip
        outputs = [(out_dir / Path(p).name).resolve() for p in inputs]
        if Path(args.summary).resolve() in outputs:
            raise UsageError(f"--summary: {args.summary!r} is the output of an input file in "
                             "--out-dir; write the summary elsewhere")  # fmt: skip
    est, cols = None, None
    if saved is not None:  # a model saved from an array names no columns: --columns does
        est, cols = saved.est, saved_model.applied_columns(saved, args.columns)
        saved_model.tell(saved, cols, lambda *a: None)
    elif args.save_model is not None:  # the one filter fitted on --fit-on, saved, applied
        est, cols = saved_model.fit_on_and_save(spec, params, args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cluster's start-up notes are not for the user
        client = _client(args.scheduler, args.workers)
    try:
        summary = filter_files(
            inputs, out_dir, method=args.method, params=params, client=client,
            fit_on=args.fit_on, columns=args.columns if cols is None else cols,
            time_column=args.time_column, suffix=args.suffix, progress=not args.no_progress,
            fitted=est,
        )  # fmt: skip
    except ValueError as exc:  # filter_files' argument names -> the command's
        names = {"out_dir": "--out-dir", "paths_or_glob": "input", "fit_on": "--fit-on",
                 "params": "--params"}  # fmt: skip
        text = re.sub(rf"^({'|'.join(names)}): ", lambda m: f"{names[m[1]]}: ", str(exc))
        raise UsageError(text) from None
    finally:
        client.close()
        cluster = getattr(client, "cluster", None)
        if cluster is not None:
            cluster.close()
    shown = summary.drop(columns=["output", "notes"])
    shown["file"] = [Path(f).name for f in shown["file"]]
    shown["seconds"] = shown["seconds"].map(lambda s: "" if pd.isna(s) else f"{s:.2f}")
    with pd.option_context("display.max_colwidth", 200, "display.width", 250):
        print(shown.to_string(index=False))
    for path, notes in zip(summary["file"], summary["notes"]):
        if isinstance(notes, str) and notes:
            for note in notes.splitlines():
                print(f"{Path(path).name}: note: {note}", file=sys.stderr)
    if args.summary is not None:
        from tssdpa.data.tables import write_table

        write_table(summary, args.summary)
    failed = int((summary["status"] != "ok").sum())
    print(
        f"{len(summary) - failed} of {len(summary)} file(s) filtered into {out_dir}"
        + (f"; {failed} failed (reasons above)" if failed else ""),
        file=sys.stderr,
    )
    return 1 if failed else 0
