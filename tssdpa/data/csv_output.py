"""A CSV output written as its input was, so that the program the input came from reads it.

* :func:`text_form`: what an input's text holds besides its cells -- a byte-order mark, a
  spreadsheet's ``sep=;`` first line, its line endings;
* :func:`write_csv`: a table written with them, its separator and its decimal mark.

Written as plain UTF-8 with ``\\n`` endings, a file Excel had saved (``CSV UTF-8``: a UTF-8
byte-order mark, CRLF; in much of Europe ``;`` and a ``sep=;`` line) opened with ``Â°C`` in
its header -- Excel reads a file without the mark in the locale's code page -- and, where the
locale's list separator is another, all in one column.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import time
import zipfile
from pathlib import Path

import pandas as pd

from tssdpa.data.csv_files import declared_separator, open_bytes, text_encoding

__all__ = ["text_form", "write_csv"]


def text_form(p: Path) -> dict:
    """``{"bom": ..., "sep_line": ..., "newline": ...}`` of the CSV ``p``: the encoding that
    writes its byte-order mark (``"utf-8-sig"``, ``"utf-16"``, ``"utf-32"``; ``None``:
    none), whether its first line is ``sep=;`` (:func:`declared_separator`) and its first
    line's ending (``"\\r\\n"`` or ``"\\n"``); ``{}`` for a file read by pandas alone (a
    ``.tar`` or ``.zst`` archive)."""
    raw = open_bytes(p)
    if raw is None:
        return {}
    with raw:
        head = raw.read(1 << 16)
    encoding = text_encoding(head)
    if head.startswith(codecs.BOM_UTF8):
        bom = "utf-8-sig"
    else:
        bom = None if encoding == "utf-8-sig" else encoding  # UTF-16 / 32: read by their mark
    first = head.decode(encoding, errors="replace").split("\n", 1)[0]
    return {"bom": bom, "sep_line": declared_separator(p) is not None,
            "newline": "\r\n" if first.endswith("\r") else "\n"}  # fmt: skip


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
    was read from a CSV: :func:`text_form`), the input's decimal mark, byte-order mark and
    line endings, and its ``sep=`` line where ``sep`` is the separator it declared (a
    ``.tsv`` output of a ``;`` input: tabs, and no line saying ``;``); UTF-8 without a mark
    and ``\\n`` for a table read otherwise."""
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
