"""The sandbox escape of issue 12, as a task: its solution plants links to host files.

Harbor's host side (root on the worker) writes `agent/exit-code.txt`
(oracle), `agent/trajectory.json` (terminus-2) and reads
`verifier/reward.json`; a link the sandbox planted under such a name once
made those writes land on any host file. `make_escape_task` copies the tiny
task with a solution that plants every such link (files and a folder) to
victims in a host folder it never saw; `host_files` is the state that must
not change.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from evaluations.tests.sandbox_helpers import TINY_TASK

VICTIM_TEXT = "host file: must stay as it is\n"
# A reward a forged reward.json would claim: the trial must never report it.
FORGED_REWARD = 0.4242

PLANT = """
V={victims}
# Files the host side opens by name, and a folder it might write into.
ln -sf "$V/exit-code.victim" /logs/agent/exit-code.txt
ln -sf "$V/trajectory.victim" /logs/agent/trajectory.json
ln -sf "$V/reward.victim" /logs/agent/reward.json
ln -sfn "$V" /logs/agent/sessions
ln -sf "$V/manifest.victim" /logs/artifacts/manifest.json
ln -sfn "$V" /logs/artifacts/evidence
# Read-only while the agent runs on some backends; planted where it can be.
ln -sf "$V/reward.victim" /logs/verifier/reward.json 2>/dev/null || true
ln -sf "$V/stdout.victim" /logs/verifier/test-stdout.txt 2>/dev/null || true
echo planted
# A failing exit makes oracle write agent/exit-code.txt on the host.
exit 3
"""


def make_victims(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in ("exit-code", "trajectory", "manifest", "stdout"):
        (folder / f"{name}.victim").write_text(VICTIM_TEXT)
    (folder / "reward.victim").write_text(f'{{"reward": {FORGED_REWARD}}}')
    return folder


def make_escape_task(destination: Path, victims: Path) -> Path:
    """The tiny task, whose oracle solves it and then plants the links."""
    task = destination / "escape_task"
    shutil.copytree(TINY_TASK, task)
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text() + PLANT.format(victims=victims))
    return task


def host_files(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every file below `folder` (links as their target)."""
    state = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            state[str(path.relative_to(folder))] = "link:" + str(path.readlink())
        elif path.is_file():
            state[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state
