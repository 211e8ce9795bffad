"""The composition root builds every activity, and each method is named as it is registered.

Histories refer to activities by their registered names, so those never change; the Python
method carries the same name so a reader of a workflow finds the activity it calls.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import Counter
from typing import Any

import activities as activities_package
from schemas.settings import Settings
from workers.build import activities, build_dependencies


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
