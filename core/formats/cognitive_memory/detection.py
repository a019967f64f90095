"""Detection: a cognitive-memory vault's layout (the registry asks here before it
imports the format)."""

from __future__ import annotations

from pathlib import Path

from ..files import dir_state
from .schema import EPISODES_DIR, GRAPH_DIR, INDEX_FILE, STATE_FILE, TYPE_DIRS, VAULT_DIR


def detect(root: Path) -> bool:
    """A `graph/<type-dir>/`, or a state file beside `graph/` or `vault/`.

    A `graph/` that cannot be read counts when another part of the
    layout is there (`vault/`, `episodes/`, a state file): the scan
    reports it as one problem instead of the vault vanishing.
    """
    graph = root / GRAPH_DIR
    kinds = {dir_state(graph / d) for d in TYPE_DIRS.values()}
    if True in kinds:
        return True
    has_marker = (root / INDEX_FILE).is_file() or (root / STATE_FILE).is_file()
    has_vault = dir_state(root / VAULT_DIR) is True
    if has_marker and (dir_state(graph) is True or has_vault):
        return True
    return None in kinds and (has_marker or has_vault or dir_state(root / EPISODES_DIR) is True)
