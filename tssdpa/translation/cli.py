"""Lightning command line for the translation experiment (``experiments/translate.py``)."""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path

from lightning.pytorch.cli import LightningArgumentParser, LightningCLI

from tssdpa.translation.data import TranslationDataModule
from tssdpa.translation.system import TranslationSystem


class TranslationCLI(LightningCLI):
    """``LightningCLI`` for :class:`TranslationSystem` + :class:`TranslationDataModule`.

    The model's vocabulary sizes and sequence length are linked to the data settings, so they
    are set once under ``data``. After ``fit`` the test split is evaluated (loss, accuracies,
    BLEU) unless ``--test_after_fit false``, and ``--history_file`` receives the per-epoch
    metrics as CSV.
    """

    def __init__(self, args: Sequence[str] | None = None, run: bool = True, **kwargs):
        kwargs.setdefault("save_config_kwargs", {"overwrite": True})
        super().__init__(TranslationSystem, TranslationDataModule, args=args, run=run, **kwargs)

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        target = "model.transformer.init_args"
        parser.link_arguments("data.sequence_length", f"{target}.sequence_length")
        parser.link_arguments("data.vocab_size", f"{target}.source_vocab_size")
        parser.link_arguments("data.vocab_size", f"{target}.target_vocab_size")
        parser.add_argument(
            "--test_after_fit",
            type=bool,
            default=True,
            help="After fit, evaluate the final model on the test split (loss, accuracy, BLEU).",
        )
        parser.add_argument(
            "--history_file",
            type=str | None,
            default=None,
            help="After fit, write the per-epoch metrics to this CSV file.",
        )

    def _subcommand_option(self, name: str):
        config = self.config[self.subcommand] if self.subcommand else self.config
        return config.get(name)

    def after_fit(self) -> None:
        history_file = self._subcommand_option("history_file")
        if history_file and self.trainer.is_global_zero:
            write_history(self.model.history, history_file)
        if self._subcommand_option("test_after_fit"):
            self.trainer.test(self.model, datamodule=self.datamodule, weights_only=True)


def write_history(rows: list[dict], path: str | os.PathLike) -> None:
    """Write per-epoch metric dicts as CSV (columns: the union of keys, in first-seen order)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def main(args: Sequence[str] | None = None) -> TranslationCLI:
    return TranslationCLI(args=args)
