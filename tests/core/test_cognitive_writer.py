"""Cognitive-memory actions on copies of the fixture vault: files moved or rewritten
exactly as DESIGN.md's table says, minimal diffs, validation, conflicts, paths, undo."""

from __future__ import annotations

import difflib
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memlens.core.errors import ConflictError, RefusedError, UnsafePathError
from memlens.core.formats.cognitive_memory.adapter import CognitiveMemoryAdapter
from memlens.core.formats.cognitive_memory.schema import TYPE_DIRS
from memlens.core.formats.cognitive_memory.writer import WRITER, CognitiveMemoryWriter
from memlens.core.model import Memory
from memlens.core.text.yamledit import REMOVE
from memlens.core.write.actions import Action, apply_bulk, writer_for
from memlens.core.write.journal import apply_plan, undo_last

ADAPTER = CognitiveMemoryAdapter()
NOW = datetime(2026, 11, 22, 9, 30, 5, tzinfo=UTC)

ZFS = "graph/configurations/fly-machine-sizing-for-the-match-server-f7b0c4.md"  # CRLF
UV = "graph/decisions/adopt-pnpm-workspaces-for-the-monorepo-1e6c9f.md"  # BOM
EXTRA = "graph/solutions/stopped-websocket-reconnect-storms-after-deploys-7a1c30.md"
CADDY = "graph/decisions/chose-sqlite-with-litestream-over-hosted-postgres-d4a7e2.md"
PINNED = "vault/never-store-payment-card-numbers-e9d0c3.md"


@pytest.fixture
def vault(own_fixtures_copy: Path) -> Path:
    return (own_fixtures_copy / "cognitive-memory").resolve()


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the vault except memlens's own journal folder."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def memories(root: Path) -> dict[str, Memory]:
    return {m.path: m for m in ADAPTER.scan(root).memories}


def changed_lines(a: bytes, b: bytes) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(
            a.decode().splitlines(True), b.decode().splitlines(True), n=0
        )
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def only_changes(before: dict[str, bytes], after: dict[str, bytes]) -> dict[str, str]:
    """{path: 'added'|'removed'|'changed'} for every differing file."""
    out: dict[str, str] = {}
    for k in before.keys() | after.keys():
        if k not in after:
            out[k] = "removed"
        elif k not in before:
            out[k] = "added"
        elif before[k] != after[k]:
            out[k] = "changed"
    return out


# --------------------------------------------------------------------------- registration


def test_writer_is_registered_for_the_format() -> None:
    w = writer_for("cognitive-memory")
    assert isinstance(w, CognitiveMemoryWriter)
    assert w.format_id == "cognitive-memory"


# --------------------------------------------------------------------------- moves


def test_pin_moves_the_file_to_vault_and_undo_restores_every_byte(vault: Path) -> None:
    before = tree(vault)
    m = memories(vault)[CADDY]
    plan = WRITER.plan_pin(m)
    assert tree(vault) == before  # planning never writes
    name = Path(CADDY).name
    assert plan.describe() == [f"move {CADDY} -> vault/{name}"]
    apply_plan(plan)
    after = tree(vault)
    assert only_changes(before, after) == {CADDY: "removed", f"vault/{name}": "added"}
    assert after[f"vault/{name}"] == before[CADDY]  # moved unchanged
    pinned = memories(vault)[f"vault/{name}"]
    assert pinned.pinned
    assert ADAPTER.decay(pinned, NOW.date()).score == 999.0
    undo_last(vault)
    assert tree(vault) == before


def test_unpin_moves_back_to_the_type_dir_from_frontmatter(vault: Path) -> None:
    before = tree(vault)
    m = memories(vault)[PINNED]
    assert m.kind == "decision"
    apply_plan(WRITER.plan_unpin(m))
    dst = f"graph/{TYPE_DIRS['decision']}/{Path(PINNED).name}"
    assert only_changes(before, tree(vault)) == {PINNED: "removed", dst: "added"}
    assert not memories(vault)[dst].pinned
    undo_last(vault)
    assert tree(vault) == before


def test_archive_then_restore_round_trip(vault: Path) -> None:
    before = tree(vault)
    m = memories(vault)[EXTRA]
    apply_plan(WRITER.plan_archive(m))
    dst = "archive/solutions/" + Path(EXTRA).name
    assert only_changes(before, tree(vault)) == {EXTRA: "removed", dst: "added"}
    archived = memories(vault)[dst]
    assert archived.archived
    assert not (vault / "graph" / "archive").exists()  # outside graph/
    apply_plan(WRITER.plan_restore(archived))
    assert tree(vault) == before
    undo_last(vault)  # undo the restore
    assert (vault / dst).exists()
    undo_last(vault)  # undo the archive
    assert tree(vault) == before


def test_archive_keeps_the_folder_after_a_retype(vault: Path) -> None:
    m = memories(vault)[EXTRA]
    apply_plan(WRITER.plan_promote(m, {"type": "insight", "now": NOW}))
    m = memories(vault)[EXTRA]
    assert m.kind == "insight"  # promote never moves
    apply_plan(WRITER.plan_archive(m))
    assert (vault / "archive/solutions" / Path(EXTRA).name).exists()
    restored = WRITER.plan_restore(memories(vault)["archive/solutions/" + Path(EXTRA).name])
    assert restored.changes[0].dst == vault / EXTRA


def test_pinned_memories_are_never_archived(vault: Path) -> None:
    with pytest.raises(RefusedError, match="unpin"):
        WRITER.plan_archive(memories(vault)[PINNED])


def test_move_refuses_an_existing_destination(vault: Path) -> None:
    before = tree(vault)
    m = memories(vault)[CADDY]
    (vault / "vault" / Path(CADDY).name).write_bytes(b"someone else's file\n")
    with pytest.raises(RefusedError, match="already exists"):
        WRITER.plan_pin(m)
    # a destination appearing between plan and apply is refused by apply_plan too
    (vault / "vault" / Path(CADDY).name).unlink()
    plan = WRITER.plan_pin(m)
    (vault / "vault" / Path(CADDY).name).write_bytes(b"raced\n")
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert (vault / CADDY).read_bytes() == before[CADDY]
    assert (vault / "vault" / Path(CADDY).name).read_bytes() == b"raced\n"


def test_pin_refuses_a_vault_folder_that_is_a_symlink_out(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    moved = vault.parent / "real-vault-dir"
    (vault / "vault").rename(moved)
    (vault / "vault").symlink_to(outside, target_is_directory=True)
    m = memories(vault)[CADDY]
    with pytest.raises(UnsafePathError):
        WRITER.plan_pin(m)
    assert list(outside.iterdir()) == []


def test_a_memory_path_with_traversal_is_refused(vault: Path) -> None:
    m = memories(vault)[CADDY]
    for bad in ("../x.md", "graph/../../x.md", "/etc/passwd", "graph/decisions/../../../x.md"):
        m.path = bad
        with pytest.raises((RefusedError, UnsafePathError)):
            WRITER.plan_set(m, {"importance": 0.9}, now=NOW)


def test_nothing_is_deleted_by_any_action(vault: Path) -> None:
    count = len(tree(vault))
    ms = memories(vault)
    apply_plan(WRITER.plan_pin(ms[CADDY]))
    apply_plan(WRITER.plan_archive(ms[EXTRA]))
    apply_plan(WRITER.plan_set(ms[ZFS], {"importance": 0.9}, now=NOW))
    assert len(tree(vault)) == count
    for _ in range(3):
        undo_last(vault)
    assert len(tree(vault)) == count


# --------------------------------------------------------------------------- metadata edits


def test_set_rewrites_only_the_changed_line_and_updated(vault: Path) -> None:
    before = tree(vault)
    m = memories(vault)[EXTRA]
    apply_plan(WRITER.plan_set(m, {"importance": 0.9}, now=NOW))
    after = tree(vault)
    assert only_changes(before, after) == {EXTRA: "changed"}
    assert changed_lines(before[EXTRA], after[EXTRA]) == [
        "-importance: 0.85\n",
        "+importance: 0.9\n",
        "-updated: 2026-09-14T19:20:00+00:00\n",
        "+updated: 2026-11-22T09:30:05+00:00\n",
    ]
    fresh = memories(vault)[EXTRA]
    assert fresh.importance == 0.9
    # unknown fields survive with their order and values; the body is untouched
    assert list(fresh.fields) == list(m.fields)
    assert {k: fresh.fields[k] for k in ("project", "x-reviewed", "source_session")} == {
        "project": "strat-gameplay-webapp",
        "x-reviewed": True,
        "source_session": "2026-09-14-deploy",
    }
    assert fresh.body == m.body
    assert after[EXTRA].endswith(before[EXTRA].split(b"\n---\n", 1)[1])
    undo_last(vault)
    assert tree(vault) == before


def test_set_keeps_crlf_and_bom(vault: Path) -> None:
    before = tree(vault)
    for rel in (ZFS, UV):
        m = memories(vault)[rel]
        apply_plan(WRITER.plan_set(m, {"tags": ["edited", "tags"]}, now=NOW))
    after = tree(vault)
    assert after[ZFS].count(b"\r\n") == before[ZFS].count(b"\r\n")
    assert b"\ntags: [edited, tags]\r\n" in after[ZFS]
    assert b"\n" not in after[ZFS].replace(b"\r\n", b"")
    assert after[UV].startswith(b"\xef\xbb\xbf---")
    assert memories(vault)[UV].tags == ("edited", "tags")
    undo_last(vault)
    undo_last(vault)
    assert tree(vault) == before


def test_explicit_updated_is_not_bumped(vault: Path) -> None:
    m = memories(vault)[CADDY]
    plan = WRITER.plan_set(m, {"updated": datetime(2026, 1, 1, 12, 0, tzinfo=UTC)}, now=NOW)
    assert plan.changes[0].data is not None
    assert b"updated: 2026-01-01T12:00:00+00:00\n" in plan.changes[0].data


def _write_memory(root: Path, rel: str, updated_line: str) -> Memory:
    path = root / rel
    path.write_text(
        "---\n"
        "id: 11111111-2222-4333-8444-555555555555\n"
        "type: general\n"
        'title: "Style probe"\n'
        "importance: 0.5\n"
        "created: 2026-01-01T00:00:00+00:00\n"
        f"{updated_line}\n"
        "---\n"
        "Body.\n",
        encoding="utf-8",
    )
    return memories(root)[rel]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("updated: 2026-01-01T10:00:00+00:00", "updated: 2026-11-22T09:30:05+00:00"),
        ("updated: 2026-01-01T10:00:00Z", "updated: 2026-11-22T09:30:05Z"),
        ("updated: 2026-01-01T10:00:00+02:00", "updated: 2026-11-22T11:30:05+02:00"),
        ("updated: 2026-01-01 10:00:00+00:00", "updated: 2026-11-22 09:30:05+00:00"),
        ("updated: 2026-01-01T10:00:00.250000+00:00", "updated: 2026-11-22T09:30:05.000000+00:00"),
        ('updated: "2026-01-01T10:00:00+00:00"', 'updated: "2026-11-22T09:30:05+00:00"'),
        ("updated: 2026-01-01", "updated: 2026-11-22"),
        ("updated: 2026-01-01T10:00:00", "updated: 2026-11-22T09:30:05"),
        (
            "updated: 2026-01-01T10:00:00+00:00  # agent wrote this",
            "updated: 2026-11-22T09:30:05+00:00  # agent wrote this",
        ),
    ],
)
def test_updated_keeps_the_existing_style(vault: Path, old: str, new: str) -> None:
    rel = "graph/general/style-probe-111111.md"
    m = _write_memory(vault, rel, old)
    plan = WRITER.plan_set(m, {"importance": 0.6}, now=NOW)
    assert plan.changes[0].data is not None
    text = plan.changes[0].data.decode()
    assert new + "\n" in text
    assert changed_lines((vault / rel).read_bytes(), plan.changes[0].data) == [
        "-importance: 0.5\n",
        "+importance: 0.6\n",
        f"-{old}\n",
        f"+{new}\n",
    ]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"importance": 1.7}, "importance: 1.7 is outside 0.0-1.0"),
        ({"importance": "high"}, "importance: 'high' is not a number"),
        ({"importance": True}, "importance: True is not a number"),
        ({"confidence": -0.1}, "confidence: -0.1 is outside 0.0-1.0"),
        ({"type": "note"}, "type: 'note' is not one of solution"),
        ({"created": "yesterday"}, "created: 'yesterday' is not an ISO 8601 timestamp"),
        ({"tags": "a,b"}, "tags: must be a list of texts"),
        ({"title": ""}, "title: '' is not a non-empty text"),
        ({"id": "11111111-2222-4333-8444-555555555555"}, "id: cannot be changed"),
        ({"importance": REMOVE}, "importance: required by the format"),
        ({"relations": [{"target": "x"}]}, "relations: relations[0] lacks type"),
    ],
)
def test_refused_edit_names_the_field(
    vault: Path, changes: dict[str, object], message: str
) -> None:
    before = tree(vault)
    m = memories(vault)[CADDY]
    with pytest.raises(RefusedError) as err:
        WRITER.plan_set(m, changes, now=NOW)
    assert str(err.value).startswith(message)
    assert tree(vault) == before


def test_unknown_field_can_be_added_and_removed(vault: Path) -> None:
    before = tree(vault)
    m = memories(vault)[CADDY]
    apply_plan(WRITER.plan_set(m, {"x-owner": "dana"}, now=NOW))
    after = (vault / CADDY).read_bytes()
    assert changed_lines(before[CADDY], after) == [
        "-updated: 2026-04-18T11:00:00+00:00\n",
        "+updated: 2026-11-22T09:30:05+00:00\n",
        "+x-owner: dana\n",
    ]
    m = memories(vault)[CADDY]
    apply_plan(WRITER.plan_set(m, {"x-owner": REMOVE}, now=NOW))
    assert b"x-owner" not in (vault / CADDY).read_bytes()


def test_setting_the_same_value_is_refused(vault: Path) -> None:
    m = memories(vault)[CADDY]
    with pytest.raises(RefusedError, match="nothing to change"):
        WRITER.plan_set(m, {"importance": m.importance}, now=NOW)


# --------------------------------------------------------------------------- body


def test_edit_body_replaces_only_the_body_and_bumps_updated(vault: Path) -> None:
    before = tree(vault)
    m = memories(vault)[ZFS]
    apply_plan(WRITER.plan_edit_body(m, "New body\nsecond line\n", now=NOW))
    after = (vault / ZFS).read_bytes()
    head_before, _ = before[ZFS].split(b"\r\n---\r\n", 1)
    head_after, body_after = after.split(b"\r\n---\r\n", 1)
    assert body_after == b"New body\r\nsecond line\r\n"  # the file's CRLF kept
    assert changed_lines(head_before, head_after) == [
        "-updated: 2026-06-03T16:20:00+00:00",  # the last header line (split off its CRLF)
        "+updated: 2026-11-22T09:30:05+00:00",
    ]
    assert memories(vault)[ZFS].body == "New body\nsecond line\n"
    undo_last(vault)
    assert tree(vault) == before


def test_edit_body_with_frontmatter_like_text_stays_a_body(vault: Path) -> None:
    m = memories(vault)[CADDY]
    apply_plan(WRITER.plan_edit_body(m, "---\nid: nope\n---\nstill body\n", now=NOW))
    fresh = memories(vault)[CADDY]
    assert fresh.id == m.id
    assert fresh.body == "---\nid: nope\n---\nstill body\n"


# --------------------------------------------------------------------------- promote


def test_promote_retypes_to_insight_and_never_moves(vault: Path) -> None:
    before = tree(vault)
    m = memories(vault)[CADDY]
    plan = WRITER.plan_promote(m, {"now": NOW})  # no option: retype to insight
    apply_plan(plan)
    assert only_changes(before, tree(vault)) == {CADDY: "changed"}
    assert changed_lines(before[CADDY], (vault / CADDY).read_bytes()) == [
        "-type: decision\n",
        "+type: insight\n",
        "-updated: 2026-04-18T11:00:00+00:00\n",
        "+updated: 2026-11-22T09:30:05+00:00\n",
    ]
    assert memories(vault)[CADDY].kind == "insight"


def test_promote_raises_importance(vault: Path) -> None:
    m = memories(vault)[CADDY]
    plan = WRITER.plan_promote(m, {"importance": 0.95, "now": "2026-11-22T09:30:05+00:00"})
    apply_plan(plan)
    fresh = memories(vault)[CADDY]
    assert (fresh.importance, fresh.kind) == (0.95, "decision")
    with pytest.raises(RefusedError, match=r"importance: 0\.5 is lower"):
        WRITER.plan_promote(fresh, {"importance": 0.5, "now": NOW})
    with pytest.raises(RefusedError, match=r"importance: 1\.5 is outside"):
        WRITER.plan_promote(fresh, {"importance": 1.5, "now": NOW})
    with pytest.raises(RefusedError, match="type: promote retypes only"):
        WRITER.plan_promote(fresh, {"type": "solution", "now": NOW})


def test_promote_both_and_already_insight(vault: Path) -> None:
    m = memories(vault)[CADDY]
    apply_plan(WRITER.plan_promote(m, {"type": "insight", "importance": 0.9, "now": NOW}))
    fresh = memories(vault)[CADDY]
    assert (fresh.kind, fresh.importance) == ("insight", 0.9)
    with pytest.raises(RefusedError, match="nothing to promote"):
        WRITER.plan_promote(fresh, {"now": NOW})


# --------------------------------------------------------------------------- conflicts


def test_external_rewrite_after_scan_is_refused(vault: Path) -> None:
    m = memories(vault)[CADDY]
    path = vault / CADDY
    path.write_bytes(path.read_bytes().replace(b"importance: 0.8", b"importance: 0.7"))
    with pytest.raises(ConflictError, match="changed on disk since it was read"):
        WRITER.plan_set(m, {"tags": ["x"]}, now=NOW)
    for make in (WRITER.plan_pin, WRITER.plan_archive):
        with pytest.raises(ConflictError):
            make(m)


def test_same_size_same_mtime_rewrite_is_caught(vault: Path) -> None:
    m = memories(vault)[CADDY]
    path = vault / CADDY
    st = path.stat()
    old = path.read_bytes()
    new = old.replace(b"importance: 0.8", b"importance: 0.6")
    assert len(new) == len(old)
    path.write_bytes(new)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(ConflictError):
        WRITER.plan_set(m, {"tags": ["x"]}, now=NOW)


def test_change_between_plan_and_apply_is_refused(vault: Path) -> None:
    m = memories(vault)[CADDY]
    path = vault / CADDY
    plan = WRITER.plan_set(m, {"importance": 0.9}, now=NOW)
    st = path.stat()
    agent = path.read_bytes().replace(b"sqlite, litestream", b"sqlite, litestreax")
    path.write_bytes(agent)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert path.read_bytes() == agent  # the agent's update is not lost
    move = WRITER.plan_pin(memories(vault)[CADDY])
    path.write_bytes(agent.replace(b"litestreax", b"litestreaz"))
    with pytest.raises(ConflictError):
        apply_plan(move)
    assert path.exists()


def test_harmless_external_edit_is_kept_not_lost(vault: Path) -> None:
    """An agent's edit that the user's view cannot tell apart (a comment) is merged, not lost."""
    m = memories(vault)[CADDY]
    path = vault / CADDY
    path.write_bytes(path.read_bytes().replace(b"importance: 0.8\n", b"importance: 0.8  # ok\n"))
    plan = WRITER.plan_set(m, {"tags": ["caddy"]}, now=NOW)
    apply_plan(plan)
    assert b"importance: 0.8  # ok\n" in path.read_bytes()


def test_deleted_file_is_a_conflict(vault: Path) -> None:
    m = memories(vault)[CADDY]
    (vault / CADDY).rename(vault / "elsewhere.md")
    with pytest.raises(ConflictError, match="moved or deleted"):
        WRITER.plan_set(m, {"importance": 0.9}, now=NOW)


# --------------------------------------------------------------------------- through core.actions


def test_actions_dispatch_and_undo(vault: Path) -> None:
    before = tree(vault)
    m = memories(vault)[CADDY]
    action = Action("pin", m)
    action.apply()
    assert (vault / "vault" / Path(CADDY).name).exists()
    action.undo()
    assert tree(vault) == before
    result = apply_bulk("archive", [memories(vault)[CADDY], memories(vault)[PINNED]])
    assert [x.path for x, _ in result.applied] == [CADDY]
    assert [x.path for x, _ in result.refused] == [PINNED]
    undo_last(vault)
    assert tree(vault) == before


def test_set_through_action_params(vault: Path) -> None:
    m = memories(vault)[CADDY]
    Action("set", m, {"changes": {"importance": 0.75}}).apply()
    assert memories(vault)[CADDY].importance == 0.75
