"""The entry point of the LightningCLI experiment scripts (``experiments/denoise.py`` and
``experiments/forecast.py``): their ``classical`` subcommand runs ``tssdpa compare``, anything
else the learned model's LightningCLI, its resolved config saved beside the results CSV."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

from tssdpa.cli.checkpoints import (  # noqa: F401 (re-exported: where they were)
    checkpoint_mismatch,
    missing_checkpoint,
    unreadable_checkpoint,
    unresolved_checkpoint,
)

__all__ = [
    "checkpoint_mismatch",
    "chosen_checkpoint",
    "chosen_model",
    "experiment_main",
    "missing_checkpoint",
    "settings_row",
    "start_checkpoint",
    "unreadable_checkpoint",
    "unresolved_checkpoint",
]


_DESCRIPTION = (
    "The learned {task} model (LightningCLI): `{task}.py fit --config "
    "experiments/configs/{task}_lorenz.yaml`, then a row of test scores appended to "
    "--results_csv. The classical and nonparametric projection methods instead: `{task}.py "
    "classical ...`, the same as `tssdpa compare {task} ...` (its options: `{task}.py "
    "classical --help`)."
)


def _notes_said(prog: str, show):
    """A ``warnings.showwarning`` that prints a :class:`~tssdpa.checks.SettingWarning` (a
    setting used otherwise than given: ``patch_len`` built as the lookback, ``seq_len`` as a
    short split) as one line, ``<prog>: note: ...``, and passes the others to ``show``.
    Lightning's format put the path of its own module that built the model before it (not
    where the setting came from)."""
    from tssdpa.checks import SettingWarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, SettingWarning):
            print(f"{prog}: note: {message}", file=sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)

    return showwarning


#: what the systems log while fitting (``ModelCheckpoint`` may also monitor Lightning's own
#: ``epoch`` and ``step``): a callback that monitors another name failed after an epoch
_LOGGED = ("val_loss", "train_loss")


#: the subcommands that only evaluate a model: without --ckpt_path they would evaluate the
#: untrained one
_EVALUATE = ("validate", "test")


def _checkpoint_folder(cb, trainer) -> str:
    """The folder ``cb`` (a ``ModelCheckpoint``) writes the epochs' checkpoints in, as Lightning
    resolves it at setup: its ``dirpath``, else the first logger's
    ``<save_dir>/<name>/<version>/checkpoints``, else ``<default_root_dir>/checkpoints``. Set
    by the validation of the start, except where that ran in another process (``--trainer.
    strategy ddp_spawn``): the start went to ``default_root_dir`` (the working directory)."""
    if getattr(cb, "dirpath", None):
        return cb.dirpath
    if trainer.loggers:  # its version fixed here, it is the one the spawned fit logs to
        logger = trainer.loggers[0]
        version = logger.version if isinstance(logger.version, str) else f"version_{logger.version}"
        save_dir = logger.save_dir if logger.save_dir is not None else trainer.default_root_dir
        return str(Path(save_dir, str(logger.name), version, "checkpoints"))
    return str(Path(trainer.default_root_dir, "checkpoints"))


def start_checkpoint(trainer, model, datamodule) -> tuple[str | dict, float]:
    """Validate ``model`` before training and checkpoint it (``start.ckpt``, beside the
    epochs' checkpoints; ``start-v1.ckpt``, ... where an earlier run's is there, as Lightning
    versions its own): ``(path, val_loss)``, a candidate for :func:`chosen_checkpoint`.
    Without checkpointing (``--trainer.enable_checkpointing false``, or a smoke run:
    ``--trainer.fast_dev_run``) no file is written: the path is a copy of the weights instead
    (it was ``./start.ckpt``, one more every run). Early stopping on ``val_loss`` counts its
    patience from it too. Written into a new (or empty) folder, it alone made Lightning's
    "Checkpoint directory ... exists and is not empty" warning of every fresh run: left out,
    within the caller's ``catch_warnings``."""
    import torch

    val = float(trainer.validate(model, datamodule=datamodule, verbose=False)[0]["val_loss"])
    for es in trainer.early_stopping_callbacks:
        if es.monitor == "val_loss":
            es.best_score = torch.tensor(val)
    cb = trainer.checkpoint_callback
    # a smoke run (fast_dev_run) writes no checkpoint: its start.ckpt stayed, and the next
    # real run's start became start-v1.ckpt beside it
    if cb is None or getattr(trainer, "fast_dev_run", False):
        return {k: v.detach().clone() for k, v in model.state_dict().items()}, val
    folder = Path(_checkpoint_folder(cb, trainer))
    if cb.dirpath and not (folder.is_dir() and any(folder.iterdir())):
        # Lightning warns at fit of a checkpoint folder that "exists and is not empty": of
        # a new folder, for this start alone (warnings are the caller's: experiment_main's)
        said = f"Checkpoint directory {cb.dirpath} exists and is not empty."
        warnings.filterwarnings("ignore", message=re.escape(said) + r"\Z")
    path, version = folder / "start.ckpt", 0
    while path.exists():  # an earlier run's start, which its results row names: kept
        version += 1
        path = folder / f"start-v{version}.ckpt"
    path = trainer.strategy.broadcast(str(path))  # the first process's, which writes it
    trainer.save_checkpoint(path, weights_only=True)
    return path, val


def chosen_checkpoint(trainer, model, datamodule, start) -> tuple[str | dict | None, str, float]:
    """After fit: ``(file to load, or the start's weights, or None for the model as
    trained; checkpoint to report; its val_loss)`` -- the best epoch on validation, or the
    start of :func:`start_checkpoint` where no epoch beat it (a learned model never ends
    worse on validation than it began); :func:`chosen_model` applies it."""
    cb = trainer.checkpoint_callback
    ckpt = getattr(cb, "best_model_path", "")
    best = getattr(cb, "best_model_score", None)
    if ckpt and best is not None and getattr(cb, "monitor", None) == "val_loss":
        val, load = float(best), ckpt  # the best epoch on validation
    else:
        # no checkpoint chosen on val_loss (Lightning's default ModelCheckpoint keeps the
        # latest epoch, with no score): the model as trained, validated now. The NaN that
        # stood here lost to the starting model: every epoch was thrown away
        val = float(trainer.validate(model, datamodule=datamodule, verbose=False)[0]["val_loss"])
        load, ckpt = None, ckpt if getattr(cb, "monitor", True) is None else ""
    if not val < start[1]:  # no epoch beat the starting model
        load, val = start
        ckpt = load if isinstance(load, str) else ""  # weights in memory: no file
    return load, ckpt, val


def chosen_model(model, load):
    """``model`` as :func:`chosen_checkpoint` chose it: loaded from its file, given the
    start's weights, or as trained (``load`` None)."""
    if isinstance(load, dict):  # the start, kept in memory without checkpointing
        model.load_state_dict(load)
    elif load:
        model = type(model).load_from_checkpoint(load)
    return model


#: the model's arguments that only its own ``configure_optimizers`` reads (AdamW's): with an
#: ``--optimizer`` LightningCLI replaces that method, and they train nothing
_OWN_OPTIMISER = ("lr", "weight_decay")


def settings_row(config) -> dict:
    """The model's and the optimiser's resolved settings of a run's ``config`` as columns of its
    results row -- ``model.lr``, ``model.d_model``, ..., ``optimizer`` (its class) and
    ``optimizer.<arg>``, the same for ``lr_scheduler`` where one is given: runs at lr 0.003 and
    0.3 made rows that read the same. With an ``optimizer`` given, the model's own optimiser
    settings (``model.lr``, ``model.weight_decay``) are left out: LightningCLI's optimiser
    replaces the model's ``configure_optimizers``, so training used ``optimizer.lr``, and a
    row with ``model.lr=0.3`` beside ``optimizer.lr=0.001`` read as a run at 0.3. Values that
    are not plain (lists, nested settings) as text."""
    row = {}
    replaced = config.get("optimizer") is not None
    for part in ("model", "optimizer", "lr_scheduler"):
        given = config.get(part)
        if given is None:
            continue
        given = dict(vars(given)) if hasattr(given, "__dict__") else dict(given)
        if "class_path" in given:  # a class chosen by name: its name, then its arguments
            row[part] = str(given["class_path"]).rsplit(".", 1)[-1]
            args = given.get("init_args") or {}
            given = dict(vars(args)) if hasattr(args, "__dict__") else dict(args)
        for name, value in given.items():
            if part == "model" and replaced and name in _OWN_OPTIMISER:
                continue  # not what training used
            plain = value is None or isinstance(value, (bool, int, float, str))
            row[f"{part}.{name}"] = value if plain else str(value)
    return row


def smoke_run(trainer) -> bool:
    """Whether ``trainer`` ran Lightning's ``fast_dev_run`` (a batch or a few, no epochs), told
    on stderr: its scores are no result, and a row of them in ``--results_csv`` read as one."""
    if not getattr(trainer, "fast_dev_run", False):
        return False
    print("fast_dev_run: a smoke run, no row added to --results_csv", file=sys.stderr)
    return True


def experiment_main(task: str, cli_class, system_class, datamodule_class, argv=None) -> int:
    """Entry point shared by ``experiments/denoise.py`` and ``experiments/forecast.py``.

    ``classical ...`` runs the classical harness (``tssdpa compare TASK ...``); anything else
    goes to the LightningCLI of the learned model. The resolved config of a ``fit`` is saved
    beside ``--results_csv`` as ``<its stem>.config.yaml`` (never over a ``--config`` file: refused,
    as is a ``--results_csv`` that is one).
    ``validate`` and ``test`` need ``--ckpt_path`` (refused without one); ``predict`` is
    refused (Lightning's ran the model and kept nothing).
    A bad setting, found while the classes are built (``ValueError``, the Trainer's
    ``MisconfigurationException``, a real dataset not found), is one line on stderr
    and exit code 2.
    """
    from lightning.fabric.utilities.exceptions import MisconfigurationException

    from tssdpa.cli.checkpoints import checkpoint_contents, other_scripts_checkpoint
    from tssdpa.cli.lightning_settings import (
        init_error,
        unavailable_accelerator,
        unrunnable_loop,
        unwritable_checkpoints,
    )
    from tssdpa.cli.results_config import SaveBesideResults
    from tssdpa.models.checkpoints import no_smoke_checkpoints
    from tssdpa.models.lightning_errors import (
        class_error,
        ignore_lightning_deprecations,
        setting_error,
        unlogged_monitor,
    )

    from_command_line = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "classical":
        from tssdpa.cli import main

        return main(["compare", task, *argv[1:]])
    if argv and argv[0] == "predict":  # it ran, wrote nothing and exited 0
        print(f"{task}.py: error: predict writes no predictions here: `{task}.py test "
              "--ckpt_path FILE` scores a checkpoint on the test split, and `tssdpa filter "
              "FILE.csv -m learned_projection` writes a learned filter's output",
              file=sys.stderr)  # fmt: skip
        return 2

    class BadSetting(Exception):
        pass

    class Checked(cli_class):
        @staticmethod
        def subcommands() -> dict:  # predict: refused above, not listed
            return {k: v for k, v in cli_class.subcommands().items() if k != "predict"}

        def setup_parser(self, add_subcommands, main_kwargs, subparser_kwargs) -> None:
            super().setup_parser(add_subcommands, main_kwargs, subparser_kwargs)
            if add_subcommands:  # classical, run above, is no subcommand of LightningCLI's
                choices = ",".join([*self.subcommands(), "classical"])
                self.parser.usage = f"{task}.py [-h] [-c CONFIG] {{{choices}}} ..."

        def add_arguments_to_parser(self, parser) -> None:
            # the links the script makes (data.lookback -> model.lookback): an argument of the
            # model's refused is named by the option typed
            links, link = self.__dict__.setdefault("_links", {}), parser.link_arguments

            def recorded(source, target=None, *args, **kwargs):
                if isinstance(source, str) and isinstance(target, str):
                    links[target] = source
                return link(source, target, *args, **kwargs)

            parser.link_arguments = recorded
            try:
                super().add_arguments_to_parser(parser)
            finally:
                del parser.link_arguments

        def parse_arguments(self, parser, args) -> None:
            super().parse_arguments(parser, args)
            # found only inside the Trainer, after the data was built: a traceback
            subcommand = self.config.get("subcommand")
            seed = (self.config[subcommand] if subcommand else self.config).get("seed_everything")
            if not isinstance(seed, bool) and isinstance(seed, int) and not 0 <= seed < 2**32:
                # Lightning's seed_everything raised a ValueError traceback
                raise BadSetting(f"--seed_everything must be an integer in [0, {2**32 - 1}] "
                                 f"(or true for a random seed), got {seed}")  # fmt: skip
            trainer = (self.config[subcommand] if subcommand else self.config).get("trainer")
            absent = unavailable_accelerator(trainer.get("accelerator") if trainer else None)
            if absent:  # Lightning's words named no option ("No supported gpu backend found!")
                raise BadSetting(absent)
            ckpt = self.config[subcommand].get("ckpt_path") if subcommand else None
            # LightningCLI builds the model with the checkpoint's settings: told where they
            # differ from those given (a --model.lr 0.05 to resume was dropped unsaid); the
            # parser's defaults were not given
            model = self.config[subcommand].get("model") if ckpt else None
            given = dict(vars(model)) if hasattr(model, "__dict__") else {}
            default = self._parser(subcommand).get_defaults().get("model") if given else None
            default = dict(vars(default)) if hasattr(default, "__dict__") else {}
            self._given_model = {k: v for k, v in given.items()
                                 if k not in default or default[k] != v}  # fmt: skip
            if missing_checkpoint(ckpt):
                raise BadSetting(f"--ckpt_path {ckpt}: no such file")
            # read once for all the checks (its shapes kept, not its weights)
            self._ckpt_contents = contents = checkpoint_contents(ckpt)
            unreadable = unreadable_checkpoint(ckpt, subcommand == "fit", contents)
            if unreadable:
                raise BadSetting(f"--ckpt_path {ckpt} {unreadable}")
            foreign = other_scripts_checkpoint(ckpt, task, contents)
            if foreign:
                raise BadSetting(f"--ckpt_path {ckpt} {foreign}")
            if subcommand in _EVALUATE and not ckpt:
                # without one, Lightning scored the freshly initialised weights and printed
                # their metrics as any other run's, without a word
                raise BadSetting(
                    f"{subcommand} needs --ckpt_path CKPT (the trained model to {subcommand}): "
                    "without one the untrained, randomly initialised weights would be scored"
                )

        def instantiate_trainer(self, **kwargs):
            try:
                return super().instantiate_trainer(**kwargs)
            except Exception as exc:  # Lightning's own, on a Trainer argument: told by name
                told = setting_error(exc, self.config[self.subcommand].get("trainer"))
                if told is None:
                    raise
                raise BadSetting(told) from None

        def _run_subcommand(self, subcommand) -> None:
            # the Trainer's settings it checks only as the loops start (val_check_interval
            # beyond the training batches: a ValueError traceback after the start was scored)
            try:
                super()._run_subcommand(subcommand)
            except Exception as exc:
                told = setting_error(exc, self.config[subcommand].get("trainer"))
                if told is None:  # no setting of the user's: a bug, its traceback kept
                    raise
                start = getattr(self, "_start", (None,))[0]
                if isinstance(start, str):  # this run's start checkpoint: no row names it
                    Path(start).unlink(missing_ok=True)
                raise BadSetting(told) from None

        def instantiate_classes(self) -> None:
            try:
                super().instantiate_classes()
            except (ValueError, TypeError, MisconfigurationException) as exc:
                # a model's or data module's own check of an argument: named as typed
                parts = {"model": system_class, "data": datamodule_class}
                told = init_error(exc, parts, getattr(self, "_links", None))
                if told is None and isinstance(exc, TypeError):  # no setting: a bug
                    raise
                raise BadSetting(told or class_error(str(exc))) from None  # the Trainer's
            except FileNotFoundError as exc:  # a real dataset, read as the classes are linked
                # named as these scripts spell the option (tssdpa compare's is --data-dir)
                flag = "--data.data_dir"
                message = str(exc).replace("data_dir (--data-dir)", flag)
                raise BadSetting(f"--data: {message.replace('--data-dir', flag)}") from None
            ckpt = self.config[self.subcommand].get("ckpt_path") if self.subcommand else None
            contents = getattr(self, "_ckpt_contents", None)
            mismatch = checkpoint_mismatch(ckpt, self.model, contents) if contents else None
            if mismatch:
                raise BadSetting(f"--ckpt_path {ckpt} {mismatch}")
            given, built = getattr(self, "_given_model", {}), self.model.hparams
            replaced = [f"{k}={built[k]!r} (not {v!r})" for k, v in given.items()
                        if k in built and built[k] != v]  # fmt: skip
            if replaced:
                print(f"{task}.py: note: --ckpt_path {ckpt}: the model is built with the "
                      f"checkpoint's settings: {', '.join(replaced)}", file=sys.stderr)  # fmt: skip
            if self.subcommand in _EVALUATE:
                no_file = unresolved_checkpoint(ckpt, self.trainer)
                if no_file:
                    raise BadSetting(f"--ckpt_path {ckpt}: {no_file}")
                split = "val" if self.subcommand == "validate" else "test"
                none = getattr(self.trainer, f"limit_{split}_batches")
                if none == 0:  # Lightning skipped the loop: nothing printed, exit code 0
                    raise BadSetting(f"--trainer.limit_{split}_batches {none}: {self.subcommand} "
                                     "would score no batch; give a positive limit")  # fmt: skip
            limit = self.trainer.limit_val_batches
            if self.subcommand == "fit" and limit == 0:  # validating the start: IndexError
                raise BadSetting(f"--trainer.limit_val_batches {limit}: no validation, by which "
                                 "a fit chooses its model (the start or an epoch); give a "
                                 "positive limit")  # fmt: skip
            fit = self.subcommand == "fit"
            no_smoke_checkpoints(self.trainer)
            unwritable = unwritable_checkpoints(self.trainer) if fit else None
            if unwritable:
                raise BadSetting(unwritable)
            unrunnable = unrunnable_loop(self.trainer) if fit else None
            if unrunnable:
                raise BadSetting(unrunnable)
            unlogged = unlogged_monitor(self.trainer, _LOGGED) if fit else None
            if unlogged:
                raise BadSetting(f"--trainer.callbacks: {unlogged} names no metric the model "
                                 f"logs: {' or '.join(_LOGGED)}")  # fmt: skip
            # what the system builds (a checkpoint loads) but does not fit, before fitting
            check = getattr(self.model, "check_fit_settings", None)
            if self.subcommand == "fit" and check is not None:
                try:
                    check()
                except ValueError as exc:  # its message starts with the argument's name
                    raise BadSetting(f"--model.{exc}") from None

    try:
        with warnings.catch_warnings():  # the settings' notes as one plain line each
            warnings.showwarning = _notes_said(f"{task}.py", warnings.showwarning)
            ignore_lightning_deprecations()  # Lightning's own, on every run
            Checked(
                system_class,
                datamodule_class,
                # from the command line, LightningCLI reads sys.argv itself (and a DDP run starts
                # its other processes with it): given them as args too, it warned on every run
                # ("... not recommended to provide both args and command line arguments")
                args=None if from_command_line else argv,
                seed_everything_default=0,
                save_config_callback=SaveBesideResults,
                # the LightningCLI's own ("Lightning Trainer command line tool") named no classical
                parser_kwargs={"description": _DESCRIPTION.format(task=task)},
            )
    except BadSetting as exc:
        print(f"{task}.py: error: {exc}", file=sys.stderr)
        return 2
    return 0
