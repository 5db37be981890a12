"""`ProjectionFilter`: the fit / filter / step / save object for sensor engineers."""

from __future__ import annotations

import numpy as np

from tssdpa.checks import check_choice, check_fraction, check_int, check_positive
from tssdpa.estimators.arrays import check_float32_range, check_state, restore
from tssdpa.estimators.base import Denoiser, check_fit_input, denoiser_input, target_like
from tssdpa.estimators.glitches import (
    GLITCHES,
    check_spike_channels,
    fitted_spike_channels,
    glitches_missing,
)
from tssdpa.estimators.selection import CANDIDATE_LISTS, FitScoresView
from tssdpa.filters import channel_streams as streams
from tssdpa.filters import projection_channels as channels
from tssdpa.filters import projection_fit as fitting
from tssdpa.filters import projection_local as local
from tssdpa.filters import projection_mixture as mixing
from tssdpa.filters.channel_scale import CHANNEL_SCALES, ChannelUnits, fitted_channel_scale
from tssdpa.filters.projection_alternative import fit_adapted
from tssdpa.filters.projection_features import RandomFeatureRecursion
from tssdpa.filters.projection_fit import AUTO, auto_default, choose_settings
from tssdpa.filters.projection_stream import Streaming, empty_chunk_state, sample_times
from tssdpa.signal.features import feature_filter
from tssdpa.signal.lagfilter import resolve_spec
from tssdpa.signal.lowpass import check_lowpass
from tssdpa.signal.missing import check_not_all_missing, fill_backward

__all__ = ["ProjectionFilter"]

_SETTINGS = ("window", "embedding", "degree", "sigma", "decay", "base", "base_params")
_FITTED = ("mixture", "local", "channel_scale", "center", "spread", "features", "feature_logw",
           "fit_holdout_start", "spike_channels")  # fmt: skip
_RESULTS = ("best_params", "cv_results", "noise_level", "heavy_tails", "n_channels")


class ProjectionFilter(
    FitScoresView, RandomFeatureRecursion, channels.ChannelModels, ChannelUnits, Streaming, Denoiser
):
    """Causal (or zero-phase) projection filter for (T,) or (T, C) sensor series.

    Output at step t: the weighted mean of the past samples x_j in the window, with weights
    ``exp(-||e_t - e_j||^2 / (2 sigma^2))`` on the delay embeddings ``e`` times ``decay**(t-j)``
    (or ``exp(-(t_t - t_j) / tau)`` with timestamps); with ``degree`` p the weighted local
    polynomial of degree p in time instead of the mean (``sigma=inf``: Savitzky–Golay).

    ``ProjectionFilter().fit(x)`` chooses every setting left ``"auto"`` (window, embedding,
    degree) and the kernel width from ``x`` alone (SURE) or against a ``target``; see
    :meth:`fit` and ``docs/filters.md``.

    Parameters
    ----------
    window : "auto", int, list of int, or None
        Samples attended to (the current one included; the zero-phase filter attends to
        ``2 window - 1`` centred ones). ``None`` with ``decay`` (or ``tau`` and ``min_step``)
        gives the infinite-memory IIR filter. ``"all"`` (zero-phase): the non-local filter,
        whose keys are the ``n_neighbors`` patterns of the whole series nearest to the
        query's (non-local means; :mod:`tssdpa.signal.nonlocal_filter`). A list is a set of
        candidates for :meth:`fit`; ``"auto"`` (default) searches 4..128 (zero-phase 2..64
        and "all") and means 32 before :meth:`fit`.
    embedding : "auto", int or list of int
        Delay-embedding length m; ``"auto"`` (default) searches 1, 3, 7 (``window="all"``:
        7, 15, 31, 63) and means 1 (``window="all"``: 15) before :meth:`fit`.
    degree : "auto", int or list of int
        0: the weighted mean; p <= 8: the weighted least-squares polynomial of degree p in the
        time offset at t (no lag on trends; a row with under p + 1 keys of weight fits the
        highest degree they determine). "auto": 0, 1, 2 (zero-phase 0, 2, 4); 0 before fit.
    sigma : float or list of float
        Kernel width used before :meth:`fit`; a list gives the candidates :meth:`fit` tries
        (default: a grid scaled to the data's noise level, plus ``inf``, the uniform kernel).
    decay : float, list, or None
        Per-sample weight factor gamma in (0, 1].
    tau : float or None
        Time constant of the decay in seconds; needs timestamps (argument or time index).
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
        :meth:`fit` scores candidates on at most this many samples (default 4000): the first
        ones, or, if a channel is unknown there, those from where every channel is known.
    holdout : float
        Fraction of the fit block's samples (``max_fit_samples``), the last ones, on which
        :meth:`fit` scores candidates against a ``target`` (default 1.0: all of them).
    base : "auto", None or "butterworth"
        A linear base for the zero-phase filter: the output becomes ``B(x) + P(x - B(x))``,
        the zero-phase Butterworth low-pass ``B`` (``scipy.signal.sosfiltfilt``) plus the
        projection ``P`` of what it leaves (``window=0``: ``B`` alone). ``"auto"`` (default)
        lets :meth:`fit` try the filter with and without it (zero-phase filters on uniformly
        sampled data; causal filters have none) and means None before :meth:`fit`.
    base_params : dict or None
        ``{"cutoff": c, "order": n}`` of the base (cutoff a fraction of Nyquist, as in
        ``scipy.signal.butter``); None lets :meth:`fit` choose them.
    mix : bool
        A zero-phase filter outputs the weighted mean of its best candidates (``mixture_``,
        :mod:`~tssdpa.filters.projection_mixture`): without a target the best of each kind
        (base, window, embedding, decay), weighted ``exp(-N (SURE - min SURE) /
        (mix_temperature s^2))``; with a target the convex least-squares weights of the 16
        best. False: one.
    mix_temperature : float
        Temperature of the weights of a fit without a target (default 16).
    n_neighbors : int
        Keys of the non-local filter (``window="all"``): the nearest patterns (default 64).
    local_window : "auto", odd int or None
        Zero-phase: mix the output with zero-phase low-passes where SURE over this many
        samples favours them (:mod:`~tssdpa.filters.projection_local`). ``"auto"`` (default):
        the width of ``LOCAL_WIDTHS`` (101, 201, 401) with the lowest score, kept where it
        lowers the fit's score (SURE, or the target's error); None: never.
    noise_level : None, "spectral", float or list of floats
        The standard deviation of the additive white noise, one for every channel or one per
        channel, where known (a datasheet, a recording at rest; on a coarse grid, ``step /
        sqrt(12)``); SURE scores with it (with a ``target`` it only scales the sigma grid).
        None (default): :meth:`fit` estimates it, an upper bound (loose where the signal has
        white innovations of its own: lowered toward its spectrum's floor where a linear
        spectrum fits and shows one), raised for heavy tails (SURE then weighs for them); a series
        exact at most samples has none and is kept. "spectral": that floor, fit unchecked.
    channel_scale : "std" or None
        "std" (default): the kernel compares channels divided by ``channel_scale_`` (their
        standard deviations, glitches clipped, over their median), so channels in other units
        count alike (sigma and ``cv_results_`` are in those units); None: as they are.
    glitches : "missing" or None
        "missing" (default): a zero-phase filter treats rare samples far out of line with those
        around them (:mod:`tssdpa.estimators.glitches`) and the spikes of impulsive noise
        (:mod:`tssdpa.estimators.spikes`) as missing; None, or causal: kept.
    channel_independent : "auto", bool
        Fits of several channels: ``"auto"`` (default) also fits one filter on each
        channel alone and keeps, channel by channel, the output that scores lower (SURE, or
        the error against ``target``, over the channel's noise variance: ``channel_choice_``;
        causal: on the rows after the fit block where the series has enough, the channel's
        own only where lower by over 10%; :mod:`.projection_channels`); True: alone only;
        False, the one joint fit. A causal filter so fitted streams one state
        (:mod:`.channel_streams`); ``recurrent="features"`` is always joint.

    Attributes
    ----------
    sigma_, window_, embedding_, degree_, decay_, base_, base_params_ : fitted settings.
    best_params_ : dict, the same settings as one dict (the best candidate of a mixture).
    mixture_ : list of dict or None, the candidates a zero-phase filter averages, each its
        settings and ``weight`` (None: the filter is the single setting ``best_params_``).
    noise_level_ : ndarray (C,), the noise level SURE used: ``noise_level`` or the estimate
        (None with a target).
    heavy_tails_ : ndarray of bool (C,), the channels whose estimated noise level was raised
        for heavy tails: there SURE weighs each sample's divergence by its own squared noise
        and the fit does not adapt in time (None with a target; all False for a given level).
        Neither is saved: a loaded filter has neither attribute.
    channel_scale_ : ndarray (C,), what each channel is divided by before the kernel.
    local_ : dict or None, the local adaptation in force (:mod:`.projection_alternative`).
    spike_channels_ : list of bool or None, per channel whether the fit found impulsive noise
        in it (zero-phase; :mod:`tssdpa.estimators.spikes`): ``filter`` then treats its spikes
        as missing under ``glitches="missing"``.
    n_channels_ : int, channels seen by :meth:`fit`.
    channel_models_ : list or None, per channel the filter fitted on it alone (None where the
        channel takes the joint output); None where every channel takes the joint output.
        With ``channel_independent=True`` the joint settings are not fitted and
        ``best_params_`` / ``cv_results_`` are the channels' (a list; a ``channel`` column).
    channel_choice_ : pandas.DataFrame or None, per channel the ``joint`` and ``alone`` scores
        (causal, after the fit block too: ``held_out_*``) and the one ``chosen`` ("auto").
    channel_scores_ : ndarray (C,) or None, each channel's score, as in
        ``channel_choice_``.
    cv_results_ : pandas.DataFrame, one row per candidate tried: its window, embedding,
        degree, decay, sigma and estimated mean squared error ``mse`` (SURE without a target,
        error on the held-out tail with one); ``weight`` in the mixture of a zero-phase fit
        (0 for a candidate left out, such as one not the best of its kind).

    Examples
    --------
    >>> import numpy as np
    >>> from tssdpa.filters import ProjectionFilter
    >>> rng = np.random.default_rng(0)
    >>> clean = np.sign(np.sin(np.linspace(0, 20, 2000)))
    >>> noisy = clean + 0.2 * rng.normal(size=2000)
    >>> f = ProjectionFilter().fit(noisy)
    >>> y = f.filter(noisy)
    >>> bool(np.mean((y - clean) ** 2) < np.mean((noisy - clean) ** 2))
    True
    >>> state = f.initial_state()
    >>> y0, state = f.step(noisy[0], state)
    """

    def __init__(
        self, window=AUTO, embedding=AUTO, degree=AUTO, sigma=1.0, decay=None, tau=None,
        causal=True, exclude_self=False, tol=1e-6, min_step=None, recurrent=None, n_features=256,
        feature_map="centres", random_state=0, dtype="float64", max_fit_samples=4000,
        holdout=1.0, base=AUTO, base_params=None, mix=True, mix_temperature=16.0, n_neighbors=64,
        local_window=AUTO, noise_level=None, channel_scale="std", glitches="missing",
        channel_independent=AUTO):  # fmt: skip
        self._store(locals())

    # ------------------------------------------------------------------ settings
    def _settings(self, **override) -> dict:
        """The scalar settings in force: fitted values if fitted, else the parameters."""
        models = self.__dict__.get("channel_models_")
        if models and "sigma_" not in self.__dict__:  # True: no joint fit (their causal not ours)
            raise ValueError(f"fitted with channel_independent=True, each channel alone and "
                             f"causal={models[0].causal}: no joint fit chose settings for "
                             f"causal={self.causal} (they were the defaults, window 32, sigma "
                             "1); set causal back or fit again")  # fmt: skip
        out = dict(override)
        for name in _SETTINGS:
            if name in out:
                continue
            if hasattr(self, name + "_"):
                out[name] = getattr(self, name + "_")
                continue
            v = getattr(self, name)
            if isinstance(v, CANDIDATE_LISTS):
                raise ValueError(f"{name} is a list of candidates: call fit() first")
            out[name] = auto_default(name, out) if isinstance(v, str) and v == AUTO else v
        return mixing.zero_phase_fit_checked(self, out, override)

    def _validate_params(self) -> None:
        check_choice(self.causal, "causal", (True, False))
        check_choice(self.exclude_self, "exclude_self", (True, False))
        if check_choice(self.recurrent, "recurrent", (None, "features")) and not self.causal:
            raise ValueError("recurrent='features' is causal only: give causal=True")
        check_choice(self.feature_map, "feature_map", ("centres", "performer"))
        check_int(self.n_features, "n_features")
        check_int(self.n_neighbors, "n_neighbors")
        check_int(self.random_state, "random_state", minimum=0)
        check_int(self.max_fit_samples, "max_fit_samples")
        check_fraction(self.holdout, "holdout", closed_right=True)
        check_positive(self.tol, "tol")
        if self.min_step is not None:
            check_positive(self.min_step, "min_step")
        check_choice(self.base, "base", (AUTO, None, "butterworth"))
        if self.base == "butterworth" and (self.causal or self.tau is not None):
            raise ValueError("base='butterworth' needs causal=False and no tau")
        if self.base_params is not None:
            check_lowpass(self.base_params)
        check_choice(self.mix, "mix", (True, False))
        fitting.check_candidate_lists(self)
        local.check_local_window(self, fit=False)  # its value (load reads it from a file)
        check_positive(self.mix_temperature, "mix_temperature")
        check_choice(self.channel_scale, "channel_scale", CHANNEL_SCALES)
        check_choice(self.glitches, "glitches", GLITCHES)
        channels.check_channels_setting(self)

    def _spec(self, exclude_self=None, **override):
        s = self._settings(**override)
        check_choice(self.recurrent, "recurrent", (None, "features"))
        return resolve_spec(
            window=s["window"], embedding=s["embedding"], sigma=s["sigma"], decay=s["decay"],
            tau=self.tau, causal=self.causal, tol=self.tol, min_step=self.min_step,
            exclude_self=self.exclude_self if exclude_self is None else exclude_self,
            dtype=self.dtype, degree=s["degree"], n_neighbors=self.n_neighbors,
        )  # fmt: skip

    def _times(self, meta, timestamps, n, fit=False):
        return sample_times(self, meta, timestamps, n, fit)

    # ------------------------------------------------------------------ fit
    def fit(self, x, target=None, timestamps=None, verbose=False):
        """Choose the settings left ``"auto"`` (or given as lists) and sigma by estimated error.

        Every candidate -- the window, embedding, degree and decay candidates times the sigma
        grid (a grid scaled to the noise level plus ``inf``, or ``sigma`` given as a list) --
        filters the fit block (``max_fit_samples``) as configured (``exclude_self`` as set);
        the lowest score wins (:mod:`tssdpa.filters.projection_fit`).

        * With ``target``: the mean squared error against ``target`` on those samples (the
          last ``holdout`` fraction of them; default all). Nothing is trained on the target,
          so every target sample may judge the candidates; ``holdout < 1`` scores the tail.
        * Without ``target`` (self-supervised): Stein's unbiased risk estimate (SURE),
          ``mean((y - x)^2) - s^2 + 2 s^2 div / N`` with the noise level ``s`` per channel
          (``noise_level``, else :func:`~tssdpa.estimators.white_noise.noise_level`;
          ``noise_level_``) and the divergence ``div = sum dy_t/dx_t`` (one random +-1
          probe; exact for ``window="all"``; where the noise has heavy tails each sample's
          term is weighed by its own squared noise, ``heavy_tails_``): for additive white
          noise, the expected squared error against the unseen clean signal. Noise that is
          not white (drift, correlated noise) is partly taken for signal: give a ``target``
          where one exists. A zero-phase filter then decides on its local adaptation by the
          same score (``local_window``, ``local_``).

        Parameters
        ----------
        x : array_like, Series, DataFrame or tensor, (T,) or (T, C)
        target : same shape as x, optional
            The clean x, in its units (x regressed on it with a slope out of [1/4, 4]: refused).
        timestamps : array_like (T,), optional
        verbose : bool
            Print the chosen settings and the five best candidates with their scores.

        Returns
        -------
        self
        """
        x2, meta = denoiser_input(self, x)  # an uneven DatetimeIndex without tau: warned of
        check_fit_input(x2, "x", meta, flags_told=True)
        check_float32_range(x2, self.dtype, "x", fit=True)
        tgt = target_like(target, x2, meta, readings=True)
        self._validate_params()
        local.check_local_window(self)
        times = self._times(meta, timestamps, x2.shape[0], fit=True)
        self._forget()  # nothing stale from a last fit
        try:
            return self._fit_checked(x2, tgt, times, verbose)
        except BaseException:  # nor half of a failed one: the filter is then not fitted
            self._forget()
            raise

    def _forget(self) -> None:
        """Drop every fitted attribute."""
        for name in (*_SETTINGS, *_FITTED, *channels.FITTED, *_RESULTS):
            self.__dict__.pop(name + "_", None)

    def _fit_checked(self, x2, tgt, times, verbose):
        """:meth:`fit` on the checked (T, C) ``x2``, target and sample times."""
        self.spike_channels_ = None  # fitted alone, each channel's own filter has its own
        if channels.fits_alone(self, x2.shape[1]) and self.channel_independent != AUTO:
            return self._fit_alone(x2, tgt, times, verbose)
        block = fitting.fit_block(x2, min(x2.shape[0], self.max_fit_samples))
        self.spike_channels_ = fitted_spike_channels(self, x2[block])
        xs = glitches_missing(self, x2[block], start=block.start, fit=True)
        n = len(xs)
        tail = n - max(1, int(round(self.holdout * n)))  # first sample of the held-out tail
        if tgt is not None and not np.isfinite(tgt[block][tail:]).any():
            raise ValueError(f"target has no known value in rows {block.start + tail}-"
                             f"{block.stop - 1} (beside a reading of x), the held-out last "
                             f"holdout={self.holdout} of the samples the fit scores")  # fmt: skip
        noise, heavy = fitting.fit_noise_level(self, xs)
        whole = np.concatenate([x2[: block.start], xs, x2[block.stop :]])  # not the block's:
        self.channel_scale_ = fitted_channel_scale(self.channel_scale, whole)  # see its module
        xs, tgt_s = self._to_units(xs), (None if tgt is None else self._to_units(tgt[block]))
        # the settings do not depend on the level, but SURE's probe (1e-4 of the noise) is lost
        # to rounding on a large one (a unit signal on 1e12): score the series less its median
        level = np.array([np.median(c[np.isfinite(c)]) if np.isfinite(c).any() else 0.0
                          for c in xs.T])  # fmt: skip
        xs, tgt_s = xs - level, (None if tgt_s is None else tgt_s - level)
        t_s = times[block] if times is not None else None
        self.best_params_, self.cv_results_, unit_noise, self.mixture_ = choose_settings(
            self, xs, t_s, tgt_s, tail, noise / self.channel_scale_, heavy
        )
        self.noise_level_ = noise if tgt is None else None  # in the units of x
        self.heavy_tails_ = heavy if tgt is None else None
        for name, value in self.best_params_.items():
            setattr(self, name + "_", value)
        fitting.warn_held_readings(xs, tgt_s)
        self.n_channels_ = x2.shape[1]
        self.local_, local_scores = fit_adapted(self, xs, t_s, unit_noise, tgt_s, tail, heavy)
        self.fit_holdout_start_ = block.start + tail if tgt is not None else None
        self.center_ = np.nanmean(self._to_units(x2), axis=0)  # where random features are drawn
        self.spread_ = np.where((s := np.nanstd(self._to_units(x2), axis=0)) > 0, s, 1.0)
        if self.recurrent == "features":
            self._draw_features()
        scored = (xs, t_s, unit_noise, tgt_s, tail, local_scores, block)
        self._choose_channels(x2, tgt, times, scored)
        if verbose:
            score = "SURE" if tgt is None else "held-out MSE"
            print(fitting.fit_report(self, score, local_scores) + channels.choice_report(self))
        return self

    # ------------------------------------------------------------------ apply
    def filter(self, x, zi=None, timestamps=None):
        """Filter x; with ``zi`` return ``(y, zf)`` like :func:`scipy.signal.lfilter`.

        Parameters
        ----------
        x : array_like, Series, DataFrame or tensor, (T,) or (T, C)
            NaN values are never averaged (a key serves the channels it has); the output
            there is still defined (imputed from the neighbours, decay-weighted; a local
            polynomial stays within the values it weighed). A channel with no usable key in
            reach (a gap longer than the window) repeats its last defined output. Offline (no
            ``zi``) its values before its first defined output take that output; with ``zi``
            they stay NaN (a causal stream cannot look ahead). The zero-phase filter
            interpolates linearly between the defined outputs on either side instead. Without
            ``zi``, a channel with no finite value raises ``ValueError``.
        zi : state, optional
            From :meth:`initial_state` or a previous ``zf``; x may then be empty: zf = zi.
        timestamps : array_like (T,), optional
            Times for ``tau`` (a Datetime/TimedeltaIndex's are read; given too: the same).

        Returns
        -------
        y : same type and shape as x (pandas index preserved)
        zf : state, only when ``zi`` is given
        """
        if not self.causal and zi is not None:
            raise ValueError("zi is only defined for causal=True")
        x2, meta = denoiser_input(self, x, stream=zi is not None)  # a chunk may be empty
        self._check_channels(x2, meta=meta)
        self._validate_params()
        check_float32_range(x2, self.dtype, "x")
        if x2.shape[0] == 0:  # an empty chunk of a stream (no new samples): the state as it was
            return restore(x2, meta), empty_chunk_state(self, zi, x2.shape[1])
        times = self._times(meta, timestamps, x2.shape[0])
        if zi is None:
            check_not_all_missing(x2)  # random features check whole patterns below
            if streams.by_channel(self):
                return restore(channels.filter_by_channel(self, x2, times), meta)
        elif self.recurrent is None:  # a stream of the exact kernel, channel by channel or not
            y, zf = streams.stream(self, x2, zi, times)
            return restore(y, meta), zf
        C = x2.shape[1]
        x2, units = self._to_units(x2), self._from_units  # the kernel's units (channel_scale_)
        if self.recurrent == "features":
            args = self._feature_args(C)
            state = self.initial_state(C) if zi is None else check_state(zi, self.initial_state(C))
            if zi is None:  # as the non-local filter: no complete pattern, no key, no output
                check_not_all_missing(x2, complete=args["embedding"])
            y, zf = feature_filter(x2, self._state_units(state, False), times=times, **args)
            if zi is None:
                if np.isnan(y).all():  # complete patterns, but every feature weight underflowed
                    raise ValueError(f"recurrent='features': every feature weight underflowed "
                                     f"at sigma={args['sigma']:g}; give a wider sigma or the "
                                     "exact kernel (recurrent=None)")  # fmt: skip
                return restore(units(fill_backward(y)), meta)
            return restore(units(y), meta), self._state_units(zf, True)
        return restore(self._joint_output(x2, times, in_units=True), meta)

    def _joint_output(self, x2, times, in_units=False):
        """The offline output of the filter fitted on all channels of (T, C) ``x2``."""
        x2 = glitches_missing(self, x2 if in_units else self._to_units(x2))
        mix = getattr(self, "mixture_", None) if self.mix and not self.causal else None
        comps = mixing.check_mixture(self, mix) or [{**self._checked_setting(), "weight": 1.0}]
        y, own = mixing.mixture_output(self, x2, times, comps)
        return self._from_units(local.apply_local(self, x2, y, comps, own))

    def _checked_setting(self) -> dict:
        """The setting in force, checked as one spec (window 0 needs a base)."""
        setting = self._settings()
        if mixing.base_in_force(self)[0] is None or setting["window"] != 0:
            self._spec()  # checks every setting
        return setting

    def to_onnx(self, path, n_channels: int | None = None, opset: int | None = None):
        """Export the streaming step as an ONNX model; returns its ``Path``.

        Inputs ``x`` (T, C) float32 and ``state``; outputs ``y`` and ``next_state``; the
        empty state is :func:`tssdpa.export.onnx_initial_state`. Causal filters only; needs
        ``tssdpa[deploy]``. The same as :func:`tssdpa.export.to_onnx` (``docs/deploy.md``)."""
        from tssdpa.filters.onnx_export import to_onnx

        return to_onnx(self, path, n_channels=n_channels, opset=opset)

    # ------------------------------------------------------------------ persistence
    _fitted_schema = {
        "window_": (int, str, type(None)),  # str: "all" (check_fitted_window)
        "embedding_": (int,),
        "degree_": (int,),
        "sigma_": (float,),
        "decay_": (float, type(None)),
        "base_": (str, type(None)),
        "base_params_": (dict, type(None)),
        "mixture_": (list, dict, type(None)),  # checked by check_mixture on load
        "local_": (dict, type(None)),  # checked by check_local on load
        "n_channels_": (int,),
        "spike_channels_": (list, bool, type(None)),  # a list of bools: check_spike_channels
        "channel_models_": (list, dict, type(None)),  # checked by set_channel_models_state
    }
    _array_schema = ("center_", "spread_", "features_", "feature_logw_", "channel_scale_")
    _channel_arrays = {"center_": False, "spread_": True, "channel_scale_": True}
    _saved_defaults = {"channel_scale": None, "glitches": None,  # older files: as they were
                       "channel_independent": False, "base": None}  # fmt: skip

    def _set_state(self, fitted: dict, arrays: dict) -> None:
        # a fitted file holds every setting fit chose: without one, _settings fell back to
        # the parameter (sigma=1.0, window "auto" -> 32) and filtered with it, silently;
        # channels fitted alone each hold their own (and the joint ones are then unused)
        alone = fitted.get("channel_models_")
        alone = isinstance(alone, list) and all(e is not None for e in alone) and bool(alone)
        if "n_channels_" in fitted and not alone:
            for name in _SETTINGS:
                v = getattr(self, name)
                chosen = (
                    name == "sigma" or isinstance(v, list) or (isinstance(v, str) and v == AUTO)
                )
                if chosen and f"{name}_" not in fitted:
                    raise ValueError(f"missing fitted '{name}_' (fit chose it: {name}={v!r})")
        super()._set_state(fitted, arrays)

    _fitted_checks = {
        "mixture_": mixing.check_mixture,
        "window_": fitting.check_fitted_window,
        "sigma_": mixing.check_fitted_setting,
        "local_": local.check_local,
        "spike_channels_": check_spike_channels,
    }
