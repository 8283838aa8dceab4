"""Run one rollout as a Harbor trial, streaming its steps into the site.

`run_rollout(rollout_id)` is what a Celery worker calls (and what the demo
calls synchronously). It claims the Rollout row, builds a TrialConfig from
the rollout's campaign (agent from the harness, litellm settings from the
model, environment from the campaign's backend, our tolerant verifier), runs
the trial with `asyncio.run(trial.run())`, and meanwhile a watcher thread
beats the heartbeat, honours cancel requests and imports the growing
`agent/trajectory.json` every couple of seconds. At the end the trial folder
is imported once more with the same importer, so live and final agree.

Infrastructure failures (the sandbox did not start, the provider answered
5xx) are retried with backoff up to a limit; anything the agent did is a
result and never retried.
"""
from __future__ import annotations

import asyncio
import logging
import shutil
import threading
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from trajectories.models import ACTIVE_STATUSES, Rollout, RolloutEvent, RolloutStatus

from .stub_llm import StubPortTaken, ensure_stub_server

logger = logging.getLogger(__name__)

BUBBLEWRAP_IMPORT_PATH = "evaluations.sandbox.bubblewrap:BubblewrapEnvironment"
VERIFIER_IMPORT_PATH = "evaluations.verifier:TolerantVerifier"
# Harbor agents that run no model.
MODEL_FREE_AGENTS = {"oracle", "nop"}
# terminus-2 takes these sampling settings as its own arguments; everything
# else in AgentModel.sampling_params goes to litellm's completion call.
TERMINUS_ARGUMENTS = {"temperature", "reasoning_effort", "max_thinking_tokens", "max_turns", "model_info"}

# Not the agent's doing, and trying again will not help.
FINAL_INFRA_ERRORS = {"NeedsContainerBackend", "SandboxBuildFailedError"}
# Provider trouble (litellm exception names): worth another attempt.
PROVIDER_ERRORS = {
    "APIConnectionError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError",
    "RateLimitError", "APIError", "Timeout", "ConnectionError",
}

RETRY = "retry"
SKIPPED = "skipped"


class RunnerConfigError(RuntimeError):
    """The rollout cannot be run as configured (not an agent failure)."""


@dataclass
class RunOutcome:
    status: str  # a RolloutStatus, RETRY or SKIPPED
    detail: str = ""
    retry_in: float = 0.0


def heartbeat_sec() -> float:
    return float(getattr(settings, "RUNNER_HEARTBEAT_SEC", 2.0))


def stale_after_sec() -> float:
    return float(getattr(settings, "RUNNER_STALE_SEC", 60.0))


def max_attempts() -> int:
    return int(getattr(settings, "RUNNER_MAX_ATTEMPTS", 3))


def retry_backoff_sec(attempt: int) -> float:
    """Exponential backoff between infrastructure retries."""
    base = float(getattr(settings, "RUNNER_RETRY_BACKOFF_SEC", 30.0))
    return base * (2 ** max(attempt - 1, 0))


def classify_failure(exception_type: str, *, agent_started: bool) -> str:
    """"infra-final", "infra-retry" or "result" for a trial's exception."""
    if exception_type in FINAL_INFRA_ERRORS:
        return "infra-final"
    if exception_type in PROVIDER_ERRORS:
        return "infra-retry"
    if not agent_started:
        return "infra-retry"
    return "result"


# -- paths ---------------------------------------------------------------------


def campaign_trials_dir(rollout: Rollout) -> Path:
    return Path(settings.TRIALS_DIR) / (str(rollout.campaign_id) if rollout.campaign_id else "adhoc")


def trial_dir_for(rollout: Rollout) -> Path:
    return campaign_trials_dir(rollout) / rollout.trial_name


def sandbox_marker(rollout: Rollout) -> str:
    """The session id Harbor gives the trial's environment (our sandbox marker)."""
    return f"{rollout.trial_name}__env"


def set_aside_attempt(rollout: Rollout, attempt: int) -> None:
    """Move a failed attempt's folder out of the campaign folder, keeping it for debugging."""
    folder = trial_dir_for(rollout)
    if not folder.exists():
        return
    target = Path(settings.TRIALS_DIR) / "_attempts" / folder.parent.name / f"{rollout.trial_name}.{attempt}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    shutil.move(str(folder), str(target))


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
    from harbor.models.trial.config import EnvironmentConfig

    if backend == "bubblewrap":
        return EnvironmentConfig(
            import_path=BUBBLEWRAP_IMPORT_PATH,
            kwargs={"sandbox_root": str(Path(settings.SANDBOX_DIR))},
        )
    if backend in {"docker", "modal", "daytona"}:
        # Harbor's own providers; Docker passes GPU device requests for tasks
        # that declare gpus, and labels its compose project with the trial.
        return EnvironmentConfig(type=backend)
    raise RunnerConfigError(f"unknown sandbox backend {backend!r}")


def task_path(rollout: Rollout) -> Path:
    path = Path(rollout.task.source_path or "")
    if not rollout.task.source_path or not (path / "task.toml").is_file():
        raise RunnerConfigError(
            f"task {rollout.task.name} has no task folder on this worker ({rollout.task.source_path or 'no source path'})"
        )
    return path


def build_trial_config(rollout: Rollout):
    from harbor.models.trial.config import TaskConfig, TrialConfig, VerifierConfig

    backend = rollout.campaign.backend if rollout.campaign_id else "bubblewrap"
    path = task_path(rollout)
    if backend == "bubblewrap":
        from .sandbox.bubblewrap import check_task_dir, host_problems

        problems = host_problems()
        if problems:
            raise RunnerConfigError("bubblewrap sandbox unavailable on this worker: " + "; ".join(problems))
        problems = check_task_dir(path)
        if problems:
            raise RunnerConfigError("needs a container backend: " + "; ".join(problems))
    return TrialConfig(
        task=TaskConfig(path=path),
        trials_dir=campaign_trials_dir(rollout),
        trial_name=rollout.trial_name,
        agent=agent_config(rollout),
        environment=environment_config(backend),
        verifier=VerifierConfig(import_path=VERIFIER_IMPORT_PATH),
    )


# -- state changes ---------------------------------------------------------------


def record(rollout_id: int, status: str, detail: str = "", **fields: Any) -> None:
    """Set a rollout's status (and fields) and log the change as a RolloutEvent."""
    with transaction.atomic():
        rollout = Rollout.objects.select_for_update(of=("self",)).get(pk=rollout_id)
        rollout.status = status
        for name, value in fields.items():
            setattr(rollout, name, value)
        rollout.heartbeat_at = timezone.now()
        # save() (not update()) so that Rollout signals (leaderboard caches) fire.
        rollout.save()
        RolloutEvent.objects.create(rollout=rollout, status=status, detail=detail[:2000])


def _record_in_thread(rollout_id: int, status: str, detail: str = "", **fields: Any) -> None:
    try:
        record(rollout_id, status, detail, **fields)
    finally:
        connection.close()


def claim(rollout_id: int, celery_task_id: str = "") -> Rollout | None:
    """Take a queued (or abandoned) rollout for this worker; None when not ours to run.

    A message may arrive twice (a redelivery after a worker died, a reaper
    re-queue): only a queued rollout, or an active one whose heartbeat has
    stopped, is taken, so a rollout never runs twice at once.
    """
    now = timezone.now()
    with transaction.atomic():
        rollout = (
            Rollout.objects.select_for_update(of=("self",))
            .select_related("task", "model", "harness", "campaign")
            .filter(pk=rollout_id)
            .first()
        )
        if rollout is None:
            return None
        if rollout.status not in ACTIVE_STATUSES:
            return None
        if rollout.cancel_requested:
            rollout.status = RolloutStatus.CANCELLED
            rollout.finished_at = now
            rollout.save()
            RolloutEvent.objects.create(rollout=rollout, status=rollout.status, detail="cancelled before it started")
            return None
        stale = rollout.heartbeat_at is None or rollout.heartbeat_at < now - timedelta(seconds=stale_after_sec())
        if rollout.status != RolloutStatus.QUEUED and not stale:
            return None
        previous = rollout.status
        if rollout.attempts >= max_attempts():
            rollout.status = RolloutStatus.FAILED
            rollout.infra_error = True
            rollout.finished_at = now
            rollout.save()
            RolloutEvent.objects.create(
                rollout=rollout, status=rollout.status, detail=f"gave up after {rollout.attempts} attempts"
            )
            return None
        rollout.status = RolloutStatus.PREPARING
        rollout.attempts += 1
        rollout.heartbeat_at = now
        rollout.celery_task_id = celery_task_id or rollout.celery_task_id
        rollout.infra_error = False
        rollout.save()
        detail = f"attempt {rollout.attempts}" + (f" (taken over from {previous})" if previous != RolloutStatus.QUEUED else "")
        RolloutEvent.objects.create(rollout=rollout, status=rollout.status, detail=detail)
    if rollout.campaign_id:
        from .campaigns import mark_campaign_started

        mark_campaign_started(rollout.campaign_id)
    return rollout


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
        Rollout.objects.filter(pk=self.rollout_id).update(heartbeat_at=timezone.now())
        cancel = Rollout.objects.filter(pk=self.rollout_id).values_list("cancel_requested", flat=True).first()
        if cancel and not self.cancelled and self._loop is not None and self._task is not None:
            self.cancelled = True
            self._loop.call_soon_threadsafe(self._task.cancel)
        self.import_live()

    def import_live(self) -> None:
        trajectory = self.trial_dir / "agent" / "trajectory.json"
        try:
            stat = trajectory.stat()
        except OSError:
            return
        seen = (stat.st_mtime, stat.st_size)
        if seen == self._seen:
            return
        from trajectories.services import import_trial_dir

        rollout = Rollout.objects.get(pk=self.rollout_id)
        if rollout.status not in ACTIVE_STATUSES:
            return
        outcome = import_trial_dir(self.trial_dir, rollout=rollout, live=True)
        # trajectory.json is rewritten in place (truncate, then write): a
        # failed read is retried on the next tick.
        if not outcome.error:
            self._seen = seen
            self.live_imports += 1


# -- running -------------------------------------------------------------------------


async def _run_trial(config, rollout_id: int, watcher: Watcher):
    from harbor.trial.hooks import TrialEvent
    from harbor.trial.trial import Trial

    trial = await Trial.create(config)
    watcher.attach(asyncio.get_running_loop(), asyncio.current_task())  # type: ignore[arg-type]

    async def on_agent_start(event) -> None:
        await asyncio.to_thread(_record_in_thread, rollout_id, RolloutStatus.RUNNING, "agent started",
                                agent_started_at=timezone.now())

    async def on_agent_end(event) -> None:
        # Kill what the agent left running before anything is graded.
        begin = getattr(trial.agent_environment, "begin_verification", None)
        if begin is not None:
            await begin()
        await asyncio.to_thread(_record_in_thread, rollout_id, RolloutStatus.VERIFYING, "agent finished",
                                agent_finished_at=timezone.now())

    trial.add_hook(TrialEvent.AGENT_START, on_agent_start)
    trial.add_hook(TrialEvent.AGENT_END, on_agent_end)
    return await trial.run()


def run_rollout(rollout_id: int, *, celery_task_id: str = "") -> RunOutcome:
    """Run one rollout to its end; see the module docstring."""
    rollout = claim(rollout_id, celery_task_id)
    if rollout is None:
        return RunOutcome(SKIPPED)
    set_aside_attempt(rollout, rollout.attempts - 1)
    trial_dir = trial_dir_for(rollout)
    try:
        config = build_trial_config(rollout)
        _serve_scripted_stub(rollout)
    except (RunnerConfigError, StubPortTaken) as exc:
        return _finish(rollout, RolloutStatus.FAILED, str(exc), infra_error=True)

    watcher = Watcher(rollout.pk, trial_dir, heartbeat_sec())
    watcher.start()
    error: BaseException | None = None
    cancelled = False
    try:
        asyncio.run(_run_trial(config, rollout.pk, watcher))
    except asyncio.CancelledError:
        cancelled = True
    except Exception as exc:  # noqa: BLE001  (Trial.create refused the trial, say)
        error = exc
        logger.warning("rollout %s: trial did not run: %s", rollout.pk, exc)
    finally:
        watcher.stop()
        close_old_connections()
    cancelled = cancelled or watcher.cancelled

    rollout = Rollout.objects.select_related("campaign").get(pk=rollout.pk)
    if trial_dir.exists():
        from trajectories.services import import_trial_dir

        outcome = import_trial_dir(trial_dir, rollout=rollout)
        if outcome.error:
            logger.warning("rollout %s: final import failed: %s", rollout.pk, outcome.error)
        rollout.refresh_from_db()

    if cancelled:
        _cleanup_sandbox(rollout)
        return _finish(rollout, RolloutStatus.CANCELLED, "cancelled by staff")
    exception_type = type(error).__name__ if error else rollout.exception_type
    if error is not None or (exception_type and rollout.reward is None):
        kind = classify_failure(exception_type, agent_started=bool(rollout.agent_started_at or rollout.n_steps))
        message = str(error) if error else (rollout.exception_message or exception_type)
        if kind == "infra-retry" and rollout.attempts < max_attempts():
            delay = retry_backoff_sec(rollout.attempts)
            record(rollout.pk, RolloutStatus.QUEUED, f"infrastructure error, retry in {delay:.0f}s: {message}"[:2000])
            return RunOutcome(RETRY, message, retry_in=delay)
        if kind != "result":
            return _finish(rollout, RolloutStatus.FAILED, f"infrastructure error: {message}", infra_error=True)
        return _finish(rollout, RolloutStatus.FAILED, f"{exception_type}: {message}")
    detail = f"reward {rollout.reward}" if rollout.reward is not None else "finished"
    return _finish(rollout, RolloutStatus.FINISHED, detail)


def _serve_scripted_stub(rollout: Rollout) -> None:
    """The demo's scripted stub is served by the worker itself, on 127.0.0.1."""
    model = rollout.model
    port = int(getattr(settings, "STUB_LLM_PORT", 8765))
    if model.is_scripted and model.api_base.startswith(f"http://127.0.0.1:{port}/"):
        ensure_stub_server(port)


def _finish(rollout: Rollout, status: str, detail: str, *, infra_error: bool = False) -> RunOutcome:
    fields: dict[str, Any] = {"finished_at": rollout.finished_at or timezone.now()}
    if infra_error:
        fields["infra_error"] = True
    record(rollout.pk, status, detail, **fields)
    if rollout.campaign_id:
        from .campaigns import update_campaign_status

        update_campaign_status(rollout.campaign_id)
    return RunOutcome(status, detail)


def _cleanup_sandbox(rollout: Rollout) -> None:
    """Remove whatever is left of the rollout's sandbox on this host."""
    marker = sandbox_marker(rollout)
    try:
        from .sandbox.bubblewrap import kill_sandbox

        kill_sandbox(marker)
    except Exception:  # noqa: BLE001
        logger.exception("cleaning the sandbox of %s failed", rollout.trial_name)
    if rollout.campaign_id and rollout.campaign.backend == "docker":
        remove_docker_containers(rollout.trial_name)


def remove_docker_containers(trial_name: str) -> int:
    """Remove leftover Docker containers of a trial (Harbor's compose project carries its name)."""
    try:
        import docker
    except ImportError:
        return 0
    try:
        client = docker.from_env()
        project = trial_name.lower().replace(".", "-")
        removed = 0
        for container in client.containers.list(all=True, filters={"label": "com.docker.compose.project"}):
            if project in container.labels.get("com.docker.compose.project", ""):
                container.remove(force=True)
                removed += 1
        return removed
    except Exception:  # noqa: BLE001  (no Docker engine on this host)
        return 0
