"""The runner's side of the scoring tool's calls: lines counted on the host, never what they say."""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from evaluations.running.score_requests import RequestLines, ScoreRequests


def test_lines_are_counted_whole_once_each(tmp_path):
    path = tmp_path / "score_requests.jsonl"
    lines = RequestLines(path)
    assert lines.added() == 0  # not there yet
    path.write_text('{"at": 1}\n{"raw": 1e-300}\n')
    assert lines.added() == 2
    assert lines.added() == 0
    with path.open("a") as handle:
        handle.write("anything\npartial")
    assert lines.added() == 1  # the unfinished line waits for its newline
    with path.open("a") as handle:
        handle.write(" line\n")
    assert lines.added() == 1
    path.write_text("rewritten\n")  # shorter than what was read: counted afresh
    assert lines.added() == 1


def test_a_link_or_a_fifo_is_no_request(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("a\nb\nc\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert RequestLines(link).added() == 0
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    assert RequestLines(fifo).added() == 0  # and it did not block


class HostFolderEnvironment:
    """An environment whose sandbox is a host folder: what the runner needs of one (its files, its staging)."""

    def __init__(self, root: Path):
        self.root = root

    def staged_file(self, sandbox_path: str) -> Path:
        return self.root / sandbox_path.lstrip("/")

    async def is_dir(self, path: str, user=None) -> bool:
        return (self.root / path.lstrip("/")).is_dir()

    async def download_file(self, source_path: str, target_path: Path) -> None:
        source = self.root / source_path.lstrip("/")
        if not source.is_file():
            raise FileNotFoundError(source_path)
        Path(target_path).write_bytes(source.read_bytes())

    async def download_dir(self, source_dir: str, target_dir: Path) -> None:
        raise AssertionError("no folder is named here")


def test_each_call_gets_a_snapshot_of_the_work_as_it_was(tmp_path):
    sandbox = tmp_path / "sandbox"
    (sandbox / "app").mkdir(parents=True)
    (sandbox / "logs" / "agent").mkdir(parents=True)
    requests = sandbox / "logs" / "agent" / "score_requests.jsonl"

    async def scenario():
        answered = ScoreRequests(HostFolderEnvironment(sandbox), ["/app/solve.py", "/app/missing.py"], tmp_path / "record")
        (sandbox / "app" / "solve.py").write_text("version 1")
        requests.write_text("call\n")
        await answered.poll()
        (sandbox / "app" / "solve.py").write_text("version 2")
        await answered.poll()  # no call since: no snapshot
        with requests.open("a") as handle:
            handle.write("call\ncall\n")
        await answered.finish()
        return answered

    answered = asyncio.run(scenario())
    log = [json.loads(line) for line in (tmp_path / "record" / "log.jsonl").read_text().splitlines()]
    assert [entry["snapshot"] for entry in log] == ["s0001", "s0002", "s0002"]
    assert (tmp_path / "record" / "s0001" / "app" / "solve.py").read_text() == "version 1"
    assert (tmp_path / "record" / "s0002" / "app" / "solve.py").read_text() == "version 2"
    assert not (tmp_path / "record" / "s0001" / "app" / "missing.py").exists()
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    # Harbor's manifest after collecting from a sandbox that had no /logs/scoring.
    (artifacts / "manifest.json").write_text(json.dumps([
        {"source": "/app", "destination": "artifacts/app", "type": "directory", "status": "ok", "service": None},
        {"source": "/logs/scoring", "destination": "artifacts/logs/scoring", "type": "file", "status": "failed",
         "service": None},
    ]))
    answered.publish(artifacts)
    assert (artifacts / "logs" / "scoring" / "log.jsonl").read_text().count("\n") == 3
    manifest = json.loads((artifacts / "manifest.json").read_text())
    assert [(e["source"], e["status"], e["type"]) for e in manifest] == [
        ("/app", "ok", "directory"), ("/logs/scoring", "ok", "directory")]
