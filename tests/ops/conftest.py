"""The explicit-loop definition of projection SDPA, shared by the operator tests (a fixture:
test modules are imported by path, so they cannot import each other)."""

import math

import pytest
import torch

D64 = torch.float64


def _loop_reference(
    q, k, v, sigma, *, mask=None, is_causal=False, window=None, decay=None, tau=None, tq=None,
    tk=None,
):  # fmt: skip
    """Plain Python loops over (row, key): the definition, for 2-D q (L,E), k (S,E), v (S,Ev).

    ``sigma`` is one float, or one σ_i per query row (a sequence or tensor of L values, e.g.
    shape (L,) or (L, 1)).
    """
    L, S = q.shape[0], k.shape[0]
    if isinstance(sigma, torch.Tensor):
        sigma = sigma.detach().reshape(-1).tolist()
    rows = [float(sigma)] * L if isinstance(sigma, (int, float)) else [float(s) for s in sigma]
    assert len(rows) == L, "one sigma per query row"
    out = torch.zeros(L, v.shape[1], dtype=D64)
    for i in range(L):
        w = []
        for j in range(S):
            ok = True
            if is_causal and j > i:
                ok = False
            if window is not None:
                ok = ok and ((0 <= i - j < window) if is_causal else abs(i - j) < window)
            logw = -float(((q[i] - k[j]) ** 2).sum()) / (2 * rows[i] ** 2)
            if mask is not None:
                if mask.dtype == torch.bool:
                    ok = ok and bool(mask[i, j])
                else:
                    ok = ok and not math.isinf(float(mask[i, j]))
                    logw += float(mask[i, j]) if ok else 0.0
            if decay is not None:
                logw += abs(i - j) * math.log(decay)
            if tau is not None:
                logw += -abs(float(tq[i]) - float(tk[j])) / tau
            w.append(logw if ok else None)
        allowed = [x for x in w if x is not None]
        if not allowed:
            continue
        m = max(allowed)
        ws = [0.0 if x is None else math.exp(x - m) for x in w]
        tot = sum(ws)
        for j in range(S):
            out[i] += ws[j] / tot * v[j]
    return out


@pytest.fixture
def loop_reference():
    """The loop definition of the operator (float σ or one σ_i per query row)."""
    return _loop_reference
