"""The sample of a ``step`` that runs as ``filter(sample.reshape(1, -1), zi=state)`` (the
residual and learned filters), checked as :meth:`ProjectionFilter.step
<tssdpa.filters.ProjectionFilter.step>` checks its own."""

from __future__ import annotations

import numpy as np

from tssdpa.estimators.arrays import step_input
from tssdpa.estimators.plain_input import real_state
from tssdpa.filters.projection_stream import check_sample_labels, zi_named_state

__all__ = ["step_filtered", "step_sample"]

#: a stand-in state for :func:`step_input`: only the sample is checked there, and ``filter``
#: checks the state itself (:func:`step_filtered` names it ``state`` then)
_NO_STATE = np.empty((0, 1))


def step_sample(est, sample, state) -> np.ndarray:
    """``sample`` as a float64 array, or an error naming ``sample`` or ``state``.

    A bare ``np.asarray`` raised torch's own RuntimeError for a tensor that requires grad and
    numpy's for text, a sample of the wrong length was refused as ``x``, and ``state=None``
    (``filter``'s offline call, one output) failed unpacking."""
    if not getattr(est, "causal", True):  # before the state's checks, as initial_state
        raise ValueError("a zero-phase (causal=False) filter has no streaming state")
    if state is None:
        raise TypeError("state must be what initial_state() or step() returned, got NoneType")
    real_state(state, "state")  # refused here: filter's check would name it zi
    # a pandas row names its channels: by position alone, swapped columns were each filtered
    # with the other's state and fit (filter refuses the frame they come from)
    check_sample_labels(est, sample)
    s, _ = step_input(sample, _NO_STATE)  # tensors, pd.NA, text, inf, magnitudes
    fitted = est.__dict__.get("n_channels_")  # unfitted: filter says so
    if fitted is not None and s.size != fitted:
        raise ValueError(f"sample has {s.size} value(s) but the {type(est).__name__} was "
                         f"fitted on {fitted} channel(s)")  # fmt: skip
    return s


def step_filtered(est, s: np.ndarray, state):
    """``est.filter`` of the checked sample ``s`` from ``state``: ``(y_t, new_state)``, an
    error about the state naming ``state`` (it said "zi has shape ...")."""
    with zi_named_state():
        y, new = est.filter(s.reshape(1, -1), zi=state)
    return (y[0, 0] if s.ndim == 0 else y[0]), new
