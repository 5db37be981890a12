"""Checks of the experiment scripts' ``--ckpt_path`` (``experiments/denoise.py``,
``experiments/forecast.py``) before anything runs: a file that is not there, no Lightning
checkpoint, weights of other shapes than the settings build, Lightning's ``best`` / ``last``
naming none. :func:`tssdpa.cli.experiment.experiment_main` tells them in one line."""

from __future__ import annotations

import warnings
from pathlib import Path

__all__ = [
    "checkpoint_mismatch",
    "missing_checkpoint",
    "other_scripts_checkpoint",
    "unreadable_checkpoint",
    "unresolved_checkpoint",
]


def _local_path(ckpt_path) -> Path | None:
    """The local file a ``--ckpt_path`` names, or None for Lightning's words (``last``,
    ``best``, ``hpc``, ``registry`` or ``registry:<name>``) and remote URLs (``s3://...``,
    ``https://...``, which Lightning reads through fsspec)."""
    if not ckpt_path:
        return None
    text = str(ckpt_path)
    if text in ("last", "best", "hpc") or text.lower().split(":")[0] == "registry":
        return None
    if "://" in text and not text.startswith("file://"):
        return None
    return Path(text.removeprefix("file://"))


def missing_checkpoint(ckpt_path) -> bool:
    """Whether ``--ckpt_path`` names a local file that is not there (not one of Lightning's
    words nor a remote URL)."""
    path = _local_path(ckpt_path)
    return path is not None and not path.is_file()


def unreadable_checkpoint(ckpt_path, resume: bool = False) -> str | None:
    """Why the local file ``--ckpt_path`` is no Lightning checkpoint, loaded weights-only (a
    pickle of other objects is refused, its code never run), or None where it is one (or it
    is no local file). LightningCLI loads it for its hyperparameters, then the Trainer for its
    weights: a CSV, an empty or cut-short file, a bare ``state_dict`` was a traceback from
    either (after ``fit`` had validated its start). ``resume`` (``fit``): a checkpoint of the
    weights only (``start.ckpt``, ``save_weights_only``) is refused too, which Lightning
    cannot resume training from (a ``KeyError`` traceback)."""
    import torch

    path = _local_path(ckpt_path)
    if path is None or not path.is_file():
        return None
    try:
        with warnings.catch_warnings():  # torch's note on the pickle protocol of a cut file
            warnings.simplefilter("ignore")
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch.load of a foreign file: IndexError, EOFError, OSError...
        return (f"does not load as a weights-only checkpoint ({type(exc).__name__}; a file "
                "that needs code run to load is never unpickled): give a checkpoint saved "
                "by fit")  # fmt: skip
    if not (
        isinstance(checkpoint, dict)
        and isinstance(checkpoint.get("state_dict"), dict)
        and "pytorch-lightning_version" in checkpoint
    ):
        return ("is no Lightning checkpoint (it holds no state_dict, or no Lightning version): "
                "give a checkpoint saved by fit, under the ModelCheckpoint dirpath")  # fmt: skip
    if resume and "optimizer_states" not in checkpoint:
        return ("holds the weights only (as start.ckpt, or a ModelCheckpoint with "
                "save_weights_only): fit cannot resume training from it; `test --ckpt_path` "
                "scores it")  # fmt: skip
    return None


def checkpoint_mismatch(ckpt_path, model) -> str | None:
    """Why the weights of the local file ``--ckpt_path`` (readable:
    :func:`unreadable_checkpoint`) do not fit ``model``, as built: the first weight whose
    shape differs, or None. LightningCLI builds the model with the checkpoint's settings, but
    those linked from ``--data`` (lookback, horizon, channels) are the data's: another
    ``--data.lookback`` was a ``RuntimeError`` traceback of size mismatches from the Trainer."""
    import torch

    path = _local_path(ckpt_path)
    if path is None or not path.is_file():
        return None
    saved = torch.load(path, map_location="cpu", weights_only=True)["state_dict"]
    here = model.state_dict()
    for key in sorted({*saved, *here}):
        a, b = (tuple(d[key].shape) if key in d else "none" for d in (saved, here))
        if a != b:
            return (f"holds a model of other shapes than these settings build ({key}: {a} in "
                    f"the file, {b} here); the model's settings come from the checkpoint: "
                    "give the --data settings it was trained with (lookback, horizon, "
                    "dataset)")  # fmt: skip
    return None


def unresolved_checkpoint(ckpt_path, trainer) -> str | None:
    """Why Lightning's word ``best`` or ``last`` names no checkpoint for ``validate`` /
    ``test`` / ``predict`` with ``trainer`` (None when it does, or for anything else).

    ``last`` with no ``last*.ckpt`` in a ``ModelCheckpoint`` folder was a warning among
    Lightning's chatter, then the untrained weights were scored; ``best`` in a process that
    did not fit was a ValueError traceback saying ModelCheckpoint was not configured for it.
    """
    if ckpt_path == "best":
        return (
            "'best' is the best checkpoint of a fit in this same run; give the checkpoint file "
            "(under the ModelCheckpoint dirpath of the fit)"
        )
    if ckpt_path == "last":
        found = set()
        for cb in trainer.checkpoint_callbacks:  # where Lightning looks, as it looks
            find = getattr(cb, "_find_last_checkpoints", None)
            found |= set(find(trainer)) if find is not None else set()
        if not found:
            return (
                "no last checkpoint (last.ckpt, saved with ModelCheckpoint save_last=True) "
                "in the checkpoint folder; give the checkpoint file"
            )
    return None


#: the system each script trains, by the script's name
_SYSTEMS = {"denoise": "DenoisingSystem", "forecast": "ForecastingSystem"}


def other_scripts_checkpoint(ckpt_path, task: str) -> str | None:
    """Why the local file ``--ckpt_path`` (readable: :func:`unreadable_checkpoint`) holds no
    model of ``task``'s script -- a checkpoint of the other script, or of a model with
    settings this one has not -- or None. LightningCLI parses the checkpoint's
    hyperparameters as the model's arguments: a denoise checkpoint given to forecast.py was
    jsonargparse's usage and "Subcommand 'test' does not accept option 'model.window'"."""
    import inspect

    import torch

    from tssdpa import models

    path = _local_path(ckpt_path)
    if path is None or not path.is_file():
        return None
    hparams = torch.load(path, map_location="cpu", weights_only=True).get("hyper_parameters")
    hparams = dict(hparams) if isinstance(hparams, dict) else {}
    named = str(hparams.pop("_class_path", "")).rsplit(".", 1)[-1]
    keys = set(hparams) - {"_instantiator"}
    takes = {t: set(inspect.signature(getattr(models, n)).parameters) for t, n in _SYSTEMS.items()}
    if named in ("", _SYSTEMS[task]) and keys <= takes[task]:
        return None
    other = next((t for t, n in _SYSTEMS.items() if t != task
                  and (named == n or (not named and keys <= takes[t]))), None)  # fmt: skip
    if other is not None:
        return (f"is a checkpoint of {other}.py (a {_SYSTEMS[other]}), not of {task}.py: "
                f"`{other}.py test --ckpt_path {ckpt_path}` scores it; give {task}.py a "
                f"checkpoint saved by `{task}.py fit`")  # fmt: skip
    unknown = ", ".join(sorted(keys - takes[task])) or named
    return (f"holds no {_SYSTEMS[task]} of {task}.py (settings it does not take: {unknown}): "
            f"give a checkpoint saved by `{task}.py fit`")  # fmt: skip
