"""Store Inspect AI logs as rollouts, beside the Harbor trial import (trajectories.storing.ingest).

Each sample of a log is a rollout stored by the same code as a trial
(`ingest._store`): the same step analysis, failure classification, anchors
and search words. A log is read whole first (trajectories.reading.inspect_log) and
stored in one transaction, so a damaged log fails alone and leaves nothing
behind; a sample whose content is unchanged is left alone, so importing a
log again changes nothing.
"""
from __future__ import annotations

import logging
from pathlib import Path

from django.db import DatabaseError, transaction

from agents import services as agents
from tasks import services as tasks

from trajectories.storing.ingest import CREATED, UNCHANGED, UPDATED, IngestError, TrialOutcome, describe, _rollouts, _store
from trajectories.reading.inspect_log import InspectLogError, is_human_run, read_log

logger = logging.getLogger(__name__)


class _Rollback(Exception):
    """Undo a log's transaction after one of its samples failed."""


def _same_version(existing, version: str | None) -> None:
    """A sample is one rollout: imported again into another version it would stay in its first, so refuse."""
    if existing is None or not version or existing.task.version.name == version:
        return
    raise IngestError(
        f"already imported into version {existing.task.version.name} as rollout {existing.pk}; "
        f"a sample belongs to one version (delete that rollout first to import it into {version})"
    )


def import_inspect_log(
    path: Path | str, *, version: str | None = None, human_cohort: str = "", scorer: str | None = None
) -> list[TrialOutcome]:
    """One outcome per sample, or a single failed outcome for the whole log (nothing stored then).

    `human_cohort` imports the samples as attempts of that human cohort; a
    log run by Inspect's human agent is one too, of the cohort "Human
    baseline" when none is named.
    """
    path = Path(path)
    try:
        folders = read_log(path, scorer=scorer)
    except InspectLogError as error:
        return [TrialOutcome(path=str(path), error=str(error))]
    outcomes: list[TrialOutcome] = []
    lookups: dict = {}
    try:
        with transaction.atomic():
            for folder in folders:
                outcome = TrialOutcome(path=f"{path}#{folder.config['inspect']['sample_id']}", trial_name=folder.trial_name)
                try:
                    if human_cohort or is_human_run(folder):
                        model, harness = agents.ensure_human_cohort(human_cohort or "Human baseline")
                        lookups[("agent", folder.model_name, folder.model_provider, folder.agent_name, folder.agent_version)] = (model, harness)
                    existing = _rollouts().filter(trial_name=folder.trial_name).first()
                    _same_version(existing, version)
                    if existing is not None and existing.checksum == folder.checksum:
                        outcomes.append(describe(outcome, existing, UNCHANGED))
                        continue
                    stored, created = _store(folder, existing, version=version, runner_rollout=False,
                                             source=str(path), lookups=lookups)
                    outcomes.append(describe(outcome, stored, CREATED if created else UPDATED))
                except (IngestError, tasks.TaskNotFound, ValueError, DatabaseError) as error:
                    outcome.error = f"{path}: sample {folder.config['inspect']['sample_id']}: {error}"
                    outcomes.append(outcome)
                    raise _Rollback from error
    except _Rollback:
        failed = next(o for o in outcomes if o.error)
        return [TrialOutcome(path=str(path), error=f"{failed.error} (nothing of this log was imported)")]
    return outcomes
