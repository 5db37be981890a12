"""What the forecasts of a fitted :class:`~tssdpa.filters.ProjectionForecaster` derive from its
fitted series alone, computed at the first call and kept for the next.

Every ``forecast`` / ``forecast_path`` / ``predict`` call used to rebuild them: the
standardised library, its embeddings and global ridge fits per structure (the moments of
every library row), the k-d tree over its keys, the glitch reach of the fitted series. On a
short buffer -- a control loop forecasting its newest samples every tick -- those were most
of the call (``experiments/bench_forecast_latency.py``). They depend on the fit only, so they
are kept on the estimator, keyed by the identity of what they were built from (a refit or a
loaded file builds them anew), and never saved, pickled, copied or cloned. Outputs are those
of a fresh build, bit for bit (``tests/filters/test_forecaster_cache.py``). Threads that read
one fitted forecaster may build an item twice at the first call; each builds the same value.

A long linear pattern's embeddings are large (336 lags of 7 channels over 17,000 hours: 320
MB): for the global linear models only their coefficients are kept, and the items kept hold at
most :data:`MAX_BYTES` (64 MiB) together; the series given last is held until the next call
(its glitch candidates, which every anchor horizon of a call reads).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tssdpa.estimators.glitches import glitch_reach
from tssdpa.estimators.selection import candidates
from tssdpa.filters.analogue_data import AnalogueData, default_delays
from tssdpa.filters.glitch_keys import glitch_candidates
from tssdpa.signal.embedding import standardise
from tssdpa.signal.missing import newest_known
from tssdpa.signal.neighbours import library_index

__all__ = ["FittedViews", "fitted_reach", "fitted_views", "hard_bounds", "library_data",
           "library_rows", "library_search", "series_candidates", "within_bounds"]  # fmt: skip

_ATTR = "_fitted_views"  # on the estimator: (what they were built from, FittedViews)
#: most memory the kept items hold: each anchor group keeps its own library embeddings and
#: tree (tens of MB each for several columns of a long hourly log); the items past it are
#: rebuilt at every call
MAX_BYTES = 1 << 26
#: a series on its least (greatest) value for at least this share of its known samples, and
#: this many, is bounded there (:func:`hard_bounds`)
BOUND_SHARE, BOUND_MIN = 0.05, 5


@dataclass
class FittedViews:
    """The fitted series as forecasts read it, and the items built from it so far."""

    library: np.ndarray  # (N, C) standardised: the rows whose patterns are keys
    fitted: np.ndarray  # (T, C) the whole fitted series standardised (ranges, glitch reach)
    known: np.ndarray  # (T', C) train_ up to its last complete row: what a series repeats
    bounds: tuple  # (low, high), each (C,): no forecast crosses them (hard_bounds)
    items: dict = field(default_factory=dict)
    nbytes: int = 0  # what the items hold (_nbytes)


def fitted_views(est) -> FittedViews:
    """The :class:`FittedViews` of the fitted ``est``, built at the first call after a fit."""
    # (library_size and glitches are the fit's: a forecast after set_params changed one is
    # refused until a refit)
    source = (est.train_, est.mean_, est.scale_, est.structures_)
    got = est.__dict__.get(_ATTR)
    if got is not None and all(a is b for a, b in zip(got[0], source)):
        return got[1]
    fitted = standardise(est.train_, est.mean_, est.scale_)
    known = newest_known(est.train_, len(est.train_))
    views = FittedViews(library_rows(est, fitted), fitted, known, hard_bounds(est.train_))
    if est.glitches is None:  # every sample is data: none is a glitch candidate
        views.items[("reach",)] = np.zeros(fitted.shape[1])
    est.__dict__[_ATTR] = (source, views)
    return views


def hard_bounds(train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` per channel of the (T, C) series ``train`` in its own units: its least
    (greatest) value where the series piles up there -- held by at least BOUND_SHARE of its
    known samples and BOUND_MIN of them, and by more than the next value in (either end of a
    two-valued series: on / off) -- else -inf (inf). A pile marks a bound the series cannot
    cross -- counts at 0, a reading at its sensor's end stop -- where a fitted line or plane
    forecasts past it (a linear model of weekly counts, half of them 0, forecast many weeks
    below 0). The next value's count tells a pile from the tail of a coarsely quantised
    reading (whole degrees), whose least value a colder day passes. Clipped to a bound the
    truth keeps to, a forecast never moves away from it."""
    low, high = np.full(train.shape[1], -np.inf), np.full(train.shape[1], np.inf)
    v = np.ascontiguousarray(np.asarray(train, dtype=float).T)  # (C, T): a channel a row
    known = np.isfinite(v)
    n = np.count_nonzero(known, axis=1)
    need = np.maximum(BOUND_SHARE * n, BOUND_MIN)
    # counts of the end value and the next one in, O(T) a channel (not sorted): the low end
    # of the series, then of its negation (the high end)
    for sign, out in ((1.0, low), (-1.0, high)):
        x = np.where(known, sign * v, np.inf)
        end = x.min(axis=1, initial=np.inf)
        at_end = x == end[:, None]
        n_end = np.count_nonzero(at_end, axis=1)
        x[at_end] = np.inf
        nxt = x.min(axis=1, initial=np.inf)
        n_next = np.where(np.isfinite(nxt), np.count_nonzero(x == nxt[:, None], axis=1), 0)
        # two values (on / off) have no tail between them: each end is a pile of its own
        ends = n_end + n_next == n
        bound = (n > 0) & (n_end >= need) & (ends | (n_end > n_next))
        out[bound] = sign * end[bound]
    return low, high


def within_bounds(out: np.ndarray, y: np.ndarray, bounds: tuple) -> np.ndarray:
    """``out`` (T, H, C), the forecasts from each origin of the (T, C) series ``y`` in its
    units, clipped to the :func:`hard_bounds` ``bounds`` -- but for those ``y[:t+1]`` has
    crossed: no bound, then, from that origin on (a level that sat on its greatest value, 150,
    when fitted had every forecast clipped to 150 while the series was at 180)."""
    low, high = (np.asarray(b, dtype=float) for b in bounds)
    if not (np.isfinite(low).any() or np.isfinite(high).any()):
        return out
    # crossed beyond rounding: the pile's value stored in float32 or written to a CSV and read
    # back can lie a few 1e-8 of it past the bound (150.1 as float32: 150.1000061); an
    # infinite bound stays so (-inf - inf, inf + inf)
    with np.errstate(invalid="ignore"):  # NaN: no sample yet, nothing crossed
        low = np.where(np.fmin.accumulate(y, axis=0) < low - 1e-6 * abs(low), -np.inf, low)
        high = np.where(np.fmax.accumulate(y, axis=0) > high + 1e-6 * abs(high), np.inf, high)
    return np.clip(out, low[:, None, :], high[:, None, :])


def library_rows(est, z_train) -> np.ndarray:
    """The library of ``est`` (a :class:`~tssdpa.filters.ProjectionForecaster`) in
    ``z_train``, its fitted series standardised: the newest ``library_size`` patterns (default
    all) up to its last complete row -- a missing tail holds none, and a holdout there scored
    nothing."""
    if est.library_size is None:
        return newest_known(z_train, len(z_train))
    # patterns need (E-1)τ rows before them and h after: the span of the fit's choices (a
    # contender must not move their forecasts), else of every delay the fit may try
    if est.__dict__.get("structures_") is not None:  # fitted (fit clears it first)
        span = max((s.embedding - 1) * s.delay for s in est.structures_.values())
    else:
        tau = default_delays(z_train, est.max_embedding) if est.delay is None else est.delay
        given = [E for E in candidates(est.embedding) if E is not None]  # may be longer
        span = (max([est.max_embedding, *given]) - 1) * max(candidates(tau))
    return newest_known(z_train, est.library_size + span + est.horizon)


def drop_views(state: dict) -> dict:
    """``state`` (an estimator's ``__dict__``) without the views: for pickling and copies."""
    return {k: v for k, v in state.items() if k != _ATTR}


def _nbytes(item) -> int:
    """About the memory ``item`` holds: its arrays (a k-d tree counted as its keys again)."""
    if isinstance(item, AnalogueData):
        return sum(a.nbytes for a in (item.keys, item.futures) if a is not None)
    if isinstance(item, tuple):  # library_search's (keys, (tree, rows)): the keys are the
        return item[0].nbytes + item[1][1].nbytes  # data item's; the tree holds a copy
    return getattr(item, "nbytes", 0)


def _kept(views, key, make):
    """``views.items[key]``, made at the first call and kept while the kept items hold less
    than :data:`MAX_BYTES` (beyond, made at every call: the cost before)."""
    if views is None:  # a caller without a fitted estimator (a test's library)
        return make()
    got = views.items.get(key)
    if got is None:
        got = make()
        size = _nbytes(got)
        if views.nbytes + size <= MAX_BYTES:
            views.items[key], views.nbytes = got, views.nbytes + size
    return got


def library_data(views, train, s, horizons, ridge) -> AnalogueData:
    """``AnalogueData(train, s.embedding, s.delay, horizons, [ridge])`` of the library, kept
    in ``views`` (a linear model's without its embeddings)."""

    def make():
        lib = AnalogueData(train, s.embedding, s.delay, horizons, [ridge])
        if s.model in ("linear", "recursive_linear"):
            lib.keep_coefficients_only()
        return lib

    return _kept(views, ("data", s.embedding, s.delay, tuple(horizons), ridge, s.model), make)


def library_search(views, lib: AnalogueData, s, horizons):
    """``(keys, index)``: the library's keys and the
    :func:`~tssdpa.signal.neighbours.library_index` of those whose pattern and future are
    complete, kept in ``views`` (a search given the index reads the keys' count alone)."""

    def make():
        return lib.keys, library_index(np.where(lib.usable[:, None], lib.keys, np.nan))

    return _kept(views, ("search", s.embedding, s.delay, tuple(horizons)), make)


def fitted_reach(views, fitted) -> np.ndarray:
    """:func:`~tssdpa.estimators.glitches.glitch_reach` of the ``fitted`` series, kept (0:
    nothing is a glitch candidate, for ``glitches=None``)."""
    return _kept(views, ("reach",), lambda: glitch_reach(fitted))


def series_candidates(views, y, reach) -> np.ndarray:
    """:func:`~tssdpa.filters.glitch_keys.glitch_candidates` of the series ``y`` being
    forecast: every anchor horizon of one call reads the same, so the last is kept (with
    ``y`` itself: another series, or another thread's, finds it is not its own)."""
    got = views.items.get("candidates")
    if got is not None and got[0] is y and got[1] is reach:
        return got[2]
    found = glitch_candidates(y, reach)
    views.items["candidates"] = (y, reach, found)
    return found
