"""Harbor's RegradeTrial as a regrade runs it: its task sealed when the version seals grading.

Harbor checks a regrade's source against the task's verifier as it reads
task.toml on disk; a version that seals grading changes that verifier as
the task loads (evaluations.sandbox.sealing), so the check here reads the
loaded config instead (`regrading.current_verifier`). The sandbox layer
knows nothing of regrades: it lends the sealed trial and the image
originals' handler.
"""
from __future__ import annotations

from harbor.trial.regrade import RegradeError, RegradeTrial
from harbor.trial.trial import Trial

from evaluations.regrades.regrading import current_verifier
from evaluations.sandbox.sealing import SealedTrial, keep_image_originals


def _validate_against_loaded_config(trial) -> object:
    """Harbor's checks of a regrade source, with the verifier's mode read from the loaded (sealed) config.

    Harbor reads the mode from task.toml on disk, where a version that seals
    grading may say "shared"; the runner grades such a task separately, and
    so does its regrade.
    """
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
    class Regrade(RegradeTrial):
        _sealed = sealed

        def _validate_source_record(self):
            return _validate_against_loaded_config(self)

    loader = SealedTrial if sealed else Trial
    task, download = await loader._load_task(config)
    trial = Regrade(config, _task=task, _task_download_result=download, _source_trial_dir=config.source_trial.path)
    if sealed:
        keep_image_originals(trial)
    return trial
