"""Lightning's ``fast_dev_run`` (a smoke run of a batch or a few) through the experiment
scripts: it writes no file a real run would later read or be confused by."""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"

_SMOKE = ["--trainer.fast_dev_run", "true", "--trainer.enable_progress_bar", "false",
          "--trainer.enable_model_summary", "false", "--trainer.accelerator", "cpu"]  # fmt: skip


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"_experiment_{name}", EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_fast_dev_run_of_denoise_writes_no_checkpoint(tmp_path, monkeypatch):
    # Lightning says "Logging and checkpointing is suppressed", yet the smoke run left the
    # untrained start as runs/ckpt/<config>/start.ckpt, and the next real run then wrote its
    # own start as start-v1.ckpt beside it
    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    argv = ["fit", "--config", str(config), *_SMOKE, "--data.n", "800", "--results_csv", "o.csv"]
    assert _script("denoise").main(argv) == 0
    assert _files(tmp_path) == []


def test_a_fast_dev_run_of_forecast_with_save_last_writes_no_checkpoint(tmp_path, monkeypatch):
    # ModelCheckpoint(save_last=True) saves last.ckpt as training ends even in a smoke run
    # (Lightning 2.6's on_train_end does not ask whether checkpointing is suppressed)
    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / "forecast_lorenz.yaml"
    argv = ["fit", "--config", str(config), *_SMOKE, "--trainer.callbacks.save_last", "true",
            "--data.n", "800", "--data.lookback", "32", "--data.horizon", "4",
            "--model.patch_len", "8", "--results_csv", "o.csv"]  # fmt: skip
    assert _script("forecast").main(argv) == 0
    assert _files(tmp_path) == []


def test_a_run_tells_no_deprecation_inside_lightning(tmp_path, monkeypatch, capsys):
    # Lightning 2.6 builds torch's deprecated LeafSpec (torch >= 2.10): every run printed a
    # line of Lightning's own code the user can do nothing about
    import warnings

    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    argv = ["fit", "--config", str(config), *_SMOKE, "--data.n", "800", "--results_csv", "o.csv"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _script("denoise").main(argv) == 0
    said = [str(w.message) for w in caught] + [capsys.readouterr().err]
    assert not [s for s in said if "LeafSpec" in s]
