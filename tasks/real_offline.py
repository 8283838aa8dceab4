"""The real AutoLab v1.1 tasks that run offline here: one choice, read by CI's real-task tests and by the demo.

Four CPU tasks of AutoLab v1.1 (../shared/autolab-v1.1/tasks, whole and
unchanged) whose images build from the project's stand-ins
(scripts/standins/mirrors.txt) with no registry, and whose verifiers are
deterministic: a count of comparators, cycles and gates, and the
parameters of a model its verifier trains with fixed seeds. A rollout's
reward on them is an exact fact of the task. Timed tasks are not among
them: agent_tool_routing's reference scored 0.28 alone and 0 beside three
other trials on two cores, and adaptive_compression's predictor learns for
a fixed time (its metric differed between engines).

Django-free: the caller asks the engine (evaluations.sandbox.backends) and
passes its answers in.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

OFFLINE_REAL_TASKS = ("discover_sorting", "vliw_scheduler", "fredkin_sort_network", "safety_router")
# Where ../shared keeps AutoLab v1.1's task directories, whole (task.toml, environment/, tests/, solution/).
WHOLE_TASKS_FOLDER = Path("autolab-v1.1") / "tasks"


@dataclass(frozen=True)
class RealTaskChoice:
    """The task directories that run here, and one reason for each of the chosen that does not."""

    runnable: tuple[Path, ...] = ()
    reasons: tuple[str, ...] = ()

    @property
    def why_none(self) -> str:
        """Why nothing runs here ("" when something does): the first reason, and how many more there are."""
        if self.runnable or not self.reasons:
            return ""
        more = len(self.reasons) - 1
        return self.reasons[0] + (f" (and {more} more reason{'s' if more > 1 else ''})" if more else "")


def whole_task_dirs(root: Path, names: Iterable[str] = OFFLINE_REAL_TASKS) -> RealTaskChoice:
    """The named tasks' whole directories under `root` (an environment to build, tests to grade with)."""
    if not root.is_dir():
        return RealTaskChoice(reasons=(f"AutoLab v1.1's task directories are not at {root}",))
    found, missing = [], []
    for name in names:
        folder = root / name
        (found if (folder / "task.toml").is_file() and (folder / "environment").is_dir() else missing).append(folder)
    reasons = (f"{', '.join(f.name for f in missing)}: not found whole under {root}",) if missing else ()
    return RealTaskChoice(tuple(found), reasons)


def runnable_here(
    choice: RealTaskChoice, engine: str, host_problems: list[str], task_problems: Callable[[Path], list[str]]
) -> RealTaskChoice:
    """Those of `choice` the engine can build and run here: none when the engine cannot run at all.

    `host_problems` is the engine's answer for this host, `task_problems`
    its check of one task (a base image neither present nor mapped, a
    stand-in not built, a package its archive lacks); each task it refuses
    is named with its first reason.
    """
    if host_problems:
        return RealTaskChoice(reasons=(f"{engine} cannot run here ({'; '.join(host_problems)})",))
    runnable, reasons = [], list(choice.reasons)
    for folder in choice.runnable:
        problems = task_problems(folder)
        if problems:
            reasons.append(f"{engine} cannot build {folder.name} here ({problems[0]})")
        else:
            runnable.append(folder)
    return RealTaskChoice(tuple(runnable), tuple(reasons))
