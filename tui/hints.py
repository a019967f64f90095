"""The first-run hint: shown once per user, remembered in the user state folder.

Where: `$MEMLENS_STATE_DIR`, else platformdirs' user state folder for memlens.
A marker file says the hint was shown; a folder that cannot be written only
means the hint may show again.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the state folder (tests point it at a temp dir).
STATE_DIR_ENV = "MEMLENS_STATE_DIR"
#: The marker file written once the hint was shown.
HINT_MARKER = "first-run-hint-seen"
#: What the hint line says.
HINT_TEXT = "? keys · / filter · ctrl+p commands · 1-6 screens · y/Y copy id/path"


def state_dir() -> Path:
    """`$MEMLENS_STATE_DIR`, else the platform's user state folder (not created here)."""
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_state_dir("memlens"))


def hint_seen(folder: Path) -> bool:
    return (folder / HINT_MARKER).exists()


def mark_hint_seen(folder: Path) -> bool:
    """Remember that the hint was shown; False if the folder cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / HINT_MARKER).write_text("shown\n", encoding="utf-8")
    except OSError:
        return False
    return True
