#!/usr/bin/env python3
"""Set-up and entry points for tssdpa; needs only a Python >= 3.11 on the machine.

    python3 dev.py run    # create/refresh .venv, install, run the main job: the comparison of
                          # projection filters with classical ones on the embedded default data
    python3 dev.py test   # create/refresh .venv, install with test extras, run the tests

Extra arguments after the command are passed on: to the `tssdpa` command for `run` (replacing
the default job, e.g. `python3 dev.py run filter my.csv --columns x --out y.csv`, run in the
current folder), to pytest for `test` (run in the repository).
Environment:
    TSSDPA_TORCH        torch requirement to install (default "torch==2.13.0", the CPU wheel);
                        e.g. "torch==2.5.1" together with
    TSSDPA_TORCH_INDEX  an extra package index for it (e.g. a CUDA wheel index).
    TSSDPA_VENV         virtual environment folder (default .venv next to this file).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("TSSDPA_VENV", ROOT / ".venv")).resolve()  # a relative one: from here
TORCH = os.environ.get("TSSDPA_TORCH", "torch==2.13.0")
TORCH_INDEX = os.environ.get("TSSDPA_TORCH_INDEX")


def _python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _pip(*args: str) -> None:
    cmd = [str(_python()), "-m", "pip", "install", "--disable-pip-version-check", *args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def ensure_env(extras: str) -> Path:
    """Create the venv if needed and install torch + the package when anything changed."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may be run by an older python3
        sys.exit(f"tssdpa needs Python >= 3.11, this is {sys.version.split()[0]}")
    if not _python().exists():
        print(f"creating virtual environment {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    # Reinstall only when the requirements changed: a stamp of pyproject + torch spec + extras.
    key = hashlib.sha256(
        (ROOT / "pyproject.toml").read_bytes() + f"{TORCH}|{TORCH_INDEX}|{extras}".encode()
    ).hexdigest()
    stamp = VENV / f".tssdpa-installed-{extras or 'base'}"
    if stamp.exists() and stamp.read_text() == key:
        return _python()
    torch_args = [TORCH] + (["--extra-index-url", TORCH_INDEX] if TORCH_INDEX else [])
    # torch first and pinned: an unpinned requirement would pull the multi-GB CUDA build.
    _pip("-q", *torch_args)
    target = f"{ROOT}[{extras}]" if extras else str(ROOT)
    _pip("-q", "-e", target, TORCH)
    stamp.write_text(key)
    return _python()


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("run", "test"):
        print(__doc__)
        if argv:  # `dev.py bogus` printed the usage alone, not saying what was wrong
            print(f"dev.py: unknown command {argv[0]!r}; give run or test", file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    # The default job and the tests run in the repository (runs/default, pytest's settings);
    # a job of the user's own (`run filter my.csv --out y.csv`) where the user is, so that
    # its paths mean what they mean in the user's shell.
    cwd = os.getcwd() if command == "run" and rest else ROOT
    if command == "run":
        py = ensure_env("peers")  # the pyEDM Simplex / S-map peers join the comparison
        job = rest or ["compare", "all", "--dataset", "default", "--out", "runs/default"]
        cmd = [str(py), "-m", "tssdpa.cli", *job]
    else:
        py = ensure_env("test")
        cmd = [str(py), "-m", "pytest", *rest]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=cwd).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
