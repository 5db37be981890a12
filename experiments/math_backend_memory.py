"""Peak memory and time of the math backend's causal forward + backward (B = 8, L = S = 2048,
E = 16, sigma = 0.5), for the checkout at REPO (default: this one): run it once per checkout,
e.g. against a worktree of the commit before a change, side by side.

    git worktree add /tmp/before 4970934
    .venv/bin/python experiments/math_backend_memory.py /tmp/before
    .venv/bin/python experiments/math_backend_memory.py .

Each run is its own process (peak resident memory, ``ru_maxrss``)."""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]).resolve()
sys.path.insert(0, str(repo))

import torch  # noqa: E402

from tssdpa import projection_sdpa  # noqa: E402

torch.manual_seed(0)
q = torch.randn(8, 2048, 16, requires_grad=True)
k = torch.randn(8, 2048, 16, requires_grad=True)
v = torch.randn(8, 2048, 16)
tic = time.perf_counter()
for _ in range(2):
    out = projection_sdpa(q, k, v, sigma=0.5, backend="math", is_causal=True)
    out.square().sum().backward()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{repo}: peak {peak:.0f} MB, {time.perf_counter() - tic:.2f} s for two calls")
