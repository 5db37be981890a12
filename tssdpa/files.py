"""Writing a file so that a failure never leaves it half-written."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

__all__ = ["replacing", "same_path"]


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
    tmp = target.with_name(f".{short}.{uuid.uuid4().hex[:8]}.partial")
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
