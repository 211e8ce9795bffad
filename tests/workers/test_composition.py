"""The composition root builds every activity, each method is named as it is registered, and
no import runs back up the layers.

Histories refer to activities by their registered names, so those never change; the Python
method carries the same name so a reader of a workflow finds the activity it calls. The layers,
lowest first: ``schemas``; ``store`` and ``contract``; ``activities``, ``workflows`` and
``temporal``; ``workers`` and ``cli``. Only ``workers`` (the composition root) and ``cli``
(entry points) put them together.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import activities as activities_package
from schemas.settings import Settings
from workers.build import activities, build_dependencies

ROOT = Path(__file__).resolve().parents[2]
ABOVE = {
    "schemas": {"contract", "store", "activities", "workflows", "temporal", "workers", "cli"},
    "store": {"contract", "activities", "workflows", "temporal", "workers", "cli"},
    "contract": {"store", "activities", "workflows", "temporal", "workers", "cli"},
}


def _imported_packages(path: Path) -> set[str]:
    packages = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            packages |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            packages.add(node.module.split(".")[0])
    return packages


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_no_import_runs_back_up(package: str) -> None:
    upward = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        for name in _imported_packages(path) & ABOVE[package]
    }
    assert not upward


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
