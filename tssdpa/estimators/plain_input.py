"""What plain input (a numpy array, a list) is refused for before numpy reads it
(:func:`~tssdpa.estimators.arrays.as_2d`): complex values, and a list of separate series, which
numpy made a channels-first array of (equal lengths: "transpose it" turned two replicates into
two channels) or refused with its own "inhomogeneous shape" error (unequal lengths)."""

from __future__ import annotations

import numpy as np

from tssdpa.estimators.tensor_input import is_tensor, state_arrays
from tssdpa.estimators.text_input import complex_objects

__all__ = ["check_plain_input", "real_state", "separate_series"]


def separate_series(x) -> list[int] | None:
    """The lengths of the series in ``x`` where it is a list (or tuple) of separate series,
    else None: items of different lengths (no rows of one table), or array-likes (arrays,
    Series, tensors) fewer than their length, which are a few long recordings rather than one
    recording's rows (a list of 300 rows of 2 channels is a table)."""
    if not isinstance(x, (list, tuple)) or not x:
        return None
    if not all(hasattr(i, "__len__") and not isinstance(i, (str, bytes)) for i in x):
        return None  # numbers (a 1-D series), or a mix numpy refuses by itself
    lengths = [len(i) for i in x]
    arrays = any(len(getattr(i, "shape", ())) >= 1 for i in x)
    if len(set(lengths)) > 1 or (arrays and len(x) < max(lengths)):
        return lengths
    return None


def check_plain_input(x, name: str) -> None:
    """``TypeError`` for complex values, and ``ValueError`` for a list of separate series
    (:func:`separate_series`) saying how to pass them: replicates joined by a NaN gap, or
    columns of one recording stacked."""
    lengths = separate_series(x)
    if lengths is not None:
        said = ", ".join(f"{n:,}" for n in lengths[:5]) + (", ..." if len(lengths) > 5 else "")
        raise ValueError(
            f"{name} is a list of {len(lengths)} separate series (lengths {said}): a list is "
            "read neither as replicates nor as channels. Replicates (separate recordings of "
            "one system, pyEDM's lib ranges): join them into one series with NaN between each "
            "two, at least the forecast horizon plus the longest pattern (embedding x delay; "
            "a filter's window) wide, so that no pattern or future spans two of them: "
            "np.concatenate([a, np.full(gap, np.nan), b]). Channels of one recording, sample "
            "by sample: np.column_stack([a, b])"
        )
    if np.iscomplexobj(x):
        raise TypeError(f"{name} must be a real numeric array, got complex values")


def real_state(state, name: str):
    """``state`` (an array, a list, a tensor, or a tuple of them) with its tensors read as
    float64 arrays (:func:`~tssdpa.estimators.tensor_input.state_arrays`), ``TypeError``
    naming ``name`` (``zi``, a step's ``state``; ``name[k]`` for part k of a tuple state)
    where it holds complex values, as complex ``x`` is refused: a float64 conversion keeps
    the real part alone (numpy's with only a ComplexWarning), and a step named no cause
    ("got ndarray")."""
    parts = state if type(state) is tuple else (state,)
    for k, part in enumerate(parts):
        if type(part) is np.ndarray:  # the usual state first: a step must stay cheap
            found = "complex values" if part.dtype.kind == "c" else None
        elif is_tensor(part):
            found = f"a {part.dtype} tensor" if part.is_complex() else None
        else:
            try:
                a = np.asarray(part)
            except ValueError:  # ragged: the state's own checks name what it is
                a = np.zeros(0)
            # a list with None beside numpy's complex is an object array: iscomplexobj misses it
            complex_held = a.dtype.kind == "c" or (a.dtype.kind == "O" and complex_objects(a))
            found = "complex values" if complex_held else None
        if found:
            where = f"{name}[{k}]" if parts is state else name
            raise TypeError(f"{where} must be real (as initial_state() and step() give it), "
                            f"got {found}")  # fmt: skip
    return state_arrays(state)
