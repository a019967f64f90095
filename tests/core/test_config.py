"""The config file: where it is, what it may hold, and how bad content is reported."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from memlens.core import config as config_mod
from memlens.core.config import (
    CONFIG_ENV,
    KNOWN_KEYS,
    Config,
    example_config,
    load_config,
    locate_config,
    parse_config,
)

FULL = """\
vaults = ["~/agent-memory", "/srv/memory", "relative/vault"]
theme = "nord"
as_of = "2026-11-22"
track_access = true
editor = "code --wait"
cache = false

[keymap]
"app.quit" = "ctrl+q"
toggle_detail = ["d", "f2"]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test sees the real user's config: the default place is inside tmp_path."""
    default = tmp_path / "user-config" / "memlens" / "config.toml"
    monkeypatch.setattr(config_mod, "default_config_path", lambda: default)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return default


def test_a_missing_default_file_means_all_defaults_silently(isolated: Path) -> None:
    config, warnings = load_config()
    assert warnings == []
    assert config == Config(path=isolated, origin="default", loaded=False)
    assert config.vaults == () and config.theme is None and config.as_of is None
    assert config.track_access is False and config.cache is True
    assert config.editor is None and dict(config.keymap) == {}


def test_a_valid_file_sets_every_key(tmp_path: Path) -> None:
    path = write(tmp_path / "cfg" / "config.toml", FULL)
    config, warnings = load_config(path)
    assert warnings == []
    assert config.loaded and config.path == path and config.origin == "option"
    assert config.vaults == (
        tmp_path / "home" / "agent-memory",  # ~ expanded
        Path("/srv/memory"),
        tmp_path / "cfg" / "relative" / "vault",  # relative to the config file
    )
    assert config.theme == "nord"
    assert config.as_of == date(2026, 11, 22)
    assert config.track_access is True
    assert config.editor == "code --wait"
    assert config.cache is False
    assert dict(config.keymap) == {"app.quit": "ctrl+q", "toggle_detail": "d,f2"}


def test_the_config_is_frozen(tmp_path: Path) -> None:
    config, _ = load_config(write(tmp_path / "c.toml", FULL))
    with pytest.raises(AttributeError):
        config.theme = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.keymap["x"] = "y"  # type: ignore[index]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("vaults = 3", "vaults: expected a list of paths, got 3"),
        ('vaults = "~/one"', 'vaults: expected a list of paths, got "~/one"'),
        ("theme = 3", "theme: expected a string, got 3"),
        ('theme = "  "', "theme: expected a theme name, got an empty string"),
        ('as_of = "yesterday"', 'as_of: expected "today" or a date YYYY-MM-DD, got "yesterday"'),
        ("as_of = 2026-11-22T10:00:00", 'as_of: expected "today" or a date YYYY-MM-DD, got the'),
        ("as_of = 20261122", 'as_of: expected "today" or a date YYYY-MM-DD, got 20261122'),
        ('track_access = "yes"', 'track_access: expected true or false, got "yes"'),
        ("track_access = 1", "track_access: expected true or false, got 1"),
        ("editor = false", "editor: expected a command string, got false"),
        ('editor = ""', "editor: expected a command, got an empty string"),
        ("editor = 'vim \"unclosed'", "editor: cannot split"),
        ('keymap = "ctrl+q"', 'keymap: expected a table of binding id = key string, got "ctrl+q"'),
        ("cache = []", "cache: expected true or false, got a list"),
    ],
)
def test_each_bad_value_is_named_and_keeps_its_default(
    tmp_path: Path, line: str, message: str
) -> None:
    # Every other key is valid and must still apply.
    key = line.split("=", 1)[0].strip()
    good = {
        "vaults": 'vaults = ["/srv/memory"]',
        "theme": 'theme = "nord"',
        "as_of": 'as_of = "2026-01-02"',
        "track_access": "track_access = true",
        "editor": 'editor = "nano"',
        "cache": "cache = false",
    }
    others = [v for k, v in good.items() if k != key]
    path = write(tmp_path / "config.toml", "\n".join([line, *others]) + "\n")
    config, warnings = load_config(path)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"{path}: {message}")
    defaults = Config()
    assert getattr(config, key) == getattr(defaults, key)
    expected_others = {
        "vaults": (Path("/srv/memory"),),
        "theme": "nord",
        "as_of": date(2026, 1, 2),
        "track_access": True,
        "editor": "nano",
        "cache": False,
    }
    for name, value in expected_others.items():
        if name != key:
            assert getattr(config, name) == value, name


def test_bad_list_items_and_key_strings_are_skipped_one_by_one(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config.toml",
        'vaults = ["/a", 3, "", "/b"]\n'
        "[keymap]\n"
        'ok = "j,down"\n'
        "number = 3\n"
        'spaced = "ctrl + s"\n'
        'empty = ""\n'
        'dangling = "j,"\n'
        'mixed = ["a", 1]\n',
    )
    config, warnings = load_config(path)
    assert config.vaults == (Path("/a"), Path("/b"))
    assert dict(config.keymap) == {"ok": "j,down"}
    assert f"{path}: vaults[1]: expected a path string, got 3; skipped" in warnings
    assert f"{path}: vaults[2]: expected a path string, got an empty string; skipped" in warnings
    for bad in ("number", "spaced", "empty", "dangling", "mixed"):
        assert any(w.startswith(f"{path}: keymap.{bad}: expected a key string") for w in warnings)
    assert len(warnings) == 7


def test_unquoted_dotted_binding_ids_mean_the_dotted_id(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config.toml", '[keymap]\napp.quit = "ctrl+q"\nscreen.help.show = "f1"\n'
    )
    config, warnings = load_config(path)
    assert warnings == []
    assert dict(config.keymap) == {"app.quit": "ctrl+q", "screen.help.show": "f1"}


def test_as_of_forms(tmp_path: Path) -> None:
    for text, expected in [
        ('as_of = "today"', None),
        ('as_of = "Today"', None),
        ("as_of = 2026-03-04", date(2026, 3, 4)),  # TOML's own date literal
        ('as_of = " 2026-03-04 "', date(2026, 3, 4)),
    ]:
        config, warnings = load_config(write(tmp_path / "config.toml", text))
        assert warnings == [], text
        assert config.as_of == expected, text


def test_invalid_toml_gives_one_warning_with_its_line_and_all_defaults(tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", 'theme = "nord"\ncache = false\nvaults = [\n')
    config, warnings = load_config(path)
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{path}: not valid TOML")
    assert "(at line 3, end of file)" in warnings[0]
    assert warnings[0].endswith("using default settings")
    assert config.theme is None and config.cache is True and not config.loaded


def test_invalid_toml_names_the_line_of_the_mistake(tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", 'theme = "nord"\ncache = nope\nas_of = "today"\n')
    _, warnings = load_config(path)
    assert len(warnings) == 1 and "(at line 2, column 9)" in warnings[0]


def test_a_non_utf8_file_gives_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'theme = "caf\xe9"\n')
    config, warnings = load_config(path)
    assert len(warnings) == 1 and "not UTF-8" in warnings[0]
    assert config.theme is None


def test_a_bom_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'\xef\xbb\xbftheme = "nord"\r\n')
    config, warnings = load_config(path)
    assert warnings == [] and config.theme == "nord"


def test_a_folder_instead_of_a_file_gives_one_warning(tmp_path: Path) -> None:
    folder = tmp_path / "config.toml"
    folder.mkdir()
    config, warnings = load_config(folder)
    assert len(warnings) == 1 and warnings[0].startswith(f"{folder}: cannot read")
    assert config == Config(path=folder, origin="option")


def test_unknown_keys_are_warned_about_and_ignored(tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", 'thme = "nord"\ncache = false\n[colours]\na = 1\n')
    config, warnings = load_config(path)
    assert config.cache is False and config.theme is None
    assert len(warnings) == 2
    assert warnings[0].startswith(f"{path}: thme: unknown setting, ignored (did you mean 'theme'?)")
    assert warnings[1].startswith(f"{path}: colours: unknown setting, ignored; known: ")
    for key in KNOWN_KEYS:
        assert key in warnings[1]


def test_override_order_option_then_env_then_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated: Path
) -> None:
    write(isolated, 'theme = "from-default"\n')
    from_env = write(tmp_path / "env.toml", 'theme = "from-env"\n')
    from_option = write(tmp_path / "option.toml", 'theme = "from-option"\n')

    config, _ = load_config()
    assert (config.theme, config.origin, config.path) == ("from-default", "default", isolated)

    monkeypatch.setenv(CONFIG_ENV, str(from_env))
    config, _ = load_config()
    assert (config.theme, config.origin, config.path) == ("from-env", "env", from_env)

    config, _ = load_config(from_option)
    assert (config.theme, config.origin) == ("from-option", "option")

    # An empty value counts as not given.
    config, _ = load_config("")
    assert config.theme == "from-env"
    monkeypatch.setenv(CONFIG_ENV, "")
    config, _ = load_config()
    assert config.theme == "from-default"


def test_an_explicit_file_that_is_missing_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, warnings = load_config(tmp_path / "nope.toml")
    assert warnings == [
        f"{tmp_path / 'nope.toml'}: no such file (from --config); using default settings"
    ]
    assert config == Config(path=tmp_path / "nope.toml", origin="option")
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "gone.toml"))
    _, warnings = load_config()
    assert warnings == [
        f"{tmp_path / 'gone.toml'}: no such file (from ${CONFIG_ENV}); using default settings"
    ]


def test_locate_expands_tilde_in_the_option_and_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    assert locate_config("~/x.toml").path == home / "x.toml"
    monkeypatch.setenv(CONFIG_ENV, "~/y.toml")
    where = locate_config()
    assert (where.path, where.origin, where.exists) == (home / "y.toml", "env", False)


def test_explicit_environ_mapping_is_used_instead_of_os_environ(tmp_path: Path) -> None:
    where = locate_config(environ={CONFIG_ENV: str(tmp_path / "e.toml")})
    assert where.path == tmp_path / "e.toml"


def test_resolve_as_of_prefers_the_flag_then_the_config_then_today() -> None:
    today = date(2026, 11, 22)
    assert Config().resolve_as_of(None, today) == today
    pinned = Config(as_of=date(2026, 1, 1))
    assert pinned.resolve_as_of(None, today) == date(2026, 1, 1)
    assert pinned.resolve_as_of(date(2025, 5, 5), today) == date(2025, 5, 5)


def test_editor_command_order() -> None:
    env = {"VISUAL": "nvim -p", "EDITOR": "nano"}
    assert Config(editor="code --wait").editor_command(env) == ["code", "--wait"]
    assert Config().editor_command(env) == ["nvim", "-p"]
    assert Config().editor_command({"EDITOR": "nano", "VISUAL": " "}) == ["nano"]
    assert Config().editor_command({"EDITOR": "'my editor' -x"}) == ["my editor", "-x"]
    assert Config().editor_command({}) == ["vi"]


def test_the_example_config_is_valid_and_all_defaults() -> None:
    import tomllib

    config, warnings = parse_config(tomllib.loads(example_config()))
    assert warnings == []
    assert config == Config(loaded=False)


def test_default_cache_dir_honours_its_env_variable(tmp_path: Path) -> None:
    from memlens.core.config import CACHE_DIR_ENV, default_cache_dir

    assert default_cache_dir({CACHE_DIR_ENV: str(tmp_path)}) == tmp_path
    assert "memlens" in default_cache_dir({}).parts
