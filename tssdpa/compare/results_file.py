"""The files of a comparison's output folder: its ``results.csv``, read back for a resumed run
(refused where it is not a results file), appended to cell by cell, and a last row a stopped
run half wrote cut off; the denoised traces and forecast paths the plots read."""

from __future__ import annotations

import csv
import io
import re
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from tssdpa.checks import check_int
from tssdpa.compare.common import safe_name
from tssdpa.data.tasks import DenoiseTask, ForecastTask
from tssdpa.files import replacing

__all__ = [
    "ResumeError",
    "append_csv",
    "check_trace_seed",
    "drop_partial_row",
    "log_note",
    "read_results",
    "save_path",
    "save_trace",
    "stored_trace_seed",
]


class ResumeError(ValueError):
    """``out`` holds rows of this run's cells made with other settings
    (:func:`~tssdpa.compare.harness.cell_settings`),
    or a ``results.csv`` that is not one (:func:`read_results`)."""


#: the columns that name a row's cell (:func:`tssdpa.compare.harness._key`)
_KEY_COLUMNS = ("task", "dataset", "setting", "seed", "method")


def read_results(out) -> pd.DataFrame | None:
    """The rows of ``out/results.csv``, None where there are none; :class:`ResumeError`, naming
    the file and what is wrong, where it is not a results file (a folder, a binary or foreign
    file, a column or a seed missing...): these gave raw KeyError / UnicodeDecodeError..."""
    f = Path(out) / "results.csv"
    if not f.exists():
        return None
    try:
        data = f.read_bytes()
        data = data[: _complete_part(data)]  # not a last row a run stopped writing
        if not data.strip():
            return None
        old = pd.read_csv(io.BytesIO(data))
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        why = f"cannot be read as a CSV ({type(exc).__name__}: {exc})"
    else:
        missing = [c for c in _KEY_COLUMNS if c not in old]
        short = _short_row(data)
        if short:  # pandas filled the missing fields in with NaN: a score read as unknown
            why = short
        elif missing:
            why = f"lacks the column(s) {missing} of a results file"
        else:
            seed = pd.to_numeric(old["seed"], errors="coerce")
            bad = old["seed"][~(np.isfinite(seed) & (seed == seed.round()))]
            if bad.empty:
                return old
            why = f"has seeds that are not integers, e.g. {bad.iloc[0]!r}"
    raise ResumeError(f"out: {f} {why}; use another output folder, or remove or repair that file")


def _complete_part(data: bytes) -> int:
    """The length of the whole rows of CSV bytes: up to the last newline outside quotes
    (pandas quotes a field holding a newline, a comma or a quote, and doubles the quote)."""
    end, inside = 0, False
    for m in re.finditer(rb'["\n]', data):
        if m.group() == b'"':
            inside = not inside
        elif not inside:
            end = m.end()
    return end


def _short_row(data: bytes) -> str:
    """What is wrong with a row whose fields are not the header's, or ''."""
    rows = csv.reader(io.StringIO(data.decode()))
    header = next(rows, [])
    for i, row in enumerate(rows, 1):
        if row and len(row) != len(header):
            return f"is malformed: its row {i} has {len(row)} fields, the header {len(header)}"
    return ""


def log_note(log, message: str) -> None:
    if log is not None:
        log(message)
    else:
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def drop_partial_row(f: Path, log) -> None:
    """Cut off a last row that a run stopped while writing (killed mid-append): cut inside a
    quoted field it made the file unreadable, cut elsewhere it was read with NaN scores as a
    finished cell, and the next row was appended onto it. Its cell runs again."""
    if not f.is_file():
        return
    data = f.read_bytes()
    keep = _complete_part(data)
    if keep < len(data):
        with open(f, "r+b") as fh:
            fh.truncate(keep)
        if data[keep:].strip():
            log_note(log, f"out: {f}: dropped its incomplete last row "
                       f"{data[keep:][:60].decode(errors='replace')!r}... (a run stopped while "
                       "writing it); its cell runs again")  # fmt: skip


def append_csv(path: Path, rows: list[dict]):
    """Append ``rows`` to the CSV at ``path``; rewrite it when the rows bring new columns."""
    if not rows:
        return
    df = pd.DataFrame(rows)
    if path.exists() and path.stat().st_size:
        old_cols = list(pd.read_csv(path, nrows=0).columns)
        if set(df.columns) <= set(old_cols):
            df.reindex(columns=old_cols).to_csv(path, mode="a", header=False, index=False)
            return
        if old_cols != list(df.columns):  # new columns: rewrite atomically
            full = pd.concat([pd.read_csv(path), df], ignore_index=True)
            with replacing(path) as tmp:  # a failed write leaves no .tmp file behind
                full.to_csv(tmp, index=False)
            return
        df.to_csv(path, mode="a", header=False, index=False)
    else:
        df.to_csv(path, index=False)


#: what reading a saved ``.npz`` raises where a stopped run cut it short
_UNREADABLE = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile)


def stored_trace_seed(out: Path, task) -> int | None:
    """The seed of the truth saved in ``out`` for the task's dataset and setting (None where
    there is none; 0 in a folder written before it was stored, the seed traces were saved
    for then): a resumed run saves its traces for that seed, so that a plot never sets a
    method's trace of one seed against the truth of another."""
    kind = "traces" if isinstance(task, DenoiseTask) else "curves"
    base = out / kind / f"{safe_name(task.dataset)}__{safe_name(task.setting)}__truth.npz"
    if not base.exists():
        return None
    try:
        with np.load(base) as f:
            return int(f["seed"]) if "seed" in f.files else 0
    except _UNREADABLE:  # cut short by a stopped run: as if absent, and written again
        return None


def check_trace_seed(trace_seed, tasks: list, out, settings) -> int:
    """A caller's ``trace_seed``, refused (ValueError naming it) where it is not among the
    seeds of ``tasks`` (no trace would be saved) or where ``out`` holds the saved truth of
    one of their (dataset, setting) among ``settings`` for another seed: the truth is saved
    once per (dataset, setting), so this seed's traces were saved beside another seed's
    truth and traces, and one plot set two realisations of the series side by side."""
    trace_seed = check_int(trace_seed, "trace_seed", minimum=0)
    seeds = sorted({int(t.seed) for t in tasks})
    if seeds and trace_seed not in seeds:
        raise ValueError(
            f"trace_seed: {trace_seed} is not among this run's seeds {seeds}, so no trace "
            "would be saved; give one of them"
        )
    for task in tasks if out is not None else ():
        if task.shareable and task.setting in settings:
            stored = stored_trace_seed(Path(out), task)
            if stored is not None and stored != trace_seed:
                raise ValueError(
                    f"trace_seed: {out} holds the truth of seed {stored} for {task.dataset} "
                    f"{task.setting}, and the traces of seed {trace_seed} would be saved "
                    f"beside it; give trace_seed={stored} or none (the stored seed is then "
                    "used), or use another output folder"
                )
    return trace_seed


def _holds(base: Path, truth: dict) -> bool:
    """Whether the saved truth ``base`` exists and is ``truth``. It was kept whenever it
    existed: a cell run again on another series (an edited file or another ``--n``, its old
    rows removed as the refusal advises) saved its traces beside the old series' truth, and
    the plot drew the filters against a signal they never saw."""
    if not base.exists():
        return False
    try:
        with np.load(base) as f:
            return all(k in f.files and np.array_equal(f[k], v, equal_nan=True)
                       for k, v in truth.items())  # fmt: skip
    except _UNREADABLE:  # cut short by a stopped run
        return False


def save_trace(out: Path, task: DenoiseTask, name: str, trace: np.ndarray):
    """The first test samples of a denoised trace (and the clean and noisy input they are
    plotted against, unless saved already)."""
    d = out / "traces"
    d.mkdir(exist_ok=True)
    t0, t1 = task.split.bounds("test")
    n = min(600, t1 - t0)
    stem = f"{safe_name(task.dataset)}__{safe_name(task.setting)}"
    base = d / f"{stem}__truth.npz"
    truth = dict(clean=task.clean[t0 : t0 + n], noisy=task.noisy[t0 : t0 + n])
    if not _holds(base, truth):
        np.savez_compressed(base, **truth, seed=task.seed,
                            columns=np.array(task.columns, dtype=str))  # fmt: skip
    np.savez_compressed(d / f"{stem}__{safe_name(name)}.npz", out=trace[:n])


def save_path(out: Path, task: ForecastTask, name: str, extras: dict):
    """A method's kept forecast path from one test origin (and the truth around it, once)."""
    d = out / "curves"
    d.mkdir(exist_ok=True)
    stem = f"{safe_name(task.dataset)}__{safe_name(task.setting)}"
    if extras.get("path") is not None:
        o = extras["keep_origin"]
        hmax = extras["path"].shape[0]
        base = d / f"{stem}__truth.npz"
        lo = max(0, o + 1 - 3 * hmax)
        truth = dict(history=task.y[lo : o + 1], future=task.y[o + 1 : o + 1 + hmax], origin=o)
        if not _holds(base, truth):
            np.savez_compressed(base, **truth, seed=task.seed,
                                columns=np.array(task.columns, dtype=str))  # fmt: skip
        np.savez_compressed(d / f"{stem}__{safe_name(name)}__path.npz", path=extras["path"])
