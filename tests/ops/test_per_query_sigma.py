"""Per-query kernel width (issue 10): a sigma tensor (..., L, 1) gives row i its own σ_i.

Against the loop definition (``loop_reference`` fixture, tests/ops/conftest.py), fused vs math
outputs and gradients (σ included) over the time structures and the blockwise window path,
gradcheck, the float / per-head special cases, numerics and errors.
"""

import pytest
import torch

from tssdpa import projection_sdpa, projection_weights
from tssdpa.ops import WINDOW_BLOCK
from tssdpa.ops import projection as ops

D64 = torch.float64

CASES = [
    dict(),
    dict(is_causal=True),
    dict(window=3),
    dict(is_causal=True, window=4),
    dict(decay=0.7),
    dict(is_causal=True, window=5, decay=0.6),
    dict(tau=1.5, timestamps=True),
    dict(is_causal=True, tau=0.3, timestamps=True),
    dict(mask="bool"),
    dict(mask="float", is_causal=True, decay=0.9),
]


def _ids(c):
    return "-".join(f"{k}={v}" for k, v in c.items()) or "plain"


def _request(case, L, S, g, batch=()):
    """Keyword arguments of a case, and those of the loop reference (2-D, batch ())."""
    case = dict(case)
    kw, ref = {}, {}
    if case.pop("timestamps", False):
        tq, tk = torch.rand(L, generator=g).cumsum(0), torch.rand(S, generator=g).cumsum(0)
        kw["timestamps"] = (tq, tk)
        ref.update(tq=tq, tk=tk)
    mask_kind = case.pop("mask", None)
    if mask_kind == "bool":
        mask = torch.rand(L, S, generator=g) > 0.4
        mask[0] = False  # a fully masked row
        kw["attn_mask"] = ref["mask"] = mask
    elif mask_kind == "float":
        mask = torch.randn(L, S, dtype=D64, generator=g)
        mask[torch.rand(L, S, generator=g) > 0.7] = float("-inf")
        mask[-1] = float("-inf")
        kw["attn_mask"] = ref["mask"] = mask
    kw.update(case)
    ref.update(case)
    return kw, ref


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("L,S", [(6, 6), (5, 8), (8, 5)])
@pytest.mark.parametrize("backend", ["math", "fused", "auto"])
def test_per_row_sigma_matches_loop_definition(case, L, S, backend, loop_reference):
    g = torch.Generator().manual_seed(L * 100 + S)
    q = torch.randn(L, 3, dtype=D64, generator=g)
    k = torch.randn(S, 3, dtype=D64, generator=g)
    v = torch.randn(S, 2, dtype=D64, generator=g)
    sigma = 0.4 + 2 * torch.rand(L, 1, dtype=D64, generator=g)  # (L, 1): one σ per row
    kw, ref = _request(case, L, S, g)
    got = projection_sdpa(q, k, v, sigma=sigma, backend=backend, **kw)
    torch.testing.assert_close(got, loop_reference(q, k, v, sigma, **ref), rtol=1e-10, atol=1e-12)
    w = projection_weights(q, k, sigma=sigma, **kw)
    torch.testing.assert_close(w @ v, got, rtol=1e-10, atol=1e-12)


def test_row_i_is_the_float_sigma_call_at_sigma_i():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 7, 4, dtype=D64, generator=g) for _ in range(3))
    sigma = 0.3 + torch.rand(2, 3, 7, 1, dtype=D64, generator=g)
    kw = dict(is_causal=True, window=4, decay=0.8)
    y = projection_sdpa(q, k, v, sigma=sigma, backend="fused", **kw)
    for b in range(2):
        for h in range(3):
            for i in range(7):
                s = float(sigma[b, h, i, 0])
                want = projection_sdpa(q[b, h], k[b, h], v[b, h], sigma=s, backend="math", **kw)
                torch.testing.assert_close(y[b, h, i], want[i], rtol=1e-10, atol=1e-12)


def _fused_vs_math(q, k, v, sigma, kw, tol):
    """Outputs and gradients (q, k, v, sigma) of both backends agree."""
    res = []
    for backend in ("math", "fused"):
        qq, kk, vv, ss = (t.clone().requires_grad_() for t in (q, k, v, sigma))
        y = projection_sdpa(qq, kk, vv, sigma=ss, backend=backend, **kw)
        (y * torch.linspace(-1, 1, y.shape[-1], dtype=D64)).square().sum().backward()
        res.append((y, qq.grad, kk.grad, vv.grad, ss.grad))
    for name, a, b in zip(("out", "dq", "dk", "dv", "dsigma"), *res):
        assert b is not None and torch.isfinite(b).all(), name
        torch.testing.assert_close(b, a, **tol, msg=lambda m, name=name: f"{name}: {m}")


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("L,S", [(7, 7), (5, 11)])
@pytest.mark.parametrize("sigma_shape", ["BHL1", "11L1", "B1L1", "BH11"])
def test_fused_matches_math_outputs_and_gradients(case, L, S, sigma_shape):
    B, H, E, Ev = 2, 3, 4, 3
    g = torch.Generator().manual_seed(B + 10 * L + S)
    q = torch.randn(B, H, L, E, dtype=D64, generator=g)
    k = torch.randn(B, H, S, E, dtype=D64, generator=g)
    v = torch.randn(B, H, S, Ev, dtype=D64, generator=g)
    shape = [{"B": B, "H": H, "L": L, "1": 1}[c] for c in sigma_shape]
    # widths from 0.2 to 5: rows with sharp and with flat kernels
    sigma = torch.exp(torch.empty(shape, dtype=D64).uniform_(-1.6, 1.6, generator=g))
    kw, _ = _request(case, L, S, g)
    _fused_vs_math(q, k, v, sigma, kw, dict(rtol=1e-8, atol=1e-10))


@pytest.mark.parametrize(
    "kw",
    [
        dict(is_causal=True, window=7),
        dict(window=5),
        dict(is_causal=True, window=40, decay=0.9),
        dict(window=3, tau=0.5, timestamps=True),
    ],
    ids=_ids,
)
@pytest.mark.parametrize("L,S", [(700, 700), (650, 720)])
def test_long_windowed_blockwise_per_row_sigma_matches_math(kw, L, S):
    # S > 2·(WINDOW_BLOCK + W): the fused path runs block by block and must slice σ's rows.
    assert S > 2 * (WINDOW_BLOCK + kw["window"])
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
    # σ varying along the rows, so a misaligned block would show
    sigma = 0.5 + torch.linspace(0, 1, L, dtype=D64).repeat(2, 1).unsqueeze(-1)
    sigma[1] = sigma[1].flip(0)
    _fused_vs_math(q, k, v, sigma, kw, dict(rtol=1e-9, atol=1e-10))
    if L != S:  # a per-row σ shared by all rows ((B, 1, 1): one per batch element)
        _fused_vs_math(q, k, v, sigma[:, :1], kw, dict(rtol=1e-9, atol=1e-10))


@pytest.mark.parametrize("backend", ["math", "fused"])
def test_gradcheck_including_per_row_sigma(backend):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 2, 5, 3, dtype=D64, generator=g, requires_grad=True)
    k = torch.randn(2, 2, 6, 3, dtype=D64, generator=g, requires_grad=True)
    v = torch.randn(2, 2, 6, 2, dtype=D64, generator=g, requires_grad=True)
    sigma = (0.6 + torch.rand(2, 2, 5, 1, dtype=D64, generator=g)).requires_grad_()
    decay = torch.tensor([0.6, 0.9], dtype=D64, requires_grad=True)

    def f(q, k, v, sigma, decay):
        return projection_sdpa(
            q, k, v, sigma=sigma, decay=decay, is_causal=True, window=4, backend=backend
        )

    assert torch.autograd.gradcheck(f, (q, k, v, sigma, decay))
    # d/dσ_i touches row i only
    y = f(q, k, v, sigma, decay)
    (gs,) = torch.autograd.grad(y[0, 1, 3].sum(), sigma)
    assert gs[0, 1, 3, 0] != 0
    assert torch.count_nonzero(gs) == 1


@pytest.mark.parametrize("backend", ["math", "fused"])
@pytest.mark.parametrize(
    "kw", [dict(), dict(is_causal=True), dict(window=3, decay=0.8), dict(mask=True)], ids=_ids
)
def test_constant_per_row_sigma_equals_float_and_per_head(backend, kw):
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 3, 9, 4, dtype=D64, generator=g) for _ in range(3))
    kw = dict(kw)
    if kw.pop("mask", False):
        kw["attn_mask"] = torch.rand(9, 9, generator=g) > 0.5
    rows = torch.full((2, 3, 9, 1), 0.7, dtype=D64)
    y = projection_sdpa(q, k, v, sigma=rows, backend=backend, **kw)
    torch.testing.assert_close(y, projection_sdpa(q, k, v, sigma=0.7, backend=backend, **kw))
    # the same numbers as a per-head tensor: bit for bit on the math backend (both are divided
    # in the same place); the fused one runs a per-head σ without a mask in its bias form
    # (head width E) and a per-row σ in its column form (E + 1), so to rounding there
    head = torch.full((3,), 0.7, dtype=D64)
    y_head = projection_sdpa(q, k, v, sigma=head, backend=backend, **kw)
    if backend == "math":
        assert torch.equal(y, y_head)
    else:
        torch.testing.assert_close(y, y_head, rtol=1e-12, atol=1e-12)
    assert torch.equal(
        projection_weights(q, k, sigma=rows, **kw), projection_weights(q, k, sigma=head, **kw)
    )


def test_per_row_sigma_broadcasts_over_heads_and_batch():
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 3, 6, 4, dtype=D64, generator=g) for _ in range(3))
    rows = 0.5 + torch.rand(1, 1, 6, 1, dtype=D64, generator=g)
    y = projection_sdpa(q, k, v, sigma=rows, is_causal=True)
    torch.testing.assert_close(
        y, projection_sdpa(q, k, v, sigma=rows.expand(2, 3, 6, 1), is_causal=True)
    )
    # a query (H, L, E) against keys (B, H, S, E): (H, L, 1) is per row, shared over B
    rows_h = 0.5 + torch.rand(3, 6, 1, dtype=D64, generator=g)
    y2 = projection_sdpa(q[0], k, v, sigma=rows_h, backend="fused")
    for b in range(2):
        want = projection_sdpa(q[0], k[b], v[b], sigma=rows_h, backend="math")
        torch.testing.assert_close(y2[b], want)


def test_tensor_fitting_the_leading_dims_stays_per_head():
    # query (L, E) with keys (B, H, S, E): a (B, 1) tensor has as many dims as query but fits
    # the leading dims (B, H); it keeps its old meaning, one σ per batch element.
    g = torch.Generator().manual_seed(4)
    B = L = 3
    q = torch.randn(L, 2, dtype=D64, generator=g)
    k, v = (torch.randn(B, 2, 5, 2, dtype=D64, generator=g) for _ in range(2))
    s = torch.tensor([[0.3], [1.0], [3.0]], dtype=D64)
    y = projection_sdpa(q, k, v, sigma=s)
    for b in range(B):
        torch.testing.assert_close(y[b], projection_sdpa(q, k[b], v[b], sigma=float(s[b])))
    # the full (B, H, L, 1) shape reads per row
    rows = s.reshape(1, 1, L, 1)
    y_rows = projection_sdpa(q, k, v, sigma=rows)
    for i in range(L):
        want = projection_sdpa(q, k, v, sigma=float(s[i]))[..., i, :]
        torch.testing.assert_close(y_rows[..., i, :], want)


def test_auto_uses_the_smallest_sigma():
    g = torch.Generator().manual_seed(5)
    base = torch.randn(1, 30, 3, generator=g, dtype=D64)
    q = base + 1e-2 * torch.randn(1, 30, 3, generator=g, dtype=D64)
    k = base * 50
    rows = torch.full((1, 30, 1), 10.0, dtype=D64)
    rows[0, 7] = 0.05  # one sharp row: the fused expansion would be off there in float32
    qf, kf = q.float(), k.float()
    c = kf.mean(dim=-2, keepdim=True)
    err = ops._fused_logit_error(qf - c, kf - c, rows.float())
    assert err == pytest.approx(ops._fused_logit_error(qf - c, kf - c, 0.05), rel=1e-6)
    assert err > ops.FUSED_MAX_LOGIT_ERROR
    exact = projection_sdpa(q, k, k, sigma=rows, backend="math")
    got = projection_sdpa(qf, kf, kf, sigma=rows.float(), backend="auto")
    assert torch.equal(got, projection_sdpa(qf, kf, kf, sigma=rows.float(), backend="math"))
    torch.testing.assert_close(got.double(), exact, rtol=1e-4, atol=1e-4)


def test_centring_with_per_row_sigma_on_offset_signals():
    g = torch.Generator().manual_seed(6)
    x = torch.randn(1, 40, 2, generator=g, dtype=D64)
    rows = 0.2 + 0.3 * torch.rand(1, 40, 1, generator=g, dtype=D64)
    want = projection_sdpa(x, x, sigma=rows, is_causal=True, backend="math")
    xo = (x + 1e4).float()
    got = projection_sdpa(xo, xo, sigma=rows.float(), is_causal=True, backend="fused") - 1e4
    torch.testing.assert_close(got.double(), want, rtol=0, atol=5e-3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("backend", ["math", "fused"])
def test_half_precision_per_row_sigma_is_computed_in_float32(dtype, backend):
    g = torch.Generator().manual_seed(7)
    q = torch.randn(2, 12, 4, generator=g).to(dtype)
    k = (q.float() + 0.01 * torch.randn(2, 12, 4, generator=g)).to(dtype)
    v = torch.randn(2, 12, 3, generator=g).to(dtype)
    rows = (0.02 + 0.02 * torch.rand(2, 12, 1, generator=g)).to(dtype)
    y = projection_sdpa(q, k, v, sigma=rows, is_causal=True, backend=backend)
    assert y.dtype == dtype
    want = projection_sdpa(
        q.double(), k.double(), v.double(), sigma=rows.double(), is_causal=True, backend="math"
    )
    torch.testing.assert_close(y.double(), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("backend", ["math", "fused"])
def test_empty_rows_are_zero_with_finite_gradients(backend):
    g = torch.Generator().manual_seed(8)
    q = torch.randn(5, 3, dtype=D64, generator=g, requires_grad=True)
    k = torch.randn(4, 3, dtype=D64, generator=g, requires_grad=True)
    v = torch.randn(4, 2, dtype=D64, generator=g, requires_grad=True)
    rows = (0.5 + torch.rand(5, 1, dtype=D64, generator=g)).requires_grad_()
    mask = torch.ones(5, 4, dtype=torch.bool)
    mask[1] = False
    y = projection_sdpa(q, k, v, sigma=rows, attn_mask=mask, backend=backend)
    assert torch.equal(y[1], torch.zeros(2, dtype=D64))
    y.sum().backward()
    for t in (q, k, v, rows):
        assert torch.isfinite(t.grad).all()
    assert rows.grad[1, 0] == 0 and rows.grad.abs().sum() > 0


def test_inputs_are_not_mutated():
    q, k, v = torch.randn(2, 6, 3), torch.randn(2, 6, 3), torch.randn(2, 6, 2)
    rows = torch.rand(2, 6, 1) + 0.5
    before = rows.clone()
    for backend in ("math", "fused"):
        projection_sdpa(q, k, v, sigma=rows, is_causal=True, backend=backend)
    assert torch.equal(rows, before)


@pytest.mark.parametrize(
    "sigma,exc",
    [
        (torch.ones(2, 6), ValueError),  # per row without the trailing 1
        (torch.ones(2, 6, 2), ValueError),  # last dim not 1
        (torch.ones(2, 5, 1), ValueError),  # wrong L
        (torch.ones(3, 6, 1), ValueError),  # wrong batch
        (torch.ones(1, 2, 6, 1), ValueError),  # more dims than the output
        (torch.ones(6, 1), ValueError),  # fewer dims than query: read per batch, (2,) ≠ (6, 1)
        (torch.tensor([1.0, -1.0, 1, 1, 1, 1]).reshape(1, 6, 1), ValueError),
        (torch.tensor([1.0, 0.0, 1, 1, 1, 1]).reshape(1, 6, 1), ValueError),
        (torch.tensor([1.0, float("nan"), 1, 1, 1, 1]).reshape(1, 6, 1), ValueError),
        (torch.tensor([1.0, float("inf"), 1, 1, 1, 1]).reshape(1, 6, 1), ValueError),
        (torch.ones(2, 6, 1, dtype=torch.int64), TypeError),
    ],
)
@pytest.mark.parametrize("fn", ["sdpa", "weights"])
def test_bad_per_row_sigma_raises_naming_sigma(sigma, exc, fn):
    q, k, v = torch.randn(2, 6, 3), torch.randn(2, 7, 3), torch.randn(2, 7, 2)
    with pytest.raises(exc, match="sigma"):
        if fn == "sdpa":
            projection_sdpa(q, k, v, sigma=sigma)
        else:
            projection_weights(q, k, sigma=sigma)


def test_shapes_are_checked_without_validate():
    q, k = torch.randn(2, 6, 3), torch.randn(2, 7, 3)
    with pytest.raises(ValueError, match="sigma"):
        projection_sdpa(q, k, sigma=torch.ones(2, 5, 1), validate=False)
    # values are not scanned then (no device→host read)
    projection_sdpa(q, k, sigma=-torch.ones(2, 6, 1), validate=False)
