"""core.watch: file system events become domain changes, the catalog follows.

Every test runs a real watcher (watchfiles, inotify) on a temporary copy of
the fixture vaults and waits for conditions with timeouts, never for fixed
sleeps, so it stays robust on a loaded machine.
"""

from __future__ import annotations

import builtins
import io
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from memlens.core.actions import Action
from memlens.core.scan.changes import Change, ChangeKind, content_of, problem_key
from memlens.core.scan.vault import Catalog, open_catalog
from memlens.core.scan.watch import VaultWatcher, is_noise, is_noise_name
from memlens.core.write import selfwrites
from memlens.core.write.writes import TEMP_PREFIX, atomic_write, move_no_clobber, snapshot

TIMEOUT = 15.0
DEMO = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"


class Recorder:
    """Collects what the watcher reports, for waiting on from the test thread."""

    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.batches = 0
        self.errors: list[BaseException] = []
        self.cond = threading.Condition()

    def __call__(self, changes: list[Change]) -> None:
        assert changes, "the watcher never reports an empty batch"
        with self.cond:
            self.changes.extend(changes)
            self.batches += 1
            self.cond.notify_all()

    def on_error(self, exc: BaseException) -> None:
        with self.cond:
            self.errors.append(exc)
            self.cond.notify_all()

    def wait(self, pred: Callable[[list[Change]], bool], timeout: float = TIMEOUT) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: pred(self.changes), timeout)

    def wait_for(self, kind: ChangeKind, mid: str | None = None, **kw: Any) -> Change:
        def match(c: Change) -> bool:
            return (
                c.kind is kind
                and (mid is None or c.id == mid)
                and all(getattr(c, k) == v for k, v in kw.items())
            )

        ok = self.wait(lambda cs: any(match(c) for c in cs))
        assert ok, f"no {kind.value} {mid} {kw} within {TIMEOUT}s; got {self.summary()}"
        return next(c for c in self.changes if match(c))

    def of(self, mid: str) -> list[Change]:
        with self.cond:
            return [c for c in self.changes if c.id == mid]

    def summary(self) -> list[tuple[str, str | None, str]]:
        with self.cond:
            return [(c.kind.value, c.id, c.path) for c in self.changes]

    def clear(self) -> None:
        with self.cond:
            self.changes.clear()


def wait_until(pred: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


@contextmanager
def watching(path: Path, **kw: Any) -> Iterator[tuple[Catalog, VaultWatcher, Recorder]]:
    catalog = open_catalog(path)
    rec = Recorder()
    kw.setdefault("rescan_interval", None)  # prove the events alone suffice
    w = VaultWatcher(catalog, rec, paths=[path], on_error=rec.on_error, **kw)
    w.start()
    try:
        assert w.wait_ready(TIMEOUT)
        yield catalog, w, rec
    finally:
        w.stop()
    assert not rec.errors, rec.errors


def state_of(catalog: Catalog) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """(memories, problems) as comparable sets: id, path and content hash."""
    mems = {
        (str(v.root), m.id, m.path, hash(repr(content_of(m))))
        for v in catalog.vaults
        for m in v.memories
    }
    probs = {
        (str(v.root), problem_key(p), getattr(p, "detail", None))
        for v in catalog.vaults
        for p in [*v.problems, *v.ref_problems]
    }
    return mems, probs


def matches_full_rescan(catalog: Catalog, w: VaultWatcher, path: Path) -> bool:
    fresh = state_of(open_catalog(path))
    with w.lock:
        return state_of(catalog) == fresh


def replace_atomically(path: Path, data: bytes, tmp_name: str | None = None) -> None:
    tmp = path.with_name(tmp_name or f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def memory(catalog: Catalog, mid: str) -> Any:
    hits = [m for v in catalog.vaults for m in v.memories if m.id == mid]
    return hits[0] if hits else None


OCEAN_DOC = (
    "---\ntags: [watch]\nconfidence: 0.7\ncreated: 2026-11-20\ndecay: linear-30d\n"
    "source: courier\nbacklinks: []\n---\n{body}\n"
)


@pytest.fixture
def vaults(own_fixtures_copy: Path) -> Path:
    return own_fixtures_copy


@pytest.fixture
def ocean_file(vaults: Path) -> tuple[Path, str]:
    f = vaults / "project-ocean/agents/courier/memory/vault/obs-2026-11-09-001.md"
    assert f.is_file()
    return f, "courier/obs-2026-11-09-001"


# -- noise and the own-writes registry ---------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        ".obs.md.swp",
        ".obs.md.swx",
        "obs.md~",
        "#obs.md#",
        ".#obs.md",
        "4913",
        ".DS_Store",
        f"{TEMP_PREFIX}1a2b3c-obs.md",
        "obs.md.tmp",
    ],
)
def test_editor_and_temp_files_are_noise(name: str) -> None:
    assert is_noise_name(name)
    assert is_noise(f"agents/courier/memory/vault/{name}")


@pytest.mark.parametrize(
    "rel", ["obs-1.md", "observations.md", "experiences.jsonl", "_state.json", "graph/x/#1.md"]
)
def test_vault_files_are_not_noise(rel: str) -> None:
    assert not is_noise(rel)


def test_noise_folders() -> None:
    assert is_noise(".memlens/journal.jsonl")
    assert is_noise(".git/index")
    assert is_noise("sub/.git/objects/ab")
    assert not is_noise("git/obs.md")


def test_selfwrites_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    selfwrites.clear()
    f = tmp_path / "a.md"
    assert not selfwrites.expecting(f)
    selfwrites.note_write(f, "abc")
    assert selfwrites.expecting(f)
    assert selfwrites.is_own_write(f, "abc")
    assert not selfwrites.is_own_write(f, "other")  # someone wrote after memlens
    selfwrites.note_write(tmp_path / "b.md", "def", moved_from=f)
    assert selfwrites.is_own_write(f, None)  # memlens moved it away
    assert not selfwrites.is_own_write(f, "abc")
    assert selfwrites.is_own_write(tmp_path / "b.md", "def")
    monkeypatch.setattr(selfwrites, "TTL", -1.0)
    assert not selfwrites.is_own_write(tmp_path / "b.md", "def")


def test_writes_note_what_they_write(tmp_path: Path) -> None:
    selfwrites.clear()
    f = tmp_path / "a.md"
    f.write_bytes(b"old")
    after = atomic_write(f, b"new", snapshot(f))
    assert selfwrites.is_own_write(f, after.sha256)
    dst = tmp_path / "sub" / "a.md"
    move_no_clobber(f, dst, None)
    assert selfwrites.is_own_write(dst, after.sha256)
    assert selfwrites.is_own_write(f, None)


# -- external changes --------------------------------------------------------------


def test_external_edit_is_changed(vaults: Path, ocean_file: tuple[Path, str]) -> None:
    f, mid = ocean_file
    with watching(vaults) as (catalog, _w, rec):
        replace_atomically(f, OCEAN_DOC.format(body="Edited from outside.").encode())
        c = rec.wait_for(ChangeKind.CHANGED, mid)
        assert not c.own
        assert c.path == "agents/courier/memory/vault/obs-2026-11-09-001.md"
        assert c.memory is not None and "Edited from outside." in c.memory.body
        assert "Edited from outside." in memory(catalog, mid).body
        assert [x.kind for x in rec.of(mid)] == [ChangeKind.CHANGED]


def test_noise_files_cause_nothing(vaults: Path, ocean_file: tuple[Path, str]) -> None:
    f, mid = ocean_file
    folder = f.parent
    with watching(vaults) as (_catalog, _w, rec):
        for name in (".x.md.swp", "x.md~", "#x.md#", ".#x.md", "4913", ".DS_Store"):
            (folder / name).write_text("---\nnot: a memory\n---\n")
        (folder / f"{TEMP_PREFIX}abc-x.md").write_text(OCEAN_DOC.format(body="temp"))
        (vaults / "project-ocean" / ".memlens").mkdir()
        (vaults / "project-ocean" / ".memlens" / "journal.jsonl").write_text("{}\n")
        (vaults / ".git").mkdir()
        (vaults / ".git" / "HEAD").write_text("ref: x\n")
        # A real change afterwards: once it is reported, the noise was seen too.
        replace_atomically(f, OCEAN_DOC.format(body="sentinel").encode())
        rec.wait_for(ChangeKind.CHANGED, mid)
        assert rec.summary() == [
            ("changed", mid, "agents/courier/memory/vault/obs-2026-11-09-001.md")
        ]


def test_vim_style_save_is_a_change(vaults: Path, ocean_file: tuple[Path, str]) -> None:
    f, mid = ocean_file
    with watching(vaults, grace=1.0) as (catalog, _w, rec):
        backup = f.with_name(f.name + "~")
        (f.parent / "4913").write_text("")
        (f.parent / "4913").unlink()
        os.rename(f, backup)
        f.write_text(OCEAN_DOC.format(body="saved by vim"))
        backup.unlink()
        rec.wait_for(ChangeKind.CHANGED, mid)
        assert wait_until(lambda: "saved by vim" in memory(catalog, mid).body)
        assert all(c.kind is ChangeKind.CHANGED for c in rec.of(mid)), rec.summary()


def test_delete_then_create_is_a_change(vaults: Path, ocean_file: tuple[Path, str]) -> None:
    f, mid = ocean_file
    with watching(vaults, grace=2.0) as (catalog, _w, rec):
        f.unlink()
        time.sleep(0.15)  # long enough for the deletion to be seen alone
        f.write_text(OCEAN_DOC.format(body="recreated"))
        rec.wait_for(ChangeKind.CHANGED, mid)
        assert [c.kind for c in rec.of(mid)] == [ChangeKind.CHANGED]
        assert "recreated" in memory(catalog, mid).body


def test_a_real_delete_is_removed(vaults: Path, ocean_file: tuple[Path, str]) -> None:
    f, mid = ocean_file
    with watching(vaults, grace=0.2) as (catalog, w, rec):
        f.unlink()
        c = rec.wait_for(ChangeKind.REMOVED, mid)
        assert c.path == "agents/courier/memory/vault/obs-2026-11-09-001.md"
        assert memory(catalog, mid) is None
        assert matches_full_rescan(catalog, w, vaults)


def test_move_keeps_the_id(vaults: Path) -> None:
    graph = vaults / "cognitive-memory" / "graph"
    with watching(vaults) as (catalog, w, rec):
        before = {m.path: m.id for v in catalog.vaults for m in v.memories}
        valid = sorted(
            p for p in (graph / "solutions").glob("*.md") if f"graph/solutions/{p.name}" in before
        )
        f = valid[0]  # a valid memory (the folder also holds an invalid duplicate)
        mid = before[f"graph/solutions/{f.name}"]
        os.rename(f, graph / "fixes" / f.name)
        c = rec.wait_for(ChangeKind.MOVED, mid)
        assert c.old_path == f"graph/solutions/{f.name}"
        assert c.path == f"graph/fixes/{f.name}"
        assert [x.kind for x in rec.of(mid)] == [ChangeKind.MOVED]
        assert wait_until(lambda: matches_full_rescan(catalog, w, vaults))


def test_folder_rename(vaults: Path) -> None:
    agents = vaults / "project-ocean" / "agents"
    with watching(vaults, grace=0.2) as (catalog, w, rec):
        os.rename(agents / "courier", agents / "falcon")
        rec.wait_for(ChangeKind.ADDED, "falcon/obs-2026-11-09-001")
        rec.wait_for(ChangeKind.REMOVED, "courier/obs-2026-11-09-001")
        assert wait_until(lambda: matches_full_rescan(catalog, w, vaults))


def test_jsonl_append_and_dream_cycle_edit(vaults: Path) -> None:
    # The bundled demo vaults stand in for these two formats' concrete content.
    for fmt in ("experience-records", "dream-cycle"):
        shutil.copytree(DEMO / fmt, vaults / "demo" / fmt)
    exp = vaults / "demo" / "experience-records" / "experiences.jsonl"
    obs = vaults / "demo" / "dream-cycle" / "observations.md"
    with watching(vaults) as (catalog, w, rec):
        line = (
            '{"id": "exp_2026-11-21T10:00:00Z_w1", "type": "occurrence", '
            '"created_at": "2026-11-21T10:00:00Z", "content": {"text": "Watched append."}, '
            '"provenance": {"sources": [], "actor": "agent", "method": "capture"}, '
            '"confidence": {"p": 0.9}, "parents": [], "tags": ["watch"]}\n'
        )
        data = exp.read_bytes()
        with exp.open("ab") as fh:
            if not data.endswith(b"\n"):
                fh.write(b"\n")
            fh.write(line.encode())
        c = rec.wait_for(ChangeKind.ADDED, "exp_2026-11-21T10:00:00Z_w1")
        assert c.path == "experiences.jsonl" and c.line is not None

        data = obs.read_bytes()
        assert b"renews on 2027-03-01." in data
        replace_atomically(obs, data.replace(b"renews on 2027-03-01.", b"renews on 2027-04-01."))
        rec.wait(lambda cs: any(x.format == "dream-cycle" for x in cs))
        dream = [c for c in rec.changes if c.format == "dream-cycle"]
        assert [(c.kind, c.path) for c in dream] == [(ChangeKind.CHANGED, "observations.md")]
        assert dream[0].memory is not None and "2027-04-01" in dream[0].memory.body
        assert wait_until(lambda: matches_full_rescan(catalog, w, vaults))


def test_partial_write_is_never_removed(vaults: Path, ocean_file: tuple[Path, str]) -> None:
    f, mid = ocean_file
    doc = OCEAN_DOC.format(body="written in two steps").encode()
    with watching(vaults, grace=2.0) as (catalog, _w, rec):
        with f.open("wb") as fh:  # truncates: the file is empty for a moment
            fh.write(doc[:20])
            fh.flush()
            time.sleep(0.2)
            fh.write(doc[20:])
        rec.wait_for(ChangeKind.CHANGED, mid)
        kinds = {c.kind for c in rec.changes}
        assert ChangeKind.REMOVED not in kinds, rec.summary()
        assert ChangeKind.PROBLEM not in kinds, rec.summary()
        assert "written in two steps" in memory(catalog, mid).body


def test_unreadable_file_is_unknown_then_back(
    vaults: Path, ocean_file: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    f, mid = ocean_file
    locked = threading.Event()
    real_open = builtins.open

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kw: Any) -> Any:
        if locked.is_set() and "r" in mode and os.fspath(file).endswith(f.name):
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, mode, *args, **kw)

    real_os_open = os.open

    def guarded_os_open(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        writing = flags & (os.O_WRONLY | os.O_RDWR)
        if locked.is_set() and not writing and os.fspath(path).endswith(f.name):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_os_open(path, flags, *args, **kw)

    # Running as root, chmod 000 does not stop reads: deny reading this one
    # file at the lowest levels readers go through (open/Path.open and os.open).
    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)
    monkeypatch.setattr(os, "open", guarded_os_open)
    with watching(vaults, unreadable_timeout=10.0) as (catalog, _w, rec):
        locked.set()
        replace_atomically(f, OCEAN_DOC.format(body="after the lock").encode())
        rec.wait_for(ChangeKind.UNKNOWN, mid)
        assert memory(catalog, mid) is not None  # still shown as it was
        locked.clear()
        rec.wait_for(ChangeKind.CHANGED, mid)
        assert [c.kind for c in rec.of(mid)] == [ChangeKind.UNKNOWN, ChangeKind.CHANGED]
        assert "after the lock" in memory(catalog, mid).body
        assert not any(c.kind is ChangeKind.REMOVED for c in rec.changes)


def test_file_that_stays_broken_is_a_problem_not_removed(
    vaults: Path, ocean_file: tuple[Path, str]
) -> None:
    f, mid = ocean_file
    with watching(vaults, grace=0.2) as (catalog, w, rec):
        replace_atomically(f, b"---\ntags: [unclosed\n---\nbroken\n")
        c = rec.wait_for(
            ChangeKind.PROBLEM, path="agents/courier/memory/vault/obs-2026-11-09-001.md"
        )
        assert c.reason == "malformed_frontmatter"
        assert not any(x.kind is ChangeKind.REMOVED for x in rec.changes), rec.summary()
        assert memory(catalog, mid) is None
        assert matches_full_rescan(catalog, w, vaults)
        replace_atomically(f, OCEAN_DOC.format(body="fixed").encode())
        rec.wait_for(ChangeKind.PROBLEM_CLEARED, path=c.path)
        rec.wait_for(ChangeKind.ADDED, mid)


# -- own writes ----------------------------------------------------------------------


def test_own_save_is_not_an_external_change(vaults: Path, ocean_file: tuple[Path, str]) -> None:
    f, mid = ocean_file
    with watching(vaults) as (catalog, _w, rec):
        atomic_write(f, OCEAN_DOC.format(body="saved by memlens").encode(), snapshot(f))
        c = rec.wait_for(ChangeKind.CHANGED, mid)
        assert c.own
        assert "saved by memlens" in memory(catalog, mid).body
        # An agent's write right after is external again.
        replace_atomically(f, OCEAN_DOC.format(body="agent wrote").encode())
        assert rec.wait(lambda cs: len([x for x in cs if x.id == mid]) >= 2)
        assert [(x.kind, x.own) for x in rec.of(mid)] == [
            (ChangeKind.CHANGED, True),
            (ChangeKind.CHANGED, False),
        ]


def test_own_actions_are_flagged(vaults: Path, ocean_file: tuple[Path, str]) -> None:
    _f, mid = ocean_file
    with watching(vaults) as (catalog, w, rec):
        Action("pin", memory(catalog, mid)).apply()
        c = rec.wait_for(ChangeKind.CHANGED, mid)
        assert c.own and c.memory is not None and c.memory.pinned
        assert wait_until(lambda: memory(catalog, mid).pinned)
        Action("archive", memory(catalog, mid)).apply()
        moved = rec.wait_for(ChangeKind.MOVED, mid)
        assert moved.own and moved.path.startswith("agents/courier/memory/archive/")
        assert all(x.own for x in rec.changes), rec.summary()
        assert wait_until(lambda: matches_full_rescan(catalog, w, vaults))


# -- vaults appearing and going, missed events ----------------------------------------


def test_new_vault_below_watched_folder(vaults: Path) -> None:
    with watching(vaults) as (catalog, w, rec):
        assert not any(v.rel == "later/ov" for v in catalog.vaults)
        shutil.copytree(DEMO / "observation-v1", vaults / "later" / "ov")
        rec.wait_for(ChangeKind.ADDED, "obs-101", vault_root=(vaults / "later" / "ov").resolve())
        assert wait_until(lambda: matches_full_rescan(catalog, w, vaults))
        new = [v for v in catalog.vaults if v.rel == "later/ov"]
        assert len(new) == 1 and new[0].format == "observation-v1"
        # And it is watched from now on.
        f = vaults / "later" / "ov" / "observations" / "obs-101.md"
        f.unlink()
        rec.wait_for(ChangeKind.REMOVED, "obs-101", vault_root=new[0].root)


def test_new_vault_created_step_by_step(tmp_path: Path) -> None:
    base = tmp_path / "empty"
    base.mkdir()
    with watching(base) as (catalog, w, rec):
        assert catalog.vaults == []
        folder = base / "agents" / "scout" / "memory" / "vault"
        folder.mkdir(parents=True)
        (folder / "obs-2026-11-01-001.md").write_text(OCEAN_DOC.format(body="first"))
        rec.wait_for(ChangeKind.ADDED, "scout/obs-2026-11-01-001")
        (folder / "obs-2026-11-01-002.md").write_text(OCEAN_DOC.format(body="second"))
        rec.wait_for(ChangeKind.ADDED, "scout/obs-2026-11-01-002")
        assert [v.rel for v in catalog.vaults] == ["."]
        assert wait_until(lambda: matches_full_rescan(catalog, w, base))


def test_vault_removed(vaults: Path) -> None:
    with watching(vaults, grace=0.2) as (catalog, w, rec):
        n = len(catalog.vaults)
        shutil.rmtree(vaults / "project-ocean")
        rec.wait_for(ChangeKind.REMOVED, "courier/obs-2026-11-18-001")
        assert wait_until(lambda: len(catalog.vaults) == n - 1)
        assert matches_full_rescan(catalog, w, vaults)


def test_stat_walk_catches_missed_events(
    vaults: Path, ocean_file: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    f, mid = ocean_file
    # Drop every event: only the periodic stat walk can see the change.
    monkeypatch.setattr(VaultWatcher, "_ingest", lambda self, raw: None)
    with watching(vaults, rescan_interval=0.3) as (catalog, _w, rec):
        replace_atomically(f, OCEAN_DOC.format(body="seen by the stat walk").encode())
        rec.wait_for(ChangeKind.CHANGED, mid)
        assert "seen by the stat walk" in memory(catalog, mid).body


def test_changes_between_scan_and_start_are_not_lost(
    vaults: Path, ocean_file: tuple[Path, str]
) -> None:
    f, mid = ocean_file
    since = time.time()
    catalog = open_catalog(vaults)
    replace_atomically(f, OCEAN_DOC.format(body="written before watching").encode())
    rec = Recorder()
    w = VaultWatcher(
        catalog, rec, paths=[vaults], since=since, rescan_interval=None, on_error=rec.on_error
    )
    with w:
        assert w.wait_ready(TIMEOUT)
        rec.wait_for(ChangeKind.CHANGED, mid)
    assert "written before watching" in memory(catalog, mid).body
    assert not rec.errors


def test_stop_is_prompt(vaults: Path) -> None:
    with watching(vaults) as (_catalog, w, _rec):
        assert w.running
    t0 = time.monotonic()
    w.stop()
    assert not w.running
    assert time.monotonic() - t0 < 2.0


def test_folder_holding_a_vault_moved_away(vaults: Path, tmp_path: Path) -> None:
    (vaults / "deep").mkdir()
    shutil.move(vaults / "project-ocean", vaults / "deep" / "po")
    with watching(vaults, grace=0.2) as (catalog, w, rec):
        assert any(v.rel == "deep/po" for v in catalog.vaults)
        os.rename(vaults / "deep", tmp_path / "elsewhere")  # one event: the folder
        rec.wait_for(ChangeKind.REMOVED, "courier/obs-2026-11-18-001")
        assert wait_until(lambda: not any(v.rel == "deep/po" for v in catalog.vaults))
        assert matches_full_rescan(catalog, w, vaults)


# -- stopping during a stat walk ------------------------------------------------------


def test_a_stat_walk_stops_soon_after_stop(vaults: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Quitting during the first stat walk (seconds at 100k files) does not wait for its end."""
    from memlens.core.scan import watch as watch_module

    catalog = open_catalog(vaults / "project-ocean", cache=False)
    w = VaultWatcher(catalog, lambda _changes: None, rescan_interval=None)
    st = next(iter(w._states.values()))
    files = len(watch_module.vault_files(st.vault))
    assert files > 4
    monkeypatch.setattr(watch_module, "STOP_CHECK", 1)
    real_stat = watch_module.stat_of
    calls = [0]

    def stat_then_stop(p: Path) -> Any:
        calls[0] += 1
        if calls[0] == 2:
            w._stop.set()  # stop() pressed while the walk runs
        return real_stat(p)

    monkeypatch.setattr(watch_module, "stat_of", stat_then_stop)
    w._initial_walk(st, None)
    assert calls[0] == 2
    assert w._stat_all(st.vault.root, st) is None
    assert calls[0] == 2


def test_a_stat_walk_waits_while_paused_and_stopping_ends_the_wait(vaults: Path) -> None:
    """`pause` is asked between files of every stat walk: the first walk is ready
    only once it says no more, and stopping the watcher ends a wait at once."""
    asked: list[float] = []
    until = [time.monotonic() + 0.3]

    def pause() -> bool:  # the app: "a key came less than 0.4 s ago"
        asked.append(time.monotonic())
        return time.monotonic() < until[0]

    started = time.monotonic()
    with watching(vaults, pause=pause) as (_catalog, w, _rec):
        assert w.ready.is_set() and time.monotonic() - started >= 0.3
        assert len(asked) >= 2  # asked again while it said yes
        st = next(iter(w._states.values()))
        until[0] = float("inf")  # paused for good: only stopping ends it
        ended: list[object] = []
        walker = threading.Thread(target=lambda: ended.append(w._stat_all(st.vault.root, st)))
        before = len(asked)
        walker.start()
        assert wait_until(lambda: len(asked) >= before + 2)  # waiting in the walk
        w._stop.set()
        walker.join(2.0)
        assert not walker.is_alive() and ended == [None]


def test_a_file_stat_is_packed_and_its_change_is_seen(tmp_path: Path) -> None:
    from memlens.core.scan.watch_files import stat_mtime_ns, stat_of

    path = tmp_path / "note.md"
    path.write_text("one\n")
    first = stat_of(path)
    assert first is not None and first == stat_of(path)
    st = os.stat(path)
    assert stat_mtime_ns(first) == st.st_mtime_ns
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    later = stat_of(path)
    assert later is not None and later != first
    assert stat_mtime_ns(later) == st.st_mtime_ns + 1_000_000_000
    path.write_text("one\ntwo\n")  # a size change alone is seen too
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert stat_of(path) != later
    assert stat_of(tmp_path / "gone.md") is None
