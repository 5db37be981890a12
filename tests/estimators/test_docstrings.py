"""Every public estimator documents each of its constructor parameters in the numpydoc
``Parameters`` section of its class docstring (what ``help(cls)`` and an IDE show): half the
baselines described theirs in prose or not at all (``AutoRegForecaster``'s ``trend``,
``SavitzkyGolayFilter``'s ``polyorder``, ``ETSForecaster``'s ``seasonal``)."""

from __future__ import annotations

import inspect

import pytest

import tssdpa.baselines
import tssdpa.filters

ESTIMATORS = [
    getattr(module, name)
    for module in (tssdpa.filters, tssdpa.baselines)
    for name in module.__all__
    if inspect.isclass(getattr(module, name))
]


def documented_parameters(cls) -> set[str]:
    """The names listed in the ``Parameters`` section of ``cls``'s docstring: its unindented
    lines, ``name : type`` or ``name1, name2 : ...``, up to the next section's header."""
    lines = (inspect.getdoc(cls) or "").splitlines()
    starts = [i for i, line in enumerate(lines[:-1])
              if line == "Parameters" and set(lines[i + 1]) == {"-"}]  # fmt: skip
    if not starts:
        return set()
    names: set[str] = set()
    section = lines[starts[0] + 2 :]
    for i, line in enumerate(section):
        if i + 1 < len(section) and line and set(section[i + 1]) == {"-"}:
            break  # the next section
        if line and not line[0].isspace():
            names |= {n.strip() for n in line.partition(" : ")[0].split(",") if n.strip()}
    return names


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_constructor_parameter_is_in_the_parameters_section(cls):
    params = [n for n in inspect.signature(cls.__init__).parameters if n != "self"]
    missing = [n for n in params if n not in documented_parameters(cls)]
    assert not missing, f"{cls.__name__} does not document {missing}"
