"""Listing vault folders never aborts a scan and never leads outside the vault.

A symbolic-link loop, a dangling link, a named pipe, a folder called `x.md`
or an entry the OS refuses must not crash a scan (audit: one OSError aborted
the whole listing); links whose realpath leaves the vault root must not be
read.  The listing helpers leave such entries out and say why
(`SkippedEntry`), so the scan can show each one as a Problem.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memlens.core.formats.adapter import FormatAdapter, FormatInfo
from memlens.core.formats.cognitive_memory.adapter import CognitiveMemoryAdapter
from memlens.core.formats.dream_cycle.adapter import DreamCycleAdapter
from memlens.core.formats.experience_record.adapter import ExperienceRecordAdapter
from memlens.core.formats.files import (
    DANGLING_LINK,
    FOLDER_OUTSIDE_VAULT,
    IS_FOLDER,
    OUTSIDE_VAULT,
    Listing,
    SkippedEntry,
    entry_skip,
    iter_md,
    list_dirs,
    list_files,
    list_md,
    md_names,
    rel_posix,
    skipped_problem,
    skipped_scan,
)
from memlens.core.formats.linking import ordered
from memlens.core.formats.observation_v1.adapter import ObservationV1Adapter
from memlens.core.formats.project_ocean.adapter import ProjectOceanAdapter
from memlens.core.model import DecayInfo, FileScan, Health, Memory, Reason, ScanResult
from memlens.core.scan.vault import open_catalog, rescan_paths, save_cache

LOOP = "cannot read: Too many levels of symbolic links"
PIPE = "is a named pipe, not a regular file"

#: The own test vaults, and the formats that have one.
OWN = Path(__file__).resolve().parents[1] / "fixtures"
OWN_FORMATS = {p.name for p in OWN.iterdir() if p.is_dir() and p.name != "expected"}
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def finishes(fn: Callable[[], Any], seconds: float = 20.0) -> Any:
    """fn() in a daemon thread; fail (instead of hanging) if it blocks, e.g. on a pipe."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised in the test thread
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the scan blocked (opened a named pipe?)"
    if "error" in out:
        raise out["error"]
    return out["value"]


def junk(folder: Path, outside: Path) -> None:
    """Every kind of entry a listing must survive, next to two good files."""
    folder.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.md").write_text("# secret\n", encoding="utf-8")
    (folder / "ok.md").write_text("# ok\n", encoding="utf-8")
    (folder / "target.txt").write_text("# inside\n", encoding="utf-8")
    (folder / "in.md").symlink_to("target.txt")  # a link that stays inside: fine
    (folder / "loop.md").symlink_to("loop.md")
    (folder / "ping.md").symlink_to("pong.md")
    (folder / "pong.md").symlink_to("ping.md")
    (folder / "dangle.md").symlink_to("nowhere.md")
    (folder / "out.md").symlink_to(outside / "secret.md")
    (folder / "dir.md").mkdir()
    (folder / ".hidden.md").symlink_to("loop.md")  # hidden: ignored, not reported
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "pipe.md")


# --------------------------------------------------------------------------- md listings


@needs_fifo
def test_md_names_survives_every_bad_entry(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    junk(root / "notes", tmp_path / "outside")
    folder = str(root / "notes")
    # Without the vault root nothing can be judged "outside": only the type rules.
    assert md_names(folder) == ["in.md", "ok.md", "out.md"]
    assert md_names(folder, root) == ["in.md", "ok.md"]
    assert iter_md(root / "notes", root) == [root / "notes" / "in.md", root / "notes" / "ok.md"]


@needs_fifo
def test_list_md_says_why_each_entry_was_left_out(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    junk(root / "notes", tmp_path / "outside")
    listing = list_md(root, "notes")
    assert listing.names == ["in.md", "ok.md"]
    assert {s.rel: s.detail for s in listing.skipped} == {
        "notes/dangle.md": DANGLING_LINK,
        "notes/dir.md": IS_FOLDER,
        "notes/loop.md": LOOP,
        "notes/out.md": OUTSIDE_VAULT,
        "notes/ping.md": LOOP,
        "notes/pong.md": LOOP,
        "notes/pipe.md": PIPE,
    }
    assert [s.rel for s in listing.skipped] == sorted(s.rel for s in listing.skipped)
    assert all(s.reason is Reason.ENCODING for s in listing.skipped)


def test_list_md_of_an_absent_folder_is_empty(tmp_path: Path) -> None:
    assert list_md(tmp_path, "nope") == Listing([], [])
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert list_md(tmp_path, "file") == Listing([], [])
    assert md_names(str(tmp_path / "nope")) == []


def test_a_folder_linked_out_of_the_vault_is_skipped_whole(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.md").write_text("# a\n", encoding="utf-8")
    (root / "graph").mkdir(parents=True)
    (root / "graph" / "fixes").symlink_to(outside)
    assert list_md(root, "graph/fixes") == Listing(
        [], [SkippedEntry("graph/fixes", FOLDER_OUTSIDE_VAULT)]
    )
    assert md_names(str(root / "graph" / "fixes"), root) == []
    # A link higher up the path leads out just as well.
    (root / "agents").mkdir()
    (root / "agents" / "evil").symlink_to(tmp_path / "agent-out")
    (tmp_path / "agent-out" / "memory" / "vault").mkdir(parents=True)
    (tmp_path / "agent-out" / "memory" / "vault" / "b.md").write_text("b", encoding="utf-8")
    got = list_md(root, "agents/evil/memory/vault")
    assert got.names == []
    assert got.skipped == [SkippedEntry("agents/evil/memory/vault", FOLDER_OUTSIDE_VAULT)]


def test_a_folder_link_loop_or_dangling_folder_link_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "loop").symlink_to("loop")
    (root / "gone").symlink_to("missing-folder")
    assert list_md(root, "loop") == Listing([], [SkippedEntry("loop", LOOP)])
    assert list_md(root, "gone") == Listing([], [SkippedEntry("gone", DANGLING_LINK)])
    assert md_names(str(root / "loop")) == []


def test_links_inside_the_vault_are_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "notes").mkdir(parents=True)
    (real / "notes" / "a.md").write_text("a", encoding="utf-8")
    (real / "shared").mkdir()
    (real / "shared" / "b.md").write_text("b", encoding="utf-8")
    (real / "notes" / "b.md").symlink_to(real / "shared" / "b.md")
    (real / "also").symlink_to("notes")
    # The vault root itself may be reached through a link.
    (tmp_path / "link").symlink_to(real)
    for root in (real, tmp_path / "link"):
        assert list_md(root, "notes") == Listing(["a.md", "b.md"], [])
        assert list_md(root, "also") == Listing(["a.md", "b.md"], [])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_an_unreadable_folder_is_reported_not_raised(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("a", encoding="utf-8")
    (root / "notes").chmod(0)
    try:
        got = list_md(root, "notes")
        assert got.names == []
        assert got.skipped == [
            SkippedEntry("notes", "cannot read: Permission denied", Reason.UNREADABLE)
        ]
        assert md_names(str(root / "notes")) == []
    finally:
        (root / "notes").chmod(0o755)


# ------------------------------------------------------------------ folders and fixed files


def test_list_dirs_keeps_folders_and_reports_links_out(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    agents = root / "agents"
    (agents / "hawk").mkdir(parents=True)
    (agents / ".git").mkdir()
    (agents / "README.md").write_text("x", encoding="utf-8")
    (agents / "gone").symlink_to("nowhere")
    (agents / "loop").symlink_to("loop")
    (agents / "alias").symlink_to("hawk")
    (tmp_path / "out").mkdir()
    (agents / "evil").symlink_to(tmp_path / "out")
    (tmp_path / "out.txt").write_text("x", encoding="utf-8")
    (agents / "notes.txt").symlink_to(tmp_path / "out.txt")  # a file link: not a folder
    got = list_dirs(root, "agents")
    assert got.names == ["alias", "hawk"]
    assert {s.rel: s.detail for s in got.skipped} == {
        "agents/evil": OUTSIDE_VAULT,
        "agents/loop": LOOP,
    }


@needs_fifo
def test_list_files_and_entry_skip(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (tmp_path / "secret.json").write_text("{}", encoding="utf-8")
    (root / "good.jsonl").write_text("{}\n", encoding="utf-8")
    (root / "out.jsonl").symlink_to(tmp_path / "secret.json")
    (root / "loop.jsonl").symlink_to("loop.jsonl")
    (root / "dir.jsonl").mkdir()
    (root / "dangle.jsonl").symlink_to("missing")
    os.mkfifo(root / "pipe.jsonl")
    (root / "sub").symlink_to(tmp_path)
    rels = [
        "good.jsonl",
        "absent.jsonl",
        "out.jsonl",
        "loop.jsonl",
        "dir.jsonl",
        "dangle.jsonl",
        "pipe.jsonl",
        "sub/secret.json",
    ]
    got = list_files(root, rels)
    assert got.names == ["good.jsonl"]
    assert [(s.rel, s.detail) for s in got.skipped] == [
        ("out.jsonl", OUTSIDE_VAULT),
        ("loop.jsonl", LOOP),
        ("dir.jsonl", IS_FOLDER),
        ("dangle.jsonl", DANGLING_LINK),
        ("pipe.jsonl", PIPE),
        ("sub/secret.json", OUTSIDE_VAULT),
    ]
    assert entry_skip(root, "good.jsonl") is None
    assert entry_skip(root, "absent.jsonl") is None
    assert entry_skip(root, "out.jsonl") == SkippedEntry("out.jsonl", OUTSIDE_VAULT)
    assert entry_skip(root, "pipe.jsonl") == SkippedEntry("pipe.jsonl", PIPE)


# ------------------------------------------------------------------ turning skips into problems


def test_skipped_entries_become_encoding_problems(tmp_path: Path) -> None:
    skip = SkippedEntry("notes/out.md", OUTSIDE_VAULT)
    p = skipped_problem("observation-v1", tmp_path, skip)
    assert (p.format, p.vault_root, p.path, p.reason, p.detail) == (
        "observation-v1",
        tmp_path,
        "notes/out.md",
        Reason.ENCODING,
        OUTSIDE_VAULT,
    )
    fs = skipped_scan("observation-v1", tmp_path, skip)
    assert (fs.rel, fs.order, fs.memories, fs.problems) == ("notes/out.md", (), [], [p])


class _Notes(FormatAdapter):
    """A minimal adapter over `notes/*.md` that lists with `list_md`."""

    info: ClassVar[FormatInfo] = FormatInfo("notes", "Notes")

    def detect(self, root: Path) -> bool:
        return (root / "notes").is_dir()

    def owns(self, root: Path, rel: str) -> bool:
        return rel.startswith("notes/") and rel.endswith(".md")

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        return DecayInfo(status="kept", health=Health.STABLE, strength=1.0, weight=1.0)

    def files(self, root: Path) -> list[Path]:
        return [root / r for r in self.file_rels(root)]

    def file_rels(self, root: Path) -> list[str]:
        return self.file_listing(root).names

    def file_listing(self, root: Path) -> Listing:
        got = list_md(root, "notes")
        return Listing([f"notes/{n}" for n in got.names], got.skipped)

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        rel = rel_posix(root, path)
        text = (data if data is not None else path.read_bytes()).decode()
        m = Memory("notes", root, path.stem, "note", text.strip(), text, rel)
        return FileScan(rel, order=(rel,), memories=[m])

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        out = ScanResult()
        for fs in ordered(scans):
            out.memories.extend(fs.memories)
            out.problems.extend(fs.problems)
        return out


@needs_fifo
def test_scan_reports_what_the_listing_skipped(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    junk(root / "notes", tmp_path / "outside")
    adapter = _Notes()
    result = finishes(lambda: adapter.scan(root))
    assert sorted(m.id for m in result.memories) == ["in", "ok"]
    assert "# secret" not in {m.title for m in result.memories}
    assert {(p.path, p.reason, p.detail) for p in result.problems} == {
        ("notes/dangle.md", Reason.ENCODING, DANGLING_LINK),
        ("notes/dir.md", Reason.ENCODING, IS_FOLDER),
        ("notes/loop.md", Reason.ENCODING, LOOP),
        ("notes/out.md", Reason.ENCODING, OUTSIDE_VAULT),
        ("notes/ping.md", Reason.ENCODING, LOOP),
        ("notes/pong.md", Reason.ENCODING, LOOP),
        ("notes/pipe.md", Reason.ENCODING, PIPE),
    }
    listing = adapter.file_listing(root)
    assert listing.names == adapter.file_rels(root) == ["notes/in.md", "notes/ok.md"]


# --------------------------------------------------------------------------- the five adapters

#: The formats that keep one memory per Markdown file.
MD_FORMATS = ("cognitive-memory", "observation-v1", "project-ocean")
ADAPTERS = {
    "cognitive-memory": CognitiveMemoryAdapter,
    "observation-v1": ObservationV1Adapter,
    "project-ocean": ProjectOceanAdapter,
    "dream-cycle": DreamCycleAdapter,
    "experience-records": ExperienceRecordAdapter,
}


def _ids(result: ScanResult) -> list[str]:
    return sorted(m.id for m in result.memories)


def _md_folder(root: Path, fmt: str) -> str:
    """A folder of the vault that holds memory files (found by scanning)."""
    held = sorted(m.path for m in ADAPTERS[fmt]().scan(root).memories if "/" in m.path)
    return held[0].rpartition("/")[0]


@needs_fifo
@pytest.mark.parametrize("fmt", [f for f in MD_FORMATS if f in OWN_FORMATS])
def test_markdown_adapters_survive_bad_entries(
    own_fixtures_copy: Path, tmp_path: Path, fmt: str
) -> None:
    root = own_fixtures_copy / fmt
    adapter = ADAPTERS[fmt]()
    before = adapter.scan(root)
    folder = root / _md_folder(root, fmt)
    junk(folder, tmp_path / "outside")
    (folder / "ok.md").unlink()  # keep only entries that are not memories
    (folder / "in.md").unlink()
    after = finishes(lambda: adapter.scan(root))
    assert _ids(after) == _ids(before)
    cat = finishes(lambda: open_catalog(root))  # the cached, progressive path
    assert sorted(m.id for m in cat.memories()) == _ids(before)


@needs_fifo
@pytest.mark.parametrize(
    ("fmt", "rel"),
    [("dream-cycle", "archived-observations.md"), ("experience-records", "stances.jsonl")],
)
def test_fixed_file_adapters_survive_a_pipe_or_loop(
    own_fixtures_copy: Path, fmt: str, rel: str
) -> None:
    root = own_fixtures_copy / fmt
    adapter = ADAPTERS[fmt]()
    path = root / rel
    if path.exists():
        path.unlink()
    before = adapter.scan(root)
    os.mkfifo(path)
    assert _ids(finishes(lambda: adapter.scan(root))) == _ids(before)
    path.unlink()
    path.symlink_to(rel)
    assert _ids(finishes(lambda: adapter.scan(root))) == _ids(before)


#: The one memory file of the single-file formats, to be replaced by a link
#: out of the vault (Markdown formats: a file found by scanning).
LINKED_OUT = {
    "dream-cycle": "observations.md",
    "experience-records": "experiences.jsonl",
}
LINKED_OUT_FORMATS = sorted(f for f in (*MD_FORMATS, *LINKED_OUT) if f in OWN_FORMATS)


def _victim(root: Path, fmt: str) -> str:
    """Vault-relative path of a memory file of `fmt` that holds memories."""
    where = LINKED_OUT.get(fmt) or _md_folder(root, fmt)
    held = {m.path for m in ADAPTERS[fmt]().scan(root).memories}
    if (root / where).is_dir():
        return min(p for p in held if p.startswith(where + "/"))
    assert where in held
    return where


def _link_out(root: Path, rel: str, outside: Path) -> None:
    outside.mkdir(exist_ok=True)
    target = outside / rel.rpartition("/")[2]
    shutil.move(root / rel, target)
    (root / rel).symlink_to(target)


def _reported_outside(problems: list[Any], rel: str) -> bool:
    return any(
        p.path == rel and p.reason is Reason.ENCODING and p.detail == OUTSIDE_VAULT
        for p in problems
    )


@pytest.mark.parametrize("fmt", LINKED_OUT_FORMATS)
def test_no_adapter_reads_a_file_linked_out_of_the_vault(
    own_fixtures_copy: Path, tmp_path: Path, fmt: str
) -> None:
    root = own_fixtures_copy / fmt
    rel = _victim(root, fmt)
    _link_out(root, rel, tmp_path / "outside")
    result = ADAPTERS[fmt]().scan(root)
    assert all(m.path != rel for m in result.memories)
    assert _reported_outside(result.problems, rel)


@pytest.mark.parametrize("fmt", LINKED_OUT_FORMATS)
def test_the_cached_catalog_reports_a_link_out_and_forgets_it_once_gone(
    own_fixtures_copy: Path, tmp_path: Path, fmt: str
) -> None:
    """The app and CLI load through the scan cache: the same Problem, cold and
    warm, and a warm start after the link is replaced does not keep it."""
    root = own_fixtures_copy / fmt
    rel = _victim(root, fmt)
    target = tmp_path / "outside" / rel.rpartition("/")[2]
    _link_out(root, rel, tmp_path / "outside")
    for _start in ("cold", "warm"):
        cat = open_catalog(root, cache=True)
        assert all(m.path != rel for m in cat.memories())
        assert _reported_outside(list(cat.problems()), rel)
    (root / rel).unlink()
    shutil.copyfile(target, root / rel)  # the real file is back
    cat = open_catalog(root, cache=True)
    assert not _reported_outside(list(cat.problems()), rel)
    assert sorted(m.id for m in cat.memories()) == _ids(ADAPTERS[fmt]().scan(root))


@pytest.mark.parametrize("fmt", LINKED_OUT_FORMATS)
def test_a_rescan_reports_a_file_turned_into_a_link_out(
    own_fixtures_copy: Path, tmp_path: Path, fmt: str
) -> None:
    """Live reload: a watched file replaced by a link out is shown, never read;
    a rescan of its folder does the same; putting the file back restores it."""
    root = own_fixtures_copy / fmt
    rel = _victim(root, fmt)
    vault = open_catalog(root, cache=True).vaults[0]
    before = _ids(vault.result)
    target = tmp_path / "outside" / rel.rpartition("/")[2]
    _link_out(root, rel, tmp_path / "outside")
    for changed in (rel, rel.rpartition("/")[0] or "."):
        result = rescan_paths(vault, [changed])
        assert all(m.path != rel for m in result.memories)
        assert _reported_outside(result.problems, rel)
        assert _ids(result) == _ids(ADAPTERS[fmt]().scan(root))
    save_cache(vault)
    assert _reported_outside(list(open_catalog(root, cache=True).problems()), rel)
    (root / rel).unlink()
    shutil.copyfile(target, root / rel)
    result = rescan_paths(vault, [rel])
    assert not _reported_outside(result.problems, rel)
    assert _ids(result) == before


@pytest.mark.parametrize(
    ("fmt", "store"), [("dream-cycle", "archive.jsonl"), ("experience-records", "views.jsonl")]
)
def test_store_files_linked_out_of_the_vault_are_not_read(
    own_fixtures_copy: Path, tmp_path: Path, fmt: str, store: str
) -> None:
    root = own_fixtures_copy / fmt
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.move(root / store, outside / store)
    (root / store).symlink_to(outside / store)
    result = ADAPTERS[fmt]().scan(root)
    assert all(m.path != store for m in result.memories)
    assert any(p.path == store and p.detail == OUTSIDE_VAULT for p in result.problems)
