"""Local adaptation in time: a zero-phase filter hands quiet stretches to a stronger smoother.

A recording with quiet and busy stretches -- an IMU at rest and in motion -- has no single
best smoother: the setting :meth:`ProjectionFilter.fit` picks by SURE over the whole fit block
follows the busy stretches (they hold most of the error) and leaves the quiet ones noisy. SURE
is a sum over samples, so it can also be read locally: with the noise level ``s`` of channel
c, the per-sample term

    r_k(t) = (y_k(t) - x(t))^2 - s^2 + 2 s^2 dy_k(t)/dx(t)

has the expectation of candidate k's squared error at t. :func:`local_mixture` averages it over
a centred window of ``width`` samples (truncated at the ends) and weighs the candidates by
``exp(-n (R_k - min R) / (T s^2))`` (n samples in the window, temperature T =
:data:`LOCAL_TEMPERATURE`: the exponentially weighted aggregate of
:mod:`~tssdpa.filters.projection_mixture`, made local). The candidates are the filter's own
output and the zero-phase Butterworth low-passes of :data:`LOWPASS_CUTOFFS` (order 2), whose
``dy_t/dx_t`` is known exactly. The filter's own divergence is per row
(:mod:`~tssdpa.filters.projection_divergence`): the windowed components' part the mean of
their SURE scores' (one probe; per sample too noisy for a window of 101 samples), the
non-local ones' each row's own weight, exact. That weight usually falls as the series grows
(more patterns near each one); ``filter`` takes it on the series it filters, which is longer
than the fit block for a supervised fit or a series beyond ``max_fit_samples``.

:func:`fit_local` tries the widths of :data:`LOCAL_WIDTHS` (a heavy noise needs a wide window
to average the local terms over, a short stretch a narrow one) and keeps the one with the
lowest score, and the adaptation in a channel only where it lowers that channel's SURE over the
fit block. The divergence of the adapted output has two parts: ``sum_k w_k(t)
dy_k(t)/dx(t)``, and the weights' own dependence on x (:func:`weights_divergence`, four random
probes). Without the second part the estimate is optimistic, since the weights were chosen on the
same samples: on the stationary development series it showed gains of up to 0.02 s^2 where the
error against the clean signal grew (``experiments/local_margin_probe.py`` as of 147c4b7). The
gain must also exceed :data:`LOCAL_MARGIN` of the noise variance: SURE rests on the estimated
noise level, a few percent off (``noise_level``), and a relative error e of ``s^2`` moves the
scores of two outputs apart by ``2 e s^2`` times the difference of their divergences; the
value was set on development data (``experiments/local_margin_probe.py``). And it must exceed
a first-order scale of its own noise (:func:`gain_standard_errors`), ``2 s rms(y_a - y) /
sqrt(n)`` with ``y_a - y`` the change the adaptation makes: the spread of the gain over noise
draws is 0 to 2 times that (exactly it where one output keeps what the other removes). One
such unit is weak protection by design -- the best of three correlated widths is tested, and
the probes' noise in the weights' divergence is not counted -- and on the development cells it
rejected only gains that were chance (``docs/filters.md``, "Evidence for the rule").

With a target (:meth:`ProjectionFilter.fit` ``target=``) the noise level is the RMS of
``x - target`` and the adaptation is kept where it lowers the error against the target and
that noise has Gaussian tails (:mod:`~tssdpa.estimators.noise_tails`); the weights themselves
never see the target. Without one, a channel whose noise level was raised for heavy tails
does not adapt (``docs/filters.md``, "Heavy-tailed noise").

Channels with a missing sample keep the filter's own output (the low-passes would spread the
gap). The low-passes' divergence at the two ends of the series is the interior one (their
padding raises it there), an approximation in the windows that touch an end.
"""

from __future__ import annotations

import hashlib
import math
from typing import NamedTuple

import numpy as np

from tssdpa.estimators.noise_tails import gaussian_tails
from tssdpa.filters.projection_divergence import (
    divergence_rows,
    lowpass_diagonal,
    output_divergence,
    output_scores,
)
from tssdpa.signal.lowpass import LOWPASS_CUTOFFS, zero_phase_lowpass

__all__ = [
    "LOCAL_MARGIN",
    "LOCAL_TEMPERATURE",
    "LOCAL_WIDTHS",
    "LocalScores",
    "apply_local",
    "by_row",
    "check_local",
    "check_local_window",
    "fit_local",
    "gain_standard_errors",
    "local_mixture",
    "local_mixtures",
    "weights_divergence",
    "width_scores",
]

#: the sliding SURE windows ``local_window="auto"`` chooses from (samples); the temperature of
#: the weights
LOCAL_WIDTHS, LOCAL_TEMPERATURE = (101, 201, 401), 4.0
#: ``"auto"`` adapts a channel where its SURE drops by more than this share of ``s_c^2`` (set
#: on the development cells of ``experiments/local_margin_probe.py``; see docs/filters.md) and
#: by more than the gain's standard error (:func:`gain_standard_errors`)
LOCAL_MARGIN = 0.005
_LADDER = tuple({"cutoff": c, "order": 2} for c in LOWPASS_CUTOFFS)


def by_row(divergence, T: int) -> np.ndarray:
    """(T,) ``dy_t/dx_t`` of a fitted output per row from a number (the same in every row) or
    per row values, (T,) or (T, 1), as :func:`output_divergence` gives them."""
    return np.broadcast_to(np.ravel(np.asarray(divergence, dtype=np.float64)), (T,))


def _lowpasses(x: np.ndarray, cache: dict | None) -> list:
    """The low-passes of the channel ``x`` (T,), from ``cache`` (a dict a caller keeps across
    adaptations of the same series, keyed by the samples' bytes) where they are there."""
    key = hashlib.blake2b(x.tobytes(), digest_size=16).digest() if cache is not None else None
    if key in (cache or {}):
        return cache[key]
    outs = [zero_phase_lowpass(x[:, None], **p)[:, 0] for p in _LADDER]
    if cache is not None:
        cache[key] = outs
    return outs


def _candidates(x: np.ndarray, y: np.ndarray, divergence, cache: dict | None = None):
    """(K, T) outputs and (K, T) divergences of the candidates for one channel: ``y`` first
    (``divergence`` a number or per row, :func:`by_row`; ``cache``: :func:`_lowpasses`)."""
    outs = [y] + _lowpasses(x, cache)
    divs = [by_row(divergence, len(x))]
    divs += [np.full(len(x), lowpass_diagonal(p["cutoff"], p["order"])) for p in _LADDER]
    return np.stack(outs), np.stack(divs)


def _weights(x, Y, D, width: int, noise: float, temperature: float) -> np.ndarray:
    """(K, T) weights of the candidates ``Y`` (K, T) on the channel ``x`` (T,), ``D`` (K, T)
    their divergences: the per-sample SURE terms, their centred window means (cumulative
    sums), then the exponential weights, normalised over K."""
    r = (Y - x) ** 2 - noise * noise + 2.0 * noise * noise * D
    K, T = r.shape
    half = width // 2
    c = np.concatenate([np.zeros((K, 1)), np.cumsum(r, axis=1)], axis=1)
    lo = np.clip(np.arange(T) - half, 0, T)
    hi = np.clip(np.arange(T) + half + 1, 0, T)
    n = hi - lo
    mean = (c[:, hi] - c[:, lo]) / n  # (K, T)
    logw = -n * (mean - mean.min(axis=0)) / (temperature * noise**2)
    w = np.exp(logw)
    return w / w.sum(axis=0)


def _skipped(x2, y, c: int, channels) -> bool:
    """Whether channel ``c`` keeps ``y``: left out by ``channels`` or not finite throughout."""
    if channels is not None and not channels[c]:
        return True
    return not (np.isfinite(x2[:, c]).all() and np.isfinite(y[:, c]).all())


def local_mixture(
    x2, y, divergence, noise, width: int, channels=None, temperature=LOCAL_TEMPERATURE
):
    """The locally weighted mixture of ``y`` (a filter's output on ``x2``, both (T, C), with
    ``dy_t/dx_t`` ``divergence``, a number or per row: :func:`by_row`) and the zero-phase
    low-passes of ``x2``.

    Returns ``(out, div)``, both (T, C): the output and its ``dy_t/dx_t`` with the weights taken
    as fixed. ``noise``: (C,) noise levels; ``channels``: (C,) bools, the channels to adapt
    (default all). Channels left out or with a non-finite sample keep ``y``.
    """
    return local_mixtures(x2, y, divergence, noise, (width,), channels, temperature)[0]


def local_mixtures(
    x2, y, divergence, noise, widths, channels=None, temperature=LOCAL_TEMPERATURE, cache=None
):
    """:func:`local_mixture` for each window width of ``widths`` (a list of ``(out, div)``),
    the candidates of each channel computed once for all of them (``cache``: the low-passes
    kept across calls on the same series, :func:`_lowpasses`)."""
    x2, y = np.asarray(x2, dtype=np.float64), np.asarray(y, dtype=np.float64)
    rows = by_row(divergence, len(y))[:, None]
    mixes = [(y.copy(), np.broadcast_to(rows, y.shape).copy()) for _ in widths]
    for c in range(x2.shape[1]):
        if _skipped(x2, y, c, channels):
            continue
        s = float(noise[c])
        Y, D = _candidates(x2[:, c], y[:, c], divergence, cache)
        for width, (out, div) in zip(widths, mixes):
            w = _weights(x2[:, c], Y, D, width, s, temperature)
            out[:, c] = (w * Y).sum(axis=0)
            div[:, c] = (w * D).sum(axis=0)
    return mixes


def weights_divergence(x, y, divergence, noise, widths, probes=4, seed=0, eps=1e-4, cache=None):
    """(W, C) the part of the local mixture's mean ``dy_t/dx_t`` that :func:`local_mixture`
    leaves out, for each window width of ``widths`` -- the weights' own dependence on x,
    ``mean_t sum_k dw_k(t)/dx_t y_k(t)`` -- as the mean over ``probes`` random +-1 probes (one
    is as noisy as the gains it judges), the same probes for every width. The low-passes are
    perturbed exactly, the fitted output along its diagonal (``divergence``, :func:`by_row`);
    ``cache``: the low-passes kept across calls on the same series (:func:`_lowpasses`)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    divergence = by_row(divergence, len(x))
    rng = np.random.default_rng(seed)
    out = np.zeros((len(widths), x.shape[1]))
    for c in range(x.shape[1]):
        if _skipped(x, y, c, None):
            continue
        s, t = float(noise[c]), LOCAL_TEMPERATURE
        Y, D = _candidates(x[:, c], y[:, c], divergence, cache)
        ws = [_weights(x[:, c], Y, D, width, s, t) for width in widths]
        for _ in range(probes):
            b = eps * s * rng.choice([-1.0, 1.0], x.shape[0])
            Yp, _ = _candidates(x[:, c] + b, y[:, c] + divergence * b, divergence, cache)
            for i, (width, w) in enumerate(zip(widths, ws)):
                wp = _weights(x[:, c] + b, Yp, D, width, s, t)
                change = float(np.mean(b * ((wp - w) * Y).sum(axis=0)))
                out[i, c] += change / (eps * s) ** 2 / probes
    return out


def _odd_width(w) -> bool:
    return isinstance(w, (int, np.integer)) and not isinstance(w, bool) and w >= 1 and w % 2 == 1


def _adapts(filt) -> bool:
    """Whether ``filt``'s parameters allow the adaptation: zero-phase, uniformly sampled."""
    uniform_zero_phase = not filt.causal and filt.recurrent is None and filt.tau is None
    return filt.local_window is not None and uniform_zero_phase


def check_local_window(filt, fit: bool = True) -> None:
    """``local_window`` of ``filt``: "auto", None or an odd int >= 1 (a centred window); at
    ``fit`` an int needs a zero-phase filter on uniformly sampled data. ``ValueError`` else."""
    w = filt.local_window
    if w is None or (isinstance(w, str) and w == "auto"):
        return
    if not _odd_width(w):
        raise ValueError(f"local_window must be 'auto', None or an odd int >= 1, got {w!r}")
    if fit and not _adapts(filt):
        raise ValueError("local_window needs a zero-phase filter (causal=False) on uniformly "
                         "sampled data (no tau, no recurrent)")  # fmt: skip


def gain_standard_errors(xs, y, mixes, noise) -> np.ndarray:
    """(W, C) a first-order standard error of each SURE gain of the adaptations ``mixes`` (a
    list of ``(out, div)`` as :func:`local_mixtures` returns) over the output ``y`` on ``xs``
    (T, C): ``2 s_c rms(out - y) / sqrt(n_c)`` over the ``n_c`` finite entries of channel c.

    The two scores differ by ``mean((out - y)(out + y - 2 x))`` plus their divergence terms;
    with ``x`` the clean signal plus white noise ``e`` of level ``s``, taking ``out`` and ``y``
    as fixed leaves the random part ``-2 mean((out - y) e)``, of this standard deviation. They
    depend on ``e`` too: for two linear filters the first-order spread is ``(a + b)`` times this
    at each frequency, ``a`` and ``b`` the shares of the clean signal each removes there -- 0 to
    2 times, exactly this where one keeps what the other removes
    (``tests/filters/test_projection_local.py`` checks that case, and one where the filters
    differ by noise alone and this is about 30% above the spread)."""
    noise = np.asarray(noise, dtype=np.float64)
    out = np.empty((len(mixes), xs.shape[1]))
    for i, (loc, _) in enumerate(mixes):
        change = loc - y
        ok = np.isfinite(change) & np.isfinite(xs)
        n = ok.sum(axis=0)
        squares = np.where(ok, change, 0.0) ** 2
        out[i] = 2.0 * noise * np.sqrt(squares.sum(axis=0)) / np.maximum(n, 1)
    return out


def width_scores(filt, xs, times, noise, widths, target=None, tail: int = 0, cache=None):
    """``(divergence, before (C,), after (W, C), weights' divergence (W, C), nonlocal_part,
    standard error (W, C))``: the scores of the fitted output of ``filt`` on ``xs`` and of its
    adaptation over each width of ``widths`` -- SURE, which includes the weights' own
    divergence (:func:`weights_divergence`; zeros with a target), or with ``target`` the
    squared error against it from row ``tail`` on -- the fitted output's mean ``dy_t/dx_t``
    and its non-local part (:func:`output_divergence`), and the standard error of each SURE
    gain ``before - after`` (:func:`gain_standard_errors`; zeros with a target).
    ``noise``: the (C,) levels SURE uses; ``cache``: the low-passes kept across calls on ``xs``
    (:func:`_lowpasses`)."""
    noise = np.asarray(noise, dtype=np.float64)
    y, divergence, nonlocal_part, rows = output_divergence(filt, xs, times, noise, target)
    before = output_scores(xs, y, rows, noise, target, tail)
    mixes = local_mixtures(xs, y, rows, noise, widths, cache=cache)
    afters = np.stack(
        [output_scores(xs, loc, loc_div, noise, target, tail) for loc, loc_div in mixes]
    )
    wdiv = np.zeros_like(afters)
    if target is None:
        wdiv = weights_divergence(xs, y, rows, noise, widths, cache=cache)
        afters = afters + 2.0 * noise**2 * wdiv
    errors = np.zeros_like(afters)  # SURE's gains only: a target's error has no margin
    if target is None:
        errors = gain_standard_errors(xs, y, mixes, noise)
    return divergence, before, afters, wdiv, nonlocal_part, errors


class LocalScores(NamedTuple):
    """What :func:`fit_local` scored, as means over the channels: the fitted output's score
    (``before``), the score with the adaptation where it was kept (``kept``), and the width
    whose adaptation everywhere scored lowest with that score (``width``, ``after``) and the
    drop the rule asked of it (``needed``: the margin or the gain's standard error, 0 with a
    target or a fixed width); and ``by_channel`` (C,), each channel's ``before`` score."""

    before: float
    kept: float
    width: int
    after: float
    needed: float
    by_channel: np.ndarray


def fit_local(filt, xs, times, noise, target=None, tail: int = 0, heavy=None, cache=None):
    """The ``local_`` of a zero-phase ``filt`` fitted on ``xs``: None, or ``{"window",
    "divergence", "nonlocal_divergence", "noise", "channels"}`` (the sliding window, the
    fitted output's mean ``dy_t/dx_t`` and the part of it that depends on the series, the
    (C,) noise levels SURE used -- with ``target`` the RMS of ``xs - target`` -- and the (C,)
    channels that adapt).

    Under ``local_window="auto"`` each width of ``LOCAL_WIDTHS`` is tried and the one whose
    kept channels score lowest (mean over the channels) wins; a channel adapts only where
    that lowers its own score: its
    SURE on ``xs`` (the weights' own divergence included, :func:`weights_divergence`) by more
    than ``LOCAL_MARGIN * s_c^2`` and than the gain's standard error
    (:func:`gain_standard_errors`), or with ``target`` its error against it from row ``tail``
    on (the weights never see the target: no margin) where its noise ``xs - target`` has
    Gaussian tails (:func:`~tssdpa.estimators.noise_tails.gaussian_tails`: the sliding SURE
    assumes them), or without one where ``heavy`` (C,) does not mark its noise as heavy-tailed
    (its level raised for the tails, ``white_noise.noise_levels_and_tails``); with an int
    every channel does.

    ``cache``: the low-passes kept across adaptations of ``xs`` (:func:`_lowpasses`).

    Returns ``(local_, scores)``, ``scores`` a :class:`LocalScores` (means over the
    channels), or ``(None, None)`` where ``filt`` does not adapt (causal, recurrent, ``tau``,
    ``local_window=None``, a channel without noise against its target).
    """
    if not _adapts(filt):
        return None, None
    auto = filt.local_window == "auto"
    gaussian = True  # with a target, "auto" adapts only channels whose noise is Gaussian
    if target is not None:
        noise = np.sqrt(np.nanmean((xs - target) ** 2, axis=0))
        if not (np.isfinite(noise).all() and (noise > 0).all()):
            return None, None
        if auto:
            gaussian = gaussian_tails(xs - target)
            if not gaussian.any():  # no channel may adapt: nothing to score
                return None, None
    elif auto and heavy is not None and np.any(heavy):
        gaussian = ~np.asarray(heavy, dtype=bool)
        if not gaussian.any():
            return None, None
    noise = np.asarray(noise, dtype=np.float64)
    widths = LOCAL_WIDTHS if auto else (int(filt.local_window),)
    divergence, before, afters, _, nonlocal_part, errors = width_scores(
        filt, xs, times, noise, widths, target, tail, cache
    )
    best, nearest = None, None
    for width, after, error in zip(widths, afters, errors):
        needed = np.zeros_like(before)  # the drop a channel's score must exceed
        if auto and target is None:
            needed = np.maximum(LOCAL_MARGIN * noise**2, error)
        channels = (after < before - needed) & gaussian if auto else np.ones(len(noise), bool)
        kept = float(np.mean(np.where(channels, after, before)))
        if best is None or kept < best[0]:  # ties: the narrower window
            best = (kept, width, channels)
        if nearest is None or np.mean(after) < nearest[1]:
            nearest = (width, float(np.mean(after)), float(np.mean(needed)))
    kept, width, channels = best
    scores = LocalScores(float(np.mean(before)), kept, *nearest, before)
    if not channels.any():
        return None, scores
    return {"window": width, "divergence": float(divergence),
            "nonlocal_divergence": float(nonlocal_part), "noise": noise.tolist(),
            "channels": channels.tolist()}, scores  # fmt: skip


def apply_local(filt, x2, y, components, self_weights):
    """``y`` (the fitted output of ``filt`` on ``x2``: the mixture ``components``, their
    own-sample weights ``self_weights``) with the fitted ``local_`` in force, if any and if
    ``filt``'s parameters still allow it (zero-phase, no ``tau``, ``local_window`` not None).

    The divergence is the fitted one with its non-local part taken on ``x2``, row by row
    (:func:`~.projection_divergence.divergence_rows`): the non-local filter of a longer
    series than the fit block keeps less weight on each sample, and with the block's value
    the sliding SURE would overrate its error and hand the low-passes too much."""
    loc = getattr(filt, "local_", None)
    if not loc or not _adapts(filt):
        return y
    divergence = loc["divergence"]
    if loc["nonlocal_divergence"] is not None:
        divergence = divergence_rows(divergence, loc["nonlocal_divergence"], components,
                                     self_weights)  # fmt: skip
    return local_mixture(x2, y, divergence, loc["noise"], loc["window"], loc["channels"])[0]


def check_local(filt, local, name: str = "local_"):
    """A fitted (or loaded) ``local_``: None, or a dict of exactly ``window`` (an odd int >=
    1), ``divergence`` (finite), ``nonlocal_divergence`` (finite, or None: the stored
    divergence holds on every series, as in a file saved before 2026-11-27, which has no such
    entry and reads as None), ``noise`` (``n_channels_`` numbers > 0) and ``channels``
    (``n_channels_`` bools, one true); ``ValueError`` naming the entry otherwise. It is
    checked whatever the parameters: as in memory (:func:`apply_local`), a filter whose
    parameters were changed after the fit to ones that do not adapt (``local_window=None``,
    ``tau``) keeps it unused, and adapts again if they are changed back."""
    if local is None:
        return None
    keys = {"window", "divergence", "nonlocal_divergence", "noise", "channels"}
    if isinstance(local, dict) and set(local) == keys - {"nonlocal_divergence"}:
        local = {**local, "nonlocal_divergence": None}
    if not isinstance(local, dict) or set(local) != keys:
        raise ValueError(f"{name} must be None or a dict of {sorted(keys)}, got {local!r:.200}")
    w, s, ch = local["window"], local["noise"], local["channels"]
    if not _odd_width(w):
        raise ValueError(f"{name}['window'] must be an odd int >= 1, got {w!r}")
    for key in ("divergence", "nonlocal_divergence"):
        d = local[key]
        if d is None and key == "nonlocal_divergence":
            continue
        if isinstance(d, bool) or not isinstance(d, (int, float)) or not math.isfinite(d):
            raise ValueError(f"{name}['{key}'] must be a finite number, got {d!r}")
    C = getattr(filt, "n_channels_", None)
    ok = isinstance(s, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < math.inf for v in s
    )
    if not ok or (C is not None and len(s) != C):
        raise ValueError(f"{name}['noise'] must be {C} numbers > 0, got {s!r:.200}")
    bools = isinstance(ch, list) and all(isinstance(v, bool) for v in ch) and any(ch)
    if not bools or len(ch) != len(s):
        raise ValueError(f"{name}['channels'] must be {len(s)} bools, one true, got {ch!r:.200}")
    return local
