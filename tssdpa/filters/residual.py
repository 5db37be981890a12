"""Linear model + projection of its residual: the hybrid forecaster and denoiser.

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

import math

import numpy as np

from tssdpa.baselines._base import BaseDenoiser, BaseForecaster, check_positive_int, fill_missing
from tssdpa.baselines.forecasters import AutoRegForecaster, DLinearForecaster
from tssdpa.baselines.linear import WienerFIRFilter
from tssdpa.filters._core import delay_embedding

__all__ = ["ResidualProjectionForecaster", "ResidualProjectionFilter", "kernel_regression"]

_QUERY_BLOCK = 1024
_BLOCK_ELEMS = 2**22  # query rows per block: at most this many (row, key) distances


def _sq_distances(queries, keys):
    """Yield (start, d2): float64 squared distances (n, M) for blocks of ``queries`` (N, D)."""
    import torch

    k = torch.from_numpy(np.ascontiguousarray(keys, dtype=np.float64))
    k2 = (k * k).sum(-1)
    block = max(1, min(_QUERY_BLOCK, _BLOCK_ELEMS // max(len(k), 1)))
    for s0 in range(0, len(queries), block):
        q = torch.from_numpy(np.ascontiguousarray(queries[s0 : s0 + block], np.float64))
        yield s0, ((q * q).sum(-1, keepdim=True) + k2 - 2.0 * q @ k.T).clamp_min_(0.0)


def kernel_regression(queries, keys, values, sigmas, columns=None, null_distance=None):
    """Projection (Nadaraya–Watson) estimate of ``values`` (M, V) at ``queries`` (N, D).

    Row i of the output for a given sigma is ``sum_j w_ij values[j]`` with
    ``w_ij = softmax_j(-||q_i - k_j||^2 / 2 sigma^2)``: projection SDPA of Sanger's paper with
    the keys' values. Squared distances are computed in float64 once per block of queries and
    shared by every sigma; wide values (more than 256 columns, e.g. a 720-step residual path of
    7 channels) are averaged in float32, whose rounding (~1e-7 relative) is far below any
    forecast error. Memory is O(block * M), block * M <= 2**22.

    ``columns`` (one bool mask over V per sigma) limits each sigma to those value columns; the
    others are NaN. ``null_distance`` r adds a pseudo-key with value 0 at distance r from
    every query (weight ``exp(-r^2 / 2 sigma^2)``): a query with keys well within r is barely
    affected, while a query farther than r from every key (a pattern never seen in training)
    gets an estimate shrunk towards 0 instead of its nearest key's value. Returns a list of
    (N, V) float64 arrays, one per sigma.
    """
    import torch

    sigmas = [float(s) for s in sigmas]
    if columns is None:
        columns = [np.ones(values.shape[1], bool)] * len(sigmas)
    vs = []
    for cols in columns:
        sub = values[:, cols]
        dtype = np.float32 if sub.shape[1] > 256 else np.float64
        vs.append(torch.from_numpy(np.ascontiguousarray(sub, dtype=dtype)))
    outs = [np.full((len(queries), values.shape[1]), np.nan) for _ in sigmas]
    for s0, d2 in _sq_distances(queries, keys):  # d2: (n, M)
        for out, s, cols, v in zip(outs, sigmas, columns, vs):
            if v.shape[1] == 0:
                continue
            logits = d2 / (-2.0 * s**2)
            if null_distance is not None:  # the pseudo-key's column is dropped after normalising
                null = torch.full_like(logits[:, :1], -(float(null_distance) ** 2) / (2.0 * s**2))
                w = torch.softmax(torch.cat([logits, null], dim=-1), dim=-1)[:, :-1]
            else:
                w = torch.softmax(logits, dim=-1)
            out[s0 : s0 + len(d2), cols] = (w.to(v.dtype) @ v).numpy()
    return outs


def _sigma_grid(sigma, dim):
    if sigma is None:
        return [math.sqrt(dim) * 2.0**e for e in range(-8, 1)]
    try:
        if np.ndim(sigma) > 1:
            raise ValueError
        cands = [float(s) for s in np.atleast_1d(np.asarray(sigma, dtype=float))]
    except (TypeError, ValueError):
        raise ValueError(
            f"sigma must be > 0 (a float or a list of floats), got {sigma!r}"
        ) from None
    if not cands or any(not (s > 0 and math.isfinite(s)) for s in cands):
        raise ValueError(f"sigma must be > 0 (a float or a list of floats), got {sigma!r}")
    return cands


def _choose(resid, corrections, sigmas, z=2.0, overlap=None):
    """Per column of ``resid`` (N, K): the sigma and shrinkage alpha in [0, 1] minimising the
    squared error of ``resid - alpha * correction`` (alpha in closed form). NaN rows ignored.

    A correction is kept only when its mean gain in squared error exceeds ``z`` standard errors,
    so on data where the linear model is already optimal the choice is ``alpha = 0`` rather
    than a correction fitted to noise in the holdout. ``overlap`` (K,) >= 1 counts how many
    successive rows share each error (h-step errors from origins 1 apart overlap by h - 1
    steps); the variance of the mean gain is multiplied by it, as for an m-dependent series,
    so long horizons need a larger holdout to earn a correction."""
    ok = np.isfinite(resid)
    n = np.maximum(ok.sum(axis=0), 1)
    m = np.ones(resid.shape[1]) if overlap is None else np.maximum(np.asarray(overlap, float), 1)
    r = np.where(ok, resid, 0.0)
    best_err = np.sum(r**2, axis=0)  # alpha = 0
    best_sigma = np.full(r.shape[1], sigmas[0])
    best_alpha = np.zeros(r.shape[1])
    for s, c in zip(sigmas, corrections):
        c = np.where(ok, np.nan_to_num(c, nan=0.0), 0.0)
        cc = np.sum(c * c, axis=0)
        alpha = np.clip(np.sum(r * c, axis=0) / np.where(cc > 0, cc, 1.0), 0.0, 1.0)
        gain = r**2 - (r - alpha * c) ** 2  # per row; 0 on NaN rows
        mean = gain.sum(axis=0) / n
        var = np.where(ok, (gain - mean) ** 2, 0.0).sum(axis=0) / np.maximum(n - 1, 1)
        err = np.sum((r - alpha * c) ** 2, axis=0)
        better = (err < best_err) & (mean > z * np.sqrt(var * m / n))
        best_err = np.where(better, err, best_err)
        best_sigma = np.where(better, s, best_sigma)
        best_alpha = np.where(better, alpha, best_alpha)
    return best_sigma, best_alpha


def _number(value, name):
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None


def _check_fade(value):
    if value is None:
        return None
    v = _number(value, "fade")
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"fade must be a finite number > 0 or None, got {value!r}")
    return v


def _check_holdout(value):
    v = _number(value, "holdout")
    if not 0.0 < v < 1.0:
        raise ValueError(f"holdout must be in (0, 1), got {value!r}")
    return v


def _fade_radius(fade, nearest, dim):
    """Distance of the zero-valued pseudo-pattern, or None (no fade).

    When every holdout pattern has an (almost) exact copy in the library (periodic or quantised
    data) the largest nearest distance is ~0 and a radius proportional to it would switch off
    every correction for the slightest noise; there is nothing to calibrate it on, so no fade."""
    if fade is None or not nearest > 1e-6 * math.sqrt(dim):
        return None
    return fade * nearest


def nearest_distance(queries, keys):
    """(N,) Euclidean distance from each query (N, D) to its nearest key (M, D)."""
    out = np.empty(len(queries))
    for s0, d2 in _sq_distances(queries, keys):
        out[s0 : s0 + len(d2)] = d2.min(dim=-1).values.sqrt().numpy()
    return out


def _standardise(a, mean, scale):
    return (a - mean) / scale


class ResidualProjectionForecaster(BaseForecaster):
    """Linear forecaster plus a projection (analogue) forecast of its residual path.

    Parameters
    ----------
    base : {"autoreg", "dlinear"}
        The linear model: :class:`~tssdpa.baselines.AutoRegForecaster` (recursive AR(p)) or
        :class:`~tssdpa.baselines.DLinearForecaster` (closed-form DLinear, ``lookback``).
    base_params : dict, optional
        Constructor arguments of the linear model (e.g. ``{"lags": 24}``, ``{"ridge": 1.0}``).
    lags : int
        Length of the pattern (delay embedding of the standardised series) used as key/query.
    horizon : int
        Largest horizon; sigma and alpha are chosen for each step 1..horizon.
    lookback : int
        Lookback window of the ``"dlinear"`` base (ignored by ``"autoreg"``).
    window : int
        At most this many (the newest) training patterns form the library.
    sigma : float, list of float, or None
        Kernel width candidates in standardised units (``None``: ``sqrt(D) * 2**-8 .. 1``).
    holdout : float
        Fraction of the training series held out to choose sigma and alpha.
    max_holdout_origins : int
        Holdout origins scored (evenly spaced) at most.
    channel_independent : bool
        One pattern per channel (keys of length ``lags``) instead of one joint pattern of all
        channels (length ``lags * C``).
    fade : float or None
        Fade the correction out for patterns farther from every training pattern than ``fade``
        times the largest distance of a holdout pattern to its nearest one (a zero-residual
        pseudo-pattern at that distance, see :func:`kernel_regression`): level shifts or
        regimes absent from training then get the linear forecast rather than the residual
        of an unrelated pattern. ``None`` disables it.

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import ResidualProjectionForecaster
    >>> t = np.arange(800) * 0.05
    >>> y = np.sin(t) + 0.5 * np.sin(3.1 * t) ** 3
    >>> fc = ResidualProjectionForecaster(base_params={"lags": 8}, lags=8, horizon=5).fit(y[:600])
    >>> path = fc.forecast_path(y, horizon=5)  # path[t, h-1] predicts y[t+h] from y[:t+1]
    >>> path.shape
    (800, 5)
    """

    def __init__(
        self,
        base="autoreg",
        base_params=None,
        lags=16,
        horizon=1,
        lookback=336,
        window=8000,
        sigma=None,
        holdout=0.25,
        max_holdout_origins=1000,
        channel_independent=False,
        fade=2.0,
    ):
        if base not in ("autoreg", "dlinear"):
            raise ValueError(f"base must be 'autoreg' or 'dlinear', got {base!r}")
        if base_params is not None and not isinstance(base_params, dict):
            raise TypeError(f"base_params must be a dict or None, got {type(base_params).__name__}")
        own = {"lookback", "horizon"} & set(base_params or {})
        if own:
            raise ValueError(
                f"base_params must not set {sorted(own)}: pass them to "
                "ResidualProjectionForecaster itself"
            )
        self.base = base
        self.base_params = dict(base_params or {})
        self.lags = check_positive_int(lags, "lags")
        self.horizon = check_positive_int(horizon, "horizon")
        self.lookback = check_positive_int(lookback, "lookback")
        self.window = check_positive_int(window, "window")
        self.sigma = sigma
        _sigma_grid(sigma, 1)  # validate early
        self.holdout = _check_holdout(holdout)
        self.max_holdout_origins = check_positive_int(max_holdout_origins, "max_holdout_origins")
        self.channel_independent = bool(channel_independent)
        self.fade = _check_fade(fade)
        self._make_base()  # invalid base_params fail here, not at fit

    # ----------------------------------------------------------------- pieces
    def _make_base(self):
        if self.base == "autoreg":
            return AutoRegForecaster(**self.base_params)
        return DLinearForecaster(lookback=self.lookback, horizon=self.horizon, **self.base_params)

    def _keys(self, a):
        """(T, G, D) patterns: G = 1 joint pattern or C per-channel ones; NaN when incomplete."""
        z = _standardise(a, self.mean_, self.scale_)
        if self.channel_independent:
            return np.stack([delay_embedding(z[:, [c]], self.lags) for c in range(a.shape[1])], 1)
        return delay_embedding(z, self.lags)[:, None, :]

    def _context(self):
        """Samples before an origin the base needs to forecast from it."""
        if self.base == "dlinear":
            return self.lookback
        return int(self.base_params.get("lags", AutoRegForecaster().lags))

    def _residual_paths(self, base, a, origins, H):
        """(N, H, C) truth minus the base's forecast path from each origin (NaN past the end).

        Computed over contiguous chunks of origins so memory stays O(chunk * H * C)."""
        T, C = a.shape
        out = np.full((len(origins), H, C), np.nan)
        ctx = self._context()
        chunk = max(1, 2**22 // (H * C))
        for i0 in range(0, len(origins), chunk):
            o = origins[i0 : i0 + chunk]
            s0 = max(0, int(o[0]) - ctx)
            path = base._path(a[s0 : int(o[-1]) + 1], H)[o - s0]
            idx = o[:, None] + np.arange(1, H + 1)[None, :]
            truth = np.full(path.shape, np.nan)
            inside = idx < T
            truth[inside] = a[idx[inside]]
            out[i0 : i0 + chunk] = truth - path
        return out

    def _library(self, base, a):
        H = self.horizon
        rows = np.arange(len(a) - H)[-self.window :]
        E = self._keys(a)[rows]
        R = self._residual_paths(base, a, rows, H)
        ok = np.isfinite(E).all(axis=(1, 2)) & np.isfinite(R).all(axis=(1, 2))
        if not ok.any():
            raise ValueError(
                f"y is too short: no training pattern of {self.lags} lags has a known "
                f"{H}-step future under the linear base"
            )
        return E[ok], R[ok]

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
            est = kernel_regression(E[ok, g], K[:, g], vals, sigmas, cols, null)
            for out, e in zip(outs, est):
                out[ok, :, chans] = e.reshape(-1, H, vals.shape[1] // H)
        return outs

    # ---------------------------------------------------------------- fitting
    def _fit(self, a):
        a = fill_missing(a, True)
        T, C = a.shape
        H = self.horizon
        self.mean_ = a.mean(axis=0)
        sd = a.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        n_head = T - max(int(round(self.holdout * T)), 1)
        if self.base == "dlinear":
            need = self.lookback + H
        else:
            need = 2 * self._context() + 2
        need = max(need, self.lags + H + 1)
        if n_head < need:
            raise ValueError(
                f"y has {T} samples: the {n_head} before the holdout (holdout={self.holdout}) "
                f"must be at least {need} to fit the {self.base} base and its library"
            )
        dim = self.lags if self.channel_independent else self.lags * C
        sigmas = _sigma_grid(self.sigma, dim)
        # choose sigma / alpha with the base fitted on the head only, scored on the tail
        head = self._make_base().fit(a[:n_head])
        lib = self._library(head, a[:n_head])
        origins = np.arange(n_head - 1, T - 1)
        if len(origins) > self.max_holdout_origins:
            origins = origins[
                np.linspace(0, len(origins) - 1, self.max_holdout_origins).astype(int)
            ]
        resid = self._residual_paths(head, a, origins, H)  # (N, H, C)
        Eh = self._keys(a)[origins]
        self.null_distance_ = None
        if self.fade is not None:
            ok = np.isfinite(Eh).all(axis=(1, 2))
            self.null_distance_ = [
                _fade_radius(
                    self.fade, nearest_distance(Eh[ok, g], lib[0][:, g]).max(), Eh.shape[2]
                )
                for g in range(Eh.shape[1])
            ]
        corr = self._corrections(Eh, lib, sigmas)
        n = len(origins)
        stride = (origins[-1] - origins[0]) / max(n - 1, 1)
        overlap = np.repeat(np.arange(1, H + 1) / max(stride, 1.0), C)  # (H, C) flattened
        sig, alpha = _choose(
            resid.reshape(n, -1), [c.reshape(n, -1) for c in corr], sigmas, overlap=overlap
        )
        self.sigma_ = sig.reshape(H, C)
        self.alpha_ = alpha.reshape(H, C)
        # final model: base and library from the whole training series
        self.base_ = self._make_base().fit(a)
        self.library_ = self._library(self.base_, a)

    def predict(self, steps):
        """Forecast ``steps`` (<= ``horizon``) values past the end of the series given to fit."""
        steps = check_positive_int(steps, "steps")
        if steps > self.horizon:
            raise ValueError(f"steps must be <= the fitted horizon {self.horizon}; got {steps}")
        if not getattr(self, "fitted_", False):
            raise ValueError("ResidualProjectionForecaster must be fitted before predict")
        tail = fill_missing(self.train_, True)[-(max(self._context(), self.lags) + 1) :]
        path = self._path(tail, steps)[-1]  # only the last origin is needed
        return path[:, 0] if self.n_channels_ == 1 else path

    def _path(self, a, horizon):
        if horizon > self.horizon:
            raise ValueError(f"horizon must be <= the fitted horizon {self.horizon}; got {horizon}")
        out = self.base_._path(a, horizon)  # (T, horizon, C)
        sig, alpha = self.sigma_[:horizon], self.alpha_[:horizon]
        used = sorted({float(s) for s in sig[alpha > 0]})
        if not used:
            return out
        masks = [(sig == s) & (alpha > 0) for s in used]
        full = [np.pad(m, ((0, self.horizon - horizon), (0, 0))) for m in masks]
        corr = self._corrections(self._keys(a), self.library_, used, full)
        for m, c in zip(masks, corr):
            out = out + np.where(m, alpha, 0.0) * np.nan_to_num(c[:, :horizon], nan=0.0)
        return out


class ResidualProjectionFilter(BaseDenoiser):
    """Least-squares Wiener FIR plus a projection estimate of its residual (needs a clean target).

    The keys are delay embeddings (length ``embedding``) of the Wiener FIR's output: past
    samples only when ``causal``, centred otherwise. Fitted per channel; the library holds the
    training patterns and the Wiener FIR's residuals ``target - output`` there.

    Parameters
    ----------
    taps : int
        Taps of the :class:`~tssdpa.baselines.WienerFIRFilter`.
    causal : bool
    embedding : int
        Pattern length.
    sigma : float, list of float, or None
        Kernel width candidates in standardised units (``None``: ``sqrt(embedding) * 2**-8 .. 1``).
    holdout : float
        Fraction of the training series held out to choose sigma and alpha.
    window : int
        At most this many (the newest) training patterns form the library.
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
    >>> f = ResidualProjectionFilter(taps=16, embedding=8).fit(noisy[:1500], target=clean[:1500])
    >>> out = f.filter(noisy)
    >>> def mse(a):
    ...     return float(np.mean((a[1500:] - clean[1500:]) ** 2))
    >>> mse(out) < mse(noisy)
    True
    """

    trainable = True

    def __init__(
        self,
        taps=16,
        causal=True,
        embedding=8,
        sigma=None,
        holdout=0.25,
        window=20000,
        ridge=1e-6,
        fade=2.0,
    ):
        self.taps = check_positive_int(taps, "taps")
        self.causal = bool(causal)
        self.embedding = check_positive_int(embedding, "embedding")
        self.sigma = sigma
        _sigma_grid(sigma, 1)
        self.holdout = _check_holdout(holdout)
        self.window = check_positive_int(window, "window")
        self.ridge = _number(ridge, "ridge")
        if not self.ridge >= 0:
            raise ValueError(f"ridge must be >= 0; got {ridge!r}")
        self.fade = _check_fade(fade)

    def _base(self):
        return WienerFIRFilter(taps=self.taps, causal=self.causal, ridge=self.ridge)

    def _keys(self, lin, c):
        """(T, embedding) patterns of the standardised linear output; edges repeat the ends."""
        m = self.embedding
        z = _standardise(lin, self.mean_[c], self.scale_[c])
        ahead = 0 if self.causal else m // 2
        pad = np.concatenate([np.full(m - 1 - ahead, z[0]), z, np.full(ahead, z[-1])])
        E = delay_embedding(pad[:, None], m, offset=ahead)
        return E[m - 1 - ahead : m - 1 - ahead + len(z)]

    def _fit(self, a, target):
        if target is None:
            raise ValueError(
                "ResidualProjectionFilter needs the clean target: fit(x, target=clean)"
            )
        if not np.isfinite(target).all():
            raise ValueError("target must be finite (no NaN / inf): it is the clean signal")
        a = fill_missing(a, self.causal)
        T, C = a.shape
        n_head = T - max(int(round(self.holdout * T)), 1)
        if n_head <= self.taps + self.embedding:
            raise ValueError(
                f"x has {T} samples; too few for taps={self.taps}, embedding={self.embedding}"
            )
        sigmas = _sigma_grid(self.sigma, self.embedding)
        self.base_ = self._base().fit(a, target)
        lin_all = np.column_stack([self.base_._filter_1d(a[:, c], c) for c in range(C)])
        self.mean_, sd = lin_all.mean(axis=0), lin_all.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        # sigma / alpha: the Wiener FIR refitted on the head, scored on the held-out tail
        head = self._base().fit(a[:n_head], target[:n_head])
        self.sigma_, self.alpha_, self.null_distance_ = np.zeros(C), np.zeros(C), np.zeros(C)
        lib = slice(max(0, n_head - self.window), n_head)
        for c in range(C):
            lin = head._filter_1d(a[:, c], c)
            E = self._keys(lin, c)
            resid = (target[:, c] - lin)[:, None]
            null = None
            if self.fade is not None:
                null = _fade_radius(
                    self.fade, nearest_distance(E[n_head:], E[lib]).max(), self.embedding
                )
                self.null_distance_[c] = np.nan if null is None else null
            corr = kernel_regression(E[n_head:], E[lib], resid[lib], sigmas, None, null)
            s, al = _choose(resid[n_head:], corr, sigmas)
            self.sigma_[c], self.alpha_[c] = s[0], al[0]
        rows = slice(max(0, T - self.window), T)
        self.library_ = [
            (self._keys(lin_all[:, c], c)[rows], (target[:, c] - lin_all[:, c])[rows, None])
            for c in range(C)
        ]

    def _filter_1d(self, x, channel):
        if channel >= len(self.library_):
            raise ValueError(f"x has more channels than the fitted filter ({len(self.library_)})")
        lin = self.base_._filter_1d(x, channel)
        if self.alpha_[channel] == 0:
            return lin
        K, R = self.library_[channel]
        null = self.null_distance_[channel]
        null = None if self.fade is None or np.isnan(null) else null
        (corr,) = kernel_regression(
            self._keys(lin, channel), K, R, [self.sigma_[channel]], None, null
        )
        return lin + self.alpha_[channel] * corr[:, 0]
