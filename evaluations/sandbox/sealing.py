"""Sealed grading in the runner: a Harbor trial whose task is sealed as it loads.

In Harbor's default ("shared") mode the verifier runs in the agent's own
sandbox, after hours in which the agent was root there: a `python3` wrapper
on PATH, a swapped `/bin` or an edited scorer then decides the score. A
version with `sealed_grading` runs its trials as `SealedTrial`, whose task
config is `tasks.sealing.seal`'s: Harbor 0.26's separate verifier, with the
agent's workspace or declared artifacts carried over. This is Harbor's own
mechanism, applied to the config as loaded; the task folder is not touched.
"""
from __future__ import annotations

from harbor.trial.trial import Trial

from tasks.sealing import seal


class SealedTrial(Trial):
    """A Harbor trial whose task is sealed as it loads (`SealedTrial.create(config)`).

    `Trial.create` loads the task through `cls._load_task` and then builds a
    single- or multi-step trial from it; sealing the loaded config is the one
    change. `_load_task` is a Harbor internal: the Harbor version is pinned
    and tests/test_sealed_grading.py covers it.
    """

    @staticmethod
    async def _load_task(config):
        task, download = await Trial._load_task(config)
        task.config = seal(task.paths.task_dir, task.config).config
        return task, download
