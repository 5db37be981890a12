"""The package's shape, kept true by CI: imports point down the tiers, no cycles, small modules.

Every ``import`` and ``from ... import`` in ``tssdpa/`` counts, including the lazy ones inside
functions, so a cycle cannot hide behind a deferred import. The tiers are those of
``docs/architecture.md``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tssdpa"

#: lower tiers first; a module may import its own unit and units of strictly lower tiers
TIERS = [
    ["checks", "files"],  # argument checks; writing a file whole or not at all
    ["ops"],
    ["nn", "signal"],
    ["estimators", "data"],
    ["baselines"],
    ["models"],
    ["filters"],
    ["compare", "translation"],
    ["export", "batch"],  # deployment: the ONNX step, many files on Dask
    ["cli", "demo", "functional", "naive", "__init__"],  # entry points, facade, shims
    ["__main__"],  # python -m tssdpa: the command line
]
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(target: str) -> str | None:
    """The tssdpa module a dotted name lives in (``pkg.mod.function`` -> ``pkg.mod``)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def _imports(name: str) -> set[str]:
    """tssdpa modules that module ``name`` imports anywhere in its source: import statements
    (relative ones resolved), and module names given as strings (``importlib.import_module``,
    tables of lazily imported names)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import submodule` depends on the submodule (Python initialises the
            # package first either way); `from pkg import name` on the package itself
            subs = [f"{base}.{a.name}" for a in node.names]
            targets = [t for t in subs if t in MODULES]
            if len(targets) < len(subs):
                targets.append(base)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # a dotted module name ("tssdpa" alone is also a program and folder name)
            targets = [node.value] if node.value in MODULES and "." in node.value else []
        else:
            continue
        for t in targets:
            t = _resolve(t)
            if t is not None and t.startswith("tssdpa") and t != name:
                out.add(t)
    return out


GRAPH = {name: _imports(name) for name in MODULES}


def _unit(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def _tier(unit: str) -> int:
    for i, units in enumerate(TIERS):
        if unit in units:
            return i
    raise AssertionError(f"{unit!r} is in no tier of tests/test_layout.py: place it")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_between_modules_lazy_imports_included():
    assert _cycles(GRAPH) == []


def test_no_import_cycle_between_subpackages():
    units: dict[str, set[str]] = {}
    for mod, deps in GRAPH.items():
        units.setdefault(_unit(mod), set()).update(_unit(d) for d in deps if _unit(d) != _unit(mod))
    assert _cycles(units) == []


def test_every_import_points_to_the_same_unit_or_a_lower_tier():
    upward = [
        f"{mod} -> {dep}"
        for mod, deps in GRAPH.items()
        for dep in deps
        if _unit(dep) != _unit(mod) and _tier(_unit(dep)) >= _tier(_unit(mod))
    ]
    assert upward == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_is_at_most_500_lines(name):
    n = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{MODULES[name]} has {n} lines"


def test_the_checker_sees_lazy_imports():
    # tssdpa/__init__.py imports the estimators only inside __getattr__
    assert "tssdpa.filters" in GRAPH["tssdpa"]


def test_the_checker_sees_relative_and_string_imports(tmp_path, monkeypatch):
    fake = {"tssdpa.signal.embedding": tmp_path / "embedding.py"}
    fake["tssdpa.signal.embedding"].write_text(
        "from ..filters import projection\n"
        "import importlib\n"
        "def f():\n"
        "    return importlib.import_module('tssdpa.compare.harness')\n"
    )
    monkeypatch.setitem(MODULES, "tssdpa.signal.embedding", fake["tssdpa.signal.embedding"])
    found = _imports("tssdpa.signal.embedding")
    assert {"tssdpa.filters.projection", "tssdpa.compare.harness"} <= found
