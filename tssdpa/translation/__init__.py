"""English→Spanish translation experiment (Sanger's projection-attention Transformer test).

- :class:`TranslationDataModule` — pairs, split, vocabularies, cached tensors;
- :class:`TranslationTransformer` — the Keras-example encoder–decoder on tssdpa layers;
- :class:`TranslationSystem` — training/evaluation (loss, accuracies, timing, BLEU);
- :class:`Translator` / :func:`translate` — greedy translation with a trained checkpoint.
"""

from tssdpa.translation.data import TranslationDataModule
from tssdpa.translation.model import TranslationTransformer
from tssdpa.translation.system import TranslationSystem
from tssdpa.translation.text import (
    Vocabulary,
    read_pairs,
    standardize_english,
    standardize_spanish,
)
from tssdpa.translation.translator import Translator, translate

__all__ = [
    "TranslationDataModule",
    "TranslationSystem",
    "TranslationTransformer",
    "Translator",
    "Vocabulary",
    "read_pairs",
    "standardize_english",
    "standardize_spanish",
    "translate",
]
