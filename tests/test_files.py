"""tssdpa.files: writing a file whole or not at all."""

from __future__ import annotations

import pytest

from tssdpa.files import replacing


@pytest.mark.parametrize("stem", ["x" * 250, "\u6e29" * 80], ids=["ascii", "utf8"])
def test_a_name_as_long_as_the_file_system_takes_is_written(tmp_path, stem):
    # "File name too long": the temporary name added 18 characters to the target's
    target = tmp_path / (stem + ".csv")
    target.write_text("before")
    with replacing(target) as tmp:
        tmp.write_text("after")
    assert target.read_text() == "after"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_failed_write_leaves_the_earlier_file_and_no_temporary_one(tmp_path):
    target = tmp_path / "a.csv"
    target.write_text("before")
    with pytest.raises(OSError, match="disk full"), replacing(target) as tmp:
        tmp.write_text("half")
        raise OSError("disk full")
    assert target.read_text() == "before"
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"]


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    # a private (0600) output came back world-readable (0644, the umask's) after a rewrite
    target = tmp_path / "a.csv"
    target.write_text("before")
    target.chmod(0o600)
    with replacing(target) as tmp:
        tmp.write_text("after")
    assert target.read_text() == "after"
    assert target.stat().st_mode & 0o777 == 0o600
