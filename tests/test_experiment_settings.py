"""Settings of the LightningCLI scripts (experiments/denoise.py, experiments/forecast.py) that
Lightning refuses only once they run -- a device this machine lacks, the Trainer's own checks,
loop settings, a checkpoint of the other script -- told as one line naming the option, exit 2
(tssdpa.cli.lightning_settings, tssdpa.cli.experiment)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"

_TINY = ["--trainer.max_epochs", "1", "--trainer.limit_train_batches", "2",
         "--trainer.enable_progress_bar", "false", "--trainer.logger", "false",
         "--trainer.enable_model_summary", "false"]  # fmt: skip
_SMALL = {
    "denoise": ["--model.d_model", "8", "--data.n", "400", "--data.seq_len", "64"],
    "forecast": ["--model.d_model", "8", "--model.patch_len", "8", "--data.dataset", "lorenz",
                 "--data.lookback", "32", "--data.horizon", "4", "--data.n", "800"],
}  # fmt: skip


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"_experiment_{name}", EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(script: str, subcommand: str, *args: str) -> int:
    argv = [subcommand, *_TINY, *_SMALL[script], *args, "--results_csv", "out.csv"]
    return _script(script).main(argv)


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err, "nothing on stderr"
    return err[-1]


@pytest.fixture
def no_accelerator(monkeypatch):
    """A machine with the CPU alone, whatever this one has (Lightning asks the same classes)."""
    from lightning.pytorch.accelerators import CUDAAccelerator, MPSAccelerator

    monkeypatch.setattr(CUDAAccelerator, "is_available", staticmethod(lambda: False))
    monkeypatch.setattr(MPSAccelerator, "is_available", staticmethod(lambda: False))


@pytest.mark.parametrize(
    ("script", "accelerator"),
    [("denoise", "gpu"), ("forecast", "cuda"), ("denoise", "mps"), ("forecast", "tpu")],
)
def test_an_accelerator_this_machine_lacks_is_one_line_naming_the_option_and_what_is_here(
    script, accelerator, no_accelerator, tmp_path, monkeypatch, capsys
):
    # gpu: "No supported gpu backend found!" (no option named); cuda, mps: Lightning's line
    # naming no option; tpu: a ModuleNotFoundError traceback asking to install torch_xla
    monkeypatch.chdir(tmp_path)
    assert _run(script, "fit", "--trainer.accelerator", accelerator) == 2
    line = _error(capsys)
    assert line.startswith(f"{script}.py: error: --trainer.accelerator {accelerator}: no ")
    assert "available here: cpu" in line
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(
    ("bad", "start"),
    [
        # a TypeError traceback from Lightning's CPU device parser
        (["--trainer.devices", "-2"], "--trainer.devices -2: "),
        (["--trainer.devices", "0"], "--trainer.devices 0: "),
        (["--trainer.num_nodes", "0"], "--trainer.num_nodes 0: "),
        (["--trainer.strategy", "foo"], "--trainer.strategy foo: "),
        (["--trainer.limit_train_batches", "1.5"], "--trainer.limit_train_batches 1.5: "),
    ],
)
def test_a_trainer_argument_lightning_refuses_is_one_line_naming_the_option(
    bad, start, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert _run("denoise", "fit", "--trainer.accelerator", "cpu", *bad) == 2
    assert _error(capsys).startswith(f"denoise.py: error: {start}")
    assert not (tmp_path / "out.csv").exists()


def test_setting_error_leaves_errors_raised_outside_lightning_to_their_traceback():
    from tssdpa.models.lightning_errors import setting_error

    try:  # a model's bug whose words happen to name a Trainer argument
        raise ValueError("`devices` is wrong in my own code")
    except ValueError as exc:
        assert setting_error(exc, {"devices": 1}) is None
    assert setting_error(KeyError("devices"), {}) is None


@pytest.mark.parametrize("script", ["denoise", "forecast"])
def test_a_val_check_interval_beyond_the_training_batches_is_one_line_not_a_traceback(
    script, tmp_path, monkeypatch, capsys
):
    # Lightning's ValueError traceback as fit started, after the start was scored and saved
    monkeypatch.chdir(tmp_path)
    assert _run(script, "fit", "--trainer.val_check_interval", "50") == 2
    line = _error(capsys)
    assert line.startswith(f"{script}.py: error: --trainer.val_check_interval 50: ")
    assert "less than or equal to the number of the training batches" in line
    assert not (tmp_path / "out.csv").exists()
    # the start checkpoint of a run that never trained is not left behind
    assert not list(tmp_path.rglob("*.ckpt"))


@pytest.mark.parametrize(
    "bad",
    [
        ["--trainer.accumulate_grad_batches", "0"],
        ["--trainer.check_val_every_n_epoch", "0"],
        ["--trainer.val_check_interval", "0"],
    ],
)
def test_a_loop_setting_lightning_would_divide_by_is_one_line_before_training(
    bad, tmp_path, monkeypatch, capsys
):
    # each was a ZeroDivisionError traceback from the first training batch
    monkeypatch.chdir(tmp_path)
    assert _run("denoise", "fit", *bad) == 2
    assert _error(capsys).startswith(f"denoise.py: error: {bad[0]} {bad[1]}: give ")
    assert not list(tmp_path.iterdir())


def test_a_bug_raised_while_fitting_keeps_its_traceback(tmp_path, monkeypatch):
    from tssdpa.models import DenoisingSystem

    def broken(self, batch, batch_idx):  # words that name a Trainer argument, not Lightning's
        raise ValueError("`max_epochs` broken in the model")

    monkeypatch.setattr(DenoisingSystem, "training_step", broken)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="broken in the model"):
        _run("denoise", "fit")


def test_a_model_bug_lightning_raises_for_the_model_keeps_its_traceback(tmp_path, monkeypatch):
    # Lightning's own check of a hook's self.log names `self.logger.experiment`: it was told
    # as "--trainer.logger False: You can't `self.log()` ...", exit 2, the traceback lost
    from lightning.fabric.utilities.exceptions import MisconfigurationException

    from tssdpa.models import DenoisingSystem

    configure = DenoisingSystem.configure_optimizers

    def logging(self):
        self.log("lr", 0.1)
        return configure(self)

    monkeypatch.setattr(DenoisingSystem, "configure_optimizers", logging)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MisconfigurationException, match="configure_optimizers"):
        _run("denoise", "fit")


def _checkpoint_of(script: str, path: Path) -> Path:
    """A checkpoint as ``script``'s fit saves it: the system's weights and hyperparameters."""
    import lightning
    import torch

    from tssdpa.models import DenoisingSystem, ForecastingSystem

    if script == "denoise":
        system = DenoisingSystem(n_channels=1, d_model=8)
    else:
        system = ForecastingSystem(lookback=32, horizon=4, n_channels=1, d_model=8, patch_len=8)
    hparams = {**system.hparams, "_instantiator": "lightning.pytorch.cli.instantiate_module"}
    torch.save({"state_dict": system.state_dict(), "hyper_parameters": hparams,
                "pytorch-lightning_version": lightning.__version__, "optimizer_states": []},
               path)  # fmt: skip
    return path


@pytest.mark.parametrize(("script", "other"), [("forecast", "denoise"), ("denoise", "forecast")])
@pytest.mark.parametrize("subcommand", ["test", "fit"])
def test_a_checkpoint_of_the_other_script_is_one_line_saying_whose_it_is(
    script, other, subcommand, tmp_path, monkeypatch, capsys
):
    # jsonargparse's usage and "Subcommand 'test' does not accept option 'model.window'",
    # then "Parsing of ckpt_path hyperparameters failed!"
    monkeypatch.chdir(tmp_path)
    ckpt = _checkpoint_of(other, tmp_path / "other.ckpt")
    assert _run(script, subcommand, "--ckpt_path", str(ckpt)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "usage" not in err[0]
    assert err[0] == (
        f"{script}.py: error: --ckpt_path {ckpt} is a checkpoint of {other}.py (a "
        f"{ {'denoise': 'DenoisingSystem', 'forecast': 'ForecastingSystem'}[other] }), not of "
        f"{script}.py: `{other}.py test --ckpt_path {ckpt}` scores it; give {script}.py a "
        f"checkpoint saved by `{script}.py fit`"
    )


def test_a_checkpoint_of_neither_script_names_the_settings_it_holds(tmp_path):
    import torch

    from tssdpa.cli.checkpoints import other_scripts_checkpoint

    ckpt = _checkpoint_of("forecast", tmp_path / "mine.ckpt")
    assert other_scripts_checkpoint(str(ckpt), "forecast") is None
    saved = torch.load(ckpt, weights_only=True)
    saved["hyper_parameters"]["hidden_size"] = 3  # a model of some other project
    torch.save(saved, ckpt)
    told = other_scripts_checkpoint(str(ckpt), "forecast")
    assert told.startswith("holds no ForecastingSystem of forecast.py (settings it does not ")
    assert "hidden_size" in told


@pytest.mark.parametrize("earlier", [False, True])
def test_a_fresh_run_gets_no_warning_of_a_non_empty_checkpoint_folder_its_start_made(
    earlier, tmp_path, monkeypatch
):
    # the start checkpoint, written before fit, made Lightning warn on every fresh run that
    # the checkpoint folder "exists and is not empty"; an earlier run's files still warn
    import warnings

    monkeypatch.chdir(tmp_path)
    if earlier:
        (tmp_path / "checkpoints").mkdir()
        (tmp_path / "checkpoints" / "epoch=3-step=8.ckpt").write_bytes(b"")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _run("denoise", "fit") == 0
    said = [str(w.message) for w in caught if "exists and is not empty" in str(w.message)]
    assert said == ([f"Checkpoint directory {tmp_path / 'checkpoints'} exists and is not empty."]
                    if earlier else [])  # fmt: skip
    assert (tmp_path / "checkpoints" / "start.ckpt").is_file()


@pytest.mark.parametrize(
    ("bad", "start"),
    [
        (["--trainer.default_root_dir", "afile/runs"], "--trainer.default_root_dir: "),
        (
            ["--trainer.callbacks", "ModelCheckpoint", "--trainer.callbacks.dirpath", "afile/ck"],
            "--trainer.callbacks: ModelCheckpoint dirpath: ",
        ),
    ],
)
def test_a_checkpoint_folder_that_cannot_be_made_is_one_line_before_training(
    bad, start, tmp_path, monkeypatch, capsys
):
    # a FileNotFoundError / NotADirectoryError traceback from saving the start checkpoint,
    # after the start was scored
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a folder")
    assert _run("denoise", "fit", *bad) == 2
    line = _error(capsys)
    assert line.startswith(f"denoise.py: error: {start}") and "afile" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize(("subcommand", "split"), [("test", "test"), ("validate", "val")])
def test_evaluating_no_batch_is_refused_not_a_silent_exit(
    subcommand, split, tmp_path, monkeypatch, capsys
):
    # Lightning skipped the loop: nothing printed, no score, exit code 0
    monkeypatch.chdir(tmp_path)
    ckpt = _checkpoint_of("denoise", tmp_path / "model.ckpt")
    bad = [f"--trainer.limit_{split}_batches", "0"]
    assert _run("denoise", subcommand, "--ckpt_path", str(ckpt), *bad) == 2
    assert _error(capsys) == (
        f"denoise.py: error: --trainer.limit_{split}_batches 0: {subcommand} would score no "
        "batch; give a positive limit"
    )


@pytest.mark.parametrize(
    ("bad", "start"),
    [
        # was "--trainer.accelerator auto: The strategy `fsdp` requires a GPU accelerator..."
        (["--trainer.strategy", "fsdp"], "--trainer.strategy fsdp: The strategy `fsdp`"),
        # was Lightning's line alone: "`Timer(duration='foo')` is not a valid duration..."
        (["--trainer.max_time", "foo"], "--trainer.max_time foo: `Timer(duration='foo')`"),
    ],
)
def test_the_trainer_argument_named_is_the_one_the_message_is_about(
    bad, start, no_accelerator, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert _run("denoise", "fit", *bad) == 2
    assert _error(capsys).startswith(f"denoise.py: error: {start}")


def test_the_config_callback_pickles_for_a_spawned_process_and_writes_the_same_config(tmp_path):
    # ddp_spawn pickles the Trainer with its callbacks: the config callback, local to
    # experiment_main and holding a parser that holds the (local) CLI class, was an
    # "AttributeError: Can't pickle local object" traceback
    import pickle

    from lightning.pytorch.cli import LightningArgumentParser

    from tssdpa.cli.results_config import SaveBesideResults

    class Local:  # what the parser holds that pickle cannot name, as the CLI
        pass

    parser = LightningArgumentParser()
    parser.add_argument("--results_csv")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.local = Local()
    config = parser.parse_args(["--results_csv", str(tmp_path / "out.csv")])
    here = SaveBesideResults(parser, config)
    there = pickle.loads(pickle.dumps(here))
    there.save_config(None, None, "fit")
    written = (tmp_path / "out.config.yaml").read_text()
    here.save_config(None, None, "fit")
    assert (tmp_path / "out.config.yaml").read_text() == written
    assert "lr: 0.1" in written


@pytest.mark.slow
def test_a_ddp_spawn_fit_adds_its_row_and_config(tmp_path, monkeypatch):
    # slow: a spawned gloo process on the CPU
    monkeypatch.chdir(tmp_path)
    spawn = ["--trainer.strategy", "ddp_spawn", "--trainer.devices", "1",
             "--trainer.accelerator", "cpu"]  # fmt: skip
    assert _run("denoise", "fit", *spawn) == 0
    assert (tmp_path / "out.csv").read_text().count("\n") == 2
    assert (tmp_path / "out.config.yaml").is_file()


@pytest.mark.parametrize(
    ("bad", "told"),
    [
        (
            ["--trainer.callbacks", "ModelCheckpoint", "--trainer.callbacks.save_top_k", "-5"],
            "--trainer.callbacks: ModelCheckpoint: Invalid value for save_top_k=-5. Must be >= -1",
        ),
        (
            ["--trainer.callbacks", "EarlyStopping", "--trainer.callbacks.monitor", "val_loss",
             "--trainer.callbacks.mode", "foo"],
            "--trainer.callbacks: EarlyStopping: `mode` can be min, max, got foo",
        ),
    ],
)  # fmt: skip
def test_a_callback_refusing_its_arguments_is_one_line_naming_it(
    bad, told, tmp_path, monkeypatch, capsys
):
    # 15 lines of jsonargparse's report on the union of callback types, one of them the error
    monkeypatch.chdir(tmp_path)
    assert _run("denoise", "fit", *bad) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"denoise.py: error: {told}"
    assert not any("Union subtypes" in line for line in err)


@pytest.mark.parametrize(
    ("script", "bad", "told"),
    [
        ("denoise", ["--model.lr", "-1"], "--model.lr must be a finite number > 0, got -1.0"),
        ("denoise", ["--data.n", "-5"], "--data.n must be an integer >= 2, got -5"),
        ("denoise", ["--model.d_model", "-4"], "--model.d_model must be an integer >= 1, got -4"),
        ("forecast", ["--data.horizon", "0"], "--data.horizon must be an integer >= 1, got 0"),
        ("forecast", ["--model.patch_len", "0"], "--model.patch_len must be an integer >= 1"),
    ],
)
def test_a_model_or_data_argument_its_class_refuses_is_one_line_naming_the_option(
    script, bad, told, tmp_path, monkeypatch, capsys
):
    # "denoise.py: error: lr must be a finite number > 0, got -1.0": the library's check
    # named its argument, not the option typed (--model.lr or --data.lr?)
    monkeypatch.chdir(tmp_path)
    assert _run(script, "fit", *bad) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"{script}.py: error: {told}")
    assert not (tmp_path / "out.csv").exists()


def test_a_model_argument_linked_from_the_data_is_named_by_the_data_option(
    tmp_path, monkeypatch, capsys
):
    # model.lookback is data.lookback, linked: --model.lookback is no option to type
    from tssdpa.cli.lightning_settings import init_error
    from tssdpa.data.lightning import ForecastDataModule
    from tssdpa.models import ForecastingSystem

    try:
        ForecastingSystem(lookback=0, horizon=4, n_channels=1)
    except ValueError as exc:
        parts = {"model": ForecastingSystem, "data": ForecastDataModule}
        told = init_error(exc, parts, {"model.lookback": "data.lookback"})
    assert told.startswith("--data.lookback must be")
    assert init_error(ValueError("lr must be"), parts) is None  # raised by no part


@pytest.mark.slow
@pytest.mark.parametrize("logger", ["false", "true"])
def test_a_ddp_spawn_fit_writes_its_start_beside_the_epochs_checkpoints(
    logger, tmp_path, monkeypatch
):
    # slow: a spawned gloo process on the CPU. The checkpoint folder is resolved in the
    # spawned process: the start went to --trainer.default_root_dir (the working directory)
    monkeypatch.chdir(tmp_path)
    spawn = ["--trainer.strategy", "ddp_spawn", "--trainer.devices", "1",
             "--trainer.accelerator", "cpu", "--trainer.logger", logger]  # fmt: skip
    assert _run("denoise", "fit", *spawn) == 0
    starts, epochs = (sorted(tmp_path.rglob(p)) for p in ("start*.ckpt", "epoch=*.ckpt"))
    assert len(starts) == 1 and len(epochs) == 1
    assert starts[0].parent == epochs[0].parent != tmp_path
    if logger == "false":
        assert starts[0].parent == tmp_path / "checkpoints"


@pytest.mark.parametrize("subcommand", ["test", "validate"])
def test_a_ckpt_path_is_read_once_by_the_scripts_checks_and_its_weights_not_kept(
    subcommand, tmp_path, monkeypatch
):
    # it was loaded three times before Lightning's own load: unreadable, other script's,
    # other shapes
    import sys

    import torch

    from tssdpa.cli.checkpoints import CheckpointContents, checkpoint_contents

    monkeypatch.chdir(tmp_path)
    ckpt = _checkpoint_of("denoise", tmp_path / "mine.ckpt")
    contents = checkpoint_contents(str(ckpt))
    assert isinstance(contents, CheckpointContents) and contents.resumable
    assert not any(isinstance(v, torch.Tensor) for v in vars(contents).values())
    assert all(isinstance(s, tuple) for s in contents.shapes.values())
    readers, load = [], torch.load

    def counted(*args, **kwargs):
        readers.append(sys._getframe(1).f_globals.get("__name__", ""))
        return load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", counted)
    assert _run("denoise", subcommand, "--ckpt_path", str(ckpt)) == 0
    assert [r for r in readers if r.startswith("tssdpa")] == ["tssdpa.models.checkpoints"]


@pytest.mark.parametrize(
    ("script", "setting", "said"),
    [
        # "dataset must be one of ..." named no option (--data.dataset? a compare --dataset?)
        ("denoise", ["--data.dataset", "lorentz"], "--data.dataset must be one of ("),
        ("forecast", ["--data.dataset", "lorentz"], "--data.dataset must be one of ("),
        # "horizons: 25 is longer ...": no option of the script is called horizons
        ("forecast", ["--data.horizon", "200"], "--data.horizon 200 is longer than lorenz's valid"),
        ("forecast", ["--data.lookback", "900"], "--data.lookback + horizon (900 + 4) is longer"),
    ],
)
def test_a_data_setting_refused_as_the_data_is_read_names_the_option(
    script, setting, said, tmp_path, monkeypatch, capsys
):
    # refused in the data module's setup, run while the model's channels are linked from it
    monkeypatch.chdir(tmp_path)
    assert _run(script, "fit", *setting) == 2
    assert _error(capsys).startswith(f"{script}.py: error: {said}")
    assert list(tmp_path.iterdir()) == []  # before any work
