"""Text handling for the English→Spanish translation experiment.

Mirrors the Keras example "English-to-Spanish translation with a sequence-to-sequence
Transformer": lower-case, strip punctuation (and ``¿`` on the Spanish side, keeping the ``[``
and ``]`` of the ``[start]``/``[end]`` markers), split on whitespace, and look words up in a
frequency-sorted vocabulary whose first two entries are padding (``""``) and out-of-vocabulary
(``"[UNK]"``), as ``keras.layers.TextVectorization`` builds it.

One deliberate difference: ``str.lower`` lower-cases every Unicode letter, whereas TensorFlow's
``tf.strings.lower`` (used by Keras) only lower-cases ASCII, so Keras keeps ``"Él"`` and ``"él"``
apart and this code does not.
"""

from __future__ import annotations

import gzip
import os
import re
import string
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch

from tssdpa.checks import check_int

PAD_TOKEN = ""
OOV_TOKEN = "[UNK]"
START_TOKEN = "[start]"
END_TOKEN = "[end]"
PAD_ID = 0
OOV_ID = 1

# Keras default standardisation (English side): every ASCII punctuation character.
_ENGLISH_STRIP = re.compile("[" + re.escape(string.punctuation) + "]")
# Keras example custom standardisation (Spanish side): punctuation and "¿", keeping "[" and "]".
_SPANISH_STRIP = re.compile(
    "[" + re.escape(string.punctuation.replace("[", "").replace("]", "") + "¿") + "]"
)


def standardize_english(text: str) -> str:
    """Lower-case and remove ASCII punctuation."""
    return _ENGLISH_STRIP.sub("", text.lower())


def standardize_spanish(text: str) -> str:
    """Lower-case and remove ASCII punctuation and ``¿`` (``[`` and ``]`` are kept)."""
    return _SPANISH_STRIP.sub("", text.lower())


def wrap_target(spanish: str) -> str:
    """Wrap a raw Spanish sentence in the decoder's start and end markers."""
    return f"{START_TOKEN} {spanish} {END_TOKEN}"


def read_pairs(path: str | os.PathLike, max_pairs: int | None = None) -> list[tuple[str, str]]:
    """Read ``English<TAB>Spanish`` lines from a (optionally gzipped) text file.

    A file of ``English<TAB>Spanish<TAB>attribution`` lines (newer releases) is read too, its
    third column ignored; every line of a file must have the first line's number of columns:
    a TAB inside a sentence (one more column) raises ``ValueError`` naming the line, as it was
    cut at the TAB (the rest of a Spanish sentence read as attribution, of an English one as
    the Spanish). A byte order mark at the start of the file is dropped. A line that is not
    UTF-8 or has an empty side, or a ``.gz`` file that is no whole gzip file, raises
    ``ValueError`` naming the file (and line).
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    pairs: list[tuple[str, str]] = []
    columns = None  # (fields per line, the line that set it)
    # utf-8-sig: a file saved with a byte order mark (Windows editors) had it glued to the
    # first English word, which then became a vocabulary word of its own.
    try:
        with opener(path, "rt", encoding="utf-8-sig") as fh:
            for lineno, line in enumerate(fh, start=1):
                line = line.rstrip("\n")
                if not line:
                    continue
                fields = line.split("\t")
                if len(fields) < 2:
                    raise ValueError(
                        f"{path}:{lineno}: expected 'English<TAB>Spanish', got {line!r}"
                    )
                columns = columns or (len(fields), lineno)
                if len(fields) > 3 or len(fields) != columns[0]:
                    rule = ("English, Spanish and an optional attribution" if len(fields) > 3
                            else f"line {columns[1]} has {columns[0]}")  # fmt: skip
                    raise ValueError(f"{path}:{lineno}: {len(fields)} tab-separated fields "
                                     f"({rule}): a TAB inside a sentence? {line!r}")  # fmt: skip
                # An empty side trained the model to translate nothing into a sentence (or a
                # sentence into nothing) without a word about the line.
                for side, text in (("English", fields[0]), ("Spanish", fields[1])):
                    if not text.strip():
                        raise ValueError(f"{path}:{lineno}: empty {side} sentence in {line!r}")
                pairs.append((fields[0], fields[1]))
                if max_pairs is not None and len(pairs) >= max_pairs:
                    break
    # The decoder's and gzip's own errors named neither the file nor the line.
    except UnicodeDecodeError as err:
        where = f"{path}:{_undecodable_line(path, opener)}"
        raise ValueError(f"{where}: not UTF-8 text ({err.reason})") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:
        raise ValueError(f"{path}: not a whole gzip file ({err})") from None
    return pairs


def _undecodable_line(path: Path, opener) -> int:
    """Number of the first line of ``path`` that is not UTF-8 (the text reader decodes in
    chunks, so its error does not say)."""
    with opener(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return lineno
    return 0


class Vocabulary:
    """Word ↔ index table in the layout of Keras ``TextVectorization``.

    Index 0 is padding (``""``), index 1 is out-of-vocabulary (``"[UNK]"``), then words by
    decreasing frequency, ties broken alphabetically so that the table is deterministic.
    ``max_tokens`` counts the two special entries, as in Keras.
    """

    def __init__(self, tokens: Sequence[str]):
        tokens = list(tokens)
        if tokens[:2] != [PAD_TOKEN, OOV_TOKEN]:
            raise ValueError(
                f"tokens must start with the padding and OOV entries {[PAD_TOKEN, OOV_TOKEN]!r}, "
                f"got {tokens[:2]!r}"
            )
        if len(set(tokens)) != len(tokens):
            raise ValueError("tokens must be distinct")
        self.tokens = tokens
        self.index = {tok: i for i, tok in enumerate(tokens)}

    @classmethod
    def build(cls, texts: Iterable[str], max_tokens: int) -> Vocabulary:
        """Count whitespace-separated words in already standardised ``texts``."""
        if max_tokens < 3:
            raise ValueError(
                f"max_tokens must be at least 3 (padding, OOV, one word), got {max_tokens}"
            )
        counts = Counter(word for text in texts for word in text.split())
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        words = [w for w, _ in ranked[: max_tokens - 2]]
        return cls([PAD_TOKEN, OOV_TOKEN, *words])

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def encode(self, text: str, length: int) -> list[int]:
        """Indices of the words of ``text``, truncated or zero-padded to ``length``."""
        # A negative length sliced words off the end and padded nothing: rows of another
        # width, which encode_batch's reshape then took as the width of the whole batch.
        length = check_int(length, "length", minimum=0)
        ids = [self.index.get(w, OOV_ID) for w in text.split()[:length]]
        return ids + [PAD_ID] * (length - len(ids))

    def encode_batch(self, texts: Sequence[str], length: int) -> torch.Tensor:
        """``(len(texts), length)`` int64 tensor of :meth:`encode` rows."""
        return torch.tensor([self.encode(t, length) for t in texts], dtype=torch.long).reshape(
            len(texts), length
        )

    def decode(self, ids: Iterable[int], *, stop_at: str | None = END_TOKEN) -> str:
        """Words for ``ids``, dropping padding and ``[start]``; stops at ``stop_at``."""
        words = []
        for i in ids:
            word = self.tokens[int(i)]
            if stop_at is not None and word == stop_at:
                break
            if word in (PAD_TOKEN, START_TOKEN):
                continue
            words.append(word)
        return " ".join(words)
