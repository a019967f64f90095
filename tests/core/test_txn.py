"""Transactions: runs as one entry, intent recovery, append-only tails, a torn journal tail."""

from __future__ import annotations

import json
import os
import shutil
from datetime import date
from pathlib import Path

import pytest

import memlens.core
from memlens.core.errors import ConflictError
from memlens.core.formats.dream_cycle.runs import decay_run
from memlens.core.write.journal import (
    JOURNAL,
    STATE_DIR,
    FileChange,
    Plan,
    read_journal,
    store_blob,
)
from memlens.core.write.recovery import intent_path, recover, write_intent
from memlens.core.write.txn import apply_plan, apply_run
from memlens.core.write.undo import undo_last
from memlens.core.write.writes import digest, snapshot

DEMO = Path(memlens.core.__file__).parent / "demo_vaults"


def _write_plan(root: Path, name: str, data: bytes, *, append_only: bool = False) -> Plan:
    path = root / name
    change = FileChange("write", path, snapshot(path), data=data, append_only=append_only)
    return Plan("set", root, [name], f"rewrite {name}", [change])


def test_a_run_is_one_entry_and_one_undo(tmp_path: Path) -> None:
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_bytes(b"old " + name.encode())
    steps = [
        (name, lambda n=name: _write_plan(tmp_path, n, b"new " + n.encode()))
        for name in ("a.md", "b.md", "a.md")
    ]
    entry, refused = apply_run(tmp_path, "decay", steps)
    # The third step planned against the first one's result, so it is a no-op write.
    assert entry is not None and refused == []
    assert [e["action"] for e in read_journal(tmp_path)] == ["decay"]
    undo_last(tmp_path)
    assert (tmp_path / "a.md").read_bytes() == b"old a.md"
    assert (tmp_path / "b.md").read_bytes() == b"old b.md"


def test_a_refused_step_is_skipped_and_reported(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"a")
    stale = _write_plan(tmp_path, "a.md", b"x")
    (tmp_path / "a.md").write_bytes(b"changed by an agent")
    (tmp_path / "b.md").write_bytes(b"b")
    entry, refused = apply_run(
        tmp_path, "bulk", [("a", lambda: stale), ("b", lambda: _write_plan(tmp_path, "b.md", b"B"))]
    )
    assert entry is not None and [label for label, _ in refused] == ["a"]
    assert (tmp_path / "a.md").read_bytes() == b"changed by an agent"
    assert (tmp_path / "b.md").read_bytes() == b"B"


def _intent(root: Path, ops: list[dict[str, object]], txid: str = "deadbeef") -> None:
    write_intent(root, {"id": txid, "action": "set", "summary": "t", "ops": ops, "dirs": []})


def test_recovery_restores_a_written_file_and_keeps_a_foreign_change(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"after a")
    (tmp_path / "b.md").write_bytes(b"someone else's edit")
    ops: list[dict[str, object]] = []
    for name, before, after in (("a.md", b"before a", b"after a"), ("b.md", b"before b", b"x")):
        ops.append(
            {
                "op": "write",
                "path": name,
                "before": store_blob(tmp_path, before),
                "after": digest(after),
                "planned_size": len(after),
                "after_size": len(after),
            }
        )
    _intent(tmp_path, ops)
    report = recover(tmp_path)
    assert (tmp_path / "a.md").read_bytes() == b"before a"
    assert (tmp_path / "b.md").read_bytes() == b"someone else's edit"  # kept
    assert report.needs_user and "b.md" in report.conflicts[0]
    assert not intent_path(tmp_path, "deadbeef").exists()
    assert (tmp_path / STATE_DIR / "unresolved" / "deadbeef.json").exists()


def test_recovery_of_a_half_done_move_drops_only_the_second_link(tmp_path: Path) -> None:
    src, dst = tmp_path / "vault" / "m.md", tmp_path / "archive" / "m.md"
    src.parent.mkdir()
    dst.parent.mkdir()
    src.write_bytes(b"memory")
    os.link(src, dst)
    _intent(
        tmp_path,
        [{"op": "move", "path": "vault/m.md", "dst": "archive/m.md", "sha": digest(b"memory")}],
    )
    assert recover(tmp_path).rolled_back
    assert src.read_bytes() == b"memory" and not dst.exists()


def test_recovery_of_a_created_file_moves_it_aside(tmp_path: Path) -> None:
    (tmp_path / "new.md").write_bytes(b"created")
    _intent(tmp_path, [{"op": "create", "path": "new.md", "after": digest(b"created")}], "c0ffee")
    recover(tmp_path)
    assert not (tmp_path / "new.md").exists()
    assert (tmp_path / STATE_DIR / "undone" / "c0ffee" / "new.md").read_bytes() == b"created"


def test_recovery_only_drops_the_intent_of_a_committed_transaction(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"a")
    entry = apply_plan(_write_plan(tmp_path, "a.md", b"b"))
    _intent(tmp_path, entry["ops"], str(entry["id"]))
    report = recover(tmp_path)
    assert report.finished and not report.rolled_back
    assert (tmp_path / "a.md").read_bytes() == b"b"


def test_append_only_rollback_and_undo_keep_an_agents_appended_lines(tmp_path: Path) -> None:
    log = tmp_path / "archive.jsonl"
    log.write_bytes(b'{"id": 1}\n')
    apply_plan(_write_plan(tmp_path, "archive.jsonl", b'{"id": 1}\n{"id": 2}\n', append_only=True))
    with log.open("ab") as out:
        out.write(b'{"id": "agent"}\n')
    undo_last(tmp_path)
    assert log.read_bytes() == b'{"id": 1}\n{"id": "agent"}\n'


def test_append_only_rollback_keeps_an_agents_tail(tmp_path: Path) -> None:
    log = tmp_path / "observations.md"
    before, after = b"# Obs\n\n## One\nx\n", b"# Obs\n\n## One\ny\n"
    log.write_bytes(after + b"\n## Agent\nnew\n")
    op = {
        "op": "write",
        "path": "observations.md",
        "before": store_blob(tmp_path, before),
        "before_size": len(before),
        "after": digest(after),
        "planned_size": len(after),
        "after_size": len(after),
        "append_only": True,
    }
    _intent(tmp_path, [op])
    assert recover(tmp_path).rolled_back
    assert log.read_bytes() == before + b"\n## Agent\nnew\n"


def test_a_torn_journal_tail_is_skipped_and_never_glued_to_the_next_entry(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"a")
    apply_plan(_write_plan(tmp_path, "a.md", b"b"))
    with (tmp_path / STATE_DIR / JOURNAL).open("ab") as out:
        out.write(b'{"id": "torn", "act')
    apply_plan(_write_plan(tmp_path, "a.md", b"c"))
    assert [e["action"] for e in read_journal(tmp_path)] == ["set", "set"]
    undo_last(tmp_path)
    undo_last(tmp_path)
    assert (tmp_path / "a.md").read_bytes() == b"a"


def test_undo_refuses_a_file_changed_after_the_action(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"a")
    apply_plan(_write_plan(tmp_path, "a.md", b"b"))
    (tmp_path / "a.md").write_bytes(b"edited")
    with pytest.raises(ConflictError):
        undo_last(tmp_path)
    assert (tmp_path / "a.md").read_bytes() == b"edited"


def test_dream_decay_gives_year_one_sections_distinct_archive_ids(tmp_path: Path) -> None:
    root = tmp_path / "dream-cycle"
    shutil.copytree(DEMO / "dream-cycle", root)
    obs = root / "observations.md"
    extra = "".join(
        f"\n## Ancient note {i}\n"
        f"<!-- dc:type=event dc:importance=4.0 dc:ttl=14 dc:date=0001-01-01 -->\n"
        f"Recorded with a placeholder date {i}.\n"
        for i in (1, 2)
    )
    obs.write_bytes(obs.read_bytes() + extra.encode())
    plan, report = decay_run(root, date(2026, 11, 22))
    ids = [i.archive_id for i in report.archived]
    assert len(ids) == len(set(ids)) and "OBS-00010101-001" in ids and "OBS-00010101-002" in ids
    apply_plan(plan)
    lines = [json.loads(x) for x in (root / "archive.jsonl").read_text().splitlines()]
    assert len({x["id"] for x in lines}) == len(lines)


def test_a_writer_gives_up_on_a_vault_another_process_holds(tmp_path: Path) -> None:
    """A lock held by a live process: recovery passes by, a writer says so instead of hanging."""
    import subprocess
    import sys

    from memlens.core.write.journal import state_dir
    from memlens.core.write.vault_lock import LOCK_NAME, VaultBusyError, vault_lock

    state = state_dir(tmp_path)
    (state / LOCK_NAME).touch()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys; f = open(sys.argv[1], 'r+'); fcntl.flock(f, fcntl.LOCK_EX);"
            " print('held', flush=True); sys.stdin.read()",
            str(state / LOCK_NAME),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with vault_lock(state, wait=False) as held:
            assert held is False
        with (
            pytest.raises(VaultBusyError, match="another memlens process"),
            vault_lock(state, seconds=0.05),
        ):
            pass
    finally:
        holder.communicate("")
    with vault_lock(state, seconds=0.05) as held:
        assert held is True


def test_recover_on_a_vault_memlens_never_wrote_creates_nothing(tmp_path: Path) -> None:
    vault = tmp_path / "dream"
    vault.mkdir()
    (vault / "observations.md").write_text("## one\nbody\n", encoding="utf-8")
    report = recover(vault, sweep=True)
    assert not report.rolled_back and not report.conflicts and not report.busy
    assert sorted(p.name for p in vault.iterdir()) == ["observations.md"]


def test_processes_racing_to_create_the_state_folder_all_succeed(tmp_path: Path) -> None:
    """`.memlens/.gitignore` is made before the lock exists: racers never trip on each other."""
    import subprocess
    import sys

    script = (
        "import sys; from pathlib import Path; from memlens.core.write.journal import state_dir\n"
        "for i in range(150):\n"
        "    d = Path(sys.argv[1]) / f'v{i}'; d.mkdir(exist_ok=True); state_dir(d)\n"
    )
    racers = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    errors = [p.communicate()[1].decode() for p in racers]
    assert [p.returncode for p in racers] == [0, 0, 0], errors
    for i in range(150):
        assert (tmp_path / f"v{i}" / STATE_DIR / ".gitignore").read_bytes() == b"*\n"
    assert not list(tmp_path.rglob(".memlens-tmp-*"))
