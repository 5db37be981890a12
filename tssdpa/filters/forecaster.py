"""`ProjectionForecaster`: analogue forecasting with projection SDPA over nearest patterns."""

from __future__ import annotations

import warnings

import numpy as np

from tssdpa.checks import check_choice, check_fraction
from tssdpa.estimators.arrays import within_reach
from tssdpa.estimators.base import Forecaster
from tssdpa.estimators.glitches import glitches_marked
from tssdpa.estimators.input_notes import ForecastGlitchWarning, user_stacklevel
from tssdpa.estimators.selection import FitScoresView, candidates
from tssdpa.filters.analogue_data import default_delays, seasonal_length
from tssdpa.filters.analogue_selection import choose_structures, drift_holdout, no_structure
from tssdpa.filters.analogues import (
    MODELS,
    RIDGES,
    Structure,
    anchor_horizons,
    forecast,
    nearest_anchor,
    saved_contenders,
    saved_structures,
    switch_forecasts,
    training_overlap,
    within_range,
)
from tssdpa.filters.channel_choice import resolve_independence
from tssdpa.filters.forecaster_params import check_forecaster_params
from tssdpa.filters.library_cache import drop_views, fitted_views, library_rows, within_bounds
from tssdpa.signal.embedding import standardise

__all__ = ["ProjectionForecaster"]

#: adaptive kernel widths tried by default, in units of the k-th neighbour's distance
BANDWIDTHS = (0.25, 0.5, 1.0, 2.0)
#: pattern lengths beyond 48 tried for the linear model alone (2.7 days to 2 weeks hourly)
LONG_LINEAR_LADDER = (64, 96, 128, 168, 256, 336)
#: ...while its embedding of the library holds at most this many values (256 MiB a copy;
#: the Gram matrix costs rows x columns^2): the ladder stops short on long, wide series
LADDER_MAX_ELEMS = 1 << 25
#: what a fit sets (cleared when a refit starts)
_FITTED = ("structures_", "contenders_", "best_params_", "mean_", "scale_", "cv_results_",
           "holdout_", "channel_models_", "channel_choice_", "channel_independent_",
           "n_channels_", "_fitted_views")  # fmt: skip


class ProjectionForecaster(FitScoresView, Forecaster):
    """Forecast y[t+h] from the futures of the past patterns nearest to the current one.

    The pattern is the delay embedding ``e_t = [y_t, y_(t-τ), ..., y_(t-(E-1)τ)]`` of the
    standardised series; the keys are every pattern of the fitted series and of the causal past
    of the series being forecast (a pattern ``e_j`` of it once ``y[j+h]`` is known at t). Over
    the ``n_neighbors`` keys nearest to the query (a k-d tree search, exact) the model is the
    projection -- Gaussian weights with a width that adapts to the local density of the keys
    -- or its local-linear form (kernel-weighted ridge least squares, as S-map), a global
    linear autoregression (per horizon, or one step iterated), or linear plus the projection
    of its residuals.

    Every parameter left as ``None`` is chosen by :meth:`fit` per horizon, by leave-one-out
    error on the fitted series (keys that share samples with the query are left out), or by
    forward error on its last quarter where that quarter changed regime (``holdout``); a list
    gives the candidates. :meth:`fit` needs no argument besides ``horizon`` to be useful. It
    leaves the glitches of the fitted series out (a ``ForecastGlitchWarning`` says where;
    ``glitches``).

    Parameters
    ----------
    embedding : int, list of int, or None
        Pattern length E (default: 1 .. ``max_embedding``, and for the linear model at delay
        1, where the delays include 1, also longer: every length up to 48, then 64, 96, 128,
        168, 256, 336 until two in a row improve no score, and the length that spans the
        highest autocorrelation peak beyond 48 lags, a season, whatever the ladder does --
        while the series has ten rows a coefficient and the pattern's embedding of it at most
        2^25 values). Formerly ``lags``.
    horizon : int
        Largest horizon. A structure is chosen for every horizon up to 12; beyond, at 1,
        ``horizon`` and geometric steps between, the other horizons using the nearest one.
    delay : int, list of int, or None
        Lag spacing τ (default: 1, and the autocorrelation's 1/e lag for a fine sampling).
    n_neighbors : int, list of int, or None
        Keys per query k (default: m (E·C + 1) for m = 1, 2, 4, 8, E·C the pattern's dimension
        (E lags of C channels); the local-linear model, which fits a slope per dimension,
        tries the larger three). pyEDM's knn=0 (E + 1) is None here.
    bandwidth : float, list of float, or None
        Adaptive kernel width in units of the distance of the k-th neighbour (default: 0.25,
        0.5, 1, 2; large values give the plain mean of the k neighbours).
    sigma : float or None
        A fixed kernel width in standardised units instead of the adaptive one.
    model : {"mean", "local_linear", "linear", "recursive_linear", "hybrid"}, list, or None
        Default: all five ("recursive_linear" iterates the one-step "linear"; delay 1 only).
    ridge : float, list of float, or None
        Relative ridge penalty of the local-linear and linear fits (default: chosen from
        1e-12, 1e-9, 1e-6, 1e-3, 1e-1).
    library_size : int or None
        Keep only the newest this-many patterns of the fitted series (formerly ``window``).
    max_embedding : int
        Largest pattern length every model tries when ``embedding`` is None (the neighbour
        models' longest). Not a cap on the "linear" and "recursive_linear" models at delay 1,
        which try the longer patterns ``embedding`` lists too: to cap them, give ``embedding``.
    max_fit_samples : int
        Leave-one-out queries scored per candidate (spread over the series).
    channel_independent : bool or "auto"
        One univariate forecaster per channel instead of one joint pattern of all channels.
        ``"auto"``: whichever forecasts the last quarter better when both are fitted on the
        first three (geometric mean over the anchor horizons of the per-channel over the joint
        error; a tie keeps the joint pattern, a kind that cannot be fitted there loses), then
        fitted on the whole series (:mod:`~tssdpa.filters.channel_choice`).
    holdout : float, "auto" or None
        Choose the structures forward instead of by leave-one-out: by the error on the last
        ``holdout`` of the fitted series (up to its last complete row: a missing tail is left out),
        each query forecast from keys whose future was known before it and linear parts fitted on
        the rows before (a validation split; for series that drift). None: leave-one-out over the
        whole series. ``"auto"`` (default): leave-one-out, and where the last quarter's standard
        deviation differs from the rest's by more than a factor 2 in some channel (a change of
        regime): for one channel, both leave-one-out and forward on the last quarter, keeping per
        horizon, among the candidates both scorings reached, the one whose larger excess over the
        best of either is least (the future may resemble the recent regime or the earlier one); for
        a joint pattern of several channels, forward alone.
    switch_half_life : float or None
        Where the fit scored both ways, forecasts switch online among the contenders --
        that choice and each scoring's own -- to the one whose squared errors over the
        origins whose targets are known by then (and new: not the fitted series repeated)
        are least, weighted by a half-life of this many times h origins at horizon h; the
        fit's choice is replaced only where its error exceeds another's by 10%, and is kept
        until an error is known (the next contender where it has no value). None: always
        the fit's choice. :meth:`predict` knows no new target and uses the fit's choice.
    glitches : "missing" or None
        ``"missing"`` (default): samples far out of line with those around them
        (:mod:`~tssdpa.estimators.glitches`) are left out of the fit, and keys of a series
        being forecast that hold one wait until it is judged
        (:mod:`~tssdpa.filters.glitch_keys`) -- but a channel's that recur at one period (a
        weekly spike) are signal and kept (:mod:`~tssdpa.estimators.recurring`, a
        ``RecurringSpikesWarning`` says so). None: every sample is data.

    Attributes
    ----------
    best_params_ : dict, or list of dict
        The structure chosen at each anchor horizon (``{h: {...}}``); for a
        ``channel_independent`` fit, a list of them, one per channel. Only the anchors are
        keys (``horizon=20``: 1, 2, 3, 4, 5, 7, 9, 12, 15, 20): every other horizon uses the
        nearest anchor's in log scale (14: 15's), which
        :func:`~tssdpa.filters.forecaster_horizons.params_at` gives.
    holdout_ : float or None
        The holdout :meth:`fit` scored forward on (None: leave-one-out alone; ``"auto"``
        falls back to it where the last quarter has too few complete rows to score on). None
        for a ``channel_independent`` fit, whose channel models have their own.
    contenders_ : dict
        ``{h: [params, ...]}`` at the anchor horizons where the forecasts switch: the
        structures they switch among, the first ``best_params_[h]`` (empty where the fit
        scored one way; a list per channel for a ``channel_independent`` fit).
    channel_independent_ : bool
        Whether the fit is one forecaster per channel (``channel_models_``).
    channel_choice_ : dict
        For ``channel_independent="auto"`` on several channels: each kind's validation MSE,
        ``{"joint": {h: mse}, "independent": {h: mse}}`` (a kind not fitted on three quarters
        missing; empty where neither was, and after :meth:`load`: it is not saved).
    cv_results_ : pandas.DataFrame
        MSE in standardised units of every candidate at every anchor horizon, by ``scoring``
        (``"leave-one-out"`` or ``"forward"``), ``chosen`` where kept; the channel models'
        tables, with a ``channel`` column, for a ``channel_independent`` fit.

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import ProjectionForecaster
    >>> x = np.empty(1500); x[0] = 0.4
    >>> for t in range(1499):
    ...     x[t + 1] = 3.9 * x[t] * (1 - x[t])            # a chaotic map
    >>> fc = ProjectionForecaster(horizon=2).fit(x[:1000])   # nothing else to choose by hand
    >>> pred = fc.forecast(x, horizon=1)   # pred[t] predicts x[t + 1] from x[:t+1]
    >>> bool(np.nanmean((pred[1000:-1] - x[1001:]) ** 2) < 1e-3)
    True
    >>> fc.predict(2).shape
    (2,)
    """

    _renamed_params = {"lags": "embedding", "window": "library_size"}
    _structural_params = ("horizon", "library_size", "glitches")  # glitches: the fit's data

    def __init__(
        self, embedding=None, horizon=1, delay=None, n_neighbors=None, bandwidth=None,
        sigma=None, model=None, ridge=None, library_size=None, max_embedding=10,
        max_fit_samples=1000, channel_independent=False, holdout="auto", switch_half_life=20,
        glitches="missing",
    ):  # fmt: skip
        self._store(locals())

    def _validate_params(self) -> None:
        check_forecaster_params(self)

    def _candidates(self, z):
        emb = candidates(self.embedding) if self.embedding is not None else None
        emb = emb or list(range(1, self.max_embedding + 1))

        def neighbours(D):
            if self.n_neighbors is not None:
                return candidates(self.n_neighbors)
            return [m * (D + 1) for m in (1, 2, 4, 8)]  # local-linear uses the larger three

        if self.sigma is not None and self.bandwidth is not None:  # (at fit: a file loads)
            raise ValueError("give bandwidth or sigma, not both: sigma replaces the adaptive width")
        kind, w = ("sigma", self.sigma) if self.sigma is not None else ("bandwidth", self.bandwidth)
        w = BANDWIDTHS if w is None else w  # (not `or`: an array has no truth value)
        width = [(kind, float(v)) for v in candidates(w)]
        delay = candidates(self.delay) if self.delay is not None else None
        ridges = list(RIDGES) if self.ridge is None else list(map(float, candidates(self.ridge)))
        # the linear model is cheap: when the embedding is free it also tries long patterns,
        # as an autoregression would (every length up to 48 samples, then a geometric ladder to
        # 336 while it helps; ten library rows a coefficient), at delay 1 only (_score_all)
        long_linear, ladder, season = [], [], None
        if self.embedding is None:
            rows, C = len(self._library(z)), z.shape[1]  # the rows the fit scores on
            cap = rows // (10 * C)
            long_linear = list(range(max(emb) + 1, min(48, cap) + 1))
            cap = min(cap, LADDER_MAX_ELEMS // (rows * C))
            ladder = [E for E in LONG_LINEAR_LADDER if max(emb) < E <= cap]
            season = seasonal_length(z, max(48, max(emb)), cap + 1)  # scored, ladder or not
            ladder = [E for E in ladder if E != season]
        return {
            "linear_embedding": long_linear,
            "linear_ladder": ladder,
            "linear_season": [] if season is None else [season],
            "embedding": emb,
            "delay": delay or default_delays(z, max(emb)),
            "n_neighbors": neighbours,
            "width": width,
            "model": self._models(),
            "ridge": ridges,
        }

    def _models(self) -> list[str]:
        models = list(MODELS) if self.model is None else candidates(self.model)
        if "analogue" in models:
            warnings.warn(
                'ProjectionForecaster: model="analogue" is deprecated, use "mean"',
                DeprecationWarning,
                stacklevel=user_stacklevel(),
            )
        return ["mean" if m == "analogue" else m for m in models]

    def _library(self, z_train):
        return library_rows(self, z_train)

    # ------------------------------------------------------------------ fitting
    def fit(self, y, verbose: bool = False):
        """Standardise ``y`` and choose a structure per anchor horizon; returns self.
        ``verbose`` prints how it scores (``holdout``), the structures chosen and their errors."""
        # fit(train, test), scikit-learn's fit(X, y): test was taken for verbose, and its
        # truth value raised numpy's "ambiguous" error, naming nothing
        self._verbose = check_choice(verbose, "verbose", (True, False))
        return super().fit(y)

    def _fit(self, a):
        # a refit must not reuse the last fit's span nor keep its other kind's state
        for stale in _FITTED:
            self.__dict__.pop(stale, None)
        marked = self.__dict__.pop("_glitches_marked", False)  # once: a 2nd pass finds more
        if not marked and self.glitches is not None:
            # a glitch as a key's future went into every forecast that weighed the key
            a = self.train_ = glitches_marked(a, note=ForecastGlitchWarning, keep_recurring=True)
        self.channel_independent_, self.channel_choice_ = resolve_independence(self, a)
        if self.channel_independent_:
            params = {**self.get_params(), "channel_independent": False}
            self.channel_models_ = [ProjectionForecaster(**params) for _ in range(a.shape[1])]
            for c, m in enumerate(self.channel_models_):
                m._glitches_marked = True  # its channel of a, marked above
                m.fit(a[:, c], self._verbose)
            self.best_params_ = [m.best_params_ for m in self.channel_models_]
            self.contenders_ = [m.contenders_ for m in self.channel_models_]
            self.holdout_ = None  # each channel model has its own
            import pandas as pd  # loaded already: the channels' cv_results_ are DataFrames

            tables = [m.cv_results_.assign(channel=c) for c, m in enumerate(self.channel_models_)]
            self.cv_results_ = pd.concat(tables, ignore_index=True)
            return
        self.channel_models_ = None
        self.mean_ = np.nanmean(a, axis=0)
        sd = np.nanstd(a, axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        z = standardise(a, self.mean_, self.scale_)
        if len(z) < self.horizon + 8:
            raise ValueError(f"y has {len(z)} samples; too few for horizon={self.horizon}")
        library = self._library(z)
        self.holdout_ = self.holdout
        auto = isinstance(self.holdout, str)
        # a univariate series that changed regime is scored both ways (minimax regret); a
        # joint pattern of several channels forward only: there the hedge cost accuracy on the
        # development data (ETTh2's seven columns at h = 96-336) and 2-3x the fit time
        both = auto and z.shape[1] == 1
        if auto:
            self.holdout_, ratio = drift_holdout(library)
            if self._verbose:
                how = "forward on the last quarter"
                how = f"both leave-one-out and {how}" if both else how
                print(f"holdout='auto': the last quarter's spread is {ratio:.3g} times the "
                      f"rest's: scoring {how if self.holdout_ else 'leave-one-out'}")  # fmt: skip

        def choose():
            return choose_structures(library, self.horizon, self._candidates(z),
                max_queries=self.max_fit_samples, holdout=self.holdout_, both=both,
                verbose=self._verbose)  # fmt: skip

        chosen, rows, contenders = choose()
        # too little complete data in the last quarter to score on: leave-one-out alone
        forward_scored = any(r["scoring"] == "forward" and np.isfinite(r["mse"]) for r in rows)
        if both and self.holdout_ and not forward_scored:
            # scored already: the choice fell back to it wherever forward had no score
            self.holdout_ = None
            rows = [r for r in rows if r["scoring"] != "forward"]
        elif auto and self.holdout_ and None in chosen.values():  # forward alone left a gap
            self.holdout_ = None
            chosen, rows, contenders = choose()
        if any(s is None for s in chosen.values()):
            raise ValueError(no_structure(z, len(library), self.library_size, self.holdout_))
        self.structures_ = chosen
        self.best_params_ = {h: s.as_dict() for h, s in chosen.items()}
        self.contenders_ = {h: [s.as_dict() for s in c] for h, c in contenders.items()}
        import pandas as pd  # for cv_results_ only: a second to import

        self.cv_results_ = pd.DataFrame(rows)

    # ------------------------------------------------------------------ forecasting
    def _newest(self, a, horizon):  # the newest origin's neighbours alone (rows)
        return self._path(a, horizon, rows=[len(a) - 1])

    def _path(self, a, horizon, switch=True, rows=None):
        if horizon > self.horizon:
            raise ValueError(f"horizon must be <= the fitted horizon {self.horizon}; got {horizon}")
        if getattr(self, "channel_models_", None):
            return np.concatenate([m._path(a[:, [c]], horizon, switch, rows)
                                   for c, m in enumerate(self.channel_models_)], 2)  # fmt: skip
        anchors, groups = anchor_horizons(self.horizon), {}
        for h in range(1, horizon + 1):
            anchor = nearest_anchor(h, anchors)
            s, switching = self.structures_[anchor], switch and self.contenders_.get(anchor)
            # a recursive structure iterates one fit for every horizon: the horizons of all
            # its anchors that do not switch in one group (one fit, one iteration to the last)
            shared = s.model == "recursive_linear" and not (switching and self.switch_half_life)
            groups.setdefault(s if shared else anchor, []).append(h)
        out, series = np.full((len(a), horizon, a.shape[1]), np.nan), self._standardised(a)
        for key, hs in groups.items():
            if isinstance(key, Structure):
                out[:, np.array(hs) - 1] = forecast(*series[:3], key, hs, *series[3:], rows)
            else:  # the anchor's whole group, as forecast(horizon=h) computes it
                group = self._anchor_group(key)[1]
                path = self._anchor_path(series, key, group, switch, rows)
                out[:, np.array(hs) - 1] = path[:, [group.index(h) for h in hs]]
        return within_bounds(out * self.scale_ + self.mean_, a, fitted_views(self).bounds)

    def _anchor_group(self, h):
        """``(anchor, group)``: ``h``'s anchor and the horizons with its structure, forecast
        together (keys whose future reaches the group's last serve all), by ``forecast`` too."""
        anchors = anchor_horizons(self.horizon)
        a = nearest_anchor(h, anchors)
        return a, [g for g in range(1, self.horizon + 1) if nearest_anchor(g, anchors) == a]

    def _forecast_h(self, a, h):  # one horizon: only its anchor's structures
        if h > self.horizon:
            raise ValueError(f"horizon must be <= the fitted horizon {self.horizon}; got {h}")
        if getattr(self, "channel_models_", None):
            return np.column_stack([m._forecast_h(a[:, [c]], h)[:, 0]
                                    for c, m in enumerate(self.channel_models_)])  # fmt: skip
        anchor, group = self._anchor_group(h)
        out = self._anchor_path(self._standardised(a), anchor, group)[:, [group.index(h)]]
        return within_bounds(out * self.scale_ + self.mean_, a, fitted_views(self).bounds)[:, 0]

    def _standardised(self, a):
        """``(library, series, overlap, fitted series, views)``, standardised: what anchors
        read (:mod:`~tssdpa.filters.library_cache`: the fitted parts are built once)."""
        views = fitted_views(self)  # its `known`: a missing tail repeats nothing
        z, overlap = standardise(a, self.mean_, self.scale_), training_overlap(views.known, a)
        return views.library, z, overlap, views.fitted, views

    def _anchor_path(self, series, anchor, hs, switch=True, rows=None):
        """(T, len(hs), C) standardised forecasts at the horizons ``hs`` by ``anchor``'s structure
        or its contenders (``switch_half_life``); ``series``: :meth:`_standardised`'s. ``rows``:
        the origins to forecast (default all), where no switch needs every origin's error."""
        z_train, z, overlap, known, views = series
        contenders = self.contenders_.get(anchor) if switch and self.switch_half_life else None
        if not contenders:
            return forecast(z_train, z, overlap, self.structures_[anchor], hs, known, views, rows)
        preds = np.stack([forecast(*series[:3], Structure(**p), hs, known, views)
                          for p in contenders])  # fmt: skip
        return switch_forecasts(preds, z, overlap[0], hs, self.switch_half_life)

    def _last_origin(self, history, n):
        if self.channel_models_:  # each channel with its own structures and range
            return np.hstack([m._last_origin(history[:, [c]], n)
                              for c, m in enumerate(self.channel_models_)])  # fmt: skip
        out = self._path(self._prepare(history), n, switch=False)[-1]  # no target is new
        # later rounds of predict read earlier forecasts as history: local-linear forecasts
        # stay within the range of the fitted data alone, widened (within_range's rule)
        anchors, fitted = anchor_horizons(self.horizon), self.train_  # all of it, as _path
        local = [self.structures_[nearest_anchor(h, anchors)].model == "local_linear"
                 for h in range(1, n + 1)]  # fmt: skip
        return np.where(np.c_[local], within_range(out[None], fitted, fitted[-1:])[0], out)

    def _prepare(self, a):  # no filling: missing samples are never keys or queries
        fitted = [(m.mean_, m.scale_) for m in self.channel_models_ or [self]]  # per channel
        within_reach(standardise(a, *map(np.hstack, zip(*fitted))), "y")  # else inf distances
        return a

    def _direct_horizon(self) -> int:
        return self.horizon

    def _predict_context(self) -> int:
        # the longest pattern any horizon's structure reads: one origin needs no more
        # (predict never switches to a contender: it knows no new target)
        models = self.channel_models_ or [self]
        return max((s.embedding - 1) * s.delay + 1 for m in models for s in m.structures_.values())

    def __getstate__(self):  # a pickle or copy builds its own fitted views (library_cache)
        return drop_views(self.__dict__)

    # ------------------------------------------------------------------ persistence
    _fitted_schema = {"n_channels_": (int,), "holdout_": (float, type(None)),
                      "best_params_": (dict, list), "contenders_": (dict, list),
                      "channel_models_": (list, dict, type(None))}  # fmt: skip
    _array_schema = ("mean_", "scale_", "train_")
    _channel_arrays = {"mean_": False, "scale_": True}

    _fitted_checks = {"holdout_": lambda self, v: v if v is None else check_fraction(v, "holdout_")}

    def _state(self):
        fitted, arrays = super()._state()
        fitted.pop("best_params_", None)
        fitted.pop("contenders_", None)
        models = fitted.pop("channel_models_", None)
        if models:
            fitted["channel_models_"] = []
            for c, m in enumerate(models):
                sub_fitted, sub_arrays = m._state()
                fitted["channel_models_"].append(sub_fitted)
                arrays |= {f"channel_{c}.{k}": v for k, v in sub_arrays.items()}
        else:
            fitted["best_params_"] = {str(h): p for h, p in self.best_params_.items()}
            fitted["contenders_"] = {str(h): c for h, c in self.contenders_.items()}
        return fitted, arrays

    def _set_state(self, fitted, arrays):
        from tssdpa.estimators.persistence import check_fitted, require_floats

        fitted = dict(fitted)
        models = fitted.pop("channel_models_", None)
        if models is not None and ("best_params_" in fitted or "contenders_" in fitted):
            raise ValueError("a channel_independent state keeps best_params_ and contenders_ "
                             "in its channel_models_ only")  # fmt: skip
        best = fitted.pop("best_params_", None)
        if best is None and models is None:  # it loaded, and predict raised AttributeError
            raise ValueError("missing fitted 'best_params_'")
        contenders = fitted.pop("contenders_", {})  # none in a file saved before them
        own = {k: v for k, v in arrays.items() if not k.startswith("channel_")}
        # float64 and finite, as fit keeps them (an int64 train_ loaded and moved the forecasts)
        require_floats(own, *(self._array_schema if best is not None else ("train_",)))
        super()._set_state(fitted, own)
        if "holdout_" not in fitted:  # a file saved before holdout="auto": its own setting
            self.holdout_ = self.holdout if isinstance(self.holdout, float) else None
        self.channel_models_ = None
        self.channel_independent_, self.channel_choice_ = bool(models), {}
        self.contenders_ = {}
        if best is not None:
            self.structures_ = saved_structures(best, self.horizon, len(self.train_))
            self.best_params_ = {h: s.as_dict() for h, s in self.structures_.items()}
            self.contenders_ = saved_contenders(contenders, self.structures_, len(self.train_))
        if not models:
            return
        n = self.train_.shape[1]  # a list one short loaded, and forecast one channel less
        if not isinstance(models, list) or len(models) != n:
            raise ValueError(f"channel_models_ must be a list of {n} states, got {models!r:.200}")
        params = {**self.get_params(), "channel_independent": False}
        self.channel_models_ = []
        for c, sub_fitted in enumerate(models):
            check_fitted(ProjectionForecaster, sub_fitted, f"channel_models_[{c}]")
            if "channel_models_" in sub_fitted:
                raise ValueError(f"channel_models_[{c}] cannot hold channel models itself")
            m = ProjectionForecaster(**params)
            prefix = f"channel_{c}."
            sub = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
            try:
                m._set_state(sub_fitted, sub)
            except ValueError as exc:  # name the channel: the fields repeat in each
                raise ValueError(f"channel_models_[{c}]: {exc}") from exc
            self.channel_models_.append(m)
        self.best_params_ = [m.best_params_ for m in self.channel_models_]
        self.contenders_ = [m.contenders_ for m in self.channel_models_]

    @classmethod
    def _array_allowed(cls, key: str) -> bool:
        return key in cls._array_schema or (
            key.startswith("channel_") and key.split(".", 1)[-1] in cls._array_schema
        )
