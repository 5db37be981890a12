"""The plain torch networks: DenoisingNet and ForecastingNet."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tssdpa.models import DenoisingNet, ForecastingNet


def test_denoising_net_is_causal_and_windowed_reference():
    """Block-wise evaluation == evaluating every t on just its receptive field (slow ref)."""
    torch.manual_seed(0)
    net = DenoisingNet(2, d_model=8, num_heads=2, num_layers=2, window=4).eval()
    with torch.no_grad():
        for p in net.head.parameters():
            p.normal_()  # make the attention path visible in the output
    x = torch.randn(1, 30, 2)
    with torch.no_grad():
        full = net(x)[0]
        rf = net.receptive_field
        ref = torch.stack([net(x[:, max(0, t - rf + 1) : t + 1])[0, -1] for t in range(30)])
    torch.testing.assert_close(full, ref, atol=1e-5, rtol=1e-5)
    assert rf == 2 * (4 - 1) + 1


def test_untrained_denoising_net_is_the_identity_with_missing_samples_as_zero():
    net = DenoisingNet(3, d_model=8, num_heads=2, num_layers=1, window=5).eval()
    x = torch.randn(2, 12, 3)
    x[0, 4, 1] = float("nan")
    with torch.no_grad():
        y = net(x)
    torch.testing.assert_close(y, torch.nan_to_num(x, nan=0.0), rtol=0, atol=0)


def test_denoising_net_refuses_inf_naming_x_rather_than_spoil_outputs_out_of_its_reach():
    """An inf sample made every output NaN, also those whose receptive field ends before it
    (NaN is a missing sample; inf is no value at all)."""
    net = DenoisingNet(1, d_model=8, num_heads=2, num_layers=1, window=4).eval()
    x = torch.randn(1, 20, 1)
    for bad in (float("inf"), float("-inf")):
        x[0, 0, 0] = bad
        with pytest.raises(ValueError, match="x holds inf"):
            net(x)
    x[0, 0, 0] = float("nan")
    assert torch.isfinite(net(x)).all()  # NaN stays a missing sample


def test_denoising_net_needs_a_window():
    with pytest.raises(ValueError, match="window"):
        DenoisingNet(1, window=0)


def test_denoising_net_names_the_shape_it_expects():
    # "mat1 and mat2 shapes cannot be multiplied (20x3 and 2x8)", from the embedding
    net = DenoisingNet(2, d_model=8, num_heads=2, num_layers=1, window=4)
    with pytest.raises(ValueError, match=r"expected \(B, T, 2\), got \(1, 20, 3\)"):
        net(torch.randn(1, 20, 3))


def test_forecasting_net_starts_as_dlinear():
    """With the attention head at zero the output equals a numpy DLinear reference."""
    torch.manual_seed(1)
    net = ForecastingNet(
        lookback=20, horizon=5, n_channels=2, moving_average=5, patch_len=4, d_model=8
    )
    with torch.no_grad():
        net.linear_trend.weight.normal_()
        net.linear_seasonal.weight.normal_()
    x = torch.randn(3, 20, 2, dtype=torch.float32)
    out = net(x).detach().numpy()
    xn = x.numpy().astype(np.float64)
    Wt, bt = (
        p.detach().numpy().astype(np.float64)
        for p in (net.linear_trend.weight, net.linear_trend.bias)
    )
    Ws, bs = (
        p.detach().numpy().astype(np.float64)
        for p in (net.linear_seasonal.weight, net.linear_seasonal.bias)
    )
    ref = np.empty((3, 5, 2))
    for b in range(3):
        for c in range(2):
            s = xn[b, :, c] - xn[b, -1, c]
            padded = np.r_[[s[0]] * 2, s, [s[-1]] * 2]
            trend = np.array([padded[i : i + 5].mean() for i in range(20)])
            ref[b, :, c] = Wt @ trend + bt + Ws @ (s - trend) + bs + xn[b, -1, c]
    np.testing.assert_allclose(out, ref, atol=1e-4)


def test_forecasting_net_gradients_reach_attention():
    net = ForecastingNet(lookback=16, horizon=4, n_channels=1, patch_len=4, d_model=8)
    x = torch.randn(2, 16, 1)
    net(x).pow(2).sum().backward()
    assert net.attn_head.weight.grad.abs().sum() > 0
    sig = [p for n, p in net.named_parameters() if "log_sigma" in n]
    assert sig  # sigma is learned


@pytest.mark.parametrize("normalize", ["none", "last"])
def test_set_linear_makes_the_net_the_given_linear_map(normalize):
    rng = np.random.default_rng(0)
    W, b = rng.normal(size=(12, 3)), rng.normal(size=3)
    net = ForecastingNet(lookback=12, horizon=3, n_channels=2, patch_len=4, d_model=8)
    net.set_linear(W, b, normalize)
    x = torch.randn(4, 12, 2)
    xn = x.numpy().astype(np.float64)
    last = xn[:, -1:, :] if normalize == "last" else 0.0
    want = np.einsum("nlc,lh->nhc", xn - last, W) + b[None, :, None] + last
    with torch.no_grad():
        np.testing.assert_allclose(net(x).numpy(), want, atol=1e-4)
    assert net.level_norm.item() == float(normalize == "last")
    with pytest.raises(ValueError, match="expected weight"):
        net.set_linear(W[:, :2], b, normalize)
    with pytest.raises(ValueError, match="normalize"):
        net.set_linear(W, b, "mean")


def test_forecasting_net_checks_its_input_shape_and_settings():
    net = ForecastingNet(lookback=8, horizon=2, n_channels=1, patch_len=4, d_model=8)
    with pytest.raises(ValueError, match="expected"):
        net(torch.randn(1, 9, 1))
    with pytest.raises(ValueError, match="lookback"):
        ForecastingNet(lookback=0, horizon=2, n_channels=1)
    with pytest.raises(ValueError, match="normalize"):
        ForecastingNet(lookback=8, horizon=2, n_channels=1, normalize="mean")


def test_forecasting_net_refuses_to_learn_a_decay_it_was_given_none_of():
    # learn_decay=True with decay=None (the default) built no decay at all, without a word
    with pytest.raises(ValueError, match=r"^learn_decay=True needs a decay to start from, "
                       r"got decay=None: give e.g. decay=0.9, or learn_decay=False$"):  # fmt: skip
        ForecastingNet(lookback=16, horizon=4, n_channels=1, learn_decay=True)
    net = ForecastingNet(lookback=16, horizon=4, n_channels=1, learn_decay=True, decay=0.9)
    assert [n for n, _ in net.named_parameters() if "decay" in n] == [
        "blocks.0.self_attn.decay_logit"
    ]
    ForecastingNet(lookback=16, horizon=4, n_channels=1, learn_decay=True, attention=False)


def test_denoising_net_refuses_to_learn_a_decay_it_was_given_none_of_naming_both():
    # learn_decay=True (the default) with decay=None built no decay and learned none, unsaid
    with pytest.raises(ValueError, match=r"^learn_decay=True needs a decay to start from, "
                       r"got decay=None: give e.g. decay=0.9, or learn_decay=False$"):  # fmt: skip
        DenoisingNet(1, d_model=8, num_heads=2, decay=None, learn_decay=True)
    net = DenoisingNet(1, d_model=8, num_heads=2, num_layers=1, decay=0.9, learn_decay=True)
    assert [n for n, _ in net.named_parameters() if "decay" in n] == [
        "blocks.0.self_attn.decay_logit"
    ]
    net = DenoisingNet(1, d_model=8, num_heads=2, decay=None, learn_decay=False)
    assert not [n for n, _ in net.named_parameters() if "decay" in n]


def test_forecasting_net_without_level_norm_in_an_old_state_dict_normalises_by_the_last_value():
    net = ForecastingNet(lookback=8, horizon=2, n_channels=1, normalize="none", attention=False)
    state = {k: v for k, v in net.state_dict().items() if k != "level_norm"}
    net.load_state_dict(state)
    assert net.level_norm.item() == 1.0
