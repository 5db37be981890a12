"""A one-screen demonstration of the operator on embedded data: ``python -m tssdpa.demo``.

Filters a seeded noisy nonlinear signal (no downloads) with causal projection SDPA at a few
kernel widths, next to a moving average of the same window, and prints what each did.
"""

from __future__ import annotations

import argparse
import math

import torch

from tssdpa.checks import check_int
from tssdpa.ops import projection_sdpa

_MAX_SEED = 2**64 - 1  # torch.Generator.manual_seed's range
_LENGTH = 2000  # samples of the demo's signal


def embedded_signal(n: int = _LENGTH, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A chirp with a square-wave step train plus white noise at 5 dB SNR: (clean, noisy).
    ``seed`` from 0 to 2**64 - 1 (torch wrapped -1 to 2**64 - 1 without a word)."""
    seed = check_int(seed, "seed", minimum=0)
    if seed > _MAX_SEED:
        raise ValueError(f"seed must be at most {_MAX_SEED}, got {seed}")
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, n, dtype=torch.float64)
    clean = torch.sin(2 * math.pi * (3 * t + 8 * t**2)) + 0.6 * torch.sign(
        torch.sin(2 * math.pi * 4 * t)
    )
    noise = torch.randn(n, generator=g, dtype=torch.float64)
    noise *= clean.pow(2).mean().sqrt() / 10 ** (5 / 20)
    return clean, clean + noise


def snr_db(clean: torch.Tensor, estimate: torch.Tensor) -> float:
    return float(10 * torch.log10(clean.pow(2).sum() / (clean - estimate).pow(2).sum()))


def delay_embedding(x: torch.Tensor, m: int) -> torch.Tensor:
    """(T,) → (T, m) rows [x_t, x_{t-1}, ..., x_{t-m+1}], edge-padded at the start."""
    padded = torch.cat([x[:1].expand(m - 1), x])
    return padded.unfold(0, m, 1).flip(-1)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--window", type=int, default=32, help=f"FIR length W, 1 to {_LENGTH} samples")
    p.add_argument(
        "--embedding", type=int, default=8, help=f"delay-embedding length m, 1 to {_LENGTH}"
    )
    p.add_argument("--seed", type=int, default=0, help=f"noise seed, 0 to {_MAX_SEED}")
    args = p.parse_args(argv)
    try:
        for name, value in (("--window", args.window), ("--embedding", args.embedding)):
            # past the signal's length: a traceback (a 64-bit overflow, memory) for nothing
            if check_int(value, name) > _LENGTH:
                raise ValueError(f"{name} must be at most the signal's {_LENGTH} samples, "
                                 f"got {value}")  # fmt: skip
        # torch wrapped -1 to 2**64 - 1 (the same noise as that seed) and raised a traceback
        # on a seed past 64 bits
        if not 0 <= args.seed <= _MAX_SEED:
            raise ValueError(f"--seed must be an integer from 0 to {_MAX_SEED}, got {args.seed}")
    except ValueError as exc:  # one line, exit code 2, as argparse's own errors
        p.exit(2, f"{p.prog}: error: {exc}\n")

    clean, noisy = embedded_signal(seed=args.seed)
    e = delay_embedding(noisy, args.embedding).unsqueeze(0)  # (1, T, m)
    v = noisy.reshape(1, -1, 1)  # (1, T, 1)
    print(
        f"embedded signal: chirp + steps, T={noisy.numel()}, 5 dB SNR white noise, seed {args.seed}"
    )
    print(f"causal projection filter: window={args.window}, delay embedding m={args.embedding}\n")
    print(f"{'method':<36}{'SNR (dB)':>10}{'gain (dB)':>11}")
    base = snr_db(clean, noisy)
    print(f"{'noisy input':<36}{base:>10.2f}{0:>11.2f}")
    ma = torch.nn.functional.avg_pool1d(
        torch.cat([noisy[:1].expand(args.window - 1), noisy]).reshape(1, 1, -1), args.window, 1
    ).reshape(-1)
    s = snr_db(clean, ma)
    print(f"{f'moving average (W={args.window})':<36}{s:>10.2f}{s - base:>11.2f}")
    scale = float(noisy.std()) * math.sqrt(args.embedding)
    for rel in (0.1, 0.3, 1.0, 3.0):
        sigma = rel * scale
        y = projection_sdpa(e, e, v, sigma=sigma, is_causal=True, window=args.window).reshape(-1)
        s = snr_db(clean, y)
        print(f"{f'projection FIR, sigma={sigma:.3g}':<36}{s:>10.2f}{s - base:>11.2f}")
    print(
        "\nEach output sample is a Gaussian-kernel weighted mean of the last W samples, weighted "
        "by how alike their\nrecent histories are: small sigma keeps edges and averages less; "
        "large sigma tends to the moving average."
    )


if __name__ == "__main__":
    main()
