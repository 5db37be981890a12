"""Lightning command line for the translation experiment (``experiments/translate.py``)."""

from __future__ import annotations

import csv
import inspect
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from lightning.fabric.utilities.exceptions import MisconfigurationException
from lightning.pytorch.cli import LightningArgumentParser, LightningCLI

from tssdpa.files import replacing, same_path
from tssdpa.models.checkpoints import no_smoke_checkpoints
from tssdpa.models.lightning_errors import (
    class_error,
    ignore_lightning_deprecations,
    setting_error,
    unlogged_monitor,
)
from tssdpa.translation.data import TranslationDataModule
from tssdpa.translation.model import TranslationTransformer
from tssdpa.translation.system import TranslationSystem, check_vocabularies
from tssdpa.translation.translator import load_checkpoint

#: what TranslationSystem logs while fitting, which a callback's ``monitor`` may name
_LOGGED = (
    *(
        f"{split}_{name}"
        for split in ("val", "train")
        for name in ("loss", "accuracy", "keras_accuracy")
    ),
    "epoch_time_s",
    "tokens_per_s",
)


class TranslationCLI(LightningCLI):
    """``LightningCLI`` for :class:`TranslationSystem` + :class:`TranslationDataModule`.

    The model's vocabulary sizes and sequence length are linked to the data settings, so they
    are set once under ``data``. After ``fit`` the test split is evaluated (loss, accuracies,
    BLEU) unless ``--test_after_fit false``, and ``--history_file`` receives the per-epoch
    metrics as CSV. A smoke run (``--trainer.fast_dev_run``) writes neither the history nor a
    checkpoint.

    A bad setting (a constructor's ``ValueError``, the Trainer's
    ``MisconfigurationException``, its refusal of the callbacks) is one line on stderr and
    exit code 2, like the parser's own errors, and so is, before any training, a pair file
    that cannot be read, a callback monitoring a metric the system does not log, or a
    ``--history_file`` that is a folder, the pair file or a ``--config`` file.
    """

    def __init__(
        self,
        args: Sequence[str] | None = None,
        run: bool = True,
        option_names: dict[str, str] | None = None,
        **kwargs,
    ):
        """``option_names``: the flag a front end gave a data setting by, for its messages
        (``{"max_pairs": "--max-pairs"}``); by default this command's own, ``--data.<name>``."""
        # set first: the classes are built (and their errors told) inside LightningCLI's init
        self.option_names = {
            "max_pairs": "--data.max_pairs",
            "data_dir": "--data.data_dir",
            **(option_names or {}),
        }
        kwargs.setdefault("save_config_kwargs", {"overwrite": True})
        with warnings.catch_warnings():  # the whole run is inside LightningCLI's init
            ignore_lightning_deprecations()  # Lightning's own, on every run
            super().__init__(TranslationSystem, TranslationDataModule, args=args, run=run,
                             **kwargs)  # fmt: skip

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

    @staticmethod
    def _refuse(message: str) -> NoReturn:
        print(f"{Path(sys.argv[0]).name}: error: {message}", file=sys.stderr)
        raise SystemExit(2)

    def _as_given(self, message: str) -> str | None:
        """``message`` naming the flag the user gave instead of the Python argument it starts
        with -- one of ``option_names``, else an argument of the data module, the system or
        the transformer, as ``--data.<name>``, ``--model.<name>`` or
        ``--model.transformer.init_args.<name>`` (``self_attention_sigma must be positive``
        named none of them) -- or None when it starts with no argument's name."""
        name = message.split(" ", 1)[0]
        if name in self.option_names:
            return self.option_names[name] + message[len(name) :]
        # the data module first: the transformer's sequence_length is linked from its own
        for part, cls in (("data", TranslationDataModule), ("model", TranslationSystem),
                          ("model.transformer.init_args", TranslationTransformer)):  # fmt: skip
            if name in inspect.signature(cls).parameters:
                return f"--{part}.{name}{message[len(name) :]}"
        return None

    def instantiate_classes(self) -> None:
        # The classes check their arguments as they are built; their errors reached the user
        # as tracebacks (exit code 1). A callback's own check came in jsonargparse's report
        # on its union of types, 15 lines: its one line (class_error).
        try:
            super().instantiate_classes()
        except (ValueError, MisconfigurationException) as exc:
            self._refuse(self._as_given(str(exc)) or class_error(str(exc)))

    def instantiate_trainer(self, **kwargs):
        # Lightning's errors on a Trainer argument, told by the option: a ModelCheckpoint
        # added (--trainer.callbacks+=ModelCheckpoint) to the config's was a RuntimeError
        # traceback; anything not the user's setting keeps its traceback
        try:
            return super().instantiate_trainer(**kwargs)
        except Exception as exc:
            told = setting_error(exc, self._subcommand_option("trainer"))
            if told is None:
                raise
            self._refuse(told)

    def _check_before_run(self) -> None:
        """Refuse, before any training, what would otherwise fail (or destroy data) later."""
        try:
            source = self.datamodule.source_path()
            if self.trainer.local_rank == 0:  # Lightning prepares the data on local rank 0
                self.datamodule.prepare_data()  # vectorised once: the run reads the cache
        except (ValueError, FileNotFoundError) as exc:
            # the dataset lookup names tssdpa compare's --data-dir: this command's own flag
            flag = self.option_names["data_dir"]
            message = str(exc).replace("data_dir (--data-dir)", flag).replace("--data-dir", flag)
            self._refuse(self._as_given(message) or f"--data: {message}")
        ckpt_path = self._subcommand_option("ckpt_path")
        if getattr(self, "_checkpoint", None) is not None:
            self._check_checkpoint(ckpt_path)
        history_file = self._subcommand_option("history_file")
        if history_file:
            # Written only after fit: a folder failed then, losing the run's history, and the
            # pair file (or a config) was overwritten, destroying the data the run had read.
            history = Path(history_file).expanduser()
            if history.is_dir():
                self._refuse(f"--history_file {history_file} is a folder")
            inputs = [source, *(Path(str(c)) for c in self._subcommand_option("config") or ())]
            for given in inputs:
                if same_path(history, given):
                    self._refuse(f"--history_file {history_file} would overwrite {given}")

    def parse_arguments(self, parser: LightningArgumentParser, args) -> None:
        super().parse_arguments(parser, args)
        # LightningCLI loads --ckpt_path (weights-only) for its hyperparameters right after
        # parsing: a missing file was found only inside the Trainer, and one that does not
        # load weights-only was a traceback from there.
        self._checkpoint = None
        subcommand = self.config.get("subcommand")
        ckpt_path = self.config[subcommand].get("ckpt_path") if subcommand else None
        if subcommand in ("validate", "test") and not ckpt_path:
            # Lightning scored the freshly initialised weights and printed their metrics as
            # any trained model's, without a word
            self._refuse(
                f"{subcommand} needs --ckpt_path CKPT (the trained model to {subcommand}): "
                "without one the untrained, randomly initialised weights would be scored"
            )
        if ckpt_path and ckpt_path not in ("last", "best", "hpc", "registry"):
            if not Path(ckpt_path).is_file():
                self._refuse(f"--ckpt_path {ckpt_path}: no such file")
            try:
                self._checkpoint = load_checkpoint(ckpt_path)
            except ValueError as exc:
                self._refuse(f"--ckpt_path {ckpt_path} {exc}")

    def _check_checkpoint(self, ckpt_path: str) -> None:
        """A --ckpt_path of another model size, or trained on other vocabularies, failed (or
        was silently misread) inside the Trainer."""
        checkpoint, self._checkpoint = self._checkpoint, None  # not kept for the whole run
        shapes = {k: tuple(v.shape) for k, v in self.model.state_dict().items()}
        saved = {k: tuple(getattr(v, "shape", ())) for k, v in checkpoint["state_dict"].items()}
        if saved != shapes:
            differ = sorted(k for k in {*saved, *shapes} if saved.get(k) != shapes.get(k))
            self._refuse(
                f"--ckpt_path {ckpt_path} holds another model (first differing weight "
                f"{differ[0]!r}): give the model settings it was trained with"
            )
        try:
            self.datamodule.setup()
            check_vocabularies(checkpoint.get("translation", {}), self.datamodule)
        except ValueError as exc:
            self._refuse(f"--ckpt_path {ckpt_path}: {exc}")

    def before_fit(self) -> None:
        # a misspelt monitor failed (a traceback) only after the first epoch had trained
        unlogged = unlogged_monitor(self.trainer, _LOGGED)
        if unlogged:
            self._refuse(f"--trainer.callbacks: {unlogged} names no metric the model logs "
                         f"while fitting: {', '.join(_LOGGED)}")  # fmt: skip
        self._check_before_run()
        no_smoke_checkpoints(self.trainer)

    def before_validate(self) -> None:
        self._check_before_run()

    def before_test(self) -> None:
        self._check_before_run()

    @staticmethod
    def subcommands() -> dict[str, set[str]]:
        # No predict: the data module has no predict split and the system no predict step,
        # so 'predict' failed with Lightning's MisconfigurationException traceback after
        # building everything. Translating is Translator's job.
        commands = LightningCLI.subcommands()
        del commands["predict"]
        return commands

    def after_fit(self) -> None:
        history_file = self._subcommand_option("history_file")
        if history_file and self.trainer.fast_dev_run:
            # a smoke run's batch is no history: it replaced the real run's file
            print("fast_dev_run: a smoke run, --history_file not written", file=sys.stderr)
        elif history_file and self.trainer.is_global_zero:
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
    # Whole or not at all: a failed write leaves an earlier history as it was.
    with replacing(path) as tmp, tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def main(args: Sequence[str] | None = None) -> TranslationCLI:
    return TranslationCLI(args=args)
