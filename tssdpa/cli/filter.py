"""``tssdpa filter``: fit a filter (or forecaster) on the columns of a CSV file and apply it.

With ``--out-dir`` it takes many files and glob patterns (CSV or Parquet) and filters each
one, on a Dask cluster or this machine's cores (:mod:`tssdpa.cli.batch`). ``--save-model DIR``
keeps the fitted filter, ``--model DIR`` applies a kept one without a fit
(:mod:`tssdpa.cli.saved_model`).

Every mistake a user can make with the file or the arguments ends in one line on stderr that
says what is wrong and what to do, and exit code 2 (:class:`UsageError`); never a traceback.
What was done goes to stderr too: the columns filtered, the settings ``fit`` chose, the
missing / infinite cells treated as missing, the columns skipped.
"""

from __future__ import annotations

import json
import re
import sys
from glob import has_magic
from pathlib import Path

from tssdpa.cli import batch as batch_command
from tssdpa.cli import saved_model
from tssdpa.cli.errors import UsageError, usage_errors
from tssdpa.cli.helptext import DefaultsFormatter
from tssdpa.cli.paths import check_output_file
from tssdpa.cli.said import library_warnings
from tssdpa.cli.settings import check_causal, check_horizon
from tssdpa.estimators.input_notes import as_time_column
from tssdpa.files import check_table_name, same_path

__all__ = ["add_parser", "check_target_columns", "run"]


def check_target_columns(df, targets, cols, time_col, source, role: str) -> None:
    """``--target`` of a command: one column of ``df`` per ``role`` column of ``cols``, none of
    them the time column (its numbers are the sample times, not a clean copy of a column: a fit
    against them was a silent nonsense filter); ``UsageError`` naming the option."""
    absent = [c for c in targets if c not in df.columns]
    if absent:
        raise UsageError(f"--target: not in {source}: {absent}")
    if time_col is not None and time_col in targets:
        raise UsageError(f"--target: {time_col!r} is the time column, not a clean reference")
    if len(targets) != len(cols):
        raise UsageError(f"--target: give one column per {role} column ({len(cols)}: {cols}), "
                         f"got {len(targets)}")  # fmt: skip


def add_parser(sub) -> None:
    f = sub.add_parser(
        "filter",
        help="fit a filter (or forecaster) on columns of a CSV file and apply it",
        description="Fit a denoiser on columns of a CSV file and write the filtered columns "
        "next to the originals (or, with --horizon, forecasts). The chosen settings, the "
        "missing cells and the skipped columns are reported on stderr.",
        formatter_class=DefaultsFormatter,
    )
    f.error = _error.__get__(f)  # argparse's message, told where a swallowed input went
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
        "(default: a column named time / timestamp / 'Time (s)' / seconds / elapsed_s / "
        "stamp / ts / unix_time / 'Zeit [s]' ..., or a datetime column, "
        "else one of text dates as a CSV has them: ISO 8601 such as 2026-05-01T12:00:00.25, "
        "or 01/05/2026 13:00, read in the order that keeps the times in order with the "
        "smaller largest step; where both orders give the same largest step, refused if tau "
        "reads the times)",
    )
    f.add_argument(
        "--method",
        "-m",
        default=None,
        help="a denoiser or forecaster from `tssdpa methods` (default: projection_zp, the "
        "zero-phase projection filter with every setting chosen by its fit; with --horizon "
        "projection, the projection forecaster)",
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
        default=None,
        help="the filtered column <col> goes to <col><suffix> (default: _filtered)",
    )
    f.add_argument("--inplace", action="store_true", help="overwrite the original columns instead")
    f.add_argument("--out", "-o", default=None, help="output CSV (default: standard output)")
    saved_model.add_arguments(f)
    batch_command.add_arguments(f)


def _error(parser, message: str):
    """``parser.error``, saying why an input given after ``--columns a b`` is missing: the
    list took it as one more column name ("the following arguments are required: input")."""
    if "required: input" in message:
        message += (" (an input given after --columns or --target is read as one more "
                    "column name: give the input first, as in tssdpa filter log.csv "
                    "--columns a b)")  # fmt: skip
    type(parser).error(parser, message)


def _params(text: str, factory) -> dict:
    try:
        params = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--params must be a JSON object ({exc})") from None
    if not isinstance(params, dict):
        raise UsageError(f'--params must be a JSON object like {{"window": 16}}, got {text!r}')
    from tssdpa.estimators.base import unknown_parameters

    unknown, valid = unknown_parameters(factory, params)
    if unknown:
        what = getattr(factory, "__name__", factory)
        raise UsageError(
            f"--params: unknown parameter(s) {unknown} for {what}; valid: " + ", ".join(valid)
        )
    return params


def _report_fit(est, method: str, cols) -> None:
    """Print what ``fit`` chose (``best_params_``, per horizon for forecasters) to stderr."""
    from tssdpa.estimators.report import (
        chosen_settings,
        fitted_models,
        format_value,
        settings_text,
    )

    if not chosen_settings(est, cols):  # a method that chooses nothing: its settings
        plain = (bool, int, float, str)  # (the README promises the settings on stderr)
        given = {k: v for k, v in est.get_params().items() if isinstance(v, plain)}
        if given:
            print(f"{method} on {cols}: settings {settings_text(given)} (as given or its "
                  "defaults: it chooses none; --params to change)", file=sys.stderr)  # fmt: skip
        return
    for where, params in chosen_settings(est, cols):
        at = f" {where}" if where else ""
        print(f"{method}{at} on {cols}: chose {settings_text(params)}", file=sys.stderr)
    contenders = getattr(est, "contenders_", None)
    if isinstance(contenders, dict) and contenders:
        at = ",".join(map(str, contenders))
        print(f"{method} on {cols}: the fitted rows changed regime; at h={at} "
              "the forecasts switch online to whichever of that choice, leave-one-out's and "
              "forward's has the least recent error", file=sys.stderr)  # fmt: skip
    fits = fitted_models(est, cols)  # the joint fit where its output is used, each channel's
    for where, model in fits:
        at = f" {where}" if where else ""
        mixture = getattr(model, "mixture_", None)
        if mixture:
            top = max(c["weight"] for c in mixture)
            print(f"{method}{at} on {cols}: outputs the weighted mean of the {len(mixture)} "
                  f"best candidates (the largest weight {top:.2f})", file=sys.stderr)  # fmt: skip
        local = getattr(model, "local_", None)
        if local:
            print(f"{method}{at} on {cols}: mixes in zero-phase low-passes where SURE over "
                  f"{local['window']} samples favours them", file=sys.stderr)  # fmt: skip
    noise = getattr(est, "noise_level_", None)
    if noise is not None:
        given = getattr(est, "noise_level", None)
        how = "estimated" if given is None else given if isinstance(given, str) else "given"
        print(f"{method} on {cols}: SURE's noise level ({how}) "
              + ", ".join(format_value(float(v)) for v in noise), file=sys.stderr)  # fmt: skip
    flags = getattr(est, "heavy_tails_", None)  # None: fitted with a target, or a forecaster
    heavy = [] if flags is None else [c for c, h in zip(cols, flags) if h]
    if heavy:
        print(f"{method} on {cols}: heavy-tailed noise in {heavy}: its level counts the tails, "
              "SURE weighs each sample's divergence by its own squared noise, no local "
              "adaptation there", file=sys.stderr)  # fmt: skip
    scale = getattr(est, "channel_scale_", None)
    joint_used = any(model is est for _, model in fits)
    if joint_used and scale is not None and any(float(v) != 1.0 for v in scale):
        print(
            f"{method} on {cols}: the kernel compares the channels divided by "
            + ", ".join(format_value(float(v)) for v in scale)
            + " (their standard deviations over the median; sigma in those units)",
            file=sys.stderr,
        )
    choice = getattr(est, "channel_choice_", None)  # the forecaster's is a dict of errors
    if "chosen" in getattr(choice, "columns", ()) and (choice["chosen"] == "alone").any():
        alone = ", ".join(str(cols[c]) if c < len(cols) else str(c)
                          for c in choice.index[choice["chosen"] == "alone"])  # fmt: skip
        tie = " by more than 10%" if getattr(est, "causal", False) else ""  # CAUSAL_TIE
        picked = choice[choice["chosen"] == "alone"]  # a causal fit of a longer series:
        held = picked.get("held_out_joint")  # scored on the rows after its fit block
        held = " on the rows after the fit block" if held is not None and held.notna().all() else ""
        print(
            f"{method} on {cols}: filters {alone} alone, each with its own fit (its score "
            f"over the noise variance was lower than the joint fit's{tie}{held})",
            file=sys.stderr,
        )


def _time_column_message(msg: str, est, times, time_col) -> str:
    """The filter's "timestamps has a step smaller than min_step=..." naming the time column
    and the first row whose step is (the user gave no ``timestamps``, and a log has
    thousands of rows)."""
    if not msg.startswith("timestamps has a step smaller than min_step"):
        return msg
    import numpy as np

    from tssdpa.checks import to_seconds
    from tssdpa.signal.lagfilter import short_steps

    t = to_seconds(times, "timestamps")
    steps = np.diff(t)
    short = short_steps(steps, est.min_step, t)  # a Python loop over the steps before
    first = int(short[0]) if len(short) else None
    where = "" if first is None else (
        f", first at data row {first + 2} ({steps[first]:.6g} s after data row {first + 1})"
    )  # fmt: skip
    return (f"time column {time_col!r} has a step smaller than min_step={est.min_step}{where}; "
            "give a smaller min_step, or a window")  # fmt: skip


def run(args) -> int:
    """The ``filter`` subcommand; raises :class:`UsageError` for the user's mistakes."""
    suffix_given = args.suffix is not None  # a forecast names its columns itself
    if not suffix_given:
        args.suffix = "_filtered"
    if args.out_dir is not None:
        return batch_command.run(args, _params)
    if len(args.input) > 1 or (not Path(args.input[0]).exists() and has_magic(args.input[0])):
        raise UsageError(
            "several inputs (or a pattern) need --out-dir: each output goes there under its "
            "input's name"
        )
    batch_command.check_single_file_args(args)
    args.input = args.input[0]
    saved = saved_model.prepare(args)  # --model loaded (its horizon set), --save-model checked
    import numpy as np

    from tssdpa.compare import get_method
    from tssdpa.estimators.input_notes import collected, notes_to_tell

    kind = "denoise" if args.horizon is None else "forecast"
    method = args.method or ("projection_zp" if kind == "denoise" else "projection")
    if saved is not None:
        method = saved.method
    elif kind == "forecast" and method == "projection_zp":  # it ran 'projection' silently
        raise UsageError("--method projection_zp is a zero-phase filter and forecasts nothing; "
                         "with --horizon drop --method (the projection forecaster) or choose a "
                         "forecaster from `tssdpa methods`")  # fmt: skip
    try:
        spec = get_method(method, kind) if saved is None else None
    except (KeyError, ValueError):
        raise batch_command.method_error(method, kind) from None
    if args.horizon is not None and args.horizon < 1:
        raise UsageError(f"--horizon must be a positive integer, got {args.horizon}")
    if args.horizon is None and args.in_sample:  # it filtered every row all the same
        raise UsageError("--in-sample is for forecasting (--horizon); a filter writes every "
                         "row")  # fmt: skip
    if args.horizon is not None and args.inplace:  # it wrote new columns all the same
        raise UsageError(f"--inplace: forecasts go to new columns <col>_forecast_h{args.horizon}"
                         ", never over the series; drop --inplace")  # fmt: skip
    if args.horizon is not None and suffix_given:  # it was ignored, as --inplace was
        raise UsageError(f"--suffix: forecasts go to new columns <col>_forecast_h{args.horizon}"
                         "; drop --suffix")  # fmt: skip
    if args.inplace and suffix_given:  # the filtered values went over the columns all the same
        raise UsageError("--suffix: --inplace writes the filtered values over the columns, "
                         "under no new name; give one of --inplace and --suffix")  # fmt: skip
    if args.suffix == "" and not args.inplace and args.horizon is None:
        raise UsageError("--suffix: empty, the filtered values would replace the columns; "
                         "give --inplace for that")  # fmt: skip
    if args.out is not None:  # before the fit (it ran, then failed on the write)
        with usage_errors(""):
            check_output_file(args.out, "--out")
            check_table_name(args.out, "--out")
    if args.out is not None and same_path(args.out, args.input):
        raise UsageError(f"--out: {args.out!r} is the input file; write the output "
                         "elsewhere (--inplace replaces the columns, not the file)")  # fmt: skip
    if saved is None:
        factory = spec.resolve_factory()
        params = _params(args.params, factory)
        check_causal(spec, params, method)
        if kind == "forecast":
            check_horizon(params, args.horizon)
        if args.save_model is not None:  # before the fit: it would be lost
            saved_model.check_saveable(factory, method)
    from tssdpa.data.csv_files import cells_as_read
    from tssdpa.data.tables import (
        check_new_columns,
        column_named,
        column_values,
        date_order_note,
        find_time_column,
        numeric_columns,
        read_table,
        sample_times,
        sampling_note,
        seconds_per_unit,
        skipped_note,
        write_table,
    )

    with usage_errors(""):
        df = read_table(args.input)
    with usage_errors("--time-column: "):
        time_col = find_time_column(df, args.time_column)
    given = args.columns if saved is None else saved_model.model_columns(
        saved, df, args.columns, args.input)  # fmt: skip
    with usage_errors("--columns: " if given is not None else f"{args.input}: "):
        cols, skipped = numeric_columns(df, given, time_col, args.target or ())
    if kind == "forecast":
        names = [f"{c}_forecast_h{args.horizon}" for c in cols]
    else:
        names = cols if args.inplace else [f"{c}{args.suffix}" for c in cols]
    if names != cols:  # --inplace writes over the filtered columns, as asked
        how = "rename them" if kind == "forecast" else "give another --suffix (or --inplace)"
        with usage_errors(f"{args.input}: "):
            check_new_columns(df, names, how)
    with usage_errors(""):  # inf cells: a sensor glitch, treated as missing like NaN
        x, n_nan, n_inf = column_values(df, cols)
    target = None
    if args.target is not None:
        if kind == "forecast":
            raise UsageError("--target: forecasters fit on the series itself; drop --target")
        check_target_columns(df, args.target, cols, time_col, args.input, "filtered")
        with usage_errors(""):
            target, _, _ = column_values(df, args.target, "--target column")
    elif saved is None and spec.requires_target:
        raise UsageError(f"--method {method} needs a clean reference: give --target COLUMN")
    fraction = args.fit_fraction if args.fit_fraction is not None else (
        1.0 if kind == "denoise" else 0.7
    )  # fmt: skip
    if not 0 < fraction <= 1:
        raise UsageError(f"--fit-fraction must be in (0, 1]; got {fraction}")
    n_fit = max(3, int(round(len(x) * fraction)))
    out = df.copy()
    if saved is not None:
        saved_model.tell(saved, cols, _report_fit)
    elif spec.family == "learned":
        from tssdpa.compare.common import quiet_lightning

        quiet_lightning()  # "GPU available: ..." banners
    times = None  # the time column's, where a filter with tau reads it
    est = None if saved is None else saved.est  # --model's, applied without a fit
    with library_warnings() as warned:  # deprecations and tips are not for a CLI user
        try:
            if kind == "denoise":
                est = spec.build(**params) if est is None else est
                if target is not None and not getattr(est, "uses_target", True):
                    # it fitted on the noisy columns alone and exited 0, as if supervised
                    raise UsageError(f"--target: --method {method} does not fit against a "
                                     "clean reference; drop --target or choose a method "
                                     "that does (wiener_fir, projection...)")  # fmt: skip
                with usage_errors(""):  # tau: the time column is the sample times
                    times = sample_times(est, df, time_col)
                fit_kw = {} if times is None else {"timestamps": times[:n_fit]}
                if target is not None:
                    fit_kw["target"] = target[:n_fit]
                fit_notes = []
                if saved is None:
                    with collected(quiet=True) as fit_notes:  # but notes on the data are
                        est.fit(x[:n_fit], **fit_kw)
                    _report_fit(est, method, cols)
                filter_kw = {} if times is None else {"timestamps": times}
                with collected(quiet=True) as filter_notes:
                    y = np.asarray(est.filter(x, **filter_kw), dtype=np.float64).reshape(x.shape)
                for note in notes_to_tell(fit_notes, filter_notes, cols):
                    print(f"{method} on {cols}: note: {note}", file=sys.stderr)
                for i, c in enumerate(names):
                    out[c] = y[:, i]
            elif saved is None:
                lookback = params.pop("lookback", min(64, max(1, n_fit // 4)))
                est = spec.build({"max_horizon": args.horizon, "lookback": lookback}, **params)
                with collected(quiet=True) as fit_notes:  # a setting used otherwise than
                    est.fit(x[:n_fit])  # given (a learned model's patch_len) was silenced
                _report_fit(est, method, cols)
                for note in notes_to_tell(fit_notes, [], cols):
                    print(f"{method} on {cols}: note: {note}", file=sys.stderr)
            if kind == "forecast":
                pred = np.asarray(est.forecast(x, horizon=args.horizon)).reshape(x.shape)
                if not args.in_sample and saved is None:
                    pred[: n_fit - 1] = np.nan  # origins inside the fitted rows: not written
                for i, c in enumerate(names):
                    out[c] = pred[:, i]
        except (ValueError, TypeError) as exc:  # "x channel 2 ..." -> the column's name
            msg = column_named(str(exc), cols)
            if kind == "denoise" and times is not None:  # the time column, by row
                msg = _time_column_message(msg, est, times, time_col)
            if args.target is not None:  # "target channel 1": the user named it otherwise
                named = args.target
                msg = re.sub(r"\btarget channel (\d+)",
                             lambda m: f"--target column {named[int(m[1])]!r}", msg)  # fmt: skip
            raise UsageError(f"{method}: {msg}") from None
    for said in as_time_column(warned, time_col):  # tau: the columns came back unchanged
        print(f"{method} on {cols}: note: {said}", file=sys.stderr)
    notes = []
    if n_nan or n_inf:
        notes.append(f"{n_nan} missing and {n_inf} infinite cell(s) treated as missing")
    if skipped:
        notes.append(skipped_note(skipped, df))
    if time_col is not None:
        use = "used as the sample times (tau) and " if getattr(est, "tau", None) else ""
        per = seconds_per_unit(time_col)
        if use and per != 1.0 and df[time_col].dtype.kind in "iuf":  # numbers, not dates
            use = f"used as the sample times (tau; its numbers x {per:g} s, by its name) and "
        notes.append(f"time column {time_col!r} {use}copied through")
        order = date_order_note(df, time_col)
        if order:  # 01/05/2026: day-first, which pandas alone never reads
            notes.append(order)
        sampling = None if use else sampling_note(df, time_col)
        if sampling:  # a log concatenated out of order, a logger's dropouts
            notes.append(sampling)
    if args.save_model is not None:  # before the output: a refused save writes nothing
        saved_model.save(est, cols, args.save_model)
    if kind == "forecast" and saved is not None:
        notes.append("forecasts written from row 1 on (the saved model was fitted elsewhere)")
    elif kind == "forecast":
        first = 0 if args.in_sample else n_fit - 1
        notes.append(f"fitted on rows 1-{n_fit}; forecasts written from row {first + 1} on")
    where = args.out or "standard output"
    print(f"{method} on {cols} -> {names} ({len(out)} rows, {where})", file=sys.stderr)
    for n in notes:
        print(f"  {n}", file=sys.stderr)
    parquet = bool(args.out) and Path(args.out).suffix.lower() in (".parquet", ".pq")
    if not parquet:  # Parquet keeps the values' types: a CSV's text cells were all strings
        with usage_errors(""):  # the input changed while it was filtered
            out = cells_as_read(out, names)
    if args.out:
        with usage_errors("--out: "):
            write_table(out, args.out)
    else:  # the input's separator and decimal mark; no byte-order mark or sep= line: text
        # for the next program of a pipe (--out writes a file as the input was, for Excel)
        out.to_csv(sys.stdout, index=False, sep=out.attrs.get("sep", ","),
                   decimal=out.attrs.get("decimal", "."))  # fmt: skip
    return 0
