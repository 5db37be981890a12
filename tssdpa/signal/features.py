"""Infinite-memory projection filter with O(1) state: positive random features (internal).

The Gaussian kernel factorises in expectation over ``w ~ N(0, I / sigma^2)``::

    exp(-||q - k||^2 / (2 sigma^2)) = E_w[ phi_w(q) phi_w(k) ],
    phi_w(x) = exp(w . x - ||x||^2 / sigma^2)

(Performer / FAVOR+ positive features, ``feature_map="performer"``). The default
``feature_map="centres"`` uses Gaussian bumps at random centres ``c ~ p`` instead::

    exp(-||q - k||^2 / (2 sigma^2)) = const * E_(c~p)[ phi_c(q) phi_c(k) ],
    phi_c(x) = exp(-||x - c||^2 / sigma^2) / sqrt(p(c))

(two Gaussians of variance sigma^2/2 convolve to one of variance sigma^2; the importance weight
1/p(c) makes it unbiased for any proposal p with full support). With p a Gaussian matched to
the data (mean and spread seen by ``fit``, widened by sigma^2/2) the estimator's variance is far
lower than the Performer map's when ||x|| / sigma is not small. With M draws
``phi(x) in R^M`` the decayed IIR filter becomes the linear recursion::

    S_t = gamma_t S_(t-1) + phi(e_t) x_t^T      (M, C)
    n_t = gamma_t n_(t-1) + phi(e_t)            (M,)
    y_t = phi(e_t)^T S_t / phi(e_t)^T n_t

with ``gamma_t = decay`` (or ``exp(-(t_t - t_(t-1)) / tau)`` with timestamps). Inside a block of
rows the recursion is evaluated in parallel with the (L, L) matrix of decay factors, so any
split of the series gives the same result up to rounding.
"""

from __future__ import annotations

import math

import numpy as np

from tssdpa.signal.embedding import delay_embedding
from tssdpa.signal.lagfilter import check_continues, check_no_step_back
from tssdpa.signal.missing import fill_forward

__all__ = ["draw_features", "feature_filter", "initial_feature_state"]


def draw_features(
    n_features: int,
    dim: int,
    sigma: float,
    random_state: int,
    kind: str = "centres",
    center=None,
    spread=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Random feature parameters: (matrix (M, D), log-weights (M,)).

    ``"performer"``: rows ~ N(0, I / sigma^2), weights 0. ``"centres"``: centres ~ N(center,
    diag(spread^2 + sigma^2 / 2)), log-weights = -log p(c) / 2 (constants dropped: they cancel).
    """
    if not sigma < 1e150:  # its squares below overflow; the exact filters take any width
        raise ValueError(f"sigma must be below 1e150 with random features, got {sigma!r}")
    rng = np.random.default_rng(random_state)
    if kind == "performer":
        return rng.normal(size=(n_features, dim)) / sigma, np.zeros(n_features)
    if kind != "centres":
        raise ValueError(f"feature_map must be 'centres' or 'performer', got {kind!r}")
    mu = np.zeros(dim) if center is None else np.asarray(center, dtype=np.float64)
    sp = np.ones(dim) if spread is None else np.asarray(spread, dtype=np.float64)
    s = np.sqrt(sp**2 + sigma**2 / 2.0)
    c = mu + s * rng.normal(size=(n_features, dim))
    logp = -0.5 * (((c - mu) / s) ** 2).sum(axis=1)
    return c, -0.5 * logp


def initial_feature_state(n_features: int, n_channels: int, embedding: int, use_times: bool):
    """Empty state: (history (m-1, C), S (M, C), n (M,), last time (1,), last output (C,)).

    The last defined output (NaN before the first) is what a row without any usable key
    repeats, as for the exact filters.
    """
    return (
        np.full((embedding - 1, n_channels), np.nan),
        np.zeros((n_features, n_channels)),
        np.zeros(n_features),
        np.full(1, np.nan),
        np.full(n_channels, np.nan),
    )


def _log_features(E, W, logw, center, sigma, kind):
    if kind == "performer":
        Z = np.nan_to_num(E - center, nan=0.0)  # missing coordinates sit at the centre
        return Z @ W.T - (Z * Z).sum(1, keepdims=True) / sigma**2  # (T, M)
    d2 = np.zeros((E.shape[0], W.shape[0]))
    for k in range(E.shape[1]):  # exact differences; a missing coordinate contributes 0
        diff = E[:, k : k + 1] - W[None, :, k]
        d2 += np.nan_to_num(diff * diff, nan=0.0)
    return logw[None, :] - d2 / sigma**2


def feature_filter(
    x2: np.ndarray,
    state,
    *,
    W: np.ndarray,
    logw: np.ndarray,
    kind: str,
    center: np.ndarray,
    sigma: float,
    embedding: int,
    decay: float | None,
    tau: float | None,
    times: np.ndarray | None,
    exclude_self: bool,
    block: int = 256,
):
    """Run the random-feature recursion over (T, C) ``x2`` from ``state``; returns (y, state).

    Rows without any usable key (nothing observed yet, or all weight decayed to zero) repeat
    the last defined output carried in the state (NaN before the first one).
    """
    hist, S, nrm, last_t, hold = (np.array(a, dtype=np.float64) for a in state)
    T, C = x2.shape
    m = embedding
    full = np.concatenate([hist, x2], axis=0)
    E = delay_embedding(full, m)[m - 1 :]  # (T, D)
    logphi = _log_features(E, W, logw, center, sigma, kind)  # (T, M)
    # keys: log phi with a fixed reference so that key weights stay comparable across rows
    key_ok = ~np.isnan(x2).any(axis=1) & ~np.isnan(E).any(axis=1)
    phi_k = np.where(key_ok[:, None], np.exp(np.minimum(logphi, 700.0)), 0.0)
    xv = np.where(key_ok[:, None], np.nan_to_num(x2), 0.0)
    # queries: any positive scalar factor cancels, so normalise each row by its max
    phi_q = np.exp(logphi - logphi.max(axis=1, keepdims=True))
    if tau is not None:
        if times is None:
            raise ValueError("tau is set: timestamps are required")
        times = np.asarray(times, dtype=np.float64)
        check_no_step_back(times)
        if T and not np.isnan(last_t[0]):
            check_continues(times[0], last_t[0])
        t_all = np.concatenate([last_t, times])
        step = np.diff(t_all)
        step = np.where(np.isnan(step), 0.0, step)
        cum = np.concatenate([[0.0], np.cumsum(step)])[1:]  # time since the last state time
    else:
        g = 1.0 if decay is None else decay
        cum = np.arange(1, T + 1, dtype=np.float64)
        log_g = math.log(g)
    y = np.empty((T, C))
    for a in range(0, T, block):
        b = min(T, a + block)
        c = cum[a:b]
        if tau is not None:
            rel = c - (cum[a - 1] if a > 0 else 0.0)
            G = np.exp(-np.clip(c[:, None] - c[None, :], 0, None) / tau)
            carry = np.exp(-rel / tau)
        else:
            idx = np.arange(b - a)
            G = np.exp(np.clip(idx[:, None] - idx[None, :], 0, None) * log_g)
            carry = np.exp((idx + 1) * log_g)
        G = np.tril(G)
        if exclude_self:
            G = G - np.eye(b - a)
        U = (phi_k[a:b, :, None] * xv[a:b, None, :]).reshape(b - a, -1)
        Sblk = carry[:, None, None] * S[None] + (G @ U).reshape(b - a, *S.shape)
        nblk = carry[:, None] * nrm[None] + G @ phi_k[a:b]
        num = np.einsum("tm,tmc->tc", phi_q[a:b], Sblk)
        den = np.einsum("tm,tm->t", phi_q[a:b], nblk)
        with np.errstate(invalid="ignore", divide="ignore"):
            res = num / den[:, None]
        bad = ~(den > 0)
        if bad.any():
            res[bad] = x2[a:b][bad] if exclude_self else np.nan
        y[a:b] = res
        # state at the end of the block
        if exclude_self:
            S = Sblk[-1] + phi_k[b - 1][:, None] * xv[b - 1][None]
            nrm = nblk[-1] + phi_k[b - 1]
        else:
            S, nrm = Sblk[-1], nblk[-1]
    y, hold = fill_forward(y, hold)
    new_hist = full[full.shape[0] - (m - 1) :] if m > 1 else full[:0]
    new_t = np.array([times[-1]]) if tau is not None and T else last_t
    return y, (np.array(new_hist), S, nrm, new_t, hold)
