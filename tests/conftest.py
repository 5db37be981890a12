import contextlib
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from tssdpa.data import find_dataset


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models: one thread avoids oversubscribing the shared cores (restored after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def fails_once():
    """A denoiser class whose first fit fails (a transient failure), the identity after: a
    new class per test, so each test's first fit fails."""

    class FailsOnce:
        causal = True
        failed = False

        def fit(self, x, target=None):
            if not FailsOnce.failed:
                FailsOnce.failed = True
                raise RuntimeError("transient")
            return self

        def filter(self, x):
            return x

    return FailsOnce


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


class InProcessCli(Cli):
    """The same command through :func:`tssdpa.cli.main` in this process: everything a
    subprocess runs but the interpreter's start and the package's imports (2-3 s a call),
    for the many cases that each check one error message. A traceback would surface as the
    test's own error; what only a fresh interpreter shows (import-time banners, warnings that
    pytest captures) is checked through :class:`Cli`."""

    def __call__(self, *args, cwd) -> subprocess.CompletedProcess:
        from tssdpa.cli import main

        out, err = io.StringIO(), io.StringIO()
        debug = os.environ.pop("TSSDPA_DEBUG", None)
        here = os.getcwd()
        os.chdir(cwd)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main([str(a) for a in args])
                except SystemExit as exc:  # argparse's own errors (and --help: None, 0)
                    code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        finally:
            os.chdir(here)
            if debug is not None:
                os.environ["TSSDPA_DEBUG"] = debug
        return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli() -> Cli:
    """``cli(*args, cwd=...)`` runs the command line; ``cli.assert_usage_error(r, message)``."""
    return Cli()


@pytest.fixture
def cli_in_process() -> InProcessCli:
    """:func:`cli`'s interface, run in this process (:class:`InProcessCli`)."""
    return InProcessCli()


def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker in item.iter_markers(name="data"):
            for rel in marker.args:
                try:
                    find_dataset(rel)
                except FileNotFoundError as err:  # its message names TSSDPA_DATA if that is wrong
                    item.add_marker(pytest.mark.skip(reason=f"shared dataset {rel}: {err}"))


def pytest_configure(config):
    """Each pytest-xdist worker takes its share of the cores for its threads (BLAS, torch, the
    fits' search threads and the command lines it starts): ``-n auto`` runs one worker per
    core, and a worker whose fits spread over every core as well oversubscribes them. Tests
    of threading set their own counts (``tests/filters/test_fit_threads.py``)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if not os.environ.get("PYTEST_XDIST_WORKER") or workers < 2:
        return
    from threadpoolctl import threadpool_limits

    from tssdpa.signal import neighbours

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    share = max(1, (cores or 1) // workers)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(share))
    threadpool_limits(share)
    torch.set_num_threads(share)
    neighbours.THREADS = min(neighbours.THREADS, share)
