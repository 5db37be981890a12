"""Download the real datasets into the user cache, checking sha256.

The files are fetched from their canonical public repositories at pinned commits (see
``datasets/MANIFEST.json`` and each PROVENANCE.md in the shared folder), verified against the
published sha256 of the original CSV, then stored gzip-compressed (``gzip -9 -n`` equivalent,
a format change that the ETT licence allows) under the layout :func:`find_dataset` expects.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.request
import zlib
from pathlib import Path

from tssdpa.data.paths import CACHE_DIR

__all__ = ["MANIFEST", "download", "sha256_file"]

_ETT = "https://raw.githubusercontent.com/zhouhaoyi/ETDataset/1d16c8f4f943005d613b5bc962e9eeb06058cf07/ETT-small/"
_FUSION = "https://raw.githubusercontent.com/xioTechnologies/Fusion/d69784c8f7058a6545802b8852d26d6fcfd5e119/Examples/Python/"
_GAIT = "https://raw.githubusercontent.com/xioTechnologies/Gait-Tracking/ac0dbf6271d1ceb3d6ea90cec09976ec4bd9dc76/"

#: relative path -> (url of the original file, sha256 of the original (uncompressed) file, licence)
MANIFEST: dict[str, tuple[str, str, str]] = {
    "ett/ETTh1.csv.gz": (
        _ETT + "ETTh1.csv",
        "f18de3ad269cef59bb07b5438d79bb3042d3be49bdeecf01c1cd6d29695ee066",
        "CC BY-ND 4.0",
    ),
    "ett/ETTh2.csv.gz": (
        _ETT + "ETTh2.csv",
        "a3dc2c597b9218c7ce1cd55eb77b283fd459a1d09d753063f944967dd6b9218b",
        "CC BY-ND 4.0",
    ),
    "ett/ETTm1.csv.gz": (
        _ETT + "ETTm1.csv",
        "6ce1759b1a18e3328421d5d75fadcb316c449fcd7cec32820c8dafda71986c9e",
        "CC BY-ND 4.0",
    ),
    "ett/ETTm2.csv.gz": (
        _ETT + "ETTm2.csv",
        "db973ca252c6410a30d0469b13d696cf919648d0f3fd588c60f03fdbdbadd1fd",
        "CC BY-ND 4.0",
    ),
    "imu/xio-fusion/sensor_data.csv.gz": (
        _FUSION + "sensor_data.csv",
        "a2833a207b4c0c51d52ee62e42069d1a11cf94b1aca1cd46a54d5e8fce577dcd",
        "MIT (x-io Technologies)",
    ),
    "imu/xio-gait-tracking/short_walk.csv.gz": (
        _GAIT + "short_walk.csv",
        "35abfa9b3224cb69962917e945f2dc299595c8e5a8c427f77019dc09c27710e0",
        "MIT (x-io Technologies)",
    ),
}


def sha256_file(path: str | os.PathLike, gz: bool = False) -> str:
    """sha256 of a file's bytes (of the decompressed bytes when ``gz``)."""
    h = hashlib.sha256()
    opener = gzip.open if gz else open
    with opener(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _cached_sha256(path: Path) -> str | None:
    """sha256 of a cached file's decompressed bytes; None where it is no whole gzip file (a
    damaged copy is fetched again)."""
    try:
        return sha256_file(path, gz=True)
    except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
        return None


def download(
    names: list[str] | None = None,
    cache_dir: str | os.PathLike | None = None,
    manifest: dict[str, tuple[str, str, str]] | None = None,
    force: bool = False,
    log=print,
) -> list[Path]:
    """Fetch ``names`` (relative paths of :data:`MANIFEST`; all when None) into ``cache_dir``.

    A file already present with the right sha256 is kept. A download whose sha256 differs is
    deleted and raises ``ValueError`` naming the file.
    """
    manifest = MANIFEST if manifest is None else manifest
    if isinstance(names, str):  # it was split into letters: "unknown dataset 'e'"
        raise ValueError(f"names must be a list of dataset paths; got the string {names!r}")
    names = list(manifest) if names is None else list(names)
    for n in names:
        if n not in manifest:
            raise ValueError(f"names: unknown dataset {n!r}; known: {sorted(manifest)}")
    root = Path(cache_dir) if cache_dir is not None else CACHE_DIR
    done = []
    for rel in names:
        url, sha, _lic = manifest[rel]
        dest = root / rel
        if dest.is_file() and not force and _cached_sha256(dest) == sha:
            log(f"ok      {rel} (cached, sha256 verified)")
            done.append(dest)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            raw = Path(tmp) / "raw"
            log(f"fetch   {url}")
            with urllib.request.urlopen(url, timeout=60) as r, open(raw, "wb") as f:
                shutil.copyfileobj(r, f)
            got = sha256_file(raw)
            if got != sha:
                raise ValueError(f"sha256 mismatch for {rel}: expected {sha}, got {got}")
            part = Path(tmp) / "out.gz"
            with open(raw, "rb") as fi, open(part, "wb") as fo:
                with gzip.GzipFile(
                    filename="", mode="wb", compresslevel=9, fileobj=fo, mtime=0
                ) as gz:
                    shutil.copyfileobj(fi, gz)
            os.replace(part, dest)
        log(f"ok      {rel} -> {dest}")
        done.append(dest)
    return done
