"""Many log files at once: fit and filter each file, on a Dask cluster or in this process.

:func:`filter_files` takes files or glob patterns (CSV or Parquet), fits a denoiser on each
file's numeric columns (or applies one filter fitted once, ``fit_on``) and writes one output
per input, with the same name, into ``out_dir``: the original columns and the filtered ones
next to them (``<col>_filtered``), as ``tssdpa filter`` does for one file. The work goes to a
``dask.distributed.Client`` when given -- a ``LocalCluster`` on this machine or a scheduler
address for a real cluster -- and runs in this process otherwise.

A file that fails (unreadable, no numeric column, a column with no finite value, ...) is
reported with its reason and skipped; the others finish. Outputs are written to a temporary
name in ``out_dir`` and renamed when complete (``os.replace``, atomic on one file system), so
no half-written file is ever left under an output name.

Needs the optional extra ``tssdpa[distributed]`` (dask[distributed], pyarrow) for a client
and for Parquet; CSV files in this process need neither.
"""

from __future__ import annotations

import glob
import os
import time
import uuid
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from tssdpa.data.tables import (
    check_new_columns,
    column_named,
    column_values,
    find_time_column,
    numeric_columns,
    read_table,
    sample_times,
    sampling_note,
    skipped_note,
    write_table,
)
from tssdpa.estimators.input_notes import (
    as_time_column,
    collected,
    library_warnings,
    notes_to_tell,
)
from tssdpa.estimators.report import (
    chosen_params,
    chosen_settings,
    fitted_models,
    horizon_settings,
    settings_text,
)
from tssdpa.files import same_path

__all__ = ["SUMMARY_COLUMNS", "expand_paths", "filter_files", "filter_table", "read_table"]

#: the columns of the summary :func:`filter_files` returns, one row per input file
SUMMARY_COLUMNS = (
    "file", "output", "status", "rows", "params", "nan_handled", "notes", "seconds", "error"
)  # fmt: skip
_SUFFIXES = (".csv", ".parquet", ".pq")
#: a CSV compressed as ``tssdpa filter`` reads and writes one (log.csv.gz)
_COMPRESSED = (".gz", ".bz2", ".xz", ".zip")


def _is_table(path) -> bool:
    """A CSV or Parquet name; a CSV may be compressed (``.csv.gz``)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if len(suffixes) >= 2 and suffixes[-1] in _COMPRESSED:
        return suffixes[-2] == ".csv"
    return bool(suffixes) and suffixes[-1] in _SUFFIXES


def _first_line(exc) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _chosen(est, params, names) -> str:
    """What ``est`` chose, one line: each fit's settings with where it applies
    (:func:`~tssdpa.estimators.report.chosen_settings`) and how many candidates a fit that
    averages its best ones averages, else the ``params`` given."""
    if not chosen_settings(est, names):
        return settings_text(params)
    parts = []
    for where, model in fitted_models(est, names):
        text = " | ".join(f"{w}: {settings_text(p)}" if w else settings_text(p)
                          for w, p in horizon_settings(where, chosen_params(model)))  # fmt: skip
        mixture = getattr(model, "mixture_", None)  # a zero-phase fit averages its best
        parts.append(f"{text} (the best of {len(mixture)} averaged)" if mixture else text)
    return " | ".join(parts)


def _check_suffix(suffix) -> None:
    """The filtered columns' suffix: a non-empty string (None wrote ``aNone``, and an empty
    one failed every file, its columns already in the table)."""
    if not isinstance(suffix, str):
        raise TypeError(f"suffix must be a string, got {type(suffix).__name__} {suffix!r}")
    if not suffix:
        raise ValueError("suffix: empty, the filtered columns would take the input columns' "
                         "names; give a suffix such as '_filtered'")  # fmt: skip


def filter_table(df, est, fit=True, columns=None, time_column=None, suffix="_filtered"):
    """Fit ``est`` on the numeric columns of ``df`` (unless ``fit`` is False) and add the
    filtered columns ``<col><suffix>``.

    Returns ``(out, info)``: the new DataFrame and ``{"columns", "rows", "nan_handled",
    "notes"}``, ``notes`` the notes on the data (held readings, glitches, spikes:
    :mod:`tssdpa.estimators.input_notes`) told with the columns' names, the columns skipped
    (:func:`~tssdpa.data.tables.skipped_note`), and the library's
    warnings of the fit and filter (:class:`~tssdpa.checks.LibraryWarning`: sample times that
    make a tau filter return the columns unchanged), a list of strings; other warnings are
    silenced.
    Raises ``ValueError`` naming what is wrong with the table.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from tssdpa.filters import ProjectionFilter
    >>> df = pd.DataFrame({"time": np.arange(200.0), "a": np.sin(np.arange(200) / 9.0)})
    >>> out, info = filter_table(df, ProjectionFilter(window=[8], embedding=[1], degree=[0]))
    >>> out.columns.tolist(), info["columns"]
    (['time', 'a', 'a_filtered'], ['a'])
    """
    _check_suffix(suffix)
    time_column = find_time_column(df, time_column)
    cols, skipped = numeric_columns(df, columns, time_column)
    check_new_columns(df, [f"{c}{suffix}" for c in cols], "give another suffix")
    x, n_nan, n_inf = column_values(df, cols)
    with library_warnings() as warned:  # as tssdpa filter tells them (tau: x unchanged)
        times = sample_times(est, df, time_column)  # a filter with tau: the time column
        kw = {} if times is None else {"timestamps": times}
        try:  # "x channel 1 ...": by the column's name, as tssdpa filter tells it
            with collected(quiet=True) as fit_notes:  # notes on the data (per thread)
                if fit:
                    est.fit(x, **kw)
            with collected(quiet=True) as filter_notes:
                y = np.asarray(est.filter(x, **kw), dtype=np.float64).reshape(x.shape)
        except ValueError as exc:
            named = column_named(str(exc), cols)
            if named == str(exc):
                raise
            raise ValueError(named) from None
    out = df.copy()
    for i, c in enumerate(cols):
        out[f"{c}{suffix}"] = y[:, i]
    notes = list(notes_to_tell(fit_notes, filter_notes, cols))
    if skipped:  # a column with one text cell left the output without a word in the summary
        notes.append(skipped_note(skipped, df))
    notes += as_time_column(warned, time_column)  # the user gave the column, not timestamps=
    sampling = sampling_note(df, time_column) if times is None else None
    if sampling:  # repeated times, steps backwards, dropouts: rows taken as equally spaced
        notes.append(sampling)
    return out, {"columns": cols, "rows": len(df), "nan_handled": n_nan + n_inf, "notes": notes}


def _filter_one(path: str, target: str, method: str, params: dict, fitted, options: dict):
    """One file, end to end; never raises: the summary row says what happened."""
    t0 = time.perf_counter()
    row = dict.fromkeys(SUMMARY_COLUMNS)
    row.update(file=path, output=None, status="failed", nan_handled=None, error="")
    try:
        df = read_table(path)
        if fitted is not None:
            est = fitted
        else:
            from tssdpa.compare import get_method

            est = get_method(method, "denoise").build(**params)
        out, info = filter_table(df, est, fit=fitted is None, **options)
        write_table(out, target)
        chosen = _chosen(est, params, info["columns"])
        row.update(output=target, status="ok", rows=info["rows"], params=chosen,
                   nan_handled=info["nan_handled"], notes="\n".join(info["notes"]))  # fmt: skip
    except Exception as exc:  # noqa: BLE001 -- one bad file must not stop the others
        row["error"] = _first_line(exc)
    row["seconds"] = time.perf_counter() - t0
    return row


def fitted_columns(fitted, columns, argument: str = "columns", model: str = "the fitted filter"):
    """The columns a filter fitted on a DataFrame applies to: those it was fitted on, in their
    order; ``columns`` (the ``argument``: a name or names), where given, must name the same
    ones, else a ValueError naming it and the ``model``; ``columns`` where it records none.
    By position, a file with the columns in another order had each filtered with the other's
    scale, and one more column failed. The rule of ``filter_files(fitted=...)`` and of
    ``tssdpa filter --model`` (``cli.saved_model.applied_columns``)."""
    names = fitted.__dict__.get("feature_names_in_")
    if names is None or not all(isinstance(c, str) for c in names):
        return columns
    given = [columns] if isinstance(columns, str) else columns
    if given is not None and sorted(given) != sorted(names):
        raise ValueError(f"{argument} {list(given)}: {model} was fitted on the columns "
                         f"{list(names)}; give those (or leave out {argument})")  # fmt: skip
    return list(names)


def expand_paths(paths_or_glob) -> list[str]:
    """The input files: glob patterns expanded (sorted), duplicates dropped, order kept.

    A pattern matching no file raises ``ValueError`` unless it is a file's name (``run[1].csv``,
    as the shell leaves it); a named file that does not exist is
    kept (its summary row reports it).

    Examples
    --------
    >>> expand_paths(["b.csv", "a.csv", "b.csv"])
    ['b.csv', 'a.csv']
    """
    items = [paths_or_glob] if isinstance(paths_or_glob, (str, os.PathLike)) else paths_or_glob
    out: list[str] = []
    for item in items:
        item = str(item)
        if glob.has_magic(item):
            matched = sorted(glob.glob(item))
            if not matched and os.path.isfile(item):  # run[1].csv: as the shell, a name
                matched = [item]  # that matches no file is the file of that name
            if not matched:
                raise ValueError(f"paths_or_glob: {item!r} matches no file")
            out += [m for m in matched if Path(m).is_file()]
        else:
            out.append(item)  # a missing file is reported in its summary row
    if not out:
        raise ValueError("paths_or_glob: no input file")
    first: dict[str, str] = {}  # a file named twice is filtered once, however spelt
    for p in out:  # (./a.csv, its absolute path, a link to it)
        first.setdefault(os.path.realpath(p), p)
    return list(first.values())


def check_params(spec, params: dict) -> None:
    """``ValueError`` ('params: ...') where the method ``spec`` refuses the values of
    ``params`` (sigma=-1): once, before any file (each file failed on its own)."""
    validate = getattr(spec.build(**params), "_validate_params", None)
    try:
        if validate is not None:
            validate()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"params: {exc}") from None


def _check_writable(out_dir: Path) -> None:
    """``ValueError`` naming ``out_dir`` where no file can be written in it (read-only, not
    a real folder like /proc): each file failed on its own, naming a temporary file the user
    never gave ('.log0.csv.7d759210.partial')."""
    probe = out_dir / f".tssdpa-write-check.{uuid.uuid4().hex[:8]}"
    try:
        probe.open("x").close()
    except OSError as err:
        raise ValueError(f"out_dir: cannot write files in {str(out_dir)!r} "
                         f"({err.strerror or err})") from None  # fmt: skip
    probe.unlink(missing_ok=True)


def _targets(paths, out_dir: Path, suffix: str, fit_on=None) -> list[str]:
    names = [Path(p).name for p in paths]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"paths_or_glob: several inputs are named {dup}; each output takes its "
                         "input's name in the output folder, so the names must differ")  # fmt: skip
    targets = []
    for p in paths:
        if not _is_table(p):
            raise ValueError(f"paths_or_glob: {p} is not a .csv (.csv.gz, .bz2, .xz, .zip) or "
                             ".parquet file")  # fmt: skip
        t = out_dir / Path(p).name
        if same_path(t, p):
            raise ValueError(f"out_dir: {out_dir} holds the input {p}; writing there would "
                             "overwrite it -- choose another folder")  # fmt: skip
        if fit_on is not None and same_path(t, fit_on):
            raise ValueError(f"out_dir: the output of {p} would overwrite the fit_on file "
                             f"{fit_on} -- choose another folder")  # fmt: skip
        targets.append(str(t))
    return targets


def filter_files(
    paths_or_glob,
    out_dir,
    method="projection",
    params=None,
    client=None,
    fit_on=None,
    columns=None,
    time_column=None,
    suffix="_filtered",
    progress=True,
    fitted=None,
) -> pd.DataFrame:
    """Fit and filter every file independently (or with one shared fitted filter).

    Parameters
    ----------
    paths_or_glob : str, Path, or list of them
        Files and glob patterns (``"logs/*.csv"``), CSV (compressed too, as ``tssdpa filter``
        reads one: ``.csv.gz``, ``.bz2``, ``.xz``, ``.zip``) or Parquet. A pattern matching no file
        raises ``ValueError``; a listed file that does not exist is a failed row.
    out_dir : str or Path
        An existing folder; each output has its input's name and format.
    method : str
        A denoiser of ``tssdpa methods`` (default ``"projection"``: the causal projection
        filter with every setting chosen by its fit).
    params : dict, optional
        Constructor arguments of the method.
    client : dask.distributed.Client, optional
        Where to run: one task per file on the client's cluster. None runs every file in
        this process, one after the other.
    fit_on : str or Path, optional
        Fit one filter on this file (in this process) and apply it to every file, instead of
        fitting each file on itself.
    columns : list of str, or str, optional
        Columns to filter (default: every numeric column but the time column); a string is
        one column's name (:func:`~tssdpa.data.tables.numeric_columns`).
    time_column : str, optional
        The column of sample times, copied through and never filtered (default: one named
        time / timestamp ..., or a datetime column).
    suffix : str
        The filtered ``<col>`` goes to ``<col><suffix>``.
    progress : bool
        Show a progress bar (rich, on stderr).
    fitted : estimator, optional
        A denoiser fitted already (``tssdpa filter --model``'s, loaded): applied to every file,
        none fitted (``method``, ``params`` and ``fit_on`` unused), on the columns it was
        fitted on, by name, where it records them (a fit on a DataFrame; ``columns``, where
        given, must name the same), else on ``columns``.

    Returns
    -------
    pandas.DataFrame
        One row per input file, in input order: ``file``, ``output`` (None when failed),
        ``status`` ("ok" or "failed"), ``rows``, ``params`` (the settings used, those ``fit``
        chose), ``nan_handled`` (missing or infinite cells treated as missing), ``notes``
        (what ``fit`` and ``filter`` noticed in the data, with the columns' names: held
        readings, glitches, spikes; the columns skipped, text among numbers; and the library's
        warnings, as sample times that make a tau filter return the columns unchanged; one per
        line, "" for none), ``seconds``, ``error`` (the reason of a failure, else "").

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> src, dst = tempfile.mkdtemp(), tempfile.mkdtemp()
    >>> for i in range(2):
    ...     np.savetxt(os.path.join(src, f"log{i}.csv"), np.sin(np.arange(300) / (5.0 + i)),
    ...                header="a", comments="")
    >>> summary = filter_files(os.path.join(src, "*.csv"), dst, progress=False)
    >>> summary["status"].tolist(), sorted(os.listdir(dst))
    (['ok', 'ok'], ['log0.csv', 'log1.csv'])
    """
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise ValueError(f"out_dir: {str(out_dir)!r} is not an existing folder")
    _check_writable(out_dir)
    if params is not None and not isinstance(params, dict):  # dict([1]) said "sequence element"
        raise TypeError(f"params must be a dict of the method's arguments, got "
                        f"{type(params).__name__} {params!r:.80}")  # fmt: skip
    params = dict(params or {})
    _check_suffix(suffix)
    paths = expand_paths(paths_or_glob)
    targets = _targets(paths, out_dir, suffix, fit_on)
    options = dict(columns=columns, time_column=time_column, suffix=suffix)
    if fitted is not None:
        options["columns"] = fitted_columns(fitted, columns)
        args = [(p, t, None, {}, fitted, options) for p, t in zip(paths, targets)]
        return _summary_table(_run(args, client, progress))
    from tssdpa.compare import get_method
    from tssdpa.estimators.base import unknown_parameters

    spec = get_method(method, "denoise")  # ValueError listing the methods
    factory = spec.resolve_factory()  # an ImportError now, not once per file
    unknown, valid = unknown_parameters(factory, params)
    if unknown:  # once, not as every file's failure
        what = getattr(factory, "__name__", factory)
        raise ValueError(f"params: unknown parameter(s) {unknown} for {what}; "
                         f"valid: {', '.join(valid)}")  # fmt: skip
    if spec.requires_target:
        raise ValueError(f"method: {method} fits against a clean reference; choose a "
                         "self-supervised one")  # fmt: skip
    check_params(spec, params)
    if fit_on is not None:
        fitted = spec.build(**params)
        try:
            _, info = filter_table(read_table(fit_on), fitted, **options)
        except ValueError as exc:
            raise ValueError(f"fit_on: {fit_on}: {exc}") from None
        # every file is filtered on the columns the shared filter was fitted on
        options["columns"] = info["columns"]
    args = [(p, t, method, params, fitted, options) for p, t in zip(paths, targets)]
    return _summary_table(_run(args, client, progress))


def _summary_table(rows: list[dict]):
    """The summary DataFrame of :func:`filter_files` from its rows (one per file)."""
    summary = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    for c in ("rows", "nan_handled"):  # integers, with <NA> for a failed file
        summary[c] = summary[c].astype("Int64")
    summary["error"] = summary["error"].fillna("")
    summary["output"] = summary["output"].astype(object).where(summary["output"].notna(), None)
    return summary


def _run(args, client, progress: bool) -> list[dict]:
    from rich.console import Console
    from rich.progress import Progress

    rows: list[dict | None] = [None] * len(args)
    # each file's table tells the library's warnings in its notes (library_warnings); what
    # is warned in this process outside a table (the scheduler's, a worker's start) is
    # silenced here, for the whole run.
    # On stderr: standard output is the caller's (the command prints the summary there).
    with (
        warnings.catch_warnings(),
        Progress(console=Console(stderr=True), disable=not progress) as bar,
    ):
        warnings.simplefilter("ignore")
        task = bar.add_task("filtering", total=len(args))
        if client is None:
            for i, a in enumerate(args):
                rows[i] = _filter_one(*a)
                bar.advance(task)
            return rows
        from dask.distributed import as_completed

        fitted = args[0][4]
        if fitted is not None:  # ship the shared filter to the workers once
            fitted = client.scatter(fitted, broadcast=True)
        futures = {
            client.submit(_filter_one, p, t, m, prm, fitted, opt, pure=False, key=_key(p)): i
            for i, (p, t, m, prm, _, opt) in enumerate(args)
        }
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                rows[i] = fut.result()
            except Exception as exc:  # noqa: BLE001 -- a lost worker, a failed transfer
                rows[i] = dict.fromkeys(SUMMARY_COLUMNS)
                rows[i].update(file=args[i][0], status="failed", error=_first_line(exc))
            bar.advance(task)
    return rows


def _key(path: str) -> str:
    """A task name the dashboard shows: the file's name, made unique."""
    return f"filter-{Path(path).name}-{uuid.uuid4().hex[:8]}"
