"""Output paths checked before any work: a run that cannot write its output (a folder it may
not write in, a file where a folder should be) ran a whole fit and then failed on the write,
with the operating system's error (``FileNotFoundError: [Errno 2] ... '/proc/x.csv'``) or a
traceback."""

from __future__ import annotations

import tempfile
from pathlib import Path

__all__ = ["check_output_file", "check_output_folder"]


def _first_existing(p: Path) -> Path:
    """``p`` or the nearest of its parents that exists (``.`` or ``/`` at last)."""
    return next((q for q in (p, *p.parents) if q.exists()), Path("."))


def _check_writable(folder: Path, flag: str) -> None:
    """``ValueError`` where no file can be made in ``folder`` (tried: permissions, a read-only
    or virtual file system such as /proc, which ``os.access`` misjudges for root)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        # /proc: ENOENT for a folder that is there
        why = "it takes no new files" if isinstance(exc, FileNotFoundError) else exc.strerror
        raise ValueError(f"{flag}: cannot write in the folder {str(folder)!r} ({why})") from None


def check_output_file(path, flag: str, make_folders: bool = False) -> None:
    """``ValueError`` starting with ``flag`` where the file ``path`` cannot be written: an
    empty name, a folder, a folder of it that is a file, that does not exist (unless
    ``make_folders``: the writer makes them) or is not writable."""
    if not str(path).strip():
        raise ValueError(f"{flag}: empty; give a file name")
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{flag}: {str(path)!r} is a folder; give a file name")
    there = _first_existing(p.parent)
    if not there.is_dir():
        raise ValueError(f"{flag}: {str(there)!r} is a file, not a folder; give another path")
    if there != p.parent and not make_folders:
        raise ValueError(f"{flag}: the folder {str(p.parent)!r} does not exist")
    _check_writable(there, flag)


def check_output_folder(path, flag: str, make_folders: bool = True) -> None:
    """``ValueError`` starting with ``flag`` where the folder ``path`` cannot be made or
    written in: an empty name, a file, a parent that is a file, or that does not exist
    (unless ``make_folders``: the writer makes the folder with its parents), or no write
    permission."""
    if not str(path).strip():
        raise ValueError(f"{flag}: empty; give a folder")
    p = Path(path)
    there = _first_existing(p)
    if there == p and not there.is_dir():
        raise ValueError(f"{flag}: {str(path)!r} is a file; give a folder")
    if not there.is_dir():
        raise ValueError(f"{flag}: {str(there)!r} is a file, not a folder; give another path")
    if there not in (p, p.parent) and not make_folders:
        raise ValueError(f"{flag}: the folder {str(p.parent)!r} does not exist")
    _check_writable(there, flag)
