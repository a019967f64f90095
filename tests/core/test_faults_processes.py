"""Real processes: the CLI killed with SIGKILL mid-action, and two writers on one vault.

- SIGKILL sweep: the real CLI (`memlens.tui.cli.main:main`) runs in a subprocess
  with the fault layer (tests/core/faultlayer.py) in "sigkill" mode, which
  sends itself SIGKILL at fault point k.  A fresh CLI process then opens the
  vault (`memlens recover`), and the vault must be byte for byte its before
  state (not committed) or its after state (committed, and undo restores
  every byte).  Bounded: a few points per action, spread over the action.
- Two processes each apply 100 actions to one vault at the same time; every
  journaled action must then undo, latest first, back to the start.

How to rerun: .venv/bin/python -m pytest tests/core/test_faults_processes.py -q -n 2
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import memlens.core
from memlens.core.scan.vault import open_catalog
from memlens.core.write.journal import read_journal
from memlens.core.write.undo import undo_last

HERE = Path(__file__).parent
DEMO = Path(memlens.core.__file__).parent / "demo_vaults"

#: Installs the fault layer, then runs the CLI; argv: root mode k count-file cli-args...
RUNNER = textwrap.dedent(
    """
    import atexit, importlib.util, os, sys
    spec = importlib.util.spec_from_file_location("faultlayer", sys.argv[1])
    fl = importlib.util.module_from_spec(spec); spec.loader.exec_module(fl)
    root, mode, k, count_file = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    os.fsync = lambda fd: None  # a kill keeps the page cache: durability is not measured
    layer = fl.FaultLayer(root, mode, k).install()
    atexit.register(lambda: open(count_file, "w").write(str(layer.count)))
    sys.argv = ["memlens", *sys.argv[6:]]
    from memlens.tui.cli.main import main
    main()
    """
)

#: A fresh CLI process.
OPEN = "import sys; from memlens.tui.cli.main import main; sys.argv[0] = 'memlens'; main()"

#: (format, CLI arguments after the vault path is substituted for {root}).
CLI_CASES: list[tuple[str, list[str]]] = [
    ("dream-cycle", ["archive", "{root}", "{dream}"]),
    ("observation-v1", ["pin", "{root}", "obs-101"]),
    ("project-ocean", ["decay", "{root}", "--apply", "--as-of", "2027-06-01"]),
    ("cognitive-memory", ["set", "{root}", "{cognitive}", "importance=0.25"]),
    ("experience-records", ["archive", "{root}", "{er}"]),
]
POINTS_PER_CASE = 4


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != ".memlens"
    }


def _ids(root: Path, fmt: str) -> dict[str, str]:
    live = sorted(
        (m for m in open_catalog(root).memories() if not m.archived and not m.pinned),
        key=lambda m: m.id,
    )
    return {fmt.split("-")[0]: live[0].id}


def _run(
    root: Path, mode: str, k: int, args: list[str], tmp: Path
) -> tuple[subprocess.CompletedProcess[str], int]:
    count_file = tmp / "count"
    count_file.unlink(missing_ok=True)
    cmd = [sys.executable, "-c", RUNNER, str(HERE / "faultlayer.py"), str(root), mode, str(k)]
    proc = subprocess.run(
        [*cmd, str(count_file), *args], capture_output=True, text=True, timeout=120, check=False
    )
    count = int(count_file.read_text()) if count_file.exists() else -1
    return proc, count


@pytest.mark.parametrize(("fmt", "argv"), CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_sigkill_sweep_through_the_cli(fmt: str, argv: list[str], tmp_path: Path) -> None:
    template = tmp_path / "template"
    shutil.copytree(DEMO / fmt, template)
    ids = _ids(template, fmt)
    fill = {"root": "", "dream": ids.get("dream", ""), "cognitive": ids.get("cognitive", "")}
    fill["er"] = ids.get("experience", "")
    before = _tree(template)

    clean = tmp_path / "clean"
    shutil.copytree(template, clean)
    proc, points = _run(
        clean, "count", -1, [a.format(**{**fill, "root": clean}) for a in argv], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    after = _tree(clean)
    assert after != before and points > 0
    step = max(1, points // POINTS_PER_CASE)
    killed = survived = 0
    for k in range(step // 2, points, step):
        root = tmp_path / f"k{k}"
        shutil.copytree(template, root)
        proc, _ = _run(
            root, "sigkill", k, [a.format(**{**fill, "root": root}) for a in argv], tmp_path
        )
        assert proc.returncode == -signal.SIGKILL, (k, proc.returncode, proc.stderr)
        killed += 1
        fresh = subprocess.run(
            [sys.executable, "-c", OPEN, "recover", str(root), "--json"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert fresh.returncode == 0, fresh.stderr
        assert json.loads(fresh.stdout)[0]["conflicts"] == []
        state = _tree(root)
        assert state in (before, after), f"{fmt} killed at point {k}: neither before nor after"
        if state == after:
            undo_last(root)
            assert _tree(root) == before
        assert not list(root.rglob(".memlens-tmp-*"))
        survived += 1
    print(json.dumps({"case": fmt, "points": points, "killed": killed, "survived": survived}))
    assert killed == survived > 0


WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memlens.core.actions import Action
    from memlens.core.errors import MemlensError
    from memlens.core.scan.vault import open_catalog
    root, mem_id, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    done = 0
    cycle = [("pin", {}), ("unpin", {}), ("set", {"changes": {"confidence": 0.5}}),
             ("set", {"changes": {"confidence": 0.75}}), ("archive", {"as_of": "2026-11-22"}),
             ("restore", {})]
    for i in range(rounds):
        name, params = cycle[i % len(cycle)]
        try:
            Action(name, open_catalog(root).get(mem_id), params).apply()
            done += 1
        except MemlensError as exc:
            print("refused", name, exc, file=sys.stderr)
    print(done)
    """
)


def test_two_processes_on_one_vault_lose_no_journal_entry(tmp_path: Path) -> None:
    root = tmp_path / "project-ocean"
    shutil.copytree(DEMO / "project-ocean", root)
    start = _tree(root)
    live = sorted(
        (m for m in open_catalog(root).memories() if not m.archived and not m.pinned),
        key=lambda m: m.id,
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root), m.id, "100"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for m in live[:2]
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outputs]
    applied = sum(int(out.strip().splitlines()[-1]) for out, _err in outputs)
    journal = [e for e in read_journal(root) if e.get("action") != "undo"]
    assert applied == 200, [err[-2000:] for _out, err in outputs]
    assert len(journal) == applied  # no entry lost to the other writer
    for _ in range(applied):
        undo_last(root)
    assert _tree(root) == start
