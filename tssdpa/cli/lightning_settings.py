"""Lightning's settings that fail only once the experiment scripts run (``experiments/denoise.py``,
``experiments/forecast.py``), told as one line naming the option: a device this machine lacks,
the Trainer's own errors on its arguments, loop settings it takes and then divides by, a
checkpoint of the other script. :func:`tssdpa.cli.experiment.experiment_main` prints them. The
Trainer's own errors on its arguments and callbacks are :mod:`tssdpa.models.lightning_errors`'s,
which the translation command shares."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

__all__ = [
    "init_error",
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
