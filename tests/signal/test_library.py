"""Kernel regression over a key library against explicit Nadaraya–Watson loops."""

from __future__ import annotations

import numpy as np
import pytest

import tssdpa.signal.library as library
from tssdpa.signal.library import kernel_regression, nearest_distance
from tssdpa.signal.reference import kernel_regression_reference


def nw_loop(queries, keys, values, sigma, null=None):
    """Nadaraya–Watson with explicit loops over queries and keys (max-shifted log weights).

    ``null``: a pseudo-key with value 0 at that distance from every query."""
    out = np.empty((len(queries), values.shape[1]))
    for i, q in enumerate(queries):
        logw = [-np.sum((q - k) ** 2) / (2.0 * sigma**2) for k in keys]
        vals = list(values)
        if null is not None:
            logw.append(-(null**2) / (2.0 * sigma**2))
            vals.append(np.zeros(values.shape[1]))
        top = max(logw)
        num, den = np.zeros(values.shape[1]), 0.0
        for lw, v in zip(logw, vals):
            w = np.exp(lw - top)
            num += w * v
            den += w
        out[i] = num / den
    return out


def nw_rows(queries, keys, values, sigma, null=None):
    """Nadaraya–Watson, one query at a time (keys vectorised): for longer reference runs."""
    out = np.empty((len(queries), values.shape[1]))
    for i, q in enumerate(queries):
        logw = -np.sum((keys - q) ** 2, axis=1) / (2.0 * sigma**2)
        top = logw.max() if null is None else max(logw.max(), -(null**2) / (2.0 * sigma**2))
        w = np.exp(logw - top)
        extra = 0.0 if null is None else np.exp(-(null**2) / (2.0 * sigma**2) - top)
        out[i] = w @ values / (w.sum() + extra)
    return out


@pytest.mark.parametrize("block", [7, 1024])
def test_kernel_regression_equals_explicit_nadaraya_watson_loop(monkeypatch, block):
    monkeypatch.setattr(library, "_QUERY_BLOCK", block)
    rng = np.random.default_rng(0)
    n = 30 if block == 7 else 1100  # both more queries than one block, and a ragged last block
    q = rng.normal(size=(n, 3))
    k = rng.normal(size=(25, 3))
    v = rng.normal(size=(25, 2))
    sigmas = [0.3, 1.0, 4.0]
    outs = kernel_regression(q, k, v, sigmas)
    assert len(outs) == len(sigmas)
    ref = nw_loop if n <= 100 else nw_rows
    for out, s in zip(outs, sigmas):
        assert out.shape == (n, 2)
        np.testing.assert_allclose(out, ref(q, k, v, s), rtol=1e-10, atol=1e-12)


def test_kernel_regression_blocking_does_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(50, 4)), rng.normal(size=(40, 4)), rng.normal(size=(40, 3))
    whole = kernel_regression(q, k, v, [0.5, 2.0])
    monkeypatch.setattr(library, "_QUERY_BLOCK", 7)
    blocked = kernel_regression(q, k, v, [0.5, 2.0])
    for a, b in zip(whole, blocked):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_kernel_regression_limits_are_nearest_neighbour_and_plain_mean():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(40, 3)), rng.normal(size=(30, 3)), rng.normal(size=(30, 2))
    tiny, huge = kernel_regression(q, k, v, [1e-3, 1e6])
    nearest = np.argmin(((q[:, None, :] - k[None, :, :]) ** 2).sum(-1), axis=1)
    # logits of -1e5 and below: only a numerically stable softmax gives the nearest key
    np.testing.assert_allclose(tiny, v[nearest], atol=1e-12)
    np.testing.assert_allclose(huge, np.broadcast_to(v.mean(0), huge.shape), atol=1e-9)


@pytest.mark.parametrize("null_distance", [None, 2.0])
def test_kernel_regression_past_the_floats_reach_keeps_the_limits_nearest_key_and_plain_mean(
    null_distance,
):
    """The estimators pass any finite sigma > 0. Below 1e-154 every -d²/2σ² overflowed (or
    was 0/0 once σ² underflowed) and the estimate was NaN; past 1e154 ``s**2`` raised
    OverflowError. Now the nearest key (or the null key, if nearer) and the plain mean, as
    at 1e-3 and 1e6."""
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(40, 3)), rng.normal(size=(30, 3)), rng.normal(size=(30, 2))
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        narrow = kernel_regression(q, k, v, [1e-160, 1e-320], null_distance=null_distance)
        wide = kernel_regression(q, k, v, [1e300], null_distance=null_distance)[0]
    tiny, huge = kernel_regression(q, k, v, [1e-3, 1e6], null_distance=null_distance)
    for got in narrow:
        np.testing.assert_allclose(got, tiny, atol=1e-12)
    np.testing.assert_allclose(wide, huge, atol=1e-9)
    q[3, 0] = np.nan  # a query with NaN keeps its NaN estimate, as at any sigma
    (got,) = kernel_regression(q, k, v, [1e-160], null_distance=null_distance)
    assert np.isnan(got[3]).all() and np.isfinite(np.delete(got, 3, axis=0)).all()


def test_kernel_regression_of_wide_values_is_accurate_to_float32_rounding():
    # more than 256 value columns (a long multichannel residual path) are averaged in float32
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(40, 3)), rng.normal(size=(30, 3)), rng.normal(size=(30, 300))
    for s, out in zip([0.1, 1.0], kernel_regression(q, k, v, [0.1, 1.0])):
        assert out.dtype == np.float64 and out.shape == (40, 300)
        np.testing.assert_allclose(out, nw_rows(q, k, v, s), rtol=0, atol=5e-6)


def test_kernel_regression_is_translation_invariant():
    # distances from |q|^2 + |k|^2 - 2 q.k: keys far from the origin must not lose precision
    rng = np.random.default_rng(6)
    q, k, v = rng.normal(size=(40, 3)), rng.normal(size=(30, 3)), rng.normal(size=(30, 2))
    near = kernel_regression(q, k, v, [0.05, 0.3])
    far = kernel_regression(q + 100.0, k + 100.0, v, [0.05, 0.3])
    for a, b in zip(near, far):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-8)


def test_kernel_regression_accepts_float32_queries():
    # keys and values are converted to float64; queries (e.g. float32 features) must be too
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(10, 3)), rng.normal(size=(12, 3)), rng.normal(size=(12, 1))
    (out,) = kernel_regression(q.astype(np.float32), k, v, [0.7])
    np.testing.assert_allclose(out, nw_loop(q.astype(np.float32), k, v, 0.7), rtol=1e-10)


def test_kernel_regression_null_distance_equals_a_zero_valued_pseudo_key():
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(9, 3)), rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    for null in (0.5, 2.0, 10.0):
        (got,) = kernel_regression(q, k, v, [0.8], null_distance=null)
        np.testing.assert_allclose(got, nw_loop(q, k, v, 0.8, null), rtol=1e-10, atol=1e-12)


def test_kernel_regression_reference_is_the_loop_definition():
    rng = np.random.default_rng(7)
    q, k, v = rng.normal(size=(6, 2)), rng.normal(size=(15, 2)), rng.normal(size=(15, 3))
    for null in (None, 1.0):
        want = nw_loop(q, k, v, 0.6, null)
        got = kernel_regression_reference(q, k, v, 0.6, null_distance=null)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_nearest_distance_is_the_smallest_euclidean_distance():
    rng = np.random.default_rng(8)
    q, k = rng.normal(size=(20, 3)), rng.normal(size=(50, 3))
    want = np.sqrt(((q[:, None, :] - k[None]) ** 2).sum(-1)).min(axis=1)
    np.testing.assert_allclose(nearest_distance(q, k), want, rtol=1e-10)
