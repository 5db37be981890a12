"""A CSV output written as its input was, so that the program the input came from reads it.

:func:`write_csv`: a table written with what its input's text held besides its cells -- a
byte-order mark, a spreadsheet's ``sep=;`` first line, its line endings (read with the table:
:func:`~tssdpa.data.csv_files.check_text`) -- its separator and its decimal mark.

Written as plain UTF-8 with ``\\n`` endings, a file Excel had saved (``CSV UTF-8``: a UTF-8
byte-order mark, CRLF; in much of Europe ``;`` and a ``sep=;`` line) opened with ``Â°C`` in
its header -- Excel reads a file without the mark in the locale's code page -- and, where the
locale's list separator is another, all in one column.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import time
import zipfile

import pandas as pd

__all__ = ["write_csv"]


def _open_packed(path, compression):
    """``path`` opened to write bytes through ``compression`` (:func:`compression`'s)."""
    method = compression["method"] if isinstance(compression, dict) else compression
    if method == "zip":  # one member, named as pandas names it, dated now (not 1980)
        archive = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        member = zipfile.ZipInfo(compression["archive_name"], time.localtime()[:6])
        member.compress_type = zipfile.ZIP_DEFLATED
        # the size is not known before it is written: without ZIP64 a member over 2 GiB
        # failed at close ("File size too large, try using force_zip64")
        return archive, archive.open(member, "w", force_zip64=True)
    opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open, None: open}[method]
    return None, opener(path, "wb")


def write_csv(df: pd.DataFrame, path, sep: str, compression=None) -> None:
    """``df`` written to ``path`` as CSV with ``sep`` and, from its ``attrs`` (set where it
    was read from a CSV: :func:`~tssdpa.data.csv_files.read_csv_file`), the input's decimal
    mark, byte-order mark and line endings, and its ``sep=`` line where ``sep`` is the
    separator it declared (a ``.tsv`` output of a ``;`` input: tabs, and no line saying
    ``;``); UTF-8 without a mark and ``\\n`` for a table read otherwise."""
    form = df.attrs
    newline = form.get("newline", "\n")
    archive, raw = _open_packed(path, compression)
    try:
        with io.TextIOWrapper(raw, encoding=form.get("bom") or "utf-8", newline="") as text:
            if form.get("sep_line") and sep == form.get("sep"):
                text.write(f"sep={sep}{newline}")
            df.to_csv(text, index=False, sep=sep, decimal=form.get("decimal", "."),
                      lineterminator=newline)  # fmt: skip
    finally:
        if archive is not None:
            archive.close()
