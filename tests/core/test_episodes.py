"""core.episodes: episode records of cognitive-memory vaults as an ordered timeline."""

from __future__ import annotations

import shutil
from pathlib import Path

from memlens.core import open_catalog
from memlens.core.episodes import DANGLING, LINKED, UNLINKED, by_day, episode_entries

EXTRA = """
## 23:59 - Late entry with a broken link
- **Type:** fix
- **Tags:** a, b
- **Memory:** [gone](../graph/fixes/no-such-memory-000000.md)
- **Summary:** The memory was deleted later

## Untimed entry
- **Summary:** no memory field at all
"""


def test_entries_newest_first_with_links(own_fixtures_dir: Path) -> None:
    catalog = open_catalog(own_fixtures_dir / "cognitive-memory")
    entries = episode_entries(catalog.vaults)
    assert entries, "the fixture has episodes"
    days = [e.date for e in entries]
    assert days == sorted(days, reverse=True)
    for day, group in by_day(entries):
        assert {e.date for e in group} == {day}
        times = [e.time for e in group if e.time is not None]
        assert times == sorted(times, reverse=True)
    ids = {m.id for m in catalog.memories()}
    for e in entries:
        assert e.link_state == LINKED and e.memory_id in ids
        assert e.file.startswith("episodes/") and e.line > 0
    # Grouping keeps every entry once, days in order.
    grouped = [e for _day, group in by_day(entries) for e in group]
    assert grouped == entries


def test_dangling_and_missing_links(own_fixtures_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "cm"
    shutil.copytree(own_fixtures_dir / "cognitive-memory", root)
    day = root / "episodes" / "2026-11-19.md"
    day.write_text(day.read_text(encoding="utf-8") + EXTRA, encoding="utf-8")
    entries = episode_entries(open_catalog(root).vaults)
    latest = [e for e in entries if e.date == "2026-11-19"]
    assert latest[0].title == "Late entry with a broken link"
    assert latest[0].link_state == DANGLING and latest[0].memory_id is None
    assert latest[0].tags == ("a", "b")
    # Entries without a time come after the timed ones of their day.
    assert latest[-1].title == "Untimed entry" and latest[-1].time is None
    assert latest[-1].link_state == UNLINKED


def test_vaults_without_episodes_give_nothing(own_fixtures_dir: Path) -> None:
    catalog = open_catalog(own_fixtures_dir / "project-ocean")
    assert episode_entries(catalog.vaults) == []
    assert list(by_day([])) == []
