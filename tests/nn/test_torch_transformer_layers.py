"""ProjectionMultiheadAttention inside torch's Transformer layers.

In eval without grad torch's ``TransformerEncoderLayer`` and ``TransformerEncoder`` take a fused
path that runs softmax attention on ``self_attn.in_proj_weight`` (and nests a padded batch);
with this layer as ``self_attn`` they must call its ``forward`` instead, in every mode.
"""

import warnings

import pytest
import torch
from torch import nn

from tssdpa.nn import ProjectionMultiheadAttention

# torch's own note when its TransformerEncoder nests a padded batch
pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors:UserWarning")

TOL = {torch.float32: 1e-6, torch.float64: 1e-12}
D, H, FF = 16, 4, 32  # even heads, batch first, bias: what torch's fused path asks for


def _attn(batch_first, dtype, **kw):
    return ProjectionMultiheadAttention(
        D, H, batch_first=batch_first, dtype=dtype, sigma=[1.0, 2.0, 3.0, 4.0], **kw
    )


def _close(a, b, dtype):
    torch.testing.assert_close(a, b, rtol=0, atol=TOL[dtype])


def _sa(attn, x, mem, mask, kpm, is_causal=False):
    return attn(x, mem, mem, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                is_causal=is_causal)[0]  # fmt: skip


def _ff(layer, x):
    return layer.linear2(layer.activation(layer.linear1(x)))


def _encoder_by_hand(layer, x, mask, kpm):
    if layer.norm_first:
        x = x + _sa(layer.self_attn, layer.norm1(x), layer.norm1(x), mask, kpm)
        return x + _ff(layer, layer.norm2(x))
    x = layer.norm1(x + _sa(layer.self_attn, x, x, mask, kpm))
    return layer.norm2(x + _ff(layer, x))


def _decoder_by_hand(layer, x, memory, mask, kpm, memory_kpm):
    x = layer.norm1(x + _sa(layer.self_attn, x, x, mask, kpm))
    x = layer.norm2(x + _sa(layer.multihead_attn, x, memory, None, memory_kpm))
    return layer.norm3(x + _ff(layer, x))


def _inputs(batch_first, dtype, L=6, S=None, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, L, D, generator=g, dtype=dtype)
    kpm = torch.zeros(2, L, dtype=torch.bool)
    kpm[1, -2:] = True  # left aligned, as torch's nested path needs
    mask = torch.ones(L, L, dtype=torch.bool).triu(1)  # True = blocked
    memory = torch.randn(2, S or L + 1, D, generator=g, dtype=dtype)
    if not batch_first:
        x, memory = x.transpose(0, 1), memory.transpose(0, 1)
    return x, memory, mask, kpm


def _modes(module, *args, **kwargs):
    """module(*args, **kwargs) in train (dropout 0), eval with grad (torch's slow path) and
    eval without grad (its fused path for torch's own attention)."""
    module.train()
    out = {"train": module(*args, **kwargs)}
    module.eval()
    out["eval"] = module(*args, **kwargs)
    with torch.no_grad():
        out["eval, no grad"] = module(*args, **kwargs)
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_torch_encoder_layer_attends_by_projection_in_train_and_eval_with_and_without_grad(
    dtype,
):
    for batch_first in (True, False):
        for norm_first in (False, True):
            torch.manual_seed(0)
            layer = nn.TransformerEncoderLayer(
                D, H, FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first,
                dtype=dtype,
            )  # fmt: skip
            softmax_layer = nn.TransformerEncoderLayer(
                D, H, FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first,
                dtype=dtype,
            ).eval()  # fmt: skip
            softmax_layer.load_state_dict(layer.state_dict())
            layer.self_attn = _attn(batch_first, dtype)
            layer.self_attn.load_state_dict(softmax_layer.self_attn.state_dict())
            x, _, mask, kpm = _inputs(batch_first, dtype)
            both = {"src_mask": mask, "src_key_padding_mask": kpm, "is_causal": True}
            for masks in ({}, {"src_mask": mask}, {"src_key_padding_mask": kpm}, both):
                out = _modes(layer, x, **masks)
                want = _encoder_by_hand(
                    layer, x, masks.get("src_mask"), masks.get("src_key_padding_mask")
                )
                for got in out.values():
                    _close(got, want, dtype)
                # and not the softmax attention torch's fused path would have run
                with torch.no_grad():
                    softmax = softmax_layer(x, **masks)
                assert (softmax - want).abs().max() > 1e-2


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_torch_decoder_layer_attends_by_projection_in_train_and_eval(dtype):
    # torch 2.13 has no fused decoder path: this guards the layer against one
    for batch_first in (True, False):
        torch.manual_seed(0)
        layer = nn.TransformerDecoderLayer(
            D, H, FF, dropout=0.0, batch_first=batch_first, dtype=dtype
        )
        layer.self_attn = _attn(batch_first, dtype)
        layer.multihead_attn = _attn(batch_first, dtype)
        x, memory, mask, kpm = _inputs(batch_first, dtype)
        memory_kpm = torch.zeros(2, memory.shape[1 if batch_first else 0], dtype=torch.bool)
        memory_kpm[0, -3:] = True
        masks = dict(tgt_mask=mask, tgt_key_padding_mask=kpm, memory_key_padding_mask=memory_kpm)
        out = _modes(layer, x, memory, **masks)
        want = _decoder_by_hand(layer, x, memory, mask, kpm, memory_kpm)
        for got in out.values():
            _close(got, want, dtype)


def _swap_attention(model, batch_first, dtype):
    for layer in model.encoder.layers:
        layer.self_attn = _attn(batch_first, dtype)
    for layer in model.decoder.layers:
        layer.self_attn = _attn(batch_first, dtype)
        layer.multihead_attn = _attn(batch_first, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_torch_transformer_with_its_attention_replaced_attends_by_projection(dtype):
    for batch_first in (True, False):
        torch.manual_seed(0)
        model = nn.Transformer(D, H, 2, 2, FF, dropout=0.0, batch_first=batch_first, dtype=dtype)
        _swap_attention(model, batch_first, dtype)
        src, tgt, _, src_kpm = _inputs(batch_first, dtype, L=6, S=5)
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=dtype)
        masks = dict(src_key_padding_mask=src_kpm, memory_key_padding_mask=src_kpm)
        out = _modes(model, src, tgt, tgt_mask=tgt_mask, **masks)
        # by hand, layer by layer
        memory = src
        for layer in model.encoder.layers:
            memory = _encoder_by_hand(layer, memory, None, src_kpm)
        memory = model.encoder.norm(memory)
        y = tgt
        for layer in model.decoder.layers:
            y = _decoder_by_hand(layer, y, memory, tgt_mask, None, src_kpm)
        want = model.decoder.norm(y)
        # torch's nested encoder (eval, no grad) gives padded memory positions as 0; they are
        # masked out of the decoder's cross-attention, so the outputs agree
        for got in out.values():
            _close(got, want, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("swapped_after", [False, True])
def test_a_nested_tensor_encoder_gives_the_projection_attention_on_the_unpadded_positions(
    dtype, swapped_after
):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True, dtype=dtype)
    if not swapped_after:
        layer.self_attn = _attn(True, dtype)
        # torch declines nested tensors for it when built, and says why
        with pytest.warns(UserWarning, match="use_nested_tensor is False"):
            encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=True)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=True)
        assert encoder.use_nested_tensor  # ... and nests the input in eval without grad
        for enc_layer in encoder.layers:
            enc_layer.self_attn = _attn(True, dtype)
    x, _, _, kpm = _inputs(True, dtype)
    want = x
    for enc_layer in encoder.layers:
        want = _encoder_by_hand(enc_layer, want, None, kpm)
    keep = ~kpm[..., None]
    for got in _modes(encoder, x, src_key_padding_mask=kpm).values():
        _close(got * keep, want * keep, dtype)


def test_nested_inputs_with_what_they_cannot_carry_are_refused_naming_it():
    m = _attn(True, torch.float32)
    nt = torch.nested.nested_tensor([torch.randn(5, D), torch.randn(3, D)])
    y, w = m(nt, nt, nt, need_weights=False)
    assert y.is_nested and [u.shape[0] for u in y.unbind()] == [5, 3] and w is None
    padded = torch.nested.to_padded_tensor(nt, 0.0)
    kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    want = _sa(m, padded, padded, None, kpm)
    for row, n, got in zip(want, (5, 3), y.unbind(), strict=True):
        _close(got, row[:n], torch.float32)
    with pytest.raises(ValueError, match="need_weights=False"):
        m(nt, nt, nt)
    with pytest.raises(ValueError, match="key_padding_mask"):
        m(nt, nt, nt, need_weights=False, key_padding_mask=torch.zeros(2, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match="all be nested"):
        m(nt, torch.randn(2, 5, D), torch.randn(2, 5, D), need_weights=False)
    with pytest.raises(ValueError, match="batch_first=True"):
        _attn(False, torch.float32)(nt, nt, nt, need_weights=False)
