"""A git repository built in the test, for memlens history: vaults of three formats in a subfolder.

Every commit has a fixed author and date, so commit ids are the same on
every run.  `build_repo` makes the history the tests assert exactly:

  1 add vaults                 ocean note v1, sections A and B, record X, obs-201 (odd name)
  2 edit section A body        (A changes)
  3 edit section B             (B changes; A untouched, same file)
  4 append record Y            (X untouched, same file)
  5 ocean note v2              (note changes)
  6 append section C          (A, B untouched)
  7 edit record X confidence   (X changes)
  8 archive the ocean note     (git mv vault/ -> archive/: a move)
  9 edit section A comment     (A changes)
 10 unrelated file             (nothing of ours)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

GIT = shutil.which("git")

NOTE_REL = "agents/atlas/memory/vault/obs-2026-11-01-001.md"
NOTE_ARCHIVED = "agents/atlas/memory/archive/obs-2026-11-01-001.md"
NOTE_ID = "atlas/obs-2026-11-01-001"
ODD_NAME = b"observations/obs-\xff.md"


def note(body: str, confidence: str = "0.8") -> bytes:
    return (
        "---\ntags: [db]\n"
        f"confidence: {confidence}\ncreated: 2026-11-01\ndecay: linear-90d\nsource: atlas\n"
        f"---\n{body}\n"
    ).encode()


def section(title: str, importance: str, body: str) -> str:
    return (
        f"## {title}\n<!-- dc:type=fact dc:importance={importance} dc:ttl=180"
        f" dc:date=2026-10-14 -->\n{body}\n\n"
    )


def record(rid: str, text: str, p: float = 0.9) -> bytes:
    obj: dict[str, Any] = {
        "id": rid,
        "type": "occurrence",
        "created_at": "2026-11-10T09:00:00Z",
        "content": {"text": text, "media": [], "structured": {}},
        "provenance": {"sources": [], "actor": "user", "method": "capture"},
        "evidence_ptrs": [],
        "confidence": {"p": p, "method": "direct_capture"},
        "parents": [],
    }
    return json.dumps(obj).encode() + b"\n"


def obs_v1(body: str) -> bytes:
    return (
        "---\nspec: observation/v1\nid: obs-201\ntimestamp: 2026-11-14T08:02:11Z\n"
        f'source: agent/monitor\nevent: "{body}"\ncontext:\n  project: t\n---\n'
    ).encode()


class RepoBuilder:
    """Writes files and commits them with fixed authors and dates."""

    def __init__(self, top: Path) -> None:
        assert GIT is not None
        self.top = top
        self.n = 0
        self.shas: list[str] = []
        top.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        when = f"2026-10-{self.n + 1:02d}T10:00:00+00:00"
        env.update(
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_AUTHOR_NAME="Ada Agent",
            GIT_AUTHOR_EMAIL="ada@example.invalid",
            GIT_COMMITTER_NAME="Ada Agent",
            GIT_COMMITTER_EMAIL="ada@example.invalid",
            GIT_AUTHOR_DATE=when,
            GIT_COMMITTER_DATE=when,
        )
        return env

    def git(self, *args: str | bytes) -> bytes:
        assert GIT is not None
        return subprocess.run(
            [GIT, *args], cwd=self.top, env=self.env(), check=True, capture_output=True
        ).stdout

    def write(self, rel: str | bytes, data: bytes) -> None:
        raw = os.fsencode(rel) if isinstance(rel, str) else rel
        path = Path(os.fsdecode(os.path.join(os.fsencode(self.top), raw)))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def move(self, src: str, dst: str) -> None:
        (self.top / dst).parent.mkdir(parents=True, exist_ok=True)
        (self.top / src).rename(self.top / dst)

    def append(self, rel: str, data: bytes) -> None:
        with open(self.top / rel, "ab") as f:
            f.write(data)

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        self.n += 1
        sha = self.git("rev-parse", "HEAD").decode().strip()
        self.shas.append(sha)
        return sha


SECTION_A1 = section("Studio lease", "6.5", "The lease renews in March.")
SECTION_A2 = section("Studio lease", "6.5", "The lease renews on 2027-03-01; notice by January.")
SECTION_A3 = section("Studio lease", "7.0", "The lease renews on 2027-03-01; notice by January.")
SECTION_B1 = section("Async reviews", "7.5", "Reviews as recorded walkthroughs.")
SECTION_B2 = section("Async reviews", "7.5", "Reviews as recorded walkthroughs with comments.")
SECTION_C = section("Morning sketches", "6.0", "Sketching from 8:00 to 9:30.")
PREAMBLE = "# Observations\n\nObserver log.\n\n"


def observations(*sections: str) -> bytes:
    return (PREAMBLE + "".join(sections)).encode()


def build_repo(top: Path) -> RepoBuilder:
    """The ten commits described above; vaults below `top/memory/`."""
    r = RepoBuilder(top)
    m = "memory"
    r.write(f"{m}/ocean/{NOTE_REL}", note("Disk at 71%."))
    r.write(f"{m}/dream/observations.md", observations(SECTION_A1, SECTION_B1))
    r.write(f"{m}/exp/experiences.jsonl", record("exp_x", "Reviewer 2 flags seeds."))
    r.write(os.fsencode(m) + b"/obs/" + ODD_NAME, obs_v1("deliveries failed"))
    r.commit("add vaults\n\nFirst import of the agents' memory.")
    r.write(f"{m}/dream/observations.md", observations(SECTION_A2, SECTION_B1))
    r.commit("edit section A body")
    r.write(f"{m}/dream/observations.md", observations(SECTION_A2, SECTION_B2))
    r.commit("edit section B")
    r.append(f"{m}/exp/experiences.jsonl", record("exp_y", "Re-ran the rows."))
    r.commit("append record Y")
    r.write(f"{m}/ocean/{NOTE_REL}", note("Disk at 74%, growing 1.2%/day.", "0.9"))
    r.commit("ocean note v2")
    r.write(f"{m}/dream/observations.md", observations(SECTION_A2, SECTION_B2, SECTION_C))
    r.commit("append section C")
    r.write(
        f"{m}/exp/experiences.jsonl",
        record("exp_x", "Reviewer 2 flags seeds.", 0.5) + record("exp_y", "Re-ran the rows."),
    )
    r.commit("edit record X confidence")
    r.move(f"{m}/ocean/{NOTE_REL}", f"{m}/ocean/{NOTE_ARCHIVED}")
    r.commit("archive the ocean note")
    r.write(f"{m}/dream/observations.md", observations(SECTION_A3, SECTION_B2, SECTION_C))
    r.commit("edit section A comment")
    r.write("README.md", b"unrelated\n")
    r.commit("unrelated file")
    return r
