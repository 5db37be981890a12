"""The CPU forms of the fused backend without a mask (tssdpa/ops/fused.py) against the math one.

* the bias form (no gradient wanted for k or σ): q - c, k - c at width E, the key term a
  broadcast (..., 1, S) mask;
* the column form with its hand-written backward (:class:`_ColumnFlash`): q~, k~, v~ at
  width max(E + 1, Ev), gradients for q, k, v and a σ tensor.

Outputs and gradients, float32 and float64, causal or not, float / per-head / per-row σ, odd
head widths and a value width other than the key width, batch ranks 2 to 5.
"""

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from tssdpa import projection_sdpa
from tssdpa.ops import fused

TOL = {torch.float64: dict(rtol=1e-9, atol=1e-10), torch.float32: dict(rtol=2e-4, atol=2e-5)}
SIGMAS = ["float", "head", "row"]


def _sigma(kind, dtype, batch, L, E):
    g = torch.Generator().manual_seed(7)
    base = 0.8 * E**0.5
    if kind == "float":
        return base
    if kind == "head":
        return base * (0.5 + torch.rand(batch[-1], generator=g, dtype=dtype))
    return base * (0.5 + torch.rand(*batch, L, 1, generator=g, dtype=dtype))


def _inputs(batch, L, S, E, Ev, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, L, E, generator=g, dtype=dtype)
    k = torch.randn(*batch, S, E, generator=g, dtype=dtype) + 0.3
    v = torch.randn(*batch, S, Ev, generator=g, dtype=dtype)
    return q, k, v


def _grads(q, k, v, sigma, grad_of, **kw):
    """Output and gradients (for the names in grad_of) of one call, on fresh leaves."""
    leaves = dict(q=q, k=k, v=v, sigma=sigma)
    leaves = {
        n: t.detach().clone().requires_grad_(n in grad_of) if isinstance(t, torch.Tensor) else t
        for n, t in leaves.items()
    }
    y = projection_sdpa(leaves["q"], leaves["k"], leaves["v"], sigma=leaves["sigma"], **kw)
    w = torch.randn(y.shape, generator=torch.Generator().manual_seed(3), dtype=y.dtype)
    gs = torch.autograd.grad((y * w).sum(), [leaves[n] for n in grad_of]) if grad_of else ()
    return y.detach(), gs


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("E,Ev", [(1, 1), (3, 3), (3, 5), (63, 63), (64, 64), (64, 16), (4, 70)])
def test_column_form_outputs_and_gradients_match_math(dtype, causal, sigma, E, Ev):
    q, k, v = _inputs((2, 3), 37, 37, E, Ev, dtype)
    sig = _sigma(sigma, dtype, (2, 3), 37, E)
    names = ["q", "k", "v"] + ([] if sigma == "float" else ["sigma"])
    got = _grads(q, k, v, sig, names, is_causal=causal, backend="fused")
    ref = _grads(q, k, v, sig, names, is_causal=causal, backend="math")
    torch.testing.assert_close(got[0], ref[0], **TOL[dtype])
    for a, b in zip(got[1], ref[1], strict=True):
        torch.testing.assert_close(a, b, **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("sigma", ["float", "head"])
@pytest.mark.parametrize("E,Ev", [(1, 1), (3, 3), (3, 5), (63, 63), (64, 64), (64, 16)])
def test_bias_form_and_partial_gradients_match_math(dtype, causal, sigma, E, Ev):
    # the bias form, with no gradient, and with q and v wanting one (the kernel's own
    # backward gives those); k and σ do not
    q, k, v = _inputs((2, 3), 41, 29, E, Ev, dtype, seed=1)
    sig = _sigma(sigma, dtype, (2, 3), 41, E)
    for names in ([], ["q", "v"]):
        got = _grads(q, k, v, sig, names, is_causal=causal, backend="fused")
        ref = _grads(q, k, v, sig, names, is_causal=causal, backend="math")
        torch.testing.assert_close(got[0], ref[0], **TOL[dtype])
        for a, b in zip(got[1], ref[1], strict=True):
            torch.testing.assert_close(a, b, **TOL[dtype])


@pytest.mark.parametrize("batch", [(), (3,), (2, 3), (2, 1, 3)], ids=str)
@pytest.mark.parametrize("grad", [False, True], ids=["bias-form", "column-form"])
def test_forms_take_any_batch_rank(batch, grad):
    q, k, v = _inputs(batch, 9, 11, 4, 3, torch.float64, seed=2)
    names = ["q", "k", "v"] if grad else []
    got = _grads(q, k, v, 1.3, names, backend="fused", is_causal=True)
    ref = _grads(q, k, v, 1.3, names, backend="math", is_causal=True)
    torch.testing.assert_close(got[0], ref[0], rtol=1e-9, atol=1e-10)
    for a, b in zip(got[1], ref[1], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


def test_broadcast_key_and_value_get_summed_gradients():
    # k, v shared by the heads (expanded by the operator): their gradients sum over heads
    q, k, v = _inputs((2, 3), 10, 10, 5, 5, torch.float64, seed=4)
    k, v = k[:, :1], v[:, :1]
    got = _grads(q, k, v, 0.9, ["q", "k", "v"], backend="fused")
    ref = _grads(q, k, v, 0.9, ["q", "k", "v"], backend="math")
    for a, b in zip((got[0], *got[1]), (ref[0], *ref[1]), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("view", ["q", "k", "v", "dout"])
@pytest.mark.parametrize("grad", [False, True], ids=["bias-form", "column-form"])
@pytest.mark.parametrize("E,Ev", [(4, 3), (4, 4), (4, 5)])
def test_transposed_views_give_the_contiguous_result(view, grad, E, Ev):
    # a channels-first series read through .mT: the CPU flash kernels read rows as dense
    # runs and returned garbage (an error of 1.3-1.9, different from run to run)
    q, k, v = _inputs((2,), 9, 11, E, Ev, torch.float64, seed=5)
    names = ["q", "k", "v"] if grad else ["q", "v"]
    ref = _grads(q, k, v, 1.3, names, backend="math")
    if view == "dout":  # the output gradient arrives as a transposed view
        leaves = [t.clone().requires_grad_(n in names) for n, t in zip("qkv", (q, k, v))]
        y = projection_sdpa(*leaves, sigma=1.3, backend="fused")
        w = torch.randn(y.shape, generator=torch.Generator().manual_seed(3), dtype=y.dtype)
        gs = torch.autograd.grad(y, [t for t in leaves if t.requires_grad], w.mT.contiguous().mT)
        got = (y.detach(), gs)
    else:
        pick = dict(q=q, k=k, v=v)
        pick[view] = pick[view].mT.contiguous().mT  # the same values, last dim strided
        assert pick[view].stride(-1) != 1
        got = _grads(pick["q"], pick["k"], pick["v"], 1.3, names, backend="fused")
    torch.testing.assert_close(got[0], ref[0], rtol=1e-9, atol=1e-10)
    for a, b in zip(got[1], ref[1], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


def _kernels(fn) -> set[str]:
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return {e.name for e in prof.events() if "attention" in e.name}


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("grad", [False, True], ids=["bias-form", "column-form"])
def test_forms_run_the_cpu_flash_kernels_at_the_expected_width(causal, grad, monkeypatch):
    q, k, v = _inputs((1, 2), 64, 64, 16, 16, torch.float32)
    widths = []
    real = fused._CPU_FLASH

    def spy(q, k, v, *args, **kwargs):
        widths.append((q.shape[-1], k.shape[-1], v.shape[-1], kwargs.get("attn_mask") is None))
        return real(q, k, v, *args, **kwargs)

    monkeypatch.setattr(fused, "_CPU_FLASH", spy)
    k.requires_grad_(grad)
    names = _kernels(
        lambda: (
            projection_sdpa(q, k, v, sigma=4.0, is_causal=causal, backend="fused").sum().backward()
            if grad
            else projection_sdpa(q, k, v, sigma=4.0, is_causal=causal, backend="fused")
        )
    )
    assert not any("math" in n for n in names)
    # bias form: standard SDPA's width and a mask; column form: E + 1, no mask
    assert widths == [(17, 17, 17, True)] if grad else [(16, 16, 16, False)]
    if grad:
        assert "aten::_scaled_dot_product_flash_attention_for_cpu_backward" in names


def test_no_queries_and_dropout_leave_the_cpu_flash_kernel():
    # L = 0 kills the CPU flash kernel (SIGFPE in torch 2.13), and it has no dropout
    q, k, v = _inputs((1, 2), 0, 5, 3, 3, torch.float32)
    assert projection_sdpa(q, k, v, backend="fused").shape == (1, 2, 0, 3)
    assert not fused._cpu_flash_ok(q, k, v, 0.0)
    q, k, v = _inputs((1, 2), 4, 5, 3, 3, torch.float32)
    assert not fused._cpu_flash_ok(q, k, v, 0.1)


@pytest.mark.parametrize("where", ["key", "value"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("pos", [0, 17, -1])
def test_validate_finds_every_non_finite_key_or_value(where, bad, pos):
    # validate reads aminmax of k and the sum of v: each non-finite entry must show
    q, k, v = _inputs((2, 3), 8, 9, 4, 5, torch.float32)
    t = k if where == "key" else v
    t.view(-1)[pos] = bad
    with pytest.raises(ValueError, match="NaN or inf"):
        projection_sdpa(q, k, v, backend="fused")


def test_validate_takes_values_whose_sum_overflows():
    # finite values whose sum is inf in float32 (480 · 1e37): the exact check passes them
    q, k, v = _inputs((1, 2), 6, 6, 3, 40, torch.float32)
    v = torch.full_like(v, 1e37)
    assert torch.isinf(v.sum())
    y = projection_sdpa(q, k, v, backend="fused")
    torch.testing.assert_close(y, torch.full_like(y, 1e37))


@pytest.mark.parametrize("backend", ["fused", "math", "auto"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_query_spoils_only_its_rows(backend, bad):
    # on math a NaN query made every row NaN, an inf one every other row uniform (a cap on
    # the widths taken over the whole batch)
    q, k, v = _inputs((1, 2), 6, 6, 3, 2, torch.float64)
    expected = projection_sdpa(q, k, v, backend="math")
    q[0, 1, 2, 0] = bad
    y = projection_sdpa(q, k, v, backend=backend)
    assert torch.isnan(y[0, 1, 2]).all()
    y[0, 1, 2] = expected[0, 1, 2]
    torch.testing.assert_close(y, expected)


@pytest.mark.parametrize(
    "structure",
    [{}, {"is_causal": True}, {"window": 3}, {"attn_mask": "bool"}],
    ids=["full", "causal", "window", "mask"],
)
@pytest.mark.parametrize("grad_k", [False, True], ids=["bias_form", "column_form"])
def test_a_float_sigma_with_large_logits_gives_the_value_gradients_of_a_tensor_sigma(
    structure, grad_k
):
    # σ = 0.01 on data of spread 100 (logits ~1e8): the weights are one-hot and the fused
    # forward exact. A float σ went to the kernels as their scale 1/σ², whose backward
    # recomputed the weights from the scaled logits with another rounding than the forward:
    # v's gradient (a sum of weights, at most L) came back inf, q's and k's NaN, where the
    # same σ as a tensor (folded into the queries, scale 1) gave them finite and exact
    L, S, E = 24, 24, 4
    q, k, v = _inputs((1, 2), L, S, E, 3, torch.float32, seed=5)
    q, k = q * 100, k * 100
    kw = dict(structure)
    if kw.get("attn_mask") == "bool":
        kw["attn_mask"] = torch.rand(L, S, generator=torch.Generator().manual_seed(2)) > 0.2
    names = ["q", "v"] + (["k"] if grad_k else [])
    ref = _grads(q, k, v, 0.01, ["v"], backend="math", **kw)  # exact: one-hot weights
    for sigma in (0.01, torch.tensor(0.01)):
        out, grads = _grads(q, k, v, sigma, names, backend="fused", **kw)
        torch.testing.assert_close(out, ref[0], rtol=0, atol=1e-6)
        torch.testing.assert_close(grads[1], ref[1][0], rtol=0, atol=1e-5)
        for g in grads:
            assert torch.isfinite(g).all()
