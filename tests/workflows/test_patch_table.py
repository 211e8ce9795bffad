"""The table of patches in docs/operations.md ("The life of a patch") matches the code.

Every patch ID the workflow code declares or asks for has a row, every row names an ID the code
still holds, and a row's stage is the call the code makes: ``deprecated`` for an ID asked for
only through ``workflow.deprecate_patch``, ``patched`` for one still asked through
``workflow.patched``. Read from the source, so no server is needed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPERATIONS = ROOT / "docs" / "operations.md"
PACKAGES = ("workflows", "contract", "temporal")
"""Where workflow code asks for patches (``temporal`` holds the signing interceptor)."""

PATCHED = {"patched", "task_stable_id"}
"""Calls that keep the old path: ``contract.run_ids.task_stable_id`` takes a patch ID."""
DEPRECATED = {"deprecate_patch"}

ROW = re.compile(r"^\| `([^`]+)` \|[^|]*\|[^|]*\|[^|]*\| ([a-z]+)[^|]*\|")
"""A row of the patch table: its ID and the first word of its stage."""


def _modules() -> dict[str, ast.Module]:
    return {
        ".".join(path.relative_to(ROOT).with_suffix("").parts): ast.parse(path.read_text())
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level string constants whose name says they are a patch."""
    found: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and "PATCH" in node.targets[0].id
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found[node.targets[0].id] = node.value.value
    return found


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the module it stands for, or ``module:NAME`` for an imported name."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                local = alias.asname or alias.name
                names[local] = f"{node.module}.{alias.name}"
                names[f"{local}:"] = f"{node.module}:{alias.name}"
    return names


def _calls() -> tuple[dict[str, str], dict[str, set[str]]]:
    """Every declared patch ID (by ``module:NAME``) and, per ID, the calls that ask for it."""
    modules = _modules()
    constants = {
        f"{module}:{name}": value
        for module, tree in modules.items()
        for name, value in _constants(tree).items()
    }
    asked: dict[str, set[str]] = {}
    for module, tree in modules.items():
        imports = _imports(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            func = node.func
            kind = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if kind not in PATCHED | DEPRECATED:
                continue
            # An activation's steps ask ``shape.patched(data, PATCH)``: the patch comes second.
            arg = node.args[1] if len(node.args) == 2 else node.args[0]
            patch: str | None = None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                patch = arg.value
            elif isinstance(arg, ast.Name):
                key = imports.get(f"{arg.id}:", f"{module}:{arg.id}")
                patch = constants.get(key)
            elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
                patch = constants.get(f"{imports.get(arg.value.id, arg.value.id)}:{arg.attr}")
            if patch is not None:
                asked.setdefault(patch, set()).add(
                    "deprecated" if kind in DEPRECATED else "patched"
                )
    return constants, asked


def _table() -> dict[str, str]:
    section = OPERATIONS.read_text().split("## The life of a patch", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(2) for m in map(ROW.match, section.splitlines()) if m}


def test_every_patch_in_the_code_has_a_row() -> None:
    constants, asked = _calls()
    table = _table()
    in_code = set(constants.values()) | set(asked)
    missing = sorted(in_code - set(table))
    assert not missing, f"add a row to docs/operations.md, 'The life of a patch': {missing}"
    gone = sorted(set(table) - in_code)
    assert not gone, f"the code no longer holds these patches: remove their rows: {gone}"


def test_every_row_says_the_call_the_code_makes() -> None:
    _, asked = _calls()
    table = _table()
    for patch, calls in sorted(asked.items()):
        stage = "patched" if "patched" in calls else "deprecated"
        assert table.get(patch) == stage, (
            f"{patch}: the code asks for it as {stage}, the table says {table.get(patch)}"
        )


def test_the_table_reads_the_patches() -> None:
    # The parser itself: a table it could not read would let every check above pass.
    _, asked = _calls()
    assert {"history-limit-250", "reply-draft-by-reference", "graph-extraction"} <= set(asked)
    assert {"reply-steps-joined", "emotion"} <= set(asked)  # asked through the run's shape
    assert len(_table()) >= 20
