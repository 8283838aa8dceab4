"""The scoring tool's calls, answered from outside the sandbox while the agent runs.

A best-of-log task's scoring tool appends a line to
`tasks.score_record.REQUESTS_FILE` at each call. Its host side is a file of
the sandbox's staging folder; every POLL_SEC this reads how many lines were
added (never what they say), copies the task's `[scoring] snapshot` paths
out of the sandbox with the environment's own link-refusing downloads, and
records the calls in a `ScoreRecord` kept in the trial folder, which no
sandbox sees. Before grading the record is put where Harbor carries it to
the sealed verifier (`RECORD_DIR`), replacing whatever the agent left
there. See tasks/score_record.py for why.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path, PurePosixPath

from harbor.models.task.artifacts import ARTIFACT_MANIFEST_FILENAME
from harbor.models.task.config import ArtifactConfig
from harbor.trial.artifact_handler import artifact_host_path

from tasks.score_record import RECORD_DIR, REQUESTS_FILE, ScoreRecord

logger = logging.getLogger(__name__)

POLL_SEC = 0.5
# The most of the requests file read at one poll: the lines are counted, not kept.
READ_LIMIT = 1 << 20


class RequestLines:
    """Lines added to a host file since the last look, read without following links or blocking on a FIFO."""

    def __init__(self, path: Path | None):
        self.path = path
        self.offset = 0

    def added(self) -> int:
        if self.path is None:
            return 0
        try:
            descriptor = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return 0
        try:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode):
                return 0
            if info.st_size < self.offset:  # emptied or rewritten: count afresh
                self.offset = 0
            os.lseek(descriptor, self.offset, os.SEEK_SET)
            data = os.read(descriptor, READ_LIMIT)
        except OSError:
            return 0
        finally:
            os.close(descriptor)
        # Only whole lines count; a line still being written is counted at the next look.
        complete = data.rfind(b"\n") + 1
        self.offset += complete
        return data.count(b"\n", 0, complete)


class ScoreRequests:
    """Snapshots for the scoring tool's calls during one agent run (start, then finish, then publish)."""

    def __init__(self, environment, paths: list[str], record_dir: Path, poll_sec: float = POLL_SEC):
        self.environment = environment
        self.paths = paths
        self.record = ScoreRecord(record_dir)
        staged_file = getattr(environment, "staged_file", None)
        self.requests = RequestLines(staged_file(REQUESTS_FILE) if staged_file else None)
        self.poll_sec = poll_sec
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._watch())

    async def finish(self) -> None:
        """Stop watching, after answering the calls made until now."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        try:
            await self.poll()
        except Exception:  # noqa: BLE001  (grading goes on with the calls recorded so far)
            logger.exception("score log: the last snapshot failed")
        if self.record.refused:
            logger.warning("score log: %d calls of the scoring tool past the record's limits were not recorded",
                           self.record.refused)

    def publish(self, artifacts_dir: Path) -> None:
        """The record among the trial's artifacts, where Harbor takes what it carries to the verifier.

        It replaces what Harbor collected at RECORD_DIR from the sandbox (usually nothing: its manifest
        then says "failed"), and the manifest says it was collected, so that a regrade carries it too.
        """
        self.record.publish(artifact_host_path(artifacts_dir, ArtifactConfig(source=RECORD_DIR)))
        _mark_collected(artifacts_dir / ARTIFACT_MANIFEST_FILENAME)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.poll_sec)
            try:
                await self.poll()
            except Exception:  # noqa: BLE001  (a failed copy is no reason to stop answering later calls)
                logger.exception("score log: a snapshot failed")

    async def poll(self) -> None:
        calls = self.requests.added()
        if not calls:
            return
        at = time.time()
        fetched = Path(tempfile.mkdtemp(prefix=".snapshot-", dir=self.record.folder))
        try:
            for path in self.paths:
                await self._fetch(path, fetched / PurePosixPath(path).relative_to("/"))
            self.record.add(at, fetched, calls)
        finally:
            shutil.rmtree(fetched, ignore_errors=True)

    async def _fetch(self, path: str, target: Path) -> None:
        """One snapshot path, copied out as the environment copies anything out (regular files, no links)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if await self.environment.is_dir(path, user="root"):
                await self.environment.download_dir(path, target)
            else:
                await self.environment.download_file(path, target)
        except (FileNotFoundError, RuntimeError, OSError) as error:
            # What is missing at a call is missing from its snapshot: the verifier finds nothing to score there.
            logger.info("score log: %s not copied: %s", path, error)


def _mark_collected(manifest: Path) -> None:
    """Harbor's artifact manifest, with RECORD_DIR's entry saying "ok" (a folder), as the record now is."""
    try:
        entries = json.loads(manifest.read_text())
    except (OSError, ValueError):
        entries = []
    if not isinstance(entries, list):
        entries = []
    entry = {"source": RECORD_DIR, "destination": f"artifacts{RECORD_DIR}", "type": "directory", "status": "ok",
             "service": None, "exclude": []}
    entries = [e for e in entries if not (isinstance(e, dict) and e.get("source") == RECORD_DIR)] + [entry]
    manifest.parent.mkdir(parents=True, exist_ok=True)
    temporary = manifest.with_name(f".{manifest.name}.tmp")
    temporary.write_text(json.dumps(entries, indent=2))
    os.replace(temporary, manifest)
