"""Methods by name: the registry the harness, the tables and the ``tssdpa`` command look up.

A :class:`MethodSpec` says how to build one estimator and which configurations of it to try.
Every method of the comparison is registered in :mod:`tssdpa.compare.methods` (imported with
:mod:`tssdpa.compare`); this module holds the registry alone, so that it imports no estimator.

A grid is a function of the task context (``period``, ``lookback``, ``max_horizon``,
``n_train``, ``n_channels``, ``quick``) returning a list of constructor-argument dicts.
Hyperparameters are chosen on the validation split only; every method gets at most
``budget`` configurations (see :func:`search_space`), ours included.
"""

from __future__ import annotations

import inspect
import pkgutil
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: configurations tried per method when the caller does not say
DEFAULT_BUDGET = 8

_TASKS = ("denoise", "forecast")
#: an import path "package.module:Name" (or "...:Class.attribute"), as pkgutil.resolve_name reads
_PATH = r"\w+(\.\w+)*:\w+(\.\w+)*"


@dataclass
class MethodSpec:
    """One named method: how to build it and which configurations to try.

    Attributes
    ----------
    name : str
        The method's name in the tables and on the command line.
    task : {"denoise", "forecast"}
    factory : callable or str
        The estimator class (or any callable returning an estimator), or its import path
        ``"module:Name"``, imported when the method is first built (:meth:`resolve_factory`
        gives the callable either way; ``factory`` keeps what was given): the learned
        methods' torch and Lightning load only where one of them is used, not with every
        ``tssdpa filter``.
    grid : callable
        ``grid(ctx) -> list of dict``: the configurations to choose from.
    family : str
        ``"classical"``, ``"linear-optimal"``, ``"projection"`` or ``"learned"``; the headline
        compares the best ``projection`` / ``learned`` method with the best of the others.
    causal : bool
        Whether output ``t`` depends on input up to ``t`` only (denoisers).
    description : str
    cost : {"low", "high"}
        High-cost methods may have their evaluation origins subsampled.
    fixed : dict
        Constructor arguments given to every configuration.
    history : int or None
        At most this many samples of history before each block of forecast origins (None:
        the task's). For methods whose forecast from ``t`` reads a short state vector and a
        fixed library (the EDM peers) a short history gives the same forecasts, without
        forecasting from every earlier origin of the history too.
    requires_target : bool
        Whether the method fits against a clean reference only. A factory with a
        ``requires_target`` attribute (every estimator class) sets it, and contradicting it is
        an error; for an import path it must be declared here -- listing the methods reads it
        without importing them (``tssdpa methods`` would load torch for the learned ones) --
        and is checked against the class once imported. A plain function keeps what is given.
    min_train : callable or None
        ``min_train(ctx) -> int``: the fewest training samples the method can be fitted on
        (None: no floor of its own). The harness skips it, with one note, on a task whose
        training part is shorter, rather than record an error for every cell.
    skip_if : callable or None
        ``skip_if(ctx) -> str or None``: why the method has no sound run on a task (None: it
        has), e.g. a seasonal forecaster on a series without a season. The harness skips it
        there with one note giving the reason, rather than run something else under its name.
    """

    name: str
    task: str
    factory: Callable[..., Any] | str
    grid: Callable[[dict], list[dict]] = field(default=lambda ctx: [{}])
    family: str = "classical"
    causal: bool = True
    description: str = ""
    cost: str = "low"
    fixed: dict = field(default_factory=dict)
    history: int | None = None
    requires_target: bool = False
    min_train: Callable[[dict], int] | None = None
    skip_if: Callable[[dict], str | None] | None = None
    # the factory a "module:Name" names, imported once (``factory`` keeps what was given)
    _resolved: Callable[..., Any] | None = field(default=None, init=False, repr=False,
                                                 compare=False)  # fmt: skip

    def __post_init__(self):
        if isinstance(self.factory, str):
            if not re.fullmatch(_PATH, self.factory):
                raise ValueError(f"method {self.name!r}: factory must be a callable or "
                                 f"'module:Name', got {self.factory!r}")  # fmt: skip
        elif not callable(self.factory):
            raise TypeError(f"method {self.name!r}: factory must be a callable or "
                            f"'module:Name', got {self.factory!r}")  # fmt: skip
        else:
            self._check_requires_target(self.factory)

    def why_skipped(self, ctx: dict) -> str | None:
        """Why the method cannot run on a task of context ``ctx`` (its ``min_train``, its
        ``skip_if``), or None where it can."""
        need = None if self.min_train is None else self.min_train(ctx)
        if need is not None and ctx["n_train"] < need:
            return (
                f"its training part of {ctx['n_train']} samples is shorter than the {need} "
                "the method needs; a longer series or shorter horizons would let it run"
            )
        return None if self.skip_if is None else self.skip_if(ctx)

    def resolve_factory(self) -> Callable[..., Any]:
        """The factory: itself, or the callable its ``"module:Name"`` path names (imported on
        the first call; an ImportError naming the method where the path leads nowhere)."""
        if not isinstance(self.factory, str):
            return self.factory
        resolved = self._resolved  # read once: threads may resolve it at the same time
        if resolved is None:
            try:
                resolved = pkgutil.resolve_name(self.factory)
            except (ImportError, AttributeError, ValueError) as exc:
                raise ImportError(f"method {self.name!r}: factory {self.factory!r}: {exc}") from exc
            self._check_requires_target(resolved)
            self._resolved = resolved
        return resolved

    def _check_requires_target(self, factory) -> None:
        """Where ``factory`` says whether it needs a target (its ``requires_target``), that
        is the truth: a class given directly sets the field; a declaration it contradicts --
        True for a class without the need, or either way for an import path, whose
        declaration ``tssdpa methods`` reads instead of importing it -- is a ``ValueError``.
        A factory that does not say (a plain function) keeps the declaration."""
        if not hasattr(factory, "requires_target"):
            return
        own = bool(factory.requires_target)
        if own != self.requires_target and (self.requires_target or isinstance(self.factory, str)):
            raise ValueError(f"method {self.name!r}: requires_target={self.requires_target} but "
                             f"its factory's requires_target is {own}: declare "
                             f"requires_target={own} in its MethodSpec")  # fmt: skip
        self.requires_target = own

    def build(self, ctx: dict | None = None, seed: int | None = None, **params):
        """Instantiate with ``fixed`` updated by ``params``.

        ``lookback`` and ``horizon`` (from ``ctx["lookback"]`` / ``ctx["max_horizon"]``) and
        ``random_state`` (from ``seed``; ``seed`` itself for a factory that still takes
        that name) are filled in when the constructor takes them and they are not given.
        """
        factory = self.resolve_factory()
        kw = dict(self.fixed)
        kw.update(params)
        ctx = ctx or {}
        for arg, key in (("lookback", "lookback"), ("horizon", "max_horizon")):
            if arg not in kw and key in ctx and _accepts(factory, arg):
                kw[arg] = ctx[key]
        if seed is not None and not {"random_state", "seed"} & set(kw):
            if _accepts(factory, "random_state"):
                kw["random_state"] = seed
            elif _accepts(factory, "seed"):
                kw["seed"] = seed
        return factory(**kw)


_REGISTRY: dict[tuple[str, str], MethodSpec] = {}


def register(spec: MethodSpec, overwrite: bool = False) -> MethodSpec:
    """Add ``spec`` to the registry (``overwrite`` to replace an existing name); returns it."""
    if spec.task not in _TASKS:
        raise ValueError(f"spec.task must be 'denoise' or 'forecast'; got {spec.task!r}")
    key = (spec.task, spec.name)
    if key in _REGISTRY and not overwrite:
        raise ValueError(f"{spec.task} method name {spec.name!r} is already registered")
    _REGISTRY[key] = spec
    return spec


def get_method(name: str, task: str) -> MethodSpec:
    """The ``task`` method registered as ``name``; ValueError listing the known names."""
    if task not in _TASKS:
        raise ValueError(f"task must be 'denoise' or 'forecast'; got {task!r}")
    if (task, name) not in _REGISTRY:
        raise ValueError(
            f"method must be one of {available_methods(task)} for {task}; got {name!r}"
        )
    return _REGISTRY[(task, name)]


def available_methods(task: str | None = None, family: str | None = None) -> list[str]:
    """Registered method names in registration order, optionally for one task and/or family."""
    return [
        n
        for (t, n), s in _REGISTRY.items()
        if (task is None or t == task) and (family is None or s.family == family)
    ]


def search_space(
    spec: MethodSpec, ctx: dict, budget: int = DEFAULT_BUDGET, seed: int = 0
) -> list[dict]:
    """The configurations to try: the grid, randomly subsampled to ``budget`` when larger.

    The subsample is drawn with ``random.Random(seed)`` so that a run is repeatable.
    """
    grid = list(spec.grid(ctx)) or [{}]
    if len(grid) > budget:
        rng = random.Random(seed)
        grid = rng.sample(grid, budget)
    return grid


def _accepts(factory, name: str) -> bool:
    return name in inspect.signature(factory).parameters
