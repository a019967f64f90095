"""Documents read into memories: an observation or a comprehension from its frontmatter
and markdown body.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...model import Memory, Reason
from ...text.dates import iso
from ...text.frontmatter import SplitDocument, load_frontmatter
from ..reading import as_str_list
from .schema import (
    COMPREHENSION_FIELDS,
    COMPREHENSION_REQUIRED,
    COMPREHENSION_SPEC,
    FORMAT_ID,
    KIND_COMPREHENSION,
    KIND_OBSERVATION,
    OBSERVATION_FIELDS,
    OBSERVATION_REQUIRED,
    OBSERVATION_SPEC,
    POSTERIOR_REQUIRED,
    PRIOR_REQUIRED,
)
from .validation import _Checker, _show, _type_name

_H1 = re.compile(r"^ {0,3}# +(?P<text>.*?)(?:\s+#+)?\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_OBSERVATION_PREFIX = re.compile(r"^Observation:\s*")


def parse_document(root: Path, rel: str, text: str, kind: str, archived: bool) -> Memory:
    """One decoded document (BOM removed, `\\n` endings) as a Memory.

    `kind` is KIND_OBSERVATION or KIND_COMPREHENSION.  Raises ParseError for
    anything invalid, exactly as a scan reports it.  Writers use this to
    re-read a file and to validate the bytes they are about to write.
    References are not resolved (that needs the whole vault).
    """
    data, doc = load_frontmatter(text, rel)
    if kind == KIND_OBSERVATION:
        return _observation(root, rel, data, doc, archived)
    return _comprehension(root, rel, data, doc, archived)


def _observation(
    root: Path, rel: str, data: dict[str, Any], doc: SplitDocument, archived: bool
) -> Memory:
    check = _Checker(rel, data, doc)
    # A wrong spec first: a foreign document lacks our fields for that reason.
    check.spec(OBSERVATION_SPEC)
    check.required(OBSERVATION_REQUIRED)
    memory_id = check.identifier()
    timestamp = check.timestamp("timestamp")
    source = check.string("source")
    event = check.string("event")
    context = data.get("context")
    # `context:` written with no value is null, which the model's `dict`
    # field rejects: only an absent key takes the default.
    if "context" in data and not isinstance(context, dict):
        check.fail(
            Reason.WRONG_TYPE,
            f"context must be a mapping, not {_type_name(context)}",
            "context",
        )
    trace_ref = data.get("trace_ref")
    if trace_ref is not None and not isinstance(trace_ref, str):
        check.fail(
            Reason.WRONG_TYPE,
            f"trace_ref must be a string, not {_type_name(trace_ref)}",
            "trace_ref",
        )

    title = _body_title(doc.body) or event
    return Memory(
        format=FORMAT_ID,
        vault_root=root,
        id=memory_id,
        kind=KIND_OBSERVATION,
        title=title,
        body=doc.body,
        path=rel,
        tags=_tags(data),
        confidence=None,
        created=timestamp,
        source=source,
        fields=data,
        extra={k: v for k, v in data.items() if k not in OBSERVATION_FIELDS},
        pinned=data.get("pinned") is True,
        archived=archived,
        native={
            "timestamp": iso(timestamp),
            "trace_ref": trace_ref,
            "incorporated_by": [],
        },
    )


def _comprehension(
    root: Path, rel: str, data: dict[str, Any], doc: SplitDocument, archived: bool
) -> Memory:
    check = _Checker(rel, data, doc)
    # The reference model defaults `spec` to comprehension/v1; a different
    # value in comprehension/ is a misplaced or foreign document.
    check.spec(COMPREHENSION_SPEC)
    # Nested required keys are reported with the top-level ones when the
    # parent is a mapping; a parent of the wrong type is reported below.
    missing = [k for k in COMPREHENSION_REQUIRED if k not in data]
    for parent, keys in (("prior", PRIOR_REQUIRED), ("posterior", POSTERIOR_REQUIRED)):
        block = data.get(parent)
        if isinstance(block, dict):
            missing.extend(f"{parent}.{k}" for k in keys if k not in block)
    if missing:
        check.fail(Reason.MISSING_REQUIRED_FIELD, f"lacks {', '.join(missing)}", None)

    memory_id = check.identifier()
    topic = check.string("topic")
    domain = check.string("domain")

    prior = check.mapping("prior")
    check.nested_string(prior, "prior", "statement")
    check.confidence(prior, "prior")
    check.nested_string(prior, "prior", "source")
    if prior.get("reasoning") is not None:
        check.nested_string(prior, "prior", "reasoning")

    observations = check.id_list(data.get("observations"), "observations")

    posterior = check.mapping("posterior")
    check.nested_string(posterior, "posterior", "statement")
    confidence = check.confidence(posterior, "posterior")
    check.nested_string(posterior, "posterior", "update_reasoning")
    used = check.id_list(posterior.get("observations_used"), "posterior.observations_used")

    created = check.timestamp("created")
    updated = check.timestamp("updated")

    version, verified = _version_and_verified(check, data)

    source = data.get("source")
    tags = [domain, *(t for t in _tags(data) if t != domain)]
    return Memory(
        format=FORMAT_ID,
        vault_root=root,
        id=memory_id,
        kind=KIND_COMPREHENSION,
        title=topic,
        body=doc.body,
        path=rel,
        tags=tuple(tags),
        confidence=confidence,
        created=created,
        updated=updated,
        source=source if isinstance(source, str) else None,
        fields=data,
        extra={k: v for k, v in data.items() if k not in COMPREHENSION_FIELDS},
        pinned=data.get("pinned") is True,
        archived=archived,
        native={
            "timestamp": iso(created),
            "created": iso(created),
            "updated": iso(updated),
            "version": version,
            "verified": verified,
            "prior_confidence": prior.get("confidence"),
            "observations": list(observations),
            "observations_used": list(used),
            "cites": [],
        },
    )


def _version_and_verified(check: _Checker, data: dict[str, Any]) -> tuple[Any, Any]:
    """A comprehension's `version` (an integer, default 1) and `verified` (default false)."""
    version = data.get("version", 1)
    if version is None:
        version = 1
    if isinstance(version, bool) or not isinstance(version, int):
        check.fail(
            Reason.WRONG_TYPE, f"version must be an integer, not {_show(version)}", "version"
        )
    verified = data.get("verified", False)
    if verified is None:
        verified = False
    if not isinstance(verified, bool):
        check.fail(
            Reason.WRONG_TYPE, f"verified must be true or false, not {_show(verified)}", "verified"
        )
    return version, verified


def _tags(data: dict[str, Any]) -> tuple[str, ...]:
    """Tags from `labels` and `tags` when they are strings or string lists."""
    out: list[str] = []
    for key in ("labels", "tags"):
        for tag in as_str_list(data.get(key)) or []:
            if tag not in out:
                out.append(tag)
    return tuple(out)


def _lines(text: str) -> Iterator[str]:
    """The lines of `text`, one at a time (a title is usually near the top)."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _body_title(body: str) -> str:
    """The first H1 outside code fences, without '# ' and 'Observation: '."""
    fence: str | None = None
    for line in _lines(body):
        opener = _FENCE.match(line)
        if opener:
            if fence is None:
                fence = opener.group(1)
            elif opener.group(1) == fence:
                fence = None
            continue
        if fence is not None:
            continue
        h1 = _H1.match(line)
        if h1:
            text = _OBSERVATION_PREFIX.sub("", h1.group("text").strip())
            if text:
                return text
    return ""
