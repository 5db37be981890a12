"""CUDA checks of the fused path (head-dim padding, flash/efficient kernels); skipped on CPU."""

import pytest
import torch

from tssdpa import projection_sdpa

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(is_causal=True),
        dict(is_causal=True, decay=0.95),
        dict(is_causal=True, window=64),
    ],
)
def test_cuda_fused_matches_float64_math(dtype, kw):
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(2, 4, 1024, 63, device="cuda", generator=g)
    k = torch.randn(2, 4, 1024, 63, device="cuda", generator=g)
    v = torch.randn(2, 4, 1024, 50, device="cuda", generator=g)
    want = projection_sdpa(q.double(), k.double(), v.double(), sigma=4.0, backend="math", **kw)
    got = projection_sdpa(q.to(dtype), k.to(dtype), v.to(dtype), sigma=4.0, backend="fused", **kw)
    tol = 2e-3 if dtype == torch.float32 else 3e-2
    torch.testing.assert_close(got.double(), want, rtol=tol, atol=tol)


def test_cuda_bf16_autocast_keeps_fused_logits_in_float32():
    # torch's SDPA is on CUDA autocast's bfloat16 list; at σ = 0.01 that rounding would cost
    # whole nats, so projection_sdpa turns autocast off around its kernels.
    g = torch.Generator(device="cuda").manual_seed(1)
    q = torch.randn(2, 4, 256, 64, device="cuda", generator=g) * 0.05
    k = q + 0.01 * torch.randn(2, 4, 256, 64, device="cuda", generator=g)
    v = torch.randn(2, 4, 256, 64, device="cuda", generator=g)
    want = projection_sdpa(q, k, v, sigma=0.01, is_causal=True, backend="fused")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        got = projection_sdpa(q, k, v, sigma=0.01, is_causal=True, backend="fused")
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_cuda_math_backend_backward_at_long_sequences():
    # torch's CUDA cdist backward hit an illegal memory access at this size (H100, torch
    # 2.11; an (L, S, E) buffer per head); the reference's own backward is O(L·S).
    g = torch.Generator(device="cuda").manual_seed(2)
    q, k, v = (torch.randn(1, 4, 4096, 64, device="cuda", generator=g) for _ in range(3))
    q.requires_grad_()
    projection_sdpa(q, k, v, sigma=8.0, backend="math").sum().backward()
    torch.cuda.synchronize()
    assert torch.isfinite(q.grad).all()


def test_layer_forward_needs_no_host_sync():
    # The layers validate at construction; their forward must not read values back to the
    # host (it would stall the GPU at every attention site).
    from tssdpa.nn import ProjectionMultiheadAttention

    m = ProjectionMultiheadAttention(
        64, 4, batch_first=True, learn_sigma=True, decay=0.9, learn_decay=True, backend="fused"
    ).cuda()
    x = torch.randn(2, 128, 64, device="cuda")
    pad = torch.zeros(2, 128, dtype=torch.bool, device="cuda")
    m(x, x, x, key_padding_mask=pad, need_weights=False, is_causal=True)  # warm-up
    torch.cuda.set_sync_debug_mode("error")
    try:
        y, _ = m(x, x, x, key_padding_mask=pad, need_weights=False, is_causal=True)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert y.shape == x.shape
