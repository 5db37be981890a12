"""experiments/translate.py's command line as a user runs it: smoke runs, evaluation without a
checkpoint, and bad settings named by the option typed."""

from __future__ import annotations

import itertools
import sys
import warnings
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "experiments" / "configs" / "translate_projection.yaml"
INIT = "--model.transformer.init_args"


@pytest.fixture(autouse=True)
def _small(monkeypatch):
    # LightningCLI(args=...) warns when pytest's own arguments are in sys.argv
    monkeypatch.setattr(sys, "argv", ["translate.py"])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def args(tmp_path) -> list[str]:
    """A tiny projection run on 120 synthetic pairs, checkpointing as the configs do."""
    words = itertools.product(["I", "You", "We"], ["see", "want"], ["cat", "dog"], range(10))
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{s} {v} the {n}{i}.\t{s} {v} el {n}{i}.\n" for s, v, n, i in words))
    return [
        "--config", str(CONFIG), f"--data.dataset={pairs}", f"--data.cache_dir={tmp_path / 'c'}",
        "--data.sequence_length=6", "--data.vocab_size=64", "--data.batch_size=16",
        f"{INIT}.embed_dim=8", f"{INIT}.num_heads=2", f"{INIT}.head_dim=4",
        f"{INIT}.feedforward_dim=16", "--trainer.max_epochs=1", "--trainer.accelerator=cpu",
        "--trainer.logger=false", "--trainer.enable_model_summary=false",
        f"--trainer.default_root_dir={tmp_path}",
        f"--trainer.callbacks.dirpath={tmp_path / 'ck'}",
        f"--history_file={tmp_path / 'history.csv'}", "--test_after_fit=false",
    ]  # fmt: skip


def _refused(argv, capsys) -> str:
    from tssdpa.translation.cli import TranslationCLI

    with pytest.raises(SystemExit) as exit_:
        TranslationCLI(args=argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_a_fast_dev_run_leaves_the_real_runs_history_and_checkpoint_alone(args, tmp_path):
    from tssdpa.translation.cli import TranslationCLI

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TranslationCLI(args=["fit", *args])
    # Lightning 2.6 builds torch's deprecated LeafSpec: a line of its code on every run
    assert not [w for w in caught if "LeafSpec" in str(w.message)]
    history, last = tmp_path / "history.csv", tmp_path / "ck" / "last.ckpt"
    before = history.read_bytes(), last.read_bytes()
    # the smoke run rewrote history.csv with its one batch's metrics, and saved its weights
    # as last-v1.ckpt beside the real run's (as last.ckpt in a fresh folder)
    TranslationCLI(args=["fit", *args, "--trainer.fast_dev_run=true"])
    assert (history.read_bytes(), last.read_bytes()) == before
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == ["last.ckpt"]


@pytest.mark.parametrize("subcommand", ["test", "validate"])
def test_evaluating_without_a_checkpoint_is_refused_before_any_work(
    args, tmp_path, capsys, subcommand
):
    # it scored the freshly initialised weights and printed their metrics as a model's
    last = _refused([subcommand, *args], capsys)
    assert last == (
        f"translate.py: error: {subcommand} needs --ckpt_path CKPT (the trained model to "
        f"{subcommand}): without one the untrained, randomly initialised weights would be scored"
    )
    assert not (tmp_path / "c").exists()  # refused before the pairs were read


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        # "self_attention_sigma must be positive": which of the three parts' options?
        (
            f"{INIT}.self_attention_sigma=0",
            f"{INIT}.self_attention_sigma must be positive, got 0.0",
        ),
        (f"{INIT}.embed_dim=-4", f"{INIT}.embed_dim must be positive, got -4"),
        ("--data.sequence_length=-1", "--data.sequence_length must be positive, got -1"),
        ("--data.vocab_size=2", "--data.vocab_size must be at least 3, got 2"),
        ("--model.learning_rate=-1", "--model.learning_rate must be positive, got -1.0"),
    ],
)
def test_a_bad_setting_is_named_by_the_option_typed(args, capsys, setting, said):
    assert _refused(["fit", *args, setting], capsys) == f"translate.py: error: {said}"


# -- callbacks: the config's ModelCheckpoint and what a user adds beside it ------------------

TWICE = (
    "translate.py: error: --trainer.callbacks: two ModelCheckpoint callbacks with the same "
    "monitor, mode and save interval"
)


def test_a_modelcheckpoint_added_beside_the_configs_own_is_refused_naming_trainer_callbacks(
    args, tmp_path, capsys
):
    # Lightning's "Found more than one stateful callback" RuntimeError was a traceback
    last = _refused(["fit", *args, "--trainer.callbacks+=ModelCheckpoint"], capsys)
    assert last.startswith(TWICE)
    assert last.endswith("drop one, or give one another monitor or save interval")
    assert not (tmp_path / "ck").exists()


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        # Lightning's own words, naming no option: "configured with `enable_checkpointing=False`"
        (
            ["--trainer.enable_checkpointing=false"],
            "--trainer.enable_checkpointing false, but --trainer.callbacks has a ModelCheckpoint",
        ),
        # a misspelt monitor trained an epoch, then was a traceback
        (
            ["--trainer.callbacks+=ModelCheckpoint", "--trainer.callbacks.monitor=val_los"],
            "--trainer.callbacks: ModelCheckpoint(monitor='val_los') names no metric the model "
            "logs while fitting: val_loss, ",
        ),
        (
            ["--trainer.callbacks+=EarlyStopping", "--trainer.callbacks.monitor=val_los"],
            "--trainer.callbacks: EarlyStopping(monitor='val_los') names no metric",
        ),
        # 15 lines of jsonargparse's report on the union of callback types
        (
            ["--trainer.callbacks.save_top_k=-5"],
            "--trainer.callbacks: ModelCheckpoint: Invalid value for save_top_k=-5. Must be >= -1",
        ),
    ],
)
def test_a_callback_setting_that_cannot_run_is_one_line_naming_the_option(
    args, tmp_path, capsys, settings, said
):
    assert _refused(["fit", *args, *settings], capsys).startswith(f"translate.py: error: {said}")
    assert not (tmp_path / "c").exists()  # refused before the pairs were read


def test_a_second_modelcheckpoint_with_its_own_monitor_is_no_error(args, tmp_path):
    from tssdpa.translation.cli import TranslationCLI

    best = tmp_path / "best"
    added = ["--trainer.callbacks+=ModelCheckpoint", "--trainer.callbacks.monitor=val_loss"]
    TranslationCLI(args=["fit", *args, *added, f"--trainer.callbacks.dirpath={best}"])
    assert [p.suffix for p in best.iterdir()] == [".ckpt"]
    assert (tmp_path / "ck" / "last.ckpt").is_file()


# slow-only (a subprocess, ~8 s): the in-process test above refuses the same settings in
# the same line; this one runs the script as a user does
@pytest.mark.slow
def test_the_script_tells_a_duplicated_modelcheckpoint_without_a_traceback(args, tmp_path):
    import subprocess

    script = REPO / "experiments" / "translate.py"
    argv = [sys.executable, str(script), "fit", *args, "--trainer.callbacks+=ModelCheckpoint"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr.strip().splitlines()[-1].startswith(TWICE)
