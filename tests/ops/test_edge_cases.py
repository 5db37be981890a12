"""The operator on awkward input (issue 11): no keys, and non-finite keys on the fused path."""

import pytest
import torch

from tssdpa import projection_sdpa, projection_weights
from tssdpa.ops import reference, time_structure


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
def test_no_keys_give_the_documented_zero_rows_with_zero_gradients(backend):
    q = torch.randn(2, 4, 3, requires_grad=True)
    k = torch.randn(2, 0, 3, requires_grad=True)
    v = torch.randn(2, 0, 5, requires_grad=True)
    out = projection_sdpa(q, k, v, sigma=1.0, backend=backend)
    assert out.shape == (2, 4, 5) and torch.equal(out, torch.zeros(2, 4, 5))
    out.sum().backward()
    assert torch.equal(q.grad, torch.zeros_like(q))


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
@pytest.mark.parametrize("where", ["key", "value"])
def test_a_non_finite_key_or_value_is_refused_on_every_backend(backend, where):
    """A NaN key or value reached every row on the fused path (it centres on the mean of all
    keys) and, through a zero weight times NaN, on the math path too."""
    x = torch.randn(1, 12, 2, dtype=torch.float64)
    k, v = x.clone(), x.clone()
    (k if where == "key" else v)[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="key / value have NaN or inf"):
        projection_sdpa(x, k, v, sigma=1.0, is_causal=True, window=3, backend=backend)
    masked = v.nan_to_num(0.0) if where == "value" else v  # the documented way out
    keys = k.nan_to_num(0.0) if where == "key" else k
    allowed = torch.ones(12, 12, dtype=torch.bool).tril()
    allowed[:, 0] = False
    allowed[0, 0] = True  # row 0 needs a key; it attends only to the replaced sample
    out = projection_sdpa(x, keys, masked, sigma=1.0, attn_mask=allowed, backend=backend)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
def test_a_plus_inf_float_mask_entry_is_refused_naming_the_mask(backend):
    q = torch.randn(1, 6, 3)
    mask = torch.zeros(6, 6)
    mask[2, 4] = float("inf")
    with pytest.raises(ValueError, match=r"attn_mask contains \+inf"):
        projection_sdpa(q, q, q, sigma=1.0, attn_mask=mask, backend=backend)
    mask[2, 4] = float("-inf")  # -inf excludes the key: fine
    assert torch.isfinite(
        projection_sdpa(q, q, q, sigma=1.0, attn_mask=mask, backend=backend)
    ).all()


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
@pytest.mark.parametrize("scale", [1e-30, 1e30])
@pytest.mark.parametrize("structure", [{}, {"is_causal": True}, {"window": 5}, {"decay": 0.8}])
def test_float32_data_near_1e_pm30_with_a_matching_sigma_gives_the_scaled_result(
    backend, scale, structure
):
    """Weights depend on (q - k) / sigma only, so scaling data and sigma together changes
    nothing; in float32 d² and σ² under- or overflow at these scales, (d/σ)² does not."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 16, 4, generator=g) for _ in range(3))
    qd, kd, vd = q.double(), k.double(), v.double()
    expected = projection_sdpa(qd, kd, vd, sigma=1.5, backend="math", **structure)
    out = projection_sdpa(q * scale, k * scale, v, sigma=1.5 * scale, backend=backend, **structure)
    torch.testing.assert_close(out.double(), expected, rtol=1e-4, atol=1e-5)
    sig = torch.full((1, 2, 1, 1), 1.5 * scale, requires_grad=True)  # a tensor sigma too
    out = projection_sdpa(q * scale, k * scale, v, sigma=sig, backend=backend, **structure)
    torch.testing.assert_close(out.double(), expected, rtol=1e-4, atol=1e-5)
    (g_sig,) = torch.autograd.grad(out.sum(), sig)
    sd = torch.full((1, 2, 1, 1), 1.5, dtype=torch.float64, requires_grad=True)
    (g_ref,) = torch.autograd.grad(
        projection_sdpa(qd, kd, vd, sigma=sd, backend="math", **structure).sum(), sd
    )
    torch.testing.assert_close(g_sig.double() * scale, g_ref, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
def test_a_huge_float_sigma_is_the_uniform_limit_and_a_vanishing_one_the_nearest_key(backend):
    # sigma**2 overflowed Python floats past 1.4e154 (OverflowError); the fused kernels' scale
    # 1/sigma**2 divided by zero below 1e-162 (ZeroDivisionError): they refuse it by name now
    q = torch.randn(1, 5, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    uniform = q.mean(dim=-2, keepdim=True).expand_as(q)
    torch.testing.assert_close(projection_sdpa(q, q, sigma=1e200, backend=backend), uniform)
    if backend == "fused":
        with pytest.raises(ValueError, match="backend='fused' cannot take sigma=1e-300"):
            projection_sdpa(q, q, sigma=1e-300, backend=backend)
    else:  # each query's nearest key is itself
        torch.testing.assert_close(projection_sdpa(q, q, sigma=1e-300, backend=backend), q)


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
def test_an_empty_batch_or_sequence_gives_an_empty_result_of_the_right_shape(backend):
    # the value scan took aminmax over an empty key, and the distances reshaped 0 elements
    q, k, v = torch.randn(0, 3, 10, 4), torch.randn(0, 3, 12, 4), torch.randn(0, 3, 12, 5)
    assert projection_sdpa(q, k, v, sigma=0.5, backend=backend).shape == (0, 3, 10, 5)
    q, k = torch.randn(2, 3, 10, 4), torch.randn(2, 3, 12, 4)
    assert projection_sdpa(q[..., :0, :], k, backend=backend).shape == (2, 3, 0, 4)
    assert projection_weights(q[..., :0, :], k).shape == (2, 3, 0, 12)
    assert projection_weights(q, k[..., :0, :]).shape == (2, 3, 10, 0)
    # no coordinates: every distance 0, every weight equal (it was zeros, or an error)
    v = torch.arange(4.0).reshape(1, 4, 1)
    e = torch.randn(1, 4, 0)
    torch.testing.assert_close(
        projection_sdpa(e, e, v, backend=backend), torch.full((1, 4, 1), 1.5)
    )
    # gradients of an empty call are zeros, not none: for sigma too
    s = torch.tensor(0.5, requires_grad=True)
    projection_sdpa(
        torch.randn(2, 0, 3), torch.randn(2, 5, 3), sigma=s, backend=backend
    ).sum().backward()
    assert s.grad == 0


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
def test_a_float32_width_the_dtype_cannot_hold_is_refused_naming_it(backend):
    # it rounded to 0 in float32 and the output was NaN; the fused scale 1/sigma**2 overflows
    # float32 far sooner, where math and auto still give the limit
    q = torch.randn(1, 5, 2, generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="sigma=1e-160 is below what torch.float32 holds"):
        projection_sdpa(q, q, sigma=1e-160, backend=backend)
    if backend == "fused":
        with pytest.raises(ValueError, match="1/sigma² overflows torch.float32"):
            projection_sdpa(q, q, sigma=1e-30, backend=backend)
    else:
        torch.testing.assert_close(projection_sdpa(q, q, sigma=1e-30, backend=backend), q)


@pytest.mark.parametrize("tensor_sigma", [False, True])
@pytest.mark.parametrize("structure", [{}, {"is_causal": True}, {"decay": 0.9}])
@pytest.mark.parametrize("backend", ["auto", "math"])
def test_a_width_far_below_the_distances_gives_each_row_its_nearest_key(
    backend, structure, tensor_sigma
):
    # with queries that are not keys every (d/sigma)^2 overflowed float32 to inf, and each
    # row's softmax of -inf logits was NaN (sigma = 1e-21 is well inside float32's range)
    g = torch.Generator().manual_seed(1)
    q, k, v = (
        torch.randn(1, 7, 2, generator=g),
        torch.randn(1, 9, 2, generator=g),
        torch.randn(1, 9, 3, generator=g),
    )
    # 1e-36 with data of 1e3: c / sigma overflowed float32 (0 * inf); 1e-39 is subnormal
    for s, scale in ((1e-21, 1.0), (1e-30, 1.0), (1e-36, 1e3), (1e-39, 1.0)):
        if s < 1e-38 and not tensor_sigma:
            continue  # a float below float32's range is refused by name (the test above)
        sigma = torch.tensor(s, requires_grad=True) if tensor_sigma else s
        qg, kg = (q * scale).requires_grad_(), (k * scale).requires_grad_()
        out = projection_sdpa(qg, kg, v, sigma=sigma, backend=backend, **structure)
        # float64 holds these logits: its weights are those of the nearest allowed key
        expected = projection_sdpa(q.double() * scale, k.double() * scale, v.double(),
                                   sigma=s, backend="math", **structure)  # fmt: skip
        torch.testing.assert_close(out.double(), expected)
        # a one-hot row moves with no input: zero gradients, sigma's too (it was NaN)
        inputs = [qg, kg, sigma] if tensor_sigma else [qg, kg]
        grads = torch.autograd.grad(out.sum(), inputs)
        assert all(bool((gr == 0).all()) for gr in grads)


def test_a_tiny_width_skips_a_nearest_key_the_bias_excludes_and_keeps_float64_gradients():
    # a key with a -inf log weight nearer than the usable ones had a positive shifted logit,
    # which overflowed to +inf: +inf - inf was NaN; in float64 sigma's gradient was NaN below
    # 1e-154 (-c/sigma^2 overflowed)
    q, k = torch.tensor([[[0.0]]]), torch.tensor([[[0.0], [1.0], [2.0]]])
    bias = torch.tensor([[float("-inf"), 0.0, 0.0]])
    w = reference.projection_weights_math(q, k, 1e-21, None, bias)
    torch.testing.assert_close(w, torch.tensor([[[0.0, 1.0, 0.0]]]))
    g = torch.Generator().manual_seed(0)
    q, k = (torch.randn(2, n, 3, dtype=torch.float64, generator=g) for n in (5, 7))
    s = torch.full((2,), 1e-160, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(projection_sdpa(q, k, sigma=s, backend="math").sum(), s)
    assert (grad == 0).all()


@pytest.mark.parametrize("structure", [{}, {"decay": 0.9}])
def test_the_fused_backend_refuses_a_tensor_width_whose_logits_could_overflow(structure):
    # a float sigma was refused by name, a tensor one gave NaN rows
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(1, 7, 2, generator=g), torch.randn(1, 9, 2, generator=g)
    with pytest.raises(ValueError, match="backend='fused' cannot take sigma down to 1e-19"):
        projection_sdpa(q, k, sigma=torch.tensor([1e-19]), backend="fused", **structure)
    out = projection_sdpa(q, k, sigma=torch.tensor([1e-19]), backend="auto", **structure)
    assert torch.isfinite(out).all()
    # a width the logits hold is taken as before
    torch.testing.assert_close(
        projection_sdpa(q, k, sigma=torch.tensor([1e-3]), backend="fused", **structure),
        projection_sdpa(q, k, sigma=1e-3, backend="math", **structure),
    )


@pytest.mark.parametrize("structure", [{}, {"is_causal": True}, {"window": 3}, {"decay": 0.9}])
def test_the_fused_backend_refuses_a_float_width_whose_logits_could_overflow(structure):
    # σ = 1e-17 on data of size 100: 1/σ² fits float32, but the logits (1e38 and more) do
    # not; a tensor σ was refused by name, the same float gave NaN rows without a word
    g = torch.Generator().manual_seed(1)
    q, k = (100 * torch.randn(1, n, 4, generator=g) for n in (7, 9))
    with pytest.raises(ValueError, match="backend='fused' cannot take sigma down to 1e-17"):
        projection_sdpa(q, k, sigma=1e-17, backend="fused", **structure)
    assert torch.isfinite(projection_sdpa(q, k, sigma=1e-17, backend="auto", **structure)).all()
    torch.testing.assert_close(  # a width the logits hold is taken as before
        projection_sdpa(q, k, sigma=3.0, backend="fused", **structure),
        projection_sdpa(q, k, sigma=3.0, backend="math", **structure),
    )


def test_an_empty_call_is_zero_even_with_a_non_finite_tracked_width():
    # 0.0 * sum(inputs) was NaN where a tracked input summed to inf
    s = torch.tensor(float("inf"), requires_grad=True)
    out = projection_sdpa(torch.randn(1, 2, 3), torch.randn(1, 0, 3), torch.randn(1, 0, 2),
                          sigma=s, validate=False)  # fmt: skip
    assert (out == 0).all()
    out.sum().backward()
    assert s.grad == 0


@pytest.mark.parametrize("query_dims", [3, 4])
@pytest.mark.parametrize(
    "structure",
    [
        lambda g: {
            "tau": 1.0,
            "timestamps": torch.rand(3, 1, 6, generator=g, dtype=torch.float64).cumsum(-1),
        },  # fmt: skip
        lambda g: {"decay": 0.9, "attn_mask": torch.rand(3, 2, 6, 6, generator=g) > 0.3},
        lambda g: {"is_causal": True, "attn_mask": torch.rand(3, 2, 6, 6, generator=g) > 0.3},
    ],
)
def test_a_mask_or_timestamps_with_more_leading_dims_give_the_broadcast_on_every_backend(
    query_dims, structure
):
    # per-batch times or masks for heads shared across the batch: the math path broadcast
    # them, the fused decay path raised torch's reshape error
    g = torch.Generator().manual_seed(3)
    q = torch.randn(1, 2, 6, 3, generator=g, dtype=torch.float64)
    q = q[0] if query_dims == 3 else q
    st = structure(g)
    outs = []
    for backend in ("math", "auto", "fused"):
        qg = q.clone().requires_grad_()
        out = projection_sdpa(qg, qg, qg, backend=backend, **st)
        (grad,) = torch.autograd.grad(out.square().sum(), qg)
        outs.append((out, grad))
    assert outs[0][0].shape == (3, 2, 6, 3)
    for out, grad in outs[1:]:
        torch.testing.assert_close(out, outs[0][0])
        torch.testing.assert_close(grad, outs[0][1])


def test_rows_past_the_windows_reach_have_finite_width_gradients_on_the_fused_path():
    # causal window of 1 over fewer keys than rows, on the windowed block path: the last
    # block reached no key, a kernel call with S = 0 gave NaN σ gradients (math gave 0)
    L, S = 800, 520  # S > 2 (256 + W): the block path
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 1, L, 3, dtype=torch.float64, generator=g)
    k = torch.randn(1, 1, S, 3, dtype=torch.float64, generator=g)
    v = torch.randn(1, 1, S, 2, dtype=torch.float64, generator=g)
    sig0 = torch.rand(1, 1, L, 1, dtype=torch.float64, generator=g) + 0.5
    got = []
    for backend in ("fused", "math"):
        sig = sig0.clone().requires_grad_()
        out = projection_sdpa(q, k, v, sigma=sig, is_causal=True, window=3, backend=backend)
        out.square().sum().backward()
        got.append((out.detach(), sig.grad))
    past = got[0][0][..., S + 2 :, :]  # rows S, S + 1 still reach keys S - 2, S - 1
    assert torch.equal(past, torch.zeros_like(past))
    for a, b in zip(*got, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("decay", [dict(decay=0.9), dict(tau=1.0)], ids=["decay", "tau"])
def test_a_learned_float_mask_with_a_decay_gets_its_gradient_or_a_clear_error(decay):
    # the fused decay path reads the mask block by block and gave it no gradient (None)
    L = 6
    if "tau" in decay:
        decay = dict(decay, timestamps=torch.arange(L, dtype=torch.float64))
    q = torch.randn(1, 2, L, 3, dtype=torch.float64)
    grads = {}
    for backend in ("auto", "math"):
        bias = torch.linspace(-0.3, 0.2, L * L, dtype=torch.float64).reshape(L, L)
        bias.requires_grad_()
        out = projection_sdpa(q, q, q, sigma=1.0, attn_mask=bias, backend=backend, **decay)
        out.square().sum().backward()
        grads[backend] = bias.grad
    torch.testing.assert_close(grads["auto"], grads["math"], rtol=1e-9, atol=1e-12)
    bias = torch.zeros(L, L, dtype=torch.float64, requires_grad=True)
    with pytest.raises(ValueError, match="attn_mask wants a gradient.*backend='math'"):
        projection_sdpa(q, q, q, sigma=1.0, attn_mask=bias, backend="fused", **decay)


@pytest.mark.parametrize(
    "kw",
    [dict(), dict(decay=0.9), dict(decay=torch.tensor(0.9, dtype=torch.float64))],
    ids=["column-form", "blockwise", "blockwise-learned-decay"],
)
def test_a_second_derivative_through_the_fused_path_raises_instead_of_being_wrong(kw):
    # the blockwise backward treats out, lse and the key mean as constants: with a learned
    # decay autograd recorded it and gradgradcheck failed (10.36 against 8.99)
    kw = {n: (t.clone().requires_grad_() if isinstance(t, torch.Tensor) else t)
          for n, t in kw.items()}  # fmt: skip
    q, k, v = (torch.randn(1, 1, 5, 2, dtype=torch.float64, requires_grad=True) for _ in "qkv")
    out = projection_sdpa(q, k, v, sigma=1.0, backend="fused", **kw)
    (gq,) = torch.autograd.grad(out.square().sum(), q, create_graph=True)
    # torch's once_differentiable: "differentiate twice", or no path back to q at all
    with pytest.raises(RuntimeError, match="differentiate twice|not have been used"):
        torch.autograd.grad(gq.square().sum(), q)
    ref = projection_sdpa(q, k, v, sigma=1.0, backend="math", **kw)  # the reference can
    (gq,) = torch.autograd.grad(ref.square().sum(), q, create_graph=True)
    assert torch.autograd.grad(gq.square().sum(), q)[0].isfinite().all()


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_timestamp_is_refused_on_every_backend(backend, bad):
    # inf passed the check: the math backend gave a NaN row, the fused one zeros
    q, k, v = torch.randn(1, 5, 2), torch.randn(1, 6, 2), torch.randn(1, 6, 1)
    times = (torch.tensor([0.0, 1.0, bad, 3.0, 4.0]), torch.arange(6.0))
    with pytest.raises(ValueError, match=r"timestamps \(query\) contain NaN or inf"):
        projection_sdpa(q, k, v, sigma=1.0, tau=1.0, timestamps=times, backend=backend)


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
@pytest.mark.parametrize("name", ["decay", "tau"])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_a_decay_or_tau_that_rounds_to_zero_in_float32_is_refused_naming_it(
    backend, name, as_tensor
):
    # 1e-300 is 0 in float32: log 0 times the lag 0 (or 0 / 0 between equal times) made
    # every row NaN, on every backend and in projection_weights
    q = torch.randn(1, 5, 2, generator=torch.Generator().manual_seed(0))
    t = torch.arange(5.0)
    x = torch.tensor(1e-300, dtype=torch.float64) if as_tensor else 1e-300
    kw = {"decay": x} if name == "decay" else {"tau": x, "timestamps": t}
    with pytest.raises(ValueError, match=f"{name}.* rounds to 0 in torch.float32"):
        projection_sdpa(q, q, sigma=1.0, backend=backend, **kw)
    with pytest.raises(ValueError, match=f"{name}.* rounds to 0 in torch.float32"):
        projection_weights(q, q, sigma=1.0, **kw)
    # in float64 it is the limit: each row keeps its own sample
    out = projection_sdpa(q.double(), q.double(), sigma=1.0, backend=backend, **kw)
    torch.testing.assert_close(out, q.double())


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
@pytest.mark.parametrize("scale", [1e-25, 1e25])
def test_a_non_finite_query_spoils_only_its_own_row_with_data_far_from_unit_scale(
    backend, bad, scale
):
    # the power-of-two rescale of float32 data near 1e±25 took the query's NaN / inf as its
    # magnitude and was skipped: every row's distances over- or underflowed (all NaN, or a
    # ValueError blaming sigma on the fused backend)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 6, 3, generator=g) for _ in range(3))
    expected = projection_sdpa(q.double(), k.double(), v.double(), sigma=0.7, backend="math")
    q = q * scale
    q[0, 0, 1] = bad
    out = projection_sdpa(q, k * scale, v, sigma=0.7 * scale, backend=backend)
    torch.testing.assert_close(out[0, 1:].double(), expected[0, 1:], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
@pytest.mark.parametrize("decay", [None, 0.9])
def test_a_float64_mask_entry_infinite_in_float32_counts_as_that_infinity(backend, decay):
    # -1e300 in a float64 mask is -inf in float32 but was left allowed: a row of them gave
    # NaN on the math backend and zeros on the fused one; +1e300 passed the +inf check and
    # gave a NaN row on both
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(1, 4, 2, generator=g), torch.randn(1, 5, 2, generator=g), None
    mask = torch.zeros(4, 5, dtype=torch.float64)
    mask[1] = -1e300  # row 1: every key excluded, a zero row as documented
    mask[2, 1:] = -1e300  # row 2: key 0 only
    out = projection_sdpa(q, k, v, sigma=1.0, attn_mask=mask, decay=decay, backend=backend)
    assert torch.equal(out[0, 1], torch.zeros(2))
    torch.testing.assert_close(out[0, 2], k[0, 0])
    assert torch.isfinite(out).all()
    mask[0, 2] = 1e300
    with pytest.raises(ValueError, match=r"attn_mask contains \+inf \(in torch.float32\)"):
        projection_sdpa(q, k, v, sigma=1.0, attn_mask=mask, decay=decay, backend=backend)


def test_timestamps_that_require_grad_get_it_or_a_clear_error():
    # the fused (blockwise) path reads the times block by block: no gradient reached them,
    # and backward() left their .grad None while the math backend gives one
    q = torch.randn(1, 6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    grads = {}
    for backend in ("auto", "math"):
        t = torch.linspace(0.0, 3.0, 6, dtype=torch.float64).requires_grad_()
        tk = torch.linspace(0.2, 2.5, 6, dtype=torch.float64)
        out = projection_sdpa(q, q, q, tau=0.5, timestamps=(t, tk), backend=backend)
        out.square().sum().backward()
        grads[backend] = t.grad
    assert grads["math"] is not None and grads["math"].abs().sum() > 0
    torch.testing.assert_close(grads["auto"], grads["math"], rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="timestamps wants a gradient.*backend='math'"):
        projection_sdpa(q, q, q, tau=0.5, timestamps=(t, tk), backend="fused")


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
@pytest.mark.parametrize("structure", [{}, {"is_causal": True}, {"decay": 0.9}])
def test_a_window_past_every_lag_limits_nothing_however_large(backend, structure):
    # compared with int64 lags, 2**63 wrapped to a negative window (every key excluded: a
    # zero output, silently) and 10**30 raised OverflowError('int too big to convert')
    q = torch.randn(1, 5, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    expected = projection_sdpa(q, q, q, sigma=1.0, backend=backend, **structure)
    for window in (2**63, 10**30):
        out = projection_sdpa(q, q, q, sigma=1.0, window=window, backend=backend, **structure)
        torch.testing.assert_close(out, expected)
    allowed, _ = time_structure(5, 5, window=2**63)  # called directly too (the layers do)
    assert allowed.all()


@pytest.mark.parametrize("bad", [None, 0, "no"], ids=["none", "int", "str"])
def test_validate_must_be_a_bool(bad):
    # it was read by truthiness: validate=None skipped the scan for NaN keys silently
    k = torch.randn(1, 4, 2)
    k[0, 0, 0] = float("nan")
    with pytest.raises(TypeError, match="validate must be True or False"):
        projection_sdpa(torch.randn(1, 4, 2), k, sigma=1.0, validate=bad)
    with pytest.raises(TypeError, match="validate must be True or False"):
        projection_weights(torch.randn(1, 4, 2), k, sigma=1.0, validate=bad)


@pytest.mark.parametrize("backend", ["auto", "fused", "math"])
def test_integer_epoch_nanosecond_times_weigh_as_their_differences(backend):
    # converted to float64 before the subtraction, int64 times near 1.7e18 kept 256 ns of
    # resolution: 100 ns samples with tau = 300 ns came out 0.09 away from the same times
    # counted from 0 (and the learned tau's gradient with them)
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 8, 2, dtype=torch.float64, generator=g)
    rel = (torch.arange(8) * 100 + torch.randint(0, 50, (8,), generator=g)).sort().values
    outs, grads = [], []
    for t in (rel, rel + 1_700_000_000_000_000_000):
        tau = torch.tensor(300.0, dtype=torch.float64, requires_grad=True)
        out = projection_sdpa(q, q, q, sigma=1.0, tau=tau, timestamps=t, backend=backend)
        outs.append(out)
        grads.append(torch.autograd.grad(out.square().sum(), tau)[0])
    torch.testing.assert_close(outs[1], outs[0], rtol=0, atol=1e-12)
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", ["math", "fused"])
@pytest.mark.parametrize("tau", [1e-25, 1e-32], ids=["weights-alive", "weights-vanished"])
def test_a_tiny_float32_tau_has_the_float64_gradient_not_inf_or_nan(backend, tau):
    # dist/τ² overflowed float32 below τ ~ 1e-19: inf where the gradient is 2.6e26, and
    # inf · 0 = NaN where every weight that depends on τ had vanished (gradient 0)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 40, 3, generator=g) for _ in "qkv")
    times = torch.rand(40, dtype=torch.float64, generator=g).cumsum(0) * 1e-25
    grads = {}
    for dtype in (torch.float32, torch.float64):
        t = torch.tensor([tau, 5e-26], dtype=dtype, requires_grad=True)
        out = projection_sdpa(q.to(dtype), k.to(dtype), v.to(dtype), sigma=1.0, tau=t,
                              timestamps=times, backend=backend)  # fmt: skip
        (out * v.to(dtype)).sum().backward()
        grads[dtype] = t.grad.double()
    assert grads[torch.float32].isfinite().all()
    torch.testing.assert_close(grads[torch.float32], grads[torch.float64], rtol=1e-5, atol=0.0)


def test_the_tau_and_time_gradients_of_the_math_backend_stay_twice_differentiable():
    # τ's bias -|Δt|/τ goes through a custom autograd function (its τ gradient divides twice)
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 5, 2, dtype=torch.float64, generator=g)
    times = torch.rand(5, dtype=torch.float64, generator=g).cumsum(0)
    tau = torch.tensor([0.7, 1.3], dtype=torch.float64)

    def f(a, t, ta):
        return projection_sdpa(a, a, sigma=1.0, backend="math", tau=ta, timestamps=t)

    inputs = tuple(x.clone().requires_grad_() for x in (q, times, tau))
    assert torch.autograd.gradcheck(f, inputs)
    assert torch.autograd.gradgradcheck(f, inputs)
    # and in forward mode (torch.func.hessian is jacfwd of jacrev; it raised without a jvp)

    def loss(ta, t):
        out = projection_sdpa(q, q, sigma=1.0, backend="math", tau=ta, timestamps=t,
                              validate=False)  # fmt: skip
        return out.square().sum()

    want = torch.autograd.functional.hessian(lambda ta: loss(ta, times), tau)
    torch.testing.assert_close(torch.func.hessian(loss)(tau, times), want)
    (want,) = torch.autograd.grad(loss(tau, inputs[1]), inputs[1])
    torch.testing.assert_close(torch.func.jacfwd(loss, argnums=1)(tau, times), want)


@pytest.mark.parametrize("loss", ["square", "linear"])
@pytest.mark.parametrize(
    "kw", [dict(), dict(decay=0.9, is_causal=True)], ids=["column-form", "blockwise"]
)
def test_a_second_derivative_by_the_keys_through_the_fused_path_raises(kw, loss):
    # The blockwise path augments the keys outside its autograd Function, so a gradient by
    # the keys had a second path back to them: torch.autograd.grad by k skipped the
    # once-differentiable error node and returned a wrong second derivative (and a loss
    # linear in the output got no error node at all), where the docs promise an error.
    q, k, v = (torch.randn(1, 1, 6, 2, dtype=torch.float64, requires_grad=True) for _ in "qkv")
    out = projection_sdpa(q, k, v, sigma=1.0, backend="fused", **kw)
    out = out.square() if loss == "square" else out * torch.arange(2.0, dtype=out.dtype)
    (gk,) = torch.autograd.grad(out.sum(), k, create_graph=True)
    with pytest.raises(RuntimeError, match="differentiate twice|not have been used|grad_fn"):
        torch.autograd.grad(gk.square().sum(), k)


@pytest.mark.parametrize("kw", [dict(), dict(is_causal=True)], ids=["full", "causal"])
def test_a_gradient_penalty_by_parameters_through_the_column_form_raises(kw):
    # a gradient penalty: q and k from a weight W, the penalty's gradient asked for W. The
    # column form's once_differentiable hung its error node off detached copies of the
    # gradients, so autograd.grad by W followed the linear path (gx = gq W^T + ...) alone,
    # pruned the error node, and returned a wrong second derivative without a word
    g = torch.Generator().manual_seed(0)
    W = torch.randn(2, 2, dtype=torch.float64, generator=g, requires_grad=True)
    x = torch.randn(1, 1, 5, 2, dtype=torch.float64, generator=g, requires_grad=True)
    for backend in ("fused", "math"):
        out = projection_sdpa(x @ W, x @ W.T, x, sigma=1.0, backend=backend, **kw)
        (gx,) = torch.autograd.grad(out.square().sum(), x, create_graph=True)
        if backend == "fused":
            with pytest.raises(RuntimeError, match="differentiate twice"):
                torch.autograd.grad(gx.square().sum(), W)
        else:
            assert torch.autograd.grad(gx.square().sum(), W)[0].isfinite().all()
