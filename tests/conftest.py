import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from tssdpa.data import have_dataset


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models: one thread avoids oversubscribing the shared cores (restored after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def edit_saved_config(folder, edit) -> None:
    """Tamper with an estimator saved in ``folder``: ``edit`` changes its config dict in place
    (what a hostile or corrupted file would hold)."""
    path = Path(folder) / "config.json"
    cfg = json.loads(path.read_text())
    edit(cfg)
    path.write_text(json.dumps(cfg))


@pytest.fixture
def edit_config():
    """:func:`edit_saved_config`, for tests that check what ``load`` refuses."""
    return edit_saved_config


@pytest.fixture
def quiet_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


class Cli:
    """The ``tssdpa`` command as a user runs it: a subprocess on this checkout, without
    ``TSSDPA_DEBUG`` (which would show tracebacks)."""

    def __call__(self, *args, cwd) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "TSSDPA_DEBUG"}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])  # the checkout under test
        return subprocess.run(
            [sys.executable, "-m", "tssdpa.cli", *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=300,
        )

    @staticmethod
    def assert_usage_error(r: subprocess.CompletedProcess, message: str) -> None:
        """Exit code 2, one line on stderr that contains ``message``, no traceback."""
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr
        assert message in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


@pytest.fixture
def cli() -> Cli:
    """``cli(*args, cwd=...)`` runs the command line; ``cli.assert_usage_error(r, message)``."""
    return Cli()


def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker in item.iter_markers(name="data"):
            for rel in marker.args:
                if not have_dataset(rel):
                    item.add_marker(pytest.mark.skip(reason=f"shared dataset {rel} not found"))
