"""The LightningCLI scripts experiments/denoise.py and experiments/forecast.py, run in-process
on small synthetic tasks."""

from __future__ import annotations

import importlib.util
import sys
import warnings
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
#: a small forecaster on a short Lorenz series, its row in out.csv
_TINY_LORENZ = ["--model.d_model", "8", "--model.patch_len", "8", "--data.dataset", "lorenz",
                "--data.lookback", "32", "--data.horizon", "4", "--data.n", "800",
                "--results_csv", "out.csv"]  # fmt: skip


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


def test_a_script_run_from_the_command_line_gets_no_lightning_warning_on_its_arguments(
    tmp_path, monkeypatch
):
    # experiment_main gave LightningCLI sys.argv[1:] as args too, and every run said "LightningCLI's
    # args parameter is intended to run from within Python ... got: sys.argv[1:]=[...]"
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, *_TINY_LORENZ]
    monkeypatch.setattr(sys, "argv", ["forecast.py", *argv])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _script("forecast").main() == 0
    assert not [w for w in caught if "args parameter" in str(w.message)]
    assert (tmp_path / "out.csv").exists()  # the arguments were read: the results went there


def test_forecast_fit_with_a_ridge_start_saves_its_resolved_config_beside_the_csv(
    tmp_path, monkeypatch
):
    # the start is validated before fit: Lightning took the config as saved at that
    # validate, and a ridge-started run (the ETTh1 config's) left no out.config.yaml
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, "--model.linear_init", "ridge", "--model.d_model", "8",
            "--model.patch_len", "8", "--data.dataset", "lorenz", "--data.lookback", "32",
            "--data.horizon", "4", "--data.n", "800", "--results_csv", "out.csv"]  # fmt: skip
    assert _script("forecast").main(argv) == 0
    resolved = (tmp_path / "out.config.yaml").read_text()
    assert "linear_init: ridge" in resolved and "results_csv: out.csv" in resolved
    # one column each (the row carried linear_init and model.linear_init alike)
    columns = (tmp_path / "out.csv").read_text().splitlines()[0].split(",")
    assert [c for c in columns if c.endswith("linear_init")] == ["model.linear_init"]
    assert [c for c in columns if c.endswith("linear_lr_scale")] == ["model.linear_lr_scale"]


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


def test_denoise_fit_refuses_a_results_csv_that_is_the_config_file(tmp_path, monkeypatch, capsys):
    # the results row was appended to the YAML file after training, exit code 0
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "my.yaml"
    config.write_text((EXPERIMENTS / "configs" / "denoise_lorenz.yaml").read_text())
    before = config.read_bytes()
    argv = ["fit", "--config", "my.yaml", *_TINY, "--data.n", "800", "--results_csv", "my.yaml"]
    assert _script("denoise").main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("denoise.py: error: --results_csv my.yaml is the --config file my.yaml: "
                       "give another --results_csv")  # fmt: skip
    assert config.read_bytes() == before
    assert not (tmp_path / "my.config.yaml").exists()


def test_a_results_csv_that_is_a_folder_is_refused_before_training(tmp_path, monkeypatch, capsys):
    # the run trained, then appending its row ended in a traceback (IsADirectoryError)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "res").mkdir()
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    argv = ["fit", "--config", str(config), *_TINY, "--data.n", "800", "--results_csv", "res"]
    assert _script("denoise").main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "denoise.py: error: --results_csv: 'res' is a folder; give a file name"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]


def test_a_results_csv_under_a_file_is_one_line_before_training_not_a_traceback(
    tmp_path, monkeypatch, capsys
):
    # saving the resolved config beside it ended in a traceback (FileExistsError from mkdir)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "basic.csv").write_text("a\n1\n")
    config = EXPERIMENTS / "configs" / "forecast_lorenz.yaml"
    argv = ["fit", "--config", str(config), *_TINY, *_TINY_LORENZ[:-1], "basic.csv/x.csv"]
    assert _script("forecast").main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("forecast.py: error: --results_csv: 'basic.csv' is a file, not a folder; "
                       "give another path")  # fmt: skip


def test_denoise_adds_its_row_by_column_name_to_a_results_csv_of_other_columns(
    tmp_path, monkeypatch
):
    # its values were appended in its own order under forecast.py's header: the RMSE read as
    # the horizon, the method as the seed, ...
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    before = pd.DataFrame({"dataset": ["lorenz"], "setting": ["M"], "horizon": [4], "seed": [0],
                           "method": ["learned_projection_system"], "mse": [0.5]})  # fmt: skip
    before.to_csv("out.csv", index=False)
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    argv = ["fit", "--config", str(config), *_TINY, "--data.n", "800", "--results_csv", "out.csv"]
    assert _script("denoise").main(argv) == 0
    table = pd.read_csv("out.csv")
    assert len(table) == 2
    pd.testing.assert_frame_equal(table.loc[:0, list(before.columns)], before, check_dtype=False)
    new = table.iloc[1]
    assert new["setting"] == "gaussian@10dB" and pd.isna(new["horizon"]) and new["seed"] == 0
    assert 0 < new["rmse"] < 10 and pd.isna(table["rmse"][0])
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_fast_dev_run_adds_no_row_to_the_results_csv(tmp_path, monkeypatch, capsys):
    # a smoke run of one batch appended a full-looking row of test scores
    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    argv = ["fit", "--config", str(config), *_TINY, "--trainer.fast_dev_run", "true",
            "--data.n", "800", "--results_csv", "out.csv"]  # fmt: skip
    assert _script("denoise").main(argv) == 0
    assert not (tmp_path / "out.csv").exists()
    assert "fast_dev_run: a smoke run, no row added to --results_csv" in capsys.readouterr().err


def test_forecast_a_failed_results_write_leaves_the_earlier_rows(tmp_path, monkeypatch):
    # the file was rewritten in place: a write failing half-way lost every earlier row
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    (tmp_path / "out.csv").write_text("dataset,mse\nlorenz,0.5\n")
    real = pd.DataFrame.to_csv

    def half_then_fail(self, path=None, *args, **kwargs):
        if path is None:
            return real(self, path, *args, **kwargs)
        Path(path).write_text("dataset,")  # a partial file, then the disk fills up
        raise OSError("No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_fail)
    argv = ["fit", *_TINY, *_TINY_LORENZ]
    with pytest.raises(OSError, match="No space left"):
        _script("forecast").main(argv)
    assert (tmp_path / "out.csv").read_text() == "dataset,mse\nlorenz,0.5\n"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_a_setting_built_otherwise_than_given_is_one_plain_note_on_stderr(
    tmp_path, monkeypatch, capsys
):
    # forecast.py printed it after the path of Lightning's cli.py (which built the model);
    # denoise.py cut seq_len to a short split without a word
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, "--model.d_model", "8", "--data.dataset", "lorenz",
            "--data.lookback", "8", "--data.horizon", "4", "--data.n", "800",
            "--results_csv", "out.csv"]  # fmt: skip
    assert _script("forecast").main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if "is built as" in line] == [
        "forecast.py: note: ForecastingSystem: moving_average=25 is built as 9 (at most "
        "lookback=8, + 1 as it is even); patch_len=16 is built as 8 (at most lookback=8); "
        "net.moving_average and net.patch_len hold the values used"
    ]
    argv = ["fit", *_TINY, "--model.d_model", "8", "--data.n", "400", "--results_csv", "out.csv"]
    assert _script("denoise").main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if "is built as" in line] == [
        "denoise.py: note: DenoiseDataModule: seq_len=128 is built as 80 in the validation "
        "part (80 samples), 80 in the test part (80 samples) of lorenz (one window as long as "
        "the part); give a shorter seq_len or a longer series for windows of seq_len throughout"
    ]


_BAD = [
    ("denoise", ["--data.n", "-5"], "n must be"),
    ("denoise", ["--model.d_model", "-4"], "d_model must be"),
    ("denoise", ["--model.num_heads", "3"], "divisible by num_heads"),
    ("denoise", ["--data.noise", "foo"], "noise must be one of"),
    ("denoise", ["--data.dataset", "nope"], "dataset must be one of"),
    ("denoise", ["--trainer.max_epochs", "-2"], "max_epochs"),
    ("denoise", ["--data.seq_len", "0"], "seq_len must be"),
    ("denoise", ["--model.lr", "-1"], "lr must be"),
    ("denoise", {"data": "stride: 0"}, "stride must be"),
    ("denoise", {"data": "batch_size: -1"}, "batch_size must be"),
    ("forecast", ["--data.horizon", "0"], "horizon must be"),
    ("forecast", ["--data.lookback", "-1"], "lookback must be"),
    ("forecast", ["--data.features", "X"], "features must be one of"),
    ("forecast", ["--data.horizon", "5000"], "--data.horizon 5000 is longer"),
    # numpy's "window shape cannot be larger than input array shape"
    ("forecast", ["--data.lookback", "2400"], "lookback + horizon (2400 + 25) is longer than"),
    ("forecast", ["--model.patch_len", "0"], "patch_len must be"),
    # it was rounded up to 25 and trained without a word
    ("forecast", ["--model.moving_average", "24"], "--model.moving_average must be odd"),
    # learn_decay=True (the default) with no decay: no decay was learned, unsaid
    ("denoise", ["--model.decay", "null"], "--model.learn_decay=True needs a decay to start"),
    # a ValueError traceback from the first training batch, after the start was validated
    (
        "denoise",
        ["--model.window", "200"],
        "--model.window 200 is longer than the training windows (128 samples, --data.seq_len 128)",
    ),
    # a ValueError traceback from configure_optimizers, after the start was validated
    (
        "forecast",
        ["--model.attention", "false", "--model.linear_lr_scale", "0"],
        "--model.attention false with --model.linear_lr_scale 0: nothing to train",
    ),
    # an IndexError traceback: validating the start gave no val_loss
    (
        "denoise",
        ["--trainer.limit_val_batches", "0"],
        "--trainer.limit_val_batches 0: no validation",
    ),
    (
        "forecast",
        ["--trainer.limit_val_batches", "0.0"],
        "--trainer.limit_val_batches 0.0: no validation",
    ),
    # a ValueError traceback from Lightning's seed_everything ("-1 is not in bounds")
    ("denoise", ["--seed_everything", "-1"], "--seed_everything must be an integer in [0, "),
    ("forecast", ["--seed_everything", "4294967296"], "--seed_everything must be an integer"),
]


@pytest.mark.parametrize(("script", "bad", "message"), _BAD, ids=[str(c[1]) for c in _BAD])
def test_bad_settings_are_one_line_and_exit_code_2_before_training(
    script, bad, message, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / f"{script}_lorenz.yaml"
    if isinstance(bad, dict):  # a setting from a YAML file
        (tmp_path / "bad.yaml").write_text("".join(f"{k}:\n  {v}\n" for k, v in bad.items()))
        bad = ["--config", "bad.yaml"]
    argv = ["fit", "--config", str(config), *_TINY, "--data.n", "800", *bad,
            "--results_csv", "out.csv"]  # fmt: skip
    if script == "forecast":
        argv[argv.index("800")] = "4000"
    assert _script(script).main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"{script}.py: error: ") and message in err[-1]
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("script", ["denoise", "forecast"])
def test_a_results_csv_that_is_no_csv_table_is_refused_before_training(
    script, tmp_path, monkeypatch, capsys
):
    # the run trained, then reading the file to add its row ended in a traceback
    monkeypatch.chdir(tmp_path)
    (tmp_path / "last.ckpt").write_bytes(bytes(range(256)) * 4)
    argv = ["fit", *_TINY, "--data.n", "800", "--results_csv", "last.ckpt"]
    if script == "forecast":
        argv += ["--model.d_model", "8", "--model.patch_len", "8", "--data.dataset", "lorenz",
                 "--data.lookback", "32", "--data.horizon", "4"]  # fmt: skip
    assert _script(script).main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"{script}.py: error: --results_csv last.ckpt is no CSV table")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.ckpt"]


@pytest.mark.parametrize("name", ["results.xlsx", "results.csv.gz", "results.parquet"])
def test_a_results_csv_named_for_another_format_is_refused_before_training(
    name, tmp_path, monkeypatch, capsys
):
    # the row was written as CSV text under any name: an .xlsx of CSV text, a .csv.gz of
    # plain text that the next run's read of it failed on
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, "--data.n", "800", "--results_csv", name]
    assert _script("denoise").main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"denoise.py: error: --results_csv {name}: the results table is a CSV "
                       "file; give a name ending .csv")  # fmt: skip
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("script", ["denoise", "forecast"])
def test_a_real_dataset_not_found_is_one_line_naming_the_scripts_data_dir_option(
    script, tmp_path, monkeypatch, capsys
):
    # it was a FileNotFoundError traceback, whose hint named --data-dir, an option these
    # scripts do not have (theirs is --data.data_dir)
    monkeypatch.chdir(tmp_path)
    dataset = {"denoise": "imu_fusion", "forecast": "ETTh1"}[script]
    argv = ["fit", *_TINY, "--data.dataset", dataset, "--data.data_dir", "no_such_folder",
            "--results_csv", "out.csv"]  # fmt: skip
    assert _script(script).main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"{script}.py: error: --data: ")
    assert "--data.data_dir" in err[-1] and "no_such_folder" in err[-1]
    assert "--data-dir" not in err[-1]
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("script", ["denoise", "forecast"])
def test_help_names_the_classical_subcommand(script, capsys):
    # it said "Lightning Trainer command line tool" and listed {fit,validate,test,predict}:
    # nothing told that `classical` runs the comparison harness
    with pytest.raises(SystemExit) as exit_:
        _script(script).main(["--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"`{script}.py classical ...`, the same as `tssdpa compare {script} ...`" in text
    # the usage listed {fit,validate,test,predict}: predict wrote nothing, classical was missing
    assert text.startswith(f"usage: {script}.py [-h] [-c CONFIG] {{fit,validate,test,classical}}")


@pytest.mark.parametrize("script", ["denoise", "forecast"])
def test_predict_is_refused_saying_where_a_models_output_comes_from(script, tmp_path, capsys):
    # it ran the model over the test windows, wrote nothing and exited 0
    assert _script(script).main(["predict", "--ckpt_path", str(tmp_path / "x.ckpt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"{script}.py: error: predict writes no predictions here: `{script}.py test "
                   "--ckpt_path FILE` scores a checkpoint on the test split, and `tssdpa filter "
                   "FILE.csv -m learned_projection` writes a learned filter's output"]  # fmt: skip


@pytest.mark.parametrize("subcommand", ["test", "fit"])
def test_a_ckpt_path_that_is_no_file_is_one_line_and_exit_code_2(subcommand, tmp_path,
                                                                 monkeypatch, capsys):  # fmt: skip
    # it was a FileNotFoundError traceback from inside the Trainer, after the data was built
    monkeypatch.chdir(tmp_path)
    argv = [subcommand, *_TINY, "--data.n", "800", "--results_csv", "out.csv",
            "--ckpt_path", "runs/nope.ckpt"]  # fmt: skip
    assert _script("denoise").main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "denoise.py: error: --ckpt_path runs/nope.ckpt: no such file"
    assert not (tmp_path / "out.csv").exists()


def _unreadable_checkpoints(folder: Path) -> dict:
    """Files given as --ckpt_path that are no checkpoint: name -> what the message says."""
    import os
    import pickle

    import torch

    class Code:  # a pickle that runs a command when loaded
        def __reduce__(self):
            return (os.system, (f"touch {folder / 'ran'}",))

    torch.save({"state_dict": Code()}, folder / "code.ckpt")
    torch.save({"weight": torch.zeros(2)}, folder / "weights.pt")  # a bare state_dict
    (folder / "results.csv").write_text("a,b\n1,2\n")
    (folder / "empty.ckpt").write_bytes(b"")
    (folder / "five.pkl").write_bytes(pickle.dumps(5))
    loads = "does not load as a weights-only checkpoint"
    return {"code.ckpt": loads, "weights.pt": "is no Lightning checkpoint",
            "results.csv": loads, "empty.ckpt": loads, "five.pkl": loads}  # fmt: skip


@pytest.mark.parametrize("subcommand", ["test", "fit"])
def test_a_ckpt_path_that_is_no_checkpoint_is_one_line_before_anything_runs_never_unpickled(
    subcommand, tmp_path, monkeypatch, capsys
):
    # a traceback from torch.load (IndexError, EOFError, UnpicklingError, ...) or from inside
    # the Trainer (KeyError: 'pytorch-lightning_version'), after fit had validated the start
    monkeypatch.chdir(tmp_path)
    for name, says in _unreadable_checkpoints(tmp_path).items():
        argv = [subcommand, *_TINY, "--data.n", "800", "--results_csv", "out.csv",
                "--ckpt_path", name]  # fmt: skip
        assert _script("denoise").main(argv) == 2, name
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith(f"denoise.py: error: --ckpt_path {name} {says}"), err[-5:]
        assert "Traceback" not in "\n".join(err)
    assert not (tmp_path / "ran").exists()
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("ckpt", ["s3://bucket/runs/x.ckpt", "https://host/x.ckpt",
                                  "registry:denoiser:v2", "REGISTRY", "last"])  # fmt: skip
def test_a_remote_or_registry_ckpt_path_is_left_to_lightning_not_refused_as_no_file(ckpt):
    # Lightning reads s3:// and https:// checkpoints through fsspec, and 'registry:<name>'
    # from its model registry: '--ckpt_path s3://bucket/runs/x.ckpt: no such file' refused them
    from tssdpa.cli import experiment

    assert not experiment.missing_checkpoint(ckpt)
    assert experiment.missing_checkpoint("runs/nope.ckpt")
    assert experiment.missing_checkpoint("file:///nowhere/nope.ckpt")


@pytest.mark.parametrize("subcommand", ["test", "validate"])
def test_evaluating_without_a_ckpt_path_is_refused_not_a_score_of_untrained_weights(
    subcommand, tmp_path, monkeypatch, capsys
):
    # `test` without --ckpt_path printed test_loss 0.103 of the randomly initialised model
    # (a trained checkpoint: 0.098), as any other run's table, with exit code 0
    monkeypatch.chdir(tmp_path)
    argv = [subcommand, *_TINY, "--data.n", "800", "--results_csv", "out.csv"]
    assert _script("denoise").main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert err[-1] == (f"denoise.py: error: {subcommand} needs --ckpt_path CKPT (the trained "
                       f"model to {subcommand}): without one the untrained, randomly "
                       "initialised weights would be scored")  # fmt: skip
    assert "test_loss" not in captured.out and "val_loss" not in captured.out


@pytest.mark.parametrize("script", ["denoise", "forecast"])
def test_the_results_row_records_the_seed_of_the_weights_not_only_the_datas(
    script, tmp_path, monkeypatch
):
    # --seed_everything 1 gave another model (denoise, data.n 1600: test RMSE 0.3088, 0.3074
    # for 0), but its row said seed 0 (data.seed) like the other: runs not told apart
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, "--data.n", "800", "--seed_everything", "3", "--results_csv", "o.csv"]
    if script == "forecast":
        argv += ["--model.d_model", "8", "--model.patch_len", "8", "--data.dataset", "lorenz",
                 "--data.lookback", "32", "--data.horizon", "4"]  # fmt: skip
    assert _script(script).main(argv) == 0
    row = pd.read_csv(tmp_path / "o.csv").iloc[-1]
    assert row["seed"] == 0 and row["seed_everything"] == 3


def test_the_results_rows_record_the_model_and_optimiser_settings_that_differ(
    tmp_path, monkeypatch
):
    # runs at lr 0.003 and 0.3 made rows that read the same
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    for lr in ("0.003", "0.3"):
        argv = ["fit", *_TINY, "--data.n", "800", "--model.lr", lr, "--results_csv", "o.csv",
                "--optimizer", "torch.optim.SGD", "--optimizer.momentum", "0.5"]  # fmt: skip
        assert _script("denoise").main(argv) == 0
    rows = pd.read_csv(tmp_path / "o.csv")
    # --optimizer replaces the model's configure_optimizers: both runs trained at SGD's lr,
    # and a row with model.lr=0.3 beside optimizer.lr=0.001 read as a run at 0.3
    assert "model.lr" not in rows and "model.weight_decay" not in rows
    assert rows["optimizer.lr"].tolist() == [0.001, 0.001]
    assert rows["model.d_model"].nunique() == 1 and rows["optimizer"].tolist() == ["SGD"] * 2
    assert rows["optimizer.momentum"].tolist() == [0.5, 0.5]


def test_a_row_records_the_models_lr_where_the_model_chooses_its_optimiser():
    from tssdpa.cli.experiment import settings_row

    model = {"lr": 0.3, "weight_decay": 0.01, "d_model": 8}
    assert settings_row({"model": model}) == {
        "model.lr": 0.3, "model.weight_decay": 0.01, "model.d_model": 8
    }  # fmt: skip
    sgd = {"class_path": "torch.optim.SGD", "init_args": {"lr": 0.001}}
    assert settings_row({"model": model, "optimizer": sgd}) == {
        "model.d_model": 8, "optimizer": "SGD", "optimizer.lr": 0.001
    }  # fmt: skip


@pytest.mark.parametrize("word", ["last", "best"])
def test_a_ckpt_path_word_naming_no_checkpoint_is_refused_not_the_untrained_weights_scored(
    word, tmp_path, monkeypatch, capsys
):
    # `test --ckpt_path last` with no last.ckpt: a Lightning warning, then test_loss 0.103 of the
    # untrained weights, exit 0; `best` (no fit in this process): a ValueError traceback
    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    argv = ["test", "--config", str(config), *_TINY, "--data.n", "800", "--ckpt_path", word]
    assert _script("denoise").main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert err[-1].startswith(f"denoise.py: error: --ckpt_path {word}: ")
    assert "test_loss" not in captured.out


def test_test_with_ckpt_path_last_scores_the_last_checkpoint_when_there_is_one(
    tmp_path, monkeypatch, capsys
):
    import re

    import torch

    from tssdpa.data.lightning import DenoiseDataModule
    from tssdpa.models import DenoisingSystem

    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    common = ["--config", str(config), *_TINY, "--data.n", "800", "--results_csv", "out.csv"]
    assert _script("denoise").main(["fit", *common, "--trainer.callbacks.save_last", "true"]) == 0
    capsys.readouterr()
    assert _script("denoise").main(["test", *common, "--ckpt_path", "last"]) == 0
    [printed] = re.findall(r"test_loss\W+([0-9.]+)", capsys.readouterr().out)
    model = DenoisingSystem.load_from_checkpoint("runs/ckpt/denoise_lorenz/last.ckpt").eval()
    dm = DenoiseDataModule(n=800)
    dm.setup()
    x, y = dm.test_set.tensors
    with torch.no_grad():
        mse = float((model(x) - y).square().mean())
    assert float(printed) == pytest.approx(mse, rel=1e-5)


def test_forecast_with_the_default_checkpointing_keeps_training_that_beats_the_ridge_start(
    tmp_path, monkeypatch
):
    # Lightning's default ModelCheckpoint has no score: the best validation MSE was taken as
    # NaN, which never beat the start, so every epoch was thrown away and the ridge start
    # scored (val 0.00419 kept against 0.00376 trained on the Lorenz series)
    import pandas as pd
    import torch

    import tssdpa.models.systems as systems

    real = systems.ridge_linear_init

    def offset_start(net, train_series, val_pairs, grid=None):  # a start training improves
        info = real(net, train_series, val_pairs, grid)
        with torch.no_grad():
            net.linear_trend.bias += 3.0
        return info

    monkeypatch.setattr(systems, "ridge_linear_init", offset_start)
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, *_TINY_LORENZ, "--model.linear_init", "ridge", "--model.lr", "0.01"]
    assert _script("forecast").main(argv) == 0
    row = pd.read_csv(tmp_path / "out.csv").iloc[-1]
    assert row["val_mse"] < row["start_val_mse"]
    assert not row["checkpoint"].endswith("start.ckpt")


def test_a_test_run_leaves_the_resolved_config_of_the_fit_beside_the_results(tmp_path, monkeypatch):
    # `test` saved its own config over the fit's: the rows made at 10 dB were described by
    # the test run's snr_db: 0 and its ckpt_path
    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    common = ["--config", str(config), *_TINY, "--data.n", "800", "--results_csv", "out.csv"]
    assert _script("denoise").main(["fit", *common]) == 0
    saved = (tmp_path / "out.config.yaml").read_text()
    [ckpt] = Path("runs/ckpt/denoise_lorenz").glob("epoch*.ckpt")  # start.ckpt beside it
    argv = ["test", *common, "--data.snr_db", "0", "--ckpt_path", str(ckpt)]
    assert _script("denoise").main(argv) == 0
    assert (tmp_path / "out.config.yaml").read_text() == saved


def test_forecast_records_the_tasks_setting_not_the_ett_features_flag(tmp_path, monkeypatch):
    # the Lorenz task is univariate; its row said "S", the ETT flag given, as the harness's
    # rows of the same task say "univariate"
    import pandas as pd

    from tssdpa.data.tasks import forecast_tasks

    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, "--model.d_model", "8", "--model.patch_len", "8", "--data.dataset",
            "lorenz", "--data.features", "S", "--data.lookback", "32", "--data.horizon", "4",
            "--data.n", "800", "--results_csv", "out.csv"]  # fmt: skip
    assert _script("forecast").main(argv) == 0
    [task] = forecast_tasks("lorenz", seeds=(0,), n=800, horizons=(4,), lookback=32)
    assert pd.read_csv(tmp_path / "out.csv")["setting"].tolist() == [task.setting]
    assert task.setting == "univariate"


@pytest.mark.parametrize(("lr", "kept_start"), [(0.3, True), (0.003, False)])
def test_denoise_fit_never_ends_worse_on_validation_than_its_identity_start(
    tmp_path, monkeypatch, lr, kept_start
):
    # the best epoch was reported even where it was worse on validation than the untrained
    # identity: lr 0.3 gave a test SNR gain of -2.1 dB, where the start itself gains 0 dB
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    argv = ["fit", "--config", str(config), *_TINY, "--data.n", "800", "--model.d_model", "8",
            "--model.lr", str(lr), "--results_csv", "out.csv"]  # fmt: skip
    assert _script("denoise").main(argv) == 0
    row = pd.read_csv(tmp_path / "out.csv").iloc[-1]
    assert row["val_mse"] <= row["start_val_mse"]
    assert row["checkpoint"].endswith("start.ckpt") == kept_start
    if kept_start:  # the identity: its output is the noisy input
        assert row["snr_gain_db"] == pytest.approx(0.0, abs=1e-6)
    else:
        assert row["val_mse"] < row["start_val_mse"] and row["snr_gain_db"] > 0


def test_forecast_fit_without_a_ridge_start_keeps_its_untrained_start_when_no_epoch_beats_it(
    tmp_path, monkeypatch
):
    # only the ridge start was a candidate: with linear_init none at lr 0.3 the best epoch
    # was reported at val MSE 7.72 against the untrained DLinear average's 1.32
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, *_TINY_LORENZ, "--model.linear_init", "none", "--model.lr", "0.3"]
    assert _script("forecast").main(argv) == 0
    row = pd.read_csv(tmp_path / "out.csv").iloc[-1]
    assert row["val_mse"] == row["start_val_mse"] < 2.0
    assert row["checkpoint"].endswith("start.ckpt")


def test_autofit_pyedm_user_scores_one_short_case_and_writes_its_report(tmp_path, capsys):
    # the default fit against Simplex / S-map / AutoReg tuned on validation, one tiny case
    out, report = tmp_path / "rows.jsonl", tmp_path / "report.md"
    argv = ["--cases", "tent_short200", "--jobs", "1", "--out", str(out), "--report", str(report)]
    assert _script("autofit_pyedm_user").main(argv) == 0
    import json

    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["series"], r["h"]) for r in rows] == [("tent_short200", 1), ("tent_short200", 2)]
    assert all(r[k]["rmse"] > 0 for r in rows for k in ("ours", "Simplex", "S-map", "AutoReg"))
    text = report.read_text()
    assert "| tent_short200 | 1 |" in text and "**Summary:**" in text


def test_autofit_pyedm_user_embedding_by_hand_is_the_benchmarks_edm_on_one_channel():
    # the multivariate peers build their embedding for pyEDM by hand (embedded=True); on one
    # channel they must be the benchmark's Simplex and S-map, origin for origin
    pytest.importorskip("pyEDM")
    import numpy as np

    from tssdpa.baselines.edm import SimplexForecaster, SMapForecaster

    m = _script("autofit_pyedm_user")
    z = m.rossler(300, 0)[:, :1]
    for peer, theta in ((SimplexForecaster(embedding=3), None),
                        (SMapForecaster(embedding=3, theta=2.0), 2.0)):  # fmt: skip
        want = np.asarray(peer.fit(z[:200, 0]).forecast(z[150:, 0], 2))
        got = m.EmbeddedEDM(0, 3, theta).fit(z[:200]).forecast(z[150:], 2)
        np.testing.assert_allclose(got, want, atol=1e-10)


@pytest.mark.parametrize("script", ["denoise", "forecast"])
def test_a_ddp_process_other_than_the_first_adds_no_row_and_prints_no_score(
    script, tmp_path, monkeypatch, capsys
):
    # every process of `--trainer.strategy ddp --trainer.devices 2` appended its own row (two
    # rows of one run, each with its own process's val_mse) and printed its own score line
    from lightning.pytorch import Trainer

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Trainer, "is_global_zero", property(lambda self: False))
    argv = ["fit", *_TINY, "--data.n", "800", "--results_csv", "out.csv"]
    if script == "forecast":
        argv = ["fit", *_TINY, *_TINY_LORENZ]
    assert _script(script).main(argv) == 0
    assert not (tmp_path / "out.csv").exists()
    out = capsys.readouterr().out
    assert "test MSE" not in out and "test RMSE" not in out


@pytest.mark.slow
def test_a_two_process_cpu_ddp_fit_adds_one_row(tmp_path):
    # slow: two gloo processes on the CPU
    import os
    import subprocess

    import pandas as pd

    cmd = [sys.executable, str(EXPERIMENTS / "denoise.py"), "fit", *_TINY, "--data.n", "800",
           "--model.d_model", "8", "--trainer.strategy", "ddp", "--trainer.devices", "2",
           "--results_csv", "out.csv"]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pd.read_csv(tmp_path / "out.csv")
    assert len(rows) == 1
    assert rows["val_mse"].iloc[0] <= rows["start_val_mse"].iloc[0]
    assert done.stdout.count("test RMSE") == 1


def test_a_later_run_into_the_same_checkpoint_folder_keeps_the_start_an_earlier_row_names(
    tmp_path, monkeypatch
):
    # every run wrote its start to <dirpath>/start.ckpt: a second run with the config's
    # dirpath replaced the first's, and the first row's checkpoint then held another model
    # (Lightning versions its own files: epoch=0-step=1-v1.ckpt)
    import pandas as pd
    import torch

    monkeypatch.chdir(tmp_path)
    config = EXPERIMENTS / "configs" / "denoise_lorenz.yaml"
    for d_model in ("8", "16"):  # lr 0.3: no epoch beats the start (as tested above)
        argv = ["fit", "--config", str(config), *_TINY, "--data.n", "800", "--model.d_model",
                d_model, "--model.lr", "0.3", "--results_csv", "out.csv"]  # fmt: skip
        assert _script("denoise").main(argv) == 0
    rows = pd.read_csv(tmp_path / "out.csv")
    first, second = rows["checkpoint"]
    assert first.endswith("start.ckpt") and first != second
    saved = torch.load(first, map_location="cpu", weights_only=True)
    assert saved["hyper_parameters"]["d_model"] == 8
    assert len(list((tmp_path / "runs" / "ckpt" / "denoise_lorenz").glob("start*.ckpt"))) == 2


def test_fit_refuses_to_resume_from_a_weights_only_checkpoint_before_anything_runs(
    tmp_path, monkeypatch, capsys
):
    # the start.ckpt a results row names (saved weights-only) given to fit --ckpt_path was a
    # KeyError traceback from inside the Trainer ("checkpoint contains only the model"),
    # after the start had been validated; test --ckpt_path scores it as before
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, "--data.n", "800", "--model.d_model", "8", "--results_csv", "o.csv"]
    assert _script("denoise").main(argv) == 0
    start = str(next(tmp_path.rglob("start.ckpt")).relative_to(tmp_path))
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    assert _script("denoise").main([*argv, "--ckpt_path", start]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"denoise.py: error: --ckpt_path {start} holds the weights only")
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    test = ["test", *_TINY, "--data.n", "800", "--ckpt_path", start]
    assert _script("denoise").main(test) == 0


@pytest.mark.parametrize(("lr", "kept_start"), [(0.3, True), (0.003, False)])
def test_a_fit_without_checkpointing_writes_no_checkpoint_and_still_keeps_a_better_start(
    lr, kept_start, tmp_path, monkeypatch
):
    # --trainer.enable_checkpointing false wrote the start to ./start.ckpt all the same (the
    # working folder: there was no checkpoint folder), and a new one beside it every run
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, "--data.n", "800", "--model.d_model", "8", "--model.lr", str(lr),
            "--trainer.enable_checkpointing", "false", "--results_csv", "out.csv"]  # fmt: skip
    assert _script("denoise").main(argv) == 0
    assert not list(tmp_path.rglob("*.ckpt"))
    row = pd.read_csv(tmp_path / "out.csv").iloc[-1]
    assert pd.isna(row["checkpoint"]) and row["val_mse"] <= row["start_val_mse"]
    assert (row["val_mse"] == row["start_val_mse"]) == kept_start
    if kept_start:  # the identity: its output is the noisy input
        assert row["snr_gain_db"] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("monitor: val_los, patience", "EarlyStopping(monitor='val_los')"),
        ("monitor: val_los, save_top_k", "ModelCheckpoint(monitor='val_los')"),
    ],
)
def test_a_callback_monitoring_no_logged_metric_is_one_line_before_training(
    given, said, tmp_path, monkeypatch, capsys
):
    # a misspelt monitor in the YAML trained a whole epoch, then was a RuntimeError or
    # MisconfigurationException traceback
    monkeypatch.chdir(tmp_path)
    config = (EXPERIMENTS / "configs" / "denoise_lorenz.yaml").read_text()
    right = given.replace("val_los,", "val_loss,")
    assert right in config
    (tmp_path / "typo.yaml").write_text(config.replace(right, given))
    argv = ["fit", "--config", "typo.yaml", *_TINY, "--data.n", "800", "--results_csv", "o.csv"]
    assert _script("denoise").main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"denoise.py: error: --trainer.callbacks: {said} names no metric the "
                       "model logs: val_loss or train_loss")  # fmt: skip
    assert not list(tmp_path.rglob("*.ckpt")) and not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("subcommand", ["test", "fit"])
def test_a_checkpoint_of_another_shape_than_the_data_builds_is_one_line_naming_a_weight(
    subcommand, tmp_path, monkeypatch, capsys
):
    # the model's settings come from the checkpoint, but lookback and horizon from --data:
    # another --data.lookback was a RuntimeError traceback of size mismatches from the Trainer
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, *_TINY_LORENZ, "--trainer.enable_checkpointing", "true"]
    assert _script("forecast").main(argv) == 0
    ckpt = str(next(tmp_path.rglob("epoch=*.ckpt")).relative_to(tmp_path))
    argv = [subcommand, *_TINY, *_TINY_LORENZ, "--data.lookback", "16", "--ckpt_path", ckpt]
    assert _script("forecast").main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"forecast.py: error: --ckpt_path {ckpt} holds a model of other "
                              "shapes than these settings build (net.")  # fmt: skip
    assert "--data" in err[-1]


def test_model_settings_replaced_by_the_checkpoints_are_one_note_each(tmp_path, monkeypatch,
                                                                     capsys):  # fmt: skip
    # LightningCLI builds the model with the checkpoint's settings: a --model.lr 0.05 given
    # with --ckpt_path was dropped without a word (and a resumed run's row said 0.001)
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, *_TINY_LORENZ, "--trainer.enable_checkpointing", "true"]
    assert _script("forecast").main(argv) == 0
    ckpt = str(next(tmp_path.rglob("epoch=*.ckpt")).relative_to(tmp_path))
    capsys.readouterr()
    argv = ["test", *_TINY, *_TINY_LORENZ, "--ckpt_path", ckpt]
    assert _script("forecast").main([*argv, "--model.lr", "0.05"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "note:" in line]
    assert notes == [f"forecast.py: note: --ckpt_path {ckpt}: the model is built with the "
                     "checkpoint's settings: lr=0.001 (not 0.05)"]  # fmt: skip
    assert _script("forecast").main(argv) == 0
    assert "note:" not in capsys.readouterr().err


def test_a_checkpoint_trained_with_other_settings_is_no_note_where_none_was_given(
    tmp_path, monkeypatch, capsys
):
    # the parser's defaults are not settings given: a test run of a checkpoint trained with
    # --model.lr 0.01 said "lr=0.01 (not 0.001)" though no --model.lr was given
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_TINY, *_TINY_LORENZ, "--trainer.enable_checkpointing", "true"]
    assert _script("forecast").main([*argv, "--model.lr", "0.01"]) == 0
    ckpt = str(next(tmp_path.rglob("epoch=*.ckpt")).relative_to(tmp_path))
    capsys.readouterr()
    assert _script("forecast").main(["test", *_TINY, *_TINY_LORENZ, "--ckpt_path", ckpt]) == 0
    assert "note:" not in capsys.readouterr().err
