"""A body read from its own lines (a Dream Cycle section, an experience line) equals the parse."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.generate import generate
from memlens.core import open_catalog
from memlens.core.formats import adapter_for
from memlens.core.model import RAW_BODY, Memory
from memlens.core.store import bodies as store_bodies

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _store_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if p.is_file())


def _check_file(root: Path, path: Path) -> int:
    adapter = adapter_for("dream-cycle")
    data = path.read_bytes()
    rel = path.relative_to(root).as_posix()
    scan = adapter.scan_file(root, path, data)
    if not scan.memories:
        return 0
    found = adapter.bodies_of(root, rel, data, scan.memories)
    if found is None:
        return 0
    assert found == {m.id: m.body for m in scan.memories}
    for m in scan.memories:  # one at a time, too
        assert adapter.bodies_of(root, rel, data, [m]) == {m.id: m.body}
    return len(found)


def test_fixture_sections_read_alone_equal_the_parse() -> None:
    root = FIXTURES / "dream-cycle"
    checked = sum(_check_file(root, p) for p in _store_files(root))
    assert checked > 5


def test_generated_store_sections_read_alone_equal_the_parse(tmp_path: Path) -> None:
    generate(tmp_path / "v", 600, seed=11)
    root = tmp_path / "v" / "dream-cycle"
    checked = sum(_check_file(root, p) for p in _store_files(root))
    assert checked > 50


def test_a_bom_crlf_and_tricky_sections_read_alone(tmp_path: Path) -> None:
    root = tmp_path / "dc"
    root.mkdir()
    text = (
        "\ufeff# Observations\r\n\r\nA preamble line.\r\n\r\n"
        "## First one\r\n<!-- dc:type=fact dc:importance=0.6 dc:date=2026-11-01 -->\r\n"
        "Body with ## not a heading\r\nand an <!-- ordinary comment -->\r\n\r\n"
        "## Second, untagged\r\nJust text.\r\n"
        "## Third\r\n<!-- dc:type=decision dc:importance=0.9\r\n"
        "dc:date=2026-10-01 -->  after the comment\r\nlast line without newline"
    )
    (root / "observations.md").write_bytes(text.encode("utf-8"))
    assert _check_file(root, root / "observations.md") == 3


def test_a_changed_file_falls_back_to_the_parse(tmp_path: Path) -> None:
    root = tmp_path / "dc"
    shutil.copytree(FIXTURES / "dream-cycle", root)
    adapter = adapter_for("dream-cycle")
    path = root / "observations.md"
    data = path.read_bytes()
    scan = adapter.scan_file(root, path, data)
    m = scan.memories[-1]
    # Lines moved (a section inserted above): the recorded bounds no longer fit.
    moved = data.replace(b"## ", b"## Inserted\nnew text\n\n## ", 1)
    assert adapter.bodies_of(root, "observations.md", moved, [m]) is None


def test_store_bodies_read_a_few_alone_then_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate(tmp_path / "v", 600, seed=11)
    root = tmp_path / "v"
    open_catalog(root, cache=True)  # the store now holds the rows, bodies left out
    catalog = open_catalog(root, cache=True)
    mems = [m for m in catalog.memories() if m.format == "dream-cycle"]
    expected = {m.id: m for m in open_catalog(root, cache=False).memories()}
    parses: list[str] = []
    real = type(adapter_for("dream-cycle")).scan_file

    def counting(self: object, r: Path, p: Path, data: bytes | None = None) -> object:
        parses.append(p.name)
        return real(self, r, p, data)  # type: ignore[arg-type]

    monkeypatch.setattr(type(adapter_for("dream-cycle")), "scan_file", counting)
    big = [m for m in mems if RAW_BODY.__get__(m, Memory) is None]
    by_file: dict[str, list[Memory]] = {}
    for m in big:
        by_file.setdefault(m.path, []).append(m)
    path, group = max(by_file.items(), key=lambda kv: len(kv[1]))
    assert len(group) > store_bodies.SINGLE_READS + 2
    for m in group[: store_bodies.SINGLE_READS]:
        assert m.body == expected[m.id].body
    assert parses == []  # read alone, no whole-file parse
    for m in group[store_bodies.SINGLE_READS :]:
        assert m.body == expected[m.id].body
    assert parses == [Path(path).name]  # then the file once, for all the rest


def test_experience_lines_read_alone_equal_the_parse(tmp_path: Path) -> None:
    generate(tmp_path / "v", 600, seed=11)
    catalog = open_catalog(tmp_path / "v", cache=False)
    adapter = adapter_for("experience-records")
    checked = 0
    for vault in catalog.vaults:
        if vault.format != "experience-records":
            continue
        path = vault.root / "experiences.jsonl"
        data = path.read_bytes()
        scan = adapter.scan_file(vault.root, path, data)
        found = adapter.bodies_of(vault.root, "experiences.jsonl", data, scan.memories)
        assert found == {m.id: m.body for m in scan.memories}
        checked += len(scan.memories)
        # The linked memories (the WAL applied): tombstoned ones are left to the parse.
        linked = [m for m in catalog.memories() if m.format == "experience-records"]
        for m in linked:
            one = adapter.bodies_of(vault.root, "experiences.jsonl", data, [m])
            if m.tombstoned:
                assert one is None
            else:
                assert one == {m.id: m.body}
    assert checked > 50
