"""The user's settings: one TOML file, read leniently.

Where the file is: `--config PATH` wins, then `$MEMLENS_CONFIG`, then
`config.toml` in the platform's user config folder (`memlens locate config`
prints it).  A missing file at the default place simply means "all defaults".

A bad setting never stops memlens: each problem becomes one warning that names
the file, the key and why ("config.toml: theme: expected a string, got 3"),
and that key keeps its default while the rest of the file still applies.  A
file that is not TOML at all gives one warning (with its line) and all
defaults.  Nothing here imports Textual: the app checks what only it can know
(whether a theme name or a binding id exists) against these plain values.
"""

from __future__ import annotations

import difflib
import os
import shlex
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import platformdirs

from .safe_io import read_regular

APP_NAME = "memlens"
CONFIG_FILE_NAME = "config.toml"
#: Environment variable naming the config file (overridden by `--config`).
CONFIG_ENV = "MEMLENS_CONFIG"
#: Environment variable naming the scan cache folder.
CACHE_DIR_ENV = "MEMLENS_CACHE_DIR"
#: Last resort when neither the config nor $VISUAL/$EDITOR names an editor.
FALLBACK_EDITOR = "vi"

ConfigOrigin = Literal["option", "env", "default"]


def _empty_keymap() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Config:
    """Every setting, already validated and typed.

    Frozen so one instance can be shared by the CLI and the app.  (The keymap
    is a read-only mapping, which makes instances unhashable: compare them,
    don't put them in sets.)
    """

    #: Vaults to open when no PATH is given; `~` expanded, relative paths
    #: taken from the config file's folder.
    vaults: tuple[Path, ...] = ()
    #: A Textual theme name (the app checks that it exists); None: the app's default.
    theme: str | None = None
    #: The default "as of" date for decay; None means today (`as_of = "today"`).
    as_of: date | None = None
    #: Record when memories are opened (off unless asked for).
    track_access: bool = False
    #: Editor command line; None: $VISUAL, then $EDITOR, then vi, looked up at use.
    editor: str | None = None
    #: Textual keymap: binding id -> key string ("ctrl+s" or "j,down").
    keymap: Mapping[str, str] = field(default_factory=_empty_keymap)
    #: Keep derived data (indexes) in the user cache folder.
    cache: bool = True
    #: The config file in use (it may not exist), and how it was chosen.
    path: Path | None = None
    origin: ConfigOrigin = "default"
    #: True when `path` existed and was read as TOML.
    loaded: bool = False

    def resolve_as_of(self, explicit: date | None, today: date) -> date:
        """The date to judge decay as of: `--as-of`, else the config, else today.

        `today` is a parameter so that core never reads the clock itself.
        """
        if explicit is not None:
            return explicit
        return self.as_of if self.as_of is not None else today

    def editor_command(self, environ: Mapping[str, str] | None = None) -> list[str]:
        """The editor as an argv list (append the file path to it).

        Order: the config's `editor`, $VISUAL, $EDITOR, then `vi`.  Values are
        split like a shell would, so `editor = "code --wait"` works.
        """
        env = os.environ if environ is None else environ
        for candidate in (self.editor, env.get("VISUAL"), env.get("EDITOR")):
            if candidate and candidate.strip():
                argv = _split_command(candidate)
                if argv:
                    return argv
        return [FALLBACK_EDITOR]


@dataclass(frozen=True, slots=True)
class ConfigLocation:
    """Which config file applies, and why."""

    path: Path
    origin: ConfigOrigin

    @property
    def exists(self) -> bool:
        return self.path.is_file()


def default_config_path() -> Path:
    """`config.toml` in the platform's user config folder (not created here)."""
    return Path(platformdirs.user_config_dir(APP_NAME)) / CONFIG_FILE_NAME


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$MEMLENS_CACHE_DIR`, else the platform's user cache folder (not created here).

    The same rule as the scan cache's own `cache_dir()`, so `memlens locate
    cache` prints the folder that is really used.
    """
    env = os.environ if environ is None else environ
    override = env.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_cache_dir(APP_NAME))


def locate_config(
    option: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> ConfigLocation:
    """The config file in use: `--config` > `$MEMLENS_CONFIG` > the default place.

    An empty `--config ""` or `MEMLENS_CONFIG=` counts as not given.
    """
    env = os.environ if environ is None else environ
    if option is not None and str(option) != "":
        return ConfigLocation(Path(option).expanduser(), "option")
    from_env = env.get(CONFIG_ENV, "")
    if from_env:
        return ConfigLocation(Path(from_env).expanduser(), "env")
    return ConfigLocation(default_config_path(), "default")


def load_config(
    option: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> tuple[Config, list[str]]:
    """Read the config file in use; return the settings and one warning per problem.

    Never raises for bad content: a bad value keeps its default, an unreadable
    or non-TOML file gives all defaults.  A missing file at the default place
    is normal and silent; a missing file that was asked for (by `--config` or
    `$MEMLENS_CONFIG`) is worth a warning.
    """
    where = locate_config(option, environ)
    base = Config(path=where.path, origin=where.origin)
    label = str(where.path)
    if not where.path.exists():
        if where.origin == "default":
            return base, []
        how = "--config" if where.origin == "option" else f"${CONFIG_ENV}"
        return base, [f"{label}: no such file (from {how}); using default settings"]
    try:
        raw = read_regular(where.path)
    except OSError as exc:
        return base, [f"{label}: cannot read ({exc.strerror or exc}); using default settings"]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return base, [f"{label}: not UTF-8 (byte {exc.start}); using default settings"]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return base, [f"{label}: not valid TOML: {_toml_error(exc, text)}; using default settings"]
    return parse_config(data, where=where)


def _toml_error(exc: tomllib.TOMLDecodeError, text: str) -> str:
    """tomllib's message, always with a line number.

    It says "(at line N, column M)" except at the end of the file, where it
    says "(at end of document)": name that last line too.
    """
    message = str(exc)
    if message.endswith("(at end of document)"):
        last = max(1, len(text.splitlines()))
        message = message.removesuffix("(at end of document)") + f"(at line {last}, end of file)"
    return message


def parse_config(
    data: Mapping[str, Any], where: ConfigLocation | None = None
) -> tuple[Config, list[str]]:
    """Validate an already-parsed TOML table (the part of `load_config` after reading)."""
    label = str(where.path) if where is not None else CONFIG_FILE_NAME
    warnings: list[str] = []
    values: dict[str, Any] = {}
    base_dir = where.path.parent if where is not None else Path.cwd()

    for key, value in data.items():
        parser = _PARSERS.get(key)
        if parser is None:
            hint = difflib.get_close_matches(key, list(_PARSERS), n=1)
            also = f" (did you mean {hint[0]!r}?)" if hint else ""
            known = ", ".join(sorted(_PARSERS))
            warnings.append(f"{label}: {key}: unknown setting, ignored{also}; known: {known}")
            continue
        problems: list[str] = []
        parsed = parser(value, problems, base_dir)
        warnings.extend(f"{label}: {p}" for p in problems)
        if parsed is not _INVALID:
            values[key] = parsed

    if where is not None:
        values.update(path=where.path, origin=where.origin, loaded=True)
    return Config(**values), warnings


# ----------------------------------------------------------------- parsers

#: Marker: the value was rejected, keep the default.
_INVALID: Any = object()

_Parser = Callable[[Any, list[str], Path], Any]


def _describe(value: Any) -> str:
    """A value as the TOML a user would have written, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, datetime):
        return f"the date-time {value.isoformat()}"
    if isinstance(value, date | time):
        return value.isoformat()
    return str(value)


def _parse_vaults(value: Any, problems: list[str], base_dir: Path) -> Any:
    if not isinstance(value, list):
        problems.append(f"vaults: expected a list of paths, got {_describe(value)}")
        return _INVALID
    paths: list[Path] = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            what = "an empty string" if isinstance(item, str) else _describe(item)
            problems.append(f"vaults[{i}]: expected a path string, got {what}; skipped")
            continue
        path = Path(item).expanduser()
        # Relative entries mean "next to this config file", not "wherever I
        # happen to start memlens".
        paths.append(path if path.is_absolute() else base_dir / path)
    return tuple(paths)


def _parse_theme(value: Any, problems: list[str], base_dir: Path) -> Any:
    if not isinstance(value, str):
        problems.append(f"theme: expected a string, got {_describe(value)}")
        return _INVALID
    if not value.strip():
        problems.append("theme: expected a theme name, got an empty string")
        return _INVALID
    return value.strip()


def _parse_as_of(value: Any, problems: list[str], base_dir: Path) -> Any:
    expected = 'expected "today" or a date YYYY-MM-DD'
    if isinstance(value, datetime):  # a datetime is also a date: check it first
        problems.append(f"as_of: {expected}, got {_describe(value)}")
        return _INVALID
    if isinstance(value, date):  # TOML's bare date literal: as_of = 2026-11-22
        return value
    if not isinstance(value, str):
        problems.append(f"as_of: {expected}, got {_describe(value)}")
        return _INVALID
    text = value.strip()
    if text.lower() == "today":
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        problems.append(f"as_of: {expected}, got {_describe(value)}")
        return _INVALID


def _bool_parser(key: str) -> _Parser:
    def parse(value: Any, problems: list[str], base_dir: Path) -> Any:
        if not isinstance(value, bool):
            problems.append(f"{key}: expected true or false, got {_describe(value)}")
            return _INVALID
        return value

    return parse


def _split_command(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:  # unbalanced quotes: treat it as one program name
        return [text.strip()]


def _parse_editor(value: Any, problems: list[str], base_dir: Path) -> Any:
    if not isinstance(value, str):
        problems.append(f"editor: expected a command string, got {_describe(value)}")
        return _INVALID
    if not value.strip():
        problems.append("editor: expected a command, got an empty string")
        return _INVALID
    try:
        shlex.split(value)
    except ValueError as exc:
        problems.append(f"editor: cannot split {_describe(value)} like a shell would ({exc})")
        return _INVALID
    return value.strip()


def _key_string(value: Any) -> str | None:
    """A Textual key string ("ctrl+s", "j,down"), or None if it is not one.

    A TOML list of keys (["j", "down"]) is accepted and joined with commas.
    """
    if isinstance(value, list):
        if not value or not all(isinstance(v, str) for v in value):
            return None
        value = ",".join(value)
    if not isinstance(value, str):
        return None
    keys = [k.strip() for k in value.split(",")]
    # "," itself is written "comma" in Textual key strings; a key never holds spaces.
    if not keys or any(not k or any(ch.isspace() for ch in k) for k in keys):
        return None
    return ",".join(keys)


def _flatten_ids(table: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Binding ids with their keys; nested tables become dotted ids.

    Unquoted `app.quit = "q"` is TOML for a nested table {"app": {"quit": "q"}};
    what the user meant is the binding id "app.quit".
    """
    items: list[tuple[str, Any]] = []
    for name, value in table.items():
        if isinstance(value, dict):
            items.extend(_flatten_ids(value, f"{prefix}{name}."))
        else:
            items.append((f"{prefix}{name}", value))
    return items


def _parse_keymap(value: Any, problems: list[str], base_dir: Path) -> Any:
    if not isinstance(value, dict):
        problems.append(
            f"keymap: expected a table of binding id = key string, got {_describe(value)}"
        )
        return _INVALID
    keymap: dict[str, str] = {}
    for binding_id, keys in _flatten_ids(value):
        key_string = _key_string(keys)
        if key_string is None:
            problems.append(
                f'keymap.{binding_id}: expected a key string like "ctrl+s" or "j,down",'
                f" got {_describe(keys)}; skipped"
            )
            continue
        keymap[binding_id] = key_string
    return MappingProxyType(keymap)


_PARSERS: dict[str, _Parser] = {
    "vaults": _parse_vaults,
    "theme": _parse_theme,
    "as_of": _parse_as_of,
    "track_access": _bool_parser("track_access"),
    "editor": _parse_editor,
    "keymap": _parse_keymap,
    "cache": _bool_parser("cache"),
}

#: The settings a config file may hold.
KNOWN_KEYS: tuple[str, ...] = tuple(_PARSERS)


def example_config() -> str:
    """A commented config.toml with every setting at its default (for docs and `--help`)."""
    return """\
# memlens settings.  Every key is optional.
vaults = []               # vaults to open with no PATH, e.g. ["~/agent-memory"]
# theme = "textual-dark"  # any Textual theme name
as_of = "today"           # or a date, e.g. "2026-11-22"
track_access = false      # record when memories are opened
# editor = "nvim"         # default: $VISUAL, then $EDITOR, then vi
cache = true              # keep derived indexes in the user cache folder

[keymap]                  # binding id = key string (Textual keymaps)
# "app.quit" = "ctrl+q"
"""
