"""ProjectionMultiheadAttention as a drop-in for nn.MultiheadAttention, and the blocks."""

import copy

import numpy as np
import pytest
import torch
from torch import nn

from tssdpa import projection_sdpa
from tssdpa.nn import DecoderBlock, EncoderBlock, ProjectionMultiheadAttention


def _pair(**kw):
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(16, 4, **kw)
    ours = ProjectionMultiheadAttention(16, 4, attention="standard", **kw)
    ours.load_state_dict(ref.state_dict())
    return ref.eval(), ours.eval()


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("kdim", [None, 6])
@pytest.mark.parametrize(
    "extras", [dict(), dict(add_bias_kv=True), dict(add_zero_attn=True), dict(bias=False)]
)
def test_standard_attention_reproduces_torch_multihead_attention(batch_first, kdim, extras):
    ref, ours = _pair(batch_first=batch_first, kdim=kdim, vdim=kdim, **extras)
    g = torch.Generator().manual_seed(1)
    q = torch.randn(2, 5, 16, generator=g)
    k = torch.randn(2, 7, kdim or 16, generator=g)
    if not batch_first:
        q, k = q.transpose(0, 1), k.transpose(0, 1)
    kpm = torch.zeros(2, 7, dtype=torch.bool)
    kpm[0, -2:] = True
    bool_mask = torch.rand(5, 7, generator=g) > 0.7
    bool_mask[:, 0] = False
    float_mask = torch.randn(2 * 4, 5, 7, generator=g)
    for kw in (
        dict(),
        dict(key_padding_mask=kpm),
        dict(attn_mask=bool_mask),
        dict(attn_mask=float_mask, key_padding_mask=kpm),
        dict(need_weights=False, attn_mask=bool_mask),
        dict(average_attn_weights=False, key_padding_mask=kpm),
    ):
        a, wa = ref(q, k, k, **kw)
        b, wb = ours(q, k, k, **kw)
        torch.testing.assert_close(b, a)
        if wa is None:
            assert wb is None
        else:
            torch.testing.assert_close(wb, wa)


def test_standard_causal_and_unbatched_match_torch():
    ref, ours = _pair(batch_first=True)
    x = torch.randn(3, 6, 16)
    causal = nn.Transformer.generate_square_subsequent_mask(6)
    a, _ = ref(x, x, x, attn_mask=causal, is_causal=True, need_weights=False)
    b, _ = ours(x, x, x, is_causal=True, need_weights=False)
    torch.testing.assert_close(b, a)
    a1, w1 = ref(x[0], x[0], x[0])
    b1, v1 = ours(x[0], x[0], x[0])
    torch.testing.assert_close(b1, a1)
    torch.testing.assert_close(v1, w1)


def test_projection_layer_is_projection_sdpa_on_projected_heads():
    torch.manual_seed(2)
    m = ProjectionMultiheadAttention(
        12, 3, batch_first=True, sigma=[0.5, 1.0, 2.0], window=4, decay=0.8
    ).eval()
    x = torch.randn(2, 9, 12)
    y, w = m(x, x, x, is_causal=True, average_attn_weights=False)
    q, k, v = m._project(x, x, x)
    q, k, v = (t.unflatten(-1, (3, 4)).transpose(1, 2) for t in (q, k, v))
    o = projection_sdpa(
        q,
        k,
        v,
        sigma=torch.tensor([0.5, 1.0, 2.0]),
        window=4,
        decay=0.8,
        is_causal=True,
        backend="math",
    )
    torch.testing.assert_close(y, m.out_proj(o.transpose(1, 2).flatten(-2)))
    assert w.shape == (2, 3, 9, 9)
    assert torch.all(w.triu(1) == 0) and torch.all(w.tril(-4) == 0)
    # the fast path (no weights requested) gives the same output
    y2, none = m(x, x, x, is_causal=True, need_weights=False)
    assert none is None
    torch.testing.assert_close(y2, y)


def test_normalize_qk_is_projection_sdpa_on_unit_length_heads_in_output_and_gradient():
    torch.manual_seed(3)
    m = ProjectionMultiheadAttention(12, 3, batch_first=True, sigma=0.4, normalize_qk=True)
    x = torch.randn(2, 7, 12, dtype=torch.float64, requires_grad=True)
    m = m.double()
    y, w = m(x, x, x, is_causal=True, average_attn_weights=False)

    def reference(x):
        q, k, v = m._project(x, x, x)
        q, k, v = (t.unflatten(-1, (3, 4)).transpose(1, 2) for t in (q, k, v))
        q, k = q / q.norm(dim=-1, keepdim=True), k / k.norm(dim=-1, keepdim=True)
        o = projection_sdpa(q, k, v, sigma=0.4, is_causal=True, backend="math")
        return m.out_proj(o.transpose(1, 2).flatten(-2))

    ref = reference(x)
    torch.testing.assert_close(y, ref)
    g = torch.randn_like(y)
    (dx,) = torch.autograd.grad((y * g).sum(), x)
    (dx_ref,) = torch.autograd.grad((ref * g).sum(), x)
    torch.testing.assert_close(dx, dx_ref)
    # the logits are bounded: a unit-length q and k are at most 2 apart
    assert float(w[w > 0].min()) >= float(torch.exp(torch.tensor(-4 / (2 * 0.4**2)))) / 7
    y2, _ = m(x, x, x, is_causal=True, need_weights=False)  # the fused path
    torch.testing.assert_close(y2, ref)
    with pytest.raises(ValueError, match="normalize_qk"):
        ProjectionMultiheadAttention(12, 3, attention="standard", normalize_qk=True)


def test_normalize_qk_with_value_key_averages_the_unit_length_keys():
    torch.manual_seed(4)
    m = ProjectionMultiheadAttention(8, 2, batch_first=True, sigma=0.5, value="key",
                                     normalize_qk=True).eval()  # fmt: skip
    x = torch.randn(2, 6, 8)
    y, _ = m(x, x, x, need_weights=False)
    q, k, _ = m._project(x, x, x)
    q, k = (t.unflatten(-1, (2, 4)).transpose(1, 2) for t in (q, k))
    q, k = q / q.norm(dim=-1, keepdim=True), k / k.norm(dim=-1, keepdim=True)
    o = projection_sdpa(q, k, k, sigma=0.5, backend="math")
    torch.testing.assert_close(y, m.out_proj(o.transpose(1, 2).flatten(-2)))


def test_learned_sigma_and_decay_receive_gradients():
    m = ProjectionMultiheadAttention(
        8, 2, batch_first=True, learn_sigma=True, sigma=2.0, decay=0.9, learn_decay=True
    )
    x = torch.randn(2, 7, 8)
    y, _ = m(x, x, x, is_causal=True, need_weights=False)
    (y * torch.randn_like(y)).sum().backward()
    assert m.log_sigma.grad is not None and m.log_sigma.grad.abs().sum() > 0
    assert m.decay_logit.grad is not None and m.decay_logit.grad.abs().sum() > 0
    torch.testing.assert_close(m.kernel_decay(), torch.full((2,), 0.9))


@pytest.mark.parametrize("dtype, far", [(torch.float32, -120.0), (torch.float64, -800.0)])
@pytest.mark.parametrize("kind", ["decay", "tau"])
def test_a_learned_decay_driven_far_down_weighs_only_the_own_key_not_nan(dtype, far, kind):
    # float32 sigmoid is exactly 0 below a logit of -88.7, exp below a log tau of about -104:
    # every output and gradient was NaN (log 0 x lag 0, 0 / 0 at equal times)
    torch.manual_seed(0)
    start = {"decay": 0.5} if kind == "decay" else {"tau": 0.5}
    m = ProjectionMultiheadAttention(8, 2, batch_first=True, sigma=2.0, learn_decay=True,
                                     dtype=dtype, **start)  # fmt: skip
    param = m.decay_logit if kind == "decay" else m.log_tau
    with torch.no_grad():
        param.fill_(far)
    x = torch.randn(2, 6, 8, dtype=dtype, requires_grad=True)
    times = torch.rand(2, 6, dtype=dtype).add(0.1).cumsum(-1)
    when = {"timestamps": times} if kind == "tau" else {}
    # the limit: each query's own key (lag 0, the same time) alone keeps a weight
    want = m.out_proj(nn.functional.linear(x, m.in_proj_weight[16:], m.in_proj_bias[16:]))
    tol = {"rtol": 0, "atol": 1e-6 if dtype == torch.float32 else 1e-12}
    for need_weights, backend in ((True, "math"), (False, "math"), (False, "fused")):
        m.backend = backend
        y, w = m(x, x, x, need_weights=need_weights, **when)
        torch.testing.assert_close(y, want, **tol)
        if need_weights:
            torch.testing.assert_close(w, torch.eye(6, dtype=dtype).expand(2, 6, 6), **tol)
        grads = torch.autograd.grad(y.square().sum(), (x, param))
        assert all(bool(g.isfinite().all()) for g in grads)


def test_tau_uses_timestamps_and_requires_them():
    m = ProjectionMultiheadAttention(8, 2, batch_first=True, tau=0.5, learn_decay=True)
    x = torch.randn(2, 6, 8)
    t = torch.rand(2, 6).cumsum(-1)
    y, _ = m(x, x, x, is_causal=True, timestamps=t, need_weights=False)
    y.sum().backward()
    assert m.log_tau.grad is not None
    with pytest.raises(ValueError, match="timestamps"):
        m(x, x, x)
    with pytest.raises(ValueError, match="tau"):
        ProjectionMultiheadAttention(8, 2, batch_first=True)(x, x, x, timestamps=t)


def test_value_key_and_head_dim_shapes():
    m = ProjectionMultiheadAttention(16, 8, batch_first=True, value="key", head_dim=16)
    assert m.in_proj_weight.shape == (2 * 8 * 16, 16)
    assert m.out_proj.weight.shape == (16, 128)
    x = torch.randn(2, 5, 16)
    y, _ = m(x, x, x)
    assert y.shape == (2, 5, 16)


def test_fixed_kernel_parameters_are_not_in_state_dict():
    m = ProjectionMultiheadAttention(8, 2, sigma=0.3, decay=0.9)
    assert set(m.state_dict()) == set(nn.MultiheadAttention(8, 2).state_dict())


@pytest.mark.parametrize(
    "kwargs,word",
    [
        (dict(embed_dim=10, num_heads=3), "divisible"),
        (dict(attention="linear"), "attention"),
        (dict(value="query"), "value"),
        (dict(decay=0.9, tau=1.0), "tau"),
        (dict(window=0), "window"),
        (dict(sigma=-1.0), "sigma"),
        (dict(sigma=[1.0, 2.0, 3.0]), "sigma"),
        (dict(decay=1.0, learn_decay=True), "decay"),
    ],
)
def test_layer_bad_construction(kwargs, word):
    base = dict(embed_dim=8, num_heads=2)
    base.update(kwargs)
    with pytest.raises(ValueError, match=word):
        ProjectionMultiheadAttention(**base)


def test_layer_bad_forward_shapes():
    m = ProjectionMultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match="embed_dim"):
        m(torch.randn(2, 5, 7), x, x)
    with pytest.raises(ValueError, match="key_padding_mask"):
        m(x, x, x, key_padding_mask=torch.zeros(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="attn_mask"):
        m(x, x, x, attn_mask=torch.zeros(3, 5, 5))


@pytest.mark.parametrize("attention", ["projection", "standard"])
@pytest.mark.parametrize("name", ["key_padding_mask", "attn_mask"])
def test_integer_masks_are_refused_as_torch_refuses_them(attention, name):
    # a tokenizer's 0/1 int64 mask was added to the logits as a log-weight: it masked nothing
    m = ProjectionMultiheadAttention(8, 2, batch_first=True, attention=attention)
    x = torch.randn(2, 5, 8)
    mask = (
        torch.ones(2, 5, dtype=torch.int64)
        if name == "key_padding_mask"
        else torch.ones(5, 5, dtype=torch.int64)
    )
    with pytest.raises(TypeError, match=f"{name} must be bool"):
        m(x, x, x, **{name: mask})


@pytest.mark.parametrize("bad", ["no", 1, torch.tensor(True)], ids=["str", "int", "tensor"])
def test_is_causal_must_be_a_bool(bad):
    x = torch.randn(1, 5, 8)
    with pytest.raises(TypeError, match="is_causal must be True or False"):
        ProjectionMultiheadAttention(8, 2, batch_first=True)(x, x, x, is_causal=bad)
    with pytest.raises(TypeError, match="is_causal must be True or False"):
        projection_sdpa(x, x, sigma=1.0, is_causal=bad)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("attention", ["projection", "standard"])
def test_causal_blocks_do_not_look_ahead(norm_first, attention):
    torch.manual_seed(3)
    enc = EncoderBlock(
        8, 2, 16, norm_first=norm_first, attention_kwargs=dict(attention=attention)
    ).eval()
    dec = DecoderBlock(
        8,
        2,
        16,
        norm_first=norm_first,
        self_attention_kwargs=dict(attention=attention, sigma=0.5),
        cross_attention_kwargs=dict(attention=attention, head_dim=8),
    ).eval()
    x, mem = torch.randn(1, 6, 8), torch.randn(1, 4, 8)
    x2 = x.clone()
    x2[:, 4:] = x[:, 3:4] + 0.1  # change only the future of step 3, to near neighbours
    torch.testing.assert_close(enc(x, is_causal=True)[:, :4], enc(x2, is_causal=True)[:, :4])
    torch.testing.assert_close(dec(x, mem)[:, :4], dec(x2, mem)[:, :4])
    assert not torch.allclose(enc(x)[:, :4], enc(x2)[:, :4])


def test_blocks_train_and_respect_padding():
    torch.manual_seed(4)
    dec = DecoderBlock(
        8, 2, 16, dropout=0.1, self_attention_kwargs=dict(sigma=1.0, learn_sigma=True)
    )
    x, mem = torch.randn(2, 5, 8), torch.randn(2, 4, 8)
    pad = torch.tensor([[False, False, False, True], [False] * 4])
    out = dec(x, mem, memory_key_padding_mask=pad)
    out.pow(2).mean().backward()
    assert dec.self_attn.log_sigma.grad is not None
    dec.eval().double()  # float64: the centring of the fused path moves with the keys' mean
    x, mem = x.double(), mem.double()
    mem2 = mem.clone()
    mem2[0, 3] = 100.0  # a padded memory position must not matter
    torch.testing.assert_close(
        dec(x, mem, memory_key_padding_mask=pad)[0], dec(x, mem2, memory_key_padding_mask=pad)[0]
    )


def test_a_decoder_block_built_with_tau_attends_by_the_times_it_is_given():
    # forward had no timestamps: a decoder built with tau raised "forward needs timestamps"
    torch.manual_seed(5)
    tau = dict(tau=2.0)
    dec = DecoderBlock(8, 2, 16, self_attention_kwargs=tau, cross_attention_kwargs=tau).eval()
    x, mem = torch.randn(2, 5, 8), torch.randn(2, 4, 8)
    t, tm = torch.arange(5.0).expand(2, 5), torch.arange(4.0).expand(2, 4)
    out = dec(x, mem, timestamps=t, memory_timestamps=tm)
    h = dec.self_sublayer(
        x, lambda a: dec.self_attn(a, a, a, is_causal=True, timestamps=t, need_weights=False)[0]
    )
    h = dec.cross_sublayer(
        h, lambda a: dec.cross_attn(a, mem, mem, timestamps=(t, tm), need_weights=False)[0]
    )
    torch.testing.assert_close(out, dec.ff_sublayer(h, dec.feed_forward))
    assert not torch.allclose(out, dec(x, mem, timestamps=t * 3, memory_timestamps=tm * 3))
    with pytest.raises(ValueError, match="forward needs timestamps"):
        dec(x, mem, timestamps=t)  # the cross-attention needs the memory's times too
    only_self = DecoderBlock(8, 2, 16, self_attention_kwargs=tau).eval()
    only_self(x, mem, timestamps=t)  # the cross-attention, without tau, takes none
    with pytest.raises(ValueError, match="built with tau"):
        DecoderBlock(8, 2, 16)(x, mem, timestamps=t)


@pytest.mark.parametrize("sigma", ["a", None, [1.0, [2.0]]])
def test_a_sigma_that_is_no_number_is_refused_naming_it(sigma):
    # it was torch's "new(): invalid data type 'str'"
    with pytest.raises(TypeError, match="sigma must be a float or one float per head"):
        ProjectionMultiheadAttention(8, 2, sigma=sigma)


def test_keys_and_values_of_different_lengths_or_batches_are_refused_naming_them():
    m = ProjectionMultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match="key and value must have the same length"):
        m(x, x, torch.randn(2, 4, 8))
    with pytest.raises(ValueError, match="key and value must have the same length"):
        m(x, x, torch.randn(1, 5, 8))
    with pytest.raises(ValueError, match="query and key must have the same batch size"):
        m(x, torch.randn(3, 5, 8), torch.randn(3, 5, 8))
    seq_first = ProjectionMultiheadAttention(8, 2)  # (L, B, E): the batch is axis 1
    with pytest.raises(ValueError, match="axis 1"):
        seq_first(torch.randn(5, 2, 8), torch.randn(5, 3, 8), torch.randn(5, 3, 8))
    y, _ = m(x, torch.randn(2, 7, 8), torch.randn(2, 7, 8))  # keys longer than the queries
    assert y.shape == (2, 5, 8)


@pytest.mark.parametrize("learn", [False, True])
def test_the_kernel_parameters_take_the_layer_dtype(learn):
    kw = dict(sigma=0.3, tau=2.0, learn_sigma=learn, learn_decay=learn, dtype=torch.float64)
    m = ProjectionMultiheadAttention(8, 2, batch_first=True, **kw)
    assert m.kernel_sigma().dtype == m.kernel_decay().dtype == torch.float64
    assert m.kernel_sigma()[0].item() == pytest.approx(0.3, rel=1e-15)  # not via float32
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    y, _ = m(x, x, x, timestamps=torch.arange(5.0, dtype=torch.float64).expand(2, 5))
    assert y.dtype == torch.float64
    decay = ProjectionMultiheadAttention(8, 2, decay=0.9, learn_decay=learn, dtype=torch.float64)
    assert decay.kernel_decay().dtype == torch.float64


def test_a_half_precision_layer_keeps_its_kernel_parameters_in_float32():
    # projection_sdpa computes half inputs in float32; in bfloat16 a decay of 0.999 was 1
    for learn in (False, True):
        m = ProjectionMultiheadAttention(
            8, 2, sigma=1e-9, decay=0.999, learn_decay=learn, learn_sigma=learn,
            dtype=torch.bfloat16,
        )  # fmt: skip
        assert m.kernel_sigma().dtype == m.kernel_decay().dtype == torch.float32
        assert m.kernel_sigma()[0].item() == pytest.approx(1e-9, rel=1e-6)
        assert m.kernel_decay()[0].item() == pytest.approx(0.999, rel=1e-6)


@pytest.mark.parametrize("cast", ["to", "half", "bfloat16"])
def test_a_layer_cast_to_half_precision_keeps_its_kernel_parameters_in_float32(cast):
    # the cast rounded them with the weights: a decay of 0.999 became 1 in bfloat16
    for learn in (False, True):
        m = ProjectionMultiheadAttention(8, 2, sigma=1e-9, decay=0.999, learn_decay=learn,
                                         learn_sigma=learn)  # fmt: skip
        half = m.to(torch.bfloat16) if cast == "to" else getattr(m, cast)()
        assert half is m and m.in_proj_weight.dtype in (torch.bfloat16, torch.float16)
        assert m.kernel_sigma().dtype == m.kernel_decay().dtype == torch.float32
        assert m.kernel_sigma()[0].item() == pytest.approx(1e-9, rel=1e-6)
        assert m.kernel_decay()[0].item() == pytest.approx(0.999, rel=1e-6)
        if learn:  # still the module's parameters, trained in float32
            names = {n for n, _ in m.named_parameters()}
            assert {"log_sigma", "decay_logit"} <= names
        x = torch.randn(2, 5, 8, dtype=m.in_proj_weight.dtype)
        y, _ = m(x, x, x)
        assert y.dtype == x.dtype and torch.isfinite(y).all()
        if learn:  # cast mid-training: the gradients stay with their parameters' dtype
            y.float().square().sum().backward()
            opt = torch.optim.Adam(m.parameters())
            m.to(torch.float16)
            assert m.log_sigma.grad.dtype == m.decay_logit.grad.dtype == torch.float32
            opt.step()  # it raised: a bfloat16 gradient on a float32 parameter
        m.double()  # back to a wide dtype: the kernel parameters follow it
        assert m.kernel_decay().dtype == torch.float64
        assert m.kernel_decay()[0].item() == pytest.approx(0.999, rel=1e-6)


def test_a_kernel_parameter_outside_the_dtype_range_is_refused_naming_it():
    with pytest.raises(ValueError, match="tau .* out of the range of dtype torch.float32"):
        ProjectionMultiheadAttention(8, 2, tau=1e50)
    with pytest.raises(ValueError, match="sigma .* out of the range of dtype torch.float32"):
        ProjectionMultiheadAttention(8, 2, sigma=1e-50, dtype=torch.float16)


@pytest.mark.parametrize("name", ["sigma", "decay", "tau"])
def test_a_kernel_parameter_given_as_a_tensor_is_copied_and_detached_by_the_layer(name):
    # a float64 tensor became the layer's buffer itself (m.sigma.mul_(2) doubled the
    # caller's tensor), and one requiring grad stayed a node of the caller's graph: every
    # backward added to its .grad, and copy.deepcopy(layer) raised
    x = torch.tensor([0.5, 0.7], dtype=torch.float64)
    m = ProjectionMultiheadAttention(8, 2, dtype=torch.float64, **{name: x})
    getattr(m, name).mul_(0.5)
    assert torch.equal(x, torch.tensor([0.5, 0.7], dtype=torch.float64))
    x = torch.tensor([0.5, 0.7], requires_grad=True)
    m = ProjectionMultiheadAttention(8, 2, batch_first=True, **{name: x})
    assert not getattr(m, name).requires_grad
    h = torch.randn(2, 5, 8)
    ts = {"timestamps": torch.arange(5.0).expand(2, 5)} if name == "tau" else {}
    m(h, h, h, need_weights=False, **ts)[0].sum().backward()
    assert x.grad is None
    copy.deepcopy(m)


def test_a_backend_typo_is_refused_when_the_layer_is_built():
    # it was accepted, and the default need_weights=True never reads the backend: the typo
    # went unnoticed until a call with need_weights=False
    with pytest.raises(ValueError, match="backend must be one of"):
        ProjectionMultiheadAttention(8, 2, backend="flash")


@pytest.mark.parametrize(
    "kwargs,error,word",
    [
        (dict(window=True), TypeError, "window must be an int"),  # it was a window of 1
        (dict(head_dim=0), ValueError, "head_dim must be an integer >= 1"),  # empty heads
        (dict(head_dim=-1), ValueError, "head_dim"),  # a RuntimeError inside torch.empty
        (dict(embed_dim=8.0), TypeError, "embed_dim"),  # a TypeError inside torch.empty
        (dict(num_heads=2.0), TypeError, "num_heads"),
        (dict(kdim=0), ValueError, "kdim"),  # an empty key projection
    ],
)
def test_the_layer_sizes_and_window_must_be_positive_ints_named_in_the_error(kwargs, error, word):
    base = dict(embed_dim=8, num_heads=2)
    base.update(kwargs)
    with pytest.raises(error, match=word):
        ProjectionMultiheadAttention(**base)


@pytest.mark.parametrize("pair", [False, True])
def test_timestamps_that_are_not_tensors_are_refused_naming_them(pair):
    # a numpy array raised AttributeError: 'numpy.ndarray' object has no attribute 'unsqueeze'
    m = ProjectionMultiheadAttention(8, 2, batch_first=True, tau=1.0)
    x = torch.randn(2, 3, 8)
    ts = np.zeros((2, 3))
    with pytest.raises(TypeError, match="timestamps must be a tensor"):
        m(x, x, x, timestamps=(ts, ts) if pair else ts)


@pytest.mark.parametrize("need_weights", [True, False])
@torch.no_grad()
def test_a_half_precision_standard_layer_keeps_its_decay(need_weights):
    # its structure was built in bfloat16, where γ = 0.999 is 1: no decay at all
    torch.manual_seed(0)
    m = ProjectionMultiheadAttention(
        8, 2, batch_first=True, attention="standard", decay=0.999, dtype=torch.bfloat16
    )
    m.in_proj_weight[16:] = torch.eye(8)  # v and the output are the value rows themselves
    m.out_proj.weight[:] = torch.eye(8)
    x = torch.ones(1, 300, 8, dtype=torch.bfloat16)  # equal keys: the weights are γ^(i-j)
    v = torch.arange(300.0).reshape(1, 300, 1).expand(1, 300, 8).to(torch.bfloat16)
    out, w = m(x, x, v, need_weights=need_weights, is_causal=True)
    g = 0.999 ** torch.arange(299.0, -1.0, -1.0)  # row 299's weights, γ^(299 - j)
    if need_weights:
        assert (w[0, -1, 0] / w[0, -1, -1]).item() == pytest.approx(g[0].item(), rel=2e-2)
    expected = (g * torch.arange(300.0)).sum() / g.sum()  # 157.0; without the decay 149.5
    assert out[0, -1, 0].item() == pytest.approx(expected.item(), rel=1e-2)


@pytest.mark.parametrize("dropout", [None, "0.1"])
def test_a_dropout_that_is_no_number_is_refused_naming_it(dropout):
    # it raised TypeError("'<=' not supported between instances of 'float' and 'NoneType'")
    with pytest.raises(TypeError, match="dropout must be a number"):
        ProjectionMultiheadAttention(8, 2, dropout=dropout)


def test_a_kernel_setting_the_layer_cannot_use_is_refused_not_ignored():
    # learn_sigma on a standard layer and learn_decay without a decay or tau learned nothing
    with pytest.raises(ValueError, match="learn_sigma needs attention='projection'"):
        ProjectionMultiheadAttention(8, 2, attention="standard", learn_sigma=True)
    with pytest.raises(ValueError, match="learn_decay needs a decay= or tau="):
        ProjectionMultiheadAttention(8, 2, learn_decay=True)
    layer = ProjectionMultiheadAttention(8, 2, tau=2.0, learn_decay=True)
    assert layer.log_tau.requires_grad
