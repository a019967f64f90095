"""The bundled demo vaults: every format present, all valid, bundle never touched."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from memlens.core import decay_of, open_catalog
from memlens.core.demo import copy_demo, demo_source
from memlens.core.formats import FORMAT_IDS


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_demo_copy_holds_every_format_and_no_problems(tmp_path: Path) -> None:
    before = _snapshot(demo_source())
    root = copy_demo(tmp_path)
    catalog = open_catalog(root)
    assert sorted(v.format for v in catalog.vaults) == sorted(FORMAT_IDS)
    # The demo shows what memlens catches: one invalid file, one dangling link.
    assert [(p.path, p.reason.value) for p in catalog.problems()] == [
        ("agents/quill/memory/vault/obs-2026-11-21-001.md", "out_of_range")
    ]
    assert [(r.ref, r.reason.value) for r in catalog.ref_problems()] == [
        ("obs-2026-11-14-009", "dangling_reference")
    ]
    for v in catalog.vaults:
        assert len(v.memories) >= 5, v.format
    healths = {decay_of(m, date(2026, 11, 22)).health for m in catalog.memories()}
    assert len(healths) >= 4  # the demo shows a spread of states
    # Writing to the copy leaves the bundle untouched.
    (root / "dream-cycle" / "observations.md").write_text("changed")
    assert _snapshot(demo_source()) == before
