"""Whether a vault lives in a git repository, and what to tell the user then.

Redacting a file does not redact its history: every earlier commit still
holds the value.  memlens never rewrites git history itself; it says so
and names the tools that do (git filter-repo, BFG).
"""

from __future__ import annotations

from pathlib import Path


def git_root(path: Path) -> Path | None:
    """The work tree holding `path` (a folder with `.git`, a dir or a worktree file), if any."""
    here = path.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def git_history_note(repo: Path) -> str:
    """The plain warning: history still holds the values, and how to purge them."""
    return (
        f"{repo} is a git repository: its history still holds these values even after"
        " redaction. memlens never rewrites git history. To purge them, list each value in"
        " a file and run `git filter-repo --replace-text FILE` (or BFG:"
        " `bfg --replace-text FILE`), then force-push and have every clone re-cloned;"
        " rotate any credential that was committed."
    )


__all__ = ["git_history_note", "git_root"]
