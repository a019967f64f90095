"""The wheel `pipx install .` / `uv tool install .` would install.

Built from a copy of the source tree (so the build never writes `build/` or
`*.egg-info` into the working tree other work shares), with pip in an isolated
build environment, as installers do.
"""

from __future__ import annotations

import ast
import configparser
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Messages meaning "could not fetch the build backend", i.e. no network.
OFFLINE_HINTS = (
    "No matching distribution found",
    "Could not find a version that satisfies",
    "NewConnectionError",
    "Temporary failure in name resolution",
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            "build",
            "dist",
            "*.egg-info",
            ".*_cache",
            "__pycache__",
            ".hypothesis",
            "tests",
            "bench",
        ),
    )
    out = tmp / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-w", str(out), "-q"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        if any(hint in result.stderr for hint in OFFLINE_HINTS):
            pytest.skip("cannot fetch the build backend (offline?)")
        pytest.fail(f"pip wheel failed:\n{result.stdout}\n{result.stderr}")
    (built,) = out.glob("memlens-*.whl")
    return zipfile.ZipFile(built)


def _names(wheel: zipfile.ZipFile) -> set[str]:
    return set(wheel.namelist())


pytestmark = pytest.mark.slow


def test_every_demo_vault_file_of_every_format_is_packaged(wheel: zipfile.ZipFile) -> None:
    names = _names(wheel)
    demo = ROOT / "core" / "demo_vaults"
    formats = sorted(p.name for p in demo.iterdir() if p.is_dir())
    assert set(formats) >= {
        "cognitive-memory",
        "dream-cycle",
        "experience-records",
        "observation-v1",
        "project-ocean",
    }
    files = [p for p in demo.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    missing = [
        p.relative_to(ROOT).as_posix()
        for p in files
        if "memlens/" + p.relative_to(ROOT).as_posix() not in names
    ]
    assert missing == []
    for fmt in formats:
        assert any(n.startswith(f"memlens/core/demo_vaults/{fmt}/") for n in names), fmt


def test_every_tcss_file_and_py_typed_is_packaged(wheel: zipfile.ZipFile) -> None:
    names = _names(wheel)
    tcss = sorted((ROOT / "tui").rglob("*.tcss"))
    assert tcss, "the app has stylesheets"
    for path in tcss:
        assert "memlens/tui/" + path.relative_to(ROOT / "tui").as_posix() in names, path
    assert "memlens/core/py.typed" in names


def test_every_python_module_is_packaged(wheel: zipfile.ZipFile) -> None:
    names = _names(wheel)
    for top in ("core", "tui"):
        for path in (ROOT / top).rglob("*.py"):
            rel = path.relative_to(ROOT / top)
            if "demo_vaults" in rel.parts or "__pycache__" in rel.parts:
                continue
            assert f"memlens/{top}/{rel.as_posix()}" in names, path


def test_the_console_script_is_memlens(wheel: zipfile.ZipFile) -> None:
    (entry_points,) = [n for n in _names(wheel) if n.endswith(".dist-info/entry_points.txt")]
    parser = configparser.ConfigParser()
    parser.read_string(wheel.read(entry_points).decode())
    assert dict(parser["console_scripts"]) == {"memlens": "memlens.tui.cli.main:main"}


def test_only_the_memlens_package_is_installed(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/", 1)[0] for name in _names(wheel)}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert len(dist_info) == 1
    assert tops - dist_info == {"memlens"}  # no top-level core/ or tui/
    assert "memlens/__init__.py" not in _names(wheel)  # memlens stays a namespace package


# ---------------------------------------------------------------- honest dependencies

#: Distribution name -> the top-level module it installs, where they differ.
MODULE_OF = {
    "pyyaml": "yaml",
    "markdown-it-py": "markdown_it",
    "textual-serve": "textual_serve",
    "scikit-learn": "sklearn",
    "python-frontmatter": "frontmatter",
    "pystemmer": "Stemmer",
}


def _declared() -> dict[str, str]:
    """Top-level module -> the runtime dependency in pyproject.toml that provides it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out: dict[str, str] = {}
    # Runtime extras count as declared: their imports are guarded (lazy, optional).
    for spec in [*project["dependencies"], *project["optional-dependencies"]["semantic"]]:
        dist = re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].lower()
        out[MODULE_OF.get(dist, dist.replace("-", "_"))] = dist
    return out


def _find_spec_of(node: ast.AST) -> str | None:
    """The package named by ``importlib.util.find_spec("name")``, else None."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    value = node.args[0].value
    return value if name == "find_spec" and isinstance(value, str) else None


def _imported() -> dict[str, set[str]]:
    """Third-party top-level module -> the core/ and tui/ files importing it (lazy ones too)."""
    out: dict[str, set[str]] = {}
    for folder in ("core", "tui"):
        for path in (ROOT / folder).rglob("*.py"):
            if "demo_vaults" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                elif _find_spec_of(node) is not None:
                    # A package used for the files it ships (wordllama's weights).
                    names = [str(_find_spec_of(node))]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top not in sys.stdlib_module_names and top != "memlens":
                        out.setdefault(top, set()).add(path.relative_to(ROOT).as_posix())
    return out


def test_every_imported_package_is_declared() -> None:
    undeclared = {m: sorted(f) for m, f in _imported().items() if m not in _declared()}
    assert not undeclared, f"imported but not in [project].dependencies: {undeclared}"


def test_every_declared_package_is_imported() -> None:
    unused = sorted(d for m, d in _declared().items() if m not in _imported())
    assert not unused, f"declared but imported nowhere in core/ or tui/: {unused}"
