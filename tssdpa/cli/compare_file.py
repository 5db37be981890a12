"""``tssdpa compare ... --file PATH``: the comparison on the columns of a user's own CSV or
Parquet file.

The file is read with the rules ``tssdpa filter`` uses (:mod:`tssdpa.data.tables`: separators,
a time column found or named, text columns skipped). Its columns become a
:class:`~tssdpa.data.tasks.TableSeries` named by the file's stem, split 60/20/20 in time order
and z-scored with the training part, as the real recordings are: forecasting scores them at
horizons fitted to the length (``--horizons`` to choose); denoising takes them as the clean
signal and adds the comparison's noise settings, or, with ``--target``, scores the recorded
noisy columns against the clean ones named there.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import sys
from pathlib import Path

import numpy as np

from tssdpa.cli.errors import UsageError, usage_errors
from tssdpa.cli.filter import check_target_columns

__all__ = ["add_arguments", "check_arguments", "file_tasks", "MIN_ROWS"]

#: rows a file needs: 60/20/20 leaves validation and test parts of 20 rows or more
MIN_ROWS = 100

#: endings taken off a file's name to make its dataset name (``run1.csv.gz`` -> ``run1``)
_ENDINGS = (".gz", ".bz2", ".xz", ".zip", ".zst", ".tar", ".csv", ".tsv", ".txt", ".parquet",
            ".pq")  # fmt: skip


def add_arguments(c) -> None:
    """The ``--file`` options of the ``compare`` parser ``c``."""
    c.add_argument(
        "--file",
        "-f",
        action="append",
        default=None,
        metavar="PATH",
        help="compare on the numeric columns of your own CSV / Parquet file (repeatable; named "
        "by its stem in the tables; split 60/20/20 in time order, z-scored with the training "
        "part): forecast them, or, for denoise, add the noise settings to them as the clean "
        "signal. With --dataset too, both run",
    )
    c.add_argument(
        "--columns",
        nargs="+",
        default=None,
        help="with --file: the columns to compare on (default: every numeric column but the "
        "time column and the --target ones)",
    )
    c.add_argument(
        "--time-column",
        default=None,
        help="with --file: the column of sample times, never taken as a signal (default: a "
        "column named time / timestamp ..., or one of dates)",
    )
    c.add_argument(
        "--target",
        nargs="+",
        default=None,
        metavar="COLUMN",
        help="with --file, for denoise: clean reference columns, one per compared column; the "
        "compared columns are then the recorded noisy signal (setting 'recorded', no noise "
        "added; the data do not change with the seed)",
    )


def check_arguments(args) -> None:
    """Refuse the ``--file`` options where they would be ignored, and ``--n`` where no
    synthetic signal is compared (a recording -- sunspots, ETT, the IMU ones -- or a file is
    used whole: ``--n`` was ignored without a word)."""
    _check_n(args)
    if args.file is None:
        for flag in ("columns", "time_column", "target"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag.replace('_', '-')} is for --file; give --file PATH")
        return
    if args.target is not None and args.task != "denoise":
        raise UsageError("--target is for denoise (a noisy / clean pair); forecasters fit "
                         "on the series itself: drop --target or compare denoise")  # fmt: skip


def _check_n(args) -> None:
    from tssdpa.data.tasks import DATASETS, DEFAULT_DATASETS, SYNTHETIC

    names = args.dataset or ([] if args.file else ["default"])
    kinds = ("denoise", "forecast") if args.task == "all" else (args.task,)
    sets = {d for n in names for k in kinds for d in (DEFAULT_DATASETS[k] if n == "default"
                                                      else [n])}  # fmt: skip
    if args.n is None or sets & set(SYNTHETIC) or not sets <= set(DATASETS):
        return  # an unknown name is refused as such
    used = ", ".join(sorted(sets)) + (" and " if sets and args.file else "")
    used += "a --file's series" if args.file else ""
    raise UsageError(f"--n sets the length of the synthetic signals ({', '.join(SYNTHETIC)}); "
                     f"{used} {'is' if len(sets) + bool(args.file) == 1 else 'are'} used "
                     "whole: drop --n")  # fmt: skip


def dataset_name(path) -> str:
    """The file's name without its folder and endings: ``logs/run1.csv.gz`` -> ``run1``;
    ``ar2.csv`` -> ``ar2 (file)``, not the name of a built-in dataset."""
    from tssdpa.data.tasks import DATASETS

    name = Path(path).name
    while name.lower().endswith(_ENDINGS) and "." in name[1:]:
        name = name[: name.rindex(".")]
    name = name or Path(path).name
    # the tables know a built-in dataset by its name: a file's rows under "ar2" were counted
    # as the seeded synthetic series' (a method run once '1 seed(s)', out of the headline),
    # and next to --dataset ar2 (or default, whose budget it took) clashed with its rows
    return f"{name} (file)" if name in (*DATASETS, "default") else name


def _series(args, path):
    """(TableSeries, clean target or None) of the file ``path``; :class:`UsageError` naming
    the option behind each mistake."""
    from tssdpa.data.tables import (
        column_values,
        find_time_column,
        numeric_columns,
        read_table,
        sampling_note,
        time_order_note,
    )
    from tssdpa.data.tasks import TableSeries
    from tssdpa.estimators.arrays import check_magnitudes

    with usage_errors("--file: "):
        df = read_table(path)
    with usage_errors("--time-column: "):
        time_col = find_time_column(df, args.time_column)
    with usage_errors("--columns: " if args.columns is not None else f"--file {path}: "):
        cols, _ = numeric_columns(df, args.columns, time_col, args.target or ())
    with usage_errors("--columns: " if args.columns is not None else f"--file {path}: "):
        x, n_nan, _ = column_values(df, cols)
    target, n_nan_clean = None, 0
    if args.target is not None:
        check_target_columns(df, args.target, cols, time_col, path, "compared")
        with usage_errors(f"--file {path}: "):
            target, n_nan_clean, _ = column_values(df, args.target, "--target column")
    for values, names in ((x, cols), (target, args.target)):
        if values is not None:  # refused as filter refuses them: beyond 1e150 or below 1e-150
            with usage_errors(f"--file {path}: "):
                check_magnitudes(values, "column", lower=True,
                                 channel=lambda c, names=names: f"column {names[c]!r}")  # fmt: skip
    if len(x) < MIN_ROWS:
        raise UsageError(f"--file: {path} has {len(x)} rows; a comparison needs at least "
                         f"{MIN_ROWS} (split 60/20/20 into train, validation and test parts, "
                         "in time order)")  # fmt: skip
    _check_training_part(path, x, cols, target, args.target)
    back, out_of_order = time_order_note(df, time_col)
    if out_of_order:  # a log newest first was trained on its latest rows, tested on its earliest
        raise UsageError(f"--file {path}: the 60/20/20 split is in row order, and {back}")
    if back:
        print(f"tssdpa compare: {path}: {back}", file=sys.stderr)
    note = sampling_note(df, time_col, "the comparison")
    if note:
        print(f"tssdpa compare: {path}: {note}", file=sys.stderr)
    if n_nan or n_nan_clean:  # inf cells are NaN now too; the --target ones went unsaid
        where = f" ({n_nan_clean} of them in --target columns)" if n_nan_clean else ""
        print(f"tssdpa compare: {path}: {n_nan + n_nan_clean} missing or infinite cell(s)"
              f"{where}, left missing", file=sys.stderr)  # fmt: skip
    # of the names and values compared, not of the file's bytes: a column added elsewhere in
    # the file changes no row, an edited value does
    digest = hashlib.sha256(repr([list(cols), list(args.target or ())]).encode())
    for values in (x, target):
        if values is not None:
            digest.update(np.ascontiguousarray(values, dtype="<f8").tobytes())
    series = TableSeries(dataset_name(path), x, tuple(cols), "sha256:" + digest.hexdigest()[:16])
    return series, target


def _check_training_part(path, x, cols, target, target_cols) -> None:
    """Refuse a column with no value in the training part (the first 60% of the rows): it is
    z-scored with that part's statistics, so every value came out NaN, every cell failed and
    the run ended in "KeyError: 'Column not found: snr_gain_db'"."""
    from tssdpa.data.real import Split

    n_train = Split.fractions(len(x), 0.6, 0.2).train
    for values, names, option in ((x, cols, "--file"), (target, target_cols, "--target")):
        if values is None:
            continue
        empty = [c for c, known in zip(names, np.isfinite(values[:n_train]).any(axis=0))
                 if not known]  # fmt: skip
        if empty:
            raise UsageError(f"{option}: column(s) {empty} of {path} have no value in the "
                             f"training part (its first {n_train} rows), whose statistics "
                             "scale them; drop them with --columns or fill them in")  # fmt: skip


def file_tasks(args, kinds: list[str], seeds: tuple) -> list:
    """The tasks of each of ``args.file`` for each of ``kinds``."""
    from tssdpa.data.tasks import denoise_tasks, forecast_tasks, recorded_denoise_tasks

    tasks, named = [], {}
    for path in args.file:
        made = _tasks(args, path, kinds, seeds, denoise_tasks, forecast_tasks,
                      recorded_denoise_tasks)  # fmt: skip
        name, values = made[0].dataset, made[0].fingerprint
        first, seen = named.setdefault(name, (path, values))
        if seen != values:  # refused later as "builds run univariate twice", naming no file
            raise UsageError(f"--file: {first} and {path} are both named {name!r} in the "
                             "tables (a file's name without its folder and endings) but hold "
                             "other values; rename one, or compare them into separate "
                             "output folders")  # fmt: skip
        tasks += made
    return tasks


def _tasks(args, path, kinds, seeds, denoise_tasks, forecast_tasks, recorded_denoise_tasks):
    from tssdpa.data.noise import ConstantChannelsError

    series, target = _series(args, path)
    tasks = []
    for kind in kinds:
        # a constant column (no noise level gives an SNR), horizons too long for the parts
        with usage_errors("--" if args.horizons and kind == "forecast" else f"--file {path}: "):
            try:
                if kind == "denoise" and target is not None:
                    made = recorded_denoise_tasks(series, target, seeds=seeds, quick=args.quick)
                elif kind == "denoise":
                    made = denoise_tasks(series, seeds=seeds, quick=args.quick)
                else:
                    made = forecast_tasks(
                        series, seeds=seeds, horizons=args.horizons,
                        max_origins=args.max_origins, quick=args.quick,
                    )  # fmt: skip
            except ConstantChannelsError as exc:  # "drop them": the command has --columns
                advised = _constant_advice(exc, series.columns)
                raise ValueError(_named(str(advised), series.columns)) from None
            except ValueError as exc:  # "channel(s) [2]": the user knows the column as 'c'
                raise ValueError(_named(str(exc), series.columns)) from None
            tasks += made
    return tasks


def _constant_advice(exc, columns):
    """The error ``exc`` of constant channels (:class:`~tssdpa.data.noise.ConstantChannelsError`)
    with the option that leaves them out, for the advice of the Python API ("add noise of a
    set std"), which no option of the command gives."""
    others = [c for i, c in enumerate(columns) if i not in exc.channels]
    advice = (
        f"leave them out: --columns {shlex.join(map(str, others))}"
        if others
        else "no column varies"
    )
    return type(exc)(exc.channels, exc.snr_db, advice)


def _named(message: str, columns) -> str:
    """``message`` with its "channel(s) [2, 3]" as the columns' names."""

    def names(m: re.Match) -> str:
        found = [columns[int(i)] for i in m[1].split(",")]
        return f"column(s) {found}"

    return re.sub(r"channel\(s\) \[(\d+(?:, \d+)*)\]", names, message)
