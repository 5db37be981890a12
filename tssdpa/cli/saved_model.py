"""``tssdpa filter --save-model DIR`` and ``--model DIR``: keep a fitted filter, apply it later.

``--save-model DIR`` writes the estimator ``fit`` made to the folder ``DIR`` with the library's
own format (:mod:`tssdpa.estimators.persistence`: ``config.json`` and ``arrays.safetensors``,
nothing pickled), with the names of the columns it was fitted on. ``--model DIR`` reads one
back -- its class looked up among the estimators of ``tssdpa methods``, never imported by the
name the file gives -- and applies it to the same columns of another file, without a fit.

Every refusal is one line naming the option (exit 2): a folder that is not a saved model, a
damaged or edited file (the loader's own message), a model of a class this command does not
know, a file without the fitted columns, and options that mean nothing without a fit.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

from tssdpa.cli.errors import UsageError, usage_errors
from tssdpa.cli.paths import check_output_folder
from tssdpa.files import PARTIAL

__all__ = ["Saved", "add_arguments", "check_saveable", "model_columns", "prepare", "save"]

#: what a saved model's folder holds (:mod:`tssdpa.estimators.persistence`): such a folder
#: may be overwritten by ``--save-model``; a folder holding anything else may not
MODEL_FILES = {"config.json", "arrays.safetensors", "model.safetensors"}
#: options that choose or steer a fit, meaningless with ``--model`` (no fit)
_FIT_ONLY = {"method": "--method", "target": "--target", "fit_fraction": "--fit-fraction",
             "save_model": "--save-model", "fit_on": "--fit-on",
             "in_sample": "--in-sample"}  # fmt: skip


def add_arguments(f) -> None:
    """The two options of ``tssdpa filter``."""
    f.add_argument(
        "--save-model",
        default=None,
        metavar="DIR",
        help="after the fit, save the fitted filter (or forecaster) to the folder DIR (new, "
        "empty, or holding a saved model, which is replaced), with the columns it was "
        "fitted on; apply it to other files with --model DIR. With --out-dir it needs "
        "--fit-on FILE (the one filter fitted there)",
    )
    f.add_argument(
        "--model",
        default=None,
        metavar="DIR",
        help="apply the filter (or forecaster) saved in DIR by --save-model to the columns "
        "it was fitted on, without fitting (no --method, --params, --target, "
        "--fit-fraction); a forecaster fitted for a horizon forecasts it, or a smaller "
        "--horizon (one that records none, autoreg, needs --horizon)",
    )


@dataclass
class Saved:
    """A loaded ``--model``: the estimator, ``"denoise"`` or ``"forecast"``, the name its
    notes go under, the columns it was fitted on (None: not recorded), its fitted horizon."""

    est: object
    kind: str
    method: str
    columns: list | None
    horizon: int | None
    path: str


def _estimator_class(kind: str):
    """The class named ``kind`` among the registered methods' factories, and the method
    names built from it; ``(None, [])`` for any other name (nothing is imported by it)."""
    from tssdpa.compare import available_methods, get_method

    cls, names = None, []
    for task in ("denoise", "forecast"):
        for name in available_methods(task):
            spec = get_method(name, task)
            factory = spec.factory
            own = factory.rsplit(":", 1)[-1] if isinstance(factory, str) else (
                getattr(factory, "__name__", None))  # fmt: skip
            if own != kind:
                continue
            try:
                factory = spec.resolve_factory()
            except ImportError:
                continue
            if isinstance(factory, type) and factory.__name__ == kind:
                cls = factory
                names.append((name, spec.fixed))
    return cls, names


def _partial_of_model(name: str) -> bool:
    """Whether ``name`` is the temporary file of a model file (:data:`tssdpa.files.PARTIAL`)
    that a save killed half-way left: its folder may be saved over too (it was "a folder of
    other files")."""
    m = PARTIAL.fullmatch(name)
    return m is not None and m["name"] in MODEL_FILES


def check_saveable(factory, method: str) -> None:
    """``--save-model`` with a method whose estimator has no save format: refused before the
    fit (its ``save`` raises ``NotImplementedError``)."""
    if not (getattr(factory, "_fitted_schema", None) or getattr(factory, "_array_schema", None)):
        raise UsageError(f"--save-model: --method {method} has no save format (only the "
                         "methods whose estimators declare one can be saved: projection, "
                         "projection_zp, wiener_fir, autoreg, dlinear...)")  # fmt: skip


def check_folder(path: str) -> None:
    """``--save-model DIR`` before the fit: a new folder in an existing one, an empty one, or
    one holding a saved model or what a save killed half-way left of one; never a file, nor a
    folder of other files, nor a place it cannot write in."""
    p = Path(path)
    if p.is_symlink() and not p.exists():  # found by save, after the fit
        raise UsageError(f"--save-model: {path!r} is a link to {os.readlink(p)}, which does "
                         "not exist (a folder not made, or not mounted)")  # fmt: skip
    if p.is_dir():
        entries = {e.name for e in p.iterdir()}
        others = {n for n in entries if n not in MODEL_FILES and not _partial_of_model(n)}
        if others:
            raise UsageError(f"--save-model: {path!r} is a folder of other files, not a "
                             "saved model; give a new or empty folder")  # fmt: skip
    # a file, a parent that is a file or missing (it was made, with its parents), no
    # permission: as --out's
    with usage_errors(""):
        check_output_folder(path, "--save-model", make_folders=False)


def save(est, cols, path: str) -> None:
    """Save the fitted ``est`` to ``path`` with its columns' names; ``UsageError`` if not."""
    est.feature_names_in_ = list(cols)  # fitted on their values: the names applied by
    try:
        est.save(path)
    except NotImplementedError:
        raise UsageError(f"--save-model: {type(est).__name__} has no save format") from None
    except (ValueError, TypeError, OSError) as exc:
        raise UsageError(f"--save-model: {str(exc).splitlines()[0]}") from None
    print(f"saved the fitted {type(est).__name__} (columns {list(cols)}) to {path}; apply it "
          f"with --model {path}", file=sys.stderr)  # fmt: skip


def _load(path: str) -> Saved:
    """The model saved at ``path`` (``UsageError`` naming --model where there is none)."""
    from tssdpa.estimators.base import Forecaster
    from tssdpa.estimators.persistence import UncheckedFileWarning

    p = Path(path)
    if p.is_file() and p.name == "config.json":  # tab completion's file of the folder
        p = p.parent
    if not p.exists():
        raise UsageError(f"--model: {path!r}: no such folder")
    if not p.is_dir():
        raise UsageError(f"--model: {path!r} is a file; give the folder --save-model wrote")
    cfg_path = p / "config.json"
    if not cfg_path.is_file():
        raise UsageError(f"--model: {path!r} is not a saved model (no config.json; "
                         "--save-model DIR writes one)")  # fmt: skip
    try:
        kind = json.loads(cfg_path.read_text()).get("kind")
    except (ValueError, UnicodeDecodeError, RecursionError, AttributeError, OSError):
        kind = None  # the loader says what is wrong with the file
    cls, names = _estimator_class(kind) if isinstance(kind, str) else (None, [])
    if isinstance(kind, str) and cls is None:
        raise UsageError(f"--model: {path!r} holds a {kind!r}, which is not an estimator of "
                         "`tssdpa methods`; tssdpa filter applies those only")  # fmt: skip
    if cls is None:
        from tssdpa.estimators.base import Estimator

        cls = Estimator  # anything: the loader refuses the file first, naming what is wrong
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UncheckedFileWarning)
        try:
            est = cls.load(p)
        except (ValueError, TypeError, KeyError, OSError) as exc:
            text = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(f"--model: {text}") from None
    for w in caught:
        if issubclass(w.category, UncheckedFileWarning):
            print(f"--model: note: {w.message}", file=sys.stderr)
    params = est.get_params()
    method = next((n for n, fixed in names if all(params.get(k) == v for k, v in fixed.items())),
                  type(est).__name__)  # fmt: skip
    forecast = isinstance(est, Forecaster)
    cols = est.__dict__.get("feature_names_in_")
    horizon = est._direct_horizon() if forecast else None
    return Saved(est, "forecast" if forecast else "denoise", method,
                 None if cols is None else list(cols), horizon, path)  # fmt: skip


def prepare(args) -> Saved | None:
    """Check ``--save-model`` / ``--model`` before anything is read or fitted; returns the
    loaded ``--model`` (and sets ``args.horizon`` to its horizon), or None without one."""
    if args.model is None:
        if args.save_model is not None:
            check_folder(args.save_model)
        return None
    given = [flag for name, flag in _FIT_ONLY.items() if getattr(args, name, None) not in
             (None, False)]  # fmt: skip
    if args.params != "{}":
        given.append("--params")
    if given:
        raise UsageError(f"{', '.join(given)}: --model {args.model} applies a saved model, "
                         "fitted before, without a fit to steer or save; drop "
                         f"{' and '.join(given)} (or --model to fit anew)")  # fmt: skip
    saved = _load(args.model)
    what = f"{type(saved.est).__name__} in {args.model}"
    if saved.kind == "denoise" and args.horizon is not None:
        raise UsageError(f"--horizon: --model {args.model} is a filter ({what}), which "
                         "forecasts nothing; drop --horizon")  # fmt: skip
    if saved.kind == "forecast":
        if args.horizon is None and saved.horizon is None:
            raise UsageError(f"--model: the {what} forecasts any horizon (it records none): "
                             "give --horizon H")  # fmt: skip
        if args.horizon is not None and saved.horizon is not None and args.horizon > saved.horizon:
            raise UsageError(f"--horizon {args.horizon}: the {what} was fitted for horizons "
                             f"up to {saved.horizon}; give --horizon {saved.horizon} or "
                             "less")  # fmt: skip
        if args.horizon is None:
            args.horizon = saved.horizon
    return saved


def applied_columns(saved: Saved, given) -> list:
    """The columns the saved model applies to: those it was fitted on, by name (``--columns``,
    where given, must name the same ones: :func:`tssdpa.batch.fitted_columns`), or
    ``--columns`` where it records none."""
    from tssdpa.batch import fitted_columns

    n = getattr(saved.est, "n_channels_", None)
    if saved.columns is None:  # saved from Python after a fit on an array: no names to go by
        if given is None or (n is not None and len(given) != n):
            raise UsageError(f"--model: {saved.path} records no column names (saved after "
                             f"a fit on an array): give --columns with its {n} "
                             "column(s)")  # fmt: skip
        return list(given)
    with usage_errors(""):
        return fitted_columns(saved.est, given, "--columns", f"--model {saved.path}")


def model_columns(saved: Saved, df, given, source: str) -> list:
    """The columns of ``df`` the saved model applies to (:func:`applied_columns`), each of
    which ``df`` must have."""
    fitted = applied_columns(saved, given)
    absent = [c for c in fitted if c not in df.columns]
    if absent:
        raise UsageError(f"--model {saved.path} was fitted on the columns {fitted}, but "
                         f"{source} has no {absent} (its columns: {list(df.columns)})")  # fmt: skip
    return fitted


def tell(saved: Saved, cols, report) -> None:
    """Say which model is applied, and the settings its fit chose (``report``: the command's
    after-fit report, ``report(est, method, cols)``)."""
    est = saved.est
    print(f"--model {saved.path}: applying the saved {type(est).__name__} ({saved.method}) "
          f"fitted on the columns {cols}, without a fit", file=sys.stderr)  # fmt: skip
    report(est, saved.method, cols)


def prepare_batch(args) -> Saved | None:
    """``--model`` / ``--save-model`` with ``--out-dir``: the loaded filter applied to every
    input, or the folder ``--save-model`` will write the ``--fit-on`` fit to (checked)."""
    if args.save_model is not None and args.model is None:
        if args.fit_on is None:  # one model per file: which would it be?
            raise UsageError("--save-model with --out-dir saves the one filter fitted on "
                             "--fit-on FILE; without --fit-on each file is fitted on its own, "
                             "and there is no one model to save")  # fmt: skip
        check_folder(args.save_model)
        return None
    if args.model is None:
        return None
    saved = prepare(args)
    if saved.kind != "denoise":
        raise UsageError(f"--model: {args.model} holds a forecaster ({type(saved.est).__name__}); "
                         "--out-dir filters only: forecast one file at a time (drop "
                         "--out-dir)")  # fmt: skip
    return saved


def fit_on_and_save(spec, params, args) -> tuple:
    """``--fit-on FILE --save-model DIR``: the filter fitted on FILE (in this process), saved;
    returns ``(est, columns)``."""
    from tssdpa.batch import filter_table
    from tssdpa.data.tables import read_table

    check_saveable(spec.resolve_factory(), args.method)
    est = spec.build(**params)
    try:  # filter_table tells the library's warnings in its notes, and silences the rest
        _, info = filter_table(read_table(args.fit_on), est, columns=args.columns,
                               time_column=args.time_column, suffix=args.suffix)  # fmt: skip
    except ValueError as exc:
        raise UsageError(f"--fit-on: {args.fit_on}: {exc}") from None
    for note in info["notes"]:  # the reference file's held readings, glitches, tau notes
        print(f"{Path(args.fit_on).name} (--fit-on): note: {note}", file=sys.stderr)
    save(est, info["columns"], args.save_model)
    return est, info["columns"]
