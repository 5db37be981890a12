"""Mixtures of projection-filter settings: a zero-phase filter averages its best candidates.

Picking the single best-scoring candidate throws information away: several settings usually
score within the sampling noise of the score, and which of them comes first is partly
chance. A zero-phase :class:`~tssdpa.filters.ProjectionFilter` (which keeps no streaming
state, so several settings cost nothing but compute) therefore outputs a convex combination
``y = sum_c w_c y_c`` of its best candidates:

* **without a target** (:func:`mixture`): the exponentially weighted aggregate of Leung &
  Barron (2006), ``w_c ∝ exp(-N (SURE_c - SURE_min) / (T s^2))`` over the N scored entries,
  noise level s and temperature T. Its risk is at most the best candidate's plus
  ``T s^2 log(K) / N`` for K candidates (from T = 4 for projection estimators; Dalalyan &
  Salmon 2012 for affine ones), and usually below it.
* **with a target** (:func:`stacked_mixture`): the convex weights of the best candidates that
  minimise the squared error against the target on the scored samples -- stacking (Breiman
  1996). The candidates train nothing on the target, so their outputs there are honest
  out-of-sample predictions, and the weights are K numbers fitted on thousands of samples.

Only the best-scoring candidate of each *kind* -- base (and its parameters), window,
embedding and decay; the kernel width and the local polynomial's degree vary within a kind --
enters the weights (:func:`best_of_each_kind`). A kind's candidates are near-duplicates of
one another, and with all of them in, the :data:`MAX_MIXTURE` places went to the width ladder
of the best kind, so that the "mixture" was one filter; one candidate per kind averages
filters that differ, which is what hedges where SURE cannot tell them apart (its differences
between kinds are often within its own noise). It lowered the self-supervised error of the
synthetic development cells by 1.2% in geometric mean and left the held-out real channels
about where they were (docs/filters.md, "Averaging the best candidates").

At most :data:`MAX_MIXTURE` candidates are kept, those with at least :data:`MIN_WEIGHT` of the
largest weight; :func:`mixture_output` filters with them, components with the same base,
window, embedding and decay sharing one distance computation.
"""

from __future__ import annotations

import math

import numpy as np
import scipy  # submodules (scipy.signal etc.) load where first used: imports stay light

from tssdpa.checks import check_choice
from tssdpa.signal.lagfilter import run_nonlocal_offline, run_offline
from tssdpa.signal.lowpass import check_lowpass, zero_phase_lowpass

__all__ = [
    "MAX_MIXTURE",
    "MIN_WEIGHT",
    "best_of_each_kind",
    "check_mixture",
    "component_outputs",
    "mixture",
    "mixture_output",
    "none_for_nan",
    "settings_of",
    "stacked_mixture",
    "zero_phase_fit_checked",
]

#: a mixture keeps at most this many candidates, those with at least MIN_WEIGHT of the largest
MAX_MIXTURE, MIN_WEIGHT = 16, 1e-3
_COMPONENT_KEYS = {"base", "base_params", "window", "embedding", "decay", "degree", "sigma"}


def _components(grid: list[dict], weights: np.ndarray, order) -> tuple[list | None, np.ndarray]:
    """Keep the candidates ``order`` (best first) above MIN_WEIGHT of the largest weight,
    renormalised: ``(components or None when one is left, (len(grid),) weights)``."""
    order = [int(i) for i in order][:MAX_MIXTURE]
    top = max((weights[i] for i in order), default=0.0)
    keep = [i for i in order if weights[i] > 0 and weights[i] >= MIN_WEIGHT * top]
    out = np.zeros(len(grid))
    out[keep] = weights[keep] / weights[keep].sum()
    if len(keep) < 2:
        return None, out
    keep.sort(key=lambda i: -out[i])
    return [{**grid[i], "weight": float(out[i])} for i in keep], out


def none_for_nan(v):
    """None for None or NaN (a ``cv_results_`` row holds NaN where the grid held None)."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def _kind(c: dict) -> tuple:
    bp = none_for_nan(c["base_params"])
    return (none_for_nan(c["base"]), None if bp is None else tuple(sorted(bp.items())), c["window"],
            c["embedding"], none_for_nan(c["decay"]))  # fmt: skip


def best_of_each_kind(grid: list[dict], scores) -> np.ndarray:
    """(len(grid),) bool: the candidate of lowest finite score of each kind (base and its
    parameters, window, embedding, decay; None and NaN alike), the first of equals; False
    for the others. ``grid`` may be ``cv_results_.to_dict("records")``."""
    scores = np.asarray(scores, dtype=np.float64)
    best: dict[tuple, int] = {}
    for i, (c, s) in enumerate(zip(grid, scores)):
        k = _kind(c)
        if np.isfinite(s) and (k not in best or s < scores[best[k]]):
            best[k] = i
    keep = np.zeros(len(grid), dtype=bool)
    keep[list(best.values())] = True
    return keep


def mixture(grid: list[dict], scores, n_entries: int, noise, temperature: float):
    """The exponentially weighted aggregate of the best candidate of each kind of ``grid``
    (:func:`best_of_each_kind`) scored by SURE.

    Weights ``exp(-n_entries (score - min score) / (temperature * mean(noise^2)))``, the
    largest ``MAX_MIXTURE`` kept (those above ``MIN_WEIGHT`` of the largest) and normalised.
    Returns ``(components, weights)``: the components as copies of their grid dicts with a
    ``"weight"`` entry, largest first, or ``None`` when one candidate holds all the weight;
    and the (len(grid),) normalised weights of every candidate (0 where left out).
    """
    scores = np.asarray(scores, dtype=np.float64)
    ok = best_of_each_kind(grid, scores)
    logw = np.full(scores.shape, -np.inf)
    scale = temperature * float(np.mean(np.square(noise)))
    logw[ok] = -n_entries * (scores[ok] - scores[ok].min()) / scale
    order = np.argsort(-logw, kind="stable")
    return _components(grid, np.exp(logw), order)


def stacked_mixture(filt, grid: list[dict], scores, x2, times, target, start: int):
    """The convex combination of the best ``MAX_MIXTURE`` candidates (by ``scores``) with the
    least squared error against ``target`` from row ``start`` on (NaN rows left out).

    Non-negative least squares with the sum-to-one constraint imposed by a heavily weighted
    extra row (Lawson & Hanson's weighting method), then renormalised. Returns
    ``(components, weights)`` as :func:`mixture`.
    """
    scores = np.asarray(scores, dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(scores))
    order = finite[np.argsort(scores[finite], kind="stable")][:MAX_MIXTURE]
    if len(order) < 2:
        return _components(grid, np.where(np.arange(len(grid)) == order[0], 1.0, 0.0), order)
    outs = component_outputs(filt, x2, times, [grid[i] for i in order])
    A = np.stack([y[start:].ravel() for y in outs], axis=1)  # (rows, K)
    t = np.asarray(target, dtype=np.float64)[start:].ravel()
    ok = np.isfinite(A).all(axis=1) & np.isfinite(t)
    A, t = A[ok], t[ok]
    big = 1e3 * max(float(np.sqrt(np.sum(t * t))), 1e-12)  # the constraint row's weight
    w, _ = scipy.optimize.nnls(np.vstack([A, big * np.ones(A.shape[1])]), np.append(t, big))
    weights = np.zeros(len(grid))
    weights[order] = w
    return _components(grid, weights, order)


#: fitted settings that only a zero-phase filter runs: the non-local filter, the low-pass base
_ZERO_PHASE_ONLY = {"window": "all", "base": "butterworth"}


def zero_phase_fit_checked(filt, settings: dict, override: dict) -> dict:
    """``filt._settings()``'s ``settings``, refused naming ``causal`` where ``filt`` is causal
    but takes from its fit a setting that only a zero-phase filter runs (fitted with
    ``causal=False``, then set ``causal=True``): it failed naming ``window='all'`` or
    ``base='butterworth'``, which the user never gave, and its stream ran without the base
    while ``filter`` refused it."""
    if not filt.causal:
        return settings
    odd = [f"{name}_={value!r}" for name, value in _ZERO_PHASE_ONLY.items()
           if name not in override and name + "_" in filt.__dict__
           and settings[name] == value]  # fmt: skip
    if odd:
        raise ValueError(f"{type(filt).__name__} was fitted with causal=False: its "
                         f"{' and '.join(odd)} runs zero-phase only, and causal is now True: "
                         "set causal=False back, or fit again")  # fmt: skip
    return settings


def base_in_force(filt, **override):
    """``(base, base_params)`` of ``filt`` in force (its settings with ``override``),
    checked: (None, None) or ("butterworth", dict)."""
    s = filt._settings(**override)
    base = check_choice(s["base"], "base", (None, "butterworth"))
    if base is None:
        return None, None
    if filt.causal or filt.tau is not None or filt.recurrent is not None:
        raise ValueError(
            "base='butterworth' needs a zero-phase filter (causal=False) on uniformly "
            "sampled data (no tau, no recurrent)"
        )
    if s["base_params"] is None:
        raise ValueError("base='butterworth' needs base_params={'cutoff': .., 'order': ..}"
                         " or fit()")  # fmt: skip
    return base, check_lowpass(s["base_params"])


def settings_of(component: dict) -> dict:
    """The settings of a mixture component: its dict less the weight."""
    return {k: v for k, v in component.items() if k != "weight"}


def check_setting(filt, setting: dict) -> None:
    """``setting`` (base, base_params, window, embedding, decay, degree, sigma) valid for
    ``filt``; ``TypeError`` / ``ValueError`` naming what is not."""
    base, _ = base_in_force(filt, **setting)
    if base is None and (setting["window"] == 0 or setting["base_params"] is not None):
        raise ValueError("window 0 and base_params need base='butterworth'")
    if setting["window"] != 0:
        filt._spec(**setting)


def check_fitted_setting(filt, sigma):
    """On load: the fitted setting (``window_``, ``embedding_``, ..., ``sigma_``) valid for
    ``filt``, as every mixture component is -- also where a mixture is what filters, since
    the fitted attributes report the chosen setting. Keyed on ``sigma_``, which every fitted
    filter has, so that it runs once, after every fitted attribute is set. Returns sigma."""
    try:
        check_setting(filt, filt._settings())
    except (TypeError, ValueError) as exc:
        raise ValueError(f"fitted setting: {exc}") from None
    return sigma


def check_mixture(filt, components, name: str = "mixture_"):
    """``components`` (a fitted ``mixture_``, perhaps read from a file) checked against
    ``filt``: None, or a list of 2 to ``MAX_MIXTURE`` dicts of exactly the settings and a
    ``weight``, each setting valid for ``filt`` (zero-phase), the weights finite, >= 0 and
    summing to 1. Returns it; raises ``ValueError`` naming the entry otherwise."""
    if components is None:
        return None
    if not isinstance(components, list) or not 2 <= len(components) <= MAX_MIXTURE:
        raise ValueError(f"{name} must be None or a list of 2 to {MAX_MIXTURE} components, "
                         f"got {type(components).__name__} {str(components)[:80]}")  # fmt: skip
    if filt.causal or filt.recurrent is not None:
        raise ValueError(f"{name}: only a zero-phase filter (causal=False) averages settings")
    keys, total = sorted(_COMPONENT_KEYS | {"weight"}), 0.0
    for i, c in enumerate(components):
        where = f"{name}[{i}]"
        if not isinstance(c, dict) or set(c) != set(keys):
            raise ValueError(f"{where} must be a dict of {keys}, got {str(c)[:200]}")
        w = c["weight"]
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 <= w < math.inf:
            raise ValueError(f"{where}['weight'] must be a finite number >= 0, got {w!r}")
        total += w
        try:
            check_setting(filt, settings_of(c))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
    if not abs(total - 1.0) <= 1e-9:
        raise ValueError(f"{name}: the weights must sum to 1, got {total!r}")
    return components


def component_outputs(filt, x2: np.ndarray, times, components: list[dict], self_weights=False):
    """The output of every setting in ``components`` (dicts of base, base_params, window,
    embedding, decay, degree, sigma and, optionally, weight; valid settings of ``filt``, see
    :func:`check_mixture`) on (T, C) ``x2``, in order. Components with the same base, window,
    embedding and decay share one distance computation, as in the search.

    With ``self_weights``, ``(outputs, weights)``: ``weights[i]`` the (T,) weight of each row's
    own sample in the projection of a non-local component (``window="all"``; its ``dy_t/dx_t``
    on a base's residual, :func:`~tssdpa.signal.lagfilter.run_nonlocal_offline`), None for the
    others."""
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(components):
        groups.setdefault(_kind(c), []).append(i)
    out: list = [None] * len(components)
    own: list = [None] * len(components)
    for (base, _, window, embedding, decay), members in groups.items():
        first = components[members[0]]
        b = 0.0 if base is None else zero_phase_lowpass(x2, **first["base_params"])
        if window == 0:  # the base alone
            for i in members:
                out[i] = b
            continue
        spec = filt._spec(window=window, embedding=embedding, decay=decay, sigma=1.0, degree=0)
        configs = [(components[i]["sigma"], components[i]["degree"]) for i in members]
        if spec.n_neighbors is not None:  # the non-local filter: its own weights come free
            ys, weights = run_nonlocal_offline(x2 - b, spec, configs)
            for i, w in zip(members, weights):
                own[i] = w
        else:
            ys = run_offline(x2 - b, spec, times, configs=configs)
        for i, y in zip(members, ys):
            out[i] = b + np.asarray(y, dtype=np.float64)
    return (out, own) if self_weights else out


def mixture_output(filt, x2: np.ndarray, times, components: list[dict]):
    """``(y, self_weights)``: ``y = sum_c weight_c y_c(x2)``, the output of the weighted
    settings ``components`` of ``filt``, and their own-sample weights as
    :func:`component_outputs` gives them. The caller checks ``components`` (a mixture by
    :func:`check_mixture`, or one setting of weight 1)."""
    outs, own = component_outputs(filt, x2, times, components, self_weights=True)
    return sum((c["weight"] * y for c, y in zip(components, outs)), np.zeros(x2.shape)), own
