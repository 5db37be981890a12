"""Constructor parameters as values: which names a factory takes, and the copies a clone gets
(used by :class:`~tssdpa.estimators.base.Estimator`)."""

from __future__ import annotations

import copy
import inspect
from typing import Any

import numpy as np

__all__ = ["NotFittedError", "SklearnProtocol", "param_copy", "same_setting", "unknown_parameters"]


def unknown_parameters(factory, params) -> tuple[list[str], list[str]]:
    """``(unknown, valid)``: the names in ``params`` that ``factory`` (a class, or any callable
    returning an estimator) does not take (nor renames), and the ones it takes; none unknown
    where it takes ``**kwargs``."""
    try:
        sig = inspect.signature(factory)  # a class: its __init__ less self
    except (TypeError, ValueError):  # no signature to read: nothing to refuse
        return [], []
    kinds = {p.kind for p in sig.parameters.values()}
    valid = [n for n, p in sig.parameters.items()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]  # fmt: skip
    if inspect.Parameter.VAR_KEYWORD in kinds:
        return [], valid
    renamed = factory._all_renamed() if hasattr(factory, "_all_renamed") else {}
    return sorted(set(params) - set(valid) - set(renamed)), valid


def param_copy(value: Any) -> Any:
    """What a clone gets for a parameter ``value``: a deep copy, as scikit-learn's ``clone``
    gives, so that editing a dict or list of the clone leaves the original's fitted state
    alone. An estimator given as a value, alone or in a list, tuple or dict, is cloned
    (unfitted, as scikit-learn does; a scikit-learn one by its ``clone``); functions and classes
    are themselves (``deepcopy`` returns them); a value that cannot be copied (a logger holding
    a lock or an open file) is shared, there being nothing else to give -- the item, not the
    dict or list holding it."""
    if not isinstance(value, type) and hasattr(value, "get_params"):
        if hasattr(value, "clone"):
            return value.clone()
        try:  # a scikit-learn estimator: its own clone, unfitted
            from sklearn.base import clone

            return clone(value)
        except Exception:  # noqa: BLE001 -- no scikit-learn, or not its estimator: a copy
            pass
    if type(value) in (list, tuple):  # item by item: one item that cannot be copied is shared,
        return type(value)(param_copy(v) for v in value)  # not the container with it
    if type(value) is dict:
        return {k: param_copy(v) for k, v in value.items()}
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 -- any __deepcopy__ / __reduce__ may refuse, in its own way
        return value


class NotFittedError(ValueError, AttributeError):
    """An estimator used before ``fit``: a ``ValueError`` as before, and an ``AttributeError``
    as scikit-learn's ``NotFittedError`` is (code that catches either catches it)."""


class SklearnProtocol:
    """What scikit-learn's utilities ask of an estimator not derived from its ``BaseEstimator``
    (``check_is_fitted``, ``is_regressor``, ``get_tags``): scikit-learn 1.9 raised
    ``AttributeError: ... no attribute '__sklearn_tags__'`` from each (a new user's pass)."""

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags  # only scikit-learn calls this

        # neither a regressor nor a transformer in scikit-learn's sense: fit takes the series
        # itself (and a filter's optional target), not (X, y)
        return Tags(estimator_type=None, target_tags=TargetTags(required=False))

    def __sklearn_is_fitted__(self) -> bool:
        return "n_channels_" in self.__dict__


def same_setting(a, b) -> bool:
    """Whether two parameter values are equal, arrays by their elements (also inside dicts,
    lists and tuples): ``!=`` on an array, e.g. a per-step ridge in a ``base_params`` dict or a
    new array of candidates set after a step, raised numpy's 'truth value of an array is
    ambiguous'."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_setting(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same_setting, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return type(a) is type(b) and np.array_equal(a, b)
        except ValueError:  # an object array of ragged arrays: then not the same
            return False
    return bool(a == b)
