"""Bidi marks, zero-width characters and a BOM inside memory text reach the
screen only as visible markers, on every pane of the app (issue 15).

A title or body holding U+202E (right-to-left override) would reorder what is
shown after it; U+200B or U+2060 hide a character between two others.  Each
test puts every such character in a title, a body, a relation, an episode and
an invalid file, opens a pane, and reads what the compositor would send to the
terminal.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlens.core.demo import copy_demo
from memlens.core.text.sanitize import INVISIBLE, json_text, undecodable, visible
from memlens.tui.app import MemlensApp
from memlens.tui.cli.main import cli
from memlens.tui.safe_text import visible as safe_visible
from memlens.tui.screens.main import MainScreen

from .conftest import SIZE, AppFactory, settle
from .test_injection import screen_segments

#: Every character the issue names, one after another, between letters.
MARKED = "".join(f"{chr(code)}{i % 10}" for i, code in enumerate(INVISIBLE))
RAW = re.compile("[" + "".join(chr(code) for code in INVISIBLE) + "]")

SOLUTION = "graph/solutions/hash-the-lockfile-for-the-ci-cache-key-421169.md"
SOLUTION_ID = "42116999-1a44-aeaa-5f73-61e9a2e7fdbe"


def _mark(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """The demo cognitive-memory vault with the characters in a title, body,
    relation context, episode entry and one invalid file's name and text."""
    root = copy_demo(tmp_path) / "cognitive-memory"
    solution = root / SOLUTION
    _mark(solution, 'title: "Hash the lockfile', f'title: "Mark{MARKED} Hash the lockfile')
    _mark(solution, "warm builds take", f"body{MARKED} warm builds take")
    _mark(solution, 'context: "Stable cache key"', f'context: "Stable{MARKED}"')
    episode = root / "episodes/2026-10-21.md"
    _mark(episode, "## 13:00 - Route", f"## 13:00 - Ep{MARKED} Route")
    bad = root / "graph/solutions" / f"bad{chr(0x202E)}name.md"
    bad.write_text(f"---\ntitle: [unclosed{MARKED}\n---\nbody\n", encoding="utf-8")
    return root


def screen_text(app: MemlensApp) -> str:
    """What the terminal would be sent, as text; no raw invisible character allowed."""
    text = "".join(s.text for s in screen_segments(app))
    found = {f"U+{ord(c):04X}" for c in RAW.findall(text)}
    assert not found, f"raw characters on screen: {sorted(found)}"
    return text


async def test_list_detail_and_raw_view_show_markers(make_app: AppFactory, vault: Path) -> None:
    app = make_app([vault])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert screen.select_memory(vault, SOLUTION_ID)
        await settle(pilot)
        text = screen_text(app)
        assert "Mark\\u061c0" in text  # the list row and the detail title
        assert "body\\u061c0" in text
        await pilot.press("v")
        await settle(pilot)
        assert "\\u202e" in screen_text(app)
        await pilot.press("escape")
        await settle(pilot)
        # Dialogs: edit metadata (marked fields shown, locked) and promote.
        for key in ("m", "P"):
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is not screen, key
            assert "\\u061c0" in screen_text(app), key
            await pilot.press("escape")
            await settle(pilot)
        await pilot.press("p")  # pin: the notification names the memory
        await settle(pilot)
        assert "Mark\\u061c0" in screen_text(app)


@pytest.mark.parametrize("pane", ["2", "3", "5", "6"])
async def test_every_pane_shows_markers(make_app: AppFactory, vault: Path, pane: str) -> None:
    app = make_app([vault])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert screen.select_memory(vault, SOLUTION_ID)
        await settle(pilot)
        await pilot.press(pane)
        await settle(pilot)
        text = screen_text(app)
        for _ in range(12):  # walk the pane's list: each entry's detail is drawn
            await pilot.press("down")
            await settle(pilot)
            text += screen_text(app)
        assert "\\u" in text, "some marked text was on this pane"


async def test_search_results_show_markers(make_app: AppFactory, vault: Path) -> None:
    app = make_app([vault])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await pilot.press(*"lockfile", "enter")
        await settle(pilot)
        text = screen_text(app)
        assert "Mark\\u061c0" in text
        await pilot.press("down")
        await settle(pilot)
        screen_text(app)


# -- the CLI: the terminal gets markers, JSON keeps the true text ------------------------


def test_cli_table_shows_markers_and_json_keeps_the_text(vault: Path) -> None:
    runner = CliRunner()
    table = runner.invoke(cli, ["list", str(vault), "--as-of", "2026-11-22"])
    shown = table.stdout_bytes.decode("utf-8")
    assert not RAW.search(shown)
    assert "Mark<U+061C>0" in shown
    data = runner.invoke(cli, ["list", str(vault), "--as-of", "2026-11-22", "--json"])
    raw_json = data.stdout_bytes.decode("utf-8")
    assert not RAW.search(raw_json)  # escaped as \uXXXX in the JSON text ...
    [record] = [r for r in json.loads(raw_json) if r["id"] == SOLUTION_ID]
    assert record["title"].startswith(f"Mark{MARKED} ")  # ... which decodes to the data


def test_sanitizers_cover_every_invisible_character() -> None:
    for code in INVISIBLE:
        assert visible(chr(code)) == f"<U+{code:04X}>"
        assert safe_visible(chr(code)) == f"\\u{code:04x}"
    assert undecodable("obs-\udcff.md") == "obs-\\xff.md"
    assert undecodable("x\ud800") == "x\\ud800"
    assert visible("obs-\udcff.md") == safe_visible("obs-\udcff.md") == "obs-\\xff.md"


def test_json_text_escapes_del_in_ascii_text_as_in_any_other() -> None:
    # ASCII text takes a shortcut: DEL is its one character to escape.
    assert json_text('"plain ascii"') == '"plain ascii"'
    assert json_text('"a\x7fb"') == '"a\\u007fb"'
    assert json_text('"a\x7fb \u00e9"') == '"a\\u007fb \u00e9"'  # the same, not ASCII
    for code in (0x85, 0x9F, *INVISIBLE):
        assert json_text(f'"x{chr(code)}"') == f'"x\\u{code:04x}"'
    assert json_text('"obs-\udcff.md"') == '"obs-\\\\xff.md"'


# -- file names that are not UTF-8 ----------------------------------------------------------


@pytest.fixture
def odd_names(tmp_path: Path) -> Path:
    """Demo observation-v1 and Project Ocean vaults, each with a file named b"obs-\\xff.md"."""
    demo = copy_demo(tmp_path)
    for name in ("dream-cycle", "experience-records", "cognitive-memory"):
        shutil.rmtree(demo / name)
    obs = demo / "observation-v1/observations"
    text = (obs / "obs-102.md").read_bytes().replace(b"id: obs-102", b"id: obs-odd")
    (Path(os.fsdecode(os.fsencode(obs) + b"/obs-\xff.md"))).write_bytes(text)
    vault = demo / "project-ocean/agents/atlas/memory/vault"
    first = sorted(vault.glob("*.md"))[0]
    Path(os.fsdecode(os.fsencode(vault) + b"/obs-\xff.md")).write_bytes(first.read_bytes())
    return demo


def _run(*args: str) -> tuple[int, str]:
    got = CliRunner().invoke(cli, [*args])
    assert got.exception is None or isinstance(got.exception, SystemExit), got.exception
    return got.exit_code, got.stdout_bytes.decode("utf-8")  # strict: valid UTF-8 only


def test_list_json_shows_undecodable_bytes_as_backslash_x(odd_names: Path) -> None:
    code, out = _run("list", str(odd_names), "--json")
    assert code == 0
    paths = {(r["vault"], r["id"], r["path"]) for r in json.loads(out)}
    assert ("observation-v1", "obs-odd", "observations/obs-\\xff.md") in paths
    assert ("project-ocean", "atlas/obs-\\xff", "agents/atlas/memory/vault/obs-\\xff.md") in paths


def test_show_search_and_validate_handle_undecodable_names(odd_names: Path) -> None:
    code, out = _run("show", str(odd_names), "atlas/obs-\\xff", "--json")
    assert code == 0 and json.loads(out)["path"] == "agents/atlas/memory/vault/obs-\\xff.md"
    code, out = _run("show", str(odd_names), "atlas/obs-\\xff")
    assert code == 0 and "obs-\\xff.md" in out
    code, out = _run("search", str(odd_names), "DNS", "--as-of", "2026-10-01", "--json")
    assert code == 0 and "atlas/obs-\\xff" in {h["id"] for h in json.loads(out)}
    # A broken file under such a name is a problem, named the same way.
    obs = os.fsencode(odd_names / "observation-v1/observations")
    Path(os.fsdecode(obs + b"/bad-\xfe.md")).write_bytes(b"---\nid: [unclosed\n---\n")
    code, out = _run("validate", str(odd_names), "--json")
    assert code == 1
    assert "observations/bad-\\xfe.md" in {p["path"] for p in json.loads(out)}
