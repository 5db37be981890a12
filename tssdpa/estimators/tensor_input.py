"""Torch tensors among an estimator's inputs, told without importing torch for anything else
(:func:`is_tensor`), and a streaming state given as tensors (:func:`state_arrays`): the torch
twin of the exported step (:class:`tssdpa.export.StreamingStep`) keeps its state as one, and
a state moves between Python and the exported step both ways (docs/deploy.md)."""

from __future__ import annotations

import numpy as np

__all__ = ["is_tensor", "state_arrays"]


def is_tensor(x) -> bool:
    """Whether ``x`` is a torch tensor, without importing torch for anything else."""
    if not type(x).__module__.startswith("torch"):
        return False
    import torch

    return isinstance(x, torch.Tensor)


def state_arrays(state):
    """``state`` (an array, or a tuple of arrays) with each torch tensor in it as a new float64
    numpy array, detached and on the CPU, as ``filter`` reads a tensor ``x`` (numpy reads one
    that requires grad, is on a GPU or is bfloat16 not at all); anything else as given."""
    # numpy's first, and a loop, not any(map(...)): a tau filter's step reads its state 4 times
    if type(state) is tuple:
        for part in state:
            if type(part) is not np.ndarray and is_tensor(part):
                return tuple(map(state_arrays, state))
        return state
    if type(state) is np.ndarray or not is_tensor(state):
        return state
    return state.detach().cpu().double().numpy()
