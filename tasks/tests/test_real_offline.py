"""tasks.real_offline: which real AutoLab tasks run here, and why the others do not (issue 46). No engine is asked."""
from __future__ import annotations

from pathlib import Path

from tasks.real_offline import OFFLINE_REAL_TASKS, RealTaskChoice, runnable_here, whole_task_dirs


def task(root: Path, name: str, whole: bool = True) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text('version = "1.1"\n')
    if whole:
        (folder / "environment").mkdir()
    return folder


def test_the_choice_is_four_deterministic_cpu_tasks():
    assert sorted(OFFLINE_REAL_TASKS) == ["discover_sorting", "fredkin_sort_network", "safety_router", "vliw_scheduler"]


def test_whole_directories_only(tmp_path):
    assert whole_task_dirs(tmp_path / "absent").why_none == f"AutoLab v1.1's task directories are not at {tmp_path / 'absent'}"
    a = task(tmp_path, "a")
    task(tmp_path, "b", whole=False)  # task.toml and instruction only: nothing to build
    choice = whole_task_dirs(tmp_path, ("a", "b", "c"))
    assert choice == RealTaskChoice((a,), (f"b, c: not found whole under {tmp_path}",))
    assert choice.why_none == ""


def test_an_engine_that_cannot_run_here_runs_none_and_says_why_once(tmp_path):
    choice = RealTaskChoice((task(tmp_path, "a"), task(tmp_path, "b")))
    asked = []
    none = runnable_here(choice, "podman", ["podman is not installed"], lambda folder: asked.append(folder) or [])
    assert none == RealTaskChoice((), ("podman cannot run here (podman is not installed)",))
    assert none.why_none == "podman cannot run here (podman is not installed)"
    assert asked == []  # no task is looked at


def test_each_task_the_engine_cannot_build_is_named_with_its_first_reason(tmp_path):
    a, b = task(tmp_path, "a"), task(tmp_path, "b")
    missing = "ubuntu:22.04 is mapped to localhost/autolab-standin-ubuntu:bookworm, which is not in podman's store"
    problems = {a: [missing, "a second reason"], b: []}
    some = runnable_here(RealTaskChoice((a, b), ("c: not found whole",)), "podman", [], problems.__getitem__)
    assert some == RealTaskChoice((b,), ("c: not found whole", f"podman cannot build a here ({missing})"))
    alone = runnable_here(RealTaskChoice((a,)), "podman", [], problems.__getitem__)
    assert alone.why_none == f"podman cannot build a here ({missing})"
    none = runnable_here(RealTaskChoice((a,), ("c: not found whole",)), "podman", [], problems.__getitem__)
    assert none.why_none == "c: not found whole (and 1 more reason)"
