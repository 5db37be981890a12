"""Spikes: impulsive noise, single samples far out of line, too frequent to be glitches.

A sensor with impulsive noise (a few in 100 samples hit by a pulse of many noise levels) or
heavy-tailed noise (Student-t) defeats a self-supervised fit: its noise level is a robust
(MAD) estimate that the spikes do not move, so SURE takes each spike for signal, and the fit
keeps them. On the fusion IMU at 10 dB the zero-phase fit was 1.5-1.8x behind a centred median
filter under Student-t noise and 2.6-3.1x under 2% outliers of 10x
(``experiments/local_target_noise_probe.py --self-supervised``). The glitch rule
(:mod:`~tssdpa.estimators.glitches`) lets through whatever recurs in more than 1 sample in
100, so as not to take a gait's heel strikes for glitches.

A sample is a spike where it is far from a robust **leave-one-out** local quadratic through
the ``2 SPIKE_HALF`` samples around it (Tukey's bisquare weights, as in Cleveland's robust
LOWESS, so spikes among those neighbours are weighed out): more than ``SPIKE_REACH`` times the
typical distance around it (1.4826 times the median one over ``2 SCALE_HALF + 1`` samples),
and more than ``SPIKE_CONTRAST`` times the neighbours' own misfit (the MAD scale of their
distances from the quadratic). Leaving the sample out of its own reference keeps a spike from
hiding in it; the quadratic follows smooth signals, where a running median clips every turn;
the contrast with the neighbours keeps what the quadratic cannot follow (a narrow pulse, a
rough process at high SNR), whose neighbours misfit too; a run of 3 or more far samples on one
side is a pulse 2-3 samples wide, not spikes (:func:`_in_a_pulse`: its flanks are far out too,
and the bisquare weighs them out of the quadratic, so the contrast alone let a train of such
pulses through as impulsive noise); the local typical distance keeps a recording's bursts of
motion.

A channel is treated so only where it has impulsive noise: more than ``MIN_SPIKE_SHARE`` of
its samples (``MIN_SPIKES`` at least) beyond ``IMPULSIVE_REACH`` typical distances, those far
samples are not a regular train of pulses of the signal (nearly all on one side at even
spacing, :func:`_a_pulse_train`: pulses too narrow or too dense for the run rule) nor spikes
that the samples before them foretell (:func:`_foretold`: a neuron's bursts), and it
does not hold its readings (exact repeats, :data:`~tssdpa.estimators.selection.REPEAT_SHARE`).
What that asks was set on the shared recordings as recorded (the two IMUs, the four ETT
tables: 43 channels): 9 hold their readings; the others have 0.2 to 4.5 such samples in 1,000,
and ETTh2 ``HULL`` (which repeats its value at 23% of its samples) 7.4; no channel is treated
(``experiments/spikes_probe.py --part recordings``). On the bench's eight series at 0, 10 and
20 dB the rule marks nothing under Gaussian noise; under 2% outliers of 10x it finds all or
nearly all of them where the signal is smooth at its sampling (the flows, the gyroscope; 78%
on the pulse train at 20 dB), and none where it is rough (the Hénon map, AR(2) at 20 dB, the
309 yearly sunspots) (``--part detect``).

Left alone: a channel that repeats its value exactly at ``REPEAT_SHARE`` of its samples or
more, held or on a coarse grid (its noise is not white per sample; 9 of the shared
recordings' 43 channels, ``--part recordings``), and a channel with no 5 finite samples in a
row (one read at every other row of a table), which gives no scale.

Not handled: Student-t noise (3 degrees of freedom) has 0 to 5.7 such samples in 1,000, as
many as the recordings, and no channel of it is treated; the fit under it stays behind a
median filter (``docs/results.md``, known gaps).
"""

from __future__ import annotations

import numpy as np
import scipy  # submodules (scipy.signal etc.) load where first used: imports stay light
from numpy.lib.stride_tricks import sliding_window_view

from tssdpa.estimators.selection import REPEAT_SHARE
from tssdpa.signal.spd import solve_spd

__all__ = [
    "IMPULSIVE_REACH",
    "MIN_SPIKES",
    "MIN_SPIKE_SHARE",
    "SCALE_HALF",
    "SPIKE_CONTRAST",
    "SPIKE_HALF",
    "SPIKE_REACH",
    "channel_spikes",
    "foretold_shares",
    "spike_channels",
    "spike_mask",
    "spike_reference",
]

SPIKE_HALF = 4  # the quadratic is fitted on the 4 samples either side
SPIKE_REACH = 4.0
IMPULSIVE_REACH = 6.0
SCALE_HALF = 25  # the typical distance is the median over 2 SCALE_HALF + 1 samples
SPIKE_CONTRAST = 4.0
MIN_SPIKE_SHARE = 0.008
MIN_SPIKES = 8
#: far samples on one side whose gaps are within this fraction of their period of a whole
#: number of periods (two thirds of the gaps at least) are a train of pulses: impulsive hits at
#: random times space out geometrically, and about a fifth of their gaps are so
TRAIN_REGULARITY = 0.1
#: ... where this share of them at least is on the majority side (impulsive noise: half)
TRAIN_SIDE_SHARE = 0.9
#: :func:`_foretold`: neighbours asked per spike's first sample, the share of them followed by
#: one that marks the spikes as foretold, and how many times the first samples' own share
FORETOLD_K = 8
FORETOLD_SHARE = 0.15
FORETOLD_RATIO = 5.0
_BISQUARE = 4.685  # Tukey's constant: 95% efficiency under Gaussian noise
_ITERATIONS = 3
_ROWS = 1 << 15  # rows per block: the windows take 8x their memory
# the cubic interpolation from the samples at +-1, +-2 (exact for cubics), whose residual of
# white noise has 1 + 34/36 times its variance: the scale the bisquare weights start from
_CUBIC = np.array([-1.0, 4.0, 0.0, 4.0, -1.0]) / 6.0


def spike_reference(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The leave-one-out robust local quadratic of the (T,) series ``v``: ``(reference,
    misfit)``, each (T,), ``misfit`` the median distance of the neighbours from the
    quadratic. NaN where fewer than 3 neighbours keep a weight (are finite and not weighed
    out), or the channel has no scale (no 5 finite samples in a row, or held readings).

    >>> t = np.arange(50.0)
    >>> v = 0.01 * t**2 + 0.01 * np.cos(2.0 * t)  # a quadratic with a little noise
    >>> v[20] += 5.0  # a spike
    >>> ref, misfit = spike_reference(v)
    >>> abs(float(ref[20]) - 4.0) < 0.02, float(misfit[20]) < 0.02
    (True, True)
    """
    v = np.asarray(v, dtype=np.float64)
    T, h = len(v), SPIKE_HALF
    padded = np.r_[np.full(h, np.nan), v, np.full(h, np.nan)]
    ref, misfit = np.full(T, np.nan), np.full(T, np.nan)
    resid = _cubic_residual(v)
    scale = 1.4826 * np.median(resid) / np.sqrt(1.0 + 34.0 / 36.0) if resid.size else 0.0
    if not scale > 0:  # held readings, a constant, too few samples: no spikes to tell
        return ref, misfit
    offsets = np.r_[np.arange(-h, 0), np.arange(1, h + 1)].astype(np.float64)
    design = np.stack([np.ones_like(offsets), offsets, offsets**2], axis=1)  # (2h, 3)
    powers = offsets[:, None] ** np.arange(5)  # (2h, 5): the Gram matrix's entries
    for a in range(0, T, _ROWS):
        b = min(T, a + _ROWS)
        around = sliding_window_view(padded[a : b + 2 * h], 2 * h + 1)  # (b - a, 2h + 1)
        near = np.delete(around, h, axis=1)  # (b - a, 2h): the sample left out
        known = np.isfinite(near)
        # first weights about the neighbours' median, on their own MAD scale where it is
        # larger than the noise's (a steep stretch): two spikes among them would pull a
        # least-squares start off the rest
        centre = _row_median(near)
        spread = 1.4826 * _row_median(np.abs(near - centre[:, None]))
        weights = _bisquare(
            (near - centre[:, None]) / (_BISQUARE * np.fmax(scale, spread))[:, None]
        )
        # the quadratic is fitted to the values less their median: the ridge that keeps the
        # solve defined then pulls no level toward 0 (a reading of 1e6 +- 1e-3 is one of 0)
        values = np.where(known, near - np.nan_to_num(centre)[:, None], 0.0)
        for _ in range(_ITERATIONS):
            m = weights @ powers  # (b - a, 5): sums of w o^p, the Gram matrix's entries
            coef = _solve_hankel(m, (weights * values) @ design)  # (b - a, 3)
            dist = np.abs(near - centre[:, None] - coef @ design.T)  # (b - a, 2h); NaN: unknown
            # the bisquare's scale: the noise's, or the window's own misfit where larger (a
            # spike among the neighbours pulls the first fit off them all)
            local = 1.4826 * _row_median(dist)
            weights = _bisquare(dist / (_BISQUARE * np.fmax(scale, local))[:, None])
        fine = (weights > 0).sum(axis=1) >= 3  # a quadratic through 3 samples at least
        ref[a:b] = np.where(fine, coef[:, 0] + centre, np.nan)
        misfit[a:b] = np.where(fine, local / 1.4826, np.nan)
    return ref, misfit


def _solve_hankel(m: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """(n, 3) solutions of the n symmetric 3x3 systems ``[[m0, m1, m2], [m1, m2, m3], [m2, m3,
    m4]] + 1e-9 I`` (the ridge keeps a singular one defined)."""
    G = m[:, np.add.outer(np.arange(3), np.arange(3))] + 1e-9 * np.eye(3)
    return solve_spd(G, rhs[:, :, None])[:, :, 0]


def _cubic_residual(v: np.ndarray) -> np.ndarray:
    """The finite distances of the (T,) series ``v`` from its cubic interpolation from the
    samples at +-1, +-2 (``_CUBIC``)."""
    padded = np.r_[np.full(2, np.nan), v, np.full(2, np.nan)]
    resid = np.abs(v - sliding_window_view(padded, 5) @ _CUBIC)
    return resid[np.isfinite(resid)]


def _row_median(a: np.ndarray) -> np.ndarray:
    """(n,) the median of each row of (n, k) ``a`` over its finite entries (NaN where none):
    a sort where a row has no NaN (nanmedian is about 3x slower)."""
    k = a.shape[1]
    out = np.mean(np.sort(a, axis=1)[:, [(k - 1) // 2, k // 2]], axis=1)
    holed = np.isnan(a).any(axis=1)
    if holed.any():
        rows = a[holed]
        empty = np.isnan(rows).all(axis=1)
        out[holed] = np.nan
        if (~empty).any():
            out[np.flatnonzero(holed)[~empty]] = np.nanmedian(rows[~empty], axis=1)
    return out


def _bisquare(u: np.ndarray) -> np.ndarray:
    """Tukey's bisquare weights of the scaled distances ``u`` (0 beyond 1 and where NaN)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(u) < 1.0, (1.0 - u * u) ** 2, 0.0)


def spike_channels(x2: np.ndarray) -> np.ndarray:
    """(C,) bool: the channels of the (T, C) series ``x2`` that have impulsive noise (more
    than ``MIN_SPIKE_SHARE`` of their samples, ``MIN_SPIKES`` at least, beyond
    ``IMPULSIVE_REACH`` typical distances) that are not a regular train of pulses of the
    signal (:func:`_a_pulse_train`) nor foretold by the samples before them
    (:func:`_foretold`). A fit decides this once, on its block
    (``spike_channels_``), so that a short stretch filtered later, with fewer spikes than the
    test asks, is treated as the filter was fitted."""
    x2 = np.asarray(x2, dtype=np.float64)
    out = np.zeros(x2.shape[1], dtype=bool)
    for c in range(x2.shape[1]):
        if not _may_have_spikes(x2[:, c]):
            continue
        _, strong, known = channel_spikes(x2[:, c])
        far = np.count_nonzero(strong)
        out[c] = far >= MIN_SPIKES and far > MIN_SPIKE_SHARE * known
        out[c] = out[c] and not _a_pulse_train(strong) and not _foretold(x2[:, c], strong)
    return out


def _foretold(v: np.ndarray, strong: np.ndarray) -> bool:
    """Whether the far samples of ``channel_spikes`` (``strong``, as in :func:`_a_pulse_train`)
    on their majority side are foretold by the samples before them: signal (a neuron's
    spikes, which its rising potential announces), not impulsive noise, which hits at random
    whatever came before. Foretold where, of the patterns nearest to those before the spikes'
    first samples (:func:`foretold_shares`), a share above ``FORETOLD_SHARE`` and
    ``FORETOLD_RATIO`` times their own share is followed by one too. Under 2% outliers of 10x
    (either sign) on the bench's series and one-sided hits at random times the share stays
    below 0.04 (at most 2.4x their own); a bursting Hindmarsh-Rose neuron sampled at its
    spikes' width gives 0.33-0.64, bursts of spikes on a plateau 0.99
    (``experiments/spikes_probe.py --part foretold``). Not told: pulses at random times
    (an uneven train of 2-sample pulses: 0.015), which nothing before them announces."""
    shares = foretold_shares(v, strong)
    return shares is not None and shares[0] > max(FORETOLD_SHARE, FORETOLD_RATIO * shares[1])


def foretold_shares(v: np.ndarray, strong: np.ndarray) -> tuple[float, float] | None:
    """``(followed, own)`` for the (T,) channel ``v`` and its far samples ``strong``. The far
    samples asked about are those on the majority side with no far sample among the
    ``SPIKE_HALF`` before them (a spike's first sample: the second of a pair announces
    itself, an impulsive hit 2 samples wide as much as a pulse of the signal). Per such
    sample, the ``FORETOLD_K`` patterns of the ``SPIKE_HALF`` samples before a sample nearest
    to those before it (none within ``SPIKE_HALF`` of it in time): the share of them followed
    by such a sample, averaged over them; and the share of all samples that are one. None
    where fewer than ``MIN_SPIKES`` have a complete pattern before."""
    times = np.flatnonzero(strong)
    if len(times) < MIN_SPIKES:
        return None
    side = 1.0 if np.mean(strong[times] > 0) >= 0.5 else -1.0
    E = SPIKE_HALF
    any_far = np.r_[np.zeros(E, dtype=bool), sliding_window_view(strong != 0, E).any(axis=1)]
    first = (strong * side > 0) & ~any_far[: len(strong)]  # (T,): none far in the E before
    before = sliding_window_view(np.asarray(v, dtype=np.float64), E)[:-1]  # (T - E, E)
    at = np.arange(E, len(v))  # the sample each pattern comes before
    ok = np.isfinite(before).all(axis=1)
    before, at = before[ok], at[ok]
    queries = np.flatnonzero(first[at])
    k = min(FORETOLD_K + 2 * E + 1, len(at))  # enough to leave K outside the own stretch
    if len(queries) < MIN_SPIKES or k <= 2 * E + 1:
        return None
    _, idx = scipy.spatial.cKDTree(before).query(before[queries], k=k)  # nearest first
    idx = idx.reshape(len(queries), k)
    apart = np.abs(at[idx] - at[queries][:, None]) > E
    used = apart & (np.cumsum(apart, axis=1) <= FORETOLD_K)  # the K nearest apart in time
    followed = (first[at[idx]] & used).sum(axis=1) / np.maximum(used.sum(axis=1), 1)
    return float(np.mean(followed)), float(np.mean(first[at]))


def _a_pulse_train(strong: np.ndarray) -> bool:
    """Whether the far samples of ``channel_spikes`` (``strong``: (T,) their signed distances
    from the reference, 0 elsewhere) are a regular train of pulses of the signal, not
    impulsive noise: nearly all on one side (``TRAIN_SIDE_SHARE``), and the times
    of their events (far samples within 2 of each other are one) on a grid: two thirds of the
    gaps within ``TRAIN_REGULARITY`` of the period (at least a sample) of a whole number of
    periods -- pulses stand out only where the noise lifts them, so most gaps skip some. The
    period starts at the gaps' lower quartile and is refined as the median gap per period.
    It asks for ``2 MIN_SPIKES`` events (at 8, random one-sided times passed 2% of the time)
    and a period where that reach takes at most a third of it (at a period of a few samples
    any gap is near a whole number of periods).
    Impulsive hits come at random times (gaps geometric: about a fifth fall so near a grid)
    and, unless the sensor clips one way, with either sign. A train of pulses 2 samples wide,
    or dense enough to raise the typical distance until only their peaks stand out, had every
    pulse filled in (``experiments/spikes_probe.py --part pulses``)."""
    times = np.flatnonzero(strong)
    signed = strong[times]
    if len(times) < MIN_SPIKES:
        return False
    side = max(np.mean(signed > 0), np.mean(signed < 0))
    events = times[np.r_[True, np.diff(times) > 2]]
    gaps = np.diff(events)
    if side < TRAIN_SIDE_SHARE or len(gaps) < 2 * MIN_SPIKES - 1:
        return False
    period = float(np.quantile(gaps, 0.25))
    for _ in range(2):  # the whole number of periods of each gap, then the period they give
        periods = np.maximum(np.round(gaps / period), 1.0)
        period = float(np.median(gaps / periods))
    reach = max(1.0, TRAIN_REGULARITY * period)
    if (2.0 * reach + 1.0) / period > 1.0 / 3.0:
        return False  # a period of a few samples: random gaps fall that near a grid by chance
    near = np.abs(gaps - periods * period) <= reach
    return bool(np.mean(near) >= 2.0 / 3.0)


def _may_have_spikes(v: np.ndarray) -> bool:
    """Whether more than ``MIN_SPIKE_SHARE`` of the (T,) channel ``v`` is 3 of its MAD scales
    off the cubic interpolation from its neighbours: a screen, ~10x cheaper than the robust
    quadratic, that :func:`spike_channels` passes a channel through before asking it. A spike
    beyond ``IMPULSIVE_REACH`` typical distances is about 5 of the interpolation's typical
    distances off it, so a channel with impulsive noise passes, unless its spikes sit where
    the recording is much quieter than on the whole; white noise has 0.27% of its samples
    beyond 3 scales. Over the 406 channels of ``experiments/spikes_probe.py --part screen``
    (all noises, three lengths, the ETT tables as recorded) it changes no decision."""
    resid = _cubic_residual(v)
    if resid.size == 0:
        return False
    far = int((resid > 3.0 * 1.4826 * np.median(resid)).sum())
    return far >= MIN_SPIKES and far > MIN_SPIKE_SHARE * resid.size


def spike_mask(x2: np.ndarray, channels=None) -> np.ndarray:
    """(T, C) bool: the spikes of the (T, C) series ``x2`` in ``channels`` ((C,) bools; None:
    those :func:`spike_channels` finds in ``x2``). NaN entries are not spikes.

    >>> rng = np.random.default_rng(0)
    >>> x = np.sin(np.arange(2000) / 20.0) + 0.05 * rng.normal(size=2000)
    >>> hit = rng.random(2000) < 0.02
    >>> x[hit] += 1.0
    >>> found = spike_mask(x[:, None])[:, 0]
    >>> int((found & hit).sum()), int(hit.sum()), int((found & ~hit).sum())  # found, spikes, false
    (35, 35, 0)
    """
    x2 = np.asarray(x2, dtype=np.float64)
    if channels is None:
        channels = spike_channels(x2)
    elif np.shape(channels) != (x2.shape[1],) or not all(
        isinstance(c, (bool, np.bool_)) for c in channels
    ):
        raise ValueError(f"channels must be None or {x2.shape[1]} bools (one per column of "
                         f"x2), got {channels!r}")  # fmt: skip
    out = np.zeros(x2.shape, dtype=bool)
    for c in np.flatnonzero(channels):
        out[:, c] = channel_spikes(x2[:, c])[0]
    return out


def channel_spikes(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """``(found, strong, known)`` of the (T,) channel ``v``: the (T,) samples beyond
    ``SPIKE_REACH`` typical distances (and apart from their neighbours); (T,) the signed
    distances from the reference of those beyond ``IMPULSIVE_REACH``, 0 elsewhere; and the
    samples with a reference (until 2026-12-02 the second was their count). Nothing found
    where the channel holds its readings.
    :func:`spike_channels` asks the far ones to be many and not a train of pulses."""
    nothing = (np.zeros(len(v), dtype=bool), np.zeros(len(v)), 0)
    before, after = v[:-1], v[1:]
    pair = np.isfinite(before) & np.isfinite(after)
    if not pair.any() or np.mean(before[pair] == after[pair]) >= REPEAT_SHARE:
        return nothing  # held readings, a quantised or idle channel: no white noise per sample
    ref, misfit = spike_reference(v)
    dist = np.abs(v - ref)
    known = np.isfinite(dist)
    if not known.any():
        return nothing
    # the typical distance around each sample: a recording that moves now and rests then (a
    # gyroscope) has larger distances while it moves, which are not spikes
    filled = np.where(known, dist, np.median(dist[known]))
    typical = 1.4826 * scipy.ndimage.median_filter(filled, 2 * SCALE_HALF + 1, mode="nearest")
    with np.errstate(invalid="ignore"):
        apart = (dist > SPIKE_CONTRAST * 1.4826 * misfit) & (typical > 0)
        apart &= ~_in_a_pulse(v - ref, SPIKE_REACH * typical)
        strong = np.where(apart & (dist > IMPULSIVE_REACH * typical), v - ref, 0.0)
        return apart & (dist > SPIKE_REACH * typical), strong, int(known.sum())


def _in_a_pulse(r: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """(T,) bools: the samples in a run of 3 or more in a row whose signed distances ``r`` from
    the reference are beyond ``reach`` on the same side -- a narrow pulse of the signal (a peak
    2-3 samples wide, whose flanks are far out too), not spikes, which are single samples. Two
    adjacent impulsive hits on the same side are still marked as spikes (a fit would follow
    such a pair), and three in a row are rare (at a 2% outlier rate 1 sample in 10,000 starts
    such a run). Pulses whose far run is shorter (exactly 2 samples wide, a 2-sample peak half a
    sample off centre, a fast one-sided decay at moderate SNR, or pulses so dense that they
    raise the typical distance and their flanks fall within reach) are marked here; a channel
    of them is told from impulsive noise by their even spacing (:func:`_a_pulse_train`), where
    a train at uneven spacing (a varying heart rate) is not. Without it a train of
    such pulses was taken for impulsive noise and its pulses filled in
    (``tests/estimators/test_spikes.py``)."""
    out = np.zeros(r.shape, dtype=bool)
    if r.size < 3:
        return out
    with np.errstate(invalid="ignore"):
        for side in (np.abs(r) > reach) & (r > 0), (np.abs(r) > reach) & (r < 0):
            start = side[:-2] & side[1:-1] & side[2:]  # three in a row from here
            for k in range(3):
                out[k : k + start.size] |= start
    return out
