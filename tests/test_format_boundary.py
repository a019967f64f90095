"""Format knowledge stays inside `core/formats/`: no format id, no probing of adapters.

Outside `core/formats/`, code asks the registry (`adapter_for`, `info_for`,
`format_ids_where`) and the typed `FormatAdapter` members; it never spells a
format id as a string nor looks for optional adapter members by name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from memlens.core.formats import FORMAT_IDS

ROOT = Path(__file__).resolve().parents[1]
FORMATS_DIR = ROOT / "core" / "formats"


def _sources() -> Iterator[Path]:
    """Every Python module of core/ and tui/ outside core/formats/."""
    for top in ("core", "tui"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if FORMATS_DIR not in path.parents and "demo_vaults" not in path.parts:
                yield path


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string constants that are docstrings (prose may name a format)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def format_id_literals(source: str, ids: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, literal) of every non-docstring string constant that is a format id."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    wanted = set(ids)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and node.value in wanted
    ]


def adapter_probes(source: str) -> list[tuple[int, str]]:
    """(line, call) of every getattr/hasattr whose object is an adapter or a vault."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and node.args
        ):
            target = ast.unparse(node.args[0]).lower()
            if "adapter" in target or "vault" in target:
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_checks_see_what_they_look_for() -> None:
    """The two scanners catch a comparison, a table key and a probe, and spare docstrings."""
    sample = (
        '"""Reads dream-cycle vaults."""\n'
        "def f(m, adapter):\n"
        '    """dream-cycle only."""\n'
        '    table = {"dream-cycle": 1}\n'
        '    return m.format == "project-ocean" or getattr(adapter, "relink", None)\n'
    )
    assert sorted(format_id_literals(sample, ("dream-cycle", "project-ocean"))) == [
        (4, "dream-cycle"),
        (5, "project-ocean"),
    ]
    assert [line for line, _call in adapter_probes(sample)] == [5]


def test_no_format_id_string_outside_core_formats() -> None:
    assert len(FORMAT_IDS) == 5
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in _sources()
        for line, text in format_id_literals(path.read_text(encoding="utf-8"), FORMAT_IDS)
    ]
    assert not found, "ask the registry (info_for / format_ids_where) instead:\n" + "\n".join(found)


def test_no_probing_of_adapters_or_vaults() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {call}"
        for top in ("core", "tui")
        for path in sorted((ROOT / top).rglob("*.py"))
        for line, call in adapter_probes(path.read_text(encoding="utf-8"))
    ]
    assert not found, "declare the member on FormatAdapter / Vault instead:\n" + "\n".join(found)
