"""The blockwise decay path (issue 12): equal to the math backend, outputs and gradients, on both
block kernels; the skipping rule keeps its stated bound; no L×S structure tensor is built."""

import pytest
import torch

import tssdpa.ops.blockplan as bp
import tssdpa.ops.blockwise as bw
from tssdpa import projection_sdpa, projection_weights
from tssdpa.nn import ProjectionMultiheadAttention

D64 = torch.float64
KERNELS = ["flash", "plain"]


@pytest.fixture(params=KERNELS)
def kernel(request, monkeypatch):
    """Run with torch's CPU flash kernels per block, or with the plain-operations kernel."""
    if request.param == "flash" and not bw.USE_CPU_FLASH:
        pytest.skip("this torch has no CPU flash-attention op")
    monkeypatch.setattr(bw, "USE_CPU_FLASH", request.param == "flash")
    return request.param


def _inputs(B, H, L, S, E, Ev, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, L, E, dtype=D64, generator=g)
    k = q[..., :1, :] + torch.randn(B, H, S, E, dtype=D64, generator=g)
    v = torch.randn(B, H, S, Ev, dtype=D64, generator=g)
    return q, k, v, g


def _run(q, k, v, sigma, kw, backend, param_name=None, param=None, tol=0.0):
    """Output and gradients for q, k, v, sigma and the decay parameter."""
    qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
    s = sigma.clone().requires_grad_()
    kw = dict(kw)
    p = None
    if param_name is not None:
        p = param.clone().requires_grad_()
        kw[param_name] = p
    y = projection_sdpa(qq, kk, vv, sigma=s, backend=backend, decay_tol=tol, **kw)
    w = torch.linspace(-1, 1, y.shape[-1], dtype=D64)
    (y * w).sum().backward()
    return [y, qq.grad, kk.grad, vv.grad, s.grad] + ([p.grad] if p is not None else [])


def _times(L, g, sort=True):
    t = torch.rand(L, generator=g, dtype=D64) * 2
    return t.cumsum(0) if sort else t * L


STRUCTURES = [
    ("causal-decay", dict(is_causal=True), "decay"),
    ("decay", dict(), "decay"),
    ("causal-window-decay", dict(is_causal=True, window=9), "decay"),
    ("window-decay", dict(window=6), "decay"),
    ("causal-tau", dict(is_causal=True), "tau"),
    ("tau", dict(), "tau"),
    ("causal-tau-unsorted", dict(is_causal=True, unsorted=True), "tau"),
    ("bool-mask-decay", dict(is_causal=True, mask="bool"), "decay"),
    ("float-mask-decay", dict(mask="float"), "decay"),
]


def _request(name_kw, L, S, B, H, g):
    kw = dict(name_kw)
    sort = not kw.pop("unsorted", False)
    mask = kw.pop("mask", None)
    if mask == "bool":
        m = torch.rand(B, 1, L, S, generator=g) > 0.5
        m[..., 1, :] = False  # a fully masked row
        kw["attn_mask"] = m
    elif mask == "float":
        m = torch.randn(L, S, dtype=D64, generator=g)
        m[torch.rand(L, S, generator=g) > 0.6] = float("-inf")
        m[-1] = float("-inf")  # a fully masked row
        kw["attn_mask"] = m
    return kw, sort


@pytest.mark.parametrize("struct", STRUCTURES, ids=[s[0] for s in STRUCTURES])
@pytest.mark.parametrize("L,S,block", [(37, 37, 8), (29, 45, 16), (45, 29, 4), (20, 20, 256)])
@pytest.mark.parametrize("gamma", [0.02, 0.7, 0.9999])
def test_blockwise_matches_math_outputs_and_gradients(struct, L, S, block, gamma, kernel):
    _, kw, pname = struct
    B, H = 2, 3
    q, k, v, g = _inputs(B, H, L, S, 5, 4, seed=L * 7 + S + block)
    kw, sort = _request(kw, L, S, B, H, g)
    if pname == "tau":
        kw["timestamps"] = (_times(L, g, sort), _times(S, g, sort))
        # a time constant as short as γ's step and as long as the whole record
        param = torch.tensor([1.0 / -torch.log(torch.tensor(gamma)).item(), 0.3, 5.0], dtype=D64)
    else:
        param = torch.tensor([gamma, 0.5, 1.0], dtype=D64)  # per head, one of them no decay
    sigma = torch.tensor([0.7, 1.0, 2.5], dtype=D64)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bw, "DECAY_BLOCK", block)
        got = _run(q, k, v, sigma, kw, "fused", pname, param)
    want = _run(q, k, v, sigma, kw, "math", pname, param)
    for name, a, b in zip(["out", "q", "k", "v", "sigma", pname], got, want, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10, msg=name)


@pytest.mark.parametrize("pname", ["decay", "tau"])
def test_fixed_decay_backward_runs_on_the_flash_kernel_and_matches(pname, kernel):
    # With a float decay no decay gradient is needed: the flash backward kernel does the block.
    q, k, v, g = _inputs(1, 2, 70, 70, 6, 3, seed=3)
    kw = dict(is_causal=True)
    if pname == "tau":
        kw.update(tau=2.0, timestamps=_times(70, g))
    else:
        kw.update(decay=0.93)
    sigma = torch.tensor(1.1, dtype=D64)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bw, "DECAY_BLOCK", 16)
        got = _run(q, k, v, sigma, kw, "fused")
    for a, b in zip(got, _run(q, k, v, sigma, kw, "math"), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


def _base_keys(L, S, block, causal):
    return sum(
        j1 - j0
        for j0, j1 in (
            bp.base_range(a, min(a + block, L), S, causal, None) for a in range(0, L, block)
        )
    )


def _recording(mp) -> list:
    """Record the plans (and so the key range of every block) of the calls that follow."""
    plans = []

    class Recorded(bp.Plan):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            plans.append(self)

    mp.setattr(bw, "Plan", Recorded)
    return plans


@pytest.mark.parametrize("tol", [1e-2, 1e-4, 1e-6])
@pytest.mark.parametrize(
    "case",
    [
        dict(is_causal=True, decay=0.9),
        dict(decay=0.8),
        dict(is_causal=True, tau=0.4),
        dict(tau=0.7),
        dict(is_causal=True, decay=torch.tensor([0.85, 0.6])),
    ],
    ids=["causal-decay", "decay", "causal-tau", "tau", "per-head-decay"],
)
def test_skipping_stays_within_the_stated_bound(case, tol, kernel):
    """Skipped keys hold at most ``tol`` of each row's weight, so each output coordinate moves
    by at most tol · (max - min of that value coordinate); and keys are really skipped."""
    L = 800
    q, k, v, g = _inputs(1, 2, L, L, 3, 4, seed=11)
    kw = dict(case)
    if "tau" in kw:
        kw["timestamps"] = _times(L, g)  # mean step 1: τ of a fraction of a step
    with pytest.MonkeyPatch.context() as mp:
        plans = _recording(mp)
        mp.setattr(bw, "DECAY_BLOCK", 32)
        got = _run(q, k, v, torch.tensor(1.5, dtype=D64), kw, "fused", tol=tol)
    want = _run(q, k, v, torch.tensor(1.5, dtype=D64), kw, "math")
    spread = v.amax(dim=-2, keepdim=True) - v.amin(dim=-2, keepdim=True)  # (B, H, 1, Ev)
    err = (got[0] - want[0]).abs()
    assert (err <= tol * spread + 1e-12).all(), float((err / spread).max())
    kept = sum(j1 - j0 for _, _, j0, j1 in plans[0].blocks)
    assert kept < 0.75 * _base_keys(L, L, 32, kw.get("is_causal", False))  # skipping happened
    for a, b in zip(got[1:], want[1:], strict=True):  # gradients of the truncated sum: close
        torch.testing.assert_close(a, b, rtol=0, atol=50 * tol * float(b.abs().max()))


@pytest.mark.parametrize(
    "case",
    [dict(decay=0.8), dict(is_causal=True, decay=0.9), dict(tau=0.3)],
    ids=["decay", "causal-decay", "tau"],
)
def test_rows_past_the_last_key_stay_within_the_bound(case, kernel):
    # more queries than keys: a block's guessed range (the previous block's) fell past the
    # last key, clipped to nothing, and the block came back as zeros (errors of 0.4-1.1)
    tol, L, S = 1e-6, 800, 300  # the default block size
    q, _, _, g = _inputs(1, 1, L, S, 2, 2, seed=13)
    k = torch.randn(1, 1, S, 2, dtype=D64, generator=g)
    v = torch.randn(1, 1, S, 2, dtype=D64, generator=g)
    kw = dict(case)
    if "tau" in kw:  # queries every 0.5, keys every 0.1: the later rows lie past the last key
        kw["timestamps"] = (torch.arange(L, dtype=D64) * 0.5, torch.arange(S, dtype=D64) * 0.1)
    got = projection_sdpa(q, k, v, sigma=1.0, backend="fused", decay_tol=tol, **kw)
    want = projection_sdpa(q, k, v, sigma=1.0, backend="math", **kw)
    spread = v.amax(dim=-2, keepdim=True) - v.amin(dim=-2, keepdim=True)
    assert ((got - want).abs() <= tol * spread + 1e-12).all()


def test_skipping_keeps_its_bound_with_int64_epoch_nanosecond_timestamps():
    """The skipping bounds compared times in float64 from their absolute values, which hold
    epoch nanoseconds (1.7e18) to 256 ns: with τ = 20 ns the skipped keys held 0.49 of a row's
    weight at decay_tol = 0.01; times counted from an origin give what they give near 0."""
    L, tol = 700, 1e-2
    base = 1_700_000_000_000_000_123
    t = base + torch.arange(L)  # int64, 1 ns apart
    q = torch.zeros(1, L, 1, dtype=D64)  # the kernel factor is 1: the weights are the decay's
    v = (torch.arange(L) % 2).to(D64)[None, :, None]  # spread 1
    for times in (t, t - base):
        got = projection_sdpa(q, q, v, tau=20.0, timestamps=times, is_causal=True,
                              backend="fused", decay_tol=tol)  # fmt: skip
        want = projection_sdpa(q, q, v, tau=20.0, timestamps=times, is_causal=True, backend="math")
        assert float((got - want).abs().max()) <= tol


def test_zero_tolerance_and_unsorted_times_skip_nothing():
    q, k, v, g = _inputs(1, 1, 200, 200, 2, 2, seed=5)
    t = _times(200, g, sort=False)
    for kw, tol in [(dict(decay=0.5, is_causal=True), 0.0), (dict(tau=0.1, timestamps=t), 1e-3)]:
        with pytest.MonkeyPatch.context() as mp:
            plans = _recording(mp)
            got = projection_sdpa(q, k, v, backend="fused", decay_tol=tol, **kw)
        want = projection_sdpa(q, k, v, backend="math", **kw)
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)
        base = [bp.base_range(0, 200, 200, kw.get("is_causal", False), None)]  # one block
        assert [(j0, j1) for *_, j0, j1 in plans[0].blocks] == base


def test_no_structure_tensor_is_larger_than_a_block(monkeypatch):
    """The point of the path: memory O(L·block). Every mask it builds has block rows."""
    L, block = 2048, 128
    sizes = []
    real = bw.block_mask

    def spy(plan, a, b, j0, j1, device, dtype):
        mask, empty = real(plan, a, b, j0, j1, device, dtype)
        sizes.append(mask.shape[-2])
        return mask, empty

    monkeypatch.setattr(bw, "block_mask", spy)
    monkeypatch.setattr(bw, "DECAY_BLOCK", block)
    x = torch.randn(1, 2, L, 4)
    t = torch.arange(L, dtype=torch.float64)
    for kw in (dict(is_causal=True, decay=0.99), dict(is_causal=True, tau=3.0, timestamps=t)):
        sizes.clear()
        projection_sdpa(x, x, x, backend="fused", **kw)
        assert len(sizes) == L // block and max(sizes) == block


@pytest.mark.parametrize("bad", [-0.1, 1.0, float("nan"), "1e-3"])
def test_bad_tolerance_raises_naming_it(bad):
    x = torch.randn(1, 8, 2)
    with pytest.raises(ValueError, match="decay_tol"):
        projection_sdpa(x, x, x, decay=0.9, decay_tol=bad)


@pytest.mark.parametrize("kind", ["decay", "tau"])
def test_layer_with_learned_decay_runs_blockwise_and_matches_math(kind, monkeypatch):
    monkeypatch.setattr(bw, "DECAY_BLOCK", 8)
    torch.manual_seed(0)
    kw = dict(decay=[0.8, 0.95]) if kind == "decay" else dict(tau=[0.5, 3.0])
    layers = {
        backend: ProjectionMultiheadAttention(
            8,
            2,
            batch_first=True,
            learn_sigma=True,
            learn_decay=True,
            backend=backend,
            dtype=D64,
            **kw,
        )
        for backend in ("fused", "math")
    }
    layers["math"].load_state_dict(layers["fused"].state_dict())
    x = torch.randn(2, 30, 8, dtype=D64)
    extra = {"timestamps": torch.rand(2, 30, dtype=D64).cumsum(-1)} if kind == "tau" else {}
    calls = []
    real = bw.blockwise_attention
    monkeypatch.setattr(
        "tssdpa.ops.projection.blockwise_attention",
        lambda *a, **k: calls.append(1) or real(*a, **k),
    )
    res = []
    for layer in layers.values():
        y, _ = layer(x, x, x, is_causal=True, need_weights=False, **extra)
        y.square().sum().backward()
        res.append([y] + [p.grad for p in layer.parameters()])
    assert calls  # the fused layer went through the blockwise path
    for a, b in zip(*res, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-10)


def _dropout_masks(seed, p, shape4, L, S, block, is_causal):
    """The full (..., L, S) dropout factor the blockwise path draws block by block."""
    plan = bp.Plan(block, {}, None, torch.Size(shape4), False, dropout_p=p, seed=seed)
    full = torch.zeros(*shape4, L, S, dtype=D64)
    for a in range(0, L, block):
        b = min(a + block, L)
        j1 = min(S, b) if is_causal else S
        full[..., a:b, :j1] = bw.dropout_keep(plan, a, (*shape4, b - a, j1), "cpu", D64)
    return full


@pytest.mark.parametrize("is_causal", [True, False])
@pytest.mark.parametrize("pname", ["decay", "tau"])
def test_dropout_with_a_decay_equals_the_math_weights_times_the_same_masks(is_causal, pname):
    """Dropout no longer sends a decay to the L×S path: each block draws its mask from a seed
    and draws it again in the backward pass. Outputs and gradients (q, k, v, σ, the decay)
    equal the math weights times the same masks."""
    B, H, L, S, E, p, block = 1, 2, 37, 37, 3, 0.3, 8
    q, k, v, g = _inputs(B, H, L, S, E, 4, seed=11)
    kw = dict(is_causal=is_causal)
    if pname == "tau":
        kw["timestamps"] = _times(L, g)
    param = torch.tensor([0.8, 0.6] if pname == "decay" else [1.5, 3.0], dtype=D64)
    sigma = torch.tensor([1.3, 0.9], dtype=D64)  # per head, like the decay
    torch.manual_seed(5)
    seed = int(torch.randint(0, 2**62, (1,)).item())  # the seed the call will draw
    masks = _dropout_masks(seed, p, (B, H), L, S, block, is_causal)

    def blockwise(qq, kk, vv, s, pp):
        torch.manual_seed(5)
        return projection_sdpa(qq, kk, vv, sigma=s, backend="fused", dropout_p=p,
                               **kw, **{pname: pp})  # fmt: skip

    def reference(qq, kk, vv, s, pp):
        w = projection_weights(qq, kk, sigma=s, **kw, **{pname: pp})
        return (w * masks) @ vv

    old = bw.DECAY_BLOCK
    try:
        bw.DECAY_BLOCK = block
        ins = [t.clone().requires_grad_() for t in (q, k, v, sigma, param)]
        y = blockwise(*ins)
        (y * torch.linspace(-1, 1, 4, dtype=D64)).sum().backward()
        ref_ins = [t.clone().requires_grad_() for t in (q, k, v, sigma, param)]
        r = reference(*ref_ins)
        (r * torch.linspace(-1, 1, 4, dtype=D64)).sum().backward()
    finally:
        bw.DECAY_BLOCK = old
    torch.testing.assert_close(y, r, rtol=1e-10, atol=1e-12)
    for a, b in zip(ins, ref_ins):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-9, atol=1e-11)
    assert (masks == 0).any() and (masks > 1).any()  # weights were dropped and rescaled


@pytest.mark.parametrize("what", ["attn_mask", "timestamps"])
def test_a_mask_or_times_changed_in_place_before_backward_raise_instead_of_bending_it(what):
    # the blockwise backward builds each block's structure again from the caller's mask and
    # times: changed in between, they silently changed the gradients (by 5.3 against the
    # math backend's, which keeps the forward's values), where torch's ops raise
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 8, 3, dtype=torch.float64, generator=g, requires_grad=True)
    mask = torch.rand(8, 8, generator=g) > 0.3
    mask.fill_diagonal_(True)
    t = torch.rand(8, dtype=torch.float64, generator=g).cumsum(0)
    kw = dict(attn_mask=mask, decay=0.8) if what == "attn_mask" else dict(tau=0.5, timestamps=t)
    out = projection_sdpa(q, q, q, sigma=1.0, backend="fused", **kw)
    if what == "attn_mask":
        mask[0, 1:] = ~mask[0, 1:]
    else:
        t.mul_(3.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
