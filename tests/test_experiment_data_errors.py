"""The experiment scripts' data settings refused as the data is first read (the data module's
``setup``, run while the model's channels are linked from it): one line naming the option."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
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
    monkeypatch.chdir(tmp_path)
    argv = ["fit", *_SMALL[script], *setting, "--results_csv", "out.csv"]
    assert _script(script).main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"{script}.py: error: {said}"), err[-1]
    assert list(tmp_path.iterdir()) == []  # before any work
