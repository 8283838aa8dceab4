"""Shared by the sandbox and runner tests: the tiny task and skip reasons."""
from __future__ import annotations

from pathlib import Path

import pytest

TASKS = Path(__file__).resolve().parent / "tasks"
TINY_TASK = TASKS / "tiny_sum"


def require_sandbox() -> None:
    from evaluations.sandbox.bubblewrap import host_problems

    problems = host_problems()
    if problems:
        pytest.skip("bubblewrap sandbox unavailable: " + "; ".join(problems))


def check_copy_out_stops_at_storage(env, tmp_path: Path) -> None:
    """Issue 43: a copy out of a sandbox stops at the task's storage_mb (256 MB) before it lands on the host.

    `env` (any backend, the tiny task, its watchdog slowed down) gets 1.25
    GiB of sparse files, each under a file-size limit: no disk in the
    sandbox, 1.25 GiB once copied. A small
    file copies; the folder with the sparse file is refused whole, the
    host never holding more than the limit meanwhile, and the sandbox is
    the agent's (its stop says so again, for Harbor's swallowed errors).
    """
    import asyncio

    from evaluations.sandbox.errors import SandboxEndedByAgentError
    from evaluations.tests.hostile import HostWatch

    target = tmp_path / "copied"
    watch = HostWatch([tmp_path], peak_of=str(tmp_path), poll_sec=0.05)

    async def scenario() -> None:
        await env.start(force_build=False)
        try:
            await env.exec("mkdir -p /app/out && echo fine > /app/out/small && for i in 1 2 3 4 5; do truncate -s 255M /app/out/big.$i; done")
            await env.download_file("/app/out/small", target / "small.txt")
            watch.start()
            try:
                with pytest.raises(SandboxEndedByAgentError, match=r"storage_mb \(256 MB\)"):
                    await env.download_dir("/app/out", target / "out")
            finally:
                watch.stop()
        finally:
            with pytest.raises(SandboxEndedByAgentError, match=r"storage_mb \(256 MB\)"):
                await env.stop(delete=True)

    asyncio.run(scenario())
    assert (target / "small.txt").read_text() == "fine\n"
    assert [path.name for path in (target / "out").iterdir()] == []
    assert watch.peak < 300 << 20, f"the host held {watch.peak >> 20} MB"
