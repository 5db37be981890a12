"""Data module for the English→Spanish translation experiment.

The pair file is read once, shuffled with a fixed seed, split 70/15/15 (the Keras example's
83,276 / 17,844 / 17,844 on the full 118,964 pairs), standardised, and vectorised with
vocabularies built on the training split only. The resulting integer tensors and the two
vocabularies are cached as one ``.pt`` file, so a training step never touches a Python string.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from tssdpa.checks import LibraryWarning, check_choice, warn
from tssdpa.data.download import sha256_file
from tssdpa.data.paths import CACHE_DIR, find_dataset
from tssdpa.files import replacing
from tssdpa.translation.text import (
    Vocabulary,
    read_pairs,
    standardize_english,
    standardize_spanish,
    wrap_target,
)

DEFAULT_DATASET = "spa-eng/spa.txt.gz"
CACHE_FORMAT_VERSION = 1
#: sha256 of the published files' (decompressed) contents, by the name they are looked up
#: under (the dataset's PROVENANCE.md): the 2018 two-column release of 118,964 pairs.
PUBLISHED_SHA256 = {
    DEFAULT_DATASET: "6ec60e212f812ee3430f7568ea6f33b6fb080e32193c5952e8da0ee8ba45574c",
}


@dataclass(frozen=True)
class VectorizationSettings:
    """Everything that determines the content of the vectorised cache."""

    sequence_length: int
    vocab_size: int
    val_fraction: float
    test_fraction: float
    seed: int
    max_pairs: int | None
    format_version: int = CACHE_FORMAT_VERSION


def split_sizes(n_pairs: int, val_fraction: float, test_fraction: float) -> tuple[int, int, int]:
    """(train, val, test) sizes as the Keras example computes them: ``int(fraction * n)``."""
    n_val = int(val_fraction * n_pairs)
    n_test = int(test_fraction * n_pairs)
    return n_pairs - n_val - n_test, n_val, n_test


def vectorize_pairs(
    pairs: list[tuple[str, str]], settings: VectorizationSettings
) -> dict[str, object]:
    """Shuffle, split, build vocabularies on the training split and vectorise every pair.

    Returns a dict of plain types and tensors (loadable with ``torch.load(weights_only=True)``):
    ``source`` (N, L) and ``target`` (N, L + 1) int64 in shuffled order, ``split_sizes``,
    ``source_vocab`` / ``target_vocab`` (token lists), ``english`` / ``spanish`` (the raw
    sentences in the same order) and ``settings``.
    """
    if settings.max_pairs is not None:
        if settings.max_pairs < 3:
            raise ValueError(f"max_pairs must be at least 3, got {settings.max_pairs}")
        if settings.max_pairs > len(pairs):  # it ran on fewer pairs than asked, unsaid
            raise ValueError(f"max_pairs must be at most the {len(pairs)} pairs there are, got "
                             f"{settings.max_pairs} (none: all of them)")  # fmt: skip
    generator = torch.Generator().manual_seed(settings.seed)
    order = torch.randperm(len(pairs), generator=generator).tolist()
    if settings.max_pairs is not None:
        order = order[: settings.max_pairs]
    english = [pairs[i][0] for i in order]
    spanish = [pairs[i][1] for i in order]
    n_train, n_val, n_test = split_sizes(len(order), settings.val_fraction, settings.test_fraction)
    if min(n_train, n_val, n_test) < 1:
        raise ValueError(
            f"split of {len(order)} pairs with val_fraction={settings.val_fraction} and "
            f"test_fraction={settings.test_fraction} leaves an empty split "
            f"({n_train}/{n_val}/{n_test})"
        )

    source_text = [standardize_english(s) for s in english]
    target_text = [standardize_spanish(wrap_target(s)) for s in spanish]
    source_vocab = Vocabulary.build(source_text[:n_train], settings.vocab_size)
    target_vocab = Vocabulary.build(target_text[:n_train], settings.vocab_size)
    length = settings.sequence_length
    return {
        "source": source_vocab.encode_batch(source_text, length),
        "target": target_vocab.encode_batch(target_text, length + 1),
        "split_sizes": [n_train, n_val, n_test],
        "source_vocab": source_vocab.tokens,
        "target_vocab": target_vocab.tokens,
        "english": english,
        "spanish": spanish,
        "settings": asdict(settings),
    }


class TokenPairs(Dataset):
    """Vectorised (source, target) rows; ``__getitems__`` returns whole batches at once."""

    def __init__(self, source: torch.Tensor, target: torch.Tensor, index: torch.Tensor):
        if not (len(source) == len(target) == len(index)):
            raise ValueError("source, target and index must have the same length")
        self.source, self.target, self.index = source, target, index

    def __len__(self) -> int:
        return len(self.source)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.source[i], self.target[i], self.index[i]

    def __getitems__(self, indices: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rows = torch.as_tensor(indices, dtype=torch.long)
        return self.source[rows], self.target[rows], self.index[rows]


def _batch_as_is(batch):
    """Collate function for :class:`TokenPairs`: the dataset already returns stacked tensors."""
    return batch


class EpochShuffleSampler(Sampler[int]):
    """Random permutation that depends only on ``(seed, epoch)``.

    Lightning calls :meth:`set_epoch` before each epoch, so a run resumed from a checkpoint
    sees exactly the batches an uninterrupted run would have seen.
    """

    def __init__(self, n: int, seed: int = 0):
        self.n, self.seed, self.epoch = n, seed, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        generator = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        return iter(torch.randperm(self.n, generator=generator).tolist())


class TranslationDataModule(L.LightningDataModule):
    """English→Spanish pairs, vectorised once and cached.

    Args:
        data_dir: Folder holding ``spa-eng/spa.txt.gz`` (searched as ``tssdpa.data.find_dataset``
            does when omitted).
        dataset: Path of the pair file relative to the data folder, or an absolute path.
        sequence_length: Tokens per sentence (source ``L``, target ``L + 1``: decoder input is the
            first ``L``, labels the last ``L``). 20 in the Keras example, 10 in the paper.
        vocab_size: Entries per language, padding and ``[UNK]`` included.
        batch_size: Training batch size.
        eval_batch_size: Validation/test batch size (default: ``batch_size``).
        val_fraction: Fraction of pairs for validation.
        test_fraction: Fraction of pairs for testing.
        seed: Seed of the shuffle before the split and of the per-epoch training order.
        max_pairs: Use only the first ``max_pairs`` shuffled pairs (reduced runs and tests);
            more than the file holds is refused.
        num_workers: DataLoader worker processes.
        pin_memory: Pin batches in page-locked memory (faster host→GPU copies).
        cache_dir: Where the vectorised cache goes (default ``~/.cache/tssdpa/translation``).
    """

    def __init__(
        self,
        data_dir: str | None = None,
        dataset: str = DEFAULT_DATASET,
        sequence_length: int = 20,
        vocab_size: int = 15000,
        batch_size: int = 64,
        eval_batch_size: int | None = None,
        val_fraction: float = 0.15,
        test_fraction: float = 0.15,
        seed: int = 0,
        max_pairs: int | None = None,
        num_workers: int = 0,
        pin_memory: bool = False,
        cache_dir: str | None = None,
    ):
        super().__init__()
        for name, value in [("sequence_length", sequence_length), ("batch_size", batch_size)]:
            if value < 1:
                raise ValueError(f"{name} must be positive, got {value}")
        if eval_batch_size is not None and eval_batch_size < 1:
            raise ValueError(f"eval_batch_size must be positive, got {eval_batch_size}")
        check_choice(pin_memory, "pin_memory", (True, False))
        if vocab_size < 3:
            raise ValueError(f"vocab_size must be at least 3, got {vocab_size}")
        for name, value in [("val_fraction", val_fraction), ("test_fraction", test_fraction)]:
            if not 0.0 < value < 1.0:
                raise ValueError(f"{name} must be in (0, 1), got {value}")
        if val_fraction + test_fraction >= 1.0:
            raise ValueError(
                f"val_fraction + test_fraction must be below 1, got {val_fraction + test_fraction}"
            )
        if num_workers < 0:
            raise ValueError(f"num_workers must be >= 0, got {num_workers}")
        # Checked here, not only when the pairs are vectorised: that is inside Trainer.fit,
        # after the model and trainer were built.
        if max_pairs is not None and max_pairs < 3:
            raise ValueError(f"max_pairs must be at least 3, got {max_pairs}")
        self.save_hyperparameters()
        self.data_dir = data_dir
        self.dataset = dataset
        self.batch_size = batch_size
        self.eval_batch_size = eval_batch_size or batch_size
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.seed = seed
        self.settings = VectorizationSettings(
            sequence_length=sequence_length,
            vocab_size=vocab_size,
            val_fraction=val_fraction,
            test_fraction=test_fraction,
            seed=seed,
            max_pairs=max_pairs,
        )
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else CACHE_DIR / "translation"
        # found otherwise only when the cache is written, inside Trainer.fit (FileExistsError)
        if self.cache_dir.exists() and not self.cache_dir.is_dir():
            raise ValueError(f"cache_dir {str(self.cache_dir)!r} is a file, not a folder")
        self.arrays: dict[str, object] | None = None

    @property
    def sequence_length(self) -> int:
        return self.settings.sequence_length

    # -- locating and caching -----------------------------------------------------------------
    def source_path(self) -> Path:
        """The pair file: ``dataset`` itself when it is an existing path, else found by name."""
        candidate = Path(self.dataset).expanduser()
        if candidate.is_absolute() or candidate.is_file():
            if not candidate.is_file():
                raise FileNotFoundError(f"dataset file {str(candidate)!r} does not exist")
            return candidate
        return find_dataset(self.dataset, self.data_dir, downloadable=False)

    def _check_published(self, source: Path) -> None:
        """A file looked up by a published dataset's name must be that file: a shortened,
        edited or other-release copy was read without a word and moved every figure (the
        cache is keyed by the file's bytes, so a good file is checked once)."""
        expected = PUBLISHED_SHA256.get(str(self.dataset))
        if expected is None:
            return
        try:
            got = sha256_file(source, gz=source.suffix == ".gz")
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            raise ValueError(f"{source}: not a readable copy of {self.dataset} ({exc})") from None
        if got != expected:
            raise ValueError(
                f"{source}: its contents' sha256 {got[:12]}... is not the published "
                f"{self.dataset}'s (see its PROVENANCE.md); pass another file by its path"
            )

    def cache_path(self) -> Path:
        """Cache file named by a hash of the pair file's bytes and the vectorisation settings."""
        digest = hashlib.sha256(self.source_path().read_bytes())
        digest.update(json.dumps(asdict(self.settings), sort_keys=True).encode())
        return self.cache_dir / f"pairs-{digest.hexdigest()[:16]}.pt"

    def prepare_data(self, force: bool = False) -> None:
        """Vectorise the pair file into the cache unless it is there already (rank 0 only)."""
        path = self.cache_path()
        if path.is_file() and not force:
            return
        source = self.source_path()
        self._check_published(source)
        arrays = vectorize_pairs(read_pairs(source), self.settings)
        path.parent.mkdir(parents=True, exist_ok=True)
        # replacing: a failed write (a full disk) had left its pid-named partial file behind
        with replacing(path) as tmp:
            torch.save(arrays, tmp)

    def setup(self, stage: str | None = None) -> None:
        if self.arrays is not None:
            return
        path = self.cache_path()
        if not path.is_file():
            self.prepare_data()
        self.arrays = self._read_cache(path)
        if self.arrays is None:
            warn(
                f"{path}: damaged or not this data's cache; vectorising again",
                LibraryWarning,
                stacklevel=2,
            )
            self.prepare_data(force=True)
            self.arrays = torch.load(path, weights_only=True)
        self.source_vocab = Vocabulary(self.arrays["source_vocab"])
        self.target_vocab = Vocabulary(self.arrays["target_vocab"])
        n_train, n_val, _ = self.arrays["split_sizes"]
        bounds = {"train": (0, n_train), "val": (n_train, n_train + n_val)}
        bounds["test"] = (n_train + n_val, len(self.arrays["source"]))
        self.splits = {name: range(lo, hi) for name, (lo, hi) in bounds.items()}
        self.datasets = {
            name: TokenPairs(
                self.arrays["source"][lo:hi],
                self.arrays["target"][lo:hi],
                torch.arange(lo, hi),
            )
            for name, (lo, hi) in bounds.items()
        }

    def _read_cache(self, path: Path) -> dict[str, object] | None:
        """The cached arrays, or None where the file does not load or is not what these
        settings vectorise to. A cut-short cache raised EOFError or 'Invalid argument' on every
        later run, and an edited one (ids past the vocabulary, split sizes that do not add up,
        narrower rows) was trained on as it was."""
        try:
            arrays = torch.load(path, weights_only=True)
            n, length = len(arrays["english"]), self.settings.sequence_length
            sizes = arrays["split_sizes"]
            words = [*arrays["english"], *arrays["spanish"]]
            words += [*arrays["source_vocab"], *arrays["target_vocab"]]
            fits = (
                arrays["settings"] == asdict(self.settings)
                and len(arrays["spanish"]) == n
                and all(isinstance(w, str) for w in words)
                and len(sizes) == 3
                and sum(sizes) == n
                and min(sizes) >= 1
            )
            for side, width in (("source", length), ("target", length + 1)):
                ids, vocab = arrays[side], Vocabulary(arrays[f"{side}_vocab"])
                fits = fits and ids.dtype == torch.long and ids.shape == (n, width)
                fits = fits and 0 <= int(ids.min()) and int(ids.max()) < len(vocab)
        # it does not load (the first four), or is not the cache's layout (the others)
        except (OSError, EOFError, RuntimeError, pickle.UnpicklingError,
                KeyError, TypeError, ValueError, AttributeError):  # fmt: skip
            return None
        return arrays if fits else None

    # -- access for evaluation and reporting ----------------------------------------------------
    def _require_setup(self) -> None:
        if self.arrays is None:
            raise RuntimeError("call setup() before using the data module's splits")

    def pairs(self, split: str) -> list[tuple[str, str]]:
        """Raw (English, Spanish) pairs of ``split`` ("train", "val" or "test") in split order."""
        self._require_setup()
        if split not in self.splits:
            raise ValueError(f"split must be one of {sorted(self.splits)}, got {split!r}")
        r = self.splits[split]
        english = self.arrays["english"][r.start : r.stop]
        return list(zip(english, self.arrays["spanish"][r.start : r.stop]))

    def reference(self, index: int) -> str:
        """Standardised Spanish of pair ``index`` (global shuffled index) without markers."""
        self._require_setup()
        return " ".join(standardize_spanish(self.arrays["spanish"][index]).split())

    # -- loaders --------------------------------------------------------------------------------
    def _loader(self, split: str, batch_size: int, sampler: Sampler | None, shuffle: bool = False):
        self._require_setup()
        return DataLoader(
            self.datasets[split],
            batch_size=batch_size,
            sampler=sampler,
            shuffle=shuffle,
            collate_fn=_batch_as_is,
            num_workers=self.num_workers,
            pin_memory=self.pin_memory,
            persistent_workers=self.num_workers > 0,
            # An own generator keeps DataLoader iteration from drawing on the global RNG, which
            # would otherwise make dropout masks depend on how many loaders were iterated.
            generator=torch.Generator().manual_seed(self.seed),
        )

    def train_dataloader(self) -> DataLoader:
        distributed = self.trainer is not None and self.trainer.world_size > 1
        if distributed:
            # Lightning swaps in a DistributedSampler (seeded, set_epoch per epoch).
            return self._loader("train", self.batch_size, None, shuffle=True)
        sampler = EpochShuffleSampler(len(self.datasets["train"]), self.seed)
        return self._loader("train", self.batch_size, sampler)

    def val_dataloader(self) -> DataLoader:
        return self._loader("val", self.eval_batch_size, None)

    def test_dataloader(self) -> DataLoader:
        return self._loader("test", self.eval_batch_size, None)
