"""The README's Python examples run as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may save files
    namespace: dict = {}
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), namespace)
    assert len(namespace) > 1  # the block defined what it set out to


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2
