"""Run methods on tasks: validation-split selection, test scoring, timing, resumable output.

Protocol, for every method (classical or ours) alike:

1. each configuration of the method's search space (at most ``budget``) is fitted on the
   training part only;
2. the configuration with the lowest validation error is chosen (per horizon for forecasting);
3. the chosen, already fitted estimator is scored once on the test part.

The test part never reaches ``fit`` and never influences the choice. One (task, method) cell
is evaluated by :func:`~tssdpa.compare.denoising.evaluate_denoiser` or
:func:`~tssdpa.compare.forecasting.evaluate_forecaster`; :func:`run_tasks` runs the cells,
appends their rows to ``results.csv`` as they finish and skips the cells already there (a
failed one runs again).
"""

from __future__ import annotations

import os
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tssdpa.checks import check_int
from tssdpa.compare.common import progress_bar, quiet_lightning
from tssdpa.compare.denoising import evaluate_denoiser
from tssdpa.compare.forecasting import evaluate_forecaster
from tssdpa.compare.registry import DEFAULT_BUDGET, available_methods, get_method
from tssdpa.compare.results_file import (
    ResumeError,
    append_csv,
    check_trace_seed,
    drop_partial_row,
    log_note,
    read_results,
    save_path,
    save_trace,
    stored_trace_seed,
)
from tssdpa.compare.tables import RUNS_ONCE_COLUMN, aggregate, markdown_tables
from tssdpa.data.tasks import RECORDED, DenoiseTask, ForecastTask
from tssdpa.files import replacing

__all__ = ["ComparisonResults", "ResumeError", "read_results", "run_tasks"]

#: in quick runs, learned denoisers are trained on this noise setting only (and one seed)
QUICK_LEARNED_SETTING = "gaussian@10dB"
#: the results.csv column of :func:`cell_settings`
SETTINGS_COLUMN = "cell_settings"


# ------------------------------------------------------------------------------ runner
def _key(row) -> tuple:
    return (row["task"], row["dataset"], row["setting"], int(row["seed"]), row["method"])


def run_tasks(
    tasks: list,
    methods: list[str] | None = None,
    out: str | Path | None = None,
    budget=DEFAULT_BUDGET,
    progress: bool = True,
    trace_seed: int | None = None,
    trace_settings: tuple = ("gaussian@10dB", RECORDED, "M", "univariate", "multivariate"),
    log=None,
) -> ComparisonResults:
    """Run every method on every task and return a :class:`ComparisonResults`.

    With ``out``, rows are appended to ``out/results.csv`` as each (task, method) cell finishes,
    and cells already there are skipped (resumable); a cell stored with an ``error`` runs
    again, its old rows dropped. Errors in one method are recorded in the ``error`` column and
    the run continues.

    Parameters
    ----------
    tasks : list of DenoiseTask and ForecastTask
    methods : list of str, optional
        Method names (default: every registered method of each task's kind).
    out : str or Path, optional
        Folder for ``results.csv`` and the traces / curves the plots read.
    budget : int or callable
        Configurations tried per method; a callable gives them per task (``task -> int``).
    progress : bool
        Show a progress bar.
    trace_seed, trace_settings
        Denoised traces and forecast paths are saved for this seed (default: the seed of the
        traces already in ``out``, else each dataset's first) and these settings only. A
        ``trace_seed`` not among the tasks' seeds, or other than that of the traces already
        in ``out``, is refused (ValueError): one plot would set two seeds' series side by
        side.
    log : callable, optional
        Receives one message per failed cell: one line, or with ``TSSDPA_DEBUG=1`` in the
        environment its traceback after it.

    Returns
    -------
    ComparisonResults
        The rows of this run, after those already in ``out/results.csv``.
    """
    if methods is not None:
        unknown = [m for m in methods if m not in available_methods()]
        if unknown:
            raise ValueError(
                f"methods: unknown name(s) {unknown}; known: {sorted(set(available_methods()))}"
            )
    if not callable(budget):
        # 0, -1, 2.5 or None ran every cell and recorded each as failed, with "cannot unpack
        # non-iterable NoneType object", "Sample larger than population"...
        budget = check_int(budget, "budget")
    out = Path(out) if out is not None else None
    if trace_seed is not None:
        trace_seed = check_trace_seed(trace_seed, tasks, out, trace_settings)
    done, old = {}, None
    if out is not None:
        old = read_results(out)
        drop_partial_row(out / "results.csv", log)
        out.mkdir(parents=True, exist_ok=True)
        for r in [] if old is None else old.to_dict("records"):
            stored = r.get(SETTINGS_COLUMN)  # a file written before cell_settings: None
            done.setdefault(_key(r), set()).add(stored if isinstance(stored, str) else None)
    cells, skipped, quick_off = [], {}, {}
    # per kind: a dataset's denoising seeds said nothing of its forecasting ones (denoised on
    # seed 0, forecast on 1 and 2: naive, run on seed 0 alone, ran on none, unsaid)
    first: dict = {}
    for t in tasks:
        k = (isinstance(t, DenoiseTask), t.dataset)
        first[k] = min(first.get(k, t.seed), t.seed)
    for task in tasks:
        kind = "denoise" if isinstance(task, DenoiseTask) else "forecast"
        known = available_methods(kind)
        names = known if methods is None else [m for m in methods if m in known]
        for name in names:
            spec = get_method(name, kind)
            first_seed = first[(kind == "denoise", task.dataset)]
            if _runs_once(task, spec) and task.seed != first_seed:
                continue  # deterministic method on a seed-independent series: one run is enough
            if task.quick and spec.family == "learned":
                # quick runs: learned models on one seed and one noise setting only (a
                # recorded noisy / clean pair has no other setting to train on)
                if task.seed != first_seed:
                    continue
                if kind == "denoise" and task.setting not in (QUICK_LEARNED_SETTING, RECORDED):
                    quick_off.setdefault((spec.name, task.dataset), []).append(task.setting)
                    continue
            why = spec.why_skipped(task.ctx)
            if why is not None:  # one note, not an error a cell
                skipped.setdefault((spec.name, task.dataset, task.setting), (why, set()))[1].add(
                    task.seed
                )
                continue
            cells.append((task, spec))
    ran = {(s.name, t.dataset, t.setting) for t, s in cells}
    for (name, dataset, setting), (why, seeds) in skipped.items():
        # where it ran on other seeds, the note names those it did not
        on = (
            f" (seed {', '.join(map(str, sorted(seeds)))})"
            if (name, dataset, setting) in ran
            else ""
        )
        log_note(log, f"{name} skipped on {dataset} {setting}{on}: {why}")
    for (name, dataset), settings in quick_off.items():
        if not any(s.name == name and t.dataset == dataset for t, s in cells):  # else it ran
            given = ", ".join(dict.fromkeys(settings))
            log_note(log, f"{name} skipped on {dataset}: quick runs train learned denoisers on "
                       f"{QUICK_LEARNED_SETTING} only, not among this run's settings "
                       f"({given}); add it or run without quick")  # fmt: skip
    given = {"denoise" if isinstance(t, DenoiseTask) else "forecast" for t in tasks}
    for name in dict.fromkeys(methods or ()):  # one of no task given: no row, and no word
        if not any(name in available_methods(k) for k in given):
            kind = "denoising" if name in available_methods("denoise") else "forecasting"
            log_note(log, f"{name} skipped: a {kind} method, and no {kind} task was given")
    new_rows = []
    if callable(budget):  # checked per task, before any cell runs (_check_resume asks)
        budget_of = lambda task: check_int(budget(task), "budget")  # noqa: E731
    else:
        budget_of = lambda task: budget  # noqa: E731
    _check_resume(cells, done, budget_of, out)
    old = _drop_incomplete_cells(cells, done, old, out, log)
    # a dataset named twice (identical settings: _check_resume refuses others) runs once
    todo = list({_cell_key(t, s): (t, s) for t, s in cells if not _stored(t, s, done)}
                .values())  # fmt: skip
    if any(s.family == "learned" for _, s in todo):
        quiet_lightning()
    bar = progress_bar(progress, len(todo))
    with bar as pb:
        tid = pb.add_task("comparing", total=len(todo)) if pb is not None else None
        for task, spec in todo:
            if pb is not None:
                pb.update(
                    tid, description=f"{task.dataset} {task.setting} s{task.seed} {spec.name}"
                )
            # seed 0 alone by default: a run on seeds 1 and 2 saved no trace and drew no plot
            seed = trace_seed
            if seed is None:  # the seed of the traces already there, else the first
                seed = None if out is None else stored_trace_seed(out, task)
                seed = first[(spec.task == "denoise", task.dataset)] if seed is None else seed
            rows = _run_cell(task, spec, budget_of(task), out, seed, trace_settings, log)
            new_rows += rows
            if out is not None:
                append_csv(out / "results.csv", rows)
            if pb is not None:
                pb.advance(tid)
    frame = pd.DataFrame(new_rows)
    if old is not None:
        frame = pd.concat([old, frame], ignore_index=True) if len(frame) else old
    return ComparisonResults(frame, out)


def _runs_once(task, spec) -> bool:
    """Whether the method runs on the first seed alone, its one run standing for every seed:
    a deterministic (not learned) method on a series the same on every seed. What the task
    says, not its name (a caller's own seeded series runs on every seed); stored with each row
    (:data:`~tssdpa.compare.tables.RUNS_ONCE_COLUMN`) for the tables, which counted seeds by
    the dataset's name and so took a caller's seeded series' one-seed rows for complete."""
    return not task.seeded_data and spec.family != "learned"


def _cell_key(task, spec):
    kind = "denoise" if isinstance(task, DenoiseTask) else "forecast"
    return (kind, task.dataset, task.setting, int(task.seed), spec.name)


def _stored(task, spec, done: dict) -> list:
    """The keys of ``done`` that stand for the cell: its own, or, for a method run once by
    design (:func:`_runs_once`), that of any seed: a resumed run whose first seed was another
    ran it again, and the tables counted the copy as a second seed."""
    key = _cell_key(task, spec)
    if not _runs_once(task, spec):
        return [key] if key in done else []
    return [k for k in done if k[:3] + k[4:] == key[:3] + key[4:]]


def cell_settings(task, spec, budget: int) -> str:
    """What shapes a cell's rows besides its key (task, dataset, setting, seed, method): the
    series' length and split, the budget, ``quick``; for forecasting the horizons, lookback,
    history, metric and the origin cap where it applies; for a caller's own data (a file) the
    fingerprint of its values. Stored with each row, so that a resumed run reuses a cell only
    where they agree."""
    series = task.noisy if isinstance(task, DenoiseTask) else task.y
    sp = task.split
    parts = [f"samples={len(series)}", f"split={sp.train}/{sp.val}/{sp.test}",
             f"budget={budget}", f"quick={int(bool(task.quick))}"]  # fmt: skip
    if isinstance(task, ForecastTask):
        cap = task.max_origins if spec.cost == "high" else None
        h1 = min(task.horizons)  # the validation and test origins (evaluate_forecaster's)
        if cap is not None and all(b - a - h1 + 1 <= cap for a, b in
                                   (sp.bounds("val"), sp.bounds("test"))):  # fmt: skip
            cap = None  # it caps nothing
        parts += [f"horizons={','.join(str(int(h)) for h in sorted(task.horizons))}",
                  f"lookback={task.lookback}", f"history={task.history}",
                  f"metric={task.metric}", f"max_origins={cap}"]  # fmt: skip
    if isinstance(task, DenoiseTask) and task.noise_index is not None:
        # the noise is seeded by the setting's place in its list: the same setting in
        # another list drew other noise
        parts.append(f"noise_index={task.noise_index}")
    if task.fingerprint is not None:  # another file of the same name: other rows
        parts.append(f"data={task.fingerprint}")
    return " ".join(parts)


#: the cell_settings that say which series a cell was scored on, not how a method was run:
#: every method of one table must share them
_DATA_SETTINGS = ("samples", "split", "metric", "noise_index", "data")


def _data_settings(settings: str) -> str:
    return " ".join(t for t in settings.split() if t.split("=", 1)[0] in _DATA_SETTINGS)


def _drop_incomplete_cells(cells, done: dict, old, out, log):
    """Drop from ``out/results.csv`` (and ``old``) the rows of this run's cells that are not
    done, and from ``done``, so that they run again: a cell whose rows record an ``error``
    (counted as done, one transient failure stayed in the tables for good, and a retried
    cell's new score would have been set beside its stale error row), and a forecasting cell
    that lacks some of its horizons' rows (a run stopped while writing them: see
    :func:`drop_partial_row`; counted as done, its missing horizons were never scored).
    Returns ``old`` without them."""
    if old is None:
        return old
    have: dict = {}
    failed = set()
    for r in old.to_dict("records"):
        have.setdefault(_key(r), set()).add(r.get("horizon"))
        if isinstance(r.get("error"), str) and r["error"]:  # read back, "" is NaN
            failed.add(_key(r))
    stored = [(k, t) for t, s in cells for k in _stored(t, s, done)]
    gone_failed = {k for k, _ in stored if k in failed}
    gone_short = {k for k, t in stored if isinstance(t, ForecastTask) and k not in gone_failed
                  and not set(t.horizons) <= have.get(k, set())}  # fmt: skip
    gone = gone_failed | gone_short
    if not gone:
        return old
    drop = np.array([_key(r) in gone for r in old.to_dict("records")], dtype=bool)
    with replacing(out / "results.csv") as tmp:
        old[~drop].to_csv(tmp, index=False)
    for k in gone:
        done.pop(k)
    for what, keys in (("failed", gone_failed), ("missing some horizons' rows", gone_short)):
        if keys:
            log_note(log, f"out: dropped the rows of {len(keys)} cell(s) {what}, e.g. "
                       f"{' '.join(map(str, sorted(keys)[0][1:]))}; they run again")  # fmt: skip
    return old[~drop].reset_index(drop=True)


def _check_resume(cells, done: dict, budget_of, out) -> None:
    """Refuse a run that would mix rows made with other settings (another ``--n``,
    ``--horizons``, ``--budget``, ``--max-origins``...) into one method's figures: where it
    builds a dataset's setting twice with different settings (``--dataset default --dataset
    ar2``), or where ``results.csv`` holds rows of one of its methods on one of its datasets
    and settings, of any seed, made with other settings (skipped as done, or averaged over
    the seeds with this run's). Rows written before the settings were stored (no
    ``cell_settings``) are reused as they are."""
    mine: dict = {}  # (kind, dataset, setting, method) -> {settings: (task, spec)}
    for task, spec in cells:
        kind, dataset, setting, _, method = _cell_key(task, spec)
        mine.setdefault((kind, dataset, setting, method), {}).setdefault(
            cell_settings(task, spec, budget_of(task)), (task, spec))  # fmt: skip
    for group, made in mine.items():
        if len(made) > 1:
            raise ResumeError(
                f"this run builds {group[1]} {group[2]} twice, with other settings "
                f"({' and '.join(repr(m) for m in sorted(made))}): its {group[3]} rows would be "
                "mixed; run them separately, into other output folders"
            )
    stored: dict = {}
    for (kind, dataset, setting, _, method), settings in done.items():
        stored.setdefault((kind, dataset, setting, method), set()).update(settings - {None})
    clashes = [(made, stored[g]) for g, made in mine.items()
               if stored.get(g) and stored[g] != set(made)]  # fmt: skip
    if not clashes:
        _check_same_series(mine, stored, out)
        return
    made, kept = clashes[0]
    (task, spec), this = next(iter(made.values())), next(iter(made))
    _refuse_unrecorded_noise(kept, {this}, f"{task.dataset} {task.setting}", out)
    raise ResumeError(
        f"out: {Path(out) / 'results.csv'} holds rows made with other settings for "
        f"{len(clashes)} of this run's (dataset, setting, method), e.g. {task.dataset} "
        f"{task.setting} {spec.name}: stored "
        f"'{'; '.join(sorted(kept))}', this run '{this}'. Use another output folder or the "
        "stored run's settings, or remove those rows"
    )


def _refuse_unrecorded_noise(kept: set, this: set, cell: str, out) -> None:
    """Refuse stored rows that differ from this run's settings only by lacking its
    ``noise_index``: written before the noise draw was recorded, they cannot be matched, and
    the usual advice, the stored run's settings, names a setting no option gives."""

    def bare(settings):
        return {
            " ".join(t for t in s.split() if not t.startswith("noise_index=")) for s in settings
        }

    if all("noise_index=" not in s for s in kept) and bare(kept) == bare(this) != this:
        raise ResumeError(
            f"out: {Path(out) / 'results.csv'} holds rows of {cell} written before the noise "
            "draw of a setting was recorded (no noise_index in their cell_settings: before "
            "2026-12-05), so whether they drew this run's noise cannot be told. Use another "
            "output folder, or remove those rows to run them again"
        )


def _check_same_series(mine: dict, stored: dict, out) -> None:
    """Refuse rows of another method on the same (dataset, setting) scored on another series
    (another ``--n``, split, metric, noise or file): one table set them side by side, e.g.
    naive on 300 samples of ar2 against autoreg on another 3000, without a word."""
    series: dict = {}
    for (kind, dataset, setting, _), settings in stored.items():
        series.setdefault((kind, dataset, setting), set()).update(map(_data_settings, settings))
    for (kind, dataset, setting, _), made in mine.items():
        this = {_data_settings(m) for m in made}
        kept = series.get((kind, dataset, setting)) or this  # rows without settings: reused
        if kept != this:
            _refuse_unrecorded_noise(kept, this, f"{dataset} {setting}", out)
            raise ResumeError(
                f"out: {Path(out) / 'results.csv'} holds rows of {dataset} {setting} scored "
                f"on another series ('{'; '.join(sorted(kept))}', this run "
                f"'{'; '.join(sorted(this))}'): its tables would set them beside this run's. "
                "Use another output folder or the stored run's settings, or remove those rows"
            )


def _run_cell(task, spec, budget, out, trace_seed, trace_settings, log):
    """The rows of one (task, method) cell; a failure becomes rows with an ``error``."""
    want = (
        out is not None
        and task.shareable
        and task.seed == trace_seed
        and task.setting in trace_settings
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(task, DenoiseTask):
                row, trace = evaluate_denoiser(spec, task, budget, keep_trace=want)
                rows = [row]
                if want:
                    save_trace(out, task, spec.name, trace)
            else:
                rows, extras = evaluate_forecaster(spec, task, budget, keep_path=want)
                if want:
                    save_path(out, task, spec.name, extras)
    except Exception as exc:  # keep going; record the failure
        msg = f"{type(exc).__name__}: {exc}"
        if log is not None:
            log(f"[error] {task.dataset} {task.setting} {spec.name}: {msg}{_traceback_told()}")
        base = {
            "task": "denoise" if isinstance(task, DenoiseTask) else "forecast",
            "dataset": task.dataset,
            "setting": task.setting,
            "seed": task.seed,
            "method": spec.name,
            "family": spec.family,
            "error": msg,
        }
        if isinstance(task, DenoiseTask):
            base.update(noise=task.noise, snr_db=task.snr_db, causal=spec.causal)
            rows = [base]
        else:
            rows = [dict(base, horizon=int(h)) for h in task.horizons]
    for r in rows:
        r.setdefault("error", "")
        r[SETTINGS_COLUMN] = cell_settings(task, spec, budget)
        r[RUNS_ONCE_COLUMN] = _runs_once(task, spec)
    return rows


def _traceback_told() -> str:
    """What follows a failed cell's message in the log: its traceback where the environment
    sets ``TSSDPA_DEBUG``, else how to see it (each failed cell printed ten lines of
    traceback, once per noise setting, where its message says what failed)."""
    if os.environ.get("TSSDPA_DEBUG"):
        return "\n" + traceback.format_exc(limit=3).rstrip("\n")
    return " (TSSDPA_DEBUG=1 shows its traceback)"


@dataclass
class ComparisonResults:
    """Results of a comparison (statsmodels-style results object).

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per (task, dataset, setting, seed, method[, horizon]).
    out : Path or None
        Folder the results were written to.
    """

    frame: pd.DataFrame
    out: Path | None = None

    def aggregate(self, task: str) -> pd.DataFrame:
        """Mean and std over seeds per (dataset, setting, method[, horizon])."""
        return aggregate(self.frame, task)

    def chosen_params(self, task: str) -> pd.DataFrame:
        """The hyperparameters chosen on validation, per cell."""
        df = self.frame[self.frame["task"] == task]
        cols = [
            c
            for c in ("dataset", "setting", "horizon", "seed", "method", "params", "n_configs")
            if c in df
        ]
        return df[cols].reset_index(drop=True)

    def summary(self, task: str | None = None) -> str:
        """Markdown tables of methods × metrics per dataset (best in bold)."""
        tasks = (
            [task]
            if task
            else [
                t
                for t in ("denoise", "forecast")
                if "task" in self.frame and (self.frame["task"] == t).any()
            ]
        )
        return "\n\n".join(markdown_tables(self.frame, t) for t in tasks)

    def __str__(self) -> str:
        return self.summary()
