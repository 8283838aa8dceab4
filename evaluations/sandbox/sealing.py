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


def _validate_against_loaded_config(trial) -> object:
    """Harbor's checks of a regrade source, with the verifier's mode read from the loaded (sealed) config.

    Harbor reads the mode from task.toml on disk, where a version that seals
    grading may say "shared"; the runner grades such a task separately, and
    so does its regrade.
    """
    from harbor.trial.regrade import RegradeError

    from evaluations.regrades.regrading import current_verifier

    source = trial._source_result
    if source is None:
        raise RegradeError(f"Source trial '{trial._source_paths.trial_dir.name}' has no readable result.json")
    if trial.config.verifier.disable:
        raise RegradeError("Regrade with verification disabled does nothing.")
    problem = current_verifier(trial.task.task_dir, sealed=trial._sealed).problem
    if problem:
        raise RegradeError(problem)
    if source.task_name != trial.task.name:
        raise RegradeError(f"Task name mismatch: the recorded trial ran {source.task_name!r}, the task is {trial.task.name!r}")
    return source


async def regrade_trial(config, *, sealed: bool):
    """Harbor's RegradeTrial for `config` (whose source_trial is a local trial folder), its task sealed when `sealed`.

    `Trial.create` picks Harbor's own RegradeTrial class; this builds the
    same from the (sealed) loaded task, with the one check above changed.
    """
    from harbor.trial.regrade import RegradeTrial

    class Regrade(RegradeTrial):
        _sealed = sealed

        def _validate_source_record(self):
            return _validate_against_loaded_config(self)

    loader = SealedTrial if sealed else Trial
    task, download = await loader._load_task(config)
    return Regrade(config, _task=task, _task_download_result=download, _source_trial_dir=config.source_trial.path)
