"""The operator on awkward input (issue 11): no keys, and non-finite keys on the fused path."""

import pytest
import torch

from tssdpa import projection_sdpa


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
