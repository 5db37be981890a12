"""The math reference's pairwise distances: cdist's values, an O(L·S) backward of its own."""

import torch

from tssdpa import projection_sdpa
from tssdpa.ops.reference import distances


def _explicit(q, k):
    return (q.unsqueeze(-2) - k.unsqueeze(-3)).norm(dim=-1)  # (..., L, S), O(L·S·E) memory


def test_distance_gradients_equal_the_explicit_differences():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 3, 7, 5, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 3, 9, 5, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, 3, 7, 9, generator=g, dtype=torch.float64)
    got = torch.autograd.grad((distances(q, k) * w).sum(), (q, k))
    want = torch.autograd.grad((_explicit(q, k) * w).sum(), (q, k))
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_distance_gradient_is_zero_at_coincident_points_and_twice_differentiable():
    q = torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    k = torch.tensor([[0.0, 0.0], [3.0, -1.0], [0.5, 0.5]], dtype=torch.float64)
    (gq,) = torch.autograd.grad(distances(q, k)[0, 0], q)
    assert torch.equal(gq, torch.zeros_like(gq))  # cdist's convention at d = 0
    k = k.clone().requires_grad_()
    q2 = q.detach() + 0.1  # no coincident pair: the second derivative exists
    q2.requires_grad_()
    assert torch.autograd.gradgradcheck(distances, (q2, k))


def test_float32_gradients_keep_their_precision_far_from_zero():
    # Data offset by 1e3 with a spread of 1e-2: products of the raw coordinates would cancel
    # about 1e5 of relative error into the gradient; centring on the key mean avoids that.
    g = torch.Generator().manual_seed(1)
    base = (1e3 + 1e-2 * torch.randn(2, 6, 4, generator=g, dtype=torch.float64)).float()
    q32, k32 = (t.clone().requires_grad_() for t in base)
    got = torch.autograd.grad(distances(q32, k32).sum(), (q32, k32))
    q64, k64 = (t.detach().double().requires_grad_() for t in base)  # the same rounded data
    want = torch.autograd.grad(_explicit(q64, k64).sum(), (q64, k64))
    for a, b in zip(got, want):
        torch.testing.assert_close(a.double(), b, rtol=1e-3, atol=1e-3)


def test_distances_work_under_torch_func_and_autocast():
    g = torch.Generator().manual_seed(2)
    q, k = torch.randn(3, 4, generator=g), torch.randn(5, 4, generator=g)
    got = torch.func.grad(lambda a: distances(a, k).sum())(q)
    qq = q.clone().requires_grad_()
    (want,) = torch.autograd.grad(_explicit(qq, k).sum(), qq)
    torch.testing.assert_close(got, want)
    batched = torch.func.vmap(lambda a: distances(a, k))(torch.stack([q, 2 * q]))
    torch.testing.assert_close(batched[1], distances(2 * q, k))
    qb = q.bfloat16().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        d = distances(qb, k.bfloat16())
    d.sum().backward()
    assert qb.grad.dtype == torch.bfloat16 and torch.isfinite(qb.grad).all()


def test_projection_sdpa_runs_on_meta_tensors():
    from tssdpa import projection_sdpa

    q = torch.empty(2, 7, 4, device="meta")
    for backend in ("fused", "math"):
        out = projection_sdpa(q, q, q, sigma=1.0, backend=backend, validate=False)
        assert out.shape == (2, 7, 4) and out.device.type == "meta"


def test_the_math_backend_works_under_torch_func_and_twice_differentiated():
    # its logits go through a custom autograd function (_ShiftedSquare): vmap, grad and
    # double backward must still work through it
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 5, 2, dtype=torch.float64, generator=g)
    k = torch.randn(1, 7, 2, dtype=torch.float64, generator=g)
    s = torch.tensor(0.8, dtype=torch.float64)

    def f(a, b, sigma):
        return projection_sdpa(a, b, sigma=sigma, backend="math", is_causal=True)

    inputs = tuple(t.clone().requires_grad_() for t in (q, k, s))
    assert torch.autograd.gradcheck(f, inputs)
    assert torch.autograd.gradgradcheck(f, inputs)
    batched = torch.func.vmap(lambda a: f(a, k, s))(torch.stack([q, 2 * q]))
    torch.testing.assert_close(batched[1], f(2 * q, k, s))
    grad = torch.func.grad(lambda a: f(a, k, s).square().sum())(q)
    qg = q.clone().requires_grad_()
    (expected,) = torch.autograd.grad(f(qg, k, s).square().sum(), qg)
    torch.testing.assert_close(grad, expected)


def test_a_row_whose_every_allowed_logit_is_minus_inf_is_zero_with_zero_gradients():
    """As a row with none allowed: it was NaN, and NaN gradients reached every other row."""
    from tssdpa.ops import masked_softmax

    ninf = float("-inf")
    logits = torch.tensor([[0.0, 1.0, 2.0], [ninf, ninf, 0.5], [ninf, ninf, ninf]])
    logits.requires_grad_()
    allowed = torch.tensor([[True, True, True], [True, True, False], [True, True, True]])
    for mask in (allowed, None):
        w = masked_softmax(logits, mask)
        (g,) = torch.autograd.grad((w * torch.arange(3.0)).sum(), logits)
        # row 1: key 2 not allowed leaves nothing; every key allowed, key 2 takes all
        assert torch.equal(w[1], torch.tensor([0.0, 0.0, 0.0 if mask is not None else 1.0]))
        assert torch.equal(w[2], torch.zeros(3)) and torch.isfinite(g).all()
        torch.testing.assert_close(w[0], torch.softmax(logits[0], -1))


def test_reference_and_fused_agree_where_a_bias_takes_every_allowed_key_of_a_row():
    from tssdpa.ops.fused import fused_attention
    from tssdpa.ops.reference import projection_sdpa_math

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 5, n, generator=g, dtype=torch.float64) for n in (3, 3, 2))
    sigma = torch.tensor(1.3, dtype=torch.float64).reshape(1, 1, 1)
    allowed = torch.ones(5, 5, dtype=torch.bool).tril()
    bias = torch.zeros(5, 5, dtype=torch.float64)
    bias[3, :4] = float("-inf")  # row 3: its allowed keys 0..3 all have weight 0
    outs, grads = [], []
    for attend in (projection_sdpa_math, fused_attention):
        leaves = [t.clone().requires_grad_() for t in (q, k, v, sigma)]
        if attend is fused_attention:
            out = attend(*leaves, allowed, bias, False, 0.0)
        else:
            out = attend(*leaves, allowed, bias, 0.0)
        outs.append(out)
        grads.append(torch.autograd.grad((out * torch.linspace(-1, 2, 2)).sum(), leaves))
    assert torch.equal(outs[0][:, 3], torch.zeros(2, 2))
    torch.testing.assert_close(outs[0], outs[1])
    for a, b in zip(*grads):
        assert torch.isfinite(a).all()
        torch.testing.assert_close(a, b)


def test_masked_softmax_makes_three_passes_over_the_logits_at_most():
    """Finding the empty rows costs row maxima, not a mask of the logits' size and two fills
    over it: without a mask the math reference took 2.3 times as long (6 full-size passes)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from tssdpa.ops import masked_softmax

    class FullSize(TorchDispatchMode):
        def __init__(self, numel):
            super().__init__()
            self.numel, self.ops = numel, []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            fresh = isinstance(out, torch.Tensor) and not func.is_view  # a view reads nothing
            if fresh and out.numel() == self.numel:
                self.ops.append(func.__name__)
            return out

    logits = torch.randn(2, 16, 16)
    allowed = torch.ones(16, 16, dtype=torch.bool).tril()
    for mask, most in ((None, 3), (allowed, 5)):  # a mask: its negation and one fill more
        with FullSize(logits.numel()) as counted:
            masked_softmax(logits, mask)
        assert len(counted.ops) <= most, counted.ops
