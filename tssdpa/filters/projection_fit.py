"""How :meth:`ProjectionFilter.fit` chooses its settings: the candidates and their scores.

Each setting left ``"auto"`` is searched over a fixed list (:data:`AUTO_CANDIDATES`); a list
given by the user is searched as given; a single value is kept. The kernel width ``sigma`` is
always searched: a grid scaled to the noise level plus ``inf``, the uniform kernel (with
``degree`` p a Savitzky–Golay filter of the window: the projection family contains the
classical smoothers, so the search can fall back on them where the data has no structure
the kernel could use). Every (sigma, degree) pair of one (window, embedding, decay) shares a
single distance computation (:func:`~tssdpa.signal.lagfilter.run_offline` with ``configs``).

Zero-phase filters also try a linear base (``base="auto"``): the zero-phase Butterworth
low-pass ``B`` chosen alone, then every projection candidate on its residual, the output being
``B(x) + P(x - B(x))``, and ``B`` alone (``window=0``) -- so the family contains the
Butterworth smoother too.

Zero-phase filters also try the non-local filter (``window="all"``,
:mod:`tssdpa.signal.nonlocal_filter`: keys are the nearest patterns of the whole series) with
the :data:`NONLOCAL_EMBEDDINGS` and degree 0; without a target not on a base's residual.

Scores: the error against ``target`` on a held-out tail, or, without a target, Stein's
unbiased risk estimate with the noise level of :func:`~tssdpa.estimators.white_noise.noise_level`
(its divergence from one random probe, or exactly, the own-sample weights, for the non-local
filter, whose choice of keys jumps where a probe would see only noise).

A zero-phase filter averages its best candidates instead of keeping one
(:mod:`tssdpa.filters.projection_mixture`).
"""

from __future__ import annotations

import math

import numpy as np

from tssdpa.checks import SIGMA_FLOOR, check_decay, check_int, check_sigma
from tssdpa.estimators.input_notes import HeldReadingsWarning, tell
from tssdpa.estimators.noise_tails import tail_weights
from tssdpa.estimators.parallel import parallel_map
from tssdpa.estimators.report import heavy_tails_report
from tssdpa.estimators.selection import (
    SURE_EPS,
    candidates,
    check_no_empty_list,
    heldout_mse,
    lattice_step,
    repeating_channels,
    resolution,
    search,
    sigma_grid,
    sure_mse,
    sure_probe,
)
from tssdpa.estimators.white_noise import check_noise_level, noise_levels_and_tails
from tssdpa.filters.projection_local import LOCAL_MARGIN
from tssdpa.filters.projection_mixture import mixture, stacked_mixture
from tssdpa.signal.lagfilter import check_degree, run_offline
from tssdpa.signal.lowpass import LOWPASS_CUTOFFS, LOWPASS_ORDERS, check_lowpass, zero_phase_lowpass
from tssdpa.signal.nonlocal_filter import run_nonlocal

__all__ = [
    "AUTO",
    "AUTO_CANDIDATES",
    "AUTO_DEFAULTS",
    "auto_default",
    "base_candidates",
    "check_fitted_window",
    "choose_settings",
    "default_sigma_grid",
    "fit_block",
    "fit_report",
]

AUTO = "auto"
NONLOCAL = "all"  # the window of the non-local filter: keys from the whole series
#: what ``"auto"`` searches, for causal (True) and zero-phase (False) filters. Causal
#: windows count the samples attended to, zero-phase ones the half-width (2 window - 1 taps):
#: both span about 3 to 127 taps. A centred window fits odd powers for free (they vanish by
#: symmetry under a uniform kernel), so the zero-phase degrees step by two and reach further.
AUTO_CANDIDATES = {
    "window": {True: (4, 8, 16, 32, 64, 128), False: (2, 4, 8, 16, 32, 64, NONLOCAL)},
    "embedding": {True: (1, 3, 7), False: (1, 3, 7)},
    "degree": {True: (0, 1, 2), False: (0, 2, 4)},
}
#: embeddings of the non-local filter (window "all") under ``embedding="auto"``: it compares
#: patterns across the whole series, so longer patterns tell the copies of a stretch apart
#: (Buades et al. use 7x7 patches in images, 49 samples); 1 would compare single values
NONLOCAL_EMBEDDINGS = (7, 15, 31, 63)
#: what ``"auto"`` means before :meth:`fit` (the settings of version 0.1)
AUTO_DEFAULTS = {"window": 32, "embedding": 1, "degree": 0, "base": None}


def auto_default(name: str, settings: dict):
    """What ``"auto"`` means for setting ``name`` before :meth:`fit`, given the ``settings``
    resolved so far (the non-local filter's embedding: 15, a pattern of moderate length)."""
    if name == "embedding" and settings.get("window") == NONLOCAL:
        return NONLOCAL_EMBEDDINGS[1]
    return AUTO_DEFAULTS[name]


def check_fitted_window(filt, window, name: str = "window_"):
    """A loaded ``window_``: None, an int >= 0 or ``"all"``; ``ValueError`` naming it else."""
    if window is None or window == NONLOCAL:
        return window
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"{name} must be None, an int >= 0 or 'all', got {window!r}")
    return window


def fit_block(x2: np.ndarray, n: int) -> slice:
    """The samples :meth:`ProjectionFilter.fit` scores on: the first ``n``, or where a channel
    is not known among them, ``n`` from the first row by which every channel was seen (the
    last ``n`` where fewer are left)."""
    if not np.isnan(x2[:n]).all(axis=0).any():
        return slice(0, n)
    start = max(int(np.argmax(~np.isnan(x2[:, c]))) for c in range(x2.shape[1]))
    start = min(start, len(x2) - n)
    return slice(start, start + n)


#: the kernel is never narrower than this share of the data's step (:func:`~tssdpa.estimators.
#: selection.resolution`): at half a step, patterns one step apart in one sample weigh e^-2 of
#: an exact match
RESOLUTION_SHARE = 0.5


def default_sigma_grid(
    noise: np.ndarray, embedding: int, n: int = 14, step: float = 0.0
) -> np.ndarray:
    """Candidate kernel widths scaled to the data: noise * sqrt(m C) * 2**(-2 .. 4.5), with
    ``noise`` the (C,) per-channel noise levels; where ``RESOLUTION_SHARE`` times ``step``
    (the data's step of quantisation) is above the smallest, ``n`` widths from it to the
    larger of the largest and twice it.

    Why the floor: quantised data repeat their values exactly. A kernel much narrower than a
    step then weighs only a sample's exact repeats, so the output is the input, while SURE's
    divergence, taken by a perturbation that splits the repeats, is small: SURE scores that
    identity as a near-perfect filter, and the fit returns the data as they came
    (``docs/filters.md``, "Quantised data").
    """
    scale = float(np.median(noise))
    grid = sigma_grid(scale * math.sqrt(embedding * len(noise)), -2.0, 4.5, n)
    low = max(RESOLUTION_SHARE * step, SIGMA_FLOOR)  # data near 1e-150: no width filter refuses
    if low <= grid[0]:
        return grid
    return np.geomspace(low, max(grid[-1], 2.0 * low), n)


def _candidates_of(name: str, value, causal: bool, n: int) -> list:
    if not (isinstance(value, str) and value == AUTO):
        return candidates(value)
    cands = AUTO_CANDIDATES[name][causal]
    if name == "window":  # a window longer than a quarter of the data cannot be judged
        cands = [w for w in cands if w == NONLOCAL or w <= max(cands[0], n // 4)]
    if name == "embedding":  # nor a pattern that long
        cands = [e for e in cands if e <= max(cands[0], n // 4)]
    return list(cands)


def check_candidate_lists(filt) -> None:
    """The settings of ``filt`` given as candidate lists: none empty, every degree an int in
    0 .. MAX_DEGREE, every sigma > 0 (inf: the uniform kernel), every decay in (0, 1] or None
    (there is no ``"auto"`` decay), every window None, an int >= 0 or "all", every embedding
    an int; and its ``noise_level``. Random features need an infinite memory: a
    decay (every candidate) or ``tau``, refused here rather than by the fitted filter."""
    check_no_empty_list(filt, ("window", "embedding", "degree", "decay", "sigma"))
    if not (isinstance(filt.embedding, str) and filt.embedding == AUTO):
        for m in candidates(filt.embedding):  # before the sigma grid takes its square root
            check_int(m, "embedding")
    if not (isinstance(filt.window, str) and filt.window == AUTO):
        windows = candidates(filt.window)
        for w in windows:  # any other string ("16" in an edited file) is refused here too
            if w is not None and not (isinstance(w, str) and w == NONLOCAL):
                check_int(w, "window", minimum=0)
        if 0 in windows and (filt.causal or filt.tau is not None or filt.base is None):
            raise ValueError("window=0 is the zero-phase Butterworth base alone: it needs "
                             "causal=False, no tau and base 'auto' or 'butterworth'")  # fmt: skip
    decays = candidates(filt.decay)
    for d in decays:
        if d is not None:
            check_decay(d)
    if filt.recurrent == "features" and filt.tau is None and None in decays:
        raise ValueError("recurrent='features' needs decay or tau (an infinite-memory filter); "
                         "a list of decays must not hold None")  # fmt: skip
    if not (isinstance(filt.degree, str) and filt.degree == AUTO):
        for d in candidates(filt.degree):
            check_degree(d)
    for s in candidates(filt.sigma):
        check_sigma(s, allow_inf=True)
    check_noise_level(filt.noise_level)


def base_candidates(filt) -> list:
    """The linear bases :meth:`fit` tries: None, and with ``base`` "auto" or "butterworth" the
    zero-phase low-pass (zero-phase filters on uniformly sampled data only)."""
    if filt.base is None:
        return [None]
    if filt.base == AUTO and (filt.causal or filt.tau is not None or filt.recurrent):
        return [None]
    return ([None] if filt.base == AUTO else []) + ["butterworth"]


#: under ``window="auto"`` a non-local embedding is tried only where at least this share of
#: the samples has a complete (finite) pattern: with missing samples a long pattern is rarely
#: complete, and a score over the few that are would not speak for the series
MIN_COMPLETE = 0.5


def complete_share(finite: np.ndarray, embedding: int) -> float:
    """The share of the samples whose centred pattern of ``embedding`` samples lies inside
    the series and is finite; ``finite`` (T,) marks the rows with every channel finite."""
    if embedding > len(finite):
        return 0.0
    runs = np.convolve(finite.astype(np.int64), np.ones(embedding, dtype=np.int64), "valid")
    return float((runs == embedding).sum()) / len(finite)


def structures(filt, lists: dict, n: int, target, finite=None) -> list[tuple]:
    """The (window, embedding, decay) triples to score: the product of the candidate lists,
    less window 0 (the base alone, scored on its own).

    The non-local window (``"all"``) takes the :data:`NONLOCAL_EMBEDDINGS` under
    ``embedding="auto"`` (those no longer than a quarter of the ``n`` samples, 7 at least),
    else the embeddings >= 2 given; no decay, degree 0. Under ``window="auto"`` it is left
    out where it cannot apply (``tau``, random features, a degree or decay fixed to something
    else, a base without a target), and so is every embedding whose patterns are complete in
    less than :data:`MIN_COMPLETE` of the samples (``finite``: the (n,) rows without a
    missing value; None: all); asked for by name there, the fit is refused naming why.
    """
    out = []
    for w in lists["window"]:
        if w == 0:
            continue
        if w != NONLOCAL:
            out += [(w, m, dec) for m in lists["embedding"] for dec in lists["decay"]]
            continue
        unusable = {
            "tau": filt.tau is not None,
            "recurrent": filt.recurrent is not None,
            "degree": 0 not in lists["degree"],
            "decay": None not in lists["decay"],
            "base": target is None and filt.base == "butterworth",
        }
        auto_window = isinstance(filt.window, str) and filt.window == AUTO
        if auto_window:
            if any(unusable.values()):
                continue
        elif any(unusable.values()):
            why = [k for k, v in unusable.items() if v][0]
            raise ValueError(f"window='all' (the non-local filter) cannot be fitted with this "
                             f"{why}: it needs no tau, no recurrent, degree 0, no decay, and "
                             "a target on a base's residual")  # fmt: skip
        if isinstance(filt.embedding, str) and filt.embedding == AUTO:
            ms = [m for m in NONLOCAL_EMBEDDINGS if m <= max(NONLOCAL_EMBEDDINGS[0], n // 4)]
        else:
            ms = [m for m in lists["embedding"] if m >= 2]
            if not ms and not auto_window:
                raise ValueError("window='all' (the non-local filter) needs an embedding >= 2, "
                                 f"got {lists['embedding']}")  # fmt: skip
        if auto_window and finite is not None:
            ms = [m for m in ms if complete_share(finite, m) >= MIN_COMPLETE]
        out += [(w, m, None) for m in ms]
    return out


def fit_report(filt, score: str, local_scores=None) -> str:
    """What ``fit(verbose=True)`` prints: the candidates, the channels whose noise has heavy
    tails (``heavy_tails_``), the choice, the local adaptation (``local_scores``: a
    :class:`~.projection_local.LocalScores` from ``fit_local``; where it is off, what its best
    width would have gained and what the rule asked), the five best."""
    lines = [f"ProjectionFilter.fit: {len(filt.cv_results_)} candidates scored by {score}"]
    lines += heavy_tails_report(filt.heavy_tails_)
    lines.append("chose " + ", ".join(f"{k}={v}" for k, v in filt.best_params_.items()))
    cv = filt.cv_results_  # SURE's best without weight: the fit switched (projection_alternative)
    if score == "SURE" and "weight" in cv and cv["weight"][cv["mse"].idxmin()] == 0:
        lines.append("the non-local candidates alone: adapted in time they scored lower than "
                     "the candidates of lowest SURE (below, weight 0) adapted")  # fmt: skip
    if filt.mixture_:
        lines.append(f"averaging the {len(filt.mixture_)} candidates of largest weight")
    loc, sc = filt.local_, local_scores
    if sc is not None and loc:
        lines.append(f"local adaptation over {loc['window']} samples in {sum(loc['channels'])} "
                     f"of {len(loc['channels'])} channel(s): {score} {sc.kept:.4g} with it, "
                     f"{sc.before:.4g} without")  # fmt: skip
    elif sc is not None:
        lines.append(f"local adaptation off: {score} {sc.before:.4g} without; over {sc.width} "
                     f"samples {sc.after:.4g}, a drop of {sc.before - sc.after:.4g} where more "
                     f"than {sc.needed:.4g} was needed (the larger of {LOCAL_MARGIN:.1%} of the "
                     "noise variance and the gain's standard error)")  # fmt: skip
    lines.append(filt.cv_results_.sort_values("mse").head(5).to_string(index=False))
    return "\n".join(lines)


def _grid_rows(entry, scores: dict, degrees_of) -> list[dict]:
    """The ``cv_results`` rows of one grid entry: a row as it is (the base alone), or the
    scored (degree, sigma) pairs of a group ``(base, base_params, window, embedding, decay,
    sigmas)``, in the order of the loops that built it."""
    if isinstance(entry, dict):
        return [entry]
    base, base_params, w, m, dec, sigmas = entry
    return [{"base": base, "base_params": base_params, "window": w, "embedding": m,
             "decay": dec, "degree": d, "sigma": s}
            for d in degrees_of(w) for s in sigmas
            if (base, w, m, dec, d, s) in scores]  # fmt: skip


def fit_noise_level(filt, xs) -> tuple[np.ndarray, np.ndarray]:
    """``(noise, heavy)``: (C,) the noise level of each channel of ``xs`` that ``filt`` scores
    and scales by -- its ``noise_level`` where given, else the estimate
    (:func:`~tssdpa.estimators.white_noise.noise_level`, ``"spectral"`` as there) -- and (C,)
    the channels whose estimated level was raised for the noise's heavy tails (none where the
    level is given)."""
    noise = check_noise_level(filt.noise_level, xs.shape[1])
    if noise is None or isinstance(noise, str):
        return noise_levels_and_tails(xs, spectral=noise is not None)
    return noise, np.zeros(xs.shape[1], dtype=bool)


def warn_held_readings(xs, target) -> None:
    """Warn, at the caller of ``fit``, of held readings in the fit block ``xs`` of a
    self-supervised fit (:class:`~tssdpa.estimators.input_notes.HeldReadingsWarning`): their
    shared noise is not the white noise SURE assumes."""
    if target is None:
        repeats = repeating_channels(xs).items()
        held = {c: share for c, (share, plateau) in repeats if not plateau}
        if held:
            tell(HeldReadingsWarning(held))


def check_target_units(xs, target) -> None:
    """``ValueError`` naming the channel where ``target`` is plainly not a clean copy of ``xs``
    in its units: ``xs`` regressed on it has a slope of about 1 (noise uncorrelated with the
    signal), here one out of [1/4, 4] by more than three standard errors -- another unit
    (mV for V), a scale or a flipped sign. The filter's output is a weighted mean of x, so
    the fit scored every candidate against a signal it cannot give and chose the wrong one."""
    for c in range(xs.shape[1]):
        ok = np.isfinite(xs[:, c]) & np.isfinite(target[:, c])
        t, x = target[ok, c] - target[ok, c].mean(), xs[ok, c] - xs[ok, c].mean()
        n, var = int(ok.sum()), float(t @ t)
        if n < 3 or not var > 0:  # a constant target: no scale to compare
            continue
        slope = float(x @ t) / var
        se = math.sqrt(max(float(np.sum((x - slope * t) ** 2)), 0.0) / (n - 2) / var)
        if slope + 3 * se < 0.25 or slope - 3 * se > 4:
            which = f"target channel {c}" if xs.shape[1] > 1 else "target"  # (one: a fit
            raise ValueError(  # of one channel apart says which, "x channel c: ...")
                f"{which} is not in the units of x: x changes by {slope:.3g} per "
                "unit of the target where a clean copy of x gives about 1; rescale the "
                "target (another unit, scale or sign?)"
            )


def choose_settings(filt, xs, times, target, tail, noise, heavy=None):
    """Score every candidate setting of ``filt`` (a :class:`ProjectionFilter`) on ``xs``, whose
    channels have the noise levels ``noise`` (C,).

    Returns ``(best_params, cv_results, noise, components)`` -- the first two as
    :func:`~tssdpa.estimators.selection.search`, ``noise`` the per-channel noise level SURE
    used (None with a target): ``target`` None scores by SURE over all of ``xs``, else by the
    error against ``target`` from row ``tail`` on. ``components``: for a zero-phase filter
    with ``mix`` the mixture of its best candidates
    (:mod:`~tssdpa.filters.projection_mixture`; weights also in ``cv_results["weight"]``),
    else None. In the channels ``heavy`` (C,) marks, whose noise has heavy tails, SURE weighs
    each sample's divergence by its own squared noise (:func:`~tssdpa.estimators.noise_tails.
    tail_weights`).

    With a Butterworth base the low-pass is chosen first, alone (the cutoff and order with the
    lowest score, unless ``base_params`` fixes them); then every projection candidate is
    scored as ``B(x) + P(x - B(x))``.
    """
    if target is not None:  # on the rows it scores (the target before judges nothing)
        check_target_units(xs[tail:], target[tail:])
    n = xs.shape[0]
    lists = {
        name: _candidates_of(name, getattr(filt, name), filt.causal, n)
        for name in ("window", "embedding", "degree", "decay")
    }
    features = filt.recurrent == "features"  # random features: a Gaussian kernel, degree 0
    if features and isinstance(filt.degree, str):
        lists["degree"] = [0]
    # the kernel stays wider than a quantised step: patterns repeat exactly only where every
    # channel is on a grid (a continuous channel breaks the ties), and a score against a
    # target judges the identity it would give fairly
    # (or a lattice's: a calibrated axis's values, a hair off a grid's points, lattice_step)
    step = 0.0
    if target is None:
        step = float(np.min(np.maximum(resolution(xs), lattice_step(xs, noise))))

    def degrees_of(window):  # the non-local keys have no time offset to fit a polynomial in
        return [0] if window == NONLOCAL else lists["degree"]

    xp, tail_w = None, None
    if target is None and heavy is not None and np.any(heavy):
        tail_w = tail_weights(xs, heavy)
    if target is None:  # the weighted divergence from a probe scaled by sqrt(w): sure_probe
        probe, eps = sure_probe(xs.shape, filt.random_state, tail_w), SURE_EPS
        xp = xs + eps * noise * probe

    def scored(ys, ys_p):
        if target is None:  # the probe carries the tail weights (above)
            return [sure_mse(xs, y, yp, noise, probe, eps) for y, yp in zip(ys, ys_p)]
        return [heldout_mse(y, target, tail) for y in ys]

    def lowpass_pair(params):
        if xp is None:
            return zero_phase_lowpass(xs, **params), None
        # the series and its probe in one call: the channels are filtered each alone
        both = zero_phase_lowpass(np.concatenate([xs, xp], axis=1), **params)
        return both[:, : xs.shape[1]], both[:, xs.shape[1] :]

    scores: dict[tuple, float] = {}
    seen_uniform = set()  # sigma = inf ignores the embedding: score it once per window

    def group_configs(base, window, decay, sigmas):
        """The (sigma, degree) pairs to score for one (window, embedding, decay) -- in the
        order of the loop below, as the uniform kernel is scored at a window's first."""
        configs = [(s, d) for s in sigmas for d in degrees_of(window)]
        if (base, window, decay) in seen_uniform:
            configs = [(s, d) for s, d in configs if math.isfinite(s)]
        if window != NONLOCAL:  # the non-local keys depend on the embedding, even uniform
            seen_uniform.add((base, window, decay))
        return configs

    def score_group(base, b, bp, window, embedding, decay, sigmas, configs) -> dict:
        """The scores of the ``configs`` of one (window, embedding, decay) on ``x - b``."""
        spec = filt._spec(window=window, embedding=embedding, decay=decay, sigma=1.0, degree=0)
        if window == NONLOCAL and target is None:
            # its exact divergence, the own samples' weights: a probe would see the jumps of
            # the choice of the k nearest and give noise (see tssdpa.signal.nonlocal_filter)
            ys, own = run_nonlocal(xs, embedding, spec.n_neighbors, sigmas, spec.exclude_self)
            return {(base, window, embedding, decay, 0, s):
                    sure_mse(xs, y, None, noise, None, None, dydx=w[:, None], weights=tail_w)
                    for s, y, w in zip(sigmas, ys, own)}  # fmt: skip
        # scores need not round as a stream does: BLAS moments (see run_causal's rowwise)
        ys = [b + y for y in run_offline(xs - b, spec, times, configs=configs, rowwise=False)]
        ys_p = None
        if xp is not None:
            ys_p = [bp + y for y in run_offline(xp - bp, spec, times, configs, rowwise=False)]
        return {(base, window, embedding, decay, d, s): v
                for (s, d), v in zip(configs, scored(ys, ys_p))}  # fmt: skip

    # groups: the scoring tasks; grid: per entry a row (the base alone) or a group's rows,
    # which are read off the scores once every task has run
    grid, groups = [], []
    for base in base_candidates(filt):
        base_params, b, bp = None, 0.0, 0.0
        if base is not None:
            if filt.base_params is not None:
                base_params = check_lowpass(filt.base_params)
            else:
                lows = [{"cutoff": c, "order": o} for c in LOWPASS_CUTOFFS for o in LOWPASS_ORDERS]
                pairs = [lowpass_pair(q) for q in lows]
                vals = scored([p[0] for p in pairs], [p[1] for p in pairs])
                base_params = lows[int(np.argmin(vals))]
            b, bp = lowpass_pair(base_params)
            if (isinstance(filt.window, str) and filt.window == AUTO) or 0 in lists["window"]:
                # window 0 with a base: the base alone (no projection of its residual)
                scores[(base, 0, 1, None, 0, math.inf)] = scored([b], [bp])[0]
                grid.append({"base": base, "base_params": base_params, "window": 0,
                             "embedding": 1, "decay": None, "degree": 0,
                             "sigma": math.inf})  # fmt: skip
        for w, m, dec in structures(filt, lists, n, target, np.isfinite(xs).all(axis=1)):
            if w == NONLOCAL and base is not None and target is None:
                continue  # the base mixes x_t into every pattern: no exact divergence
            if isinstance(filt.sigma, (list, tuple, np.ndarray)):
                sigmas = [float(s) for s in filt.sigma]
            else:
                sigmas = [float(s) for s in default_sigma_grid(noise, int(m), step=step)]
                sigmas += [] if features else [math.inf]
            configs = group_configs(base, w, dec, sigmas)
            groups.append((base, b, bp, w, m, dec, sigmas, configs))
            grid.append((base, base_params, w, m, dec, sigmas))
    # the groups are independent: numpy releases the GIL in their distance and solve work
    for group_scores in parallel_map(lambda g: score_group(*g), groups):
        scores.update(group_scores)  # in the loop's order, from this thread
    grid = [row for entry in grid for row in _grid_rows(entry, scores, degrees_of)]

    def score(c):
        keys = ("base", "window", "embedding", "decay", "degree", "sigma")
        return scores[tuple(c[k] for k in keys)]

    best, cv_results = search(grid, score)
    components = None
    if not filt.causal and filt.recurrent is None and filt.mix:  # zero-phase: no state
        if target is None:
            n_entries = int(np.isfinite(xs).sum())
            components, weights = mixture(
                grid, cv_results["mse"], n_entries, noise, float(filt.mix_temperature)
            )
        else:
            components, weights = stacked_mixture(
                filt, grid, cv_results["mse"], xs, times, target, tail
            )
        cv_results["weight"] = weights
    return best, cv_results, noise if target is None else None, components
