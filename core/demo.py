"""The bundled demo vaults: one realistic vault of each format.

The bundle ships inside the package and is never opened in place: callers get
a fresh copy so that edits made while trying memlens cannot change it.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

DEMO_DIRNAME = "demo_vaults"


def demo_source() -> Path:
    """Where the bundled demo vaults live (read-only use)."""
    return Path(str(resources.files("memlens.core").joinpath(DEMO_DIRNAME)))


def copy_demo(dest: Path) -> Path:
    """Copy the demo vaults into `dest`/memlens-demo and return that folder."""
    target = Path(dest) / "memlens-demo"
    shutil.copytree(demo_source(), target, ignore=shutil.ignore_patterns("__pycache__"))
    # Package data may be installed read-only; the copy must be editable.
    for p in [target, *target.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(mode | 0o200 | (0o100 if p.is_dir() else 0))
    return target
