"""A sandbox's disk use against its task's `storage_mb`, watched in every phase.

Neither the container engines on overlay without project quotas nor the
bubblewrap sandbox can cap a sandbox's disk, so a watchdog measures it
every few seconds from the sandbox's start to its stop (the agent's phase
and grading, where the graded code runs), once more when the agent's phase
ends, and, past the limit, ends the sandbox with the cause
(SandboxEndedByAgentError: the agent's doing). Between two looks a sandbox
can write what the disk takes in `POLL_SEC`; copies out stop at the limit
as they are read (staging.py). Django-free.
"""
from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

MIB = 1 << 20
POLL_SEC = 5.0


def folder_bytes(folder: Path) -> int:
    """Bytes of the regular files below `folder`, links not followed (a sandbox's files, read from the host).

    A file counts its length or its blocks, whichever is more: a sparse
    file takes no disk in the sandbox but its full length once copied out
    (and the container engines count lengths too).
    """
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
                    info = entry.stat(follow_symlinks=False)
                    total += max(info.st_size, info.st_blocks * 512)
            except OSError:
                continue
    return total


def over_limit(used: int, storage_mb: int) -> str:
    """How the agent went past its storage, or "" when it did not."""
    if used <= storage_mb * MIB:
        return ""
    return f"its files took {used // MIB} MB, more than the task's storage_mb ({storage_mb} MB)"


async def check(storage_mb: int, measure: Callable[[], Awaitable[int]], end: Callable[[str], Awaitable[None]]) -> bool:
    """Measure once; past `storage_mb`, `end(how)` and True. A failed measurement is no verdict."""
    try:
        used = await measure()
    except Exception:  # noqa: BLE001
        return False
    how = over_limit(used, storage_mb)
    if how:
        await end(how)
    return bool(how)


async def watch(storage_mb: int, measure: Callable[[], Awaitable[int]], end: Callable[[str], Awaitable[None]],
                poll_sec: float = POLL_SEC) -> None:
    """Measure every `poll_sec`; past `storage_mb`, `end(how)` and stop. Cancel it to stop watching."""
    while True:
        await asyncio.sleep(poll_sec)
        if await check(storage_mb, measure, end):
            return


def copy_out_too_big(storage_mb: int | None, default_limit: int) -> str:
    """How a sandbox's files were too big to copy out to the host."""
    if storage_mb:
        return f"its files to copy out came to more than the task's storage_mb ({storage_mb} MB)"
    return f"its files to copy out came to more than {default_limit // MIB} MB"
