"""The composition root builds every activity, each method is named as it is registered, no
import runs back up the layers, no two modules import each other, and no two parts of the
domain layer (``activities/``) do.

Histories refer to activities by their registered names, so those never change; the Python
method carries the same name so a reader of a workflow finds the activity it calls.

The layers, lowest first, are ``LAYERS`` (``docs/architecture.md``, Packages): a package may
import itself and any package below it, never one above it or beside it. Every import counts,
lazy ones inside functions too. Only ``workers`` (the composition root) and the entry points
above it put the lower layers together. ``bench``, ``systemtests`` and ``tests`` stand outside
the product, above every layer: they may import any package, and each other (the benchmarks
reuse the tests' servers, the tests run the system tests' checks). A piece two layers share
belongs in the lower one, or below both.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import activities as activities_package
from schemas.settings import Settings
from tests.workers.import_graph import Import, cycles, imports, packages
from workers.build import activities, build_dependencies

LAYERS: list[set[str]] = [
    {"schemas"},
    {"contract"},
    {"store"},
    {"observability"},
    {"temporal"},
    {"activities"},
    {"workflows"},
    {"usecases"},
    {"workers"},
    {"webchannel", "teamchat"},
    {"cli"},
]
"""Every product package, lowest first; the packages of one layer are peers."""

OUTSIDE = {"bench", "systemtests", "tests"}
"""Packages outside the product: they may import anything."""


def _layer_of(package: str) -> int:
    return next(rank for rank, layer in enumerate(LAYERS) if package in layer)


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    return imports()


def test_every_package_has_a_layer() -> None:
    placed = set().union(*LAYERS) | OUTSIDE
    assert not set(packages()) - placed, "place each new package in LAYERS (or OUTSIDE)"


def test_no_import_runs_back_up(graph: dict[str, list[Import]]) -> None:
    upward = []
    for module, found in graph.items():
        package = module.split(".")[0]
        if package in OUTSIDE:
            continue
        for imported in found:
            target = imported.module.split(".")[0]
            if target != package and (target in OUTSIDE or _layer_of(target) >= _layer_of(package)):
                upward.append(f"{module} (line {imported.line}) imports {imported.written}")
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_no_two_modules_import_each_other(graph: dict[str, list[Import]]) -> None:
    edges = {module: {i.module for i in found} for module, found in graph.items()}
    pairs = sorted(
        f"{a} <-> {b}" for a, targets in edges.items() for b in targets if a < b and a in edges[b]
    )
    assert not pairs, "modules importing each other:\n" + "\n".join(pairs)


def test_no_import_cycle(graph: dict[str, list[Import]]) -> None:
    edges = {module: {i.module for i in found} for module, found in graph.items()}
    found = [", ".join(c) for c in cycles(edges)]
    assert not found, "import cycles (the modules of each):\n" + "\n".join(found)


def test_no_two_parts_of_the_domain_import_each_other(graph: dict[str, list[Import]]) -> None:
    """A feature of ``activities/`` and another (``context`` among them) depend one way only."""

    def part(module: str) -> str:
        return ".".join(module.split(".")[:2])

    uses: dict[str, set[str]] = {}
    for module, found in graph.items():
        if module.startswith("activities."):
            targets = {part(i.module) for i in found if i.module.startswith("activities.")}
            uses.setdefault(part(module), set()).update(targets - {part(module)})
    pairs = sorted(f"{a} <-> {b}" for a in uses for b in uses[a] if a < b and a in uses.get(b, ()))
    assert not pairs, "parts of activities/ importing each other:\n" + "\n".join(pairs)


def test_the_graph_sees_lazy_and_relative_imports_and_finds_their_cycles(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from . import c\n")
    (package / "a.py").write_text("def f():\n    from pkg.b import g\n")
    (package / "b.py").write_text("from .sub.c import h\n")
    (package / "sub" / "c.py").write_text("import pkg.a\n")

    graph = imports(tmp_path)

    assert {m: sorted(i.module for i in found) for m, found in graph.items()} == {
        "pkg": [],
        "pkg.a": ["pkg.b"],
        "pkg.b": ["pkg.sub.c"],
        "pkg.sub": ["pkg.sub.c"],
        "pkg.sub.c": ["pkg.a"],
    }
    assert cycles({m: {i.module for i in found} for m, found in graph.items()}) == [
        ["pkg.a", "pkg.b", "pkg.sub.c"]
    ]


def _activity_methods() -> list[tuple[str, str, str]]:
    """(class qualname, method name, registered name) of every activity method in activities/."""
    found = []
    for module_info in pkgutil.walk_packages(
        activities_package.__path__, activities_package.__name__ + "."
    ):
        module = importlib.import_module(module_info.name)
        for cls in vars(module).values():
            if not inspect.isclass(cls) or cls.__module__ != module.__name__:
                continue
            for name, member in vars(cls).items():
                definition: Any = getattr(member, "__temporal_activity_definition", None)
                if definition is not None:
                    found.append((cls.__qualname__, name, definition.name))
    return found


def test_every_activity_method_is_named_as_it_is_registered() -> None:
    methods = _activity_methods()

    assert len(methods) > 30
    mismatched = [
        f"{cls}.{name} registered as {registered}"
        for cls, name, registered in methods
        if registered.rsplit(".", 1)[-1] != name
    ]
    assert not mismatched


async def test_the_root_registers_each_activity_once_generation_included() -> None:
    settings = Settings(database_url="postgresql+psycopg://nobody@127.0.0.1:1/none")
    deps = build_dependencies(settings, providers={}, meters=[])
    try:
        registered = Counter(
            fn.__temporal_activity_definition.name  # type: ignore[attr-defined]
            for fn in activities(deps)
        )
    finally:
        await deps.aclose()

    assert registered["generation.generate"] == 1
    assert max(registered.values()) == 1
    assert {name for _, _, name in _activity_methods()} == set(registered)
