"""The graph's vocabulary: nodes, links and their declarations, neighbourhoods, health.

Plain records only; `relations.MemoryGraph` builds and walks them.  A link
is stored once in its true direction (`GraphEdge`), with one `Declaration`
per end that wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..formats import format_ids_where, format_infos
from ..model import Memory, ReferenceProblem

#: Node identity across vaults: (vault root as text, id).
NodeKey = tuple[str, str]

#: Formats whose links must be written on both ends (see module docstring).
TWO_WAY_FORMATS: frozenset[str] = format_ids_where(lambda i: i.two_way_relations)

#: Fields whose links must not form a cycle, per format.
ACYCLIC_FIELDS: Mapping[str, frozenset[str]] = {
    i.id: i.acyclic_fields for i in format_infos() if i.acyclic_fields
}

#: Depth limits of `neighbourhood` (the app shows 1-3).
MIN_DEPTH = 1
MAX_DEPTH = 3


@dataclass(slots=True, eq=False)
class GraphNode:
    """One node: a memory, or a non-memory record (view, stance, ...)."""

    key: NodeKey
    #: `memory`, or the record kind (`view`, `stance`, `record`).
    kind: str
    format: str
    vault_root: Path
    title: str
    memory: Memory | None = None
    #: The raw record for non-memory nodes (as the adapter stored it).
    record: Mapping[str, Any] | None = None

    @property
    def id(self) -> str:
        return self.key[1]

    @property
    def is_memory(self) -> bool:
        return self.memory is not None

    @property
    def type_label(self) -> str:
        """The format's type for memories (solution, occurrence, ...), else the record kind."""
        return self.memory.kind if self.memory is not None else self.kind

    @property
    def path(self) -> str | None:
        return self.memory.path if self.memory is not None else None


@dataclass(frozen=True, slots=True)
class Declaration:
    """Where and how one end of a link was written."""

    #: The node whose file/record holds this declaration.
    holder: NodeKey
    #: The target exactly as written there.
    ref: str
    #: The declared form (`outgoing`/`incoming` in cognitive-memory), or None.
    direction: str | None
    strength: float | None = None
    context: str | None = None


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """One link, in its true direction (source -> target)."""

    source: NodeKey
    target: NodeKey
    type: str
    field: str
    format: str
    declarations: tuple[Declaration, ...]

    def _preferred(self) -> Declaration:
        # The source's own declaration speaks for the link when both ends wrote it.
        for d in self.declarations:
            if d.holder == self.source:
                return d
        return self.declarations[0]

    @property
    def strength(self) -> float | None:
        pref = self._preferred()
        if pref.strength is not None:
            return pref.strength
        return next((d.strength for d in self.declarations if d.strength is not None), None)

    @property
    def context(self) -> str | None:
        pref = self._preferred()
        if pref.context is not None:
            return pref.context
        return next((d.context for d in self.declarations if d.context is not None), None)

    @property
    def declared_by(self) -> tuple[NodeKey, ...]:
        return tuple(d.holder for d in self.declarations)

    @property
    def direction(self) -> str | None:
        """The declared form: the single form written, `both` if written on both ends."""
        forms = {d.direction for d in self.declarations if d.direction is not None}
        if not forms:
            return None
        if len(forms) > 1:
            return "both"
        return next(iter(forms))

    @property
    def declared_at_source(self) -> bool:
        return any(d.holder == self.source and _is_outgoing(d) for d in self.declarations)

    @property
    def declared_at_target(self) -> bool:
        return any(d.holder == self.target and not _is_outgoing(d) for d in self.declarations)


def _is_outgoing(d: Declaration) -> bool:
    return d.direction != "incoming"


@dataclass(frozen=True, slots=True)
class Neighbour:
    """One link seen from one of its ends."""

    edge: GraphEdge
    #: The node at the other end.
    other: NodeKey
    #: True if the link points away from the node asked about.
    outgoing: bool


@dataclass(frozen=True, slots=True)
class OneWayRelation:
    """A link a two-way format wrote on one end only."""

    edge: GraphEdge
    #: The end that wrote it.
    declared_on: NodeKey
    #: The end that should also write it.
    missing_on: NodeKey
    #: The form expected on `missing_on` (`incoming` or `outgoing`).
    expected_direction: str


@dataclass(frozen=True, slots=True)
class Cycle:
    """Nodes linked in a cycle through a field that must be acyclic."""

    format: str
    field: str
    #: Every node of the strongly connected component, sorted.
    nodes: tuple[NodeKey, ...]
    #: One concrete cycle through them, as (source, target) steps.
    example: tuple[tuple[NodeKey, NodeKey], ...]


@dataclass(slots=True)
class GraphHealth:
    """Everything wrong with the links of a catalog."""

    ref_problems: list[ReferenceProblem] = field(default_factory=list)
    orphans: list[NodeKey] = field(default_factory=list)
    one_way: list[OneWayRelation] = field(default_factory=list)
    cycles: list[Cycle] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.ref_problems or self.orphans or self.one_way or self.cycles)

    @property
    def count(self) -> int:
        return len(self.ref_problems) + len(self.orphans) + len(self.one_way) + len(self.cycles)


@dataclass(slots=True)
class Neighbourhood:
    """The nodes within `depth` links of `centre` (either direction) and the links among them."""

    centre: NodeKey
    depth: int
    nodes: dict[NodeKey, GraphNode]
    #: Links between the centre and each node (0 for the centre).
    distance: dict[NodeKey, int]
    #: Every edge whose two ends are both in `nodes`.
    edges: list[GraphEdge]
    #: Flagged references held by nodes in the neighbourhood.
    broken: list[ReferenceProblem]
    #: True if `max_nodes` cut the walk short.
    truncated: bool = False
    #: One-way relations among `edges` (for marking them in a drawing).
    one_way: frozenset[GraphEdge] = frozenset()


def adjacent(g: Any, key: NodeKey) -> set[NodeKey]:
    """Nodes linked to `key` either way in a networkx graph."""
    return set(cast(Iterable[NodeKey], g.successors(key))) | set(
        cast(Iterable[NodeKey], g.predecessors(key))
    )
