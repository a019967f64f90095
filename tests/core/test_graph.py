"""Unit tests of the relation graph on synthetic vaults (no adapters involved)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memlens.core.graph import (
    MAX_DEPTH,
    GraphEdge,
    MemoryGraph,
    build_graph,
    cell_width,
    health_records,
    layout_neighbourhood,
    neighbourhood_json,
    truncate_cells,
)
from memlens.core.model import Memory, ReferenceProblem, RefIssue, Relation, ScanResult
from memlens.core.scan.vault import Vault

CM = "cognitive-memory"
ER = "experience-records"
PO = "project-ocean"


def mem(
    root: Path,
    mid: str,
    *rels: Relation,
    fmt: str = CM,
    title: str | None = None,
    tombstoned: bool = False,
) -> Memory:
    return Memory(
        format=fmt,
        vault_root=root,
        id=mid,
        kind="solution",
        title=title or f"title of {mid}",
        body="",
        path=f"{mid}.md",
        relations=tuple(rels),
        tombstoned=tombstoned,
    )


def rel(
    target: str,
    type_: str = "SOLVES",
    direction: str | None = "outgoing",
    strength: float | None = 0.8,
    field: str = "relations",
    resolved: str | None = "same",
) -> Relation:
    return Relation(
        target=target,
        type=type_,
        field=field,
        resolved=target if resolved == "same" else resolved,
        direction=direction,
        strength=strength,
        context=f"ctx {target}",
    )


def vault(root: Path, fmt: str, memories: list[Memory], **kw: Any) -> Vault:
    return Vault(root=root, format=fmt, rel=root.name, result=ScanResult(memories=memories, **kw))


R = Path("/v/cm")


def key(mid: str, root: Path = R) -> tuple[str, str]:
    return (str(root), mid)


# ------------------------------------------------------------------ building


def test_incoming_relation_is_stored_in_its_true_direction() -> None:
    # B says "A -> B" in its incoming form; A does not write it at all.
    a = mem(R, "a")
    b = mem(R, "b", rel("a", "FOLLOWS", "incoming", 0.7))
    g = build_graph([vault(R, CM, [a, b])])
    (edge,) = list(g.edges())
    assert (edge.source, edge.target) == (key("a"), key("b"))
    assert edge.type == "FOLLOWS"
    assert edge.direction == "incoming"  # the declared form is kept
    assert edge.declared_by == (key("b"),)
    assert edge.strength == 0.7
    assert edge.context == "ctx a"
    assert g.backlinks(key("b")) == [edge]
    assert g.out_edges(key("a")) == [edge]


def test_link_written_on_both_ends_is_one_edge_with_two_declarations() -> None:
    a = mem(R, "a", rel("b", "SOLVES", "outgoing", 0.9))
    b = mem(R, "b", rel("a", "SOLVES", "incoming", 0.5))
    g = build_graph([vault(R, CM, [a, b])])
    edges = list(g.edges())
    assert len(edges) == 1
    e = edges[0]
    assert (e.source, e.target, e.type) == (key("a"), key("b"), "SOLVES")
    assert set(e.declared_by) == {key("a"), key("b")}
    assert e.direction == "both"
    assert e.strength == 0.9  # the source's declaration speaks for the link
    assert g.health().one_way == []


def test_backlinks_are_derived_for_formats_that_write_one_side() -> None:
    root = Path("/v/po")
    a = mem(root, "hawk/a", rel("hawk/b", "backlink", None, None, "backlinks"), fmt=PO)
    b = mem(root, "hawk/b", fmt=PO)
    g = build_graph([vault(root, PO, [a, b])])
    (bl,) = g.backlinks(key("hawk/b", root))
    assert bl.source == key("hawk/a", root)
    (n,) = g.neighbours(key("hawk/b", root))
    assert n.other == key("hawk/a", root) and not n.outgoing
    # Project Ocean backlinks are one-sided by design: never "one-way".
    assert g.health().one_way == []


def test_same_id_in_two_vaults_stays_two_nodes() -> None:
    r1, r2 = Path("/v/one"), Path("/v/two")
    g = build_graph([vault(r1, CM, [mem(r1, "x")]), vault(r2, CM, [mem(r2, "x")])])
    assert sorted(g.find("x")) == [key("x", r1), key("x", r2)]
    assert g.find("x", r2) == [key("x", r2)]


def test_unresolved_relations_are_not_edges() -> None:
    a = mem(R, "a", rel("uri:https://example.org", resolved=None), rel("b"))
    g = build_graph([vault(R, CM, [a, mem(R, "b")])])
    assert [(e.source, e.target) for e in g.edges()] == [(key("a"), key("b"))]
    assert [r.target for _, r in g.unresolved] == ["uri:https://example.org"]


def test_record_edges_make_view_and_stance_nodes() -> None:
    root = Path("/v/er")
    e1 = mem(root, "exp_1", fmt=ER)
    e2 = mem(root, "exp_2", fmt=ER)
    records = {
        "views": [{"id": "view_1", "lens": "causal_v2", "applied_to": ["exp_1"]}],
        "stances": [{"id": "stance_1", "question": "Why?"}],
        "edges": [
            {"source": "view_1", "target": "exp_1", "type": "applied_to", "field": "applied_to"},
            {
                "source": "stance_1",
                "target": "exp_2",
                "type": "candidate",
                "field": "candidates.exp",
            },
            {
                "source": "stance_1",
                "target": "view_1",
                "type": "support",
                "field": "decision.support",
            },
            {
                "source": "view_1",
                "target": "exp_404",
                "type": "applied_to",
                "field": "applied_to",
                "issue": "dangling_reference",
            },
        ],
    }
    g = build_graph([vault(root, ER, [e1, e2], records=records)])
    view, stance = g.node(key("view_1", root)), g.node(key("stance_1", root))
    assert (view.kind, view.title, view.is_memory) == ("view", "causal_v2", False)
    assert (stance.kind, stance.title) == ("stance", "Why?")
    got = {(e.source[1], e.target[1], e.type) for e in g.edges()}
    assert got == {
        ("view_1", "exp_1", "applied_to"),
        ("stance_1", "exp_2", "candidate"),
        ("stance_1", "view_1", "support"),
    }
    # Memories reached only by views are not orphans; views are never orphans.
    assert g.health().orphans == []


def test_record_node_without_stored_record_is_named_by_its_prefix() -> None:
    root = Path("/v/er")
    edges = [{"source": "view_9", "target": "exp_1", "type": "applied_to", "field": "applied_to"}]
    g = build_graph([vault(root, ER, [mem(root, "exp_1", fmt=ER)], records={"edges": edges})])
    assert g.node(key("view_9", root)).kind == "view"


# -------------------------------------------------------------------- health


def test_one_way_relation_in_cognitive_memory_both_ways_round() -> None:
    # A -SOLVES-> B: B lacks the incoming twin.  A also writes e -RELATED_TO-> a
    # in the incoming form, but E's outgoing link to A is SOLVES: a type
    # mismatch is not a twin, so both are one-way.
    a = mem(R, "a", rel("b", "SOLVES", "outgoing"), rel("e", "RELATED_TO", "incoming"))
    b = mem(R, "b")
    c = mem(R, "c", rel("d", "REQUIRES", "incoming"))  # D lacks the outgoing twin
    d = mem(R, "d")
    e = mem(R, "e", rel("a", "SOLVES", "outgoing"))
    g = build_graph([vault(R, CM, [a, b, c, d, e])])
    ow = {
        (o.declared_on[1], o.missing_on[1], o.edge.type, o.expected_direction)
        for o in g.one_way_relations()
    }
    assert ow == {
        ("a", "b", "SOLVES", "incoming"),
        ("c", "d", "REQUIRES", "outgoing"),
        ("e", "a", "SOLVES", "incoming"),
        ("a", "e", "RELATED_TO", "outgoing"),
    }


def test_dangling_unsafe_and_tombstoned_references_are_reported() -> None:
    a = mem(R, "a", rel("zzz", resolved=None), rel("../../etc/passwd", resolved=None))
    probs = [
        ReferenceProblem(CM, R, "a.md", "a", "relations.target", "zzz", RefIssue.DANGLING),
        ReferenceProblem(
            CM, R, "a.md", "a", "relations.target", "../../etc/passwd", RefIssue.UNSAFE
        ),
        ReferenceProblem(CM, R, "a.md", "a", "parents", "exp_x", RefIssue.TOMBSTONED),
    ]
    g = build_graph([vault(R, CM, [a], ref_problems=probs)])
    h = g.health()
    assert h.ref_problems == probs
    assert g.ref_problems_of(key("a")) == probs
    # A memory whose only links are broken is also an orphan.
    assert h.orphans == [key("a")]
    recs = health_records(g, Path("/v"))
    reasons = sorted(r["reason"] for r in recs if r["kind"] == "reference")
    assert reasons == ["dangling_reference", "references_tombstoned", "unsafe_reference"]
    assert {r["ref"] for r in recs if r["kind"] == "reference"} >= {"../../etc/passwd"}


def test_orphans() -> None:
    linked = Path("/v/linked")
    a = mem(linked, "a", rel("b"))
    b, lonely = mem(linked, "b"), mem(linked, "lonely")
    selfish = mem(linked, "selfish", rel("selfish"))
    gone = mem(linked, "gone", tombstoned=True)
    unlinked = Path("/v/unlinked")  # a vault with no links at all: no orphans judged
    g = build_graph(
        [
            vault(linked, CM, [a, b, lonely, selfish, gone]),
            vault(unlinked, CM, [mem(unlinked, "x"), mem(unlinked, "y")]),
        ]
    )
    assert g.orphans() == [key("lonely", linked), key("selfish", linked)]
    recs = [r for r in health_records(g, Path("/v")) if r["kind"] == "orphan"]
    assert [(r["vault"], r["id"], r["path"]) for r in recs] == [
        ("linked", "lonely", "lonely.md"),
        ("linked", "selfish", "selfish.md"),
    ]


def test_parents_cycle_is_found_with_networkx() -> None:
    root = Path("/v/er")

    def p(t: str) -> Relation:
        return rel(t, "derived_from", None, None, "parents")

    ms = [
        mem(root, "x", p("y"), fmt=ER),
        mem(root, "y", p("z"), fmt=ER),
        mem(root, "z", p("x"), fmt=ER),
        mem(root, "self", p("self"), fmt=ER),
        mem(root, "ok1", p("ok2"), fmt=ER),
        mem(root, "ok2", fmt=ER),
        # evidence_ptrs are not lineage-checked
        mem(root, "e1", rel("e2", "evidence", None, None, "evidence_ptrs"), fmt=ER),
        mem(root, "e2", rel("e1", "evidence", None, None, "evidence_ptrs"), fmt=ER),
    ]
    g = build_graph([vault(root, ER, ms)])
    cycles = g.cycles()
    assert [[k[1] for k in c.nodes] for c in cycles] == [["self"], ["x", "y", "z"]]
    xyz = cycles[1]
    steps = [(u[1], v[1]) for u, v in xyz.example]
    assert len(steps) == 3 and steps[0][0] == steps[-1][1]
    assert all(steps[i][1] == steps[i + 1][0] for i in range(2))
    recs = [r for r in health_records(g, Path("/v")) if r["kind"] == "cycle"]
    assert recs[1]["ids"] == ["x", "y", "z"] and recs[1]["field"] == "parents"


def test_cycles_in_cognitive_memory_are_allowed() -> None:
    a = mem(R, "a", rel("b", "FOLLOWS"))
    b = mem(R, "b", rel("a", "FOLLOWS"))
    assert build_graph([vault(R, CM, [a, b])]).cycles() == []


def test_health_ok_when_clean() -> None:
    a = mem(R, "a", rel("b", "SOLVES", "outgoing"))
    b = mem(R, "b", rel("a", "SOLVES", "incoming"))
    h = build_graph([vault(R, CM, [a, b])]).health()
    assert h.ok and h.count == 0


# ------------------------------------------------------------- neighbourhood


def chain(n: int) -> MemoryGraph:
    ms = [mem(R, f"n{i}", *([rel(f"n{i + 1}", "FOLLOWS")] if i < n - 1 else [])) for i in range(n)]
    return build_graph([vault(R, CM, ms)])


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_neighbourhood_depth_both_directions(depth: int) -> None:
    g = chain(9)
    nb = g.neighbourhood(key("n4"), depth)
    want = {f"n{i}" for i in range(4 - depth, 5 + depth)}
    assert {k[1] for k in nb.nodes} == want
    assert nb.distance[key(f"n{4 - depth}")] == depth
    assert len(nb.edges) == 2 * depth
    assert not nb.truncated


def test_neighbourhood_depth_is_clamped_and_bounded() -> None:
    g = chain(12)
    assert g.neighbourhood(key("n0"), 9).depth == MAX_DEPTH
    assert g.neighbourhood(key("n0"), 0).depth == 1
    hub = mem(R, "hub", *[rel(f"s{i}", "RELATED_TO") for i in range(40)])
    g2 = build_graph([vault(R, CM, [hub, *[mem(R, f"s{i}") for i in range(40)]])])
    nb = g2.neighbourhood(key("hub"), 1, max_nodes=10)
    assert len(nb.nodes) == 10 and nb.truncated
    with pytest.raises(KeyError):
        g2.neighbourhood(key("nope"))


def test_neighbourhood_json_shape() -> None:
    a = mem(R, "a", rel("b", "SOLVES", "outgoing"))
    b = mem(R, "b", rel("a", "SOLVES", "incoming"), rel("c", "CAUSES"))
    c = mem(R, "c", rel("b", "CAUSES", "incoming"))
    g = build_graph([vault(R, CM, [a, b, c])])
    data = neighbourhood_json(g, g.neighbourhood(key("a"), 2), Path("/v"), None)
    assert data["centre"] == "a"
    assert [n["id"] for n in data["nodes"]] == ["a", "b", "c"]
    assert {k for k in data["nodes"][0]} >= {"id", "title", "format", "vault", "kind", "health"}
    assert data["nodes"][0]["vault"] == "cm"
    assert [(e["source"], e["target"], e["type"]) for e in data["edges"]] == [
        ("a", "b", "SOLVES"),
        ("b", "c", "CAUSES"),
    ]
    assert data["edges"][0]["strength"] == 0.8 and data["edges"][0]["one_way"] is False


# -------------------------------------------------------------------- layout


def hub_graph(n: int, types: int = 1) -> MemoryGraph:
    kinds = ["SOLVES", "CAUSES", "RELATED_TO", "REQUIRES", "FOLLOWS"][:types]
    rels = [
        rel(f"m{i:02d}", kinds[i % types], "outgoing" if i % 2 else "incoming", round(i / n, 2))
        for i in range(n)
    ]
    hub = mem(R, "hub", *rels, title="The hub")
    others = [mem(R, f"m{i:02d}", title=f"Neighbour number {i} " + "x" * 90) for i in range(n)]
    return build_graph([vault(R, CM, [hub, *others])])


def test_layout_small_neighbourhood_draws_boxes_arrows_and_strength() -> None:
    a = mem(
        R,
        "a",
        rel("b", "SOLVES", "outgoing", 0.85),
        rel("c", "BUILDS_ON", "incoming", 0.5),
        title="Fix A",
    )
    b = mem(R, "b", rel("a", "SOLVES", "incoming", 0.85), title="Problem B")
    c = mem(R, "c", rel("a", "BUILDS_ON", "outgoing", 0.5), title="Idea C")
    g = build_graph([vault(R, CM, [a, b, c])])
    rows = layout_neighbourhood(g, g.neighbourhood(key("a")), width=60)
    text = [r.text for r in rows]
    assert text[0].startswith("● Fix A")
    assert rows[0].key == key("a") and rows[0].role == "centre"
    assert text[1] == "├─ BUILDS_ON ← (1)"
    assert text[2] == "│  └─← Idea C  0.50"
    assert text[3] == "└─ SOLVES → (1)"
    assert text[4] == "   └─→ Problem B  0.85"
    assert [r.key for r in rows] == [key("a"), None, key("c"), None, key("b")]
    assert rows[2].edge is not None and rows[2].edge.type == "BUILDS_ON"


def test_layout_marks_one_way_and_lists_broken_references() -> None:
    a = mem(R, "a", rel("b", "SOLVES"), rel("gone", resolved=None), title="A")
    probs = [ReferenceProblem(CM, R, "a.md", "a", "relations.target", "gone", RefIssue.DANGLING)]
    g = build_graph([vault(R, CM, [a, mem(R, "b", title="B")], ref_problems=probs)])
    text = [r.text for r in layout_neighbourhood(g, g.neighbourhood(key("a")), width=80)]
    assert "one-way" in text[2]
    assert text[3] == "└─ ✗ broken references (1)"
    assert text[4].startswith("   └─✗ gone  dangling_reference")


@pytest.mark.parametrize("types", [1, 5])
def test_layout_stays_readable_with_50_neighbours(types: int) -> None:
    g = hub_graph(50, types)
    nb = g.neighbourhood(key("hub"))
    assert len(nb.nodes) == 51
    rows = layout_neighbourhood(g, nb, width=60, per_group=8, max_rows=60)
    assert len(rows) <= 60
    assert all(cell_width(r.text) <= 60 for r in rows)
    # every neighbour is accounted for: shown or counted in a "… N more" row
    shown = {r.key for r in rows if r.role == "node"}
    hidden = sum(int(r.text.split("… ")[1].split()[0]) for r in rows if r.role == "more")
    assert len(shown) + hidden == 50
    # grouped by edge type and direction, each group at most per_group nodes
    groups = [r for r in rows if r.role == "group"]
    assert len(groups) == (2 if types == 1 else 10)
    for grp in groups:
        members = [r for r in rows if r.role == "node" and r.group == grp.group]
        assert len(members) <= 8
    # strongest first within a group
    first = next(r for r in rows if r.role == "node")
    assert first.edge is not None
    members = [r for r in rows if r.role == "node" and r.group == first.group]
    strengths = [r.edge.strength for r in members if r.edge is not None]
    assert strengths == sorted(strengths, reverse=True)


def test_layout_50_neighbours_single_type_both_directions() -> None:
    g = hub_graph(50, 1)
    rows = layout_neighbourhood(g, g.neighbourhood(key("hub")), width=40, max_rows=30)
    text = [r.text for r in rows]
    assert text[1] == "├─ SOLVES → (25)"
    assert text.count("│  └─ … 17 more") == 1 and text.count("   └─ … 17 more") == 1
    assert text[11] == "└─ SOLVES ← (25)"
    assert len(rows) == 1 + 2 * (1 + 8 + 1)
    assert all(cell_width(t) <= 40 for t in text)


def test_layout_expanded_group_shows_everyone_but_max_rows_still_bounds() -> None:
    g = hub_graph(50, 1)
    nb = g.neighbourhood(key("hub"))
    rows = layout_neighbourhood(g, nb, width=80, expanded={"SOLVES →"}, max_rows=200)
    assert sum(1 for r in rows if r.group == "SOLVES →" and r.role == "node") == 25
    capped = layout_neighbourhood(g, nb, width=80, expanded={"SOLVES →"}, max_rows=20)
    assert len(capped) == 20 and capped[-1].text.startswith("… ")


def test_layout_depth_two_and_three_nest_further_nodes() -> None:
    g = chain(7)
    rows = layout_neighbourhood(g, g.neighbourhood(key("n3"), 3), width=80)
    text = [r.text for r in rows]
    assert [r.key[1] if r.key else None for r in rows] == [
        "n3", None, "n4", "n5", "n6", None, "n2", "n1", "n0",
    ]  # fmt: skip
    assert text[3] == "│     └─ FOLLOWS → title of n5  0.80  one-way"
    assert text[8] == "         └─ FOLLOWS ← title of n0  0.80  one-way"
    assert [r.depth for r in rows] == [0, 1, 1, 2, 3, 1, 1, 2, 3]


def test_layout_makes_control_characters_visible_and_fits_wide_text() -> None:
    a = mem(R, "a", rel("b", "SOLVES"), title="evil \x1b[31mred\x1b[0m")
    b = mem(R, "b", title="选择 restic 而不是 borg 做异地备份" * 3)
    g = build_graph([vault(R, CM, [a, b])])
    rows = layout_neighbourhood(g, g.neighbourhood(key("a")), width=40)
    assert "\x1b" not in rows[0].text and "␛" in rows[0].text
    assert all(cell_width(r.text) <= 40 for r in rows)
    assert rows[2].text.endswith("…  0.80  one-way")


def test_truncate_cells() -> None:
    assert truncate_cells("abcdef", 4) == "abc…"
    assert truncate_cells("abc", 4) == "abc"
    assert truncate_cells("选择选择", 5) == "选择…"
    assert cell_width("选a") == 3


def test_edge_is_hashable_and_comparable() -> None:
    e = GraphEdge(key("a"), key("b"), "T", "f", CM, ())
    assert {e: 1}[e] == 1


def test_health_of_json_nodes_uses_as_of_and_never_crashes() -> None:
    # The placeholder-free path: no adapter decay for a made-up format -> None.
    g = build_graph([vault(R, "made-up", [mem(R, "a", fmt="made-up")])])
    data = neighbourhood_json(g, g.neighbourhood(key("a")), Path("/v"), date(2026, 11, 22))
    assert data["nodes"][0]["health"] is None


def test_layout_names_the_field_when_one_type_comes_from_several_fields() -> None:
    root = Path("/v/o1")
    comp = mem(
        root,
        "comp",
        rel("o1", "cites", None, None, "observations"),
        rel("o1", "cites", None, None, "posterior.observations_used"),
        rel("o2", "cites", None, None, "observations"),
        fmt="observation-v1",
        title="Comp",
    )
    g = build_graph([vault(root, "observation-v1", [comp, mem(root, "o1"), mem(root, "o2")])])
    text = [r.text for r in layout_neighbourhood(g, g.neighbourhood(key("comp", root)))]
    assert text[1] == "├─ cites · observations → (2)"
    assert text[4] == "└─ cites · posterior.observations_used → (1)"
    # a single-field type keeps the short label
    g2 = build_graph(
        [
            vault(
                root,
                "observation-v1",
                [mem(root, "x", rel("o1", "cites", None, None, "observations")), mem(root, "o1")],
            )
        ]
    )
    assert layout_neighbourhood(g2, g2.neighbourhood(key("x", root)))[1].text == "└─ cites → (1)"
