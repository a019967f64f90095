"""The typed `FormatAdapter` base: a minimal adapter gets the plain behaviour.

A format that writes only the six abstract members (detect, files, owns,
scan_file, link, decay) must list, scan, rescan, relink and rank exactly as
the callers' old fallbacks did; the five real adapters declare their facts.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import ClassVar

import pytest

from memlens.core.formats import (
    FORMAT_IDS,
    FormatAdapter,
    FormatInfo,
    adapter_for,
    adapters,
    detects,
    format_ids_where,
    format_infos,
    info_for,
)
from memlens.core.formats.files import Listing, rel_posix
from memlens.core.formats.linking import ordered
from memlens.core.model import DecayInfo, FileScan, Health, LinkState, Memory, ScanResult
from memlens.core.scan.cache import scan_one
from memlens.core.scan.vault import Vault, rescan_paths, scan_vault

AS_OF = date(2026, 11, 22)


class Plain(FormatAdapter):
    """Only what every format must write: one memory per `notes/*.txt`."""

    info: ClassVar[FormatInfo] = FormatInfo("plain-notes", "Plain notes")

    def detect(self, root: Path) -> bool:
        return (root / "notes").is_dir()

    def files(self, root: Path) -> list[Path]:
        return sorted((root / "notes").glob("*.txt"))

    def owns(self, root: Path, rel: str) -> bool:
        return rel.startswith("notes/") and rel.endswith(".txt")

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        rel = rel_posix(root, path)
        text = (data if data is not None else path.read_bytes()).decode()
        memory = Memory("plain-notes", root, path.stem, "note", text.strip(), text, rel)
        return FileScan(rel, order=(rel,), memories=[memory])

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        out = ScanResult()
        for fs in ordered(scans):
            out.memories.extend(fs.memories)
        return out

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        fading = "old" in memory.title
        return DecayInfo(
            status="fading" if fading else "fresh",
            health=Health.FADING if fading else Health.ACTIVE,
            strength=0.5 if fading else 1.0,
            weight=0.5 if fading else 1.0,
            score=0.25 if fading else None,
            why="because" if explain else "",
        )


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "b.txt").write_text("old news\n")
    (root / "notes" / "a.txt").write_text("fresh idea\n")
    (root / "notes" / "skip.md").write_text("not mine\n")
    return root


def test_an_adapter_missing_a_required_member_cannot_be_made() -> None:
    class NoDecay(FormatAdapter):
        info: ClassVar[FormatInfo] = FormatInfo("no-decay", "No decay")

        def detect(self, root: Path) -> bool:
            return False

        def files(self, root: Path) -> list[Path]:
            return []

        def owns(self, root: Path, rel: str) -> bool:
            return False

        def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
            return FileScan(path.name)

        def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
            return ScanResult()

    with pytest.raises(TypeError, match="decay"):
        NoDecay()  # type: ignore[abstract]


def test_info_gives_the_class_its_id_and_label() -> None:
    assert (Plain.format_id, Plain.label) == ("plain-notes", "Plain notes")
    assert Plain.pointer_fields == ()


def test_listing_defaults_follow_files(vault: Path) -> None:
    adapter = Plain()
    assert adapter.file_rels(vault) == ["notes/a.txt", "notes/b.txt"]
    assert adapter.file_listing(vault) == Listing(["notes/a.txt", "notes/b.txt"], [])


def test_scan_defaults_to_link_over_scan_file(vault: Path) -> None:
    adapter = Plain()
    result = adapter.scan(vault)
    assert [m.id for m in result.memories] == ["a", "b"]
    by_hand = adapter.link(
        vault, {rel_posix(vault, p): adapter.scan_file(vault, p) for p in adapter.files(vault)}
    )
    assert result == by_hand


def test_scan_rel_is_scan_file_by_relative_path(vault: Path) -> None:
    adapter = Plain()
    data = b"given bytes\n"
    assert adapter.scan_rel(vault, "notes/a.txt", data) == adapter.scan_file(
        vault, vault / "notes" / "a.txt", data
    )
    assert adapter.scan_rel(vault, "notes/a.txt").memories[0].title == "fresh idea"


def test_incremental_hooks_default_to_reading_again(vault: Path) -> None:
    adapter = Plain()
    path = vault / "notes" / "a.txt"
    previous = adapter.scan_file(vault, path)
    assert adapter.scan_appended(vault, path, previous, b"more\n", 2) is None
    assert adapter.rescan_file(vault, path, b"changed\n", previous) is None
    full = adapter.scan(vault)
    assert adapter.relink(vault, {}, full, {}) is None
    assert full.link_state is None


def test_a_grown_file_is_read_whole_without_scan_appended(vault: Path) -> None:
    adapter = Plain()
    path = vault / "notes" / "a.txt"
    first, stamp = scan_one(adapter, vault, path)
    assert stamp is not None
    with path.open("a") as out:
        out.write("appended line\n")
    again, _stamp = scan_one(adapter, vault, path, (first, stamp))
    assert again == adapter.scan_file(vault, path)
    assert again.kept_objects is False


def test_rescan_of_a_minimal_adapter_links_in_full(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter = Plain()
    monkeypatch.setattr(Vault, "adapter", property(lambda self: adapter))
    v = scan_vault(Vault(root=vault, format="plain-notes", rel="."), parallel=False)
    assert v.result == adapter.scan(vault)
    (vault / "notes" / "c.txt").write_text("third\n")
    got = rescan_paths(v, [vault / "notes" / "c.txt"])
    assert got == adapter.scan(vault)
    assert v.last_rescan_vault_wide is False


def test_decay_brief_is_decay_without_the_explanation() -> None:
    adapter = Plain()
    for title in ("old news", "fresh idea"):
        m = Memory("plain-notes", Path("/v"), "x", "note", title, title, "notes/x.txt")
        info = adapter.decay(m, AS_OF, explain=False)
        assert adapter.decay_brief(m, AS_OF) == (info.status, info.health, info.weight, info.score)
    old = Memory("plain-notes", Path("/v"), "x", "note", "old", "old", "notes/x.txt")
    assert adapter.decay_brief(old, AS_OF) == ("fading", Health.FADING, 0.5, 0.25)


# --------------------------------------------------------------------------- the registry


def test_every_registered_adapter_subclasses_the_base() -> None:
    assert all(isinstance(a, FormatAdapter) for a in adapters())
    assert tuple(i.id for i in format_infos()) == FORMAT_IDS
    for adapter in adapters():
        assert adapter_for(adapter.format_id) is adapter
        info = info_for(adapter.format_id)
        assert (info.id, info.label) == (adapter.format_id, adapter.label)
        assert info.short_label and len(info.short_label) <= 9  # the search column


@pytest.mark.parametrize("format_id", FORMAT_IDS)
def test_finding_a_vaults_format_imports_that_format_only(
    own_fixtures_dir: Path, format_id: str
) -> None:
    """The registry imports no format; detection asks the light `detection` modules;
    a command on one vault then loads that one format's package."""
    packages = {f: type(adapter_for(f)).__module__.rpartition(".")[0] for f in FORMAT_IDS}
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from memlens.core import formats\n"
        "from memlens.core.scan.vault import detect_format\n"
        f"packages = {packages!r}\n"
        "def loaded():\n"
        "    return sorted(f for f, p in packages.items() if p + '.adapter' in sys.modules)\n"
        "print(json.dumps(loaded()))\n"
        "print(json.dumps(detect_format(Path(sys.argv[1])).format_id))\n"
        "print(json.dumps(loaded()))\n"
        "formats.adapters()\n"
        "print(json.dumps(loaded()))\n"
    )
    root = own_fixtures_dir / format_id
    out = subprocess.run(
        [sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert [json.loads(line) for line in out] == [[], format_id, [format_id], sorted(FORMAT_IDS)]


@pytest.mark.parametrize("format_id", FORMAT_IDS)
def test_detection_modules_answer_as_the_adapters(own_fixtures_dir: Path, format_id: str) -> None:
    for other in FORMAT_IDS:
        root = own_fixtures_dir / other
        assert detects(format_id, root) == adapter_for(format_id).detect(root)
        assert detects(format_id, root) == (other == format_id)


def test_unknown_format_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        adapter_for("plain-notes")
    with pytest.raises(KeyError):
        info_for("plain-notes")


def test_capabilities_name_one_format_each() -> None:
    for test in (
        lambda i: i.two_way_relations,
        lambda i: bool(i.acyclic_fields),
        lambda i: i.has_episodes,
        lambda i: i.has_decay_run,
        lambda i: i.tracks_access,
        lambda i: bool(i.promotes_together),
    ):
        assert len(format_ids_where(test)) == 1
    # Every format with promote options says what promote does.
    assert all(i.promote_note for i in format_infos())


def test_every_registered_format_has_its_package_writer() -> None:
    from memlens.core.formats.writers import WRITER_MODULES, writer_for

    packages = {type(a).__module__.rpartition(".")[0] for a in adapters()}
    assert {m.rpartition(".")[0] for m in WRITER_MODULES} == packages
    for format_id in FORMAT_IDS:
        assert writer_for(format_id).format_id == format_id


@pytest.mark.parametrize("format_id", FORMAT_IDS)
def test_link_state_is_the_formats_own_typed_state(own_fixtures_dir: Path, format_id: str) -> None:
    """`link` leaves a `LinkState` subclass that survives pickling (the scan cache)."""
    adapter = adapter_for(format_id)
    result = adapter.scan(own_fixtures_dir / format_id)
    state = result.link_state
    assert isinstance(state, LinkState) and type(state) is not LinkState
    assert type(pickle.loads(pickle.dumps(state))) is type(state)
