"""The project's imports as a graph of modules, read from the source with ``ast``.

Every import counts, wherever it stands: at the top of a module, inside a function (a lazy
import still ties the two modules together) or under ``TYPE_CHECKING``. Imports of anything
outside the project's top-level packages (the standard library, third parties) are left out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Import:
    """One import statement's target, as written, and the project module it resolves to."""

    written: str
    """The dotted name as the statement names it (``from a.b import c`` gives ``a.b.c``)."""
    module: str
    """The project module that name is, or the one that defines it."""
    line: int


def packages(root: Path = ROOT) -> list[str]:
    """The project's top-level packages: every folder beside ``pyproject.toml`` with an
    ``__init__.py``."""
    return sorted(
        path.name
        for path in root.iterdir()
        if path.is_dir() and (path / "__init__.py").is_file() and not path.name.startswith(".")
    )


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of every top-level package, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in packages(root):
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a project module, if any."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _written(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    """The dotted names an import statement reaches for, relative ones made absolute."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        here = module.split(".") if is_package else module.split(".")[:-1]
        parent = here[: len(here) - (node.level - 1)]
        base = ".".join([*parent, node.module] if node.module else parent)
    else:
        base = node.module or ""
    for alias in node.names:
        # ``from a import b`` reaches the module ``a.b`` when there is one, else ``a``.
        yield f"{base}.{alias.name}" if alias.name != "*" else base


def imports(root: Path = ROOT) -> dict[str, list[Import]]:
    """Each project module's imports of other project modules."""
    known = modules(root)
    graph: dict[str, list[Import]] = {}
    for module, path in known.items():
        found = []
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for written in _written(node, module, path.name == "__init__.py"):
                target = _resolve(written, known)
                if target is not None and target != module:
                    found.append(Import(written=written, module=target, line=node.lineno))
        graph[module] = found
    return graph


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: each strongly connected component of more than one module, sorted.

    Tarjan's algorithm, iterative so a deep chain of imports cannot overflow the stack.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)
