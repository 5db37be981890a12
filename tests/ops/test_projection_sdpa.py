"""projection_sdpa: semantics against a plain loop, fused vs math, gradients, numerics, errors.

The loop definition is the ``loop_reference`` fixture (tests/ops/conftest.py).
"""

import itertools

import pytest
import torch
import torch.nn.functional as F

from tssdpa import projection_sdpa, projection_weights
from tssdpa.ops import FUSED_MAX_LOGIT_ERROR

D64 = torch.float64


CASES = [
    dict(),
    dict(is_causal=True),
    dict(window=3),
    dict(is_causal=True, window=4),
    dict(decay=0.7),
    dict(is_causal=True, decay=0.8),
    dict(is_causal=True, window=5, decay=0.6),
    dict(decay=1.0, is_causal=True),
    dict(tau=1.5, timestamps=True),
    dict(is_causal=True, tau=0.3, timestamps=True),
    dict(mask="bool"),
    dict(mask="float"),
    dict(mask="float", is_causal=True, decay=0.9),
]


@pytest.mark.parametrize(
    "case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()) or "plain"
)
@pytest.mark.parametrize("L,S", [(6, 6), (5, 8), (8, 5)])
@pytest.mark.parametrize("backend", ["math", "fused"])
def test_matches_loop_definition(case, L, S, backend, loop_reference):
    g = torch.Generator().manual_seed(L * 100 + S)
    q = torch.randn(L, 3, dtype=D64, generator=g)
    k = torch.randn(S, 3, dtype=D64, generator=g)
    v = torch.randn(S, 2, dtype=D64, generator=g)
    case = dict(case)
    kw, ref_kw = {}, {}
    if case.pop("timestamps", False):
        if L != S:
            tq, tk = torch.rand(L, generator=g).cumsum(0), torch.rand(S, generator=g).cumsum(0)
            kw["timestamps"] = (tq, tk)
        else:
            tq = tk = torch.rand(L, generator=g).cumsum(0)
            kw["timestamps"] = tq
        ref_kw.update(tq=tq, tk=tk)
    mask_kind = case.pop("mask", None)
    if mask_kind == "bool":
        mask = torch.rand(L, S, generator=g) > 0.4
        mask[0] = False  # a fully masked row
    elif mask_kind == "float":
        mask = torch.randn(L, S, dtype=D64, generator=g)
        mask[torch.rand(L, S, generator=g) > 0.7] = float("-inf")
        mask[-1] = float("-inf")
    else:
        mask = None
    kw.update(case)
    ref_kw.update(case)
    got = projection_sdpa(q, k, v, sigma=1.3, attn_mask=mask, backend=backend, **kw)
    want = loop_reference(q, k, v, 1.3, mask=mask, **ref_kw)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)


GRID = list(
    itertools.product(
        [(2, 3), (1, 1)],  # batch, heads
        [(7, 7), (5, 11)],  # L, S
        [(4, 4), (3, 6)],  # E, Ev
        [1e-3, 0.5, 1e3],  # sigma
        [
            dict(),
            dict(is_causal=True),
            dict(window=3),
            dict(is_causal=True, decay=0.9),
            dict(is_causal=True, window=4, decay=0.5),
            dict(tau=2.0, timestamps=True),
            dict(mask="bool"),
            dict(mask="float", is_causal=True),
        ],
    )
)


@pytest.mark.parametrize("bh,ls,ee,sigma,case", GRID)
def test_fused_matches_math_outputs_and_gradients(bh, ls, ee, sigma, case):
    (B, H), (L, S), (E, Ev) = bh, ls, ee
    g = torch.Generator().manual_seed(B + 10 * L + 100 * E)
    q = torch.randn(B, H, L, E, dtype=D64, generator=g) * 0.5
    # keys near the queries so that even σ = 1e-3 gives non-trivial weights
    k = torch.cat(
        [q[..., :1, :].expand(B, H, S, E) + 1e-3 * torch.randn(B, H, S, E, dtype=D64, generator=g)],
        -2,
    )
    k = k + torch.randn(B, H, S, E, dtype=D64, generator=g) * (sigma if sigma < 1 else 1.0)
    v = torch.randn(B, H, S, Ev, dtype=D64, generator=g)
    case = dict(case)
    kw = dict(case)
    if kw.pop("timestamps", False):
        kw["timestamps"] = (
            torch.rand(L, generator=g).cumsum(0),
            torch.rand(S, generator=g).cumsum(0),
        )
    mask_kind = kw.pop("mask", None)
    if mask_kind == "bool":
        kw["attn_mask"] = torch.rand(L, S, generator=g) > 0.3
    elif mask_kind == "float":
        kw["attn_mask"] = torch.randn(B, 1, L, S, dtype=D64, generator=g)
    outs, grads = [], []
    for backend in ("math", "fused"):
        qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
        y = projection_sdpa(qq, kk, vv, sigma=sigma, backend=backend, **kw)
        (y * torch.linspace(-1, 1, Ev, dtype=D64)).sum().backward()
        outs.append(y)
        grads.append([qq.grad, kk.grad, vv.grad])
    torch.testing.assert_close(outs[1], outs[0], rtol=1e-7, atol=1e-9)
    for gf, gm in zip(grads[1], grads[0]):
        torch.testing.assert_close(gf, gm, rtol=1e-6, atol=1e-7 / min(sigma, 1.0) ** 2 * 1e-3)


def test_gradcheck_math_including_sigma_and_decay():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 2, 5, 3, dtype=D64, generator=g, requires_grad=True)
    k = torch.randn(2, 2, 6, 3, dtype=D64, generator=g, requires_grad=True)
    v = torch.randn(2, 2, 6, 2, dtype=D64, generator=g, requires_grad=True)
    sigma = torch.tensor([0.8, 1.7], dtype=D64, requires_grad=True)
    decay = torch.tensor([0.6, 0.9], dtype=D64, requires_grad=True)

    def f(q, k, v, sigma, decay):
        return projection_sdpa(q, k, v, sigma=sigma, decay=decay, is_causal=True, backend="math")

    assert torch.autograd.gradcheck(f, (q, k, v, sigma, decay))


def test_gradcheck_math_tau_with_timestamps():
    g = torch.Generator().manual_seed(1)
    q = torch.randn(1, 6, 2, dtype=D64, generator=g, requires_grad=True)
    v = torch.randn(1, 6, 2, dtype=D64, generator=g, requires_grad=True)
    tau = torch.tensor(0.7, dtype=D64, requires_grad=True)
    sigma = torch.tensor(1.2, dtype=D64, requires_grad=True)
    t = torch.rand(6, generator=g, dtype=D64).cumsum(0)

    def f(q, v, tau, sigma):
        return projection_sdpa(
            q, q, v, sigma=sigma, tau=tau, timestamps=t, is_causal=True, backend="math"
        )

    assert torch.autograd.gradcheck(f, (q, v, tau, sigma))


def test_fused_gradients_to_sigma_and_decay_match_math():
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 3, 9, 4, dtype=D64, generator=g) for _ in range(3))
    grads = []
    for backend in ("math", "fused"):
        s = torch.tensor([0.5, 1.0, 3.0], dtype=D64, requires_grad=True)
        d = torch.tensor([0.5, 0.8, 0.99], dtype=D64, requires_grad=True)
        projection_sdpa(q, k, v, sigma=s, decay=d, is_causal=True, backend=backend).sum().backward()
        grads.append((s.grad, d.grad))
    torch.testing.assert_close(grads[1][0], grads[0][0])
    torch.testing.assert_close(grads[1][1], grads[0][1])


@pytest.mark.parametrize("backend", ["math", "fused"])
def test_unit_norm_identity_with_standard_sdpa(backend):
    # ||q-k||² = 2 - 2 q·k for unit vectors: the projection weights at σ = 1 are softmax(q·k).
    g = torch.Generator().manual_seed(3)
    q = F.normalize(torch.randn(2, 4, 10, 8, generator=g), dim=-1)
    k = F.normalize(torch.randn(2, 4, 12, 8, generator=g), dim=-1)
    v = torch.randn(2, 4, 12, 5, generator=g)
    want = F.scaled_dot_product_attention(q, k, v, scale=1.0)
    torch.testing.assert_close(projection_sdpa(q, k, v, sigma=1.0, backend=backend), want)
    want_c = F.scaled_dot_product_attention(
        q, k[..., :10, :], v[..., :10, :], scale=1.0, is_causal=True
    )
    got_c = projection_sdpa(
        q, k[..., :10, :], v[..., :10, :], sigma=1.0, is_causal=True, backend=backend
    )
    torch.testing.assert_close(got_c, want_c)


def test_value_none_averages_the_keys():
    g = torch.Generator().manual_seed(4)
    q, k = torch.randn(7, 3, generator=g), torch.randn(9, 3, generator=g)
    torch.testing.assert_close(
        projection_sdpa(q, k, sigma=0.9), projection_sdpa(q, k, k, sigma=0.9)
    )
    w = projection_weights(q, k, sigma=0.9)
    torch.testing.assert_close(w @ k, projection_sdpa(q, k, sigma=0.9))
    torch.testing.assert_close(w.sum(-1), torch.ones(7))


@pytest.mark.parametrize("backend", ["auto", "math", "fused"])
@pytest.mark.parametrize("sigma", [1e-4, 1e-2, 1.0, 1e2, 1e4])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e4])
def test_float32_outputs_finite_over_sigma_and_magnitude(backend, sigma, scale):
    g = torch.Generator().manual_seed(5)
    q = torch.randn(2, 16, 4, generator=g) * scale
    k = torch.randn(2, 20, 4, generator=g) * scale
    v = torch.randn(2, 20, 3, generator=g) * scale
    for kw in (dict(), dict(is_causal=True, decay=0.9), dict(window=3)):
        y = projection_sdpa(q, k, v, sigma=sigma, backend=backend, **kw)
        assert torch.isfinite(y).all()
        # a convex combination of value rows: inside their range
        assert (y.amax() <= v.amax() * (1 + 1e-5) + 1e-6) and (
            y.amin() >= v.amin() * (1 + 1e-5) - 1e-6
        )


def test_auto_is_exact_where_the_expansion_would_not_be():
    # A large common offset and a small σ: the expanded form in float32 is far off, the
    # distance form is exact; auto must pick the exact one.
    g = torch.Generator().manual_seed(6)
    base = torch.randn(1, 30, 3, generator=g, dtype=D64)
    q = base + 1e-2 * torch.randn(1, 30, 3, generator=g, dtype=D64)
    k = base * 50
    exact = projection_sdpa(q, k, k, sigma=0.05, backend="math")
    got = projection_sdpa(q.float(), k.float(), k.float(), sigma=0.05, backend="auto")
    torch.testing.assert_close(got.double(), exact, rtol=1e-4, atol=1e-4)
    assert FUSED_MAX_LOGIT_ERROR > 0


def test_auto_under_torch_compile_is_the_fused_backend_without_reading_the_device():
    # auto's error bound is read from the device at every call: a graph break per call, so a
    # compiled model ran projection piecemeal; traced, auto takes the kernels named fused, and
    # the default validate=True (its scan a device read too) scans nothing
    g = torch.Generator().manual_seed(8)
    q, k, v = (torch.randn(2, 12, 4, generator=g) for _ in range(3))

    def auto(q, k, v):
        return projection_sdpa(q, k, v, sigma=0.7, is_causal=True, backend="auto")

    torch._dynamo.reset()
    try:
        explained = torch._dynamo.explain(auto)(q, k, v)
        compiled = torch.compile(auto, backend="eager", fullgraph=True)(q, k, v)
    finally:
        torch._dynamo.reset()
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    fused = projection_sdpa(q, k, v, sigma=0.7, is_causal=True, backend="fused")
    torch.testing.assert_close(compiled, fused, rtol=0, atol=0)


def test_compiled_auto_takes_the_exact_distances_where_one_over_sigma_squared_overflows():
    # compiled, auto skipped the fused backend's check of a float sigma: NaN rows, where eager
    # auto falls back to the distances and a named fused backend refuses
    g = torch.Generator().manual_seed(9)
    q, k, v = (torch.randn(1, 8, 3, generator=g) for _ in range(3))

    def auto(q, k, v):
        return projection_sdpa(q, k, v, sigma=1e-25, is_causal=True, validate=False)

    torch._dynamo.reset()
    try:
        compiled = torch.compile(auto, backend="eager", fullgraph=True)(q, k, v)
    finally:
        torch._dynamo.reset()
    torch.testing.assert_close(compiled, auto(q, k, v), rtol=0, atol=0)
    assert torch.isfinite(compiled).all()


def test_centring_makes_fused_exact_for_offset_signals():
    # Sensor signals ride on large offsets; distances do not care, and neither may the fused path.
    g = torch.Generator().manual_seed(7)
    x = torch.randn(1, 40, 2, generator=g, dtype=D64)
    want = projection_sdpa(x, x, sigma=0.3, is_causal=True, backend="math")
    got = (
        projection_sdpa(
            (x + 1e4).float(), (x + 1e4).float(), sigma=0.3, is_causal=True, backend="fused"
        )
        - 1e4
    )
    torch.testing.assert_close(got.double(), want, rtol=0, atol=5e-3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("backend", ["math", "fused"])
def test_half_precision_forms_logits_in_float32(dtype, backend):
    g = torch.Generator().manual_seed(8)
    q = torch.randn(2, 12, 4, generator=g).to(dtype)
    k = (q.float() + 0.01 * torch.randn(2, 12, 4, generator=g)).to(dtype)
    v = torch.randn(2, 12, 3, generator=g).to(dtype)
    y = projection_sdpa(q, k, v, sigma=0.02, is_causal=True, backend=backend)
    assert y.dtype == dtype
    want = projection_sdpa(
        q.double(), k.double(), v.double(), sigma=0.02, is_causal=True, backend="math"
    )
    # only the final rounding to half remains
    torch.testing.assert_close(y.double(), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("kw", [dict(), dict(is_causal=True, decay=0.9), dict(window=4)])
@pytest.mark.parametrize("backend", ["math", "fused"])
def test_bfloat16_autocast_leaves_the_logits_in_float32(backend, kw):
    # Under mixed precision the caller's autocast must not round (q·k - ||k||²/2)/σ² to 8 bits:
    # outputs and gradients equal the float32 computation without autocast.
    g = torch.Generator().manual_seed(9)
    q = torch.randn(2, 16, 8, generator=g)
    k = q + 0.01 * torch.randn(2, 16, 8, generator=g)
    v = torch.randn(2, 16, 3, generator=g)
    results = []
    for autocast in (False, True):
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            y = projection_sdpa(*leaves, sigma=0.02, backend=backend, **kw)
            w = projection_weights(leaves[0], leaves[1], sigma=0.02, **kw)
        assert y.dtype == w.dtype == torch.float32
        y.square().sum().backward()
        results.append([y, w, *(t.grad for t in leaves)])
    for got, want in zip(results[1], results[0]):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_autocast_guard_does_not_ask_torch_on_every_call(monkeypatch):
    # torch.compile before torch 2.13 cannot trace torch.amp.is_autocast_available: a call on
    # every forward broke the compiled graph there (H200 run of 2026-11-27). Known device types
    # are asked once, at import.
    def untraceable(device_type):
        raise AssertionError(f"is_autocast_available({device_type!r}) called per call")

    monkeypatch.setattr(torch.amp, "is_autocast_available", untraceable)
    q = torch.randn(2, 5, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = projection_sdpa(q, q, q, sigma=0.5, backend="fused")
    assert y.dtype == torch.float32


@pytest.mark.parametrize("backend", ["math", "fused"])
def test_fully_masked_rows_are_zero_with_finite_gradients(backend):
    q = torch.randn(5, 3, dtype=D64, requires_grad=True)
    k = torch.randn(4, 3, dtype=D64, requires_grad=True)
    v = torch.randn(4, 2, dtype=D64, requires_grad=True)
    mask = torch.ones(5, 4, dtype=torch.bool)
    mask[1] = False
    y = projection_sdpa(q, k, v, attn_mask=mask, backend=backend)
    assert torch.equal(y[1], torch.zeros(2, dtype=D64))
    y.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    # non-causal window beyond the keys: rows 6.. have no key within |i-j| < 2
    y2 = projection_sdpa(torch.randn(9, 3), torch.randn(4, 3), window=2, backend=backend)
    assert torch.equal(y2[6:], torch.zeros(3, 3)) and y2[:5].abs().sum() > 0


def test_float_mask_minus_inf_row_is_zero():
    q, k = torch.randn(3, 2), torch.randn(4, 2)
    m = torch.zeros(3, 4)
    m[2] = float("-inf")
    for backend in ("math", "fused"):
        y = projection_sdpa(q, k, attn_mask=m, backend=backend)
        assert torch.equal(y[2], torch.zeros(2)) and torch.isfinite(y).all()


def test_inputs_are_not_mutated():
    q, k, v = torch.randn(2, 6, 3), torch.randn(2, 6, 3), torch.randn(2, 6, 2)
    s, d = torch.tensor([0.5, 2.0]), torch.tensor([0.9, 0.5])
    m = torch.zeros(6, 6)
    m[0, 1] = float("-inf")
    before = [t.clone() for t in (q, k, v, s, d, m)]
    for backend in ("math", "fused"):
        projection_sdpa(q, k, v, sigma=s, decay=d, attn_mask=m, is_causal=True, backend=backend)
    for a, b in zip((q, k, v, s, d, m), before):
        assert torch.equal(a, b)


def test_dropout_is_reproducible_and_zero_dropout_is_identity():
    q, k, v = torch.randn(2, 8, 3), torch.randn(2, 8, 3), torch.randn(2, 8, 4)
    torch.manual_seed(0)
    a = projection_sdpa(q, k, v, dropout_p=0.5, backend="math")
    torch.manual_seed(0)
    b = projection_sdpa(q, k, v, dropout_p=0.5, backend="math")
    assert torch.equal(a, b) and not torch.allclose(a, projection_sdpa(q, k, v, backend="math"))
    assert torch.equal(
        projection_sdpa(q, k, v, dropout_p=0.0, backend="math"),
        projection_sdpa(q, k, v, backend="math"),
    )
    assert torch.isfinite(projection_sdpa(q, k, v, dropout_p=0.3, backend="fused")).all()


@pytest.mark.parametrize(
    "kwargs,exc,word",
    [
        (dict(sigma=0.0), ValueError, "sigma"),
        (dict(sigma=-1.0), ValueError, "sigma"),
        (dict(sigma=float("nan")), ValueError, "sigma"),
        (dict(sigma=float("inf")), ValueError, "sigma"),
        (dict(sigma=torch.tensor([1.0, -1.0])), ValueError, "sigma"),
        (dict(sigma=torch.ones(3)), ValueError, "sigma"),
        (dict(sigma="1"), TypeError, "sigma"),
        (dict(decay=0.0), ValueError, "decay"),
        (dict(decay=1.5), ValueError, "decay"),
        (dict(decay=torch.tensor([0.5, 1.2])), ValueError, "decay"),
        (dict(window=0), ValueError, "window"),
        (dict(window=2.5), TypeError, "window"),
        (dict(attn_mask=torch.ones(3, 3, dtype=torch.bool)), ValueError, "attn_mask"),
        (dict(attn_mask=torch.ones(6, 7, dtype=torch.int64)), TypeError, "attn_mask"),
        (dict(attn_mask=torch.full((6, 7), float("nan"))), ValueError, "attn_mask"),
        (dict(tau=1.0, timestamps=torch.arange(6.0)), ValueError, "timestamps"),
        (
            dict(tau=1.0, timestamps=(torch.arange(6.0), torch.arange(6.0))),
            ValueError,
            "timestamps",
        ),
        (
            dict(tau=1.0, timestamps=(torch.arange(6.0), torch.tensor([0.0] * 6 + [float("nan")]))),
            ValueError,
            "timestamps",
        ),
        (dict(timestamps=(torch.arange(6.0), torch.arange(7.0))), ValueError, "tau"),
        (dict(tau=1.0), ValueError, "timestamps"),
        (dict(tau=0.0, timestamps=(torch.arange(6.0), torch.arange(7.0))), ValueError, "tau"),
        (
            dict(decay=0.5, tau=1.0, timestamps=(torch.arange(6.0), torch.arange(7.0))),
            ValueError,
            "decay",
        ),
        (dict(dropout_p=1.0), ValueError, "dropout_p"),
        (dict(backend="flash"), ValueError, "backend"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(kwargs, exc, word):
    q, k, v = torch.randn(2, 6, 3), torch.randn(2, 7, 3), torch.randn(2, 7, 2)
    with pytest.raises(exc, match=word):
        projection_sdpa(q, k, v, **kwargs)


@pytest.mark.parametrize(
    "args,exc,word",
    [
        ((torch.randn(6), torch.randn(6, 3)), ValueError, "query"),
        ((torch.randn(6, 3), torch.randn(6, 4)), ValueError, "last dim"),
        ((torch.randn(6, 3), torch.randn(6, 3), torch.randn(5, 2)), ValueError, "value"),
        ((torch.randn(2, 6, 3), torch.randn(3, 6, 3)), ValueError, "broadcast"),
        ((torch.randn(6, 3), torch.randn(6, 3, dtype=D64)), TypeError, "dtype"),
        (
            (torch.ones(6, 3, dtype=torch.int64), torch.ones(6, 3, dtype=torch.int64)),
            TypeError,
            "floating",
        ),
        ((torch.randn(6, 3).numpy(), torch.randn(6, 3)), TypeError, "query"),
    ],
)
def test_bad_tensors_raise_naming_the_argument(args, exc, word):
    with pytest.raises(exc, match=word):
        projection_sdpa(*args)


def test_per_head_sigma_equals_separate_calls():
    g = torch.Generator().manual_seed(9)
    q, k, v = (torch.randn(2, 3, 6, 4, generator=g) for _ in range(3))
    s = torch.tensor([0.3, 1.0, 5.0])
    y = projection_sdpa(q, k, v, sigma=s, is_causal=True)
    for h in range(3):
        torch.testing.assert_close(
            y[:, h], projection_sdpa(q[:, h], k[:, h], v[:, h], sigma=float(s[h]), is_causal=True)
        )


def test_float64_timestamps_keep_resolution_at_epoch_scale():
    # Epoch-second timestamps are ~1.7e9; their float32 spacing is 128 s. Differences of
    # 0.01 s must still be resolved.
    t = 1.7e9 + torch.arange(8, dtype=D64) * 0.01
    x = torch.randn(8, 2, dtype=D64)
    a = projection_sdpa(x, x, sigma=1.0, tau=0.02, timestamps=t, is_causal=True, backend="math")
    b = projection_sdpa(
        x, x, sigma=1.0, tau=0.02, timestamps=t - 1.7e9, is_causal=True, backend="math"
    )
    torch.testing.assert_close(a, b)


def test_decay_with_timestamps_is_the_deprecated_spelling_of_tau():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(7, 2, dtype=D64, generator=g)
    t = torch.rand(7, generator=g, dtype=D64).cumsum(0)
    want = projection_sdpa(x, x, sigma=0.9, tau=0.4, timestamps=t, is_causal=True)
    with pytest.warns(DeprecationWarning, match="tau"):
        got = projection_sdpa(x, x, sigma=0.9, decay=0.4, timestamps=t, is_causal=True)
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize(
    "kw",
    [
        dict(is_causal=True, window=7),
        dict(window=5),
        dict(is_causal=True, window=40, decay=0.9),
        dict(window=3, tau=0.5, timestamps=True),
    ],
)
@pytest.mark.parametrize("L,S", [(700, 700), (650, 720)])
def test_long_windowed_requests_run_blockwise_and_match_math(kw, L, S):
    # S > 2·(WINDOW_BLOCK + W): the fused path attends block by block, never forming L×S.
    g = torch.Generator().manual_seed(L + S)
    kw = dict(kw)
    if kw.pop("timestamps", False):
        kw["timestamps"] = (
            torch.rand(L, generator=g, dtype=D64).cumsum(0),
            torch.rand(S, generator=g, dtype=D64).cumsum(0),
        )
    q = torch.randn(2, L, 3, dtype=D64, generator=g)
    k = torch.randn(2, S, 3, dtype=D64, generator=g)
    v = torch.randn(2, S, 2, dtype=D64, generator=g)
    res = []
    for backend in ("math", "fused"):
        qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
        y = projection_sdpa(qq, kk, vv, sigma=0.8, backend=backend, **kw)
        y.square().sum().backward()
        res.append((y, qq.grad, kk.grad, vv.grad))
    for a, b in zip(*res):
        torch.testing.assert_close(b, a, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize(
    "kw", [dict(), dict(is_causal=True), dict(decay=0.99), dict(is_causal=True, window=16)]
)
@pytest.mark.parametrize("grad", [False, True], ids=["fwd", "fwd+bwd"])
def test_fused_path_stays_on_the_flash_kernel(kw, grad):
    # torch's flash kernels need one head width for q, k and v; with E+1 vs E,
    # F.scaled_dot_product_attention falls back silently to the kernel that materialises
    # (B·H, L, S). Allow only flash there, and (the CPU paths call the aten flash op
    # directly, which sdpa_kernel does not govern) see that no math kernel runs at all.
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile

    q, k, v = (torch.randn(1, 2, 64, 16, requires_grad=grad) for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), profile(activities=[ProfilerActivity.CPU]) as p:
        y = projection_sdpa(q, k, v, sigma=4.0, backend="fused", **kw)
        if grad:
            y.sum().backward()
    names = {e.name for e in p.events()}
    assert not any("attention_math" in n for n in names)
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in names
    if grad:
        assert "aten::_scaled_dot_product_flash_attention_for_cpu_backward" in names
    torch.testing.assert_close(y, projection_sdpa(q, k, v, sigma=4.0, backend="math", **kw))
