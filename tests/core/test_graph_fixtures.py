"""The relation graph on the project's own test vaults.

Expected edges are derived here straight from the vault files (YAML
frontmatter / JSON Lines, read with yaml.safe_load and json), and the valid
set from the files minus the expected figures' `invalid` list, so these tests check
the adapters' links and the graph together against the data, not against
the adapters' own reading of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from memlens.core.graph import MemoryGraph, NodeKey, build_graph, layout_neighbourhood
from memlens.core.graph import cell_width as cells
from memlens.core.scan.vault import Catalog, open_catalog

# (holder id, target id, field, type or None) -- the type is the format's own
# relation type where the format has one (cognitive-memory), else None.
Link = tuple[str, str, str, str | None]


#: The own test vaults; per-format tests run for the formats that have one.
OWN = Path(__file__).resolve().parents[1] / "fixtures"
needs_cognitive = pytest.mark.skipif(
    not (OWN / "cognitive-memory").is_dir(), reason="no own cognitive-memory vault yet"
)


@pytest.fixture(scope="module")
def catalog(own_fixtures_dir: Path) -> Catalog:
    return open_catalog(own_fixtures_dir)


@pytest.fixture(scope="module")
def graph(catalog: Catalog) -> MemoryGraph:
    g = build_graph(catalog)
    if sum(1 for _ in g.edges()) == 0:
        pytest.skip("format adapters not written yet: the fixtures yield no links")
    return g


def _root(catalog: Catalog, fmt: str) -> str:
    (v,) = [v for v in catalog.vaults if v.format == fmt]
    return str(v.root)


def _invalid_paths(expected: dict[str, Any], fmt: str) -> set[str]:
    return {i.get("path") or i["file"] for i in expected["formats"][fmt]["invalid"]}


def _invalid_lines(expected: dict[str, Any], fmt: str, file: str) -> set[int]:
    return {
        i["line"]
        for i in expected["formats"][fmt]["invalid"]
        if (i.get("path") or i.get("file")) == file and "line" in i
    }


def _frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
    m = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert m, path
    data = yaml.safe_load(m.group(1))
    assert isinstance(data, dict), path
    return data


def _jsonl(path: Path, skip: set[int]) -> Iterator[dict[str, Any]]:
    lines = path.read_bytes().decode("utf-8-sig").replace("\r\n", "\n").split("\n")
    for n, line in enumerate(lines, 1):
        if line.strip() and n not in skip:
            yield json.loads(line)


def _edges(g: MemoryGraph, root: str) -> set[Link]:
    out: set[Link] = set()
    for e in g.edges():
        if e.source[0] != root:
            continue
        for d in e.declarations:
            other = e.target if d.holder == e.source else e.source
            out.add((d.holder[1], other[1], e.field, e.type))
    return out


def _typed(edges: set[Link], typed: bool) -> set[Link]:
    return edges if typed else {(a, b, f, None) for a, b, f, _ in edges}


# ------------------------------------------------------- derive from the files


def cognitive_links(fx: Path, expected: dict[str, Any]) -> tuple[set[str], set[Link]]:
    root = fx / "cognitive-memory"
    bad = _invalid_paths(expected, "cognitive-memory")
    ids: set[str] = set()
    declared: list[tuple[str, dict[str, Any]]] = []
    # Memories live in graph/<type-dir>/, vault/ (pinned) and archive/<type-dir>/.
    areas = ("graph/*/*.md", "vault/*.md", "archive/*/*.md")
    for p in sorted(p for area in areas for p in root.glob(area)):
        if p.relative_to(root).as_posix() in bad:
            continue
        fm = _frontmatter(p)
        ids.add(fm["id"])
        declared += [(fm["id"], r) for r in fm.get("relations") or []]
    links = {
        (holder, r["target"], "relations", r["type"])
        for holder, r in declared
        if r["target"] in ids
    }
    return ids, links


def ocean_links(fx: Path, expected: dict[str, Any]) -> tuple[set[str], set[Link]]:
    root = fx / "project-ocean"
    bad = _invalid_paths(expected, "project-ocean")
    docs: dict[str, dict[str, Any]] = {}
    for p in sorted(root.glob("agents/*/memory/*/*.md")):
        if p.relative_to(root).as_posix() not in bad:
            docs[f"{p.parts[-4]}/{p.stem}"] = _frontmatter(p)
    for p in sorted(root.glob("shared/observations/*.md")):
        if p.relative_to(root).as_posix() not in bad:
            docs[f"shared/{p.stem}"] = _frontmatter(p)
    links: set[Link] = set()
    for mid, fm in docs.items():
        agent = mid.split("/")[0]
        for ref in fm.get("backlinks") or []:
            if not re.fullmatch(r"obs-\d{4}-\d{2}-\d{2}-\d{3}", str(ref)):
                continue
            # the same agent first, then shared/
            for cand in (f"{agent}/{ref}", f"shared/{ref}"):
                if cand in docs:
                    links.add((mid, cand, "backlinks", None))
                    break
    return set(docs), links


def observation_links(fx: Path, expected: dict[str, Any]) -> tuple[set[str], set[Link]]:
    root = fx / "observation-v1"
    bad = _invalid_paths(expected, "observation-v1")
    docs: dict[str, dict[str, Any]] = {}
    for p in sorted([*root.glob("observations/*.md"), *root.glob("comprehension/*.md")]):
        if p.relative_to(root).as_posix() not in bad:
            fm = _frontmatter(p)
            docs[fm["id"]] = fm
    links: set[Link] = set()
    for mid, fm in docs.items():
        for ref in fm.get("observations") or []:
            if ref in docs:
                links.add((mid, ref, "observations", None))
        for ref in (fm.get("posterior") or {}).get("observations_used") or []:
            if ref in docs:
                links.add((mid, ref, "posterior.observations_used", None))
        prior = (fm.get("context") or {}).get("prior_belief")
        if isinstance(prior, str):
            comp = prior.split("/v")[0]
            if comp in docs:
                links.add((mid, comp, "context.prior_belief", None))
    return set(docs), links


def experience_links(fx: Path, expected: dict[str, Any]) -> tuple[set[str], set[Link]]:
    root = fx / "experience-records"
    fmt = "experience-records"
    exps = {
        o["id"]: o
        for o in _jsonl(
            root / "experiences.jsonl", _invalid_lines(expected, fmt, "experiences.jsonl")
        )
    }
    views = {o["id"]: o for o in _jsonl(root / "views.jsonl", set())}
    stances = {o["id"]: o for o in _jsonl(root / "stances.jsonl", set())}
    erased = {
        op["id"]
        for w in _jsonl(root / "wal.jsonl", set())
        for op in w["ops"]
        if op.get("op") == "tombstone"
    }
    every = set(exps) | set(views) | set(stances)
    links: set[Link] = set()
    for mid, o in exps.items():
        if mid in erased:
            continue  # an erased experience's own links are erased with it
        for fld in ("parents", "evidence_ptrs"):
            for ref in o.get(fld) or []:
                if ref in exps:
                    links.add((mid, ref, fld, None))
    for vid, v in views.items():
        for ref in v.get("applied_to") or []:
            if ref in exps:
                links.add((vid, ref, "applied_to", None))
        for ref in v.get("provenance_braid") or []:
            if ref in every:
                links.add((vid, ref, "provenance_braid", None))
        for item in (v.get("delta_from_raw") or {}).get("reweighted") or []:
            if item.get("exp") in exps:
                links.add((vid, item["exp"], "delta_from_raw.reweighted.exp", None))
    for sid, s in stances.items():
        for cand in s.get("candidates") or []:
            if cand.get("exp") in exps:
                links.add((sid, cand["exp"], "candidates.exp", None))
        for ref in (s.get("decision") or {}).get("support") or []:
            if ref in every:
                links.add((sid, ref, "decision.support", None))
    return set(exps), links


DERIVE = {
    fmt: how
    for fmt, how in {
        "cognitive-memory": (cognitive_links, True),
        "project-ocean": (ocean_links, False),
        "observation-v1": (observation_links, False),
        "experience-records": (experience_links, False),
    }.items()
    if (OWN / fmt).is_dir()
}


# ---------------------------------------------------------------------- edges


@pytest.mark.parametrize("fmt", sorted(DERIVE))
def test_every_fixture_edge_is_present_with_its_type(
    fmt: str,
    own_fixtures_dir: Path,
    own_expected: dict[str, Any],
    catalog: Catalog,
    graph: MemoryGraph,
) -> None:
    derive, typed = DERIVE[fmt]
    ids, links = derive(own_fixtures_dir, own_expected)
    root = _root(catalog, fmt)
    memory_ids = {k[1] for k, n in graph.nodes.items() if k[0] == root and n.is_memory}
    assert memory_ids == ids
    assert len(ids) == own_expected["formats"][fmt]["valid_count"]
    assert links, "the fixture defines links"
    got = _typed(_edges(graph, root), typed)
    assert sorted(links - got) == [], "fixture links missing from the graph"
    assert sorted(got - links) == [], "graph links the fixture does not define"


@needs_cognitive
def test_cognitive_memory_incoming_relations_point_at_their_holder(
    own_fixtures_dir: Path, catalog: Catalog, graph: MemoryGraph
) -> None:
    root = _root(catalog, "cognitive-memory")
    seen = 0
    for p in (own_fixtures_dir / "cognitive-memory").glob("graph/*/*.md"):
        try:
            fm = _frontmatter(p)
        except (AssertionError, UnicodeDecodeError, yaml.YAMLError):
            continue
        holder = (root, str(fm.get("id")))
        if holder not in graph:
            continue
        for r in fm.get("relations") or []:
            if r.get("direction") != "incoming" or (root, r["target"]) not in graph:
                continue
            seen += 1
            backs = {(e.source[1], e.type) for e in graph.backlinks(holder)}
            assert (r["target"], r["type"]) in backs
    assert seen > 0


@needs_cognitive
def test_fixture_links_are_written_on_both_ends(
    own_fixtures_dir: Path, own_expected: dict[str, Any], catalog: Catalog, graph: MemoryGraph
) -> None:
    # Every cognitive-memory link in the fixtures has its twin (checked here
    # from the files), so none is one-way and each is one edge, not two.
    _, links = cognitive_links(own_fixtures_dir, own_expected)
    assert all((b, a, f, t) in links for a, b, f, t in links)
    assert graph.one_way_relations() == []
    root = _root(catalog, "cognitive-memory")
    edges = [e for e in graph.edges() if e.source[0] == root]
    assert all(e.direction == "both" for e in edges)
    assert len(edges) * 2 == len(links)


def test_dream_cycle_has_no_links_and_no_orphans(catalog: Catalog, graph: MemoryGraph) -> None:
    root = _root(catalog, "dream-cycle")
    assert not any(e.source[0] == root for e in graph.edges())
    assert not any(k[0] == root for k in graph.orphans())


def test_views_and_stances_are_nodes(
    own_expected: dict[str, Any], catalog: Catalog, graph: MemoryGraph
) -> None:
    root = _root(catalog, "experience-records")
    kinds = [n.kind for k, n in graph.nodes.items() if k[0] == root and not n.is_memory]
    assert sorted(set(kinds)) == ["stance", "view"]
    breakdown = own_expected["formats"]["experience-records"]["valid_breakdown"]
    assert kinds.count("view") == breakdown["views"] == 6
    assert kinds.count("stance") == breakdown["stances"] == 4


# --------------------------------------------------------------------- health


def test_every_expected_reference_problem_is_reported(
    own_expected: dict[str, Any], catalog: Catalog, graph: MemoryGraph
) -> None:
    got = {
        (p.format, p.field, p.ref, p.reason.value, p.path, p.id)
        for p in graph.health().ref_problems
    }
    n = 0
    for fmt, data in own_expected["formats"].items():
        for ref in data["references"]:
            n += 1
            hits = [
                g
                for g in got
                if g[0] == fmt
                and g[2] == ref["ref"]
                and g[3] == ref["issue"]
                and ref["from"] in (g[4], g[5])
                and g[1] == ref["field"]
            ]
            assert hits, f"{fmt}: {ref} not reported"
    assert n == len(got) > 0


def test_orphans_are_memories_with_no_link(
    own_fixtures_dir: Path, own_expected: dict[str, Any], catalog: Catalog, graph: MemoryGraph
) -> None:
    want: set[NodeKey] = set()
    for fmt, (derive, _) in DERIVE.items():
        ids, links = derive(own_fixtures_dir, own_expected)
        linked = {a for a, b, _, _ in links if a != b} | {b for a, b, _, _ in links if a != b}
        root = _root(catalog, fmt)
        want |= {(root, i) for i in ids - linked}
    # erased experiences are never orphans
    er = _root(catalog, "experience-records")
    want -= {k for k in want if k[0] == er and graph.node(k).memory.tombstoned}  # type: ignore[union-attr]
    assert set(graph.orphans()) == want
    assert want, "the fixtures hold orphans"


def test_no_parent_cycles_in_the_fixtures(graph: MemoryGraph) -> None:
    assert graph.cycles() == []


# --------------------------------------------------------------------- layout


def test_layout_of_a_fixture_memory(catalog: Catalog, graph: MemoryGraph) -> None:
    # The best-connected node of every vault (a cognitive-memory one once it exists).
    centre = max(graph.nodes, key=lambda k: len(graph.neighbours(k)))
    nb = graph.neighbourhood(centre, 2)
    rows = layout_neighbourhood(graph, nb, width=70)
    assert rows[0].key == centre
    assert all(cells(r.text) <= 70 for r in rows)
    one_hop = {n.other for n in graph.neighbours(centre)}
    assert one_hop <= {r.key for r in rows if r.depth == 1}
