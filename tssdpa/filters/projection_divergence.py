"""The fitted zero-phase output's ``dy_t/dx_t``, per row, and its SURE scores: what the local
adaptation (:mod:`~tssdpa.filters.projection_local`) and the channel choice
(:mod:`~tssdpa.filters.projection_channels`) score a fitted output by.

The windowed components' divergence comes from their SURE scores in ``cv_results_`` (one
probe each, so only their mean is known, and it is taken as constant in time), the non-local
ones' from the weight each row keeps on its own sample, exactly, row by row
(:func:`divergence_rows`).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from tssdpa.filters.projection_mixture import component_outputs, none_for_nan
from tssdpa.signal.lowpass import zero_phase_lowpass

__all__ = [
    "column_means",
    "divergence_rows",
    "lowpass_diagonal",
    "nonlocal_divergence",
    "output_divergence",
    "output_scores",
]

_KEYS = ("base", "window", "embedding", "decay", "degree", "sigma")


@cache
def lowpass_diagonal(cutoff: float, order: int, n: int = 4001) -> float:
    """``dy_t/dx_t`` of the zero-phase low-pass away from the ends: the response at the
    centre of a long series to a unit impulse there (the ends, where the padding changes it,
    take the same value)."""
    e = np.zeros((n, 1))
    e[n // 2] = 1.0
    return float(zero_phase_lowpass(e, cutoff=cutoff, order=order)[n // 2, 0])


def _key(setting: dict) -> tuple:
    """A candidate's identity in ``cv_results_`` (pandas may turn a None into NaN)."""
    return tuple(none_for_nan(setting[k]) for k in _KEYS)


def output_divergence(filt, xs, times, noise, target=None):
    """The fitted output of ``filt`` on its fit block ``xs`` (T, C) and its mean ``dy_t/dx_t``.

    For white noise of level ``s``, ``mean((y - clean)^2) = mean((y - x)^2) - mean(s^2) + 2
    mean(s^2 dy/dx)`` in expectation (Stein's identity, what SURE rests on), solved here for
    the divergence of each component: its error against the clean signal is its SURE score in
    ``cv_results_``, or with ``target`` its error against the target on the whole block.
    Averaged with the mixture's weights. Returns ``(y, divergence, nonlocal_part, rows)``:
    ``nonlocal_part`` the part of ``divergence`` that :func:`nonlocal_divergence` follows on
    another series, ``rows`` the divergence per row, (T, 1) (:func:`divergence_rows`).
    """
    comps = filt.mixture_ or [{**filt.best_params_, "weight": 1.0}]
    outs, own = component_outputs(filt, xs, times, comps, self_weights=True)
    scores = {_key(row): row["mse"] for row in filt.cv_results_.to_dict("records")}
    s2 = np.broadcast_to(np.asarray(noise, dtype=np.float64) ** 2, xs.shape)
    y, divergence = np.zeros(xs.shape), 0.0
    for comp, out in zip(comps, outs):
        ok = np.isfinite(out) & np.isfinite(xs)
        if target is None:
            error = scores[_key(comp)]
        else:
            ok &= np.isfinite(target)
            error = float(np.mean((out - target)[ok] ** 2))
        fit_term = float(np.mean((out - xs)[ok] ** 2))
        mean_s2 = float(np.mean(s2[ok]))
        divergence += comp["weight"] * (error - fit_term + mean_s2) / (2 * mean_s2)
        y = y + comp["weight"] * out
    nonlocal_part = nonlocal_divergence(xs, comps, own, noise)
    return y, divergence, nonlocal_part, divergence_rows(divergence, nonlocal_part, comps, own)


def _nonlocal_rows(components, self_weights):
    """(T,) the non-local components' own-sample weights per row, each times its weight and
    ``1 - b`` (see :func:`nonlocal_divergence`); None without a non-local component."""
    total = None
    for comp, own in zip(components, self_weights):
        if own is not None:
            bp = comp["base_params"]
            b = 0.0 if comp["base"] is None else lowpass_diagonal(bp["cutoff"], bp["order"])
            total = comp["weight"] * (1.0 - b) * own + (0.0 if total is None else total)
    return total


def divergence_rows(divergence: float, nonlocal_part: float, components, self_weights):
    """(T, 1) ``dy_t/dx_t`` per row of the mixture ``components`` (``divergence`` where none
    is non-local): the windowed part constant, the non-local one each row's own weight. That
    is far from constant (a pattern with no near copy keeps its own sample: on an
    accelerometer, under 0.036 in half the rows, over 0.34 in a twentieth), and with its mean
    in every row the sliding SURE took those rows' output, near the input, for a good one."""
    rows = _nonlocal_rows(components, self_weights)
    if rows is None:
        return divergence
    return (divergence - nonlocal_part + rows)[:, None]


def nonlocal_divergence(x2, components, self_weights, noise) -> float:
    """The part of the mean ``dy_t/dx_t`` of the mixture ``components`` on (T, C) ``x2`` that
    depends on the series filtered: over the non-local components, weight times ``1 - b``
    (``b`` the diagonal of the component's base, 0 without one: ``y = B(x) + P(x - B(x))``)
    times the own-sample weight (``self_weights``, as
    :func:`~.projection_mixture.component_outputs` gives them; 0 in a row that is not a key),
    averaged over the known entries of ``x2`` weighted by the (C,) ``noise`` variances, as
    SURE averages it. A longer series usually has more patterns near each one, so less weight
    stays on the sample itself; the windowed filters' ``dy_t/dx_t`` does not depend on the
    series' length."""
    rows = _nonlocal_rows(components, self_weights)
    if rows is None:  # windowed filters only: nothing to average
        return 0.0
    s2 = np.where(np.isfinite(x2), np.asarray(noise, dtype=np.float64) ** 2, 0.0)  # (T, C)
    if not s2.any():
        return 0.0
    row_share = s2.sum(axis=1) / s2.sum()  # (T,) each row's share of the mean
    return float(row_share @ rows)


def column_means(per_entry) -> np.ndarray:
    """(C,) means over the finite entries of each column (inf where there is none)."""
    ok = np.isfinite(per_entry)
    n = ok.sum(axis=0)
    total = np.where(ok, per_entry, 0.0).sum(axis=0)
    return np.where(n > 0, total / np.maximum(n, 1), np.inf)


def output_scores(xs, y, div, noise, target, tail) -> np.ndarray:
    """(C,) scores of the output ``y`` per channel: SURE (``div`` its dy/dx), or with
    ``target`` the squared error against it from row ``tail`` on."""
    if target is not None:
        return column_means((y - target)[tail:] ** 2)
    s2 = np.asarray(noise, dtype=np.float64) ** 2
    return column_means((y - xs) ** 2 - s2 + 2.0 * s2 * div)
