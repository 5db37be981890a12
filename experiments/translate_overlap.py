"""How much of the translation experiment's validation and test splits is in its training split.

The pair file (spa-eng) holds many English sentences more than once, each with another Spanish
translation ("I'm fine." / "Estoy bien.", "Me encuentro bien.", ...). The data module shuffles
the pairs and splits them 70/15/15 as the Keras example does, so a test pair's English sentence
is often in the training split too, with one of its other translations, and sometimes the very
pair. Both models of the comparison see the same split, so their difference stays fair, but
their absolute test metrics partly measure recall of training sentences. This script counts it
(the data module's shuffle and split, standardised text):

    .venv/bin/python experiments/translate_overlap.py --data-dir ../shared/datasets
    .venv/bin/python experiments/translate_overlap.py --data-dir ../shared/datasets \
        --max-pairs 30000
"""

from __future__ import annotations

import argparse
import sys

from tssdpa.data.paths import find_dataset
from tssdpa.translation.data import DEFAULT_DATASET, VectorizationSettings, vectorize_pairs
from tssdpa.translation.text import read_pairs, standardize_english, standardize_spanish


def overlap(pairs, seed: int, max_pairs: int | None) -> dict[str, tuple[float, float, int]]:
    """``{split: (share of its pairs whose English is in training, share that are a training
    pair, pairs)}`` for the validation and test splits of the data module's default split."""
    settings = VectorizationSettings(
        sequence_length=20,
        vocab_size=15000,
        val_fraction=0.15,
        test_fraction=0.15,
        seed=seed,
        max_pairs=max_pairs,
    )
    data = vectorize_pairs(pairs, settings)
    english = [standardize_english(s) for s in data["english"]]
    spanish = [standardize_spanish(s) for s in data["spanish"]]
    n_train, n_val, n_test = data["split_sizes"]
    seen_en = set(english[:n_train])
    seen_pair = set(zip(english[:n_train], spanish[:n_train]))
    out = {}
    for name, lo, hi in (("validation", n_train, n_train + n_val),
                         ("test", n_train + n_val, n_train + n_val + n_test)):  # fmt: skip
        en = english[lo:hi]
        in_en = sum(e in seen_en for e in en)
        in_pair = sum(p in seen_pair for p in zip(en, spanish[lo:hi]))
        out[name] = (in_en / len(en), in_pair / len(en), len(en))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--max-pairs", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    try:
        path = find_dataset(DEFAULT_DATASET, args.data_dir)
    except FileNotFoundError as err:
        p.exit(2, f"{p.prog}: error: {err}\n")
    pairs = read_pairs(path)
    print(f"{path}: {len(pairs)} pairs; seed {args.seed}, max_pairs {args.max_pairs}")
    for name, (in_en, in_pair, n) in overlap(pairs, args.seed, args.max_pairs).items():
        print(f"{name}: {n} pairs; English sentence also in training: {in_en:.1%}; "
              f"the same pair in training: {in_pair:.1%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
