"""Lightning's settings that fail only once the experiment scripts run (``experiments/denoise.py``,
``experiments/forecast.py``), told as one line naming the option: a device this machine lacks,
the Trainer's own errors on its arguments, loop settings it takes and then divides by, a
checkpoint of the other script. :func:`tssdpa.cli.experiment.experiment_main` prints them."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

__all__ = [
    "class_error",
    "init_error",
    "setting_error",
    "unavailable_accelerator",
    "unrunnable_loop",
    "unwritable_checkpoints",
]

#: what each accelerator name asks for, as Lightning reads it ("gpu": CUDA, else Apple's MPS)
_WANTS = {"gpu": ("cuda", "mps"), "cuda": ("cuda",), "mps": ("mps",), "tpu": ("tpu",)}
_WHAT = {"gpu": "GPU (CUDA or Apple MPS)", "cuda": "CUDA GPU", "mps": "Apple MPS GPU",
         "tpu": "TPU (torch_xla)"}  # fmt: skip


def _available() -> dict[str, bool]:
    from lightning.pytorch.accelerators import CUDAAccelerator, MPSAccelerator, XLAAccelerator

    return {
        "cuda": CUDAAccelerator.is_available(),
        "mps": MPSAccelerator.is_available(),
        "tpu": XLAAccelerator.is_available(),
    }


def unavailable_accelerator(accelerator) -> str | None:
    """Why ``--trainer.accelerator`` names a device this machine does not have, with those it
    has, or None (it has one, or the name is Lightning's to judge: ``auto``, ``cpu``, a
    misspelling, an ``Accelerator`` object). ``gpu`` was Lightning's "No supported gpu backend
    found!", ``tpu`` a ``ModuleNotFoundError`` traceback asking to install torch_xla, ``cuda``
    a line that named no option."""
    if not isinstance(accelerator, str) or accelerator.lower() not in _WANTS:
        return None
    name = accelerator.lower()
    there = _available()
    if any(there[w] for w in _WANTS[name]):
        return None
    have = ", ".join(["cpu", *(k for k, v in there.items() if v)])
    return (f"--trainer.accelerator {accelerator}: no {_WHAT[name]} on this machine; available "
            f"here: {have} (or auto, the best of them)")  # fmt: skip


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
    ...) -- as ``--trainer.<name> <value given>: <Lightning's message>``; None for anything
    else, which is no setting of the user's (a bug keeps its traceback). ``given``: the
    ``trainer`` settings as parsed (a mapping, or jsonargparse's Namespace)."""
    from lightning.fabric.utilities.exceptions import MisconfigurationException

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


def init_error(exc: BaseException, parts: dict, links: dict | None = None) -> str | None:
    """One line for an error a model's or data module's own check raised on an argument of
    its ``__init__`` -- a ``ValueError`` or ``TypeError`` raised in tssdpa's code while
    building an instance of ``parts[part]`` (``{"model": DenoisingSystem, "data": ...}``),
    or in its ``setup`` as the data is read, whose message starts with the argument's
    name -- as the option the user typed: ``--model.lr must be a finite number > 0, got
    -1.0`` (it was ``lr must be ...``, which named no option: ``--model.lr`` or
    ``--data.lr``?). An argument linked from another option (``links``: target -> source, as
    ``model.lookback`` -> ``data.lookback``) is named by its source, the one that can be
    typed. None for anything else (its message kept)."""
    if not isinstance(exc, (ValueError, TypeError)):
        return None
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    root = Path(__file__).resolve().parents[1]  # the tssdpa package
    if not frames or not Path(frames[-1].f_code.co_filename).resolve().is_relative_to(root):
        return None  # torch's, numpy's, jsonargparse's: no check of the library's
    # the outermost __init__ of a part (the one whose arguments were given), or its setup:
    # a data module reads its data there, where a link (data.n_channels) first asks for it
    built = None
    for frame in frames:
        me = frame.f_locals.get("self") if frame.f_code.co_name in ("__init__", "setup") else None
        built = next(((p, type(me)) for p, c in parts.items() if isinstance(me, c)), None)
        if built is not None:
            break
    if built is None:
        return None
    message = " ".join(str(exc).split())
    name = re.match(r"\w+", message)
    if name is None or name[0] not in inspect.signature(built[1]).parameters:
        return None
    option = f"{built[0]}.{name[0]}"
    option = (links or {}).get(option, option)
    return f"--{option}{message[name.end() :]}"


def unrunnable_loop(trainer) -> str | None:
    """Why ``trainer``'s loop settings cannot fit -- settings Lightning takes as given and
    then divides by: ``accumulate_grad_batches``, ``check_val_every_n_epoch`` or an integer
    ``val_check_interval`` of 0 was a ``ZeroDivisionError`` traceback from the first training
    batch, after the start was validated -- or None."""
    accumulate = trainer.accumulate_grad_batches
    if isinstance(accumulate, int) and accumulate < 1:
        return (f"--trainer.accumulate_grad_batches {accumulate}: give an integer >= 1 "
                "(batches per optimiser step)")  # fmt: skip
    every = trainer.check_val_every_n_epoch
    if every is not None and every < 1:
        return (f"--trainer.check_val_every_n_epoch {every}: give an integer >= 1, or null to "
                "validate every val_check_interval batches")  # fmt: skip
    interval = trainer.val_check_interval
    if isinstance(interval, int) and not isinstance(interval, bool) and interval < 1:
        return (f"--trainer.val_check_interval {interval}: give a number of batches >= 1, or "
                "a fraction of the epoch in (0.0, 1.0]")  # fmt: skip
    return None


def unwritable_checkpoints(trainer) -> str | None:
    """Why the folder a fit writes its checkpoints (and the start's) in cannot be written --
    a ``ModelCheckpoint`` ``dirpath``, else ``--trainer.default_root_dir`` (where the logger
    and a ``ModelCheckpoint`` without a ``dirpath`` write) -- or None. ``/proc/x`` was a
    ``FileNotFoundError`` traceback from the start checkpoint's save, after it was scored.
    Remote folders (``s3://...``) are left to Lightning."""
    from tssdpa.cli.paths import check_output_folder

    cb = trainer.checkpoint_callback
    dirpath = getattr(cb, "dirpath", None)
    if dirpath:
        folder, flag = dirpath, "--trainer.callbacks: ModelCheckpoint dirpath"
    elif cb is not None or trainer.loggers:
        folder, flag = trainer.default_root_dir, "--trainer.default_root_dir"
    else:
        return None
    if "://" in str(folder):
        return None
    try:
        check_output_folder(folder, flag)
    except ValueError as exc:
        return str(exc)
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
