"""Translating English sentences with a trained model: ``Translator`` and ``translate``."""

from __future__ import annotations

import os
from collections.abc import Sequence

import torch

from tssdpa.translation.model import TranslationTransformer
from tssdpa.translation.text import END_TOKEN, START_TOKEN, Vocabulary, standardize_english


class Translator:
    """A trained :class:`TranslationTransformer` with its two vocabularies.

    >>> translator = Translator.from_checkpoint("runs/translate/last.ckpt")  # doctest: +SKIP
    >>> translator.translate(["I love you."])  # doctest: +SKIP
    ['te quiero']
    """

    def __init__(
        self,
        transformer: TranslationTransformer,
        source_vocab: Vocabulary,
        target_vocab: Vocabulary,
    ):
        for token in (START_TOKEN, END_TOKEN):
            if token not in target_vocab:
                raise ValueError(f"target_vocab lacks the {token!r} marker")
        self.transformer = transformer
        self.source_vocab = source_vocab
        self.target_vocab = target_vocab

    @classmethod
    def from_checkpoint(
        cls, path: str | os.PathLike, map_location: str | torch.device = "cpu"
    ) -> Translator:
        """Rebuild from a checkpoint written by ``TranslationSystem`` (loaded weights-only)."""
        checkpoint = torch.load(path, map_location=map_location, weights_only=True)
        info = checkpoint.get("translation")
        if info is None or "source_vocab" not in info:
            raise ValueError(
                f"checkpoint {str(path)!r} holds no translation model and vocabularies "
                "(was it written by TranslationSystem with its data module attached?)"
            )
        transformer = TranslationTransformer.from_config(info["transformer_config"])
        prefix = "transformer."
        state = {
            k[len(prefix) :]: v for k, v in checkpoint["state_dict"].items() if k.startswith(prefix)
        }
        transformer.load_state_dict(state)
        transformer.to(map_location).eval()
        return cls(transformer, Vocabulary(info["source_vocab"]), Vocabulary(info["target_vocab"]))

    @property
    def device(self) -> torch.device:
        return next(self.transformer.parameters()).device

    def vectorize(self, sentences: Sequence[str]) -> torch.Tensor:
        """Standardised, padded source ids (N, sequence_length)."""
        texts = [standardize_english(s) for s in sentences]
        return self.source_vocab.encode_batch(texts, self.transformer.sequence_length)

    def translate(self, sentences: str | Sequence[str], batch_size: int = 256) -> list[str]:
        """Greedy translations (standardised Spanish, without markers) of ``sentences``."""
        if isinstance(sentences, str):
            sentences = [sentences]
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        was_training = self.transformer.training
        self.transformer.eval()
        start = self.target_vocab.index[START_TOKEN]
        end = self.target_vocab.index[END_TOKEN]
        out: list[str] = []
        try:
            for lo in range(0, len(sentences), batch_size):
                source = self.vectorize(sentences[lo : lo + batch_size]).to(self.device)
                generated = self.transformer.greedy_decode(
                    source, start, end, vocab_size=len(self.target_vocab)
                )
                out += [self.target_vocab.decode(ids) for ids in generated.tolist()]
        finally:
            self.transformer.train(was_training)
        return out


def translate(
    sentences: str | Sequence[str], checkpoint: str | os.PathLike | Translator
) -> list[str]:
    """Translate English ``sentences`` with the model in ``checkpoint`` (a path or Translator)."""
    translator = (
        checkpoint if isinstance(checkpoint, Translator) else Translator.from_checkpoint(checkpoint)
    )
    return translator.translate(sentences)
