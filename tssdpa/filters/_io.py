"""Input/output conversion and the sklearn-style parameter protocol (internal)."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ArrayMeta", "ParamsMixin", "as_2d", "restore", "save_bundle", "load_bundle"]


@dataclass
class ArrayMeta:
    """How to give the user back an array like the one they passed in."""

    kind: str  # "numpy", "series", "frame", "torch"
    was_1d: bool
    index: Any = None
    columns: Any = None
    name: Any = None
    torch_dtype: Any = None
    torch_device: Any = None
    timestamps: np.ndarray | None = None  # seconds, from a DatetimeIndex


def as_2d(x, name: str = "x") -> tuple[np.ndarray, ArrayMeta]:
    """Convert numpy / pandas / torch input to a new float64 (T, C) array (input untouched)."""
    if isinstance(x, pd.DataFrame):
        meta = ArrayMeta("frame", False, index=x.index, columns=x.columns)
        arr = x.to_numpy(dtype=np.float64, copy=True)
    elif isinstance(x, pd.Series):
        meta = ArrayMeta("series", True, index=x.index, name=x.name)
        arr = x.to_numpy(dtype=np.float64, copy=True)
    elif type(x).__module__.startswith("torch"):
        import torch

        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be an array, Series, DataFrame or tensor")
        meta = ArrayMeta("torch", x.ndim == 1, torch_dtype=x.dtype, torch_device=x.device)
        arr = x.detach().cpu().to(torch.float64).numpy().copy()
    else:
        try:
            arr = np.array(x, dtype=np.float64, copy=True)
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must be a real numeric array, Series, DataFrame or tensor, "
                f"got {type(x).__name__}"
            ) from None
        meta = ArrayMeta("numpy", arr.ndim == 1)
    if arr.ndim == 1:
        arr = arr[:, None]
        meta.was_1d = True
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D (T,) or 2-D (T, C), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 samples)")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 channels")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains inf; use NaN to mark missing samples")
    if meta.index is not None and isinstance(meta.index, pd.DatetimeIndex):
        # absolute seconds (not relative to the first sample) keep chunked calls consistent
        meta.timestamps = meta.index.asi8.astype(np.float64) / 1e9
    return arr, meta


def restore(y: np.ndarray, meta: ArrayMeta):
    """Give ``y`` (T, C) the type and shape of the input described by ``meta``."""
    out = y[:, 0] if meta.was_1d and y.ndim == 2 else y
    if meta.kind == "frame":
        return pd.DataFrame(out, index=meta.index, columns=meta.columns)
    if meta.kind == "series":
        return pd.Series(out, index=meta.index, name=meta.name)
    if meta.kind == "torch":
        import torch

        return torch.as_tensor(out.copy(), dtype=meta.torch_dtype, device=meta.torch_device)
    return out


class ParamsMixin:
    """``get_params`` / ``set_params`` from the ``__init__`` signature (sklearn convention)."""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict:
        """Constructor parameters as a dict."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters; unknown names raise ``ValueError``. Returns self."""
        names = set(self._param_names())
        for k, v in params.items():
            if k not in names:
                raise ValueError(f"unknown parameter {k!r} for {type(self).__name__}")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def _jsonable(v, name: str = "value"):
    """Plain JSON types from numpy scalars / arrays, lists, tuples and dicts (else TypeError)."""
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist(), name)
    if isinstance(v, np.generic):
        return _jsonable(v.item(), name)
    if isinstance(v, (list, tuple)):
        return [_jsonable(a, f"{name}[{i}]") for i, a in enumerate(v)]
    if isinstance(v, dict):
        return {str(k): _jsonable(a, f"{name}[{k!r}]") for k, a in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(
        f"cannot save {name} of type {type(v).__name__} (JSON types, numpy scalars and arrays only)"
    )


def save_bundle(path, kind: str, params: dict, fitted: dict, arrays: dict[str, np.ndarray]):
    """Write ``path/config.json`` and ``path/arrays.safetensors`` (a directory).

    Everything is converted and checked before anything is created on disk.
    """
    from safetensors.numpy import save_file

    path = Path(path)
    cfg = {
        "kind": kind,
        "format": 1,
        "params": _jsonable(params, "params"),
        "fitted": _jsonable(fitted, "fitted"),
    }
    text = json.dumps(cfg, indent=2, allow_nan=True)
    tensors = {}
    for k, v in arrays.items():
        a = np.ascontiguousarray(v)
        if a.dtype.kind not in "fiub":
            raise TypeError(f"cannot save array {k!r} of dtype {a.dtype}")
        tensors[k] = a
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"{path} exists and is not a directory")
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(text)
    save_file(tensors, str(path / "arrays.safetensors"))


def load_bundle(path, kind: str):
    """Read what :func:`save_bundle` wrote; checks the kind."""
    from safetensors.numpy import load_file

    path = Path(path)
    cfg_path = path / "config.json"
    if not cfg_path.is_file():
        raise FileNotFoundError(f"no saved filter at {path} (missing config.json)")
    cfg = json.loads(cfg_path.read_text())
    if cfg.get("kind") != kind:
        raise ValueError(f"{path} holds a {cfg.get('kind')!r}, not a {kind!r}")
    arr_path = path / "arrays.safetensors"
    arrays = load_file(str(arr_path)) if arr_path.is_file() else {}
    return cfg["params"], cfg["fitted"], arrays
