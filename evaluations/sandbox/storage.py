"""A sandbox's disk use against its task's `storage_mb`, watched while the agent runs.

Neither rootful podman on overlay without project quotas nor the
bubblewrap sandbox can cap a sandbox's disk, so a watchdog measures it
every few seconds and, past the limit, ends the sandbox with the cause
(SandboxEndedByAgentError: the agent's doing). Django-free.
"""
from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

MIB = 1 << 20
POLL_SEC = 5.0


def folder_bytes(folder: Path) -> int:
    """Bytes of the regular files below `folder`, links not followed (a sandbox's files, read from the host)."""
    total = 0
    stack = [str(folder)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
    return total


def over_limit(used: int, storage_mb: int) -> str:
    """How the agent went past its storage, or "" when it did not."""
    if used <= storage_mb * MIB:
        return ""
    return f"its files took {used // MIB} MB, more than the task's storage_mb ({storage_mb} MB)"


async def watch(storage_mb: int, measure: Callable[[], Awaitable[int]], end: Callable[[str], Awaitable[None]],
                poll_sec: float = POLL_SEC) -> None:
    """Measure every `poll_sec`; past `storage_mb`, `end(how)` and stop. Cancel it to stop watching."""
    while True:
        await asyncio.sleep(poll_sec)
        try:
            used = await measure()
        except Exception:  # noqa: BLE001  (a failed measurement is no verdict; try again)
            continue
        how = over_limit(used, storage_mb)
        if how:
            await end(how)
            return
