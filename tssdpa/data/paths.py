"""Where the real datasets live.

Shared data is never committed to the project; it is read from a folder found, in order, from
an explicit ``data_dir`` argument (the scripts' ``--data-dir``), the ``TSSDPA_DATA``
environment variable, ``../shared/datasets`` next to the working directory or next to the
checkout, and the user cache filled by ``tssdpa download`` (``~/.cache/tssdpa``).
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "TSSDPA_DATA"
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tssdpa"
_REPO_ROOT = Path(__file__).resolve().parents[2]


def _existing(folder: Path, name: str) -> Path:
    if not folder.is_dir():
        raise FileNotFoundError(f"{name}: no folder {str(folder)!r}")
    return folder


def candidate_dirs(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """The folders searched for datasets, most specific first."""
    dirs: list[Path] = []
    # a folder named explicitly must exist: a typo would silently read other data
    if data_dir is not None:
        if not os.fspath(data_dir):  # Path("") is ".": the working directory was searched
            raise FileNotFoundError("data_dir (--data-dir): an empty path names no folder")
        dirs.append(_existing(Path(data_dir).expanduser(), "data_dir (--data-dir)"))
    if os.environ.get(ENV_VAR):
        dirs.append(_existing(Path(os.environ[ENV_VAR]).expanduser(), ENV_VAR))
    dirs += [Path.cwd().parent / "shared" / "datasets", _REPO_ROOT.parent / "shared" / "datasets"]
    dirs.append(CACHE_DIR)
    return list(dict.fromkeys(dirs))  # once each (from the repository root two are the same)


def find_dataset(
    relative: str | os.PathLike, data_dir: str | os.PathLike | None = None, *,
    downloadable: bool = True,
) -> Path:  # fmt: skip
    """Return the path of ``relative`` (e.g. ``"ett/ETTh1.csv.gz"``) in the first folder holding it.

    ``downloadable``: whether ``tssdpa download`` fetches it (the error suggests it then; the
    translation pairs are not in its manifest).

    Raises
    ------
    FileNotFoundError
        Naming every folder searched and how to supply the data.
    """
    searched = candidate_dirs(data_dir)
    for d in searched:
        p = d / relative
        if p.is_file():
            return p
    how = "run `tssdpa download`"
    if not downloadable:  # the translation pairs: `tssdpa download` refused them by name
        how = f"copy it to {CACHE_DIR / relative} (`tssdpa download` does not fetch it)"
    raise FileNotFoundError(
        f"dataset file {str(relative)!r} not found; searched: "
        + ", ".join(str(d) for d in searched)
        + f". Pass --data-dir, set {ENV_VAR}, or {how}; see datasets/README.md."
    )


def have_dataset(relative: str | os.PathLike, data_dir: str | os.PathLike | None = None) -> bool:
    """True when :func:`find_dataset` would succeed."""
    try:
        find_dataset(relative, data_dir)
    except FileNotFoundError:
        return False
    return True
