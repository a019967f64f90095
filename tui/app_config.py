"""Applying the config in the app: theme and keymap, which only a running app can check.

Problems become warnings (a notification and an entry in `errors`), never
a failed start.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.dom import DOMNode

from .safe_text import visible

if TYPE_CHECKING:
    from .app import MemlensApp


def apply_config(app: MemlensApp) -> None:
    """Theme and keymap from the config: what only the app can check."""
    for warning in app.config_warnings:
        # Already printed to stderr, but the app's screen hides it.
        app.errors.append(("config", warning))
        app.notify(visible(warning), title="Config", severity="warning", markup=False)
    theme = app.config.theme
    if theme is not None:
        if theme in app.available_themes:
            app.theme = theme
        else:
            known = ", ".join(sorted(app.available_themes))
            config_warning(app, f"theme: unknown theme {theme!r}; known: {known}")
    keymap = dict(app.config.keymap)
    if keymap:
        known_ids = binding_ids()
        unknown = sorted(k for k in keymap if k not in known_ids)
        for binding_id in unknown:
            config_warning(app, f"keymap.{binding_id}: no binding with this id; ignored")
        app.set_keymap({k: v for k, v in keymap.items() if k in known_ids})


def config_warning(app: MemlensApp, text: str) -> None:
    where = str(app.config.path) if app.config.path is not None else "config"
    message = f"{where}: {text}"
    app.errors.append(("config", message))
    app.notify(visible(message), title="Config", severity="warning", markup=False, timeout=8)


def binding_ids() -> set[str]:
    """Every binding id of every memlens (and Textual) class: what a keymap may name.

    Screens and widgets are imported first, so ids of screens not opened yet
    count too.
    """
    for package in ("memlens.tui.screens", "memlens.tui.widgets"):
        pkg = importlib.import_module(package)
        for info in pkgutil.iter_modules(pkg.__path__):
            with contextlib.suppress(Exception):  # a broken module has no ids to offer
                importlib.import_module(f"{package}.{info.name}")
    ids: set[str] = set()
    stack: list[type] = [DOMNode]
    seen: set[type] = set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for b in cls.__dict__.get("BINDINGS", ()):
            if isinstance(b, Binding) and b.id:
                ids.add(b.id)
        stack.extend(cls.__subclasses__())
    return ids
