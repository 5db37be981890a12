"""Small helpers shared by the denoising and the forecasting evaluation and the harness."""

from __future__ import annotations

import json
import logging
import re

import numpy as np

from tssdpa.estimators.arrays import is_tensor

__all__ = [
    "as_numpy",
    "fitted_json",
    "params_json",
    "progress_bar",
    "quiet_lightning",
    "safe_name",
    "shown_params",
]


def params_json(params: dict) -> str:
    """``params`` as sorted-key JSON (tuples as lists, numpy scalars as Python numbers): the
    ``params`` column of a results row, readable back with ``json.loads``."""

    def conv(v):
        if isinstance(v, tuple | list):
            return [conv(u) for u in v]
        if isinstance(v, np.generic):
            return v.item()
        return v

    return json.dumps({k: conv(v) for k, v in params.items()}, sort_keys=True)


def fitted_json(est, horizon: int | None = None) -> str:
    """What ``est``'s own ``fit`` chose, as JSON: its ``best_params_`` (a projection
    forecaster's entry for ``horizon``; a list, one per channel, where each channel chose its
    own), unset values (None) left out; '' for an estimator that chooses nothing itself. The
    ``fitted`` column of a results row: an auto-fitted method's searched ``params`` were
    ``{}``, and what its fit chose was recorded nowhere."""
    best = getattr(est, "best_params_", None)
    if not best:
        return ""
    if horizon is not None and hasattr(est, "horizon"):  # {anchor horizon: settings}
        from tssdpa.filters.forecaster_horizons import params_at

        try:
            best = params_at(est, horizon)
        except (ValueError, KeyError, TypeError, AttributeError):
            return ""

    def conv(v):
        if isinstance(v, dict):
            return {str(k): conv(u) for k, u in v.items() if u is not None}
        if isinstance(v, tuple | list):
            return [conv(u) for u in v]
        v = v.item() if isinstance(v, np.generic) else v
        return str(v) if isinstance(v, float) and not np.isfinite(v) else v  # "inf": JSON

    return json.dumps(conv(best), sort_keys=True)


def shown_params(params, fitted) -> list:
    """The tables' parameter text: the searched ``params``, and, where the method's own fit
    chose settings (the ``fitted`` column), ``fit chose {...}`` with floats to 3 significant
    digits (the tables showed an auto-fitted method's settings as ``{}``)."""
    if fitted is None:
        return list(params)

    def short(v):
        if isinstance(v, dict):
            return {k: short(u) for k, u in v.items()}
        if isinstance(v, list):
            return [short(u) for u in v]
        return float(f"{v:.3g}") if isinstance(v, float) else v

    def one(p, f):
        if not isinstance(f, str) or not f.strip():
            return p
        return f"{p} fit chose {json.dumps(short(json.loads(f)), sort_keys=True)}"

    return [one(p, f) for p, f in zip(params, fitted)]


def safe_name(name) -> str:
    """``name`` (a dataset, setting or method) as a part of a file name: every character but
    letters, digits and ``. _ @ + -`` made ``_``. A caller's own dataset named by its path
    (``logs/run1.csv``) made the traces, tables and plots paths into folders that do not exist:
    every method of it was recorded as failed (FileNotFoundError) after it was scored."""
    return re.sub(r"[^\w.@+-]", "_", str(name))


def as_numpy(a) -> np.ndarray:
    """An estimator's output as a float64 numpy array (torch tensors are moved to the CPU)."""
    if is_tensor(a):
        a = a.detach().cpu().numpy()
    return np.asarray(a, dtype=np.float64)


def quiet_lightning():
    """Silence Lightning's per-fit info messages (it sets its loggers' levels on import)."""
    import lightning.pytorch  # noqa: F401  (imported first: importing it sets the levels)

    for name in list(logging.root.manager.loggerDict):
        if name.startswith(("lightning", "pytorch_lightning")):
            logging.getLogger(name).setLevel(logging.ERROR)


class _NullBar:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def progress_bar(enabled: bool, total: int):
    if not enabled:
        return _NullBar()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description:<48}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=False,
    )
