"""`ProjectionFilter`: the fit / filter / step / save object for sensor engineers."""

from __future__ import annotations

import itertools
import math

import numpy as np

from tssdpa.filters._io import ParamsMixin, as_2d, load_bundle, restore, save_bundle
from tssdpa.filters.features import (
    draw_features,
    feature_filter,
    initial_feature_state,
)
from tssdpa.filters.functional import check_timestamps, resolve_spec, run_causal, run_noncausal

__all__ = ["ProjectionFilter", "default_sigma_grid", "noise_scale"]


def noise_scale(x2: np.ndarray) -> float:
    """Robust noise level of a (T, C) series: median over channels of MAD(diff)/(0.6745 sqrt 2).

    Falls back to a tenth of the robust spread of the data when the differences are all equal.
    """
    scales = []
    for c in range(x2.shape[1]):
        v = x2[:, c]
        v = v[~np.isnan(v)]
        if v.size < 3:
            continue
        d = np.diff(v)
        s = np.median(np.abs(d - np.median(d))) / 0.6745 / math.sqrt(2.0)
        if not s > 0:
            s = 0.1 * (np.median(np.abs(v - np.median(v))) / 0.6745)
        if not s > 0:
            s = 0.1 * float(np.std(v))
        if s > 0:
            scales.append(s)
    return float(np.median(scales)) if scales else 1.0


def default_sigma_grid(x2: np.ndarray, embedding: int, n: int = 14) -> np.ndarray:
    """Candidate kernel widths scaled to the data: noise * sqrt(m C) * 2**(-2 .. 4.5)."""
    base = noise_scale(x2) * math.sqrt(embedding * x2.shape[1])
    return base * 2.0 ** np.linspace(-2.0, 4.5, n)


def _as_list(v):
    return list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v]


class ProjectionFilter(ParamsMixin):
    """Causal (or zero-phase) projection filter for (T,) or (T, C) sensor series.

    Output at step t: the weighted mean of the past samples x_j in the window, with weights
    ``exp(-||e_t - e_j||^2 / (2 sigma^2))`` on the delay embeddings ``e`` times ``decay**(t-j)``
    (or ``exp(-(t_t - t_j) / tau)`` with timestamps).

    Parameters
    ----------
    window : int, list of int, or None
        Samples attended to (the current one included). ``None`` with ``decay`` (or ``tau``
        and ``min_step``) gives the infinite-memory IIR filter. A list is a set of candidates
        for :meth:`fit`.
    embedding : int or list of int
        Delay-embedding length m.
    sigma : float or list of float
        Kernel width used before :meth:`fit`; a list gives the candidates :meth:`fit` tries
        (default: a grid scaled to the data's noise level).
    decay : float, list, or None
        Per-sample weight factor gamma in (0, 1].
    tau : float or None
        Time constant of the decay in time units; needs timestamps (argument or DatetimeIndex).
    causal : bool
        False gives the two-sided zero-phase smoother (offline only).
    exclude_self : bool
        Leave the current sample out of its own weights (non-local means). :meth:`fit`
        always scores sigma with the sample left out when no target is given.
    tol : float
        IIR truncation tolerance: the output differs from the infinite-memory filter by at most
        ``tol * (max x - min x)`` when the sample itself is included (see docs/filters.md).
    min_step : float or None
        Smallest time step, needed for an infinite-memory filter driven by ``tau``.
    recurrent : None or "features"
        ``"features"``: O(1)-state recursion with positive random features (approximate).
    n_features : int
        Number of random features for ``recurrent="features"``.
    feature_map : {"centres", "performer"}
        Random features: Gaussian bumps at random centres drawn around the data (default,
        low variance) or Performer's ``exp(w.x - ||x||^2 / sigma^2)``.
    random_state : int
        Seed of the random features.
    dtype : str
        Compute dtype, "float64" or "float32" (faster, ~1e-6 relative error).
    max_fit_samples : int
        :meth:`fit` scores candidates on at most this many samples (the first ones).

    Attributes
    ----------
    sigma_, window_, embedding_, decay_ : fitted settings.
    n_channels_ : int, channels seen by :meth:`fit`.
    fit_scores_ : list of dict, held-out mean squared error of every candidate tried.

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import ProjectionFilter
    >>> rng = np.random.default_rng(0)
    >>> clean = np.sign(np.sin(np.linspace(0, 20, 2000)))
    >>> noisy = clean + 0.2 * rng.normal(size=2000)
    >>> f = ProjectionFilter(window=32).fit(noisy)
    >>> y = f.filter(noisy)
    >>> bool(np.mean((y - clean) ** 2) < np.mean((noisy - clean) ** 2))
    True
    >>> state = f.initial_state()
    >>> y0, state = f.step(noisy[0], state)
    """

    def __init__(
        self,
        window=32,
        embedding=1,
        sigma=1.0,
        decay=None,
        tau=None,
        causal=True,
        exclude_self=False,
        tol=1e-6,
        min_step=None,
        recurrent=None,
        n_features=256,
        feature_map="centres",
        random_state=0,
        dtype="float64",
        max_fit_samples=20000,
    ):
        self.window = window
        self.embedding = embedding
        self.sigma = sigma
        self.decay = decay
        self.tau = tau
        self.causal = causal
        self.exclude_self = exclude_self
        self.tol = tol
        self.min_step = min_step
        self.recurrent = recurrent
        self.n_features = n_features
        self.feature_map = feature_map
        self.random_state = random_state
        self.dtype = dtype
        self.max_fit_samples = max_fit_samples

    # ------------------------------------------------------------------ settings
    def _settings(self, **override) -> dict:
        """The scalar settings in force: fitted values if fitted, else the parameters."""
        out = dict(override)
        for name in ("window", "embedding", "sigma", "decay"):
            if name in out:
                continue
            fitted = getattr(self, name + "_", None)
            if hasattr(self, name + "_"):
                out[name] = fitted
                continue
            v = getattr(self, name)
            if isinstance(v, (list, tuple, np.ndarray)):
                raise ValueError(f"{name} is a list of candidates: call fit() first")
            out[name] = v
        return out

    def _spec(self, exclude_self=None, **override):
        s = self._settings(**override)
        if self.recurrent not in (None, "features"):
            raise ValueError(f"recurrent must be None or 'features', got {self.recurrent!r}")
        return resolve_spec(
            window=s["window"],
            embedding=s["embedding"],
            sigma=s["sigma"],
            decay=s["decay"],
            tau=self.tau,
            causal=self.causal,
            exclude_self=self.exclude_self if exclude_self is None else exclude_self,
            tol=self.tol,
            min_step=self.min_step,
            dtype=self.dtype,
        )

    def _times(self, meta, timestamps, n):
        if self.tau is None:
            return None
        t = timestamps if timestamps is not None else meta.timestamps
        if t is None:
            raise ValueError("tau is set: pass timestamps= or a series with a DatetimeIndex")
        return check_timestamps(t, n)

    def _check_channels(self, x2):
        n = getattr(self, "n_channels_", None)
        if n is not None and x2.shape[1] != n:
            raise ValueError(
                f"x has {x2.shape[1]} channel(s) but the filter was fitted on {n}"
            )

    # ------------------------------------------------------------------ fit
    def fit(self, x, target=None, timestamps=None):
        """Choose sigma (and window / embedding / decay candidates) by held-out error.

        Without ``target`` the score is the leave-one-out error: each sample is predicted from
        its neighbours only (``exclude_self=True``), so no clean signal is needed. With
        ``target`` the filter as configured is scored against it.

        Parameters
        ----------
        x : array_like, Series, DataFrame or tensor, (T,) or (T, C)
        target : same shape as x, optional
        timestamps : array_like (T,), optional

        Returns
        -------
        self
        """
        x2, meta = as_2d(x)
        if np.isnan(x2).all():
            raise ValueError("x is all NaN")
        tgt = None
        if target is not None:
            tgt, _ = as_2d(target, "target")
            if tgt.shape != x2.shape:
                raise ValueError(f"target has shape {tgt.shape}, x has {x2.shape}")
        n = min(x2.shape[0], int(self.max_fit_samples))
        xs = x2[:n]
        ts = tgt[:n] if tgt is not None else xs
        times = self._times(meta, timestamps, x2.shape[0])
        times = times[:n] if times is not None else None
        for name in ("window", "embedding", "sigma", "decay"):
            if hasattr(self, name + "_"):
                delattr(self, name + "_")
        scores = []
        best = (np.inf, None)
        if tgt is None:
            # Monte-Carlo SURE: unbiased estimate of the error against the clean signal
            noise = np.array([noise_scale(xs[:, [c]]) for c in range(xs.shape[1])])
            probe = np.random.default_rng(int(self.random_state)).choice([-1.0, 1.0], xs.shape)
            eps = 1e-4
        for window, emb, decay in itertools.product(
            _as_list(self.window), _as_list(self.embedding), _as_list(self.decay)
        ):
            sig_cands = (
                _as_list(self.sigma)
                if isinstance(self.sigma, (list, tuple, np.ndarray))
                else default_sigma_grid(xs, int(emb))
            )
            for sig in sig_cands:
                spec = self._spec(window=window, embedding=emb, sigma=float(sig), decay=decay)
                y = self._run_exact(xs, spec, times)
                if tgt is None:
                    y_pert = self._run_exact(xs + eps * noise * probe, spec, times)
                    ok = ~(np.isnan(y) | np.isnan(xs) | np.isnan(y_pert))
                    div_term = noise * probe * (y_pert - y) / eps  # noise^2 * dy/dx per entry
                    per_entry = (y - xs) ** 2 - noise**2 + 2.0 * div_term
                    mse = float(np.mean(per_entry[ok])) if ok.any() else np.inf
                else:
                    err = y - ts
                    ok = ~np.isnan(err)
                    mse = float(np.mean(err[ok] ** 2)) if ok.any() else np.inf
                scores.append(
                    {"window": window, "embedding": emb, "decay": decay, "sigma": float(sig),
                     "mse": mse}
                )
                if mse < best[0]:
                    best = (mse, (window, emb, decay, float(sig)))
        if best[1] is None:
            raise ValueError("no candidate gave a finite score (is x nearly all NaN?)")
        self.window_, self.embedding_, self.decay_, self.sigma_ = best[1]
        self.n_channels_ = x2.shape[1]
        self.fit_scores_ = scores
        self.center_ = np.nanmean(x2, axis=0)
        self.spread_ = np.nanstd(x2, axis=0)
        if self.recurrent == "features":
            self._draw_features()
        return self

    def _run_exact(self, x2, spec, times, hist=None, hist_times=None):
        if spec.causal:
            if hist is None:
                hist = np.full((spec.history, x2.shape[1]), np.nan)
                hist_times = np.full(spec.history, np.nan) if spec.tau is not None else None
            y, _, _ = run_causal(x2, hist, spec, times, hist_times, min_step=self.min_step)
            return y
        return run_noncausal(x2, spec, times)

    # ------------------------------------------------------------------ features
    def _features_key(self):
        s = self._settings()
        return (float(s["sigma"]), int(s["embedding"]), self._n_channels(), int(self.n_features),
                self.feature_map, int(self.random_state))

    def _draw_features(self):
        sigma, m, C, M, kind, seed = key = self._features_key()
        self.features_, self.feature_logw_ = draw_features(
            M, m * C, sigma, seed, kind, np.tile(getattr(self, "center_", np.zeros(C)), m),
            np.tile(getattr(self, "spread_", np.ones(C)), m))
        self._features_drawn_for = key

    def _n_channels(self):
        n = getattr(self, "n_channels_", None)
        if n is None:
            raise ValueError("n_channels unknown: call fit() or filter() first")
        return n

    def _feature_args(self, C):
        if not hasattr(self, "n_channels_"):
            self.n_channels_ = C
        s = self._settings()
        if s["decay"] is None and self.tau is None:
            raise ValueError("recurrent='features' needs decay or tau (an infinite-memory filter)")
        if not self.causal:
            raise ValueError("recurrent='features' is causal only")
        if not hasattr(self, "features_") or (
            getattr(self, "_features_drawn_for", None) not in (None, self._features_key())
        ):
            self._draw_features()
        m = int(s["embedding"])
        center = np.tile(getattr(self, "center_", np.zeros(C)), m)
        return dict(W=self.features_, logw=self.feature_logw_, kind=self.feature_map,
                    center=center, sigma=float(s["sigma"]), embedding=m,
                    decay=s["decay"], tau=self.tau, exclude_self=bool(self.exclude_self))

    # ------------------------------------------------------------------ state
    def initial_state(self, n_channels: int | None = None):
        """An empty state for :meth:`filter` (``zi``) and :meth:`step`.

        A (H, C) array of NaN (H = kept history), a pair ``(samples, times)`` when ``tau`` is
        set, or a 4-tuple for ``recurrent="features"``.
        """
        C = n_channels if n_channels is not None else getattr(self, "n_channels_", None)
        if C is None:
            raise ValueError("give n_channels or call fit() first")
        if self.recurrent == "features":
            s = self._settings()
            return initial_feature_state(int(self.n_features), C, int(s["embedding"]),
                                         self.tau is not None)
        spec = self._spec()
        if not spec.causal:
            raise ValueError("a zero-phase (causal=False) filter has no streaming state")
        hist = np.full((spec.history, C), np.nan)
        if spec.tau is not None:
            return hist, np.full(spec.history, np.nan)
        return hist

    def _check_state(self, zi, C):
        ref = self.initial_state(C)
        if isinstance(ref, tuple):
            if not isinstance(zi, tuple) or len(zi) != len(ref):
                raise ValueError(f"zi must be a tuple of {len(ref)} arrays (see initial_state())")
            out = []
            for k, (a, r) in enumerate(zip(zi, ref)):
                a = np.asarray(a, dtype=np.float64)
                if a.shape != r.shape:
                    raise ValueError(f"zi[{k}] has shape {a.shape}, expected {r.shape}")
                out.append(a)
            return tuple(out)
        a = np.asarray(zi, dtype=np.float64)
        if a.ndim == 1 and ref.shape[1] == 1:
            a = a[:, None]
        if a.shape != ref.shape:
            raise ValueError(f"zi has shape {a.shape}, expected {ref.shape}")
        return a

    # ------------------------------------------------------------------ apply
    def filter(self, x, zi=None, timestamps=None):
        """Filter x; with ``zi`` return ``(y, zf)`` like :func:`scipy.signal.lfilter`.

        Parameters
        ----------
        x : array_like, Series, DataFrame or tensor, (T,) or (T, C)
            NaN samples are never used as keys; the output there is still defined (imputed
            from the neighbours, decay-weighted). A row with no usable key gives NaN.
        zi : state, optional
            From :meth:`initial_state` or a previous call's ``zf``.
        timestamps : array_like (T,), optional
            Sample times for ``tau`` (a DatetimeIndex is used automatically).

        Returns
        -------
        y : same type and shape as x (pandas index preserved)
        zf : state, only when ``zi`` is given
        """
        x2, meta = as_2d(x)
        self._check_channels(x2)
        times = self._times(meta, timestamps, x2.shape[0])
        if zi is None and np.isnan(x2).all():
            raise ValueError("x is all NaN")
        C = x2.shape[1]
        if self.recurrent == "features":
            args = self._feature_args(C)
            state = self.initial_state(C) if zi is None else self._check_state(zi, C)
            y, zf = feature_filter(x2, state, times=times, **args)
            return restore(y, meta) if zi is None else (restore(y, meta), zf)
        spec = self._spec()
        if not spec.causal:
            if zi is not None:
                raise ValueError("zi is only defined for causal=True")
            return restore(run_noncausal(x2, spec, times).astype(np.float64), meta)
        if zi is None:
            y = self._run_exact(x2, spec, times)
            return restore(y.astype(np.float64), meta)
        state = self._check_state(zi, C)
        hist, hist_times = (state if spec.tau is not None else (state, None))
        y, nh, nt = run_causal(x2, hist, spec, times, hist_times, min_step=self.min_step)
        zf = (nh, nt) if spec.tau is not None else nh
        return restore(y.astype(np.float64), meta), zf

    def step(self, sample, state, timestamp=None):
        """Filter one sample: returns ``(y_t, new_state)``; the state passed in is not changed.

        ``sample`` is a scalar or a length-C vector; ``y_t`` has the same shape. With ``tau``
        give the sample's ``timestamp``. Equal to :meth:`filter` on the whole series.
        """
        s = np.asarray(sample, dtype=np.float64)
        scalar = s.ndim == 0
        s = s.reshape(1, -1)
        if self.recurrent is None:
            fast = self._fast_step(s, state, timestamp)
            if fast is not None:
                y, new = fast
                return (y[0] if scalar else y), new
        ts = None if timestamp is None else np.array([float(timestamp)])
        y, new = self.filter(s, zi=state, timestamps=ts)
        return (y[0, 0] if scalar else y[0]), new

    def _step_constants(self):
        key = (self.window, self.embedding, self.sigma, self.decay, self.tau, self.causal,
               self.exclude_self, self.tol, self.min_step, self.dtype,
               *(self.__dict__.get(k) for k in ("window_", "embedding_", "sigma_", "decay_")))
        cache = self.__dict__.get("_step_cache")
        if cache is not None and cache[0] == key:
            return cache[1]
        spec = self._spec()
        if not spec.causal:
            raise ValueError("a zero-phase (causal=False) filter has no streaming state")
        lags = np.arange(spec.n_lags - 1, -1, -1)
        decay_term = (lags * math.log(spec.decay) if spec.decay not in (None, 1.0)
                      else np.zeros(spec.n_lags))
        inv_tau = None if spec.tau is None else 1.0 / spec.tau
        consts = (spec, decay_term, 0.5 / spec.sigma**2, inv_tau)
        self._step_cache = (key, consts)
        return consts

    def _fast_step(self, s, state, timestamp):
        """Latency path for a finite sample and a NaN-free state (None: use the general path)."""
        spec, decay_term, inv2s2, inv_tau = self._step_constants()
        times = t_now = None
        if inv_tau is not None:
            if timestamp is None or not isinstance(state, tuple) or len(state) != 2:
                return None
            state, times = state
            times = np.asarray(times, dtype=np.float64)
            if times.shape != (spec.history,) or np.isnan(times).any():
                return None
            t_now = float(timestamp)
            if spec.history and t_now < times[-1]:
                return None  # the general path raises the error
        elif isinstance(state, tuple):
            return None
        if type(state) is not np.ndarray or state.dtype != np.float64:
            state = np.asarray(state, dtype=np.float64)
        if state.ndim == 1:
            state = state[:, None]
        if state.shape != (spec.history, s.shape[1]):
            expected = (spec.history, s.shape[1])
            raise ValueError(f"state has shape {state.shape}, expected {expected}")
        full = np.concatenate((state, s))
        if np.isnan(full).any():
            return None
        m = spec.embedding
        if m == 1:
            d = full - s
        else:
            keys = np.lib.stride_tricks.sliding_window_view(full, m, axis=0)[:, :, ::-1]
            keys = keys.transpose(0, 2, 1).reshape(keys.shape[0], -1)
            d = keys - keys[-1]
        vals = full[m - 1 :]
        logits = decay_term
        if inv_tau is not None:
            t_full = np.append(times, t_now)[m - 1 :]
            logits = decay_term - (t_now - t_full) * inv_tau
        if spec.exclude_self:
            if vals.shape[0] == 1:
                y = s[0].copy()
                return y, self._next_state(full, times, t_now, inv_tau)
            d, vals, logits = d[:-1], vals[:-1], logits[:-1]
        if d.shape[1] == 1:
            w = d[:, 0] * d[:, 0]
        else:
            w = np.einsum("ij,ij->i", d, d)
        w *= -inv2s2
        w += logits
        if spec.exclude_self:
            w -= w.max()  # with the sample itself included its logit, 0, is the maximum
        np.exp(w, out=w)
        y = (w @ vals) / w.sum()
        return y, self._next_state(full, times, t_now, inv_tau)

    @staticmethod
    def _next_state(full, times, t_now, inv_tau):
        if inv_tau is None:
            return full[1:]
        return full[1:], np.append(times, t_now)[1:]

    # ------------------------------------------------------------------ persistence
    def save(self, path):
        """Save to directory ``path`` (config.json + arrays.safetensors; nothing pickled)."""
        fitted = {k: getattr(self, k) for k in
                  ("window_", "embedding_", "sigma_", "decay_", "n_channels_") if hasattr(self, k)}
        arrays = {}
        for k in ("center_", "spread_", "features_", "feature_logw_"):
            if hasattr(self, k):
                arrays[k] = np.asarray(getattr(self, k), dtype=np.float64)
        save_bundle(path, "ProjectionFilter", self.get_params(), fitted, arrays)

    @classmethod
    def load(cls, path) -> ProjectionFilter:
        """Load a filter written by :meth:`save`."""
        params, fitted, arrays = load_bundle(path, "ProjectionFilter")
        obj = cls(**params)
        for k, v in fitted.items():
            setattr(obj, k, v)
        for k, v in arrays.items():
            setattr(obj, k, np.array(v))
        return obj
