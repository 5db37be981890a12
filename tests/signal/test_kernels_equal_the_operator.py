"""Every numpy kernel of the signal tier is projection SDPA: the same numbers as
``tssdpa.projection_sdpa(..., backend="math")`` on the same delay embeddings.

FIR (causal window), IIR (decay, and decay without any window), timestamps (tau), two-sided
(zero-phase) windows, the one-row step kernel, and kernel regression over a key library.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tssdpa import projection_sdpa, projection_weights
from tssdpa.signal.embedding import delay_embedding
from tssdpa.signal.lags import attend_lags, attend_newest, decay_logits
from tssdpa.signal.library import kernel_regression

T, C, SIGMA = 60, 2, 0.9


def series(m, seed=0):
    """(E, V, times): finite embeddings of length m, their values and sample times."""
    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.normal(size=(T + m - 1, C)), axis=0) * 0.3
    E = delay_embedding(x, m)[m - 1 :]
    return E, x[m - 1 :], np.cumsum(rng.uniform(0.1, 1.5, T))


def operator(E, V, **kw):
    t = lambda a: torch.from_numpy(np.array(a))  # noqa: E731
    if "timestamps" in kw:
        kw["timestamps"] = t(kw["timestamps"])
    return projection_sdpa(t(E), t(E), t(V), sigma=SIGMA, backend="math", **kw).numpy()


def lag_kernel(E, V, lag_min, lag_max, **kw):
    """attend_lags over the whole series: pad so every key index t - l exists (NaN = no key)."""
    P = max(lag_max, 0)
    F = max(-lag_min, 0)

    def pad(a, fill):
        return np.concatenate(
            [np.full((P, *a.shape[1:]), fill), a, np.full((F, *a.shape[1:]), fill)]
        )

    if "times" in kw:
        kw["times"] = pad(kw["times"], np.nan)
    return attend_lags(pad(E, np.nan), pad(V, np.nan), (P, P + T), lag_min, lag_max, **kw)


@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("window", [1, 5, 17])
def test_causal_fir_kernel_is_the_windowed_causal_operator(m, window):
    E, V, _ = series(m)
    got = lag_kernel(E, V, 0, window - 1, sigma=SIGMA)
    np.testing.assert_allclose(got, operator(E, V, is_causal=True, window=window), rtol=1e-12)


@pytest.mark.parametrize("m", [1, 2])
@pytest.mark.parametrize("decay", [0.5, 0.9])
def test_iir_kernel_is_the_decayed_causal_operator(m, decay):
    E, V, _ = series(m, seed=1)
    # every lag of the series: the untruncated infinite-memory filter
    got = lag_kernel(E, V, 0, T - 1, sigma=SIGMA, decay=decay)
    np.testing.assert_allclose(got, operator(E, V, is_causal=True, decay=decay), rtol=1e-12)
    short = lag_kernel(E, V, 0, 7, sigma=SIGMA, decay=decay)
    want = operator(E, V, is_causal=True, window=8, decay=decay)
    np.testing.assert_allclose(short, want, rtol=1e-12)


@pytest.mark.parametrize("window", [4, None])
def test_timestamp_kernel_is_the_tau_operator(window):
    E, V, times = series(2, seed=2)
    lag_max = T - 1 if window is None else window - 1
    got = lag_kernel(E, V, 0, lag_max, sigma=SIGMA, times=times, tau=1.7)
    want = operator(E, V, is_causal=True, window=window, tau=1.7, timestamps=times)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("decay", [None, 0.8])
def test_two_sided_kernel_is_the_two_sided_operator(decay):
    E, V, _ = series(3, seed=3)
    got = lag_kernel(E, V, -5, 5, sigma=SIGMA, decay=decay)
    np.testing.assert_allclose(got, operator(E, V, window=6, decay=decay), rtol=1e-12)


def test_kernel_weights_are_the_operator_weights():
    # values = identity: the kernel returns its weight matrix row by row
    E, _, _ = series(2, seed=4)
    W = lag_kernel(E, np.eye(T), 0, 9, sigma=SIGMA, decay=0.9)
    t = torch.from_numpy(E)
    want = projection_weights(t, t, sigma=SIGMA, is_causal=True, window=10, decay=0.9).numpy()
    np.testing.assert_allclose(W, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("tau", [None, 1.3])
def test_step_kernel_is_the_last_row_of_the_operator(tau):
    m, K = 2, 12
    rng = np.random.default_rng(5)
    x = rng.normal(size=(K + m - 1, C))
    times = np.cumsum(rng.uniform(0.1, 1.0, K + m - 1))[m - 1 :]
    one = attend_newest(
        x,
        m,
        decay_logits(np.arange(K - 1, -1, -1), None if tau else 0.9, np.dtype(np.float64)),
        SIGMA,
        elapsed=times[-1] - times if tau else None,
        tau=tau,
    )
    E, V = delay_embedding(x, m)[m - 1 :], x[m - 1 :]
    kw = dict(tau=tau, timestamps=times) if tau else dict(decay=0.9)
    np.testing.assert_allclose(one, operator(E, V, is_causal=True, **kw)[-1], rtol=1e-12)


@pytest.mark.parametrize("null_distance", [None, 1.5])
def test_kernel_regression_is_the_unmasked_operator(null_distance):
    rng = np.random.default_rng(6)
    queries, keys = rng.normal(size=(40, 3)), rng.normal(size=(90, 3))
    values = rng.normal(size=(90, 4))
    (got,) = kernel_regression(queries, keys, values, [SIGMA], null_distance=null_distance)
    q, k, v = (torch.from_numpy(a) for a in (queries, keys, values))
    mask = None
    if null_distance is not None:
        # the pseudo-key: value 0, logit -r²/2σ² for every query, whatever its distance to k0
        k0 = torch.zeros(1, 3, dtype=torch.float64)
        k, v = torch.cat([k, k0]), torch.cat([v, torch.zeros(1, 4, dtype=torch.float64)])
        mask = torch.zeros(40, 91, dtype=torch.float64)
        mask[:, -1] = ((q - k0).square().sum(-1) - null_distance**2) / (2 * SIGMA**2)
    want = projection_sdpa(q, k, v, sigma=SIGMA, attn_mask=mask, backend="math").numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_excluding_the_sample_itself_is_masking_the_diagonal():
    E, V, _ = series(2, seed=7)
    got = lag_kernel(E, V, 0, 5, sigma=SIGMA, exclude_self=True)  # row 0: no key -> NaN
    allowed = ~torch.eye(T, dtype=torch.bool)
    want = operator(E, V, is_causal=True, window=6, attn_mask=allowed)
    assert np.isnan(got[0]).all()
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-12)


def test_keys_with_a_missing_value_are_masked_keys_of_that_channel_only():
    E, V, _ = series(1, seed=8)
    V = V.copy()
    V[[5, 6, 20], 1] = np.nan  # a key serves the channels its value has
    got = lag_kernel(E, V, 0, 9, sigma=SIGMA, decay=0.9)
    for c in range(V.shape[1]):  # one operator per channel, masking the keys without it
        usable = torch.from_numpy(~np.isnan(V[:, c]))
        mask = usable[None, :].expand(T, T)
        want = operator(
            E, np.nan_to_num(V[:, c : c + 1]), is_causal=True, window=10, decay=0.9, attn_mask=mask
        )
        np.testing.assert_allclose(got[:, c : c + 1], want, rtol=1e-12)
    # channel 0 takes the keys 5, 6, 20 as before: it equals the kernel without them missing
    whole = lag_kernel(E, np.where(np.isnan(V), 0.0, V), 0, 9, sigma=SIGMA, decay=0.9)
    np.testing.assert_allclose(got[:, 0], whole[:, 0], rtol=1e-12)
