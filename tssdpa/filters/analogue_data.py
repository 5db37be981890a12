"""The global linear part of the analogue forecaster: a series' delay embeddings and futures,
its ridge autoregressions per horizon (direct, or one step iterated) and their blocked
cross-validation (:class:`AnalogueData`)."""

from __future__ import annotations

import numpy as np

from tssdpa.signal.autocorrelation import lagged_products
from tssdpa.signal.embedding import delay_embedding

__all__ = ["AnalogueData", "default_delays", "iterate_one_step", "seasonal_length"]


def default_delays(z: np.ndarray, max_embedding: int) -> list[int]:
    """1, and for a finely sampled signal the lag where its autocorrelation first falls below
    1/e (capped so that the longest embedding spans at most a tenth of the series)."""
    x = np.nan_to_num(z[:, 0] - np.nanmean(z[:, 0]))
    n = len(x)
    cap = max(1, n // (10 * max(max_embedding - 1, 1)))
    acf = lagged_products(x, min(n, 4 * cap + 2))
    acf = acf / acf[0] if acf[0] > 0 else acf
    below = np.flatnonzero(acf < np.exp(-1))
    tau = int(below[0]) if len(below) else 1
    return sorted({1, max(1, min(tau, cap))})


def seasonal_length(z: np.ndarray, lo: int, hi: int) -> int | None:
    """``P + 1`` for the lag ``P`` in ``lo + 1 .. hi - 2`` (below ``T - 2``) where the
    autocorrelation of ``z`` (mean over its channels) peaks highest, above 0.3 -- the pattern
    length whose linear model reads ``y[t + h - P]`` for every horizon ``h <= P`` (a weekly
    spike in hourly data: P = 168) -- else None. The long linear ladder stops growing where two
    lengths in a row improve no score, often before a long season: this one is scored
    whatever the ladder does."""
    T, C = z.shape
    if hi - 1 <= lo + 1 or T < 4:
        return None
    hi = min(hi, T - 1)
    if hi - 1 <= lo + 1:
        return None
    x = np.nan_to_num(z - np.nanmean(z, axis=0))
    # per pair of samples (T - lag of them): the plain sum shrinks the peaks of long lags
    acf = lagged_products(x, hi) / (T - np.arange(hi))[:, None]  # (hi, C)
    scale = np.where(acf[0] > 0, acf[0], 1.0)
    acf = (acf / scale).mean(axis=1)
    lags = np.arange(lo + 1, hi - 1)
    peaks = lags[(acf[lags] > acf[lags - 1]) & (acf[lags] >= acf[lags + 1]) & (acf[lags] > 0.3)]
    return int(peaks[np.argmax(acf[peaks])]) + 1 if len(peaks) else None


#: most blocks (ridge fits) of the blocked cross-validation of one global linear fit, and
#: most bytes of their stacked moments X'X (many channels times a long pattern: fewer blocks)
MAX_BLOCKS = 100
BLOCK_BYTES = 2**28


def iterate_one_step(design, coef, C: int, horizons) -> np.ndarray:
    """(N, len(horizons), C) forecasts of a one-step linear autoregression iterated to each
    of ``horizons``: each step's forecast becomes the newest sample of the pattern.

    ``design`` (N, 1 + E*C) holds ``[1, z_t, z_(t-1), ..., z_(t-E+1)]`` (delay 1, newest
    first, channels together); ``coef`` (1 + E*C, C) is the one-step fit (intercept row first),
    or (N, 1 + E*C, C) a fit per row (the blocked cross-validation's)."""
    H, EC = max(horizons), design.shape[1] - 1
    # every step's forecast goes left of the pattern, so the pattern a step starts from is a
    # view of E*C columns: (N, H*C forecasts newest first, then the E*C given values)
    path = np.empty((len(design), H * C + EC))
    path[:, H * C :] = design[:, 1:]
    want = {h: i for i, h in enumerate(horizons)}
    out = np.empty((len(design), len(horizons), C))
    for step in range(1, H + 1):
        at = (H - step) * C  # this step's forecast; its pattern starts right of it
        state = path[:, at + C : at + C + EC]
        if coef.ndim == 2:
            path[:, at : at + C] = coef[0] + state @ coef[1:]  # (N, C)
        else:
            path[:, at : at + C] = coef[:, 0] + np.einsum("nd,ndc->nc", state, coef[:, 1:])
        if step in want:
            out[:, want[step]] = path[:, at : at + C]
    return out


def _ridge_solve(G0, XtY, ridge):
    """Ridge coefficients from the moments X'X (..., D1, D1) and X'Y (..., D1, M), one fit
    per leading index; ``ridge`` is relative to the mean diagonal of each X'X."""
    G = G0.copy()
    diagonal = np.einsum("...ii->...i", G)  # a view: the ridge goes onto each diagonal
    diagonal += ridge * np.trace(G0, axis1=-2, axis2=-1)[..., None] / G.shape[-1] + 1e-12
    return np.linalg.solve(G, XtY)


class AnalogueData:
    """Embeddings, futures and global linear fits of one series for one (E, τ).

    ``futures[:, i]`` is ``z[t + horizons[i]]`` (NaN past the end); :meth:`linear` applies the
    ridge coefficients of each horizon fitted on the rows whose embedding and futures are all
    known (the training library), one fit per relative ridge in ``ridges`` (None: a series
    to forecast from, which borrows the training fit). :meth:`recursive` iterates the
    one-step fit instead (delay 1, and 1 the first of ``horizons``).
    """

    def __init__(self, z, embedding, delay, horizons, ridges):
        self.keys = delay_embedding(z, embedding, delay=delay)  # (T, E*C)
        T, C = z.shape
        self.C, self.delay = C, delay
        self.horizons = list(horizons)
        fut = np.full((T, len(self.horizons), C), np.nan)
        for i, h in enumerate(self.horizons):
            if h < T:
                fut[: T - h, i] = z[h:]
        self.futures = fut
        self.usable = np.isfinite(self.keys).all(1) & np.isfinite(fut).all(axis=(1, 2))
        self.coef, self._blocks, self._block_coef = {}, {}, {}
        if ridges is None or not self.usable.any():  # a series to forecast from borrows the
            return  # training fit; one without a complete row has no fit (the caller skips it)
        X = self._design(self.keys[self.usable])
        Y = fut[self.usable].reshape(len(X), -1)
        self._moments = (X.T @ X, X.T @ Y)
        for ridge in ridges:
            self.coef[ridge] = _ridge_solve(*self._moments, ridge)

    def keep_coefficients_only(self) -> None:
        """Drop the embeddings, futures and moments: what :meth:`linear` and :meth:`recursive`
        do not read (kept between calls, a long pattern's embeddings take hundreds of MB)."""
        self.keys = self.futures = self.usable = self._moments = None
        self._blocks, self._block_coef = {}, {}

    def _one_step(self, coef) -> np.ndarray:
        """The horizon-1 columns of linear fits ``coef`` (..., D1, n_horizons * C)."""
        if self.delay != 1 or self.horizons[0] != 1:
            raise ValueError("the recursive linear model needs delay 1 and a one-step fit "
                             f"(delay {self.delay}, horizons {self.horizons})")  # fmt: skip
        return coef[..., : self.C]

    def blocked_linear(self, ridge, rows, gap: int, fits=False, recursive=False):
        """Forecasts (len(rows), n_horizons, C) of ``rows`` by ridge fits that never saw them
        nor any row within ``gap`` of them in time; with ``fits``, also each row's fit
        (len(rows), D1, n_horizons * C), which a hybrid forecast applies to the row's
        neighbours. ``recursive``: the forecasts of each fit's one-step part iterated
        (:meth:`recursive`).

        The series is cut into blocks of ``gap`` rows (longer where that would make more than
        MAX_BLOCKS, or stacked moments over BLOCK_BYTES); a block is forecast by the fit on
        the library less that block and its two neighbours (the moments downdated, every
        block's fit solved in one batch; none where no more rows than coefficients remain).
        With ``gap`` the overlap of two rows' patterns and futures, no row whose samples the
        forecast shares enters its fit: plain leave-one-out of a global fit keeps the
        query's neighbours in time, which on a smooth series hold nearly its future.
        """
        rows = np.asarray(rows, dtype=int)
        shape = (len(self.horizons), self.C)
        d1 = len(self._moments[0])
        length, (G, XtY, kept) = self.block_moments(gap)  # (n_blocks, D1, D1), (.., D1, M)
        if (length, ridge) not in self._block_coef:  # the direct and recursive models share it
            self._block_coef[length, ridge] = _ridge_solve(G, XtY, ridge)
        coef = self._block_coef[length, ridge]  # (n_blocks, D1, M)
        block = rows // length
        design = self._design(np.nan_to_num(self.keys[rows]))  # (Q, D1)
        fit = coef[block]  # (Q, D1, M): each row's block's fit
        if recursive:  # every row iterates its own block's one-step fit
            out = iterate_one_step(design, self._one_step(fit), self.C, self.horizons)
        else:
            out = (design[:, None, :] @ fit).reshape(len(rows), *shape)
        starved = kept[block] <= d1  # no more rows left than coefficients: no fit
        out[starved] = np.nan
        return (out, fit) if fits else out

    def block_moments(self, gap: int):
        """``(length, (X'X, X'Y, row count))`` of the library less each block of ``length``
        rows and its two neighbours, for :meth:`blocked_linear` with ``gap`` (cached: the
        ridges of one fit share them; fill the cache before fitting them in threads)."""
        d1 = len(self._moments[0])
        most = max(1, min(MAX_BLOCKS, BLOCK_BYTES // (8 * d1 * d1)))
        length = max(gap, 1, -(-len(self.keys) // most))
        if length not in self._blocks:
            lib = np.flatnonzero(self.usable)
            n_blocks = -(-len(self.keys) // length)
            X = np.zeros((n_blocks * length, len(self._moments[0])))
            Y = np.zeros((n_blocks * length, self._moments[1].shape[1]))
            X[lib] = self._design(self.keys[lib])  # rows off the library stay 0: no moment
            Y[lib] = self.futures[lib].reshape(len(lib), -1)
            X = X.reshape(n_blocks, length, -1)
            Y = Y.reshape(n_blocks, length, -1)
            gram = X.transpose(0, 2, 1) @ X
            cross = X.transpose(0, 2, 1) @ Y
            count = np.bincount(lib // length, minlength=n_blocks)

            def with_neighbours(a):  # block b's sum plus blocks b - 1 and b + 1
                padded = np.concatenate([np.zeros_like(a[:1]), a, np.zeros_like(a[:1])])
                return padded[:-2] + padded[1:-1] + padded[2:]

            G0, XtY0 = self._moments
            self._blocks[length] = (G0 - with_neighbours(gram), XtY0 - with_neighbours(cross),
                                    len(lib) - with_neighbours(count))  # fmt: skip
        return length, self._blocks[length]

    @staticmethod
    def _design(keys):
        return np.concatenate([np.ones((len(keys), 1)), keys], axis=1)

    def linear(self, keys, ridge) -> np.ndarray:
        """(N, n_horizons, C) global linear forecasts from embeddings ``keys``."""
        pred = self._design(keys) @ self.coef[ridge]
        return pred.reshape(len(keys), len(self.horizons), self.C)

    def recursive(self, keys, ridge, horizons) -> np.ndarray:
        """(N, len(horizons), C) forecasts from embeddings ``keys`` by the one-step fit
        iterated (:func:`iterate_one_step`)."""
        one_step = self._one_step(self.coef[ridge])
        return iterate_one_step(self._design(keys), one_step, self.C, horizons)
