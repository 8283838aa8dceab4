"""Regrade finished rollouts without running the agent again: the task's current verifier on their recorded outputs.

`check(rollout)` says, before anything is queued, why a rollout cannot be
regraded (still running, no task folder here, recorded outputs that do not
cover the verifier's inputs: evaluations.regrades.regrading). `request(rollouts)`
checks each, records a queued grade for each one that can be regraded
(trajectories.grades) and sends it to a worker, or runs it here with
`sync`. `run(grade_id)` is the worker's part: the rollout's recorded
`agent/` and `artifacts/` come back from the artifact storage into a fresh
folder, and Harbor's RegradeTrial runs the verifier against them in a fresh
sandbox of the rollout's backend (sealed grading's separate verifier: the
verifier's root never saw the agent), its verdict read as an import reads
it. The rollout is changed only by a done regrade, through its grade
history's writer; anything else leaves it as it was and says why.
"""
from __future__ import annotations

import asyncio
import json
import logging
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections, connection

from trajectories.models import Grade, Rollout
from trajectories import services
from trajectories.statuses import ACTIVE

from evaluations.regrades import regrading

from evaluations.running import workspace
from evaluations.running.runner import VERIFIER_IMPORT_PATH, RunnerConfigError, backend_of, environment_config, heartbeat_sec, task_path

logger = logging.getLogger(__name__)


@dataclass
class Report:
    """What a regrade request did: the grades it queued (or ran), and the rollouts it refused, with why."""

    grades: list[Grade] = field(default_factory=list)
    refused: dict[int, str] = field(default_factory=dict)  # rollout id -> why
    unsent: str = ""  # the broker was down: the grades stay queued

    def lines(self) -> list[str]:
        out = []
        for grade in self.grades:
            rollout = grade.rollout
            if grade.state == Grade.State.DONE:
                out.append(f"rollout {rollout.pk} ({rollout.trial_name}): regraded, reward {grade.reward}")
            elif grade.state == Grade.State.FAILED:
                out.append(f"rollout {rollout.pk} ({rollout.trial_name}): regrade failed, left as it was: {grade.message}")
            else:
                out.append(f"rollout {rollout.pk} ({rollout.trial_name}): regrade queued")
        for pk, why in self.refused.items():
            out.append(f"rollout {pk}: cannot be regraded, left as it was: {why}")
        if self.unsent:
            out.append(self.unsent)
        return out


def _sealed(rollout: Rollout) -> bool:
    from tasks.sealing import grades_sealed

    return grades_sealed(Path(rollout.task.source_path or ""), bool(rollout.task.version.sealed_grading))


def _recorded_files(rollout: Rollout) -> dict[str, bool]:
    return {entry["path"]: bool(entry.get("cut")) for entry in rollout.artifacts or [] if regrading.restored(entry["path"])}


def check(rollout: Rollout, verifiers: dict | None = None) -> list[str]:
    """Why `rollout` cannot be regraded now ([] when it can); `verifiers` keeps each task's verifier across a batch."""
    if rollout.status in ACTIVE:
        return [f"it is {rollout.status}: a rollout is regraded once it has ended"]
    if not rollout.is_regradable:  # ended, but by a cancel (statuses.REGRADABLE)
        return ["it was cancelled: its agent was stopped before it was done, so there is no final state to grade"]
    try:
        folder = task_path(rollout)
    except RunnerConfigError as exc:
        return [str(exc)]
    key = (str(folder), _sealed(rollout))
    verifiers = {} if verifiers is None else verifiers
    if key not in verifiers:
        verifiers[key] = regrading.current_verifier(folder, sealed=key[1])
    verifier = verifiers[key]
    files = _recorded_files(rollout)
    if verifier.problem:
        # Both, when both hold: staff should not fix the task only to learn the outputs are gone too.
        return [verifier.problem, *(regrading.coverage_problems([], None, files)[:1] if not files else [])]
    manifest = services.stored_json(rollout, regrading.MANIFEST) if regrading.MANIFEST in files else None
    if manifest is not None and not isinstance(manifest, list):
        return ["its artifacts/manifest.json is not a list of collected artifacts"]
    return regrading.coverage_problems(regrading.declared_inputs(verifier.config), manifest, files)


def request(rollouts, *, requested_by=None, backend: str = "", sync: bool = False) -> Report:
    """Regrade each rollout that can be (queued for a worker, or run here with `sync`); say why for the others."""
    from evaluations.running import dispatch

    report = Report()
    verifiers: dict = {}
    for rollout in rollouts:
        problems = check(rollout, verifiers)
        if problems:
            report.refused[rollout.pk] = "; ".join(problems)
            continue
        grade = services.start_regrade(rollout, backend=backend or backend_of(rollout), requested_by=requested_by)
        if sync:
            grade = run(grade.pk)
        elif not report.unsent:
            try:
                dispatch.send_regrade(grade)
            except dispatch.BROKER_DOWN as exc:
                report.unsent = (
                    f"the broker ({dispatch.broker_label()}) is not reachable ({type(exc).__name__}): regrades from "
                    f"grade {grade.pk} on stay queued: the reaper sends them once the broker is back, or run them "
                    "with manage.py regrade --sync"
                )
        report.grades.append(grade)
    return report


def run(grade_id: int, *, celery_task_id: str = "") -> Grade:
    """Run one queued regrade to its end (see the module docstring); the grade as it ends.

    A grade already running or ended is left as it is (a message delivered
    twice); while it runs, its heartbeat beats, so that the reaper can tell
    a regrade whose worker died (evaluations.running.reaper) and fail it.
    """
    grade = Grade.objects.select_related("rollout__task__version", "rollout__campaign").get(pk=grade_id)
    if not services.mark_regrade_running(grade, celery_task_id=celery_task_id):
        return Grade.objects.get(pk=grade_id)
    heartbeat = Heartbeat(grade.pk, heartbeat_sec())
    heartbeat.start()
    try:
        return _grade(grade)
    finally:
        heartbeat.stop()


class Heartbeat(threading.Thread):
    """Beats a running regrade's heartbeat every `interval` seconds until stopped."""

    def __init__(self, grade_id: int, interval: float):
        super().__init__(name=f"regrade-{grade_id}-heartbeat", daemon=True)
        self.grade_id, self.interval = grade_id, interval
        self._stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self._stopped.wait(self.interval):
                try:
                    services.regrade_heartbeat(self.grade_id)
                except Exception:  # noqa: BLE001  (a missed beat must not end the beating)
                    logger.exception("heartbeat of regrade %s failed", self.grade_id)
                    close_old_connections()
        finally:
            connection.close()  # this thread's own

    def stop(self) -> None:
        self._stopped.set()
        self.join(timeout=30)


def _grade(grade: Grade) -> Grade:
    rollout = grade.rollout
    problems = check(rollout)
    if problems:
        return services.record_failed_regrade(grade, "; ".join(problems))
    name = workspace.regrade_trial_name(rollout.trial_name, grade.pk)
    work = Path(settings.TRIALS_DIR) / "_regrades" / str(grade.pk)
    shutil.rmtree(work, ignore_errors=True)
    try:
        source = work / "source" / rollout.trial_name
        source.mkdir(parents=True)
        restored = services.restore_trial_files(rollout, source, regrading.restored)
        if restored.cut or restored.missing:
            why = (f"{(restored.cut + restored.missing)[0]} is not in the storage whole")
            return services.record_failed_regrade(grade, f"its recorded outputs cannot be restored: {why}")
        _restore_empty_folders(source)
        folder = task_path(rollout)
        version = regrading.verifier_version(folder)
        try:
            config = _trial_config(rollout, grade, source, work / "trials", name)
            asyncio.run(_run_trial(config, sealed=_sealed(rollout)))
        except Exception as exc:  # noqa: BLE001  (Harbor's RegradeError, a sandbox that did not start: the grade says so)
            logger.warning("regrade %s of rollout %s failed: %s", grade.pk, rollout.pk, exc)
            return services.record_failed_regrade(grade, f"{type(exc).__name__}: {exc}")
        verification = services.read_verification(work / "trials" / name)
        if verification.reward is None:
            why = verification.exception_message or verification.exception_type or "the verifier wrote no reward"
            return services.record_failed_regrade(grade, f"the verifier produced no reward: {why}")
        return services.record_regrade(grade, verification, verifier_version=version)
    finally:
        workspace.clean_trial(name, grade.backend or backend_of(rollout))
        for session in workspace.sessions_by_trial().get(name, []):
            workspace.remove_session(session)
        shutil.rmtree(work, ignore_errors=True)


def _restore_empty_folders(source: Path) -> None:
    """Folders the manifest recorded as collected are restored even when empty (the storage keeps files only)."""
    try:
        manifest = json.loads((source / regrading.MANIFEST).read_text())
    except (OSError, ValueError):
        return
    for entry in manifest if isinstance(manifest, list) else []:
        destination = str(entry.get("destination") or "") if isinstance(entry, dict) else ""
        if entry.get("type") == "directory" and entry.get("status") in ("ok", "empty") and regrading.restored(destination):
            target = (source / destination).resolve()
            if target.is_relative_to(source.resolve()):
                target.mkdir(parents=True, exist_ok=True)


def _trial_config(rollout: Rollout, grade: Grade, source: Path, trials_dir: Path, name: str):
    from harbor.models.trial.config import AgentConfig, SourceTrialConfig, TaskConfig, TrialConfig, VerifierConfig

    return TrialConfig(
        task=TaskConfig(path=task_path(rollout)),
        trials_dir=trials_dir,
        trial_name=name,
        # Never run: a regrade's agent phase is the recorded one, restored.
        agent=AgentConfig(name="nop"),
        environment=environment_config(grade.backend or backend_of(rollout)),
        verifier=VerifierConfig(import_path=VERIFIER_IMPORT_PATH),
        source_trial=SourceTrialConfig(action="regrade", type="local", path=source),
    )


async def _run_trial(config, *, sealed: bool):
    from evaluations.regrades.trial import regrade_trial

    trial = await regrade_trial(config, sealed=sealed)
    return await trial.run()


class Selection(ValueError):
    """A request names no rollout that exists (an unknown campaign, task or id)."""


def select(*, ids=(), campaign_id: int | None = None, task: str = "") -> list[Rollout]:
    """The rollouts a request names: by id, every current rollout of a campaign, or of a task (`VERSION/NAME`).

    A campaign's or task's superseded rollouts are left out (they are out of
    the figures); named ids are taken as named.
    """
    from tasks.models import Task

    from evaluations.models import Campaign

    base = Rollout.objects.select_related("task__version", "campaign").order_by("pk")
    found: dict[int, Rollout] = {}
    if ids:
        rows = {rollout.pk: rollout for rollout in base.filter(pk__in=ids)}
        missing = [str(pk) for pk in ids if pk not in rows]
        if missing:
            raise Selection(f"no rollout {', '.join(missing)}")
        found.update(rows)
    if campaign_id is not None:
        if not Campaign.objects.filter(pk=campaign_id).exists():
            raise Selection(f"no campaign {campaign_id}")
        found.update((r.pk, r) for r in base.filter(campaign_id=campaign_id, superseded=False))
    if task:
        version, sep, name = task.partition("/")
        target = Task.objects.filter(version__name=version, name=name).first() if sep else None
        if target is None:
            raise Selection(f"no task {task!r} (give it as VERSION/NAME, e.g. 1.1/hash_join)")
        found.update((r.pk, r) for r in base.filter(task=target, superseded=False))
    return [found[pk] for pk in sorted(found)]
