"""Run one rollout as a Harbor trial, streaming its steps into the site.

`run_rollout(rollout_id)` is what a Celery worker calls (and what the demo
calls synchronously). It claims the Rollout row, builds a TrialConfig from
the rollout's campaign (agent from the harness, litellm settings from the
model, environment from the campaign's backend, our tolerant verifier), runs
the trial with `asyncio.run(trial.run())`, and meanwhile a watcher thread
beats the heartbeat, honours cancel requests and imports the growing
`agent/trajectory.json` every couple of seconds. At the end the trial folder
is imported once more with the same importer, so live and final agree.

Every status change goes through `lifecycle`; this module only decides
which: infrastructure failures (the sandbox did not start, the provider
answered 5xx) are retried with backoff up to a limit, and anything the agent
did is a result and never retried. Sending a retry's message is the
caller's (tasks.py, or the synchronous loop in campaigns.py).
"""
from __future__ import annotations

import asyncio
import logging
import os
import shutil
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from autolab_site.safe_files import read_tail
from tasks.sealing import CannotSeal, grades_sealed, seal_task_dir
from trajectories import provenance, statuses
from trajectories.models import Rollout, RolloutStatus
from trajectories.services import classify, exception_family
from trajectories.verdict import Decision, Fault, fault_of_decision, runner_decision

from evaluations.running import lifecycle, workspace
from evaluations.running.stub_llm import StubPortTaken, ensure_stub_server
from evaluations.sandbox import backends

logger = logging.getLogger(__name__)

VERIFIER_IMPORT_PATH = "evaluations.running.verifier:TolerantVerifier"
# Harbor agents that run no model.
MODEL_FREE_AGENTS = {"oracle", "nop"}
# terminus-2 takes these sampling settings as its own arguments; everything
# else in AgentModel.sampling_params goes to litellm's completion call.
TERMINUS_ARGUMENTS = {"temperature", "reasoning_effort", "max_thinking_tokens", "max_turns", "model_info"}

RETRY = "retry"
SKIPPED = "skipped"
# How much of a running trial's log its page shows.
LOG_TAIL_BYTES = 64 * 1024


class RunnerConfigError(RuntimeError):
    """The rollout cannot be run as configured (not an agent failure)."""


@dataclass
class RunOutcome:
    status: str  # a RolloutStatus, RETRY or SKIPPED
    detail: str = ""
    retry_in: float = 0.0


def heartbeat_sec() -> float:
    return float(getattr(settings, "RUNNER_HEARTBEAT_SEC", 2.0))


def retry_backoff_sec(attempt: int) -> float:
    """Exponential backoff between infrastructure retries."""
    base = float(getattr(settings, "RUNNER_RETRY_BACKOFF_SEC", 30.0))
    return base * (2 ** max(attempt - 1, 0))


def classify_failure(exception_type: str, message: str = "", *, agent_started: bool) -> str:
    """What the runner does with a trial's exception (a `trajectories.verdict.Decision`), by its exception family."""
    return runner_decision(exception_family(exception_type, message), exception_type, agent_started=agent_started)


# -- TrialConfig -----------------------------------------------------------------


def agent_config(rollout: Rollout):
    from harbor.models.trial.config import AgentConfig

    harness, model = rollout.harness, rollout.model
    params: dict[str, Any] = dict(harness.params or {})
    fields: dict[str, Any] = {}
    if harness.import_path:
        fields["import_path"] = harness.import_path
    else:
        fields["name"] = harness.name
    if harness.name not in MODEL_FREE_AGENTS:
        fields["model_name"] = model.litellm_model or model.name
        if model.api_base:
            fields["base_url"] = model.api_base
        if model.api_key_env:
            # Harbor reads the key from the worker's environment by this
            # name; the key itself never enters the config or the sandbox.
            fields["model_api_key_name"] = model.api_key_env
        sampling = dict(model.sampling_params or {})
        if harness.name.startswith("terminus"):
            params.setdefault("record_terminal_session", False)
            call_kwargs = dict(params.get("llm_call_kwargs") or {})
            for key, value in sampling.items():
                if key in TERMINUS_ARGUMENTS:
                    params.setdefault(key, value)
                else:
                    call_kwargs.setdefault(key, value)
            if call_kwargs:
                params["llm_call_kwargs"] = call_kwargs
        else:
            for key, value in sampling.items():
                params.setdefault(key, value)
    return AgentConfig(**fields, kwargs=params)


def environment_config(backend: str):
    return _backend(backend).environment(workspace.sandbox_root())


def _backend(name: str) -> backends.SandboxBackend:
    try:
        return backends.get(name)
    except backends.UnknownBackend as exc:
        raise RunnerConfigError(str(exc.args[0])) from None


def task_path(rollout: Rollout) -> Path:
    path = Path(rollout.task.source_path or "")
    if not rollout.task.source_path or not (path / "task.toml").is_file():
        raise RunnerConfigError(
            f"task {rollout.task.name} has no task folder on this worker ({rollout.task.source_path or 'no source path'})"
        )
    return path


def backend_of(rollout: Rollout) -> str:
    return rollout.campaign.backend if rollout.campaign_id else "bubblewrap"


@dataclass(frozen=True)
class TrialPlan:
    """What a rollout's trial needs, found once before it runs: its task folder, sandbox backend and grading."""

    task_dir: Path
    backend: backends.SandboxBackend
    sealed: bool  # graded sealed: its version seals grading, or its task keeps a score record


def plan_trial(rollout: Rollout) -> TrialPlan:
    """The rollout's plan; RunnerConfigError when its task folder or backend is not there."""
    task_dir = task_path(rollout)
    return TrialPlan(task_dir, _backend(backend_of(rollout)), grades_sealed(task_dir, bool(rollout.task.version.sealed_grading)))


def build_trial_config(rollout: Rollout):
    """The TrialConfig the rollout would run with (RunnerConfigError when it cannot)."""
    return trial_config(rollout, plan_trial(rollout))


def trial_config(rollout: Rollout, plan: TrialPlan):
    from harbor.models.trial.config import TaskConfig, TrialConfig, VerifierConfig

    return TrialConfig(
        task=TaskConfig(path=plan.task_dir),
        trials_dir=workspace.trials_dir(rollout),
        trial_name=rollout.trial_name,
        agent=agent_config(rollout),
        environment=plan.backend.environment(workspace.sandbox_root()),
        verifier=VerifierConfig(import_path=VERIFIER_IMPORT_PATH),
    )


def check_can_run_here(rollout: Rollout) -> None:
    """RunnerConfigError when this worker, or the backend, cannot run the rollout's task at all."""
    check_plan(rollout, plan_trial(rollout))


def check_plan(rollout: Rollout, plan: TrialPlan) -> None:
    model = rollout.model
    if rollout.harness.name not in MODEL_FREE_AGENTS and model.api_key_env and not os.environ.get(model.api_key_env):
        raise RunnerConfigError(
            f"the API key variable {model.api_key_env} is not set on worker {workspace.worker_name()}"
        )
    problems = plan.backend.host_problems()
    if problems:
        raise RunnerConfigError(f"{plan.backend.name} unavailable on this worker: " + "; ".join(problems))
    problems = plan.backend.task_problems(plan.task_dir)
    if problems:
        raise RunnerConfigError(f"{rollout.task.name}: " + "; ".join(problems))
    if plan.sealed:
        try:
            seal_task_dir(plan.task_dir)
        except CannotSeal as exc:
            raise RunnerConfigError(str(exc)) from None


# -- the watcher -------------------------------------------------------------------


class Watcher(threading.Thread):
    """Heartbeat, cancel requests and live import, every `interval` seconds.

    A thread rather than an asyncio task: the ORM must not run in the event
    loop's thread, and a slow import must not delay the agent.
    """

    def __init__(self, rollout_id: int, trial_dir: Path, interval: float):
        super().__init__(name=f"rollout-{rollout_id}-watcher", daemon=True)
        self.rollout_id = rollout_id
        self.trial_dir = trial_dir
        self.interval = interval
        self._stopped = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self.cancelled = False
        self._seen: tuple[float, int] | None = None
        self.live_imports = 0
        self._log_sizes: dict[str, int] = {}
        self._live = None  # trajectories.services.live_import, made at the first tick

    @property
    def full_imports(self) -> int:
        """Ticks that imported the whole trial (the first, and any after a rewritten trajectory.json)."""
        return self._live.full_imports if self._live is not None else 0

    def attach(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task) -> None:
        self._loop, self._task = loop, task

    def stop(self) -> None:
        self._stopped.set()
        if self.is_alive():
            self.join(timeout=30)

    def run(self) -> None:
        try:
            while not self._stopped.wait(self.interval):
                try:
                    self.tick()
                except Exception:  # noqa: BLE001  (the watcher must outlive a bad tick)
                    logger.exception("watcher tick for rollout %s failed", self.rollout_id)
                    close_old_connections()
        finally:
            connection.close()

    def tick(self) -> None:
        cancel = lifecycle.heartbeat(self.rollout_id)
        if cancel and not self.cancelled and self._loop is not None and self._task is not None:
            self.cancelled = True
            self._loop.call_soon_threadsafe(self._task.cancel)
        self.import_live()
        self.publish_logs()

    def publish_logs(self) -> None:
        """The tails of the trial's log and of terminus-2's pane, to the shared storage, when they grew.

        The pane is written inside the sandbox, to its staging folder; it
        is read there without following links (the sandbox's own files).
        """
        from trajectories.services import store_log_tail

        rollout = None
        for relative, root, path in self._logs():
            try:
                size = os.lstat(root / path).st_size
            except OSError:
                continue
            if self._log_sizes.get(relative) == size:
                continue
            try:
                data = read_tail(root, path, LOG_TAIL_BYTES)
            except OSError:
                continue
            rollout = rollout or Rollout.objects.only("pk", "trial_name", "artifacts").get(pk=self.rollout_id)
            store_log_tail(rollout, relative, data, size)
            self._log_sizes[relative] = size

    def _logs(self):
        staging = workspace.sandbox_folder(self.trial_dir.name) / "logs"
        yield "trial.log", self.trial_dir, "trial.log"
        yield "agent/terminus_2.pane", staging, "agent/terminus_2.pane"

    def import_live(self) -> None:
        trajectory = self.trial_dir / "agent" / "trajectory.json"
        try:
            stat = trajectory.stat()
        except OSError:
            return
        seen = (stat.st_mtime, stat.st_size)
        if seen == self._seen:
            return
        from trajectories.services import live_import

        if self._live is None:
            self._live = live_import(self.trial_dir, self.rollout_id)
        outcome = self._live.tick()
        # trajectory.json is rewritten in place (truncate, then write): a
        # failed read is retried on the next tick.
        if not outcome.error:
            self._seen = seen
            self.live_imports += 1


# -- running -------------------------------------------------------------------------


def _transition_in_thread(rollout_id: int, status: str, detail: str, **fields: Any) -> None:
    try:
        lifecycle.transition(rollout_id, status, detail, only_from=statuses.ACTIVE, **fields)
    finally:
        connection.close()


def trial_class(plan: TrialPlan):
    """Harbor's Trial, or SealedTrial when the rollout is graded sealed (sandbox/sealing.py)."""
    if plan.sealed:
        from evaluations.sandbox.sealing import SealedTrial

        return SealedTrial
    from harbor.trial.trial import Trial

    return Trial


def trial_provenance(agent) -> provenance.Provenance:
    """Where a Harbor agent's usage and steps are known (trajectories.provenance), before the trial runs.

    A model-free agent (oracle, nop) calls no model: no usage, and any
    trajectory is the sandbox's. An installed agent runs inside the sandbox,
    and Harbor reads its usage and converts its steps from the sandbox's
    files. Any other runs on the host (terminus-2): it measures its model
    calls there (litellm) and writes agent/trajectory.json itself.
    """
    from harbor.agents.installed.base import BaseInstalledAgent

    name = str(agent.name())
    if name in MODEL_FREE_AGENTS:
        usage, steps = provenance.NONE, provenance.AGENT
    elif isinstance(agent, BaseInstalledAgent):
        usage, steps = provenance.AGENT, provenance.AGENT
    else:
        usage, steps = provenance.HARNESS, provenance.HARNESS
    return provenance.Provenance(usage=usage, trajectory=steps, from_sandbox=None, harness=name)


def copied_from_sandbox(trial) -> frozenset[str]:
    """The trial folder's files that came out of the agent's sandbox (every backend's downloads are SafeTransfers')."""
    from evaluations.sandbox.staging import SafeTransfers

    environment = getattr(trial, "agent_environment", None)
    if not isinstance(environment, SafeTransfers):
        raise RunnerConfigError(f"{type(environment).__name__} does not record what it copies out of its sandbox")
    return frozenset(environment.copied_below(trial.paths.trial_dir))


async def _run_trial(trial_type, config, rollout_id: int, watcher: Watcher):
    from harbor.trial.hooks import TrialEvent

    from trajectories.services import record_provenance

    trial = await trial_type.create(config)
    watcher.attach(asyncio.get_running_loop(), asyncio.current_task())  # type: ignore[arg-type]
    scoring = _score_requests(trial)
    # Said before the agent starts, for the live imports; the files the sandbox wrote are added when it ends.
    record = trial_provenance(trial.agent)
    record_provenance(trial.paths.trial_dir, record)

    async def on_agent_start(event) -> None:
        if scoring is not None:
            scoring.start()
        await asyncio.to_thread(_transition_in_thread, rollout_id, RolloutStatus.RUNNING, "agent started",
                                agent_started_at=timezone.now())

    async def on_agent_end(event) -> None:
        if scoring is not None:
            await scoring.finish()
        # Kill what the agent left running before anything is graded.
        begin = getattr(trial.agent_environment, "begin_verification", None)
        if begin is not None:
            await begin()
        await asyncio.to_thread(_transition_in_thread, rollout_id, RolloutStatus.VERIFYING, "agent finished",
                                agent_finished_at=timezone.now())

    async def on_verification_start(event) -> None:
        # After Harbor collected the artifacts, before it carries them to the verifier: the record is the runner's.
        if scoring is not None:
            scoring.publish(trial.paths.artifacts_dir)

    trial.add_hook(TrialEvent.AGENT_START, on_agent_start)
    trial.add_hook(TrialEvent.AGENT_END, on_agent_end)
    trial.add_hook(TrialEvent.VERIFICATION_START, on_verification_start)
    try:
        return await trial.run()
    finally:
        record_provenance(trial.paths.trial_dir, replace(record, from_sandbox=copied_from_sandbox(trial)))


def _score_requests(trial):
    """The scoring tool's snapshots for a task scored by the best of its score log (None for any other task)."""
    from tasks.score_record import task_snapshot_paths

    from evaluations.running.score_requests import ScoreRequests

    paths = task_snapshot_paths(trial.task.task_dir)
    if not paths:
        return None
    # On a backend that cannot answer the calls (no staged log folders) the record stays empty, and is still
    # what the verifier gets: never what the agent left at RECORD_DIR.
    return ScoreRequests(trial.agent_environment, paths, trial.paths.trial_dir / "score-record")


def run_rollout(rollout_id: int, *, celery_task_id: str = "") -> RunOutcome:
    """Run one rollout to its end; see the module docstring."""
    rollout = lifecycle.claim(rollout_id, celery_task_id=celery_task_id, worker=workspace.worker_name())
    if rollout is None:
        return RunOutcome(SKIPPED)
    try:
        return _run_claimed(rollout)
    finally:
        workspace.sweep_sandboxes()


def _run_claimed(rollout: Rollout) -> RunOutcome:
    workspace.set_aside_attempt(rollout, rollout.attempts - 1)
    trial_dir = workspace.trial_dir(rollout)
    try:
        plan = plan_trial(rollout)
        config = trial_config(rollout, plan)
        check_plan(rollout, plan)
        _serve_scripted_stub(rollout)
    except (RunnerConfigError, StubPortTaken) as exc:
        # Recorded as the rollout's exception, so that its page, its cause and
        # the runner's decision all say the same.
        fault = Fault.CONFIGURATION if isinstance(exc, RunnerConfigError) else Fault.INFRASTRUCTURE
        return _finish(rollout, RolloutStatus.FAILED, f"{fault} error: {exc}", fault=fault,
                       exception_type=type(exc).__name__, exception_message=str(exc)[:5000])

    watcher = Watcher(rollout.pk, trial_dir, heartbeat_sec())
    watcher.start()
    error: BaseException | None = None
    cancelled = False
    try:
        asyncio.run(_run_trial(trial_class(plan), config, rollout.pk, watcher))
    except asyncio.CancelledError:
        cancelled = True
    except Exception as exc:  # noqa: BLE001  (Trial.create refused the trial, say)
        error = exc
        logger.warning("rollout %s: trial did not run: %s", rollout.pk, exc)
    finally:
        watcher.stop()
        close_old_connections()
    cancelled = cancelled or watcher.cancelled
    logger.info("rollout %s: %d live imports, %d of them in full", rollout.pk, watcher.live_imports, watcher.full_imports)

    rollout = Rollout.objects.select_related("campaign").get(pk=rollout.pk)
    if trial_dir.exists():
        from trajectories.services import import_trial_dir

        outcome = import_trial_dir(trial_dir, rollout=rollout)
        if outcome.error:
            logger.warning("rollout %s: final import failed: %s", rollout.pk, outcome.error)
        rollout.refresh_from_db()

    if cancelled:
        _cleanup_sandbox(rollout)
        _publish_trial_folder(rollout, trial_dir)
        return _finish(rollout, RolloutStatus.CANCELLED, "cancelled by staff")
    exception_type = type(error).__name__ if error else rollout.exception_type
    if error is not None or (exception_type and rollout.reward is None):
        message = str(error) if error else (rollout.exception_message or exception_type)
        kind = classify_failure(exception_type, message, agent_started=bool(rollout.agent_started_at or rollout.n_steps))
        if kind == Decision.INFRA_RETRY:
            fate = lifecycle.after_loss(rollout.attempts, lifecycle.max_attempts(), cancel_requested=False)
            if fate.status == RolloutStatus.QUEUED:
                # The attempt's folder stays here; the next attempt sets it aside.
                delay = retry_backoff_sec(rollout.attempts)
                lifecycle.transition(
                    rollout.pk, RolloutStatus.QUEUED, f"infrastructure error, retry in {delay:.0f}s: {message}",
                    only_from=statuses.ACTIVE, celery_task_id="",
                )
                return RunOutcome(RETRY, message, retry_in=delay)
        _publish_trial_folder(rollout, trial_dir)
        fault = fault_of_decision(kind)
        if fault == Fault.AGENT:
            return _finish(rollout, RolloutStatus.FAILED, f"{exception_type}: {message}", fault=fault)
        return _finish(rollout, RolloutStatus.FAILED, f"{fault} error: {message}", fault=fault)
    _publish_trial_folder(rollout, trial_dir)
    detail = f"reward {rollout.reward}" if rollout.reward is not None else "finished"
    return _finish(rollout, RolloutStatus.FINISHED, detail)


def _publish_trial_folder(rollout: Rollout, trial_dir: Path) -> None:
    """Move the ended trial's folder to the shared artifact storage (kept here too if so configured).

    The web servers, and workers on other hosts, never see this host's disk.
    A failed copy keeps the local folder and says so in the log.
    """
    if not trial_dir.is_dir():
        return
    from trajectories.services import store_trial_files

    try:
        store_trial_files(rollout, trial_dir)
    except Exception:  # noqa: BLE001  (the storage may be down; the folder stays for a later copy)
        logger.exception("rollout %s: storing the trial folder failed; it stays at %s", rollout.pk, trial_dir)
        return
    if not getattr(settings, "KEEP_TRIAL_FOLDERS", False):
        shutil.rmtree(trial_dir, ignore_errors=True)


def _serve_scripted_stub(rollout: Rollout) -> None:
    serve_scripted_stub(rollout.model)


def serve_scripted_stub(model) -> None:
    """The demo's scripted stub is served by the worker itself, on 127.0.0.1: before a rollout, and before
    the preflight that calls its endpoint (a campaign of the stub once failed its preflight: nothing served it yet)."""
    port = int(getattr(settings, "STUB_LLM_PORT", 8765))
    if model.is_scripted and model.api_base.startswith(f"http://127.0.0.1:{port}/"):
        ensure_stub_server(port)


def _finish(rollout: Rollout, status: str, detail: str, *, fault: str | None = None, **fields: Any) -> RunOutcome:
    """End the rollout; `fault` is whose doing a failure was (`trajectories.verdict.Fault`), as the runner read it."""
    fields["finished_at"] = rollout.finished_at or timezone.now()
    ended = lifecycle.transition(rollout.pk, status, detail, only_from=statuses.ACTIVE, fault=fault, **fields)
    if ended is not None:
        # The import classified it while it was still verifying: once more, ended.
        classify(ended)
    return RunOutcome(status, detail)


def _cleanup_sandbox(rollout: Rollout) -> None:
    """Remove whatever is left of the rollout's sandboxes on this host."""
    workspace.clean_trial(rollout.trial_name, backend_of(rollout))
