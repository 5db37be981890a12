"""How sharp projection attention is at initialisation, for a range of σ.

The translation model's encoder self-attention at its initial weights (seed 0, Keras-style
initialisation, 256-wide heads), on a batch of random source ids: per σ, the spread of the
distance logits ``-||q_i - k_j||² / 2σ²`` over the keys of a row, and the gap between the best
and the second-best key; standard attention's ``q·k / sqrt(d)`` for comparison. A gap of many
nats means each query attends to one key only, and little gradient reaches q and k.

    python experiments/translate_logit_scale.py
"""

import torch

from tssdpa.translation import TranslationTransformer

SIGMAS = (0.01, 0.05, 0.1, 0.3, 1.0)


def main() -> None:
    torch.manual_seed(0)
    model = TranslationTransformer(
        source_vocab_size=15000, target_vocab_size=15000, attention="projection"
    )
    source = torch.randint(2, 3000, (64, 20))
    attention = model.encoder.self_attn
    with torch.no_grad():
        x = model.source_embedding(source)
        q, k, _ = attention._project(x, x, x)
        B, L, _ = q.shape
        q = q.view(B, L, attention.num_heads, -1).transpose(1, 2)  # (B, H, L, D)
        k = k.view(B, L, attention.num_heads, -1).transpose(1, 2)
        d2 = torch.cdist(q, k).square()  # (B, H, L, L)
        standard = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    print(f"head width {q.shape[-1]}; mean ||q - k||^2 = {d2.mean():.4f}")
    print("| attention | logit std over a row (nats) | best - second best (median, nats) |")
    print("|---|---|---|")
    for sigma in SIGMAS:
        logits = -d2 / (2 * sigma**2)
        top2 = logits.topk(2, dim=-1).values
        gap = (top2[..., 0] - top2[..., 1]).median()
        print(f"| projection, σ = {sigma:g} | {logits.std(-1).mean():.3g} | {gap:.3g} |")
    top2 = standard.topk(2, dim=-1).values
    gap = (top2[..., 0] - top2[..., 1]).median()
    print(f"| standard | {standard.std(-1).mean():.3g} | {gap:.3g} |")


if __name__ == "__main__":
    main()
