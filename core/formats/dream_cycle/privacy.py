"""Where a Dream Cycle memory's texts sit in its file, for the privacy scan.

A section's heading, its `<!-- dc:... -->` comment and its body each start
on a line the reader recorded (`native`); an entry of archive.jsonl is one
JSON line, so every text it holds is on that line.
"""

from __future__ import annotations

from ...model import Memory, Problem
from ..privacy_model import TextField, default_text_fields
from .sections import parse_sections, split_lines


def _line(memory: Memory, key: str) -> int | None:
    value = memory.native.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def section_text_fields(memory: Memory) -> list[TextField]:
    """The memory's texts with the file line each starts on."""
    fields = default_text_fields(memory)
    if memory.line is not None:  # an archive.jsonl entry
        return [TextField(f.name, f.text, memory.line) for f in fields]
    out: list[TextField] = []
    if memory.title.strip():
        out.append(TextField("title", memory.title, _line(memory, "start_line")))
    comment = _line(memory, "comment_line")
    for f in fields:
        if f.name == "title":
            continue
        if f.name == "body":
            out.append(TextField("body", f.text, _line(memory, "body_start_line"), multiline=True))
        else:
            out.append(TextField(f.name, f.text, comment))
    return out


def problem_section_texts(problem: Problem, raw: str) -> list[TextField] | None:
    """An invalid section's lines, heading to the next heading (None: not a section's problem)."""
    if problem.index is None:
        return None
    sections = parse_sections(raw)
    if not 1 <= problem.index <= len(sections):
        return []
    sec = sections[problem.index - 1]
    lines = split_lines(raw)[sec.start_line - 1 : sec.end_line]
    return [TextField("section", "\n".join(lines), sec.start_line, multiline=True)]
