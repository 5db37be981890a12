"""Checks of the experiment scripts' ``--ckpt_path`` (``experiments/denoise.py``,
``experiments/forecast.py``) before anything runs: a file that is not there, no Lightning
checkpoint, weights of other shapes than the settings build, Lightning's ``best`` / ``last``
naming none. :func:`tssdpa.cli.experiment.experiment_main` tells them in one line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CheckpointContents",
    "checkpoint_contents",
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


@dataclass(frozen=True)
class CheckpointContents:
    """What the checks need of a ``--ckpt_path`` file, read once (:func:`checkpoint_contents`):
    its weights' shapes, not the weights, which a run keeps no copy of while it trains."""

    shapes: dict  #: weight name -> its shape
    hyper_parameters: dict
    resumable: bool  #: it holds the optimiser's state (fit can resume from it)


def checkpoint_contents(ckpt_path) -> CheckpointContents | str | None:
    """The local file ``--ckpt_path`` read once, weights-only
    (:func:`tssdpa.models.checkpoints.read_checkpoint`: a pickle of other objects is refused,
    its code never run): what the checks below need of it, why it is no Lightning checkpoint,
    or None where it is no local file (a word of Lightning's, a remote URL, no file)."""
    from tssdpa.models.checkpoints import CheckpointError, read_checkpoint

    path = _local_path(ckpt_path)
    if path is None or not path.is_file():
        return None
    try:
        checkpoint = read_checkpoint(path)
    except CheckpointError as err:
        if not err.loaded:
            return (f"does not load as a weights-only checkpoint ({err.error}; a file that "
                    "needs code run to load is never unpickled): give a checkpoint saved "
                    "by fit")  # fmt: skip
        checkpoint = {}
    if "pytorch-lightning_version" not in checkpoint:
        return ("is no Lightning checkpoint (it holds no state_dict, or no Lightning version): "
                "give a checkpoint saved by fit, under the ModelCheckpoint dirpath")  # fmt: skip
    hparams = checkpoint.get("hyper_parameters")
    return CheckpointContents(
        shapes={k: tuple(v.shape) for k, v in checkpoint["state_dict"].items()},
        hyper_parameters=dict(hparams) if isinstance(hparams, dict) else {},
        resumable="optimizer_states" in checkpoint,
    )


def _contents(ckpt_path, contents) -> CheckpointContents | str | None:
    return checkpoint_contents(ckpt_path) if contents is None else contents


def unreadable_checkpoint(ckpt_path, resume: bool = False, contents=None) -> str | None:
    """Why the local file ``--ckpt_path`` is no Lightning checkpoint, loaded weights-only (a
    pickle of other objects is refused, its code never run), or None where it is one (or it
    is no local file). LightningCLI loads it for its hyperparameters, then the Trainer for its
    weights: a CSV, an empty or cut-short file, a bare ``state_dict`` was a traceback from
    either (after ``fit`` had validated its start). ``resume`` (``fit``): a checkpoint of the
    weights only (``start.ckpt``, ``save_weights_only``) is refused too, which Lightning
    cannot resume training from (a ``KeyError`` traceback). ``contents``: the file as
    :func:`checkpoint_contents` read it (read here where not given), as for the checks below."""
    contents = _contents(ckpt_path, contents)
    if not isinstance(contents, CheckpointContents):
        return contents
    if resume and not contents.resumable:
        return ("holds the weights only (as start.ckpt, or a ModelCheckpoint with "
                "save_weights_only): fit cannot resume training from it; `test --ckpt_path` "
                "scores it")  # fmt: skip
    return None


def checkpoint_mismatch(ckpt_path, model, contents=None) -> str | None:
    """Why the weights of the local file ``--ckpt_path`` (readable:
    :func:`unreadable_checkpoint`) do not fit ``model``, as built: the first weight whose
    shape differs, or None. LightningCLI builds the model with the checkpoint's settings, but
    those linked from ``--data`` (lookback, horizon, channels) are the data's: another
    ``--data.lookback`` was a ``RuntimeError`` traceback of size mismatches from the Trainer."""
    contents = _contents(ckpt_path, contents)
    if not isinstance(contents, CheckpointContents):
        return None
    saved = contents.shapes
    here = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    for key in sorted({*saved, *here}):
        a, b = (d.get(key, "none") for d in (saved, here))
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


def other_scripts_checkpoint(ckpt_path, task: str, contents=None) -> str | None:
    """Why the local file ``--ckpt_path`` (readable: :func:`unreadable_checkpoint`) holds no
    model of ``task``'s script -- a checkpoint of the other script, or of a model with
    settings this one has not -- or None. LightningCLI parses the checkpoint's
    hyperparameters as the model's arguments: a denoise checkpoint given to forecast.py was
    jsonargparse's usage and "Subcommand 'test' does not accept option 'model.window'"."""
    import inspect

    from tssdpa import models

    contents = _contents(ckpt_path, contents)
    if not isinstance(contents, CheckpointContents):
        return None
    hparams = dict(contents.hyper_parameters)
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
