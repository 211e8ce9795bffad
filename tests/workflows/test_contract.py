"""Workflow code reaches outside ``workflows/`` only through the contract package and schemas.

The sandbox passes through only ``contract``, ``schemas`` and pydantic (``workers.runner``), so
anything else a workflow module imported at module level would be re-imported on every run, or
would bring I/O into workflow code. Activity classes arrive inside
``workflow.unsafe.imports_passed_through()`` blocks, which these checks leave alone.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from workers.runner import PASSTHROUGH

ROOT = Path(__file__).resolve().parents[2]
ALLOWED_ROOTS = {"contract", "schemas", "workflows", "temporalio", "pydantic", "__future__"}
PURE = ("contract",)
FORBIDDEN_IN_CONTRACT = {"temporal", "activities", "store", "workers", "cli", "observability"}


def _module_imports(path: Path) -> list[str]:
    """Top-level modules imported outside ``imports_passed_through()`` blocks."""
    tree = ast.parse(path.read_text())
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.With) and "imports_passed_through" in ast.unparse(node.items[0]):
            return
        if isinstance(node, ast.Import):
            names.extend(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def _python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_the_sandbox_passes_through_only_the_contract_schemas_and_pydantic() -> None:
    assert set(PASSTHROUGH) == {
        "contract",
        "schemas",
        "pydantic",
        "pydantic_core",
        "annotated_types",
    }


def test_workflow_modules_import_only_the_contract_schemas_sdk_and_stdlib() -> None:
    stdlib = set(sys.stdlib_module_names)
    strays = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in _python_files("workflows")
        for name in _module_imports(path)
        if name not in ALLOWED_ROOTS and name not in stdlib
    }
    assert not strays


def test_the_contract_imports_no_io_package() -> None:
    strays = {
        f"{path.relative_to(ROOT)}: {name}"
        for package in PURE
        for path in _python_files(package)
        for name in _module_imports(path)
        if name in FORBIDDEN_IN_CONTRACT
    }
    assert not strays


def test_the_linter_bans_every_module_of_temporal_and_observability_from_workflows(
    tmp_path: Path,
) -> None:
    probe = ROOT / "workflows" / f"_probe_{tmp_path.name}.py"
    banned = sorted(
        path.stem for path in (ROOT / "temporal").glob("*.py") if path.stem != "__init__"
    )
    probe.write_text(
        "".join(f"from temporal.{name} import x as {name}_x\n" for name in banned)
        + "from observability import tracing\nfrom contract import names\n"
        + "__all__ = ["
        + ", ".join(f'"{n}_x"' for n in banned)
        + ', "names", "tracing"]\n'
    )
    try:
        run = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "TID251", str(probe)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        probe.unlink()
    for name in banned:
        assert f"`temporal.{name}` is banned" in run.stdout, run.stdout
    assert "`observability` is banned" in run.stdout
    assert "`contract" not in run.stdout
