"""Each channel alone or with the others: ``ProjectionFilter(channel_independent=...)``.

A joint filter weighs every channel's samples by distances over all channels. Where the
channels move together (the coordinates of one flow) that finds better neighbours than any
channel alone; where they do not (a gyroscope beside an accelerometer) one channel's
distances blur another's, and each channel also gets the window and width that suit the
others. A fit with ``channel_independent="auto"`` therefore also fits one filter on
each channel alone and keeps, channel by channel, the output with the lower score (a causal
fit the channel's own only where lower by more than :data:`CAUSAL_TIE` of the joint one: one
kernel less to stream), each score over that channel's noise variance so that the two fits
compare (:func:`fitted_scores`: SURE without a target, the error against the target with
one). The scores are of the fit block, whose samples tuned both fits' settings; a causal fit
of a longer series scores the two on the rows after it instead, where a channel has enough
of them (:func:`held_out_scores`). ``True`` fits the channels alone only.

A causal filter so fitted streams as one (:mod:`~tssdpa.filters.channel_streams`: one state,
``step`` and the ONNX export); ``recurrent="features"`` stays joint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tssdpa.estimators.input_notes import as_channel
from tssdpa.estimators.noise_tails import tail_weights
from tssdpa.estimators.report import heavy_tails_report, settings_text
from tssdpa.estimators.selection import SURE_EPS, sure_probe
from tssdpa.estimators.white_noise import check_noise_level
from tssdpa.filters.channel_choice import check_channel_independent
from tssdpa.filters.projection_divergence import output_divergence, output_scores

if TYPE_CHECKING:
    import pandas as pd

#: parameters that act at filter time: a channel's own filter takes the filter's (set_params);
#: tau and min_step too, as the joint filter reads them (a tau set after fit left the channels
#: untimed, refusing the timestamps the filter itself now needed)
FOLLOWED = ("mix", "glitches", "dtype", "n_neighbors", "tol", "exclude_self", "local_window",
            "tau", "min_step")  # fmt: skip
#: a channel alone is fitted on the joint fit block where it is known on this share of it
MIN_KNOWN = 0.5
#: a causal fit takes a channel's own filter only where its score is lower than the joint
#: fit's by more than this share: within it the two are a tie, which keeps the joint filter,
#: one kernel to stream (each filter of a channel alone is one more per sample: a step of the
#: fusion IMU's six channels each alone took 8.7x the joint one's time,
#: ``experiments/bench_channel_streams.py``). Chosen on the development probe's channels
#: (geometric mean of the error over every channel: 0.803 at 0, 0.795 at 0.1, half as many
#: channels alone) and confirmed on held-out ones (0.686 at 0 and 0.685 at 0.1), docs/filters.md
CAUSAL_TIE = 0.1
#: a causal fit of a series longer than its fit block scores the choice on the rows outside
#: the block (:func:`held_out_scores`) in each channel known on at least this share of the
#: block's length there; elsewhere on the fit block, as before
MIN_HELD_OUT = 0.25
#: the fitted attributes of the choice (without their trailing underscore)
FITTED = ("channel_models", "channel_choice", "channel_scores")

__all__ = [
    "CAUSAL_TIE",
    "FITTED",
    "MIN_HELD_OUT",
    "FOLLOWED",
    "ChannelModels",
    "channel_models_state",
    "check_channels_setting",
    "choice_report",
    "check_channel_models",
    "choose_channels",
    "filter_by_channel",
    "fit_each_channel",
    "follow_settings",
    "fitted_scores",
    "fits_alone",
    "held_out_scores",
    "set_channel_models_state",
]


def _setting(filt):
    """``channel_independent`` of ``filt`` as "auto", True or False (1, ``np.True_``: True)."""
    value = check_channel_independent(filt.channel_independent)
    return value if isinstance(value, str) else bool(value)


def check_channels_setting(filt) -> None:
    """``channel_independent`` of ``filt``: True, False or "auto"; True not with
    ``recurrent="features"``."""
    if _setting(filt) is True and filt.recurrent is not None:
        raise ValueError(
            "channel_independent=True needs the exact kernel (recurrent=None): random "
            "features stream one state over all channels; fit one ProjectionFilter per channel "
            "to stream them apart"
        )


def fits_alone(filt, n_channels: int) -> bool:
    """Whether :meth:`ProjectionFilter.fit` of ``filt`` on ``n_channels`` channels fits each
    channel alone (too): several channels and ``channel_independent`` True, or "auto" with
    the exact kernel (random features stream one state over all channels)."""
    setting = _setting(filt)
    return n_channels > 1 and (setting is True or (setting == "auto" and filt.recurrent is None))


def fit_each_channel(filt, x2, target, times, notes: bool, block: slice | None = None) -> list:
    """One fitted filter per channel of (T, C) ``x2``, each with the parameters of ``filt``
    (its own ``noise_level`` where one per channel is given), on that channel of ``target``.
    With ``block`` (the joint fit block) a channel known on at least half of its rows is
    fitted from its first row on, so that its fit block is the joint one and the two scores
    are of the same samples (``fit_holdout_start_`` still counts rows of ``x2``); one that is
    not (it ended before, or is mostly missing there) on its whole series, as without.
    Their notes on the data are told of their channel, or not at all without ``notes`` (the
    joint fit told them)."""
    levels = check_noise_level(filt.noise_level, x2.shape[1])
    params = {**filt.get_params(), "channel_independent": False}
    models = []
    for c in range(x2.shape[1]):
        if isinstance(levels, np.ndarray):
            params["noise_level"] = float(levels[c] if levels.ndim else levels)
        start = 0
        if block is not None and np.isfinite(x2[block, c]).mean() >= MIN_KNOWN:
            start = block.start
        rows = slice(start, None)
        tgt = None if target is None else target[rows, c]
        t = None if times is None else times[rows]
        with as_channel(c if notes else None):
            try:
                m = type(filt)(**params).fit(x2[rows, c], tgt, timestamps=t)
            except ValueError as exc:  # a one-channel fit's message: say which channel
                if "channel" in str(exc):
                    raise
                raise ValueError(f"x channel {c}: {exc}") from None
        if m.fit_holdout_start_ is not None:
            m.fit_holdout_start_ += start
        models.append(m)
    return models


def choose_channels(
    joint_scores, models, tie: float = 0.0, held_out=None
) -> tuple[list | None, pd.DataFrame]:
    """``(channel_models, table)``: per channel its model of ``models`` where its own score
    is lower than the joint fit's (``joint_scores`` (C,)) by more than the share ``tie`` of it,
    else None (the joint output), or None if every channel keeps the joint output; the table
    has each channel's ``joint`` and ``alone`` scores and the one ``chosen``. ``held_out``:
    ``(joint, alone, scored)`` of :func:`held_out_scores`, whose scores decide in the
    channels ``scored`` (the table's ``held_out_joint`` and ``held_out_alone``, NaN elsewhere)."""
    alone = np.array([float(m.channel_scores_[0]) for m in models])
    joint = np.asarray(joint_scores, dtype=np.float64)
    columns = {"joint": joint, "alone": alone}
    if held_out is not None:
        held_joint, held_alone, scored = held_out
        joint, alone = np.where(scored, held_joint, joint), np.where(scored, held_alone, alone)
        columns["held_out_joint"] = np.where(scored, held_joint, np.nan)
        columns["held_out_alone"] = np.where(scored, held_alone, np.nan)
    # a NaN score is 0 / 0 (a channel without noise or without error against its target, and
    # an output equal to it): exact, so it beats an infinite score (an error over 0) and keeps
    # the joint output otherwise
    # lower by the share tie of the joint score's size: a score below 0 (SURE over a noise
    # level above the true one) times 1 - tie is higher, and so let a worse score win
    with np.errstate(invalid="ignore"):  # inf - inf: the bar is the infinite score itself
        bar = np.where(np.isfinite(joint), joint - tie * np.abs(joint), joint)
    pick = (alone < bar) | (np.isnan(alone) & np.isposinf(joint))
    import pandas as pd  # for the table only: a second to import

    table = pd.DataFrame({**columns, "chosen": np.where(pick, "alone", "joint")})
    table.index.name = "channel"
    return ([m if p else None for m, p in zip(models, pick)] if pick.any() else None), table


def held_out_scores(filt, x2, target, times, block: slice, models):
    """``(joint, alone, scored)``, each (C,): the scores of the joint output of the fitted
    ``filt`` and of each channel's filter of ``models`` on the rows of (T, C) ``x2`` after the
    fit ``block`` (as many as it holds at most: they bound the cost), on which no setting was
    tuned, and where a channel is known on enough of them (:data:`MIN_HELD_OUT`) to score it;
    None where none is. Each filter runs from the block's first row on, as it streams. The
    scores are those of the fit on its block (:func:`fitted_scores`): the error against
    ``target`` over the input's, or SURE over the noise variance with the noise level the fit
    estimated (``noise_level_``; each sample's divergence by its own squared noise in the
    ``heavy_tails_`` channels) and the divergence of a fresh +-1 probe on those rows.

    Scored on its fit block alone a channel's own filter can win by fitting that stretch: the
    fusion IMU's gyroscope Y at impulsive 10 dB scored 0.251 against the joint 0.283 there,
    then 0.212 against 0.184 on the training rows after it and a test RMSE of 0.135 against
    0.053 (docs/filters.md)."""
    n = block.stop - block.start
    span = slice(block.start, min(len(x2), block.stop + n))
    x2, rows = x2[span], slice(n, None)
    times = None if times is None else times[span]
    target = None if target is None else target[span]
    scored = np.isfinite(x2[rows]).sum(axis=0) >= MIN_HELD_OUT * n
    if not scored.any():
        return None
    # the filters are shift-equivariant: the median off, the probe is not lost to rounding
    level = np.array([np.median(c[np.isfinite(c)]) for c in x2.T])
    x = x2 - level

    def outputs(z):
        with as_channel(None):  # the fit told what the data holds
            own = [m.filter(z[:, c], timestamps=times) for c, m in enumerate(models)]
            return filt._joint_output(z, times), np.column_stack(own)

    joint, alone = outputs(x)
    if target is not None:
        tgt = target[rows] - level
        scores = [output_scores(x[rows], y[rows], 0.0, None, tgt, 0) for y in (joint, alone)]
        with np.errstate(divide="ignore", invalid="ignore"):  # an exact input: 0 / 0, NaN
            base = output_scores(x[rows], x[rows], 0.0, None, tgt, 0)
            return scores[0] / base, scores[1] / base, scored
    noise = np.asarray(filt.noise_level_, dtype=np.float64)
    probe = np.zeros(x.shape)  # on the scored rows, weighed as the fit's (choose_settings)
    heavy = np.any(filt.heavy_tails_)
    weights = tail_weights(x[rows], filt.heavy_tails_) if heavy else None
    probe[rows] = sure_probe(x[rows].shape, filt.random_state, weights)
    eps = SURE_EPS
    perturbed = outputs(x + eps * noise * probe)
    s2, out = noise**2, []
    with np.errstate(divide="ignore", invalid="ignore"):  # a channel without noise: NaN
        for y, yp in zip((joint, alone), perturbed):
            div = probe[rows] * (yp[rows] - y[rows]) / (eps * noise)  # dy_t/dx_t per entry
            out.append(output_scores(x[rows], y[rows], div, noise, None, 0) / s2)
    return out[0], out[1], scored


def filter_by_channel(filt, x2, times) -> np.ndarray:
    """(T, C) output of ``filt`` fitted channel by channel on (T, C) ``x2``: each channel's
    own filter where it has one, the joint filter's output (on all channels) elsewhere."""
    models = filt.channel_models_
    follow_settings(filt)
    joint = filt._joint_output(x2, times) if any(m is None for m in models) else None
    out = np.empty(x2.shape)
    for c, m in enumerate(models):
        if m is None:
            out[:, c] = joint[:, c]
            continue
        with as_channel(c if joint is None else None):  # the joint output told its glitches
            out[:, c] = m.filter(x2[:, c], timestamps=times)
    return out


def follow_settings(filt) -> None:
    """Each of ``filt.channel_models_`` takes the settings of ``filt`` that apply at filter
    time (:data:`FOLLOWED`, changed by ``set_params`` after fit), wherever it filters: the
    offline output, the stream, ``step`` and the ONNX export (only those that differ: a step
    asks every sample)."""
    for m in filt.channel_models_ or ():
        if m is not None:
            changed = {k: getattr(filt, k) for k in FOLLOWED if getattr(m, k) != getattr(filt, k)}
            if changed:
                m.set_params(**changed)


def fitted_scores(filt, xs, times, noise, target=None, tail: int = 0, local_scores=None):
    """(C,) the score of each channel of the fitted output of ``filt`` on its fit block ``xs``,
    before any local adaptation, over that channel's noise variance: SURE over ``noise**2``
    (the (C,) levels SURE used; the divergence per row as
    :func:`~tssdpa.filters.projection_divergence.output_divergence` gives it), or with ``target``
    the squared error against it from row ``tail`` on over that of ``xs``. ``local_scores``:
    what :func:`~tssdpa.filters.projection_local.fit_local` returned, which holds these scores
    (None where it did not score: they are computed here). Unit-free, so fits of other channel
    sets compare. The channels share the divergence (its mean over them, as the fit's scores
    give it), so a channel's score is near its error rather than unbiased for it.

    The adaptation's own scores are left out: they can rate its gain on the fit block far too
    high (the fusion IMU's six channels at 0 dB: 0.019 of the noise variance with it, 0.085
    without, where the error against the recording is 0.082 and 0.089;
    ``experiments/channels_alone_probe.py --adaptation``), and would favour the fit that
    adapts more."""
    if local_scores is not None:
        scores = local_scores.by_channel
    else:
        y, _, _, rows = output_divergence(filt, xs, times, noise, target)
        scores = output_scores(xs, y, rows, noise, target, tail)
    if target is None:
        return scores / np.asarray(noise, dtype=np.float64) ** 2
    return scores / output_scores(xs, xs, 0.0, noise, target, tail)  # the input's own error


def choice_report(filt) -> str:
    """The lines :meth:`ProjectionFilter.fit` prints about its channels ("" for none)."""
    lines = []
    table = getattr(filt, "channel_choice_", None)
    if table is not None:
        tie = (f"; causal: alone where lower by more than {CAUSAL_TIE:.0%} of the joint one"
               if filt.causal else "")  # fmt: skip
        held = (", on the rows after the fit block where a channel has enough"
                if "held_out_joint" in table else "")  # fmt: skip
        lines.append(f"channels alone or joint (score over the noise variance{tie}{held}):")
        for c, r in table.iterrows():
            after = (f"; after the fit block joint {r.held_out_joint:.4g}, alone "
                     f"{r.held_out_alone:.4g}" if held and np.isfinite(r.held_out_joint)
                     else "")  # fmt: skip
            lines.append(f"  channel {c}: joint {r.joint:.4g}, alone {r.alone:.4g}{after} -> "
                         f"{r.chosen}")  # fmt: skip
    models = getattr(filt, "channel_models_", None) or []
    for c, m in enumerate(models):
        if m is not None:
            lines.append(f"  channel {c} alone: {settings_text(m.best_params_)}")
    return "".join("\n" + line for line in lines)


class ChannelModels:
    """Mixin of :class:`~tssdpa.filters.ProjectionFilter`: its ``channel_models_``, fitted,
    saved and loaded."""

    def _fit_alone(self, x2, target, times, verbose=False):
        """``channel_independent=True``: the fit is one filter per channel; the joint
        settings are not fitted (``best_params_`` is the list of the channels')."""
        models = fit_each_channel(self, x2, target, times, notes=True)
        self.channel_models_, self.channel_choice_ = models, None
        self.channel_scores_ = np.concatenate([m.channel_scores_ for m in models])
        self.best_params_ = [m.best_params_ for m in models]
        tables = [m.cv_results_.assign(channel=c) for c, m in enumerate(models)]
        import pandas as pd  # loaded already: the channels' cv_results_ are DataFrames

        self.cv_results_ = pd.concat(tables, ignore_index=True)
        self.noise_level_ = (None if target is not None else
                             np.concatenate([m.noise_level_ for m in models]))  # fmt: skip
        self.heavy_tails_ = (None if target is not None else
                             np.concatenate([m.heavy_tails_ for m in models]))  # fmt: skip
        self.channel_scale_ = np.ones(x2.shape[1])  # each channel's kernel sees it alone
        self.n_channels_ = x2.shape[1]
        self.mixture_ = self.local_ = None
        starts = {m.fit_holdout_start_ for m in models}  # the same unless a channel starts late
        self.fit_holdout_start_ = starts.pop() if len(starts) == 1 else None
        if verbose:
            print("\n".join(heavy_tails_report(self.heavy_tails_)) + choice_report(self))
        return self

    def _choose_channels(self, x2, target, times, scored) -> None:
        """After the joint fit: ``channel_scores_`` from ``scored``, the
        joint fit's ``(xs, times, noise, target, tail, local_scores, block)`` on its fit block
        (``block`` its rows), and
        with ``channel_independent="auto"`` the choice between it and each channel alone."""
        self.channel_models_ = self.channel_choice_ = self.channel_scores_ = None
        if self.recurrent is not None:  # random features: one state over all channels
            return
        xs, t_s, noise, tgt_s, tail, local_scores, block = scored
        with np.errstate(divide="ignore", invalid="ignore"):  # a channel without noise: NaN
            self.channel_scores_ = fitted_scores(self, xs, t_s, noise, tgt_s, tail, local_scores)
        if fits_alone(self, x2.shape[1]):
            models = fit_each_channel(self, x2, target, times, notes=False, block=block)
            held = None
            if self.causal:  # a stream's rows to come: scored where no setting was tuned
                held = held_out_scores(self, x2, target, times, block, models)
            self.channel_models_, self.channel_choice_ = choose_channels(
                self.channel_scores_, models, CAUSAL_TIE if self.causal else 0.0, held
            )

    def _state(self):
        fitted, arrays = super()._state()
        channel_models_state(self, fitted, arrays)
        return fitted, arrays

    def _set_state(self, fitted, arrays):
        fitted = dict(fitted)
        entries = fitted.pop("channel_models_", None)
        own = {k: v for k, v in arrays.items() if not k.startswith("channel_")
               or k == "channel_scale_"}  # fmt: skip
        super()._set_state(fitted, own)
        set_channel_models_state(self, entries, arrays)
        self.channel_choice_ = self.channel_scores_ = None  # fit-time scores, not saved

    @classmethod
    def _array_allowed(cls, key: str) -> bool:
        return super()._array_allowed(key) or (
            key.startswith("channel_") and key.split(".", 1)[-1] in cls._array_schema and "." in key
        )


def check_channel_models(models, n_channels: int) -> None:
    """Fitted ``channel_models_``: one entry per channel, each None or a filter of one
    channel."""
    if not isinstance(models, list) or len(models) != n_channels:
        raise ValueError(f"channel_models_ must hold one entry per channel ({n_channels})")
    for c, m in enumerate(models):
        if m is not None and m.n_channels_ != 1:
            raise ValueError(f"channel_models_[{c}] must filter one channel")


def channel_models_state(filt, fitted: dict, arrays: dict) -> None:
    """Add ``channel_models_`` of ``filt`` to its saved ``fitted`` / ``arrays``: per channel the
    model's state (None for the joint output), its arrays prefixed ``channel_<c>.``, and its
    ``noise_level``."""
    models = getattr(filt, "channel_models_", None)
    if not models:
        return
    fitted["channel_models_"] = []
    for c, m in enumerate(models):
        if m is None:
            fitted["channel_models_"].append(None)
            continue
        sub_fitted, sub_arrays = m._state()
        fitted["channel_models_"].append({"noise_level": m.noise_level, "fitted": sub_fitted})
        arrays.update({f"channel_{c}.{k}": v for k, v in sub_arrays.items()})


def set_channel_models_state(filt, entries, arrays: dict) -> None:
    """Inverse of :func:`channel_models_state`: ``filt.channel_models_`` from the saved
    ``entries``, each checked against the filter's schema (errors name the channel)."""
    from tssdpa.estimators.persistence import check_fitted

    filt.channel_models_ = None
    if entries is None:
        return
    n = filt.n_channels_ if hasattr(filt, "n_channels_") else None
    if not isinstance(entries, list) or len(entries) != n:
        raise ValueError(f"channel_models_ must hold one entry per channel ({n})")
    params = {**filt.get_params(), "channel_independent": False}
    models = []
    for c, entry in enumerate(entries):
        if entry is None:
            models.append(None)
            continue
        where = f"channel_models_[{c}]"
        if not isinstance(entry, dict) or set(entry) != {"noise_level", "fitted"}:
            raise ValueError(f"{where} must be null or {{'noise_level': .., 'fitted': {{..}}}}")
        check_fitted(type(filt), entry["fitted"], where)
        if entry["fitted"].get("channel_models_") is not None:
            raise ValueError(f"{where} cannot hold channel models itself")
        prefix = f"channel_{c}."
        sub = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
        try:
            m = type(filt)(**{**params, "noise_level": entry["noise_level"]})
            m._validate_params()
            for k in sub:
                if not m._array_allowed(k):
                    raise ValueError(f"unknown array {k!r}")
            m._set_state(entry["fitted"], sub)
        except ValueError as exc:  # name the channel: the fields repeat in each
            raise ValueError(f"{where}: {exc}") from exc
        models.append(m)
    check_channel_models(models, n)
    filt.channel_models_ = models
