"""dev.py, the two set-up commands of the README: where each runs what it runs."""

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def dev(monkeypatch):
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "ensure_env", lambda extras: Path("/venv/bin/python"))
    calls = []

    def run(cmd, cwd=None, **kw):
        calls.append((cmd, Path(cwd if cwd is not None else os.getcwd())))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(module.subprocess, "run", run)
    return module, calls


def test_a_users_own_job_runs_where_the_user_is_so_its_paths_are_theirs(dev, tmp_path, monkeypatch):
    module, calls = dev
    monkeypatch.chdir(tmp_path)
    assert module.main(["run", "filter", "my.csv", "--out", "y.csv"]) == 0
    cmd, cwd = calls[0]
    assert cmd[-4:] == ["filter", "my.csv", "--out", "y.csv"]
    assert cwd == tmp_path and Path.cwd() == tmp_path  # dev.py moved nobody


@pytest.mark.parametrize("argv", [["run"], ["test", "-x"]])
def test_the_default_job_and_the_tests_run_in_the_repository(dev, tmp_path, monkeypatch, argv):
    module, calls = dev
    monkeypatch.chdir(tmp_path)
    assert module.main(argv) == 0
    cmd, cwd = calls[0]
    assert cwd == ROOT
    if argv == ["run"]:
        assert cmd[-2:] == ["--out", "runs/default"]


def test_an_unknown_command_is_named_as_unknown_with_exit_code_2(dev, capsys):
    module, calls = dev
    assert module.main(["bogus"]) == 2
    out, err = capsys.readouterr()
    assert "python3 dev.py run" in out  # the usage
    assert err == "dev.py: unknown command 'bogus'; give run or test\n"
    assert calls == []
