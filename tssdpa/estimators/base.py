"""The estimator base: scikit-learn parameter semantics plus the filter / forecaster protocols.

Rules every estimator in tssdpa follows (projection filters, hybrids, learned models and the
classical baselines alike):

* ``__init__`` only stores its arguments under their own names; :meth:`Estimator.fit`
  validates them (an error names the argument) and sets fitted attributes ending in ``_``;
* :meth:`~Estimator.get_params` / :meth:`~Estimator.set_params` (which returns ``self``) and
  :meth:`~Estimator.clone` come from the ``__init__`` signature;
* renamed parameters stay accepted for one release through ``_renamed_params``
  (old name → new name), with a ``DeprecationWarning``;
* input goes through :func:`~tssdpa.estimators.arrays.as_2d` and results come back through
  :func:`~tssdpa.estimators.arrays.restore`;
* :meth:`~Estimator.save` / :meth:`~Estimator.load` use one format with a strict schema
  (:mod:`tssdpa.estimators.persistence`).

:class:`Denoiser` and :class:`Forecaster` add the two protocols of ``docs/CONTRACTS.md``.
"""

from __future__ import annotations

import copy
import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from tssdpa.checks import check_int
from tssdpa.estimators.arrays import as_2d, check_columns, restore
from tssdpa.estimators.fit_guard import keeps_the_last_fit_on_failure
from tssdpa.estimators.fit_input import (
    check_fit_input,
    denoiser_input,
    target_like,
    warn_series,
    without_dropout,
)
from tssdpa.estimators.pandas_out import path_like, predicted, predicted_after
from tssdpa.estimators.params import (
    NotFittedError,
    SklearnProtocol,
    param_copy,
    same_setting,
    unknown_parameters,
)
from tssdpa.estimators.spacing import warn_uneven
from tssdpa.signal.missing import fill_missing, reading_span, reading_spans, recent_rows

__all__ = [
    "Denoiser",
    "Estimator",
    "Forecaster",
    "check_fit_input",
    "renamed",
    "target_like",
    "unknown_parameters",
]


def renamed(
    params: dict[str, Any], cls_name: str, mapping: dict[str, str], warn: bool = True
) -> dict[str, Any]:
    """``params`` with deprecated names replaced by their new ones (a warning per name unless
    ``warn`` is False, e.g. when reading a file that the user did not write by hand)."""
    out = dict(params)
    for old, new in mapping.items():
        if old not in out:
            continue
        if new in out:
            raise TypeError(f"{cls_name}: give {new}= only ({old}= is its deprecated name)")
        if warn:
            warnings.warn(
                f"{cls_name}: {old}= is deprecated, use {new}= (removed in the next release)",
                DeprecationWarning,
                stacklevel=4,  # the caller of __init__ / set_params
            )
        out[new] = out.pop(old)
    return out


class Estimator(SklearnProtocol):
    """Parameter handling, cloning, fitted-state checks and persistence for every estimator."""

    #: deprecated parameter names still accepted: old name -> new name
    _renamed_params: ClassVar[dict[str, str]] = {}
    #: persistence schema: fitted attributes kept in config.json, with their allowed types
    _fitted_schema: ClassVar[dict[str, tuple]] = {}
    #: further checks of loaded fitted values, ``check(estimator, value) -> value``
    _fitted_checks: ClassVar[dict[str, Callable]] = {}
    #: persistence schema: fitted numpy arrays kept in the safetensors file (all optional)
    _array_schema: ClassVar[tuple[str, ...]] = ()
    #: saved arrays that may hold NaN (by name, also nested: ``base_.train_``): the training
    #: series keeps its gaps; every other fitted value is a number, never missing
    _arrays_with_nan: ClassVar[tuple[str, ...]] = ("train_",)
    #: saved per-channel arrays, shape (n_channels_,): name -> whether it must be > 0 (a scale)
    _channel_arrays: ClassVar[dict[str, bool]] = {}
    #: parameters added after files were first saved: the value a file without one was fitted
    #: with (so that an older file loads as the estimator it was)
    _saved_defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "fit" in cls.__dict__:
            cls.fit = keeps_the_last_fit_on_failure(cls.__dict__["fit"])
        init = cls.__dict__.get("__init__")
        if init is not None and ("_renamed_params" in cls.__dict__ or "_rename" in cls.__dict__):

            @functools.wraps(init)
            def __init__(self, *args, **params):
                init(self, *args, **type(self)._rename(params))

            cls.__init__ = __init__

    @classmethod
    def _rename(cls, params: dict, warn: bool = True) -> dict:
        """``params`` with deprecated names mapped to the current ones."""
        return renamed(params, cls.__name__, cls._all_renamed(), warn)

    def _store(self, arguments: dict) -> None:
        """Store the constructor's arguments (``locals()`` of ``__init__``) under their own
        names, unchanged: the whole of an estimator's ``__init__``."""
        for name in self._param_names():
            setattr(self, name, arguments[name])

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            name
            for name, p in sig.parameters.items()
            if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        ]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor arguments as a dict."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params) -> Estimator:
        """Set constructor arguments (deprecated names accepted); unknown names raise
        ``ValueError``. Returns ``self``. As in scikit-learn, what ``fit`` learned stays until
        the next ``fit``; filters that learn nothing from data use the new values at once."""
        params = self._rename(params)
        names = set(self._param_names())
        for k in params:
            if k not in names:
                raise ValueError(f"unknown parameter {k!r} for {type(self).__name__}")
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def clone(self) -> Estimator:
        """A new, unfitted estimator with copies of the same parameters (deep copies, as
        scikit-learn's ``clone`` makes: editing the clone's dicts leaves this one alone)."""
        return type(self)(**{k: param_copy(v) for k, v in self.get_params().items()})

    @classmethod
    def _all_renamed(cls) -> dict[str, str]:
        out: dict[str, str] = {}
        for k in reversed(cls.__mro__):
            out.update(k.__dict__.get("_renamed_params", {}))
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    #: parameters the fitted state is shaped by (a lookback, an embedding, a horizon): changed
    #: after fit, the state no longer fits them, and using it is refused naming them
    _structural_params: ClassVar[tuple[str, ...]] = ()

    def _record_structure(self) -> None:
        """Called at the end of fit and of load: the structural parameters the state fits."""
        # copies: a dict parameter edited in place is a change too
        self._fitted_structure_ = {n: copy.deepcopy(getattr(self, n))
                                   for n in self._structure_names()}  # fmt: skip

    def _structure_names(self) -> tuple[str, ...]:
        """The structural parameters this fit depends on (all of ``_structural_params`` unless
        a subclass knows that its fitted settings leave some unused)."""
        return self._structural_params

    def _check_fitted(self, attribute: str = "n_channels_") -> None:
        if not hasattr(self, attribute):
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit() first")
        fitted = self.__dict__.get("_fitted_structure_", {})
        changed = [f"{n}={getattr(self, n)!r} (fitted with {v!r})" for n, v in fitted.items()
                   if not same_setting(getattr(self, n), v)]  # fmt: skip
        if changed:
            raise ValueError(f"{type(self).__name__}: {', '.join(changed)} changed after fit: "
                             "set it back, or fit again")  # fmt: skip

    def _check_channels(self, a: np.ndarray, name: str = "x", meta=None) -> None:
        n = getattr(self, "n_channels_", None)
        if n is not None and a.shape[1] != n:
            raise ValueError(
                f"{name} has {a.shape[1]} channel(s) but {type(self).__name__} was fitted on {n}"
            )
        if meta is not None:  # a DataFrame: its columns by name, those of a DataFrame fit
            check_columns(self, meta, name)

    # ------------------------------------------------------------------ persistence
    def save(self, path) -> None:
        """Save to directory ``path`` (config.json + arrays.safetensors; nothing pickled).

        Only estimators that declare a persistence schema can be saved; the others raise
        ``NotImplementedError`` rather than write a file that loads unfitted."""
        from tssdpa.estimators import persistence

        persistence.save(self, path)

    @classmethod
    def load(cls, path):
        """Load an estimator written by :meth:`save`, checked against the class's schema."""
        from tssdpa.estimators import persistence

        return persistence.load(cls, path)

    @classmethod
    def _array_allowed(cls, key: str) -> bool:
        """Whether a saved array named ``key`` belongs to this class's schema."""
        return key in cls._array_schema

    def _state(self) -> tuple[dict, dict]:
        """(fitted JSON values, numpy arrays) to save; by default what the schemas name."""
        fitted = {k: getattr(self, k) for k in self._fitted_schema if hasattr(self, k)}
        arrays = {k: np.asarray(getattr(self, k)) for k in self._array_schema if hasattr(self, k)}
        return fitted, arrays

    def _check_saved_arrays(self, C, arrays: dict) -> None:
        """The training series (samples, C) with a finite sample; the ``_channel_arrays``
        one value per channel, the scales > 0."""
        train = arrays.get("train_")
        if train is not None and (train.ndim != 2 or (C is not None and train.shape[1] != C)):
            raise ValueError(f"train_ must be (samples, n_channels_={C}), got {train.shape}")
        if train is not None and not np.isfinite(train).any():
            raise ValueError("train_ holds no finite sample")
        for name, positive in self._channel_arrays.items():
            v = arrays.get(name)
            if v is None:
                continue
            if v.shape != (C,) or (positive and not (np.isfinite(v) & (v > 0)).all()):
                rule = "one value per channel" + (", each > 0 and finite" if positive else "")
                raise ValueError(f"{name} must hold {rule} (n_channels_={C}), got {v}")

    def _set_state(self, fitted: dict, arrays: dict) -> None:
        """Inverse of :meth:`_state` (values already checked against the schema; those named
        in ``_fitted_checks`` also by their check, ``check(estimator, value) -> value``)."""
        self._check_saved_arrays(fitted.get("n_channels_"), arrays)
        for k, v in {**fitted, **arrays}.items():
            setattr(self, k, v)
        for k, check in self._fitted_checks.items():
            if k in fitted:
                setattr(self, k, check(self, fitted[k]))


class Denoiser(Estimator):
    """``fit(x, target=None) -> self`` then ``filter(x)``, shaped and typed like ``x``.

    Subclasses define ``_fit(a, target)`` (design from (T, C) arrays; may ignore the data)
    and ``_filter_1d(x, channel)``; missing samples are filled first unless ``handles_nan``
    (a causal filter's output is NaN before a channel's first sample: the filling took a
    later sample there).
    """

    #: whether ``fit`` learns from data (``filter`` before ``fit`` raises only then)
    trainable: ClassVar[bool] = False
    #: whether ``_filter_1d`` accepts NaN samples itself
    handles_nan: ClassVar[bool] = False
    #: whether ``fit`` needs the clean ``target`` (supervised only)
    requires_target: ClassVar[bool] = False
    #: whether ``fit`` reads a ``target`` given to it: False where it takes one and ignores
    #: it (so that one comparison loop passes it to every denoiser); the command line
    #: refuses ``--target`` there rather than fit unsupervised while the user asked otherwise
    uses_target: ClassVar[bool] = True
    #: whether output t depends on input up to t only (a parameter or property in subclasses)
    causal: bool = True

    def _validate_params(self) -> None:
        """Check the constructor arguments; raise naming the argument. Called by ``fit``."""

    def save(self, path) -> None:
        if self.trainable:  # a trained filter unfitted has nothing to apply (it raised
            self._check_fitted()  # AttributeError 'n_channels_' reading its state)
        super().save(path)

    def fit(self, x, target=None) -> Denoiser:
        """Fit on a noisy training series ``x`` (and its clean ``target`` when known)."""
        a, meta = denoiser_input(self, x)  # a DatetimeIndex not equally spaced: warned of
        check_fit_input(a, "x", meta, flags_told=True)
        tgt = target_like(target, a, meta)
        self._validate_params()
        self._fit(a, tgt)
        self.n_channels_ = a.shape[1]
        self._record_structure()
        return self

    def _fit(self, a: np.ndarray, target: np.ndarray | None) -> None:
        return None

    def filter(self, x):
        """Filter ``x`` (T,) or (T, C); returns the same shape and type."""
        a, meta = denoiser_input(self, x)
        if self.trainable:  # NotFittedError before fit (it was a bare ValueError here, which
            self._check_fitted()  # `except NotFittedError` missed); refused if changed since
            self._check_channels(a, meta=meta)
        else:  # a data-free design: redone on use, so it always follows the parameters
            self._validate_params()
            self._fit(a, None)
        filled = a if self.handles_nan else fill_missing(a, self.causal, "x")
        out = np.column_stack([self._filter_1d(filled[:, c], c) for c in range(a.shape[1])])
        if self.causal:  # nothing before a channel's first sample: filled ones took a later
            out[before_history(a)] = np.nan  # sample, NaN-handling ones gave 0 (Kalman)
        return restore(out, meta)

    def _filter_1d(self, x: np.ndarray, channel: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class Forecaster(Estimator):
    """``fit(y)``, then rolling-origin ``forecast_path`` / ``forecast`` and ``predict``.

    ``forecast_path(y, horizon=H)[t, h-1]`` predicts ``y[t+h]`` from ``y[:t+1]`` only (NaN where
    the history is too short). Subclasses define ``_fit(a)`` and ``_path(a, horizon)`` on
    (T, C) arrays, or the per-channel ``_fit_1d`` / ``_path_1d``.
    """

    #: whether ``fit`` learns from data
    trainable: ClassVar[bool] = True
    #: forecasts use the past only, always
    causal: ClassVar[bool] = True
    fits_missing: ClassVar[bool] = False  # _fit_1d takes NaN as it is (a Kalman filter)

    def save(self, path) -> None:
        self._check_fitted()  # an unfitted forecaster has nothing to apply
        super().save(path)

    def _validate_params(self) -> None:
        """Check the constructor arguments; raise naming the argument. Called by ``fit``."""

    def fit(self, y) -> Forecaster:
        """Fit on the training series ``y`` (T,) or (T, C)."""
        a, meta = as_2d(y, "y")
        warn_uneven(self, meta)  # gaps in a DatetimeIndex: fitted as equally spaced samples
        check_fit_input(a, "y", meta)
        if len(a) < 3:
            raise ValueError(f"y must have at least 3 samples; got {len(a)}")
        self._validate_params()
        self.train_ = a
        self._fit(a)
        self.n_channels_ = a.shape[1]
        self._record_structure()
        return self

    def _fit(self, a: np.ndarray) -> None:
        filled = a if self.fits_missing else fill_missing(a, True)
        self.models_ = []  # each channel from its first reading to its last (a filled head
        # or tail was a constant fitted as data)
        for c, (start, end) in enumerate(reading_spans(a)):
            try:
                self.models_.append(self._fit_1d(filled[start:end, c]))
            except (ValueError, IndexError, np.linalg.LinAlgError) as exc:
                if (start, end) == (0, len(a)):
                    raise
                n = int(np.isfinite(a[start:end, c]).sum())
                raise ValueError(f"{reading_span('y', c, start, end, len(a))}: its {n} "
                                 "reading(s) are too few to fit "
                                 f"({type(exc).__name__}: {exc})") from None  # fmt: skip

    def _fit_1d(self, y: np.ndarray):  # pragma: no cover
        raise NotImplementedError

    def _path(self, a: np.ndarray, horizon: int) -> np.ndarray:
        return np.stack(
            [self._path_1d(self.models_[c], a[:, c], horizon) for c in range(a.shape[1])], axis=-1
        )

    def _path_1d(self, model, y: np.ndarray, horizon: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _series(self, y, horizon, name: str = "horizon"):
        """Checked ``(a (T, C) with NaN filled, meta, horizon)`` for a forecasting call."""
        self._check_fitted()
        horizon = self._check_horizon((self._direct_horizon() or 1) if horizon is None else horizon,
                                      name)  # fmt: skip
        a, meta = as_2d(y, "y")
        self._check_channels(a, "y", meta)
        warn_series(self, a, meta)  # an uneven index; a dead channel blanking a joint forecast
        return a, meta, horizon

    def _check_horizon(self, horizon, name: str = "horizon") -> int:
        return check_int(horizon, name)

    def _prepare(self, a: np.ndarray) -> np.ndarray:
        """The series as ``_path`` needs it (default: NaN carried forward)."""
        return fill_missing(a, True, "y")

    def forecast_path(self, y, horizon: int | None = None):
        """Rolling-origin forecasts: ``out[t, h-1]`` predicts ``y[t+h]`` from ``y[:t+1]`` only,
        h = 1 .. ``horizon`` (default as :meth:`forecast`). (T, H) for a 1-D ``y``, else (T, H,
        C); NaN where history is too short; a pandas ``y`` gives a DataFrame on its index
        (columns: :mod:`.pandas_out`)."""
        a, meta, horizon = self._series(y, horizon)
        return path_like(self._without_future(a, self._path(self._prepare(a), horizon)), meta)

    def forecast(self, y, horizon: int | None = None):
        """Aligned with ``y`` (same type and shape): entry ``t`` predicts ``y[t+horizon]``
        from ``y[:t+1]``; NaN where the history is too short. ``horizon`` defaults to the
        fitted one of a forecaster that has one (``ProjectionForecaster(horizon=6)``: 6 steps
        ahead), else 1 (until 2026-12-06 always 1, whatever the fit)."""
        a, meta, horizon = self._series(y, horizon)
        out = self._without_future(a, self._forecast_h(self._prepare(a), horizon)[:, None])
        return restore(out[:, 0], meta)

    def _channels_apart(self) -> bool:
        """Whether each channel's forecasts read that channel's past alone."""
        return True

    def _without_future(self, a: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out`` (T, H, C), forecasts from the filled ``a`` (T, C), NaN at the origins whose
        past holds no sample of the channels read: the default ``_prepare`` gave the leading
        NaN the first sample, which came after them (they were forecast from it)."""
        before = before_history(a)
        if not before.any() or type(self)._prepare is not Forecaster._prepare:
            return out
        if not self._channels_apart():
            before = np.broadcast_to(before.any(axis=1, keepdims=True), before.shape)
        out = out.copy()
        out[np.broadcast_to(before[:, None, :], out.shape)] = np.nan
        return out

    def _forecast_h(self, a: np.ndarray, h: int) -> np.ndarray:
        """(T, C) forecasts of horizon ``h`` alone (direct methods override this)."""
        return self._path(a, h)[:, h - 1]

    def _direct_horizon(self) -> int | None:
        """The largest horizon ``_path`` forecasts directly (None: any horizon)."""
        return None

    def _predict_context(self) -> int | None:
        """Trailing samples one forecast origin needs (None: the whole series)."""
        return None

    def _last_origin(self, history: np.ndarray, n: int) -> np.ndarray:
        """(n, C) forecasts of horizons 1..n from the last origin of ``history``: one step
        of :meth:`predict`."""
        return self._path(self._prepare(history), n)[-1]

    def _newest(self, a: np.ndarray, horizon: int) -> np.ndarray:
        """(T, horizon, C) forecasts whose last row ``predict(y=...)`` reads (the whole path;
        a model that forecasts one origin alone as it would the path overrides it)."""
        return self._path(a, horizon)

    def predict(self, steps: int, y=None):
        """Forecast ``steps`` values past the end of ``y``, by default the fitted series:
        (steps,) for one channel, else (steps, C); pandas after a fit on pandas.

        A model with a largest horizon (``horizon`` of the direct multi-step models) goes
        beyond it recursively, its forecasts appended to the series (each round reads only the
        samples one origin needs). ``y`` (a live loop's buffer of its newest samples): the
        first ``n = min(steps, horizon)`` forecasts are ``forecast_path(y, n)[-1]``, computed
        for that origin alone where the model can, returned like ``y`` (pandas on its index
        continued). Rows with no sample at the end (a dropout of ``g`` rows): the last row
        seen's forecasts ``g + 1 .. g + steps`` ahead (until 2026-12-07, from its values
        carried over)."""
        self._check_fitted()
        steps = check_int(steps, "steps")
        a, meta = self.train_, None
        if y is not None:
            a, meta, _ = self._series(y, 1)
        a, gap = without_dropout(self, a, meta)
        total = steps + gap
        direct = self._direct_horizon() or total
        context = self._predict_context()
        out = np.empty((total, self.n_channels_))
        done = 0
        if y is None:
            history = recent_rows(a, context)
        else:
            done = min(direct, total)
            out[:done] = self._without_future(a, self._newest(self._prepare(a), done))[-1]
            history = recent_rows(np.concatenate([a, out[:done]]), context)
        while done < total:
            n = min(direct, total - done)
            out[done : done + n] = self._last_origin(history, n)
            history = recent_rows(np.concatenate([history, out[done : done + n]]), context)
            done += n
        out = out[gap:]
        if meta is not None:
            return predicted_after(out, meta)
        return predicted(self, out[:, 0] if self.n_channels_ == 1 else out)


def before_history(a: np.ndarray) -> np.ndarray:
    """(T, C) bools: the rows of (T, C) ``a`` before each channel's first finite sample."""
    return ~np.logical_or.accumulate(np.isfinite(a), axis=0)
