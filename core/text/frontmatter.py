"""YAML frontmatter: split a markdown document and load its header safely.

We split by hand rather than with python-frontmatter's `loads` because we need
the exact body text and the header's line numbers (for problems and minimal
writes).  YAML is loaded only with PyYAML's *safe* loader (the C one when
LibYAML is present, ~7x faster): tags such as `!!python/object` are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import ParseError
from ..model import Reason
from .fastyaml import fast_load

__all__ = [
    "SafeYamlLoader",
    "SplitDocument",
    "load_frontmatter",
    "safe_load_yaml",
    "split_frontmatter",
]

try:  # LibYAML's loader is the same safe loader, only faster.
    from yaml import CSafeLoader as SafeYamlLoader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as SafeYamlLoader  # type: ignore[assignment]

#: Why: LibYAML's composer recurses in C with no depth limit, so a header
#: nested ~25,000 levels deep (`[[[[...` or `- - - - ...`) overflows the C
#: stack and kills the process.  A header with this many nesting openers is
#: loaded with the pure-Python safe loader instead, whose recursion limit
#: turns the same input into a RecursionError we can report.
_MAX_OPENERS_FOR_C = 256


def _nesting_openers(source: str) -> int:
    """Upper bound on how deeply `source` could nest (cheap character count)."""
    return (
        source.count("[")
        + source.count("{")
        + source.count("- ")
        + source.count("-\t")
        + source.count("? ")
    )


#: Why: anchors and aliases let a tiny header describe an exponentially large
#: tree ("billion laughs").  Loading shares the objects, but anything that walks
#: the values (display, JSON output, search) would hang; such headers are
#: reported instead.  Only headers that use anchors pay for the count.
_MAX_NODES = 100_000


def _expands_too_far(data: Any) -> bool:
    """True if walking `data` (aliases expanded) visits more than _MAX_NODES values."""
    budget = _MAX_NODES
    stack = [data]
    while stack:
        item = stack.pop()
        budget -= 1
        if budget < 0:
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


@dataclass(frozen=True, slots=True)
class SplitDocument:
    """A markdown document cut at its frontmatter fences (text already decoded)."""

    header: str  # YAML text between the fences, without them
    body: str  # everything after the closing fence line
    body_line: int  # 1-based line where the body starts


def split_frontmatter(text: str, path: str) -> SplitDocument:
    """Cut `---\\n<yaml>\\n---\\n<body>`; raise ParseError(no_frontmatter) otherwise."""
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if first.rstrip() != "---":
        raise ParseError(
            path, Reason.NO_FRONTMATTER, "file does not start with a '---' frontmatter block"
        )
    # The closing fence is a line that is `---` or `...` once trailing
    # whitespace is stripped: look only at lines starting with one of them.
    if first_end >= 0:
        for m in _FENCE_START.finditer(text, first_end):
            start = m.start() + 1
            end = text.find("\n", start)
            line = text[start:] if end < 0 else text[start:end]
            if line.rstrip() in ("---", "..."):
                header = text[first_end + 1 : m.start()] if m.start() > first_end else ""
                body = "" if end < 0 else text[end + 1 :]
                return SplitDocument(header, body, text.count("\n", 0, start) + 2)
    raise ParseError(
        path,
        Reason.MALFORMED_FRONTMATTER,
        "frontmatter block is never closed with '---'",
        at_line=1,
    )


#: A line that could close the frontmatter (its `\\n` included).
_FENCE_START = re.compile(r"\n(?:---|\.\.\.)")


def safe_load_yaml(source: str, path: str, first_line: int = 2) -> Any:
    """Load YAML with the safe loader; raise ParseError(malformed_frontmatter).

    A header in the common subset `fastyaml.fast_load` reads gives the same
    mapping without the loader (several times faster); anything else,
    including every malformed header, goes through the loader.
    """
    fast = fast_load(source)
    if fast is not None:
        return fast
    loader: type[Any] = SafeYamlLoader
    if _nesting_openers(source) > _MAX_OPENERS_FOR_C:
        loader = yaml.SafeLoader
    try:
        data = yaml.load(source, Loader=loader)
        if "&" in source and _expands_too_far(data):
            raise ParseError(
                path,
                Reason.MALFORMED_FRONTMATTER,
                f"YAML error: aliases expand to more than {_MAX_NODES} values",
                at_line=first_line,
            )
        return data
    except RecursionError:
        raise ParseError(
            path, Reason.MALFORMED_FRONTMATTER, "YAML error: nested too deeply", at_line=first_line
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = first_line + mark.line if mark is not None else first_line
        context = getattr(exc, "context", None) or getattr(exc, "problem", None) or str(exc)
        context = " ".join(str(context).split())  # details are one line
        raise ParseError(
            path, Reason.MALFORMED_FRONTMATTER, f"YAML error: {context}", at_line=at
        ) from None
    except (ValueError, TypeError, OverflowError) as exc:
        # The safe constructor can still raise on odd scalars (e.g. a date
        # like 2026-02-30); treat that as malformed YAML, not a crash.
        detail = " ".join(str(exc).split())
        raise ParseError(
            path, Reason.MALFORMED_FRONTMATTER, f"YAML error: {detail}", at_line=first_line
        ) from None


def load_frontmatter(text: str, path: str) -> tuple[dict[str, Any], SplitDocument]:
    """Split and load; the header must be a mapping."""
    doc = split_frontmatter(text, path)
    data = safe_load_yaml(doc.header, path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ParseError(
            path,
            Reason.MALFORMED_FRONTMATTER,
            f"frontmatter is a {type(data).__name__}, not a mapping",
            at_line=2,
        )
    return data, doc
