"""The lag kernel: projection over a band of lags, the engine of every projection filter.

:func:`attend_lags` is :func:`tssdpa.ops.projection_sdpa` with a causal or two-sided window
(FIR), an exponential decay or a timestamp decay (IIR) on delay embeddings, in numpy: for
query rows ``t`` and a contiguous range of lags ``l`` it forms the keys ``j = t - l`` of a
padded table, computes Gaussian logits from exact coordinate differences, adds the decay term
and takes the softmax-weighted mean of the values. It works on blocks of rows so memory is
``O(rows_per_block * n_lags)``, never ``T x T``. Its explicit-loop reference is
:func:`tssdpa.signal.reference.attend_lags_reference`.

Conventions shared by both
--------------------------
``E`` (N, D): one embedding per table row, NaN where unknown.  ``V`` (N, C): the value a key
contributes (NaN: the key does not serve that channel).  Weight of key ``j`` for query ``t``::

    w = exp(-dist(E[t], E[j]) / (2 sigma^2)) * decay^|l - decay_origin|      (l = t - j)
    w = exp(-dist / (2 sigma^2)) * exp(-|times[t] - times[j]| / tau)           (with times)

``dist`` is the squared Euclidean distance over the coordinates finite in both vectors,
rescaled by ``D / n_common`` (the ``nan_euclidean`` convention); 0 when nothing is in common,
in which case only the decay ranks the keys.  A key serves the channels of its value that
are finite: each channel of a row is the weighted mean (or local polynomial) of the keys
that have it, normalised over them, so a channel missing over a stretch does not take the
keys from the others.  When ``exclude_self`` the lag-0 key is dropped.  A channel of a row
with no usable key returns ``fallback[t]`` there (NaN when no fallback is given).
"""

from __future__ import annotations

import functools
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tssdpa.checks import check_positive
from tssdpa.signal.library import far_gaps
from tssdpa.signal.local_polynomial import SPAN_WEIGHT, local_polynomial, offset_powers

__all__ = ["GAP_MARGIN", "SIGMA_BATCH", "attend_lags", "attend_newest", "decay_logits",
           "iir_truncation_lag"]  # fmt: skip

#: sigmas whose local polynomials one solve takes together (their (rows, L) weights are held
#: at once: a few MiB each at the default block size)
SIGMA_BATCH = 4
#: a local polynomial at a sample without its reading stays within the values it weighed
#: widened by this share of their range on each side: enough for a peak inside a short gap,
#: not for the swing of a fit on one side of a long one (past -100 on a unit sine)
GAP_MARGIN = 0.25


def iir_truncation_lag(decay: float, tol: float) -> int:
    """Smallest K >= 1 with ``decay**K / (1 - decay) <= tol``.

    ``decay**K / (1 - decay)`` is the sum of ``decay**l`` over every lag ``l >= K``: an upper
    bound on the unnormalised weight an infinite-memory filter gives to the keys a filter
    truncated at K lags drops (each Gaussian factor is at most 1).
    """
    if not 0.0 < decay < 1.0:
        raise ValueError(f"decay must be in (0, 1) for an infinite-memory filter, got {decay!r}")
    tol = check_positive(tol, "tol")
    k = max(math.ceil(math.log(tol * (1.0 - decay)) / math.log(decay)), 1)
    # guard against rounding in the logarithms
    while decay**k / (1.0 - decay) > tol:
        k += 1
    while k > 1 and decay ** (k - 1) / (1.0 - decay) <= tol:
        k -= 1
    return k


def decay_logits(lags: np.ndarray, decay: float | None, dtype, decay_origin: int = 0):
    """``|l - decay_origin| · log γ`` per lag in ``dtype``, or None without decay (γ None or 1)."""
    if decay is None or decay == 1.0:
        return None
    return (np.abs(lags - decay_origin).astype(np.float64) * math.log(decay)).astype(dtype)


def attend_lags(
    E: np.ndarray,
    V: np.ndarray,
    rows: tuple[int, int],
    lag_min: int,
    lag_max: int,
    *,
    sigma: float | None = None,
    degree: int = 0,
    configs: list[tuple[float, int]] | None = None,
    decay: float | None = None,
    decay_origin: int = 0,
    times: np.ndarray | None = None,
    tau: float | None = None,
    exclude_self: bool = False,
    fallback: np.ndarray | None = None,
    block_elems: int = 1 << 18,
    n_threads: int = 1,
    rowwise: bool = False,
):
    """Fast blocked projection over lags ``lag_min..lag_max`` for query rows ``rows[0]:rows[1]``.

    The caller pads ``E``/``V``/``times`` so that every key index ``t - l`` lies inside the table.
    ``degree`` 0 is the weighted mean; ``degree`` p > 0 the weighted local polynomial of degree
    p in the time offset ``j - t``, evaluated at the query's time (with ``sigma = inf`` the
    uniform kernel: a moving average, or a Savitzky–Golay filter, of the window). Returns
    (n_rows, C) in the dtype of ``E``; with ``configs`` (a list of (sigma, degree)) a list
    of them, one per configuration, sharing one distance computation. ``rowwise``: a local
    polynomial's moments summed row by row (:func:`~.local_polynomial.row_dot`), so that a
    row's bits do not depend on the rows computed with it (a causal filter, which a stream of
    steps must reproduce); else by BLAS, faster.
    """
    single = configs is None
    configs = [(sigma, degree)] if single else list(configs)
    start, stop = rows
    n_rows = stop - start
    n_emb = E.shape[1]
    n_ch = V.shape[1]
    dtype = E.dtype
    outs = [np.empty((n_rows, n_ch), dtype=dtype) for _ in configs]
    if n_rows == 0:
        return outs[0] if single else outs
    if start - lag_max < 0 or stop - 1 - lag_min >= E.shape[0]:
        raise IndexError("key range outside the padded table (internal error)")
    lags = np.arange(lag_max, lag_min - 1, -1)  # window position k <-> lag lags[k]; keys ascend
    n_lags = lags.size
    # 0.5/s/s, not 0.5/s**2: a width of 1e300 gives 0 (uniform) where its square overflowed
    inv2s2s = [logit_scale(float(s), dtype) for s, _ in configs]
    decay_term = decay_logits(lags, decay, dtype, decay_origin)
    self_pos = None
    if exclude_self and lag_min <= 0 <= lag_max:
        self_pos = int(np.nonzero(lags == 0)[0][0])
    # with the sample itself a key its logit, 0, is each row's maximum: no shift needed
    self_is_max = (not exclude_self) and lag_min <= 0 <= lag_max and decay_origin == 0
    block = max(1, block_elems // n_lags)
    use_times = times is not None and tau is not None
    inv_tau = 1.0 / tau if use_times else None
    powers = offset_powers(lags, max(p for _, p in configs))

    def run_block(a: int) -> None:
        b = min(stop, a + block)
        n = b - a
        k0, k1 = a - lag_max, b - 1 - lag_min + 1  # key table slice
        Ek = E[k0:k1]
        Vk = V[k0:k1]
        Eq = E[a:b]
        has_nan = bool(np.isnan(Ek).any() or np.isnan(Eq).any() or np.isnan(Vk).any())
        Kw = sliding_window_view(Ek, n_lags, axis=0)  # (n, D, L), window position last
        if has_nan:
            dist = np.zeros((n, n_lags), dtype=dtype)
            cnt = np.zeros((n, n_lags), dtype=np.int32)
            for d in range(n_emb):
                diff = Eq[:, d : d + 1] - Kw[:, d, :]
                fin = ~np.isnan(diff)
                cnt += fin
                dist += np.where(fin, diff * diff, 0.0)
            if n_emb > 1:
                dist = np.where(cnt > 0, dist * (n_emb / np.maximum(cnt, 1)), 0.0)
        else:
            # one contiguous row per coordinate: the (n, L) key views then read memory in order
            EkT = Ek.T.copy() if n_emb > 1 else Ek[:, 0]
            key_view = (
                (lambda d: sliding_window_view(EkT[d], n_lags))
                if n_emb > 1
                else (lambda d: sliding_window_view(EkT, n_lags))
            )
            dist = np.subtract(Eq[:, 0:1], key_view(0))
            np.multiply(dist, dist, out=dist)
            for d in range(1, n_emb):
                diff = np.subtract(Eq[:, d : d + 1], key_view(d))
                np.multiply(diff, diff, out=diff)
                dist += diff
        extra = None  # logits that do not depend on sigma
        valid = None
        if use_times:
            Tw = sliding_window_view(times[k0:k1], n_lags)  # (n, L)
            # in the times' dtype (float64 from the filters), then rounded: see lagfilter._relative
            dt = np.abs(times[a:b, None] - Tw).astype(dtype, copy=False)
            extra = (dt * inv_tau).astype(dtype, copy=False)
            valid = ~np.isnan(dt)
        per_channel = None  # (n, C, L) which channels each key has, where some has not all
        if has_nan:
            known = ~np.isnan(sliding_window_view(Vk, n_lags, axis=0))  # (n, C, L)
            vv = known.any(axis=1)  # a key serves the channels it has
            partial_keys = vv & ~known.all(axis=1)
            if n_ch > 1 and partial_keys.any():
                per_channel = known
            valid = vv if valid is None else valid & vv
        if self_pos is not None:
            if valid is None:
                valid = np.ones((n, n_lags), dtype=bool)
            valid[:, self_pos] = False
        # rows whose farthest key's logit overflows at the narrowest sigma (_nearest_first)
        row_max = far_rows = low = partial_dist = lost = None
        if float(dist.max()) > logit_reach(max(inv2s2s), dtype):
            row_max = dist.max(axis=1)
            far_rows = np.flatnonzero(row_max > logit_reach(max(inv2s2s), dtype))
            low = np.zeros((n, 1), dtype=dist.dtype)  # float64 in a float32 block with gaps
            low[far_rows], gone = _nearest(
                dist[far_rows], None if valid is None else valid[far_rows], True
            )
            lost = far_rows[gone]  # every usable key overflowed: see _rescaled_logits
        if per_channel is not None:  # the rows that weigh a partial key, once for every sigma
            partial_rows = np.flatnonzero((valid & partial_keys).any(axis=1))
            if far_rows is not None:  # a copy: the last sigma overwrites dist
                partial_dist = dist[partial_rows]
        VkT = Vk.T.copy() if n_ch > 1 else Vk[:, 0][None]
        vals = [sliding_window_view(VkT[c], n_lags) for c in range(n_ch)]  # (n, L) each
        if per_channel is not None:
            vals = [np.where(valid & per_channel[:, c], v, 0.0) for c, v in enumerate(vals)]
        elif valid is not None:
            vals = [np.where(valid, v, 0.0) for v in vals]
        fb = None if fallback is None else fallback[a - start : b - start]
        # (n, C) rows without their own reading: there a polynomial fitted on keys on one
        # side (a causal filter's, or at the edge of a gap) or on a few far keys either side
        # swings without bound, so it is kept near the values it weighed (GAP_MARGIN)
        unread = None
        if has_nan and lag_min <= 0 <= lag_max and powers.shape[1] > 1:
            unread = ~known[:, :, int(np.nonzero(lags == 0)[0][0])]
            unread = unread if unread.any() else None

        def weights(logits, valid):
            """``(w, empty)``: one sigma's (rows, L) weights from its logits over the keys
            ``valid`` (each row scaled by its largest), and the rows without a key."""
            if valid is not None:
                logits = np.where(valid, logits, -np.inf)
            if self_is_max and valid is None:
                empty = np.zeros(len(logits), dtype=bool)
            else:
                mx = logits.max(axis=1, keepdims=True)
                empty = ~np.isfinite(mx[:, 0])
                if empty.any():
                    mx[empty] = 0.0
                logits -= mx
            return np.exp(logits, out=logits), empty

        def polynomials(ws, vals, member_lists) -> list[dict]:
            """For each (rows, L) weights of ``ws``, and the configurations of its sigma in
            ``member_lists`` (the same degrees in the same order for all): {config: (rows,
            len(vals)) fit} for those of degree > 0, every sigma's systems solved together."""
            polys = [[i for i in members if configs[i][1] > 0] for members in member_lists]
            if not polys[0]:
                return [{} for _ in ws]
            degrees = [configs[i][1] for i in polys[0]]
            fits = local_polynomial(ws, vals, powers, degrees, rowwise)
            return [dict(zip(poly, f)) for poly, f in zip(polys, fits)]

        def outputs(w, empty, vals, fb, members, fits, unread) -> dict:
            """{config: (rows, len(vals)) output} from one sigma's weights ``w``, for the
            channels whose (rows, L) values are ``vals``; ``fits`` from :func:`polynomials`;
            ``unread`` (rows, len(vals)): where a polynomial is clipped (or None)."""
            out = {}
            for i in members:
                if configs[i][1] == 0:
                    den = w.sum(axis=1)
                    num = np.empty((len(w), len(vals)), dtype=dtype)
                    for c, v in enumerate(vals):
                        num[:, c] = np.einsum("nl,nl->n", w, v)
                    with np.errstate(invalid="ignore", divide="ignore"):
                        res = num / den[:, None]
                else:
                    res = fits[i].astype(dtype, copy=False)
                    if unread is not None:
                        _within_weighed(res, w, vals, unread)
                if empty.any():
                    res[empty] = np.nan if fb is None else fb[empty]
                out[i] = res
            return out

        # configurations sharing a sigma share the weights: one exp per distinct sigma
        by_sigma: dict[float, list[int]] = {}
        for i, (s, _) in enumerate(configs):
            by_sigma.setdefault(float(s), []).append(i)
        groups = list(by_sigma.values())
        # the local polynomials of several sigmas in one solve (one at a time, a fit's small
        # blocks spent their time on the calls): sigmas with the same degrees, SIGMA_BATCH at
        # a time, whose weights are held together
        same_degrees: dict[tuple, list[int]] = {}
        for g, members in enumerate(groups):
            same_degrees.setdefault(tuple(configs[i][1] for i in members), []).append(g)
        batches = [gs[i : i + SIGMA_BATCH] for gs in same_degrees.values()
                   for i in range(0, len(gs), SIGMA_BATCH)]  # fmt: skip
        for batch in batches:
            weighed, kept = [], []  # per sigma: (w, empty); its logits for the partial rows
            for g in batch:
                # the last sigma may work in place on the distances
                last = batch is batches[-1] and g == batch[-1]
                inv = inv2s2s[groups[g][0]]
                near = None
                if far_rows is not None:  # from the nearest key: see _nearest_first
                    r = far_rows[row_max[far_rows] > logit_reach(inv, dtype)]
                    near = (r, _nearest_first(dist[r], low[r], inv))
                if inv == 0:  # the uniform kernel: every key 0, also past an overflow
                    reuse = last and dist.dtype == dtype
                    logits = dist if reuse else np.empty(dist.shape, dtype)
                    logits.fill(0.0)  # (dist · -0 was NaN where its square overflowed)
                else:
                    with np.errstate(over="ignore"):  # -inf: a key beyond the kernel's reach
                        logits = np.multiply(dist, -inv, out=dist if last else None)
                        logits = logits.astype(dtype, copy=False)
                        if near is not None:
                            logits[near[0]] = near[1]
                        if lost is not None and lost.size:
                            keys_lost = None if valid is None else valid[lost]
                            logits[lost] = _rescaled_logits(Eq[lost], Kw[lost], keys_lost, inv)
                if decay_term is not None:
                    logits += decay_term
                if extra is not None:
                    logits -= extra
                weighed.append(weights(logits, valid))  # valid set: logits stay as they are
                kept.append(logits if per_channel is not None else None)
            fits = polynomials([w for w, _ in weighed], vals, [groups[g] for g in batch])
            for g, (w, empty), logits, fit in zip(batch, weighed, kept, fits):
                members = groups[g]
                res = outputs(w, empty, vals, fb, members, fit, unread)
                if per_channel is not None:
                    # rows with a partial key: each channel weighs the keys that have it,
                    # normalised over them (the other rows keep the shared weights, so that
                    # they round as in a block without partial keys)
                    r = partial_rows
                    for c in range(n_ch):
                        lg, keys_c = logits[r], valid[r] & per_channel[r, c]
                        if partial_dist is not None:  # from the nearest key with channel c
                            inv = inv2s2s[members[0]]
                            f = np.flatnonzero(row_max[r] > logit_reach(inv, dtype))
                            d, x_f = partial_dist[f], None if extra is None else extra[r][f]
                            low_c, gone = _nearest(d, keys_c[f], True)
                            lg[f] = _nearest_first(d, low_c, inv, dtype, decay_term, x_f)
                            g = f[gone]
                            if g.size:  # every key with channel c overflowed
                                rows_g = r[g]
                                with np.errstate(over="ignore"):
                                    lg_g = _rescaled_logits(Eq[rows_g], Kw[rows_g], keys_c[g],
                                                            inv).astype(dtype)  # fmt: skip
                                if decay_term is not None:
                                    lg_g += decay_term
                                if extra is not None:
                                    lg_g -= extra[rows_g]
                                lg[g] = lg_g
                        wc, empty_c = weights(lg, keys_c)
                        own = [vals[c][r]]
                        fb_c = None if fb is None else fb[r, c : c + 1]
                        unread_c = None if unread is None else unread[r, c : c + 1]
                        part = outputs(wc, empty_c, own, fb_c, members,
                                       polynomials([wc], own, [members])[0], unread_c)  # fmt: skip
                        for i in members:
                            res[i][r, c] = part[i][:, 0]
                for i in members:
                    outs[i][a - start : b - start] = res[i]

    starts = range(start, stop, block)
    if n_threads > 1 and len(starts) > 1:
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            list(pool.map(run_block, starts))
    else:
        for a in starts:
            run_block(a)
    return outs[0] if single else outs


def _within_weighed(res, w, vals, unread) -> None:
    """Clip ``res[r, c]`` into the range of the values ``vals[c][r]`` of weight ``w[r]`` at
    least ``SPAN_WEIGHT`` (of the row's largest, 1; float32 and float64 underflow at different
    lags) widened by ``GAP_MARGIN`` of it on each side, in place, at the ``unread`` (rows, C)
    entries that have such a value."""
    for c, v in enumerate(vals):
        r = np.flatnonzero(unread[:, c])
        used = w[r] >= SPAN_WEIGHT
        r, used = r[used.any(axis=1)], used[used.any(axis=1)]
        if r.size:
            lo = np.where(used, v[r], np.inf).min(axis=1)
            hi = np.where(used, v[r], -np.inf).max(axis=1)
            pad = GAP_MARGIN * (hi - lo)
            res[r, c] = np.clip(res[r, c], lo - pad, hi + pad)


@functools.lru_cache(maxsize=256)  # a step asks every sample; give a float (a key)
def logit_scale(sigma: float, dtype) -> np.generic:
    """``0.5 / sigma²`` in ``dtype``, capped (float32's inf below 3.8e-20 gave 0 · inf = NaN)."""
    dtype = np.dtype(dtype)
    return dtype.type(min(0.5 / float(sigma) / float(sigma), float(np.finfo(dtype).max)))


@functools.lru_cache(maxsize=256)
def logit_reach(scale, dtype) -> float:
    """The squared distance past which ``-distance · scale`` overflows ``dtype`` (scale 0: inf)."""
    return float(np.finfo(np.dtype(dtype)).max) / float(scale) if scale else math.inf


def _nearest(dist: np.ndarray, valid, lost: bool = False):
    """(n, 1): each row of (n, L) ``dist``'s smallest over its ``valid`` keys (0 if none);
    with ``lost``, also (n,) bool: the rows that have a valid key, none at a finite distance
    (every usable key's squared distance overflowed the dtype)."""
    low = (dist if valid is None else np.where(valid, dist, np.inf)).min(axis=1, keepdims=True)
    out = np.where(np.isfinite(low), low, 0.0).astype(dist.dtype, copy=False)
    if not lost:
        return out
    gone = ~np.isfinite(low[:, 0])
    if valid is not None and gone.any():
        gone &= valid.any(axis=1)
    return out, gone


def _rescaled_logits(Eq: np.ndarray, Kw: np.ndarray, valid, scale) -> np.ndarray:
    """(r, L) float64 logits ``-(dist - nearest) · scale`` of rows whose every usable key's
    squared distance overflowed (:func:`_nearest`'s ``lost``), from the queries ``Eq``
    (r, D) and keys ``Kw`` (r, D, L) in a larger unit
    (:func:`~tssdpa.signal.library.far_gaps`): the nearest usable key keeps 0 and the others
    fall to -inf (or stay finite under a width as large as the distances) -- the limit
    :func:`_nearest_first` takes where the nearest key's distance is finite, and the library
    kernel's; such a row had no key (fallback, NaN or the held output)."""
    gap, unit = far_gaps(Eq, Kw.transpose(0, 2, 1), valid)
    with np.errstate(over="ignore", invalid="ignore"):
        k = np.square(unit * math.sqrt(float(scale)))  # (r, 1), inf past float64
        return np.where(gap > 0, -gap * k, 0.0)


def _nearest_first(dist, low, scale, dtype=None, decay_term=None, extra=None) -> np.ndarray:
    """Logits ``-(dist - low) · scale`` (+ decay, - time terms) of rows whose farthest key
    overflows, ``low`` their nearest usable key's distance: the same softmax, but a row (or
    channel) without its own sample kept a key (it had none: fallback or NaN)."""
    with np.errstate(over="ignore"):  # -inf: a key beyond the kernel's reach
        out = ((dist - low) * -scale).astype(dtype or dist.dtype, copy=False)
    if decay_term is not None:
        out += decay_term
    if extra is not None:
        out -= extra
    return out


def attend_newest(
    fc: np.ndarray,
    embedding: int,
    decay_term: np.ndarray | None,
    sigma: float,
    *,
    elapsed: np.ndarray | None = None,
    tau: float | None = None,
    exclude_self: bool = False,
    degree: int = 0,
) -> np.ndarray:
    """The lag kernel for the newest row of ``fc`` only: the per-sample ``step`` of a filter.

    ``fc`` (K + m - 1, C): the last samples in the compute dtype, no NaN, newest last; the
    keys are its K newest embeddings of length m = ``embedding``. ``decay_term`` (K,) from
    :func:`decay_logits` for lags K-1 .. 0, ``elapsed`` (K,) the time from each key to the
    newest sample (with ``tau``); ``degree`` > 0 the local polynomial of that degree
    (:func:`~tssdpa.signal.local_polynomial.local_polynomial`) instead of the weighted mean.
    Same operations in the same order as :func:`attend_lags` on the last row, so both round
    alike. Returns (C,) in the dtype of ``fc``.
    """
    m, C, dt = embedding, fc.shape[1], fc.dtype
    vals = fc[m - 1 :]
    if exclude_self and vals.shape[0] == 1:
        return fc[-1].copy()  # no other key: the fallback is the sample itself
    # squared distance summed coordinate by coordinate (newest sample first), the order of
    # attend_lags: a reduction over axis 0 of a C-ordered (D, L) accumulates row by row (the
    # difference with the transposed keys comes F-ordered unless asked, whose sum numpy ran in
    # another order from 8 coordinates on: a degree 8 step was 4e-7 off the one-shot filter)
    if m == 1:
        d = np.subtract(fc[-1][:, None], fc.T, order="C") if C > 1 else fc[-1] - fc[:, 0]
    else:
        E = sliding_window_view(fc, m, axis=0)[:, :, ::-1]
        E = E.transpose(0, 2, 1).reshape(E.shape[0], m * C)
        d = np.subtract(E[-1][:, None], E.T, order="C")
    d *= d
    w = d.sum(axis=0) if d.ndim == 2 else d
    scale, top = logit_scale(float(sigma), dt), float(w.max())
    reach = logit_reach(scale, dt)
    far = top > reach  # as attend_lags: from the nearest key
    low = _nearest((w[:-1] if exclude_self else w)[None], None)[0] if far else 0.0
    if scale == 0:  # the uniform kernel, as attend_lags: 0, not inf · -0 = NaN
        w = np.zeros_like(w)
    elif far and not np.isfinite(w[:-1] if exclude_self else w).any():
        # every key's square overflowed: attend_lags' _rescaled_logits
        Ek = (fc.T if m == 1 else E.T)[None]  # (1, D, L): the keys of w, query last
        keys = (np.arange(w.size) < w.size - 1)[None] if exclude_self else None  # not itself
        with np.errstate(over="ignore"):
            w = _rescaled_logits(Ek[:, :, -1], Ek, keys, scale)[0].astype(dt)
    elif top <= 0.5 * reach:  # no overflow: in place, the same bits
        np.multiply(w, -scale, out=w)  # as _nearest_first's (w - 0) · -scale
    else:
        w = _nearest_first(w, low, scale)  # (w - 0) · -scale: bitwise w · -scale
    # decay and tau are exclusive: at most one of the two terms is added
    if decay_term is not None:
        w += decay_term
    if tau is not None:
        w -= (elapsed * (1.0 / tau)).astype(dt)
    if exclude_self:
        w[-1] = -np.inf  # attend_lags masks the sample itself the same way
    if exclude_self or tau is not None:
        w -= w.max()  # else the sample itself is the largest, 0: each weight at most 1
    np.exp(w, out=w)
    if degree:
        # attend_lags on a block of one row: the same weights, values and powers, one system
        powers = offset_powers(np.arange(w.size - 1, -1, -1), degree)
        own = [vals[None, :, c] for c in range(C)]  # (1, K) per channel, oldest key first
        return local_polynomial([w[None]], own, powers, [degree], True)[0][0][0].astype(dt)
    vals = vals.T if C == 1 and vals.flags.c_contiguous else vals.T.copy()  # contiguous
    return np.einsum("l,cl->c", w, vals) / w.sum()  # attend_lags' per-channel dot
