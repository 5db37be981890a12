"""Why the fused projection path is slower than torch SDPA on CUDA: the head width.

The column form hands torch ``q~ = [q - c, 1]`` and ``k~ = [k - c, -||k - c||²/2]`` at width
E + 1 rounded up to a multiple of 8 (72 for E = 64), with v padded to the same width. This
probe times, side by side on one GPU, standard SDPA at width E against forms of the same
projection that torch's kernels could take:

* ``column72``: what ``tssdpa.ops.fused`` runs (q~, k~, v all at 72);
* ``column72_v64``: q~ and k~ at 72, v left at 64 (the kernels accept a narrower v);
* ``column68``: width E + 4 (float32 kernels want a multiple of 4 only);
* ``bias64``: q - c and k - c at width 64, the key term as a broadcast additive mask
  ``(B, H, 1, S)`` expanded over the rows (what the CPU's bias form does).

Each form's output is checked against ``projection_sdpa(..., backend="math")`` in float64 on a
small case first (``agreement``; it runs on the CPU too). The committed
``docs/results/cuda_width_probe.md`` came from a first version that checked against the column
form at σ = 8 (exact by construction) and gave ``std`` torch's default scale (the timings do not
depend on the scale's value).
Usage (one GPU): ``python experiments/cuda_width_probe.py --out runs/cuda_width.md``.
"""

from __future__ import annotations

import argparse
import statistics

import torch
import torch.nn.functional as F

from tssdpa import projection_sdpa


def forms(q, k, v, sigma):
    """Each form as a zero-argument callable giving (B, H, L, Ev) outputs."""
    e, ev = q.shape[-1], v.shape[-1]
    scale = 1.0 / sigma**2
    c = k.mean(dim=-2, keepdim=True).detach()  # centring keeps the key term small

    def column(width, pad_v):
        def run():
            qc_, kc_ = q - c, k - c
            qa = F.pad(torch.cat([qc_, torch.ones_like(qc_[..., :1])], -1), (0, width - e - 1))
            kt = -0.5 * (kc_ * kc_).sum(-1, keepdim=True)
            ka = F.pad(torch.cat([kc_, kt], -1), (0, width - e - 1))
            va = F.pad(v, (0, width - ev)) if pad_v else v
            return F.scaled_dot_product_attention(qa, ka, va, scale=scale)[..., :ev]

        return run

    def bias():
        qc_, kc_ = q - c, k - c
        kt = (-0.5 * scale) * (kc_ * kc_).sum(-1)  # (B, H, S)
        mask = kt.unsqueeze(-2).expand(*kt.shape[:-1], q.shape[-2], kt.shape[-1])
        return F.scaled_dot_product_attention(qc_, kc_, v, attn_mask=mask, scale=scale)

    return {
        "std": lambda: F.scaled_dot_product_attention(q, k, v, scale=scale),
        "column72": column(72, True),
        "column72_v64": column(72, False),
        "column68": column(68, True),
        "bias64": bias,
    }


def agreement(dev) -> str:
    """Each form's largest difference from the math reference (float64, L = 64, σ = 3: not a
    power of two, so no form agrees by construction)."""
    g = torch.Generator(device=dev).manual_seed(0)
    q, k, v = (
        torch.randn(1, 2, 64, 64, device=dev, dtype=torch.float64, generator=g) for _ in "qkv"
    )
    ref = projection_sdpa(q, k, v, sigma=3.0, backend="math")
    diffs = (
        f"{name} {float((f() - ref).abs().max()):.1e}"
        for name, f in forms(q, k, v, 3.0).items()
        if name != "std"
    )
    return "Largest difference from the math reference (float64, L = 64): " + ", ".join(diffs)


def timed(fn, backward, reps):
    def once():
        out = fn()
        if backward:
            out.backward(torch.ones_like(out))

    once()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        once()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    once()
    torch.cuda.synchronize()
    return statistics.median(times), (torch.cuda.max_memory_allocated() - base) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[4096, 16384])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    dev = torch.device("cuda")
    lines = [
        f"# CUDA head-width probe ({torch.cuda.get_device_name()}, torch {torch.__version__})",
        "",
    ]

    lines.append(agreement(dev))
    g = torch.Generator(device=dev).manual_seed(0)
    lines += [
        "",
        "| dtype | L | form | fwd ms | fwd / std | f+b ms | f+b / std | f+b extra MiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dtype in (torch.float32, torch.bfloat16):
        for n in args.lengths:
            q, k, v = (
                torch.randn(1, 4, n, 64, device=dev, dtype=dtype, generator=g).requires_grad_()
                for _ in "qkv"
            )
            rows = {}
            for name, f in forms(q, k, v, 8.0).items():
                try:
                    with torch.no_grad():
                        fwd, _ = timed(f, False, args.reps)
                    fb, mem = timed(f, True, args.reps)
                except RuntimeError as err:  # a kernel refusing the form
                    lines.append(f"| {dtype} | {n} | {name} | failed: {str(err)[:80]} | | | | |")
                    continue
                rows[name] = (fwd, fb, mem)
                s = rows["std"]
                lines.append(
                    f"| {str(dtype)[6:]} | {n} | {name} | {fwd:.2f} | {fwd / s[0]:.2f}x | "
                    f"{fb:.2f} | {fb / s[1]:.2f}x | {mem:.0f} |"
                )
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
