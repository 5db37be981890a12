"""Reading a Lightning checkpoint file safely, the one reader of the experiment scripts'
``--ckpt_path`` checks (:mod:`tssdpa.cli.checkpoints`) and of a translation model
(:func:`tssdpa.translation.translator.load_checkpoint`): ``torch.load`` weights-only (a pickle
of other objects is refused, its code never run), and the layout every Lightning checkpoint
has, a dict whose ``state_dict`` maps names to tensors; and a smoke run's trainer kept from
writing any (:func:`no_smoke_checkpoints`)."""

from __future__ import annotations

import os
import warnings

__all__ = ["CheckpointError", "no_smoke_checkpoints", "read_checkpoint"]


class CheckpointError(ValueError):
    """What a file given as a checkpoint is not, for the caller to name the file: ``loaded``
    False where ``torch.load`` refused it weights-only (``error``: the exception's type, ``first``
    the first line of its message), True where its contents are not a checkpoint's layout."""

    def __init__(self, message: str, *, loaded: bool, error: str = "", first: str = ""):
        super().__init__(message)
        self.loaded, self.error, self.first = loaded, error, first


def read_checkpoint(path: str | os.PathLike, map_location="cpu") -> dict:
    """The contents of the checkpoint file ``path``, loaded weights-only, or
    :class:`CheckpointError`: ``does not load weights-only: <torch's first line>`` (a cut or
    empty file, a CSV, a pickle of code: ``IndexError``, ``EOFError``, ``UnpicklingError``...)
    or ``is not a Lightning checkpoint`` (no dict, no ``state_dict`` dict of tensors)."""
    import torch

    try:
        with warnings.catch_warnings():  # torch's note on the pickle protocol of a cut file
            warnings.simplefilter("ignore")
            checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # torch.load of a foreign file: IndexError, EOFError, OSError...
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise CheckpointError(f"does not load weights-only: {first}", loaded=False,
                              error=type(err).__name__, first=first) from None  # fmt: skip
    state = checkpoint.get("state_dict") if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise CheckpointError("is not a Lightning checkpoint", loaded=True)
    return checkpoint


def no_smoke_checkpoints(trainer) -> None:
    """Keep a ``fast_dev_run`` trainer's ``ModelCheckpoint`` callbacks from writing
    ``last.ckpt``. Lightning suppresses their checkpoints in a smoke run ("Logging and
    checkpointing is suppressed") except that one: ``save_last`` saves it as training ends
    (Lightning 2.6), where a real run's ``last.ckpt`` is, or as the file that a resume with
    ``--ckpt_path .../last.ckpt`` then reads. A trainer of a real run is left as it is."""
    from lightning.pytorch.callbacks import ModelCheckpoint

    if not getattr(trainer, "fast_dev_run", False):
        return
    for callback in trainer.callbacks:
        if isinstance(callback, ModelCheckpoint):
            callback.save_last = False
