"""The LightningCLI scripts experiments/denoise.py and experiments/forecast.py, run in-process
on small synthetic tasks."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"_experiment_{name}", EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_TINY = ["--trainer.max_epochs", "1", "--trainer.limit_train_batches", "2",
         "--trainer.enable_progress_bar", "false", "--trainer.logger", "false",
         "--trainer.enable_model_summary", "false", "--trainer.accelerator", "cpu"]  # fmt: skip


def test_forecast_fit_with_a_ridge_start_prints_per_step_penalties(tmp_path, monkeypatch, capsys):
    import tssdpa.models.systems as systems

    real = systems.ridge_linear_init

    def per_step(net, train_series, val_pairs, grid=None):  # a start whose steps differ
        info = real(net, train_series, val_pairs, grid)
        return {**info, "ridge": [1e-4, 0.01, 0.01, 1.0]}

    monkeypatch.setattr(systems, "ridge_linear_init", per_step)
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, "--model.linear_init", "ridge", "--model.d_model", "8",
            "--model.patch_len", "8", "--data.dataset", "lorenz", "--data.lookback", "32",
            "--data.horizon", "4", "--data.n", "800", "--results_csv", "out.csv"]  # fmt: skip
    assert _script("forecast").main(argv) == 0
    out = capsys.readouterr().out
    assert "ridge=[0.0001, 0.01, 0.01, 1]" in out
    assert (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(("ridge", "text"), [(0.01, "0.01"), ([1.0, 1.0], "[1, 1]")])
def test_forecast_penalty_text_is_one_value_or_the_list(ridge, text):
    assert _script("forecast").penalty_text(ridge) == text


def test_denoise_fit_keeps_the_users_config_file_and_saves_the_resolved_one_beside_the_csv(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "config.yaml"
    config.write_text((EXPERIMENTS / "configs" / "denoise_lorenz.yaml").read_text())
    before = config.read_bytes()
    argv = ["fit", "--config", "config.yaml", *_TINY, "--data.n", "800",
            "--model.d_model", "8", "--results_csv", "res/out.csv"]  # fmt: skip
    assert _script("denoise").main(argv) == 0
    assert config.read_bytes() == before
    resolved = (tmp_path / "res" / "out.config.yaml").read_text()
    assert "results_csv: res/out.csv" in resolved and "d_model: 8" in resolved


def test_denoise_fit_refuses_a_results_csv_whose_config_would_replace_the_config_file(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "out.config.yaml"
    config.write_text((EXPERIMENTS / "configs" / "denoise_lorenz.yaml").read_text())
    before = config.read_bytes()
    argv = ["fit", "--config", "out.config.yaml", *_TINY, "--results_csv", "out.csv"]
    assert _script("denoise").main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("denoise.py: error: --config out.config.yaml")
    assert config.read_bytes() == before
