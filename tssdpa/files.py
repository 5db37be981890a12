"""Writing a file so that a failure never leaves it half-written, and under a name that says
what it holds."""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from pathlib import Path

__all__ = [
    "OTHER_FORMATS",
    "PARTIAL",
    "WRITTEN",
    "check_table_name",
    "replacing",
    "same_path",
    "table_format",
]


#: the temporary file :func:`replacing` writes beside its target: ``.NAME.8HEX.partial``
PARTIAL = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{8}\.partial")


@contextlib.contextmanager
def replacing(target):
    """Yield a temporary path beside ``target`` to write to; renamed onto ``target`` when the
    block ends without an error (``os.replace``: atomic on one file system), removed either
    way. A failed write (a full disk, a killed process) leaves any earlier ``target`` as it
    was; a replaced ``target`` keeps its permission bits.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "a.txt"
    >>> with replacing(p) as tmp:
    ...     _ = tmp.write_text("done")
    >>> p.read_text(), sorted(q.name for q in p.parent.iterdir())
    ('done', ['a.txt'])
    """
    target = Path(target)
    # the name cut short: a name the file system takes (255 bytes) may not take 18 more
    short = target.name.encode()[:100].decode(errors="ignore")
    tmp = target.with_name(f".{short}.{uuid.uuid4().hex[:8]}.partial")  # PARTIAL matches it
    try:
        yield tmp
        with contextlib.suppress(OSError):  # an earlier file's mode: a private one stays so
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def same_path(a, b) -> bool:
    """Whether ``a`` and ``b`` name one file once links and ``..`` are resolved: the test by
    which an output that would overwrite an input (or a config) is refused.

    >>> same_path("x/../a.csv", "a.csv"), same_path("a.csv", "b.csv")
    (True, False)
    """
    return Path(a).resolve() == Path(b).resolve()


#: endings of other formats than CSV and Parquet: a CSV written under such a name
#: (``--out out.xlsx``) was one no program of that format opens
OTHER_FORMATS = (".xlsx", ".xlsm", ".xlsb", ".xls", ".ods", ".json", ".jsonl", ".ndjson",
                 ".feather", ".arrow", ".orc", ".avro", ".h5", ".hdf5", ".hdf", ".pkl",
                 ".pickle", ".npy", ".npz", ".mat", ".xml", ".html", ".htm", ".db",
                 ".sqlite",
                 # a model's: --out m/arrays.safetensors wrote CSV over the model it applied
                 ".safetensors", ".onnx", ".pt", ".pth", ".ckpt")  # fmt: skip
#: the compressions :func:`~tssdpa.data.tables.write_table` writes a CSV with
_PACKED = (".gz", ".bz2", ".xz", ".zip")
#: compressions and archives it does not write (CSV text went under such a name)
_UNWRITTEN_PACKING = (".zst", ".tgz", ".tar", ".lz4", ".7z", ".z", ".rar", ".br", ".lzma",
                      ".tbz2", ".sz", ".lz")  # fmt: skip
#: what :func:`~tssdpa.data.tables.write_table` writes, told where another format is asked for
WRITTEN = ("CSV (.csv, .tsv, .txt, or no ending; compressed: add .gz, .bz2, .xz or .zip) or "
           "Parquet (.parquet, .pq)")  # fmt: skip


def table_format(path) -> tuple[str, str]:
    """``(format, compression)`` endings of a table's name, lower case: ``("", "")`` for
    ``log``, ``(".csv", "")`` for ``a.csv``, ``(".tsv", ".gz")`` for ``a.tsv.gz`` (the format
    under a compression :func:`~tssdpa.data.tables.write_table` writes; ``("", ".gz")`` for
    ``a.gz``). Any other last ending is the format (``out.tsv.csv``: ``.csv``)."""
    name = Path(path).name.lower()
    last = Path(name).suffix
    if last in _PACKED:
        return Path(name[: -len(last)]).suffix, last
    return last, ""


def check_table_name(path, flag: str | None = None) -> None:
    """``ValueError`` (starting with ``flag`` where given) where the name of the table ``path``
    asks for a format :func:`~tssdpa.data.tables.write_table` does not write -- ``.xlsx``,
    ``.json``, ``.csv.zst``, ``.csv.lz4``, ``.tar.gz``, a compressed Parquet file: it wrote
    CSV text under that name."""
    inner, packed = table_format(path)
    if (
        inner in OTHER_FORMATS
        or inner in _UNWRITTEN_PACKING
        or (packed and inner in (".parquet", ".pq"))
    ):
        why = (f"{str(path)!r} names a {inner + packed} file, which is not written here; give "
               f"a name for {WRITTEN}")  # fmt: skip
        raise ValueError(f"{flag}: {why}" if flag else why)
