"""The zero-phase fit's second choice: the non-local filter alone, adapted in time.

SURE scores every candidate over the whole fit block, and the local adaptation
(:mod:`~tssdpa.filters.projection_local`) then hands the stretches where the chosen output is
poor to a low-pass. It adapts only the output the fit chose. A recording whose waveform
recurs in some stretches and not in others is served best by the non-local filter where its
patterns recur and by a low-pass elsewhere, yet over the whole block a windowed filter, fair
everywhere, scores better than the non-local one, poor where nothing recurs -- and adapted,
the windowed filter gains little (on the fusion IMU's gyroscope at 0 dB: SURE 0.066 before and
0.060 after, under the margin, where the non-local filter went from 0.123 to 0.057, its error
against the clean signal 0.080 against the windowed filter's 0.092).

So :func:`fit_adapted` adapts both: the fit's own choice and the mixture of the non-local
candidates alone (:func:`~.projection_mixture.mixture` over them), and keeps the one whose
adapted SURE is lower -- one more comparison of two scores, each unbiased. Not with the
adaptation's margin (``LOCAL_MARGIN`` of the noise variance, which guards its gain against a
noise level a few percent off): the two outputs' divergences are close, so such an error moves
both scores alike, and with the margin one development cell of 27 switched
(``experiments/autofit_heldout.py denoise``; docs/filters.md, "The non-local filter alone").
Only without a target (the stacked mixture weighs the non-local candidates against one
already), with ``mix`` and the adaptation on, where the fit scored both kinds and chose a
windowed one. The switch rests on the adaptation: ``set_params(local_window=None)`` after it
leaves the non-local filter unadapted, which the fit would not have chosen; fit again.
"""

from __future__ import annotations

import numpy as np

from tssdpa.filters.projection_fit import NONLOCAL
from tssdpa.filters.projection_local import fit_local
from tssdpa.filters.projection_mixture import mixture, none_for_nan

__all__ = ["fit_adapted"]

_SETTING_KEYS = ("base", "base_params", "window", "embedding", "decay", "degree", "sigma")


def fit_adapted(filt, xs, times, noise, target, tail, heavy):
    """:func:`~.projection_local.fit_local` of a fitted ``filt`` -- ``(local_, scores)`` --
    after switching ``filt``'s choice (``best_params_``, the settings, ``mixture_`` and the
    ``cv_results_`` weights) to the non-local candidates alone where their adapted SURE
    (``scores.kept``, the mean over the channels) is lower (see the module)."""
    lowpasses: dict = {}  # the same series twice: its low-passes (and probes') once
    local_, scores = fit_local(filt, xs, times, noise, target, tail, heavy, lowpasses)
    alternative = _nonlocal_choice(filt, xs, noise, target)
    if alternative is None or scores is None:
        return local_, scores
    kept = _choice(filt)
    _switch(filt, *alternative)
    local_a, scores_a = fit_local(filt, xs, times, noise, target, tail, heavy, lowpasses)
    if scores_a is not None and scores_a.kept < scores.kept:
        return local_a, scores_a
    _switch(filt, *kept)
    return local_, scores


def _nonlocal_choice(filt, xs, noise, target):
    """``(best_params, mixture_, weights)`` of the non-local candidates of ``filt``'s
    ``cv_results_`` alone, or None where the alternative does not apply (see the module)."""
    if target is None and filt.mix and filt.local_window is not None:
        cv = filt.cv_results_
        nonlocal_rows = (cv["window"] == NONLOCAL).to_numpy() & np.isfinite(cv["mse"].to_numpy())
        if nonlocal_rows.any() and filt.best_params_["window"] != NONLOCAL:
            grid = [
                {k: none_for_nan(row[k]) for k in _SETTING_KEYS} for row in cv.to_dict("records")
            ]
            scores = np.where(nonlocal_rows, cv["mse"].to_numpy(), np.inf)
            n_entries = int(np.isfinite(xs).sum())
            components, weights = mixture(
                grid, scores, n_entries, noise, float(filt.mix_temperature)
            )
            return grid[int(np.argmin(scores))], components, weights
    return None


def _choice(filt):
    """What :func:`_switch` sets, as ``filt`` holds it now."""
    return dict(filt.best_params_), filt.mixture_, filt.cv_results_["weight"].to_numpy().copy()


def _switch(filt, best_params, components, weights) -> None:
    """Make ``best_params`` (and the ``mixture_`` ``components``, the ``cv_results_``
    ``weights``) ``filt``'s choice, as the fit sets them."""
    filt.best_params_, filt.mixture_ = best_params, components
    filt.cv_results_["weight"] = weights
    for name, value in best_params.items():
        setattr(filt, name + "_", value)
