"""Small helpers shared by the denoising and the forecasting evaluation and the harness."""

from __future__ import annotations

import json
import logging
import re

import numpy as np

from tssdpa.estimators.arrays import is_tensor

__all__ = ["as_numpy", "params_json", "progress_bar", "quiet_lightning", "safe_name"]


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
