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
from tssdpa.filters.functional import (
    check_not_all_missing,
    check_timestamps,
    fill_backward,
    resolve_spec,
    run_causal,
    run_offline,
)

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
        Leave the current sample out of its own weights (non-local means). It does not change
        how :meth:`fit` scores candidates (SURE or held-out error, see there).
    tol : float
        IIR truncation tolerance: the output differs from the infinite-memory filter by at most
        ``tol * (max x - min x)`` when the sample itself is included (see docs/filters.md).
    min_step : float or None
        Smallest time step, needed for an infinite-memory filter driven by ``tau``; when set,
        every step of the timestamps given (and from a state's last time) is checked against
        it (``ValueError`` if smaller), since the truncation bound relies on it.
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
        Compute dtype, "float64" or "float32" (faster, ~1e-6 relative error). :meth:`step`
        computes in the same dtype as :meth:`filter`.
    max_fit_samples : int
        :meth:`fit` scores candidates on at most this many samples (the first ones).
    holdout : float
        Fraction of the (first ``max_fit_samples``) samples, the last ones in time, on which
        :meth:`fit` scores candidates against a ``target`` (default 0.25).

    Attributes
    ----------
    sigma_, window_, embedding_, decay_ : fitted settings.
    n_channels_ : int, channels seen by :meth:`fit`.
    fit_scores_ : list of dict, estimated mean squared error of every candidate tried (SURE
        without a target, error on the held-out tail with one).

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
        holdout=0.25,
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
        self.holdout = holdout

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
        return check_timestamps(t, n, min_step=self.min_step)

    def _check_channels(self, x2):
        n = getattr(self, "n_channels_", None)
        if n is not None and x2.shape[1] != n:
            raise ValueError(f"x has {x2.shape[1]} channel(s) but the filter was fitted on {n}")

    # ------------------------------------------------------------------ fit
    def fit(self, x, target=None, timestamps=None):
        """Choose sigma (and window / embedding / decay candidates) by estimated held-out error.

        Every candidate (the sigma grid, or ``sigma`` given as a list, times the ``window`` /
        ``embedding`` / ``decay`` lists) filters the first ``max_fit_samples`` samples as
        configured (``exclude_self`` as set); the lowest score wins.

        * With ``target``: the mean squared error against ``target`` on a held-out tail, the
          last ``holdout`` fraction (default 25%) of those samples. The filter has no trained
          weights; the tail is held out from the *selection*, so the score is not the error on
          the very samples the choice was made to fit. The filter still runs over the whole
          series (the tail's outputs use the samples before it as history, as they would in
          use).
        * Without ``target`` (self-supervised): Stein's unbiased risk estimate (SURE) on all of
          those samples, ``mean((y - x)^2) - s^2 + 2 s^2 div / N`` with the robust noise level
          ``s`` per channel and the divergence ``div = sum dy_t/dx_t`` estimated with one
          random +-1 probe. For additive white Gaussian noise its expectation equals the mean
          squared error against the unseen clean signal -- the quantity a held-out clean set
          would estimate -- because the divergence term exactly cancels the optimism of
          comparing y with the noisy x it was computed from. No leave-one-out is involved
          (with ``embedding`` 1 the query contains the very noise being predicted, so a
          leave-one-out score is biased towards tiny sigma).

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
        holdout = float(self.holdout)
        if not 0.0 < holdout <= 1.0:
            raise ValueError(f"holdout must be in (0, 1], got {self.holdout!r}")
        tail = n - max(1, int(round(holdout * n)))  # first sample of the held-out tail
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
                y = run_offline(xs, spec, times)
                if tgt is None:
                    y_pert = run_offline(xs + eps * noise * probe, spec, times)
                    ok = ~(np.isnan(y) | np.isnan(xs) | np.isnan(y_pert))
                    div_term = noise * probe * (y_pert - y) / eps  # noise^2 * dy/dx per entry
                    per_entry = (y - xs) ** 2 - noise**2 + 2.0 * div_term
                    mse = float(np.mean(per_entry[ok])) if ok.any() else np.inf
                else:
                    err = (y - ts)[tail:]
                    ok = ~np.isnan(err)
                    mse = float(np.mean(err[ok] ** 2)) if ok.any() else np.inf
                scores.append(
                    {
                        "window": window,
                        "embedding": emb,
                        "decay": decay,
                        "sigma": float(sig),
                        "mse": mse,
                    }
                )
                if mse < best[0]:
                    best = (mse, (window, emb, decay, float(sig)))
        if best[1] is None:
            raise ValueError("no candidate gave a finite score (is x nearly all NaN?)")
        self.window_, self.embedding_, self.decay_, self.sigma_ = best[1]
        self.n_channels_ = x2.shape[1]
        self.fit_scores_ = scores
        self.fit_holdout_start_ = tail if tgt is not None else None
        self.center_ = np.nanmean(x2, axis=0)
        self.spread_ = np.nanstd(x2, axis=0)
        if self.recurrent == "features":
            self._draw_features()
        return self

    # ------------------------------------------------------------------ features
    def _features_key(self):
        s = self._settings()
        return (
            float(s["sigma"]),
            int(s["embedding"]),
            self._n_channels(),
            int(self.n_features),
            self.feature_map,
            int(self.random_state),
        )

    def _draw_features(self):
        sigma, m, C, M, kind, seed = key = self._features_key()
        self.features_, self.feature_logw_ = draw_features(
            M,
            m * C,
            sigma,
            seed,
            kind,
            np.tile(getattr(self, "center_", np.zeros(C)), m),
            np.tile(getattr(self, "spread_", np.ones(C)), m),
        )
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
        return dict(
            W=self.features_,
            logw=self.feature_logw_,
            kind=self.feature_map,
            center=center,
            sigma=float(s["sigma"]),
            embedding=m,
            decay=s["decay"],
            tau=self.tau,
            exclude_self=bool(self.exclude_self),
        )

    # ------------------------------------------------------------------ state
    def initial_state(self, n_channels: int | None = None):
        """An empty state for :meth:`filter` (``zi``) and :meth:`step`.

        A (H + 1, C) array of NaN -- rows 0..H-1 hold the last H input samples (H = kept
        history, ``window - 1 + embedding - 1``), row H the last defined output, which a row
        with no usable key repeats -- a pair ``(samples, times)`` with ``times`` (H,) when
        ``tau`` is set, or a 5-tuple (embedding history, feature sums S and n, last time,
        last output) for ``recurrent="features"``.
        """
        C = n_channels if n_channels is not None else getattr(self, "n_channels_", None)
        if C is None:
            raise ValueError("give n_channels or call fit() first")
        if self.recurrent == "features":
            s = self._settings()
            return initial_feature_state(
                int(self.n_features), C, int(s["embedding"]), self.tau is not None
            )
        spec = self._spec()
        if not spec.causal:
            raise ValueError("a zero-phase (causal=False) filter has no streaming state")
        hist = np.full((spec.history + 1, C), np.nan)
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
            from the neighbours, decay-weighted). A row with no usable key in reach (a gap
            longer than the window) repeats the last defined output. Offline (no ``zi``) the
            rows before the first defined output take that first output; with ``zi`` they stay
            NaN (a causal stream cannot look ahead). The zero-phase filter interpolates
            linearly between the defined outputs on either side instead. Without ``zi``, a
            series with no sample whose channels are all finite raises ``ValueError``.
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
        if zi is None:
            check_not_all_missing(x2)
        C = x2.shape[1]
        if self.recurrent == "features":
            args = self._feature_args(C)
            state = self.initial_state(C) if zi is None else self._check_state(zi, C)
            y, zf = feature_filter(x2, state, times=times, **args)
            if zi is None:
                return restore(fill_backward(y), meta)
            return restore(y, meta), zf
        spec = self._spec()
        if not spec.causal and zi is not None:
            raise ValueError("zi is only defined for causal=True")
        if zi is None:
            return restore(run_offline(x2, spec, times).astype(np.float64), meta)
        state = self._check_state(zi, C)
        hist, hist_times = state if spec.tau is not None else (state, None)
        y, nh, nt = run_causal(x2, hist, spec, times, hist_times, min_step=self.min_step)
        zf = (nh, nt) if spec.tau is not None else nh
        return restore(y.astype(np.float64), meta), zf

    def step(self, sample, state, timestamp=None):
        """Filter one sample: returns ``(y_t, new_state)``; the state passed in is not changed.

        ``sample`` is a scalar or a length-C vector; ``y_t`` has the same shape. With ``tau``
        give the sample's ``timestamp``. Equal to :meth:`filter` of the whole series from the
        same state (``filter(x, zi=initial_state())``), hence to the offline ``filter(x)``
        except for rows before the first defined output (NaN here, back-filled offline). Same
        compute dtype as :meth:`filter`: with ``dtype="float32"`` both round to float32 and
        agree to a few float32 ulps of the data range (tested: within 1e-6 of the range).
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
        key = (
            self.window,
            self.embedding,
            self.sigma,
            self.decay,
            self.tau,
            self.causal,
            self.exclude_self,
            self.tol,
            self.min_step,
            self.dtype,
            *(self.__dict__.get(k) for k in ("window_", "embedding_", "sigma_", "decay_")),
        )
        cache = self.__dict__.get("_step_cache")
        if cache is not None and cache[0] == key:
            return cache[1]
        spec = self._spec()
        if not spec.causal:
            raise ValueError("a zero-phase (causal=False) filter has no streaming state")
        dt = spec.dtype
        lags = np.arange(spec.n_lags - 1, -1, -1)
        # the same constants, rounded to the compute dtype, as the offline kernel uses
        decay_term = (
            lags * math.log(spec.decay) if spec.decay not in (None, 1.0) else np.zeros(spec.n_lags)
        ).astype(dt)
        inv_tau = None if spec.tau is None else 1.0 / spec.tau
        consts = (spec, decay_term, dt.type(0.5 / spec.sigma**2), inv_tau)
        self._step_cache = (key, consts)
        return consts

    def _fast_step(self, s, state, timestamp):
        """Latency path for a finite sample and a NaN-free history (None: use the general path).

        Computes in the filter's dtype, in the order of the offline kernel.
        """
        spec, decay_term, inv2s2, inv_tau = self._step_constants()
        H = spec.history
        times = t_now = None
        if inv_tau is not None:
            if timestamp is None or not isinstance(state, tuple) or len(state) != 2:
                return None
            state, times = state
            times = np.asarray(times, dtype=np.float64)
            if times.shape != (H,) or np.isnan(times).any():
                return None
            t_now = float(timestamp)
            if H and (
                t_now < times[-1]
                or (self.min_step is not None and t_now - times[-1] < self.min_step)
            ):
                return None  # the general path raises the error
        elif isinstance(state, tuple):
            return None
        if type(state) is not np.ndarray or state.dtype != np.float64:
            state = np.asarray(state, dtype=np.float64)
        if state.ndim == 1:
            state = state[:, None]
        C = s.shape[1]
        if state.shape != (H + 1, C):
            raise ValueError(f"state has shape {state.shape}, expected {(H + 1, C)}")
        # buf = [history (H), sample, output]: the new state is the view buf[1:]
        buf = np.empty((H + 2, C))
        buf[:H] = state[:H]
        buf[H] = s[0]
        full = buf[: H + 1]
        if np.isnan(full).any():
            return None
        dt = spec.dtype
        fc = full if dt == np.float64 else full.astype(dt)
        m = spec.embedding
        vals = fc[m - 1 :]
        logits = decay_term
        if inv_tau is not None:
            t_full = np.append(times, t_now).astype(dt)[m - 1 :]
            logits = decay_term - ((t_full[-1] - t_full) * inv_tau).astype(dt)
        if spec.exclude_self and vals.shape[0] == 1:
            buf[H + 1] = s[0]
            return buf[H + 1].copy(), self._next_state(buf, times, t_now)
        # squared distance summed coordinate by coordinate (newest sample first), the order
        # of the offline kernel: a reduction over axis 0 of (D, L) accumulates row by row
        if m == 1:
            d = fc[-1][:, None] - fc.T if C > 1 else fc[-1] - fc[:, 0]
        else:
            E = np.lib.stride_tricks.sliding_window_view(fc, m, axis=0)[:, :, ::-1]
            E = E.transpose(0, 2, 1).reshape(E.shape[0], m * C)
            d = E[-1][:, None] - E.T
        d *= d
        w = d.sum(axis=0) if d.ndim == 2 else d
        w *= -inv2s2
        w += logits
        if spec.exclude_self:
            w[-1] = -np.inf  # the kernel masks the sample itself the same way
        if spec.exclude_self or inv_tau is not None:
            w -= w.max()
        np.exp(w, out=w)
        den = w.sum()
        y = np.einsum("l,cl->c", w, vals.T.copy()) / den  # the kernel's per-channel dot
        buf[H + 1] = y
        return y.astype(np.float64), self._next_state(buf, times, t_now)

    @staticmethod
    def _next_state(buf, times, t_now):
        if times is None:
            return buf[1:]
        return buf[1:], np.append(times, t_now)[1:]

    # ------------------------------------------------------------------ persistence
    def save(self, path):
        """Save to directory ``path`` (config.json + arrays.safetensors; nothing pickled)."""
        fitted = {
            k: getattr(self, k)
            for k in ("window_", "embedding_", "sigma_", "decay_", "n_channels_")
            if hasattr(self, k)
        }
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
