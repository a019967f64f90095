"""Episode logs (`episodes/YYYY-MM-DD.md`): session entries and the memories they link to."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ...errors import ParseError
from ...model import Problem, Reason
from ...text.textio import decode_bytes, read_text
from ..files import rel_posix
from ..reading import problem_from
from .schema import EPISODES_DIR, FORMAT_ID

_EPISODE_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
_EPISODE_HEADING_RE = re.compile(r"^##(?!#)\s*(.*?)\s*$")
_EPISODE_TIME_RE = re.compile(r"^(\d{1,2}:\d{2})(?:\s*[-–—]\s*|\s+)(.*)$")
_EPISODE_FIELD_RE = re.compile(r"^\s*[-*]\s+\*\*\s*([A-Za-z ]+?)\s*:?\s*\*\*\s*:?\s*(.*?)\s*$")
_LINK_RE = re.compile(r"\[([^\]]*)\]\(\s*<?([^)>]*)>?\s*\)")


def episode_link_path(link: str, valid_paths: Mapping[str, str] | None = None) -> str | None:
    """Vault-relative path an episode's memory link points at, if it stays inside the vault.

    Links are written relative to `episodes/` (`../graph/...`); a vault-relative
    link is also accepted when that is what names an existing memory.  The
    result is only normalised text: nothing is joined onto a real path here.
    """
    link = link.strip()
    if not link or "\\" in link or "\x00" in link or "://" in link or link.startswith("#"):
        return None
    link = link.split("#", 1)[0].split("?", 1)[0]
    candidates: list[str] = []
    for raw in dict.fromkeys((link, unquote(link))):
        if not raw or raw.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", raw):
            continue
        for base in (EPISODES_DIR, ""):
            norm = (
                posixpath.normpath(posixpath.join(base, raw)) if base else posixpath.normpath(raw)
            )
            if norm in (".", "..") or norm.startswith("../") or norm.startswith("/"):
                continue
            candidates.append(norm)
    if not candidates:
        return None
    if valid_paths:
        for cand in candidates:
            if cand in valid_paths:
                return cand
    return candidates[0]


def parse_episode_text(
    text: str, date_text: str, rel: str, valid_paths: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Entries of one daily episode file (`## HH:MM - Title` and its bullet fields)."""
    entries: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for lineno, line in enumerate(text.split("\n"), start=1):
        heading = _EPISODE_HEADING_RE.match(line)
        if heading is not None:
            head = heading.group(1)
            timed = _EPISODE_TIME_RE.match(head)
            current = {
                "date": date_text,
                "time": timed.group(1) if timed else None,
                "title": timed.group(2).strip() if timed else head,
                "type": None,
                "tags": [],
                "memory_text": None,
                "memory_link": None,
                "memory_path": None,
                "memory_id": None,
                "summary": None,
                "file": rel,
                "line": lineno,
            }
            entries.append(current)
            continue
        if current is None:
            continue
        field = _EPISODE_FIELD_RE.match(line)
        if field is None:
            continue
        name, value = field.group(1).strip().lower(), field.group(2)
        if name == "type":
            current["type"] = value or None
        elif name == "tags":
            current["tags"] = [t.strip() for t in value.split(",") if t.strip()]
        elif name == "summary":
            current["summary"] = value
        elif name == "memory":
            link = _LINK_RE.search(value)
            if link is None:
                current["memory_text"] = value or None
                continue
            current["memory_text"] = link.group(1)
            current["memory_link"] = link.group(2).strip()
            target = episode_link_path(link.group(2), valid_paths)
            current["memory_path"] = target
            current["memory_id"] = valid_paths.get(target) if target else None
    return entries


def _read_episode(
    root: Path, path: Path, valid_paths: Mapping[str, str], data: bytes | None = None
) -> tuple[list[dict[str, Any]], Problem | None]:
    """Entries of one daily episode file, or the Problem that stops it being read."""
    m = _EPISODE_NAME_RE.match(path.name)
    if m is None:
        return [], None
    rel = rel_posix(root, path)
    try:
        text = read_text(path).text if data is None else decode_bytes(data, rel).text
    except ParseError as err:
        # An empty daily log is harmless; undecodable bytes are reported.
        if err.reason is not Reason.EMPTY_FILE:
            return [], problem_from(err, FORMAT_ID, root, rel)
        return [], None
    except OSError:
        return [], None
    return parse_episode_text(text, m.group(1), rel, valid_paths), None


def _relink_episode(entry: dict[str, Any], valid_paths: Mapping[str, str]) -> None:
    """Point an episode entry's memory link at the memories valid now (as parsing would)."""
    link = entry.get("memory_link")
    if not isinstance(link, str):
        return
    target = episode_link_path(link, valid_paths)
    entry["memory_path"] = target
    entry["memory_id"] = valid_paths.get(target) if target else None
