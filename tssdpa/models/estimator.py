"""What an estimator built on a trained LightningModule needs, shared by the learned filters.

:class:`SystemEstimatorMixin` goes before :class:`~tssdpa.estimators.Denoiser` or
:class:`~tssdpa.estimators.Forecaster` in the bases of an estimator that keeps a trained
system in ``system_``. It standardises with the training statistics, builds the system with
seeded initial weights, trains it with :func:`~tssdpa.models.systems.train_system`, validates
the shared training settings, and saves / loads the net's weights under ``net.`` keys next to
the estimator's own arrays (:mod:`tssdpa.estimators.persistence`).

Lightning is imported only when a system is built or trained, not with this module.
"""

from __future__ import annotations

import contextlib
import os
import random
from typing import ClassVar

import numpy as np
import torch

from tssdpa.checks import check_choice, check_decay, check_fraction, check_int, check_positive
from tssdpa.estimators.arrays import FLOAT32_MAGNITUDES, within_reach
from tssdpa.estimators.input_notes import SettingChangedWarning, tell
from tssdpa.estimators.persistence import require_floats, saved_channels
from tssdpa.estimators.selection import time_split
from tssdpa.models.nets import check_encoder

__all__ = [
    "MIN_TRAINING_READINGS",
    "SystemEstimatorMixin",
    "caller_rng_kept",
    "float32_default",
    "in_float32_reach",
    "training_columns",
    "windows",
]

#: what ``lightning.seed_everything`` sets in the environment besides the generators
_SEED_VARIABLES = ("PL_GLOBAL_SEED", "PL_SEED_WORKERS")


@contextlib.contextmanager
def float32_default():
    """torch's default dtype float32 within the block, the caller's after it: the nets are
    float32 (their data is cast to it), and one built under a caller's float64 default had
    float64 weights that the data and saved files did not match."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


@contextlib.contextmanager
def caller_rng_kept():
    """Python's, numpy's and torch's global generators (CUDA's too where CUDA is started) and
    Lightning's seed variables as they were before the block, however it ends: a fit seeds
    them so that its training is reproducible, and must not reseed the caller's (a user's
    ``np.random.rand()`` after ``fit`` would repeat the same numbers every time)."""
    py_state, np_state = random.getstate(), np.random.get_state()  # noqa: NPY002
    env = {k: os.environ.get(k) for k in _SEED_VARIABLES}
    # CUDA's generators only where CUDA is started: reading them would start it (a context
    # and its memory for a CPU fit)
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    try:
        with torch.random.fork_rng(devices=devices, device_type="cuda"):
            yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)  # noqa: NPY002 -- the legacy global one is the caller's
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def windows(a: np.ndarray, length: int, stride: int) -> np.ndarray:
    """(T, C) -> (N, length, C) windows starting at 0, stride, ... (copy)."""
    if a.shape[0] < length:
        raise ValueError(f"series has {a.shape[0]} samples, fewer than the window {length}")
    starts = np.arange(0, a.shape[0] - length + 1, stride)
    return np.stack([a[s : s + length] for s in starts])


def in_float32_reach(z: np.ndarray, name: str) -> np.ndarray:
    """:func:`~tssdpa.estimators.arrays.within_reach` of the float32 networks, where a value
    (or its square) beyond ``FLOAT32_MAGNITUDES[1]`` overflows to inf and the outputs turn
    NaN."""
    return within_reach(z, name, FLOAT32_MAGNITUDES[1], "beyond what the float32 network "
                        "computes on")  # fmt: skip


#: a channel with fewer readings than this in the training part is described by all of them
MIN_TRAINING_READINGS = 3


def training_columns(a: np.ndarray, stop: int | None) -> list[np.ndarray]:
    """Each channel of (T, C) ``a`` over its training part ``a[:stop]``, or over all of ``a``
    where that part holds fewer than :data:`MIN_TRAINING_READINGS` readings (one reading has
    no spread: its scale was 1, its noise level 0). The statistics a learned estimator takes
    (scaling, training noise) come from here, never from the validation tail."""
    return [a[:stop, c] if np.isfinite(a[:stop, c]).sum() >= MIN_TRAINING_READINGS else a[:, c]
            for c in range(a.shape[1])]  # fmt: skip


class SystemEstimatorMixin:
    """Standardisation, seeded construction, training and persistence of ``system_``.

    The estimator defines ``_system(n_channels)`` (a new LightningModule whose ``net`` is the
    network) and has the parameters d_model, num_heads, num_layers, dim_feedforward, sigma,
    decay, max_epochs, batch_size, lr, patience, holdout, accelerator, enable_progress_bar,
    checkpoint_dir, trainer_kwargs and random_state. ``_net_params`` names the parameters
    passed to the system unchanged.
    """

    _fitted_schema: ClassVar[dict[str, tuple]] = {
        "n_channels_": (int,),
        "history_": (dict,),  # what train_system returned
        "split_": (dict,),  # sample ranges of the training and validation parts
    }
    _array_schema: ClassVar[tuple[str, ...]] = ("mean_", "scale_")  # training statistics
    _channel_arrays: ClassVar[dict[str, bool]] = {"mean_": False, "scale_": True}
    #: estimator parameters passed unchanged to the system (see :meth:`_net_kwargs`)
    _net_params: ClassVar[tuple[str, ...]] = ()
    #: array names of files saved before the unified format -> current names
    _legacy_arrays: ClassVar[dict[str, str]] = {}

    def _system(self, n_channels: int):  # pragma: no cover - defined by each estimator
        raise NotImplementedError

    def _net_kwargs(self) -> dict:
        return {k: getattr(self, k) for k in self._net_params}

    def _check_training_params(self) -> None:
        """Check the settings every learned estimator has (errors name the argument)."""
        check_encoder(self.d_model, self.num_heads, self.num_layers, self.dim_feedforward)
        check_int(self.max_epochs, "max_epochs")
        check_int(self.batch_size, "batch_size")
        check_int(self.patience, "patience", minimum=0)
        check_int(self.random_state, "random_state", minimum=0)
        check_positive(self.sigma, "sigma")
        check_positive(self.lr, "lr")
        if self.decay is not None and check_decay(self.decay) == 1.0:
            # the nets learn it through a sigmoid, which reaches 1 only at infinity: the layer
            # refused it as "a learned decay must start below 1", naming no argument
            raise ValueError(
                f"decay={self.decay!r}: a learned decay starts below 1 (it is learned "
                "through a sigmoid); give e.g. 0.99, or None for none"
            )
        check_fraction(self.holdout, "holdout")
        check_choice(self.enable_progress_bar, "enable_progress_bar", (True, False))
        if self.trainer_kwargs is not None and not isinstance(self.trainer_kwargs, dict):
            raise TypeError(f"trainer_kwargs must be a dict or None, got {self.trainer_kwargs!r}")
        # Lightning's own "expected str, bytes or os.PathLike object, not int" named nothing
        if self.checkpoint_dir is not None and not isinstance(
            self.checkpoint_dir, str | os.PathLike
        ):
            raise TypeError(f"checkpoint_dir must be a path or None, got {self.checkpoint_dir!r}")

    def _split(self, T: int, gap: int, gap_name: str, name: str) -> tuple[int, int]:
        """:func:`~tssdpa.estimators.selection.time_split` of ``T`` samples, warning where the
        validation part is longer than ``holdout`` asked: it is at least one window (``gap``
        samples), so ``holdout=0.05`` of 2000 samples with lookback + horizon = 432 held out
        432 (22%), and trained on 1136 samples where 1468 were expected, without a word."""
        a, b = time_split(T, gap, self.holdout, name)
        asked = int(round(T * self.holdout))
        if T - b > asked:
            tell(SettingChangedWarning(
                f"{type(self).__name__}: holdout={self.holdout!r} is {asked} of the {T} "
                f"samples of {name}, fewer than one validation window ({gap_name} = {gap}): "
                f"the last {T - b} samples ({(T - b) / T:.0%}) validate, and split_ records "
                "the sample ranges"
            ))  # fmt: skip
        return a, b

    def _standardise(self, a: np.ndarray, train_stop: int | None = None) -> np.ndarray:
        """Set ``mean_`` / ``scale_`` from the training part ``a[:train_stop]`` (NaN ignored)
        and return the whole of ``a`` standardised.

        Taken from the whole series, the statistics held the validation tail: its values
        changed the fitted scaling (and so the model) although it is only to validate on.
        A channel with too few readings in the training part takes them from all of its
        readings (:func:`training_columns`: the network is never trained on it, but its
        inputs must be in its range), as the filter's training noise level does."""
        if np.isnan(a).all():
            raise ValueError("the training series is all NaN")
        cols = training_columns(a, train_stop)
        self.mean_ = np.array([np.nanmean(c) for c in cols])
        sd = np.array([np.nanstd(c) for c in cols])
        self.scale_ = np.where(sd > 0, sd, 1.0)
        return (a - self.mean_) / self.scale_

    def _new_system(self, n_channels: int):
        with caller_rng_kept(), float32_default():
            torch.manual_seed(self.random_state)  # weights must not depend on what ran before
            return self._system(n_channels)

    def _train(self, train, val) -> dict:
        """Train ``system_`` on ``(inputs, targets)`` windows; returns the history."""
        from tssdpa.models.systems import train_system

        with caller_rng_kept(), float32_default():
            return train_system(
                self.system_,
                train,
                val,
                max_epochs=self.max_epochs,
                batch_size=self.batch_size,
                patience=self.patience,
                accelerator=self.accelerator,
                enable_progress_bar=self.enable_progress_bar,
                checkpoint_dir=self.checkpoint_dir,
                random_state=self.random_state,
                trainer_kwargs=self.trainer_kwargs,
            )

    # ------------------------------------------------------------------ persistence
    @classmethod
    def _array_allowed(cls, key: str) -> bool:
        return key.startswith("net.") or key in cls._array_schema or key in cls._legacy_arrays

    def _state(self) -> tuple[dict, dict]:
        self._check_fitted()
        fitted, arrays = super()._state()
        state = self.system_.net.state_dict()
        arrays.update({f"net.{k}": v.detach().cpu().numpy() for k, v in state.items()})
        return fitted, arrays

    def _set_state(self, fitted: dict, arrays: dict) -> None:
        net = {k[4:]: torch.from_numpy(v) for k, v in arrays.items() if k.startswith("net.")}
        rest = {
            self._legacy_arrays.get(k, k): v for k, v in arrays.items() if not k.startswith("net.")
        }
        # the channels and statistics first: the system is sized by n_channels_
        C = saved_channels(fitted)
        require_floats(rest, *self._array_schema)
        super()._set_state(fitted, rest)
        if "split_" in fitted:
            self.split_ = _saved_split(fitted["split_"])
        # its initial weights are overwritten below: drawing them must not move the caller's
        # generator
        with torch.random.fork_rng(devices=[]), float32_default():
            self.system_ = self._system(C)
        expected = self.system_.net.state_dict()
        for k, t in net.items():
            # load_state_dict would cast other dtypes (an int weight: rounded values) silently
            if k in expected and t.dtype != expected[k].dtype:
                raise ValueError(f"array 'net.{k}' must be {expected[k].dtype}, got {t.dtype}")
            if torch.isinf(t).any():
                raise ValueError(f"array 'net.{k}' holds inf (a trained weight is finite)")
        self.system_.net.load_state_dict(net)
        self.system_.eval()


def _saved_split(split: dict) -> dict:
    """``split_`` from a file: the ``train`` and ``val`` sample ranges, each None or
    ``(start, stop)`` of ints >= 0 (JSON lists back to tuples)."""
    if set(split) != {"train", "val"}:
        raise ValueError(f"split_ must have the keys ['train', 'val'], got {sorted(split)}")
    out = {}
    for part, r in split.items():
        if r is not None and not (isinstance(r, list) and len(r) == 2):
            raise ValueError(f"split_[{part!r}] must be None or [start, stop], got {r!r}")
        out[part] = None if r is None else tuple(check_int(i, f"split_[{part!r}]", 0) for i in r)
    return out
