"""Translating English sentences with a trained model: ``Translator`` and ``translate``."""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Sequence

import torch

from tssdpa.checks import check_int
from tssdpa.models.checkpoints import read_checkpoint
from tssdpa.translation.model import TranslationTransformer
from tssdpa.translation.text import END_TOKEN, START_TOKEN, Vocabulary, standardize_english


def load_checkpoint(path: str | os.PathLike, map_location: str | torch.device = "cpu") -> dict:
    """The contents of a Lightning checkpoint file, loaded weights-only (a pickle of arbitrary
    objects is refused, its code never run), or ``ValueError`` saying what the file is not,
    for the caller to name it: a cut-short or foreign file, or one whose contents are no dict
    with a ``state_dict`` dict of tensors (:func:`tssdpa.models.checkpoints.read_checkpoint`,
    the experiment scripts' reader too)."""
    return read_checkpoint(path, map_location)


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
        # A vocabulary longer than the model's tables: its last words would index past the
        # source embedding (IndexError mid-translation) or never be produced.
        sizes = {
            "source_vocab": (len(source_vocab), transformer.source_embedding.tokens.num_embeddings),
            "target_vocab": (len(target_vocab), transformer.output.out_features),
        }
        for name, (words, entries) in sizes.items():
            if words > entries:
                raise ValueError(f"{name} has {words} entries, the model only {entries}")
        self.transformer = transformer
        self.source_vocab = source_vocab
        self.target_vocab = target_vocab

    @classmethod
    def from_checkpoint(
        cls, path: str | os.PathLike, map_location: str | torch.device = "cpu"
    ) -> Translator:
        """Rebuild from a checkpoint written by ``TranslationSystem`` (loaded weights-only).

        A file that does not load weights-only, or whose contents are not a translation model
        of the expected layout (a dict with ``state_dict`` and ``translation``: the transformer
        config, two lists of words no longer than the model's tables), raises ``ValueError``
        naming it.
        """
        try:
            checkpoint = load_checkpoint(path, map_location)
        except ValueError as err:
            raise ValueError(f"checkpoint {str(path)!r} {err}") from None
        info = checkpoint.get("translation")
        if not isinstance(info, dict) or "source_vocab" not in info:
            raise ValueError(
                f"checkpoint {str(path)!r} holds no translation model and vocabularies "
                "(was it written by TranslationSystem with its data module attached?)"
            )
        try:
            return cls._from_contents(checkpoint, info, map_location)
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            # A missing entry, a wrong type, the model's own checks of its config, or
            # load_state_dict's size mismatch: one message naming the file.
            why = " ".join(str(err).split())
            raise ValueError(
                f"checkpoint {str(path)!r} is not a usable translation model: {why}"
            ) from None

    @classmethod
    def _from_contents(cls, checkpoint: dict, info: dict, map_location) -> Translator:
        config, state = info["transformer_config"], checkpoint["state_dict"]
        if not isinstance(config, dict):
            raise TypeError("transformer_config must be a dict")
        unknown = set(config) - set(inspect.signature(TranslationTransformer).parameters)
        if unknown:
            raise ValueError(f"transformer_config has unknown settings {sorted(map(str, unknown))}")
        vocabs = [info["source_vocab"], info["target_vocab"]]
        if not all(isinstance(v, list) and all(isinstance(w, str) for w in v) for v in vocabs):
            raise TypeError("source_vocab and target_vocab must be lists of words")
        transformer = TranslationTransformer.from_config(config)
        prefix = "transformer."
        state = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
        transformer.load_state_dict(state)
        transformer.to(map_location).eval()
        return cls(transformer, *(Vocabulary(v) for v in vocabs))

    @property
    def device(self) -> torch.device:
        return next(self.transformer.parameters()).device

    def vectorize(self, sentences: Sequence[str]) -> torch.Tensor:
        """Standardised, padded source ids (N, sequence_length)."""
        texts = [standardize_english(s) for s in sentences]
        return self.source_vocab.encode_batch(texts, self.transformer.sequence_length)

    def translate(self, sentences: str | Sequence[str], batch_size: int = 256) -> list[str]:
        """Greedy translations (standardised Spanish, without markers) of ``sentences``."""
        # Checked up front: None, a number or bytes among the sentences failed deep inside
        # standardisation with AttributeError ('NoneType' object has no attribute 'lower').
        if isinstance(sentences, str):
            sentences = [sentences]
        if isinstance(sentences, (bytes, bytearray)) or not isinstance(sentences, Iterable):
            raise TypeError(
                "sentences must be a string or a sequence of strings, got "
                f"{type(sentences).__name__}"
            )
        sentences = list(sentences)
        for i, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise TypeError(f"sentences[{i}] must be a string, got {type(sentence).__name__}")
        batch_size = check_int(batch_size, "batch_size")
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
