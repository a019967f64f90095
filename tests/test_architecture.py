"""Structural contracts: the core/tui wall and the package list."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_core_imports_neither_textual_nor_tui() -> None:
    code = (
        "import sys, memlens.core, memlens.core.formats, memlens.core.scan.vault, "
        "memlens.core.decay, memlens.core.records, memlens.core.demo;"
        "import pkgutil, importlib;"
        "[importlib.import_module(m.name) for m in pkgutil.walk_packages("
        "memlens.core.__path__, 'memlens.core.')];"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.')"
        " or m.startswith('memlens.tui'));"
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"memlens.core pulled in UI modules: {out}"


def test_every_python_folder_is_a_listed_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = set()
    for top, dist in (("core", "memlens.core"), ("tui", "memlens.tui")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            if "demo_vaults" in rel.parts:
                continue
            found.add(".".join([dist, *rel.parts]))
    assert found == listed


def test_tcss_files_sit_beside_python_modules() -> None:
    for tcss in (ROOT / "tui").rglob("*.tcss"):
        assert any(tcss.parent.glob("*.py")), tcss
