"""Checks of experiences, views, stances and WAL entries: a fault raises `_Invalid`."""

from __future__ import annotations

import json
from typing import Any, TypeGuard

from ...model import Reason
from ...text.dates import parse_datetime
from .schema import EDITABLE_FIELDS, LATTICE, LENS_EDIT

_SHOW_MAX = 60


def _show(value: Any) -> str:
    """A short one-line rendering of a JSON value for a problem detail."""
    if isinstance(value, str):
        short = value if len(value) <= _SHOW_MAX else value[: _SHOW_MAX - 1] + "…"
        return repr(short)
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= _SHOW_MAX else text[: _SHOW_MAX - 1] + "…"


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_str_list(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


class _Invalid(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _check_number(obj: dict[str, Any], key: str, name: str, lo: float, hi: float) -> None:
    if key not in obj or obj[key] is None:
        return
    value = obj[key]
    if not _is_number(value):
        raise _Invalid(Reason.WRONG_TYPE, f"{name} {_show(value)} is not a number")
    # `not (lo <= v <= hi)` also catches NaN.
    if not lo <= value <= hi:
        bounds = f"{lo:g}-{hi:g}" if lo >= 0 else f"{lo:g} to {hi:g}"
        raise _Invalid(Reason.OUT_OF_RANGE, f"{name} {_show(value)} outside {bounds}")


def _validate_experience(obj: dict[str, Any]) -> None:
    """Raise _Invalid for the first rule an experience object breaks."""
    if "id" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks id")
    if not isinstance(obj["id"], str) or not obj["id"]:
        raise _Invalid(Reason.WRONG_TYPE, f"id {_show(obj['id'])} is not a non-empty string")
    if "type" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks type")
    if obj["type"] not in LATTICE or not isinstance(obj["type"], str):
        raise _Invalid(
            Reason.WRONG_TYPE, f"type {_show(obj['type'])} is not one of {', '.join(LATTICE)}"
        )
    if "created_at" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks created_at")
    created = obj["created_at"]
    if not isinstance(created, str) or parse_datetime(created) is None:
        raise _Invalid(Reason.WRONG_TYPE, f"created_at {_show(created)} is not an ISO timestamp")
    if "content" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks content.text")
    content = obj["content"]
    if not isinstance(content, dict):
        raise _Invalid(Reason.WRONG_TYPE, "content is not an object")
    if "text" not in content:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks content.text")
    if not isinstance(content["text"], str):
        raise _Invalid(Reason.WRONG_TYPE, f"content.text {_show(content['text'])} is not a string")
    confidence = obj.get("confidence")
    if confidence is not None:
        if not isinstance(confidence, dict):
            raise _Invalid(Reason.WRONG_TYPE, "confidence is not an object")
        _check_number(confidence, "p", "confidence.p", 0.0, 1.0)
    affect = obj.get("affect")
    if affect is not None:
        if not isinstance(affect, dict):
            raise _Invalid(Reason.WRONG_TYPE, "affect is not an object")
        vad = affect.get("vad")
        if vad is not None:
            if not isinstance(vad, dict):
                raise _Invalid(Reason.WRONG_TYPE, "affect.vad is not an object")
            _check_number(vad, "v", "affect.vad.v", -1.0, 1.0)
            _check_number(vad, "a", "affect.vad.a", 0.0, 1.0)
            _check_number(vad, "d", "affect.vad.d", -1.0, 1.0)
    for key in ("parents", "evidence_ptrs"):
        value = obj.get(key)
        if value is not None and not _is_str_list(value):
            raise _Invalid(Reason.WRONG_TYPE, f"{key} is not a list of strings")


def edit_value_problem(name: str, value: Any) -> tuple[Reason, str] | None:
    """Why `value` cannot be the edited value of field `name` (None if it can).

    `null` is always allowed: it drops the override.
    """
    if value is None:
        return None
    if name == "tags":
        if not _is_str_list(value) or not all(t.strip() for t in value):
            return Reason.WRONG_TYPE, f"tags {_show(value)} is not a list of non-empty strings"
    elif name == "confidence.p":
        if not _is_number(value):
            return Reason.WRONG_TYPE, f"confidence.p {_show(value)} is not a number"
        if not 0.0 <= value <= 1.0:
            return Reason.OUT_OF_RANGE, f"confidence.p {_show(value)} outside 0-1"
    elif name == "note" and not isinstance(value, str):
        return Reason.WRONG_TYPE, f"note {_show(value)} is not a string"
    return None


def _edit_fields(obj: dict[str, Any]) -> dict[str, Any] | None:
    delta = obj.get("delta_from_raw")
    fields = delta.get("fields") if isinstance(delta, dict) else None
    return fields if isinstance(fields, dict) else None


def _validate_view(obj: dict[str, Any]) -> None:
    _require_id(obj)
    if "lens" in obj and not isinstance(obj["lens"], str):
        raise _Invalid(Reason.WRONG_TYPE, f"lens {_show(obj['lens'])} is not a string")
    for key in ("applied_to", "provenance_braid"):
        value = obj.get(key)
        if value is not None and not _is_str_list(value):
            raise _Invalid(Reason.WRONG_TYPE, f"{key} is not a list of strings")
    if obj.get("lens") == LENS_EDIT:
        fields = _edit_fields(obj)
        if fields is None:
            raise _Invalid(
                Reason.WRONG_TYPE, f"delta_from_raw.fields of an {LENS_EDIT} view is not an object"
            )
        for name in EDITABLE_FIELDS:
            bad = edit_value_problem(name, fields.get(name))
            if bad is not None:
                raise _Invalid(bad[0], f"delta_from_raw.fields: {bad[1]}")


def experience_problem(obj: dict[str, Any]) -> str | None:
    """The first rule an experience object breaks, as a one-line detail (None: valid)."""
    try:
        _validate_experience(obj)
    except _Invalid as bad:
        return bad.detail
    return None


def view_problem(obj: dict[str, Any]) -> str | None:
    """The first rule a view object breaks, as a one-line detail (None: valid)."""
    try:
        _validate_view(obj)
    except _Invalid as bad:
        return bad.detail
    return None


def stance_problem(obj: dict[str, Any]) -> str | None:
    """The first rule a stance object breaks, as a one-line detail (None: valid)."""
    try:
        _validate_stance(obj)
    except _Invalid as bad:
        return bad.detail
    return None


def wal_problem(obj: dict[str, Any]) -> str | None:
    """The first rule a WAL entry breaks, as a one-line detail (None: valid)."""
    try:
        _validate_wal(obj)
    except _Invalid as bad:
        return bad.detail
    return None


def _validate_stance(obj: dict[str, Any]) -> None:
    _require_id(obj)
    candidates = obj.get("candidates")
    if candidates is not None:
        if not isinstance(candidates, list) or not all(isinstance(c, dict) for c in candidates):
            raise _Invalid(Reason.WRONG_TYPE, "candidates is not a list of objects")
        for n, cand in enumerate(candidates):
            if cand.get("exp") is not None and not isinstance(cand["exp"], str):
                raise _Invalid(Reason.WRONG_TYPE, f"candidates[{n}].exp is not a string")
    decision = obj.get("decision")
    if decision is not None:
        if not isinstance(decision, dict):
            raise _Invalid(Reason.WRONG_TYPE, "decision is not an object")
        support = decision.get("support")
        if support is not None and not _is_str_list(support):
            raise _Invalid(Reason.WRONG_TYPE, "decision.support is not a list of strings")


def _validate_wal(obj: dict[str, Any]) -> None:
    if "wal_id" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks wal_id")
    if not isinstance(obj["wal_id"], str) or not obj["wal_id"]:
        raise _Invalid(Reason.WRONG_TYPE, f"wal_id {_show(obj['wal_id'])} is not a string")
    if "ops" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks ops")
    ops = obj["ops"]
    if not isinstance(ops, list):
        raise _Invalid(Reason.WRONG_TYPE, "ops is not a list")
    for n, op in enumerate(ops):
        if not isinstance(op, dict):
            raise _Invalid(Reason.WRONG_TYPE, f"ops[{n}] is not an object")
        if not isinstance(op.get("op"), str):
            raise _Invalid(Reason.WRONG_TYPE, f"ops[{n}] has no op name")


def _require_id(obj: dict[str, Any]) -> None:
    if "id" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks id")
    if not isinstance(obj["id"], str) or not obj["id"]:
        raise _Invalid(Reason.WRONG_TYPE, f"id {_show(obj['id'])} is not a non-empty string")
