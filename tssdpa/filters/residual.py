"""Linear model + projection of its residual: the hybrid forecaster (the denoiser is in
:mod:`tssdpa.filters.residual_filter`).

A fitted linear model (AutoReg or the closed-form DLinear for forecasting, the least-squares
Wiener FIR for denoising) predicts first; a projection (Gaussian-kernel SDPA, Nadaraya–Watson)
over a *library* of training patterns then predicts what the linear model gets wrong::

    out[t] = linear[t] + alpha * sum_j w_tj r_j,   w_tj = softmax_j(-||e_t - e_j||^2 / 2 sigma^2)

where ``e`` are standardised delay embeddings and ``r_j`` the linear model's residuals on the
training series. ``sigma`` and the shrinkage ``alpha`` in [0, 1] are chosen on a held-out tail
of the training series (the linear model refitted without it), per horizon and channel;
``alpha = 0`` gives back the linear model, so on linear data the hybrid costs little. The
library is fixed at :meth:`fit` (keys are training patterns only), which keeps forecasts from
any origin exactly causal and makes every horizon one attention pass.
"""

from __future__ import annotations

import copy

import numpy as np

from tssdpa.baselines.forecasters import AutoRegForecaster, DLinearForecaster
from tssdpa.checks import check_choice, check_fraction, check_int, check_positive, warn
from tssdpa.estimators.base import Forecaster, before_history, unknown_parameters
from tssdpa.estimators.input_notes import user_stacklevel
from tssdpa.estimators.persistence import (
    check_context,
    nest,
    require_floats,
    saved_channels,
    unnest,
)
from tssdpa.estimators.selection import (
    check_fade,
    choose_correction,
    correction_sigmas,
    fade_radius,
)
from tssdpa.filters.library_cache import hard_bounds, within_bounds
from tssdpa.signal.embedding import delay_embedding, standardise
from tssdpa.signal.library import kernel_regression, nearest_distance
from tssdpa.signal.missing import fill_missing, reading_ends, reading_starts, unknown_past_readings

__all__ = ["ResidualProjectionForecaster"]


def _group_rows(E, R):
    """(M, G) bools: the library rows whose pattern (M, G, D) and residual path (M, H, C) are
    known, per pattern group (one joint group of every channel, or group g of channel g)."""
    paths = np.isfinite(R).all(axis=1)  # (M, C)
    paths = paths.all(axis=1, keepdims=True) if E.shape[1] == 1 else paths
    return np.isfinite(E).all(axis=2) & paths


def _known_keys(keys):
    """The rows of (M, D) ``keys`` without NaN (a group's rows unknown where a channel stops)."""
    ok = np.isfinite(keys).all(axis=1)
    return keys if ok.all() else keys[ok]


class ResidualProjectionForecaster(Forecaster):
    """Linear forecaster plus a projection (analogue) forecast of its residual path.

    Parameters
    ----------
    base : {"autoreg", "dlinear"}
        The linear model: :class:`~tssdpa.baselines.AutoRegForecaster` (recursive AR(p)) or
        :class:`~tssdpa.baselines.DLinearForecaster` (closed-form DLinear, ``lookback``).
    base_params : dict, optional
        Constructor arguments of the linear model (e.g. ``{"lags": 24}``, ``{"ridge": 1.0}``).
    embedding : int
        Length of the pattern (delay embedding of the standardised series) used as key/query.
        Formerly ``lags``.
    horizon : int
        Largest horizon; sigma and alpha are chosen for each step 1..horizon.
    lookback : int
        Lookback window of the ``"dlinear"`` base (ignored by ``"autoreg"``).
    library_size : int
        At most this many (the newest) training patterns form the library. Formerly
        ``window``.
    sigma : float, list of float, or None
        Kernel width candidates in standardised units (``None``: ``sqrt(D) * 2**-8 .. 1``).
    holdout : float
        Fraction of the training series held out to choose sigma and alpha (of a channel's
        own readings where they stop before it, one channel a pattern; a joint pattern warns).
    max_holdout_origins : int
        Holdout origins scored (evenly spaced) at most.
    channel_independent : bool
        One pattern per channel (keys of length ``embedding``) instead of one joint pattern of
        all channels (length ``embedding * C``).
    fade : float or None
        Fade the correction out for patterns farther from every training pattern than ``fade``
        times the largest distance of a holdout pattern to its nearest one (a zero-residual
        pseudo-pattern at that distance, see :func:`~tssdpa.signal.library.kernel_regression`):
        level shifts or regimes absent from training then get the linear forecast rather than
        the residual of an unrelated pattern. ``None`` disables it.

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import ResidualProjectionForecaster
    >>> t = np.arange(800) * 0.05
    >>> y = np.sin(t) + 0.5 * np.sin(3.1 * t) ** 3
    >>> fc = ResidualProjectionForecaster(base_params={"lags": 8}, embedding=8, horizon=5)
    >>> fc = fc.fit(y[:600])
    >>> path = fc.forecast_path(y, horizon=5)  # path[t, h-1] predicts y[t+h] from y[:t+1]
    >>> path.shape
    (800, 5)
    """

    _renamed_params = {"lags": "embedding", "window": "library_size"}
    _structural_params = ("base", "base_params", "embedding", "horizon", "lookback",
                          "channel_independent")  # fmt: skip

    def __init__(
        self,
        base="autoreg",
        base_params=None,
        embedding=16,
        horizon=1,
        lookback=336,
        library_size=8000,
        sigma=None,
        holdout=0.25,
        max_holdout_origins=1000,
        channel_independent=False,
        fade=2.0,
    ):
        self._store(locals())

    def _validate_params(self) -> None:
        check_choice(self.base, "base", ("autoreg", "dlinear"))
        if self.base_params is not None and not isinstance(self.base_params, dict):
            raise TypeError(
                f"base_params must be a dict or None, got {type(self.base_params).__name__}"
            )
        own = {"lookback", "horizon"} & set(self.base_params or {})
        if own:
            raise ValueError(
                f"base_params must not set {sorted(own)}: pass them to "
                "ResidualProjectionForecaster itself"
            )
        for name in ("embedding", "horizon", "lookback", "library_size", "max_holdout_origins"):
            check_int(getattr(self, name), name)
        correction_sigmas(self.sigma, 1)
        check_fraction(self.holdout, "holdout")
        check_fade(self.fade)
        check_choice(self.channel_independent, "channel_independent", (True, False))
        self._make_base()._validate_params()  # invalid base_params fail here, naming them

    # ----------------------------------------------------------------- pieces
    def _make_base(self):
        params = dict(self.base_params or {})
        cls = AutoRegForecaster if self.base == "autoreg" else DLinearForecaster
        unknown, valid = unknown_parameters(cls, params)
        if unknown:  # it was Python's "unexpected keyword argument"
            raise ValueError(f"base_params: unknown parameter(s) {unknown} for base="
                             f"{self.base!r}; valid: {', '.join(valid)}")  # fmt: skip
        if self.base == "autoreg":
            return AutoRegForecaster(**params)
        return DLinearForecaster(lookback=self.lookback, horizon=self.horizon, **params)

    def _channels_apart(self) -> bool:
        return bool(self.channel_independent)  # else one pattern holds every channel

    def _structure_names(self) -> tuple[str, ...]:
        # the autoreg base does not read the lookback: changing it after fit changes nothing
        unused = () if self.base == "dlinear" else ("lookback",)
        return tuple(n for n in self._structural_params if n not in unused)

    def _keys(self, a):
        """(T, G, D) patterns: G = 1 joint pattern or C per-channel ones; NaN when incomplete."""
        z = standardise(a, self.mean_, self.scale_)
        m = self.embedding
        if self.channel_independent:
            return np.stack([delay_embedding(z[:, [c]], m) for c in range(a.shape[1])], 1)
        return delay_embedding(z, m)[:, None, :]

    def _context(self):
        """Samples before an origin the base needs to forecast from it."""
        if self.base == "dlinear":
            return self.lookback
        return int((self.base_params or {}).get("lags", AutoRegForecaster().lags))

    def _residual_paths(self, base, a, origins, H, truth=None):
        """(N, H, C) truth minus the base's forecast path from each origin (NaN past the end).

        ``truth`` (default ``a``): what the paths are scored against, NaN where unknown.
        Computed over contiguous chunks of origins so memory stays O(chunk * H * C)."""
        T, C = a.shape
        truth_of = a if truth is None else truth
        out = np.full((len(origins), H, C), np.nan)
        ctx = self._context()
        chunk = max(1, 2**22 // (H * C))
        for i0 in range(0, len(origins), chunk):
            o = origins[i0 : i0 + chunk]
            s0 = max(0, int(o[0]) - ctx)
            # a missing head reads as the first reading; no path from before it (as forecasts)
            lead = before_history(x := a[s0 : int(o[-1]) + 1])
            path = base._path(fill_missing(np.where(lead.all(axis=0), 0.0, x), True), H)[o - s0]
            path[np.broadcast_to(lead[o - s0][:, None], path.shape)] = np.nan
            idx = o[:, None] + np.arange(1, H + 1)[None, :]
            known = np.full(path.shape, np.nan)
            inside = idx < T
            known[inside] = truth_of[idx[inside]]
            out[i0 : i0 + chunk] = known - path
        return out

    def _library(self, base, a, truth=None):
        """``(keys, residual paths)`` of the newest ``library_size`` rows of each pattern group
        with a known residual path (a channel's end H samples before its last reading)."""
        H = self.horizon
        end = min(reading_ends(a if truth is None else truth))  # the earliest channel's
        rows = np.arange(max(0, min(end, len(a)) - H - self.library_size), len(a) - H)
        E = self._keys(a)[rows]
        R = self._residual_paths(base, a, rows, H, truth)
        # per pattern group: a channel stopping early leaves the others' rows (NaN its own)
        ok = _group_rows(E, R)
        ok &= np.cumsum(ok[::-1], axis=0)[::-1] <= self.library_size  # the newest known
        if not ok.any(axis=0).all():
            raise ValueError(
                f"y is too short: no training pattern of {self.embedding} samples has a known "
                f"{H}-step future under the linear base"
            )
        if ok.shape[1] > 1:  # one group per channel
            E, R = E.copy(), R.copy()
            E[~ok], R[np.broadcast_to(~ok[:, None], R.shape)] = np.nan, np.nan
        keep = ok.any(axis=1)
        return E[keep], R[keep]

    def _corrections(self, E, lib, sigmas, masks=None):
        """Per sigma, the (N, H, C) kernel-regression estimate of the residual path.

        ``masks[k]`` (H, C) bool limits sigma k to those entries (the others stay NaN)."""
        K, R = lib
        N, G, _ = E.shape
        H, C = R.shape[1], R.shape[2]
        outs = [np.full((N, H, C), np.nan) for _ in sigmas]
        ok = np.isfinite(E).all(axis=(1, 2))
        if not ok.any():
            return outs
        for g in range(G):
            chans = slice(None) if G == 1 else slice(g, g + 1)
            vals = R[:, :, chans].reshape(len(R), -1)  # (M, H * C_g)
            cols = None if masks is None else [m[:, chans].reshape(-1) for m in masks]
            null = None if self.null_distance_ is None else self.null_distance_[g]
            rows = _group_rows(K[:, [g]], R[:, :, chans])[:, 0]
            lib = (K[:, g], vals) if rows.all() else (K[rows, g], vals[rows])
            est = kernel_regression(E[ok, g], *lib, sigmas, cols, null)
            for out, e in zip(outs, est):
                out[ok, :, chans] = e.reshape(-1, H, vals.shape[1] // H)
        return outs

    # ---------------------------------------------------------------- fitting
    def _fit(self, a):
        raw, a = a, fill_missing(a, True)  # the base fits the raw (its own missing rule)
        # a late start stays missing (first reading copied back: a reading in mean, library)
        a = np.where(before_history(raw), np.nan, a)
        T, C = a.shape
        # residuals are scored up to each channel's last reading: on its missing tail filled
        # forward the holdout judged forecasts of a held value (the correction switched off)
        # and the library learnt residuals from it
        truth = unknown_past_readings(a, reading_ends(raw))
        H = self.horizon
        self.mean_ = np.nanmean(a, axis=0)
        sd = np.nanstd(a, axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        n_head = T - max(int(round(self.holdout * T)), 1)
        if self.base == "dlinear":
            need = self.lookback + H
        else:
            need = 2 * self._context() + 2
        need = max(need, self.embedding + H + 1)
        if n_head < need:
            raise ValueError(
                f"y has {T} samples: the {n_head} before the holdout (holdout={self.holdout}) "
                f"must be at least {need} to fit the {self.base} base and its library"
            )
        dim = self.embedding if self.channel_independent else self.embedding * C
        sigmas = correction_sigmas(self.sigma, dim)
        self._choose_started(raw, a, truth, n_head, sigmas, need)
        self._choose_stopped(raw, a, truth, sigmas, need)  # on a channel's own readings
        # final model: base and library from the whole training series
        self.base_ = self._make_base().fit(raw)
        self.library_, self.bounds_ = self._library(self.base_, a, truth), hard_bounds(raw)

    def _choose(self, raw, a, truth, n_head, sigmas):
        """``(sigma, alpha)`` (H, C) of the correction (and ``null_distance_``), chosen with
        the base fitted on ``a[:n_head]`` alone and scored on the rest."""
        T, C = a.shape
        H = self.horizon
        try:  # each channel up to its last reading in the head, as the final base
            head = self._make_base().fit(raw[:n_head])
        except ValueError:  # a channel with too few readings there: the filled head
            head = self._make_base().fit(a[:n_head])
        lib = self._library(head, a[:n_head], truth[:n_head])
        origins = np.arange(n_head - 1, T - 1)
        if len(origins) > self.max_holdout_origins:
            origins = origins[
                np.linspace(0, len(origins) - 1, self.max_holdout_origins).astype(int)
            ]
        resid = self._residual_paths(head, a, origins, H, truth)  # (N, H, C)
        Eh = self._keys(a)[origins]
        self.null_distance_ = None
        if self.fade is not None:
            ok = np.isfinite(Eh).all(axis=(1, 2))
            self.null_distance_ = [
                fade_radius(
                    self.fade,
                    nearest_distance(Eh[ok, g], _known_keys(lib[0][:, g])).max(),
                    Eh.shape[2],
                )
                for g in range(Eh.shape[1])
            ]
        corr = self._corrections(Eh, lib, sigmas)
        n = len(origins)
        stride = (origins[-1] - origins[0]) / max(n - 1, 1)
        overlap = np.repeat(np.arange(1, H + 1) / max(stride, 1.0), C)  # (H, C) flattened
        sig, alpha = choose_correction(
            resid.reshape(n, -1), [c.reshape(n, -1) for c in corr], sigmas, overlap=overlap
        )
        return sig.reshape(H, C), alpha.reshape(H, C)

    def _choose_started(self, raw, a, truth, n_head, sigmas, need):
        """:meth:`_choose` on the channels with ``need`` readings before the holdout; a later
        one's correction is off (alpha 0), said: every channel's with a joint pattern."""
        starts, C = np.array(reading_starts(raw)), a.shape[1]
        late = [c for c, s in enumerate(starts) if n_head - s < need]
        joint = late and not self.channel_independent  # no pattern of every channel there
        keep = [] if joint else [c for c in range(C) if c not in late]
        self.sigma_ = np.full((self.horizon, C), sigmas[0])
        self.alpha_ = np.zeros_like(self.sigma_)
        groups = C if self.channel_independent else 1
        self.null_distance_ = None if self.fade is None else [None] * groups
        if keep:
            one = copy.copy(self)  # in this fit's units: the mean and scale of those channels
            one.mean_, one.scale_ = self.mean_[keep], self.scale_[keep]
            sig, alpha = one._choose(raw[:, keep], a[:, keep], truth[:, keep], n_head, sigmas)
            self.sigma_[:, keep], self.alpha_[:, keep] = sig, alpha
            if not late or one.null_distance_ is None:
                self.null_distance_ = one.null_distance_
            else:  # one group per channel: a late one's has no fade radius
                for i, c in enumerate(keep):
                    self.null_distance_[c] = one.null_distance_[i]
        if late:
            warn(f"ResidualProjectionForecaster: channel(s) {late} start at sample(s) "
                 f"{starts[late].tolist()}, too late to choose a correction before the holdout "
                 f"(from {n_head}): " + ("every channel's stays off (alpha 0), the joint "
                 "pattern holding them all; channel_independent=True chooses the others'"
                 if joint and C > 1 else "it stays off (alpha 0)"),
                 stacklevel=user_stacklevel())  # fmt: skip

    def _choose_stopped(self, raw, a, truth, sigmas, need):
        """Per channel whose readings stop before the series' holdout or early in it (fewer
        readings there than half the last ``holdout`` of its own: its correction came out
        off): its sigma, alpha and fade radius chosen on the last ``holdout`` of its readings.
        A joint pattern of several channels holds its last reading there: said, not chosen."""
        n_head = len(a) - max(int(round(self.holdout * len(a))), 1)
        for c, end in enumerate(reading_ends(raw)):
            own = max(int(round(self.holdout * end)), 1)
            if end - n_head >= own / 2:
                continue
            if not self.channel_independent and a.shape[1] > 1:
                warn(
                    f"ResidualProjectionForecaster: channel {c} stops at sample {end - 1}, "
                    f"before most of the holdout (from sample {n_head}): the joint pattern "
                    "holds its last reading there, and every channel's correction is chosen "
                    "on that; channel_independent=True chooses each on its own readings",
                    stacklevel=user_stacklevel(),
                )
                return
            if end - own < need:
                warn(
                    f"ResidualProjectionForecaster: channel {c} stops at sample {end - 1}, "
                    f"too early to choose its correction on its {end} readings: it stays off "
                    "(alpha 0)",
                    stacklevel=user_stacklevel(),
                )
                self.alpha_[:, c] = 0.0
                continue
            one = copy.copy(self)  # in this fit's units: its mean and scale of channel c
            one.mean_, one.scale_ = self.mean_[[c]], self.scale_[[c]]
            cut = slice(0, end), [c]
            sig, alpha = one._choose(raw[cut], a[cut], truth[cut], end - own, sigmas)
            self.sigma_[:, c], self.alpha_[:, c] = sig[:, 0], alpha[:, 0]
            if self.null_distance_ is not None:
                self.null_distance_[c] = one.null_distance_[0]

    def _direct_horizon(self) -> int:
        return self.horizon

    def _predict_context(self) -> int:
        return max(self._context(), self.embedding) + 1

    def _path(self, a, horizon):
        if horizon > self.horizon:
            raise ValueError(f"horizon must be <= the fitted horizon {self.horizon}; got {horizon}")
        out = self.base_._path(a, horizon)  # (T, horizon, C)
        sig, alpha = self.sigma_[:horizon], self.alpha_[:horizon]
        used = sorted({float(s) for s in sig[alpha > 0]})
        masks = [(sig == s) & (alpha > 0) for s in used]
        full = [np.pad(m, ((0, self.horizon - horizon), (0, 0))) for m in masks]
        corr = self._corrections(self._keys(a), self.library_, used, full) if used else []
        for m, c in zip(masks, corr):
            out = out + np.where(m, alpha, 0.0) * np.nan_to_num(c[:, :horizon], nan=0.0)
        return within_bounds(out, a, self.bounds_)  # where the fitted series piles up

    # ---------------------------------------------------------------- persistence
    _channel_arrays = {"mean_": False, "scale_": True}
    # NaN: a channel's library rows past its last reading (one pattern group per channel)
    _arrays_with_nan = ("train_", "library_keys", "library_residuals")
    #: a history shorter than _predict_context still gets finite forecasts: no
    #: ShortHistoryWarning (fit_input.warn_series; tests/filters/test_short_history.py)
    short_history_forecasts = True
    _fitted_schema = {
        "n_channels_": (int,),
        "null_distance_": (list, float, type(None)),
        "base_": (dict,),
    }
    _array_schema = (
        "train_",
        "mean_",
        "scale_",
        "sigma_",
        "alpha_",
        "library_keys",
        "library_residuals",
    )

    @classmethod
    def _array_allowed(cls, key: str) -> bool:
        name, _, rest = key.partition(".")
        if name == "base_":
            return AutoRegForecaster._array_allowed(rest) or DLinearForecaster._array_allowed(rest)
        return key in cls._array_schema

    def _state(self):
        fitted = {"n_channels_": self.n_channels_, "null_distance_": self.null_distance_}
        arrays = {k: getattr(self, k) for k in ("train_", "mean_", "scale_", "sigma_", "alpha_")}
        arrays["library_keys"], arrays["library_residuals"] = self.library_
        nest(fitted, arrays, "base_", self.base_)
        return fitted, arrays

    def _set_state(self, fitted, arrays):
        own = {k: v for k, v in arrays.items() if not k.startswith("base_.")}
        keys, resid, sigma, alpha = require_floats(
            own, "library_keys", "library_residuals", "sigma_", "alpha_"
        )
        self.train_, self.mean_, self.scale_ = require_floats(own, "train_", "mean_", "scale_")
        self.bounds_ = hard_bounds(self.train_)  # not saved: the fitted series' (as at fit)
        C = self.n_channels_ = saved_channels(fitted)
        H = self.horizon
        self._check_saved_arrays(C, own)
        check_context(self, self.train_)
        if sigma.shape != (H, C) or alpha.shape != (H, C):
            raise ValueError(f"sigma_ and alpha_ must be (horizon, channels) = {(H, C)}")
        # kernel widths divide; a shrinkage outside [0, 1] would amplify the correction
        if not ((sigma > 0).all() and ((alpha >= 0) & (alpha <= 1)).all()):
            raise ValueError(f"sigma_ must be > 0 and alpha_ in [0, 1], got {sigma}, {alpha}")
        # (patterns, G, D): one joint pattern of every channel, or one per channel
        G, D = (C, self.embedding) if self.channel_independent else (1, self.embedding * C)
        if keys.shape[1:] != (G, D) or len(keys) != len(resid) or resid.shape[1:] != (H, C):
            raise ValueError(f"library_keys must be (patterns, {G}, {D}), library_residuals "
                             f"(patterns, {H}, {C}); got {keys.shape}, {resid.shape}")  # fmt: skip
        known = int(_group_rows(keys, resid).sum(axis=0).min())
        if not known:  # fit keeps one a group; forecasting failed in numpy's reshape
            raise ValueError("library_keys must hold one known training pattern (with its "
                             f"residuals) per pattern group at least, got {known}")  # fmt: skip
        self.sigma_, self.alpha_, self.library_ = sigma, alpha, (keys, resid)
        self.null_distance_ = self._saved_null_distance(fitted, G)
        self.base_ = unnest(self._make_base(), fitted, arrays, "base_")
        if self.base_.n_channels_ != C:
            raise ValueError(f"base_ was fitted on {self.base_.n_channels_} channel(s), not {C}")

    def _saved_null_distance(self, fitted, G):
        """None without ``fade``; else one fade radius per pattern group, each None (no fade
        for that group) or a finite distance > 0, as :func:`fade_radius` gives."""
        if "null_distance_" not in fitted:
            raise ValueError("missing fitted 'null_distance_'")
        null = fitted["null_distance_"]
        if self.fade is None:
            if null is not None:
                raise ValueError(f"null_distance_ must be None without fade, got {null!r}")
            return None
        if not isinstance(null, list) or len(null) != G:
            raise ValueError(
                f"null_distance_ must be a list of {G} (one per pattern group) with "
                f"fade={self.fade}, got {null!r}"
            )
        return [
            None if r is None else check_positive(r, f"null_distance_[{g}]")
            for g, r in enumerate(null)
        ]
