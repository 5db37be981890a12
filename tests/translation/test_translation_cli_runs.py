"""experiments/translate.py's command line as a user runs it: smoke runs, evaluation without a
checkpoint, and bad settings named by the option typed."""

from __future__ import annotations

import itertools
import sys
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

    TranslationCLI(args=["fit", *args])
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
