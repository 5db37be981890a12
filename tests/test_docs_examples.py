"""Every Python block of docs/*.md runs as written (issue 11), except the ones marked as
fragments on their first line (``# fragment: ...``, e.g. a signature, or code that needs the
reader's own arrays); blocks that need the shared datasets say so and are skipped without them;
blocks whose leading comments hold ``# slow: ...`` run with the slow tests.
The README's blocks are run by tests/test_readme.py; the docstring examples of the modules
that no other test doctests run here too."""

import re
from pathlib import Path

import pytest

from tssdpa.data.paths import have_dataset

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCKS = [
    (f"{path.name}[{i}]", block)
    for path in sorted(DOCS.glob("*.md"))
    for i, block in enumerate(
        re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)
    )
]


def _shared_data_present() -> bool:
    return have_dataset("imu/xio-fusion/sensor_data.csv.gz") and have_dataset("ett/ETTh1.csv.gz")


def _marked_slow(block: str) -> bool:
    """A ``# slow: ...`` line among the block's leading comments (a model trained for minutes)."""
    for line in block.lstrip().splitlines():
        if not line.startswith("#"):
            return False
        if line.startswith("# slow:"):
            return True
    return False


PARAMS = [
    pytest.param(name, block, id=name, marks=[pytest.mark.slow] if _marked_slow(block) else [])
    for name, block in BLOCKS
]


@pytest.mark.parametrize("name, block", PARAMS)
def test_docs_python_block_runs_or_is_marked_a_fragment(name, block, tmp_path, monkeypatch):
    first = block.lstrip().splitlines()[0]
    if first.startswith("# fragment:"):
        pytest.skip(first)
    if first.startswith("# needs the shared datasets") and not _shared_data_present():
        pytest.skip("shared datasets absent")
    monkeypatch.chdir(tmp_path)  # examples may write files
    namespace: dict = {}
    exec(compile(block, name, "exec"), namespace)
    assert len(namespace) > 1  # the block defined what it set out to


def test_the_docs_have_runnable_examples():
    runnable = [b for _, b in BLOCKS if not b.lstrip().startswith("# fragment:")]
    assert len(runnable) >= 8


# Modules whose docstring examples (``>>>``) no other test runs; the filters, forecasters,
# learned estimators, noise tails and reports are doctested beside their own tests.
DOCTESTED_HERE = [
    "tssdpa.batch",
    "tssdpa.compare",
    "tssdpa.data.tables",
    "tssdpa.estimators.glitches",
    "tssdpa.estimators.selection",
    "tssdpa.estimators.spikes",
    "tssdpa.files",
    "tssdpa.filters.residual_filter",
    "tssdpa.nn.attention",
    "tssdpa.ops.projection",
    "tssdpa.signal.spd",
    pytest.param("tssdpa.filters.onnx_export", marks=pytest.mark.slow),  # ~20 s of exports
]


@pytest.mark.parametrize("module", DOCTESTED_HERE)
def test_docstring_examples_show_what_the_code_returns(module, tmp_path, monkeypatch):
    import doctest
    import importlib

    monkeypatch.chdir(tmp_path)  # examples may write files
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
