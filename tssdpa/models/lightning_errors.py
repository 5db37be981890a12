"""Lightning's own errors on the settings a LightningCLI user gave, told as one line naming the
option (``--trainer.devices``, ``--trainer.callbacks``) -- the Trainer's refusal of an argument
or of its callbacks, a callback's own check wrapped in jsonargparse's report, a callback that
monitors no metric the model logs -- and the deprecations inside Lightning that their users
can do nothing about, left out; shared by the experiment scripts
(:mod:`tssdpa.cli.lightning_settings`, :func:`tssdpa.cli.experiment.experiment_main`) and the
translation command (:class:`tssdpa.translation.cli.TranslationCLI`). Lightning is imported
where first needed."""

from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path

__all__ = ["callback_conflict", "class_error", "ignore_lightning_deprecations", "setting_error",
           "unlogged_monitor"]  # fmt: skip

#: deprecations raised inside Lightning's own code: Lightning 2.6 builds torch's deprecated
#: ``LeafSpec`` (torch >= 2.10), a line of Lightning's source printed on every run
_LIGHTNING_DEPRECATIONS = (r"`isinstance\(treespec, LeafSpec\)` is deprecated",)


def ignore_lightning_deprecations() -> None:
    """Leave out the warnings of :data:`_LIGHTNING_DEPRECATIONS`; call it inside the caller's
    ``warnings.catch_warnings()``, which ends it."""
    for message in _LIGHTNING_DEPRECATIONS:
        warnings.filterwarnings("ignore", message=message)


#: Lightning's names, in its messages, for what a Trainer argument built ("`Timer(duration=
#: 'foo')` is not a valid duration": max_time)
_ALIASES = {"Timer": "max_time", "DeepSpeedStrategy": "strategy", "FSDPStrategy": "strategy"}


def _trainer_arguments() -> list[str]:
    from lightning.pytorch import Trainer

    return [p for p in inspect.signature(Trainer.__init__).parameters if p != "self"]


def _from_lightning(exc: BaseException) -> bool:
    """Whether ``exc`` was raised in Lightning's own code on its own behalf: its last frame is
    Lightning's, and every frame from the first of Lightning's on is Lightning's, torch's or
    the standard library's. A model's, a data module's or these scripts' code on the way
    (``self.log`` in a hook: Lightning raises for the model, whose bug it is) is no setting."""
    import os

    import lightning
    import torch

    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(Path(tb.tb_frame.f_code.co_filename).resolve())
        tb = tb.tb_next
    roots = [Path(m.__file__).resolve().parent for m in (lightning, torch, os)]
    first = next((i for i, f in enumerate(frames) if f.is_relative_to(roots[0])), None)
    if first is None or not frames[-1].is_relative_to(roots[0]):
        return False
    return all(any(f.is_relative_to(r) for r in roots) for f in frames[first:])


def setting_error(exc: BaseException, given) -> str | None:
    """One line for an error Lightning raised on a Trainer setting -- a
    ``MisconfigurationException``, ``ValueError`` or ``TypeError`` raised in Lightning's code
    whose message names one of the Trainer's arguments (``devices``, ``val_check_interval``,
    ...) -- as ``--trainer.<name> <value given>: <Lightning's message>``, or callbacks that
    conflict (:func:`callback_conflict`); None for anything
    else, which is no setting of the user's (a bug keeps its traceback). ``given``: the
    ``trainer`` settings as parsed (a mapping, or jsonargparse's Namespace)."""
    from lightning.fabric.utilities.exceptions import MisconfigurationException

    told = callback_conflict(exc)
    if told is not None:
        return told
    if not isinstance(exc, (MisconfigurationException, ValueError, TypeError)):
        return None
    if not _from_lightning(exc):
        return None
    message = " ".join(str(exc).split())
    names = set(_trainer_arguments())
    # the first the message names, in backticks or not ("The strategy `fsdp` requires a GPU
    # accelerator, but received `accelerator='cpu'`": strategy); its advice ("set
    # `limit_val_batches` to 0.0 instead") comes after the one at fault
    words = [_ALIASES.get(w, w) for w in re.findall(r"\w+", message)]
    named = next((w for w in words if w in names), None)
    if named is None:
        return None
    value = given.get(named) if hasattr(given, "get") else None
    shown = "" if value is None or isinstance(value, (list, dict)) else f" {value}"
    return f"--trainer.{named}{shown}: {message}"


#: what Lightning keys a callback's saved state by (``Callback.state_key``), by its class, and
#: what to change in one of two that share it
_STATE_KEYS = {
    "ModelCheckpoint": (
        "monitor, mode and save interval (every_n_epochs, every_n_train_steps, "
        "train_time_interval)",
        "another monitor or save interval",
    ),
    "EarlyStopping": ("monitor and mode", "another monitor or mode"),
}


def callback_conflict(exc: BaseException) -> str | None:
    """One line for the Trainer's refusal of its callbacks, raised in Lightning's code as it is
    built, or None. Two ``ModelCheckpoint`` (or ``EarlyStopping``) callbacks with the same
    settings -- one added with ``--trainer.callbacks+=ModelCheckpoint`` to a config that has
    one -- were a ``RuntimeError`` traceback ("Found more than one stateful callback");
    ``--trainer.enable_checkpointing false`` beside a config's ``ModelCheckpoint`` was
    Lightning's message in its own words (``enable_checkpointing=False``), naming no option."""
    if not isinstance(exc, Exception) or not _from_lightning(exc):
        return None
    message = " ".join(str(exc).split())
    twice = re.match(r"Found more than one stateful callback of type `(\w+)`", message)
    if twice:
        name = twice[1]
        same, other = _STATE_KEYS.get(name, ("settings", "other settings"))
        return (f"--trainer.callbacks: two {name} callbacks with the same {same}, whose saved "
                "states a checkpoint cannot tell apart (a config's trainer.callbacks may "
                f"already have one, and --trainer.callbacks+={name} adds another): drop one, "
                f"or give one {other}")  # fmt: skip
    unchecked = re.match(r"Trainer was configured with `enable_checkpointing=False` but found "
                         r"`(\w+)` in callbacks list", message)  # fmt: skip
    if unchecked:
        name = unchecked[1]
        return (f"--trainer.enable_checkpointing false, but --trainer.callbacks has a {name} "
                "(as the configs do), which writes checkpoints: to train without any, leave it "
                "out of trainer.callbacks too (--trainer.callbacks=null drops the config's); "
                "to keep it, leave enable_checkpointing true")  # fmt: skip
    return None


#: the Trainer option a jsonargparse union of Lightning's classes is, by their package
_UNIONS = {"callbacks": "callbacks", "loggers": "logger", "profilers": "profiler",
           "plugins": "plugins", "strategies": "strategy"}  # fmt: skip
_BOILERPLATE = ("Not a valid subclass", "Expected a ")


def class_error(message: str) -> str:
    """``message`` of a class that failed as it was built, in one line. A callback's own
    check (``ModelCheckpoint(save_top_k=-5)``, ``EarlyStopping(mode='foo')``) came wrapped in
    jsonargparse's report on its union of types, 15 lines of which one said what was wrong:
    ``--trainer.callbacks: ModelCheckpoint: Invalid value for save_top_k=-5. Must be >= -1``.
    Other messages are returned as they are."""
    if not message.startswith("Does not validate against any of the Union subtypes"):
        return message
    errors = [line.strip()[2:] for line in message.splitlines() if line.startswith("  - ")]
    first = next((e for e in errors if not e.startswith(_BOILERPLATE)), None)
    subtypes = next((line for line in message.splitlines() if line.startswith("Subtypes:")), "")
    option = next((o for p, o in _UNIONS.items() if f"lightning.pytorch.{p}." in subtypes), None)
    if first is None or option is None:
        return message
    # the class, where one was given (of several, the report does not say which failed)
    given = set(re.findall(r"class_path='(?:[\w.]*\.)?(\w+)'", message))
    return f"--trainer.{option}: {given.pop() + ': ' if len(given) == 1 else ''}{first}"


def unlogged_monitor(trainer, logged: tuple[str, ...]) -> str | None:
    """The first of ``trainer``'s callbacks that monitors no metric of ``logged`` (what the
    model logs while fitting), as ``EarlyStopping(monitor='val_los')``, or None. A misspelt
    ``monitor`` in the YAML trained an epoch, then was a ``RuntimeError`` or
    ``MisconfigurationException`` traceback (an ``EarlyStopping`` with ``strict=False`` only
    warns: left to it). A ``ModelCheckpoint`` may also monitor Lightning's own ``epoch`` and
    ``step``, or nothing."""
    from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint

    for cb in trainer.callbacks:
        monitor = getattr(cb, "monitor", None)
        if isinstance(cb, ModelCheckpoint) and monitor not in (None, *logged, "epoch", "step"):
            return f"ModelCheckpoint(monitor={monitor!r})"
        if isinstance(cb, EarlyStopping) and cb.strict and monitor not in logged:
            return f"EarlyStopping(monitor={monitor!r})"
    return None
