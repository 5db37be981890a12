"""Learned projection estimators: the torch models of :mod:`tssdpa.models` behind the
fit / filter / forecast / save interface of the nonparametric ones.

:class:`LearnedProjectionFilter` (a causal :class:`~tssdpa.models.DenoisingNet`) and
:class:`LearnedProjectionForecaster` (a :class:`~tssdpa.models.ForecastingNet`, DLinear +
projection-attention residual) train with a Lightning ``Trainer`` (early stopping on a
time-ordered validation split) and save their net's weights under ``net.`` keys; training,
weights and persistence come from :class:`~tssdpa.models.estimator.SystemEstimatorMixin`.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import torch

from tssdpa.checks import (
    check_choice,
    check_int,
    check_moving_average,
    check_number,
    check_positive,
)
from tssdpa.estimators.arrays import as_2d, check_state, restore
from tssdpa.estimators.base import Denoiser, Forecaster, check_fit_input, denoiser_input
from tssdpa.estimators.persistence import check_context
from tssdpa.estimators.spacing import warn_uneven
from tssdpa.estimators.white_noise import check_noise_level, noise_scale
from tssdpa.filters.projection_stream import stream_channels
from tssdpa.filters.step_sample import step_filtered, step_sample
from tssdpa.models.estimator import (
    SystemEstimatorMixin,
    in_float32_reach,
    training_columns,
    windows,
)

__all__ = ["LINEAR_LR_SCALE", "LearnedProjectionFilter", "LearnedProjectionForecaster"]

#: Default learning-rate multiplier of the ridge-initialised linear branch of
#: :class:`LearnedProjectionForecaster` (0 = frozen), chosen on ETTh1's validation split
#: (M, horizon 96, seed 0; experiments/configs/forecast_etth1.yaml): validation MSE 0.6351
#: frozen, 0.6302 at 0.01, 0.6516 at 0.1, 0.6340 at 1 (0.6607 without the ridge start).
LINEAR_LR_SCALE = 0.01

_RENAMED = {"seed": "random_state", "val_fraction": "holdout"}


class LearnedProjectionFilter(SystemEstimatorMixin, Denoiser):
    """Causal learned denoiser with the ProjectionFilter interface (fit / filter / step / save).

    Parameters
    ----------
    window : int
        Attention window of every layer (receptive field ``num_layers * (window-1) + 1``),
        at most ``seq_len``.
    seq_len : int
        Training window length.
    d_model, num_heads, num_layers, dim_feedforward, sigma, decay : network settings
        (sigma and decay are learned per head).
    noise_level : None, "spectral", float or list of float
        Self-supervised training (no target): the standard deviation of the extra Gaussian
        noise added to x, which the network learns to remove -- as
        :class:`~tssdpa.filters.ProjectionFilter`'s ``noise_level``: None estimates each
        channel's level on the training part, before ``holdout``
        (:func:`~tssdpa.estimators.white_noise.noise_level`), ``"spectral"``
        with its spectral floor unchecked, a number is one level for every channel, a list one per
        channel (in the units of x). Formerly ``noise_std``.
    max_epochs, batch_size, lr, patience : training settings (early stopping on ``val_loss``;
        the best epoch is kept, and the starting model if no epoch beats it).
    holdout : float
        Fraction of the samples, the last ones in time, held out for validation (formerly
        ``val_fraction``). The series is split first (training part, a gap of ``seq_len``
        samples, validation tail) and windows are cut from each part, so no training window
        overlaps a validation one (``split_`` records the sample ranges). The tail is at
        least one window: a smaller ``holdout`` is raised to it, with a warning.
    accelerator : str
        Lightning accelerator ("auto", "cpu", "gpu", ...).
    enable_progress_bar : bool
        False: a quiet fit, without Lightning's info lines ("GPU available", tips) either.
    checkpoint_dir : str or None
        Where the best checkpoint goes (a temporary folder when None), reloaded after fit;
        refused with ``trainer_kwargs=dict(enable_checkpointing=False)``.
    trainer_kwargs : dict or None
        Extra ``lightning.Trainer`` arguments (override the above).
    random_state : int
        Seeds the initial weights, the training noise and the shuffling (formerly ``seed``);
        the caller's global generators are left as they were.

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import LearnedProjectionFilter
    >>> t = np.linspace(0, 30, 1200)
    >>> clean = np.sin(t); noisy = clean + 0.2 * np.random.default_rng(0).normal(size=t.size)
    >>> f = LearnedProjectionFilter(window=8, seq_len=64, d_model=8, num_layers=1,
    ...     max_epochs=1, enable_progress_bar=False,
    ...     trainer_kwargs=dict(enable_checkpointing=False, accelerator="cpu"))
    >>> f.fit(noisy, target=clean).filter(noisy).shape
    (1200,)
    """

    trainable = True
    handles_nan = True  # NaN samples are masked keys of the attention
    causal = True
    _renamed_params = {**_RENAMED, "noise_std": "noise_level"}
    _structural_params = ("window",)  # the net attends over it; its weights do not record it
    _net_params = tuple(
        "lr d_model num_heads num_layers dim_feedforward window sigma decay".split()
    )

    def __init__(
        self, window=16, seq_len=128, d_model=32, num_heads=4, num_layers=2, dim_feedforward=64,
        sigma=2.0, decay=0.9, noise_level=None, max_epochs=20, batch_size=32, lr=3e-3, patience=3,
        holdout=0.2, accelerator="auto", enable_progress_bar=True, checkpoint_dir=None,
        trainer_kwargs=None, random_state=0,
    ):  # fmt: skip
        self._store(locals())

    def _validate_params(self) -> None:
        check_int(self.window, "window")
        check_int(self.seq_len, "seq_len")
        check_noise_level(self.noise_level)
        self._check_training_params()

    def _system(self, n_channels: int):
        from tssdpa.models.systems import DenoisingSystem

        return DenoisingSystem(n_channels, learn_decay=self.decay is not None,
                               **self._net_kwargs())  # fmt: skip

    def _fit(self, a: np.ndarray, target: np.ndarray | None) -> None:
        """Train on windows of (x, target), or of (x + noise, x) when no target; no target
        where no reading of x is within reach (where :meth:`filter` gives NaN)."""
        C = a.shape[1]
        given = check_noise_level(self.noise_level, C)  # unused with a target, still checked
        n = self.seq_len
        if self.window > n:  # at fit: a file saved with one loads as it was
            # no training or validation window holds a lag of seq_len or more: filtering attended
            # there untrained, unvalidated (window 64 for 16: test MSE 0.041, not 0.029)
            raise ValueError(f"window={self.window} is longer than seq_len={n}, the training "
                             "windows: take window <= seq_len, or a longer seq_len")  # fmt: skip
        stride = max(1, n // 2)
        known = None
        if target is not None:
            # no target where the filter gives no output: no reading of x in the sample's
            # receptive field (a shorter gap the net bridges, and learns to)
            seen = np.cumsum(np.vstack([np.zeros((1, C)), np.isfinite(a)]), axis=0)
            reach = np.maximum(np.arange(len(a)) - self.num_layers * (self.window - 1), 0)
            known = seen[1:] > seen[reach]
        has_target = np.isfinite(a) if target is None else known & np.isfinite(target)
        # split the series first (train | gap of one window | validation tail), then cut
        # windows from each part: training and validation windows never share a sample
        # up to the last target (x's last reading without one; a target needs x in reach):
        # a target missing over the tail left the validation part none, every val_loss NaN,
        # and the untrained start was kept after one epoch, silently
        T = len(a) - int(np.argmax(has_target[::-1].any(axis=1)))
        last = "x to its last reading" if target is None else "x to its last target"
        a_, b_ = self._split(T, n, "seq_len", "x" if T == len(a) else last)
        self.split_ = {"train": (0, a_), "val": (b_, T)}
        z = self._standardise(a, a_)  # the training part's statistics
        if target is not None:
            inputs, targets = z, np.where(known, (target - self.mean_) / self.scale_, np.nan)
        else:
            rng = np.random.default_rng(self.random_state)
            if given is None or isinstance(given, str):  # estimated ("spectral": its floor)
                spectral = given is not None
                # on the training part, as the statistics: the validation tail's noise set
                # the training noise too (a tail 10x noisier: its std 0.144 -> 0.157)
                parts = training_columns(z, a_)
                ns = np.array([noise_scale(p[:, None], spectral=spectral) for p in parts])
            else:
                ns = given / self.scale_
            inputs, targets = z + ns * rng.normal(size=z.shape), z
        train = (windows(inputs[:a_], n, stride), windows(targets[:a_], n, stride))
        val = (windows(inputs[b_:T], n, stride), windows(targets[b_:T], n, stride))
        self.system_ = self._new_system(C)
        self.history_ = self._train(train, val)

    @property
    def history_length(self) -> int:
        """Samples of past input the state keeps (receptive field - 1)."""
        self._check_fitted()
        return self.system_.net.receptive_field - 1

    def initial_state(self, n_channels=None):
        """Empty state: (receptive_field - 1, C) array of NaN. ``n_channels``, if given, is the
        fitted channel count (an error naming it otherwise)."""
        H = self.history_length  # fitted, or an error saying so
        return np.full((H, stream_channels(self, n_channels)), np.nan)

    @torch.no_grad()
    def _apply(self, z: np.ndarray, hist: np.ndarray, block: int = 2048) -> np.ndarray:
        """Exact chunked evaluation: each block sees its receptive field of earlier input."""
        net = self.system_.net.eval()
        H = hist.shape[0]
        full = np.concatenate([hist, z])
        out = np.empty_like(z)
        for a in range(0, z.shape[0], block):
            b = min(z.shape[0], a + block)
            seg = torch.as_tensor(full[a : H + b], dtype=torch.float32)[None]
            out[a:b] = net(seg)[0, H:].double().numpy()
        return out

    def filter(self, x, zi=None):
        """Causal filtering of ``x`` (T,) or (T, C), returned in its shape and type.

        With a state ``zi`` (from :meth:`initial_state` or a previous call) return
        ``(y, zf)``: any split of a series into calls gives the one-pass output; x may then
        be empty (zf = zi). Leading samples of a state that are NaN count as missing (masked
        keys).
        """
        self._check_fitted()
        # a stream's chunk may be empty (a tick without samples: zf = zi) and is warned of an
        # uneven DatetimeIndex once, as ProjectionFilter's: refused, and warned per chunk
        a, meta = denoiser_input(self, x, stream=zi is not None)
        self._check_channels(a, "x", meta)
        H = self.history_length
        if zi is None:
            hist_z = np.full((H, self.n_channels_), np.nan)
        else:
            # named as zi as the other filters name it (a bare np.asarray raised numpy's
            # "inhomogeneous shape" for a tau filter's pair); shape and inf checked there
            zi = check_state(zi, np.full((H, self.n_channels_), np.nan))
            hist_z = in_float32_reach((zi - self.mean_) / self.scale_, "zi")
        z = in_float32_reach((a - self.mean_) / self.scale_, "x")
        y = self._apply(z, hist_z) * self.scale_ + self.mean_
        # no sample of a channel in a row's receptive field (before its first one, or a gap
        # longer than the field): NaN, not the training mean the net gives for nothing
        seen = np.isfinite(np.concatenate([np.full((H, a.shape[1]), np.nan) if zi is None
                                           else zi, a]))  # fmt: skip
        counts = np.cumsum(np.vstack([np.zeros((1, a.shape[1])), seen]), axis=0)
        y[counts[H + 1 :] == counts[: a.shape[0]]] = np.nan
        if zi is None:
            return restore(y, meta)
        full = np.concatenate([zi, a])
        return restore(y, meta), full[full.shape[0] - H :].copy()

    def step(self, sample, state):
        """One sample (scalar or (C,)): returns ``(y_t, new_state)``."""
        s = step_sample(self, sample, state)  # checked by name, as ProjectionFilter's
        return step_filtered(self, s, state)


class LearnedProjectionForecaster(SystemEstimatorMixin, Forecaster):
    """Direct multi-step forecaster (DLinear + projection-attention residual), Lightning-trained.

    ``forecast_path(y, horizon=h)[t, k-1]`` predicts y[t+k] from the ``lookback`` samples ending
    at t (NaN for t < lookback - 1); inputs are standardised with the training statistics
    (DLinear / ETTh1 protocol); missing samples count as the training mean in the inputs and
    are no targets in training.

    Parameters
    ----------
    lookback, horizon : int
        Input window length and number of steps predicted at once.
    channel_independent : bool
        Share one univariate model across channels (default) or mix channels in each patch.
    moving_average : int
        Kernel of the trend/seasonal split of the linear part, odd; one longer than
        ``lookback`` (+ 1 for an even one) is built as that bound, warned of at fit
        (``moving_average_`` holds the kernel used).
    patch_len, d_model, num_heads, num_layers, dim_feedforward, sigma, decay, dropout,
    attention : network settings (``attention=False`` gives plain DLinear). A ``patch_len``
        over ``lookback`` is built as ``lookback``, warned of at fit (``patch_len_``).
    stride : int
        Step between training windows; the validation windows (and the ridge start's) are
        every window, whatever the stride (thinned, fewer origins were scored).
    linear_init : {"ridge", "none"}
        ``"ridge"``: the linear branch starts as the closed-form ridge DLinear of the training
        part, configured on the validation windows (:func:`tssdpa.models.ridge_linear_init`;
        the choice is in ``linear_init_``); with the attention head at zero, training starts
        at that forecaster. ``"none"``: DLinear's averaging start, trained from scratch.
    linear_lr_scale : float
        Learning-rate multiplier of the linear branch (0 freezes it).
    max_epochs, batch_size, lr, patience : training settings, as in the filter.
    holdout : float
        Without ``y_val``: the fraction held out for validation, as in the filter (formerly
        ``val_fraction``), with a gap of ``lookback + horizon`` samples (at least that many
        held out: a smaller ``holdout`` is raised to it, with a warning).
    accelerator, enable_progress_bar, checkpoint_dir, trainer_kwargs
        Lightning settings, as in :class:`LearnedProjectionFilter`.
    random_state : int
        Seeds the initial weights and the shuffling (formerly ``seed``); the caller's global
        generators are left as they were.

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import LearnedProjectionForecaster
    >>> y = np.sin(np.arange(800) * 0.1)[:, None] * [1.0, 2.0]
    >>> fc = LearnedProjectionForecaster(lookback=48, horizon=8, d_model=16, max_epochs=1,
    ...     enable_progress_bar=False,
    ...     trainer_kwargs=dict(enable_checkpointing=False, accelerator="cpu"))
    >>> fc.fit(y).forecast_path(y, horizon=8).shape
    (800, 8, 2)
    """

    _renamed_params = _RENAMED
    _structural_params = ("lookback", "horizon")
    _fitted_schema = {**SystemEstimatorMixin._fitted_schema, "linear_init_": (dict, type(None))}
    _array_schema = (*SystemEstimatorMixin._array_schema, "train_")
    _net_params = tuple(
        "lookback horizon lr linear_init linear_lr_scale channel_independent moving_average "
        "patch_len d_model num_heads num_layers dim_feedforward sigma decay dropout "
        "attention".split()
    )
    _legacy_arrays = {"series_": "train_"}
    _arrays_with_nan = ("train_", "series_")

    def __init__(
        self, lookback=336, horizon=96, channel_independent=True, moving_average=25, patch_len=16,
        d_model=64, num_heads=4, num_layers=1, dim_feedforward=128, sigma=4.0, decay=None,
        dropout=0.0, attention=True, stride=1, linear_init="ridge", linear_lr_scale=LINEAR_LR_SCALE,
        max_epochs=10, batch_size=32, lr=1e-3, patience=3, holdout=0.2, accelerator="auto",
        enable_progress_bar=True, checkpoint_dir=None, trainer_kwargs=None, random_state=0,
    ):  # fmt: skip
        self._store(locals())

    def _validate_params(self) -> None:
        for name in ("lookback", "horizon", "moving_average", "patch_len", "stride"):
            check_int(getattr(self, name), name)
        check_choice(self.linear_init, "linear_init", ("ridge", "none"))
        for name in ("channel_independent", "attention"):
            check_choice(getattr(self, name), name, (True, False))
        check_positive(self.linear_lr_scale, "linear_lr_scale", allow_zero=True)
        if not 0.0 <= check_number(self.dropout, "dropout") < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")
        self._check_training_params()

    def _set_state(self, fitted: dict, arrays: dict) -> None:
        super()._set_state(fitted, arrays)
        check_context(self, self.train_)

    def _system(self, n_channels: int):
        from tssdpa.models.systems import ForecastingSystem

        return ForecastingSystem(
            n_channels=n_channels, learn_decay=self.decay is not None, **self._net_kwargs()
        )

    def _pairs(self, z, name: str = "y", stride: int = 1):
        n = self.lookback + self.horizon
        if len(z) < n:  # named: y_val's and y's were one message
            raise ValueError(f"{name} has {len(z)} samples, fewer than lookback + horizon = {n}")
        w = windows(z, n, stride)
        past, future = w[:, : self.lookback], w[:, self.lookback :]
        # a missing input is the training mean (0); a missing target is no target: the loss
        # skips it (filled, the gaps were trained on as the mean), and so is a channel's
        # target with no reading of that channel in the window (forecast_path gives NaN
        # there; it was trained to forecast it from the mean put in its place: a late
        # channel's first values). A window without a target is dropped (no loss)
        future = np.where(np.isfinite(past).any(axis=1)[:, None, :], future, np.nan)
        known = np.isfinite(future).any(axis=(1, 2))
        if not known.any():
            raise ValueError(f"{name} has no window of {n} samples with a known future sample")
        return np.nan_to_num(past[known]), future[known]

    def fit(self, y, y_val=None) -> LearnedProjectionForecaster:
        """Train on (past, future) windows of ``y``; validation on the windows of ``y_val``
        or, without it, of the last ``holdout`` of ``y``. Returns self."""
        a, meta = as_2d(y, "y")
        warn_uneven(self, meta)  # gaps in a DatetimeIndex: trained as equally spaced samples
        check_fit_input(a, "y", meta)
        self._validate_params()
        # at fit, not in _validate_params: a model saved with an even one loads as it was
        check_moving_average(self.moving_average)
        C = a.shape[1]
        if y_val is not None:
            v, v_meta = as_2d(y_val, "y_val")
            check_fit_input(v, "y_val", v_meta)
            if v.shape[1] != C:
                raise ValueError(f"y_val has {v.shape[1]} channel(s) but y has {C}")
            # the channels pair by position: y's columns in another order validated each
            # channel on another's windows, standardised with its statistics, without a word
            cols, v_cols = meta.columns, v_meta.columns
            if cols is not None and v_cols is not None and not v_cols.equals(cols):
                if sorted(map(str, v_cols)) == sorted(map(str, cols)):
                    raise ValueError(f"y_val's columns {list(v_cols)} are y's {list(cols)} in "
                                     "another order: use y_val[y.columns]")  # fmt: skip
            z = self._standardise(a)  # NaN kept for the targets (_pairs)
            train = self._pairs(z, stride=self.stride)
            val = self._pairs((v - self.mean_) / self.scale_, "y_val")
            self.split_ = {"train": (0, z.shape[0]), "val": None}
        else:
            # split the series in time first (train | gap of one window | validation tail),
            # then cut windows from each part: no sample is in both
            n = self.lookback + self.horizon
            # up to the last reading: a missing tail has no target to validate on
            T = len(a) - int(np.argmax(np.isfinite(a[::-1]).any(axis=1)))
            t1, v0 = self._split(T, n, "lookback + horizon",
                                 "y" if T == len(a) else "y to its last reading")  # fmt: skip
            self.split_ = {"train": (0, t1), "val": (v0, T)}
            z = self._standardise(a, t1)  # the training part's statistics; NaN kept (_pairs)
            train, val = self._pairs(z[:t1], stride=self.stride), self._pairs(z[v0:T])
        train_series = z[: self.split_["train"][1]]  # the ridge start's: NaN left out there
        self.train_ = a
        self.system_ = self._new_system(C)
        self.system_.check_fit_settings(type(self).__name__, "moving_average_ and patch_len_")
        self.linear_init_ = None
        if self.linear_init == "ridge":
            try:
                info = self.system_.init_linear_ridge(train_series, val)
            except ValueError as e:  # named the ridge start's own argument, not y
                if not str(e).startswith("train_series:"):
                    raise
                raise ValueError(f"y: its training part (samples 0 to {len(train_series) - 1})"
                                 + str(e)[len("train_series"):]) from None  # fmt: skip
            self.linear_init_ = {k: info[k] for k in ("ridge", "normalize", "val_mse")}
        if any(p.requires_grad for p in self.system_.parameters()):
            self.history_ = self._train(train, val)
        else:
            # attention=False with a frozen linear branch: the closed-form model, no training
            loss = self.linear_init_["val_mse"] if self.linear_init_ else float("nan")
            self.system_.eval()
            self.history_ = {"initial_val_loss": loss, "final_val_loss": loss, "epochs": 0,
                             "kept_initial": True}  # fmt: skip
        self.n_channels_ = C
        self._record_structure()
        return self

    @property
    def moving_average_(self) -> int:
        """The trend kernel the net uses (fit warns where it is not ``moving_average``)."""
        self._check_fitted()
        return self.system_.net.moving_average

    @property
    def patch_len_(self) -> int | None:
        """The patch length the net uses (None without attention; fit warns as above)."""
        self._check_fitted()
        return self.system_.net.patch_len if self.attention else None

    def _check_horizon(self, horizon, name: str = "horizon") -> int:
        h = super()._check_horizon(horizon, name)
        if h > self.horizon:
            raise ValueError(f"{name}={h} exceeds the trained horizon {self.horizon}")
        return h

    def _prepare(self, a: np.ndarray) -> np.ndarray:
        return a  # missing samples become the training mean in _net_path

    def _without_future(self, a: np.ndarray, out: np.ndarray) -> np.ndarray:
        """NaN at the origins whose window (``lookback`` samples) holds no sample of some
        channel (the net reads them all): before a channel's first sample or in a gap longer
        than the window it forecast from the training mean it put there."""
        seen = np.cumsum(np.vstack([np.zeros((1, a.shape[1])), np.isfinite(a)]), axis=0)
        start = np.maximum(np.arange(len(a)) + 1 - self.lookback, 0)
        empty = (seen[1:] == seen[start]).any(axis=1)  # (T,)
        out = out.copy()
        out[empty] = np.nan
        return out

    @torch.no_grad()
    def _net_path(self, a: np.ndarray, batch: int = 512) -> np.ndarray:
        """(T, horizon, C) forecasts of the net from every window of ``a`` (NaN before the
        first full window)."""
        net = self.system_.net.eval()
        z = np.nan_to_num(in_float32_reach((a - self.mean_) / self.scale_, "y"))  # NaN -> mean
        T, C = z.shape
        out = np.full((T, self.horizon, C), np.nan)
        Lb = self.lookback
        if T < Lb:
            return out
        view = np.lib.stride_tricks.sliding_window_view(z, Lb, axis=0)  # (T-Lb+1, C, Lb)
        for s in range(0, view.shape[0], batch):
            xb = torch.as_tensor(view[s : s + batch].transpose(0, 2, 1).copy(), dtype=torch.float32)
            out[Lb - 1 + s : Lb - 1 + s + xb.shape[0]] = net(xb).double().numpy()
        return out * self.scale_ + self.mean_

    def _path(self, a: np.ndarray, horizon: int) -> np.ndarray:
        return self._net_path(a)[:, :horizon]

    def _direct_horizon(self) -> int:
        return self.horizon

    def _predict_context(self) -> int:
        return self.lookback


def __getattr__(name):
    # names that moved to tssdpa.models: deprecated here for one release
    if name in ("DenoisingNet", "ForecastingNet", "RIDGE_GRID", "ridge_linear_init"):
        msg = f"tssdpa.filters.learned.{name} is deprecated; import it from tssdpa.models"
        warnings.warn(msg, DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("tssdpa.models"), name)
    raise AttributeError(f"module 'tssdpa.filters.learned' has no attribute {name!r}")
