"""Each format is a package split by concern: small modules, short functions, a map.

The package docstring is the map a newcomer reads first, so it must name
every module of the package; the size limits keep a concern from growing
back into one big module (issue 17).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import memlens.core.formats as formats

FORMATS = Path(formats.__file__).parent
PACKAGES = sorted(p.parent for p in FORMATS.glob("*/__init__.py"))
MODULE_MAX_LINES = 600
FUNCTION_MAX_LINES = 80


def _modules(package: Path) -> list[Path]:
    return sorted(p for p in package.glob("*.py") if p.name != "__init__.py")


def test_there_are_five_format_packages() -> None:
    assert [p.name for p in PACKAGES] == [
        "cognitive_memory",
        "dream_cycle",
        "experience_record",
        "observation_v1",
        "project_ocean",
    ]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_the_package_docstring_names_every_module(package: Path) -> None:
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    missing = [p.stem for p in _modules(package) if f"`{p.stem}`" not in doc]
    assert not missing, f"{package.name}/__init__.py does not name {missing}"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_modules_and_functions_stay_small(package: Path) -> None:
    too_big: list[str] = []
    for path in _modules(package):
        text = path.read_text()
        lines = text.count("\n")
        if lines > MODULE_MAX_LINES:
            too_big.append(f"{path.name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > FUNCTION_MAX_LINES:
                    too_big.append(f"{path.name}: {node.name}() {length} lines")
    assert not too_big
