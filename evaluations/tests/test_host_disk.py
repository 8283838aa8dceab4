"""The host's disk and files against a sandbox (issue 43): storage measured, copies bounded, the sandbox root private."""
from __future__ import annotations

import asyncio

import pytest

from evaluations.sandbox import storage
from evaluations.sandbox.staging import SharedSandboxRoot, fresh_sandbox_folder, private_root, tar_excluded

MIB = 1 << 20


def test_a_sparse_file_counts_its_length(tmp_path):
    """It takes no disk in the sandbox, and all of its length once copied out."""
    with open(tmp_path / "sparse", "wb") as handle:
        handle.truncate(300 * MIB)
    (tmp_path / "dense").write_bytes(b"x" * 4096)
    assert storage.folder_bytes(tmp_path) == 300 * MIB + 4096


def test_a_check_past_storage_mb_ends_the_sandbox_and_names_the_limit():
    ended: list[str] = []

    async def end(how: str) -> None:
        ended.append(how)

    async def measure(used: int):
        return used

    assert not asyncio.run(storage.check(256, lambda: measure(256 * MIB), end)) and ended == []
    assert asyncio.run(storage.check(256, lambda: measure(257 * MIB), end))
    assert ended == ["its files took 257 MB, more than the task's storage_mb (256 MB)"]


def test_the_sandbox_root_is_made_the_workers_alone(tmp_path):
    root = tmp_path / "sandboxes"
    root.mkdir(mode=0o755)
    fresh_sandbox_folder(root / "trial__env", "trial")
    assert root.stat().st_mode & 0o777 == 0o700
    assert (root / "trial__env").stat().st_mode & 0o777 == 0o700
    assert (root / "trial__env" / "trial").read_text() == "trial"


def test_a_shared_folder_is_refused_as_the_sandbox_root(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(SharedSandboxRoot, match="the worker's own"):
        private_root(shared)
    assert shared.stat().st_mode & 0o7777 == 0o1777


@pytest.mark.parametrize(
    "relative, patterns, excluded",
    [
        ("node_modules/a/b.js", ["node_modules"], True),
        ("src/node_modules/x", ["node_modules"], True),
        ("src/main.py", ["node_modules"], False),
        ("logs/run.log", ["*.log"], True),
        ("cache/big.bin", ["cache/*"], True),
        ("a/cache/big.bin", ["cache"], True),
        ("cachefile", ["cache"], False),
        ("x.py", [], False),
    ],
)
def test_tar_exclusions_as_gnu_tar_reads_them(relative, patterns, excluded):
    assert tar_excluded(relative, patterns) is excluded
