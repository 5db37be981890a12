"""The hybrid denoiser: a least-squares Wiener FIR plus a projection of its residual.

The same construction as :mod:`tssdpa.filters.residual` for forecasting: the linear filter
first, then a Gaussian-kernel projection over a library of training patterns estimates what
it gets wrong, with the kernel width and shrinkage chosen on a held-out tail.
"""

from __future__ import annotations

import warnings

import numpy as np

from tssdpa.baselines.linear import WienerFIRFilter
from tssdpa.checks import (
    LibraryWarning,
    check_choice,
    check_fraction,
    check_int,
    check_positive,
    warn,
)
from tssdpa.estimators.arrays import check_state, restore
from tssdpa.estimators.base import Denoiser
from tssdpa.estimators.fit_input import denoiser_input
from tssdpa.estimators.input_notes import user_stacklevel
from tssdpa.estimators.persistence import nest, require_floats, saved_channels, unnest
from tssdpa.estimators.selection import (
    check_fade,
    choose_correction,
    correction_sigmas,
    fade_radius,
)
from tssdpa.filters.projection_stream import stream_channels
from tssdpa.filters.step_sample import step_filtered, step_sample
from tssdpa.signal.embedding import delay_embedding, standardise
from tssdpa.signal.library import kernel_regression, nearest_distance
from tssdpa.signal.missing import fill_missing, reading_ends, stops_early, unknown_past_readings

__all__ = ["ResidualProjectionFilter"]

#: FIR lengths above this are most likely a library size in the spelling before 0.2
_LONG_FIR = 1024


class ResidualProjectionFilter(Denoiser):
    """Least-squares Wiener FIR plus a projection estimate of its residual (needs a clean target).

    The keys are delay embeddings (length ``embedding``) of the Wiener FIR's output: past
    samples only when ``causal``, centred otherwise. Fitted per channel; the library holds the
    training patterns and the Wiener FIR's residuals ``target - output`` there.

    Parameters
    ----------
    window : int
        FIR length of the :class:`~tssdpa.baselines.WienerFIRFilter`. Formerly ``taps``.
    causal : bool
    embedding : int
        Pattern length.
    sigma : float, list of float, or None
        Kernel width candidates in standardised units (``None``: ``sqrt(embedding) * 2**-8 .. 1``).
    holdout : float
        Fraction of the training series held out to choose sigma and alpha.
    library_size : int
        At most this many (the newest) training patterns form the library. Formerly
        ``window``.
    ridge : float
        Ridge penalty of the Wiener FIR.
    fade : float or None
        Fade the correction out for patterns farther from the library than ``fade`` times the
        largest holdout distance (as in :class:`ResidualProjectionForecaster`).

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import ResidualProjectionFilter
    >>> rng = np.random.default_rng(0)
    >>> clean = np.sign(np.sin(np.arange(2000) * 0.02))
    >>> noisy = clean + 0.3 * rng.standard_normal(2000)
    >>> f = ResidualProjectionFilter(window=16, embedding=8).fit(noisy[:1500], target=clean[:1500])
    >>> out = f.filter(noisy)
    >>> def mse(a):
    ...     return float(np.mean((a[1500:] - clean[1500:]) ** 2))
    >>> mse(out) < mse(noisy)
    True
    """

    trainable = True
    requires_target = True

    _renamed_params = {"taps": "window"}
    _structural_params = ("window", "embedding", "causal")

    @classmethod
    def _rename(cls, params, warn=True):
        # Before 0.2 ``window`` was the library size and ``taps`` the FIR length. A call that
        # still says taps= is in the old spelling, so its window= is the library size.
        if "taps" in params and "window" in params:
            params = dict(params)
            if warn:
                warnings.warn(
                    "ResidualProjectionFilter: with taps=, window= is read as the library size "
                    "(its name before 0.2); use window= for the FIR length and library_size=",
                    DeprecationWarning,
                    stacklevel=4,
                )
            params["library_size"] = params.pop("window")
        return super()._rename(params, warn)

    def __init__(
        self,
        window=16,
        causal=True,
        embedding=8,
        sigma=None,
        holdout=0.25,
        library_size=20000,
        ridge=1e-6,
        fade=2.0,
    ):
        self._store(locals())

    def _validate_params(self) -> None:
        for name in ("window", "embedding", "library_size"):
            check_int(getattr(self, name), name)
        check_choice(self.causal, "causal", (True, False))
        if self.window > _LONG_FIR:
            warn(
                f"ResidualProjectionFilter: window={self.window} taps. Since 0.2 window is the "
                "FIR length; before, it was the library size (now library_size=)",
                LibraryWarning,
                stacklevel=user_stacklevel(),
            )
        correction_sigmas(self.sigma, 1)
        check_fraction(self.holdout, "holdout")
        check_positive(self.ridge, "ridge", allow_zero=True)
        check_fade(self.fade)

    def _base(self):
        return WienerFIRFilter(window=self.window, causal=self.causal, ridge=self.ridge)

    def _keys(self, lin, c):
        """(T, embedding) patterns of the standardised linear output; edges repeat the ends."""
        m = self.embedding
        z = standardise(lin, self.mean_[c], self.scale_[c])
        ahead = 0 if self.causal else m // 2
        pad = np.concatenate([np.full(m - 1 - ahead, z[0]), z, np.full(ahead, z[-1])])
        E = delay_embedding(pad[:, None], m, offset=ahead)
        return E[m - 1 - ahead : m - 1 - ahead + len(z)]

    def _fit(self, a, target):
        if target is None:
            raise ValueError(
                "ResidualProjectionFilter needs the clean target: fit(x, target=clean)"
            )
        if not np.isfinite(target).all():  # naming where: a CLI user reads a column's name
            t, c = (int(i[0]) for i in np.nonzero(~np.isfinite(target)))
            which = f"target channel {c}" if target.shape[1] > 1 else "target"
            raise ValueError(f"{which} is missing at sample {t}: the clean signal must be "
                             "known at every sample (no NaN / inf)")  # fmt: skip
        ends = reading_ends(a)  # x's missing tail, filled, is made up: nothing is fitted there
        a = fill_missing(a, self.causal)
        T, C = a.shape
        n_head = T - max(int(round(self.holdout * T)), 1)
        if n_head <= self.window + self.embedding:
            raise ValueError(
                f"x has {T} samples; too few for window={self.window}, embedding={self.embedding}"
            )
        sigmas = correction_sigmas(self.sigma, self.embedding)
        # the FIRs too: a NaN target sample is no equation of theirs
        self.base_ = self._base().fit(a, unknown_past_readings(target, ends))
        lin_all = np.column_stack([self.base_._filter_1d(a[:, c], c) for c in range(C)])
        self.mean_, sd = lin_all.mean(axis=0), lin_all.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        # sigma / alpha: the Wiener FIR refitted on the head, scored on the held-out tail --
        # of each channel's readings: past x's last one the FIR's output is that of the held
        # reading, made up (the correction was scored there, and switched off)
        self.sigma_, self.alpha_, self.null_distance_ = np.zeros(C), np.zeros(C), np.zeros(C)
        for c, end in enumerate(ends):
            n_c = end - max(int(round(self.holdout * end)), 1)
            if n_c <= self.window + self.embedding:
                raise ValueError(
                    f"{stops_early('x', c, end, T)}: too few samples up to it for "
                    f"window={self.window}, embedding={self.embedding}"
                )
            head = self._base().fit(a[:n_c, [c]], target[:n_c, [c]])
            lin = head._filter_1d(a[:, c], 0)
            E = self._keys(lin, c)
            resid = (target[:, c] - lin)[:, None]
            lib, held = slice(max(0, n_c - self.library_size), n_c), slice(n_c, end)
            null = None
            if self.fade is not None:
                null = fade_radius(
                    self.fade, nearest_distance(E[held], E[lib]).max(), self.embedding
                )
                self.null_distance_[c] = np.nan if null is None else null
            corr = kernel_regression(E[held], E[lib], resid[lib], sigmas, None, null)
            s, al = choose_correction(resid[held], corr, sigmas)
            self.sigma_[c], self.alpha_[c] = s[0], al[0]
        self.library_ = []
        for c in range(C):
            rows = slice(max(0, ends[c] - self.library_size), ends[c])
            resid = (target[:, c] - lin_all[:, c])[rows, None]
            self.library_.append((self._keys(lin_all[:, c], c)[rows], resid))

    def _filter_1d(self, x, channel, skip=0):
        """The output of channel ``channel`` for the filled 1-D ``x``, but for its first
        ``skip`` samples (a stream's state: history only, their keys not searched)."""
        if channel >= len(self.library_):
            raise ValueError(f"x has more channels than the fitted filter ({len(self.library_)})")
        lin = self.base_._filter_1d(x, channel)
        if self.alpha_[channel] == 0:
            return lin[skip:]
        K, R = self.library_[channel]
        # the radius fit chose (0 fitted without fade, NaN no fade for the channel), whatever
        # fade says now: fitted without fade and set to fade=2.0, it read the 0 as a radius
        # and faded every correction out (as the forecaster, fade acts through fit only)
        null = self.null_distance_[channel]
        null = null if null > 0 else None
        (corr,) = kernel_regression(
            self._keys(lin, channel)[skip:], K, R, [self.sigma_[channel]], None, null
        )
        return lin[skip:] + self.alpha_[channel] * corr[:, 0]

    # ---------------------------------------------------------------- streaming (causal)
    @property
    def history_length(self) -> int:
        """Samples of past input the state keeps: the Wiener FIR's reach and the key's
        (``window - 1 + embedding - 1``), and one at least: the reading a missing sample
        repeats."""
        return max(1, self.window - 1 + self.embedding - 1)

    def initial_state(self, n_channels=None):
        """Empty state for :meth:`filter` (``zi``) and :meth:`step` of a fitted causal filter:
        a (:attr:`history_length`, C) array of NaN. A state holds the last samples as the
        filter read them (a missing one as the reading before it), NaN only before a
        channel's first reading. ``n_channels``, if given, is the fitted channel count."""
        if not self.causal:
            raise ValueError("a zero-phase (causal=False) filter has no streaming state")
        self._check_fitted()
        return np.full((self.history_length, stream_channels(self, n_channels)), np.nan)

    def filter(self, x, zi=None):
        """Filter ``x`` (T,) or (T, C), returned in its shape and type; with a state ``zi``
        (:meth:`initial_state` or a previous ``zf``, causal only) return ``(y, zf)``: any
        split of a series into calls gives the one-pass output."""
        if zi is None:
            return super().filter(x)
        if not self.causal:
            raise ValueError("zi is only defined for causal=True")
        self._check_fitted()
        a, meta = denoiser_input(self, x, stream=True)  # a chunk may be empty
        self._check_channels(a, meta=meta)
        hist = check_state(zi, self.initial_state())
        full = np.concatenate([hist, a])  # (H + T, C)
        y, zf = np.full(a.shape, np.nan), hist.copy()
        for c in range(a.shape[1]):
            ok = np.isfinite(full[:, c])
            if not ok.any():  # no reading yet: nothing to give, nothing to keep
                continue
            # before the first reading its value, as the one-pass fill and FIR padding have
            filled = fill_missing(full[:, [c]], True)[:, 0]
            first = int(np.argmax(ok))
            if len(a):
                y[:, c] = self._filter_1d(filled, c, skip=len(hist))
                y[: max(0, first - len(hist)), c] = np.nan  # before the first reading
            filled[:first] = np.nan  # the state: no reading there yet
            zf[:, c] = filled[len(filled) - len(hist) :]
        return restore(y, meta), zf

    def step(self, sample, state):
        """One sample (scalar or (C,)): returns ``(y_t, new_state)``."""
        s = step_sample(self, sample, state)  # checked by name, as ProjectionFilter's
        return step_filtered(self, s, state)

    # ---------------------------------------------------------------- persistence
    _fitted_schema = {"n_channels_": (int,), "base_": (dict,)}
    _arrays_with_nan = ("train_", "null_distance_")  # NaN: no null distance for that channel

    @classmethod
    def _array_allowed(cls, key: str) -> bool:
        name, _, rest = key.partition(".")
        if name == "base_":
            return WienerFIRFilter._array_allowed(rest)
        if name in ("library_keys", "library_residuals"):
            return rest.isdigit()
        return key in ("mean_", "scale_", "sigma_", "alpha_", "null_distance_")

    def _state(self):
        fitted = {"n_channels_": self.n_channels_}
        arrays = {k: getattr(self, k) for k in ("mean_", "scale_", "sigma_", "alpha_")}
        arrays["null_distance_"] = self.null_distance_
        for c, (K, R) in enumerate(self.library_):
            arrays[f"library_keys.{c}"], arrays[f"library_residuals.{c}"] = K, R
        nest(fitted, arrays, "base_", self.base_)
        return fitted, arrays

    def _set_state(self, fitted, arrays):
        C = self.n_channels_ = saved_channels(fitted)
        own = ("mean_", "scale_", "sigma_", "alpha_", "null_distance_")
        for k, v in zip(own, require_floats(arrays, *own)):
            if v.shape != (C,):
                raise ValueError(f"{k} must have one value per channel ({C}), got {v.shape}")
            if k in ("scale_", "sigma_") and not (v > 0).all():  # divisors
                raise ValueError(f"{k} must be > 0, got {v}")
            setattr(self, k, v)
        # a shrinkage outside [0, 1] would amplify the correction; a fade radius is a
        # distance > 0 (NaN: no fade for that channel; unused without fade)
        if not ((self.alpha_ >= 0) & (self.alpha_ <= 1)).all():
            raise ValueError(f"alpha_ must be in [0, 1], got {self.alpha_}")
        null = self.null_distance_
        if self.fade is not None and not (np.isnan(null) | (null > 0)).all():
            raise ValueError(f"null_distance_ must be > 0 or NaN (no fade), got {null}")
        if self.fade is None and (null > 0).any():  # radii are used: a fade the file denies
            raise ValueError(f"null_distance_ must be 0 without fade, got {null}")
        libraries = [(f"library_keys.{c}", f"library_residuals.{c}") for c in range(C)]
        known = {name for pair in libraries for name in pair}
        extra = sorted(k for k in arrays if k.startswith("library_") and k not in known)
        if extra:
            raise ValueError(f"array {extra[0]!r} is not a library of the {C} channel(s)")
        self.library_ = []
        for c, names in enumerate(libraries):
            K, R = require_floats(arrays, *names)
            if K.ndim != 2 or K.shape[1] != self.embedding or R.shape != (len(K), 1):
                raise ValueError(
                    f"library of channel {c} does not match embedding={self.embedding}"
                )
            if not len(K):  # fit keeps one at least; filtering failed in numpy's max
                raise ValueError(f"library of channel {c} must hold one pattern at least, got 0")
            self.library_.append((K, R))
        self.base_ = unnest(self._base(), fitted, arrays, "base_")
        if self.base_.n_channels_ != C:
            raise ValueError(f"base_ was fitted on {self.base_.n_channels_} channel(s), not {C}")
