"""`memlens show` from the index `memlens search` kept: the catalog's bytes, or the catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memlens.tui.cli import browse
from memlens.tui.cli.main import cli

AS_OF = ("--as-of", "2026-11-22")

#: Each test with a cache folder of its own (`private_cache` in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("private_cache")


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return res.exit_code, res.output


@pytest.fixture(autouse=True)
def _no_racy_stamps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The copied files are seconds old: without this their stamps are racy (a
    stamp that cannot prove its file unchanged) and every `show` opens the catalog."""
    from memlens.core.scan import reading

    monkeypatch.setattr(reading, "RACY_WINDOW_NS", 0)


def _ids(root: Path) -> list[str]:
    code, out = run("--no-cache", "list", str(root), *AS_OF, "--json")
    assert code == 0, out
    return [r["id"] for r in json.loads(out)]


def _catalog_opened(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every catalog `show` opens (the slow way)."""
    opened: list[Any] = []
    real = browse.load_catalog

    def spy(*paths: Any) -> Any:
        opened.append(paths)
        return real(*paths)

    monkeypatch.setattr(browse, "load_catalog", spy)
    return opened


def test_every_memory_shown_from_the_kept_index_as_from_the_catalog(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = own_fixtures_copy
    ids = _ids(root)
    unique = [i for i in ids if ids.count(i) == 1]
    assert len(unique) > 40  # every format's fixtures
    later = ("--as-of", "2027-06-01")
    sample = unique[:: max(1, len(unique) // 10)]
    expected = {i: run("--no-cache", "show", str(root), i, *AS_OF, "--json") for i in unique}
    expected_later = {i: run("--no-cache", "show", str(root), i, *later, "--json") for i in sample}
    expected_text = run("--no-cache", "show", str(root), unique[0], *AS_OF)
    code, out = run("search", str(root), "memory", *AS_OF, "--json")  # keeps the index
    assert code == 0, out
    opened = _catalog_opened(monkeypatch)
    for memory_id in unique:
        assert run("show", str(root), memory_id, *AS_OF, "--json") == expected[memory_id]
        assert opened == [], memory_id  # answered from the kept index
    # Another date: decay is worked out for the one memory, the same as the catalog's.
    for memory_id in sample:
        assert run("show", str(root), memory_id, *later, "--json") == expected_later[memory_id]
    # The text output too.
    assert run("show", str(root), unique[0], *AS_OF) == expected_text
    assert opened == []


def test_a_changed_file_or_an_unknown_id_opens_the_catalog(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = own_fixtures_copy
    unique = [i for i in _ids(root) if _ids(root).count(i) == 1]
    assert run("search", str(root), "memory", *AS_OF, "--json")[0] == 0
    opened = _catalog_opened(monkeypatch)
    code, out = run("show", str(root), "no-such-memory", *AS_OF, "--json")
    assert code == 1 and "no memory with id 'no-such-memory'" in out
    assert len(opened) == 1
    # An agent edits a memory's file after the index was kept.
    code, out = run("--no-cache", "show", str(root), unique[0], *AS_OF, "--json")
    path = root / json.loads(out)["vault"] / json.loads(out)["path"]
    path.write_bytes(path.read_bytes() + b"\nAppended after the search, about leases.\n")
    opened.clear()
    now = run("show", str(root), unique[0], *AS_OF, "--json")
    assert len(opened) == 1  # the stat walk saw the change
    assert "Appended after the search" in json.loads(now[1])["body"]
    assert now == run("--no-cache", "show", str(root), unique[0], *AS_OF, "--json")


def test_without_a_kept_index_the_catalog_answers(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = own_fixtures_copy
    memory_id = _ids(root)[0]
    expected = run("--no-cache", "show", str(root), memory_id, *AS_OF, "--json")
    opened = _catalog_opened(monkeypatch)
    assert run("show", str(root), memory_id, *AS_OF, "--json") == expected
    assert len(opened) == 1


def test_an_erased_record_stays_erased_in_what_the_kept_index_answers(
    own_fixtures_copy: Path,
) -> None:
    """Linking blanks an erased record's text: the index keeps that body, never the file's line.

    (A regression: the kept index read bodies from the files alone, so a
    search served from it printed an erased record's text in its snippet.)
    """
    root = own_fixtures_copy
    lines = (root / "experience-records" / "experiences.jsonl").read_text().splitlines()
    erased = [json.loads(x) for x in lines if "Haugland" in x]
    assert erased, "the fixture's erased record"
    secret = "Haugland"
    query = ("search", str(root), "health:tombstoned", *AS_OF, "--format", "ocean")
    query += ("--rank", "relevance")
    first = run(*query)  # through the catalog; keeps the index
    again = run(*query)  # from the kept index
    assert first == again
    assert first[0] == 0 and erased[0]["id"] in first[1]
    assert secret not in first[1]
    shown = run("show", str(root), erased[0]["id"], *AS_OF, "--json")
    assert shown[0] == 0 and json.loads(shown[1])["body"] == ""
    assert secret not in shown[1]
