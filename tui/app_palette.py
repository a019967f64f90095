"""The command palette's entries: panes, sorting, triage dates, vaults, maintenance runs,
and a command for every key active on the screen it was opened over.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from memlens.core.listing import COLUMNS

from .commands import PaletteCommand

if TYPE_CHECKING:
    from .app import MemlensApp


def palette_commands(app: MemlensApp, screen: Screen[Any] | None = None) -> list[PaletteCommand]:
    """Everything the command palette offers (see `commands.MemlensCommands`).

    `screen` is the screen the palette was opened over: the keys active
    there (its widgets' and its own) are offered too, so every action
    with a key is also a command.
    """
    show = partial(app.run_action)
    cmds = [
        PaletteCommand("Show memories", partial(show, "show('memories')"), "key 1"),
        PaletteCommand("Show decay triage", partial(show, "show('triage')"), "key 2"),
        PaletteCommand("Show problems", partial(show, "show('problems')"), "key 3"),
        PaletteCommand("Search memories", partial(show, "show('search')"), "key 4"),
        PaletteCommand("Show relation graph", partial(show, "show('graph')"), "key 5"),
        PaletteCommand("Show episodes timeline", partial(show, "show('episodes')"), "key 6"),
        PaletteCommand("Show secrets and personal data", partial(show, "show('privacy')"), "key 7"),
        PaletteCommand("Show what the agent sees", partial(show, "show('preview')"), "key 8"),
        PaletteCommand(
            "Review duplicates and contradictions", partial(show, "show('review')"), "key 9"
        ),
        PaletteCommand("Help: keys", app.action_help, "key ?"),
        PaletteCommand("Reload vaults", app.action_reload, "ctrl+r"),
        PaletteCommand("Copy memory id", app.action_copy_id, "key y"),
        PaletteCommand("Copy memory file path", app.action_copy_path, "key Y"),
        PaletteCommand("Quit", partial(show, "quit"), "key q"),
        PaletteCommand("Filter memories", partial(_palette_filter, app), "key /"),
        PaletteCommand("Reverse sort order", partial(_on_main, app, "action_sort_reverse")),
        PaletteCommand(
            "Show or hide invalid items", partial(_on_main, app, "action_toggle_invalid")
        ),
    ]
    for column in COLUMNS:
        cmds.append(
            PaletteCommand(f"Sort by {column.label}", partial(_palette_sort, app, column.key))
        )
    for day, label in ((1, "a day"), (7, "a week")):
        cmds.append(
            PaletteCommand(
                f"Triage: forward {label}", partial(_palette_triage, app, day), "time travel"
            )
        )
        cmds.append(
            PaletteCommand(
                f"Triage: back {label}", partial(_palette_triage, app, -day), "time travel"
            )
        )
    for i, v in enumerate(app.discovered):
        cmds.append(
            PaletteCommand(f"Show vault {v.name}", partial(_palette_vault, app, i + 1), v.format)
        )
    # Maintenance runs (actions_ui): each previewed before anything is written.
    # Imported when the palette opens: the runs' planners and screens are
    # not needed to show the first rows (see `lazy_modes`).
    from .maintenance_runs import palette_commands as actions_palette_commands

    cmds.extend(actions_palette_commands(app))
    if screen is not None:
        cmds.extend(screen_key_commands(app, screen, {c.name for c in cmds}))
    return cmds


def screen_key_commands(
    app: MemlensApp, screen: Screen[Any], taken: set[str]
) -> list[PaletteCommand]:
    """A command for each key binding active on `screen` (its own and its widgets')."""
    out: list[PaletteCommand] = []
    seen: set[tuple[int, str]] = set()
    try:
        active = list(screen.active_bindings.values())
    except Exception:  # a screen mid-teardown has no binding chain
        return out
    for item in active:
        node, binding = item.node, item.binding
        if node is app or not binding.description or not item.enabled:
            continue
        if (id(node), binding.action) in seen:
            continue
        seen.add((id(node), binding.action))
        name = binding.tooltip or binding.description
        if name in taken:
            continue
        taken.add(name)
        keys = app.get_key_display(binding)
        out.append(
            PaletteCommand(name, partial(app.run_action, binding.action, node), f"key {keys}")
        )
    return out


async def _on_main(app: MemlensApp, method: str) -> None:
    """Call a method of the memories screen, showing it first."""
    await app.switch_mode("memories")
    main = app.main_screen()
    if main is not None:
        getattr(main, method)()


async def _palette_filter(app: MemlensApp) -> None:
    await _on_main(app, "action_focus_filter")


async def _palette_sort(app: MemlensApp, column: str) -> None:
    await app.switch_mode("memories")
    main = app.main_screen()
    if main is not None:
        main.sort_by(column)


async def _palette_triage(app: MemlensApp, days: int) -> None:
    from .screens.triage import TriageScreen

    await app.switch_mode("triage")
    if isinstance(app.screen, TriageScreen):
        app.screen.action_shift_days(days)


async def _palette_vault(app: MemlensApp, option: int) -> None:
    await app.switch_mode("memories")
    main = app.main_screen()
    if main is not None:
        main.show_vault(option)
