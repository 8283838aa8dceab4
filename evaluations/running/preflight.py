"""Preflight: what a campaign needs, checked on a worker before any rollout is queued.

A new model whose key variable is not set on the workers, or whose
endpoint refuses it, used to cost three retries with back-offs per rollout
and an overnight of "queued" cells. Before its rollouts exist, a campaign
sends one preflight message to each queue it will use (`cpu`, and `gpu`
for tasks that need GPUs); the worker that takes it checks, on its own
host:

- the model's API key variable is set (for harnesses that call a model);
- the endpoint answers a one-token completion (through litellm, so any
  provider litellm speaks is checked the same way);
- every task's folder is there;
- the campaign's sandbox backend works on this host and can run each task.

It stores what it found on the campaign (`Campaign.preflight`), and the
campaign starts (its rollouts created and sent) once every queue has
passed, or fails with the first reason. A queue no worker serves is found
by the reaper: no answer within RUNNER_PREFLIGHT_TIMEOUT_SEC fails the
campaign with that reason, unless a running worker consumes the queue (its
pool busy with trials): then the preflight waits for it, and says so.

`run_checks` is plain Python over what it is given (no ORM); the Celery
task and the campaign bookkeeping are in tasks.py and campaigns.py.
"""
from __future__ import annotations

import os
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trajectories.services import exception_family

from evaluations.running.runner import MODEL_FREE_AGENTS
from evaluations.sandbox import backends

# A completion this short costs next to nothing and proves the key and the model name.
PING_MESSAGES = [{"role": "user", "content": "Reply with the single word: ready"}]


class PreflightError(RuntimeError):
    """A campaign that cannot run as configured, with the reason."""


@dataclass(frozen=True)
class Check:
    name: str  # "api key", "endpoint", "task folders", "backend"
    ok: bool
    detail: str


@dataclass
class ModelSettings:
    """What the checks need of an AgentModel and its Harness (plain values, for a worker)."""

    harness: str
    litellm_model: str = ""
    api_base: str = ""
    api_key_env: str = ""
    sampling_params: dict[str, Any] = field(default_factory=dict)

    @property
    def calls_a_model(self) -> bool:
        return self.harness not in MODEL_FREE_AGENTS


@dataclass
class PreflightReport:
    worker: str
    queue: str
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def reason(self) -> str:
        failed = [check for check in self.checks if not check.ok]
        return "; ".join(f"{check.name}: {check.detail}" for check in failed)

    def as_dict(self) -> dict[str, Any]:
        return {"worker": self.worker, "queue": self.queue, "ok": self.ok,
                "checks": [asdict(check) for check in self.checks]}


def run_checks(model: ModelSettings, backend: str, task_dirs: list[str], *, queue: str = "cpu",
               completion=None) -> PreflightReport:
    """Every check, on this host. `completion` stands for litellm.completion (a test's own endpoint is real)."""
    host = socket.gethostname()
    checks: list[Check] = []
    if model.calls_a_model:
        checks += model_checks(model, host, completion)
    checks.append(_task_folders(task_dirs, host))
    checks += _backend_checks(backend, [path for path in task_dirs if (Path(path) / "task.toml").is_file()], host)
    return PreflightReport(worker=host, queue=queue, checks=checks)


def model_checks(model: ModelSettings, host: str, completion=None) -> list[Check]:
    checks = []
    key = ""
    if model.api_key_env:
        key = os.environ.get(model.api_key_env, "")
        checks.append(Check(
            "api key", bool(key),
            f"{model.api_key_env} is set on {host}" if key else
            f"the API key variable {model.api_key_env} is not set on worker {host} (set it in the worker's environment)",
        ))
        if not key:
            return checks + [Check("endpoint", False, "not tried: there is no key to call it with")]
    checks.append(_endpoint(model, key, completion))
    return checks


def _endpoint(model: ModelSettings, key: str, completion) -> Check:
    """One completion of one token, through litellm."""
    if completion is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        completion = litellm.completion
    arguments: dict[str, Any] = {
        "model": model.litellm_model, "messages": PING_MESSAGES, "max_tokens": 1, "timeout": 60,
        "num_retries": 0, "drop_params": True,
    }
    if model.api_base:
        arguments["api_base"] = model.api_base
    # A key in the sampling parameters is a placeholder (the scripted stub's), never a secret.
    key = key or model.sampling_params.get("api_key", "")
    if key:
        arguments["api_key"] = key
    where = model.api_base or "the provider's default endpoint"
    try:
        completion(**arguments)
    except Exception as exc:  # noqa: BLE001  (every failure is a reason to show)
        name = type(exc).__name__
        message = " ".join(str(exc).split())[:400]
        family = exception_family(name, message)
        if family == "configuration" and not key:
            return Check("endpoint", False, no_key_detail(model, f"{name}: {message}"))
        if family == "configuration":
            return Check("endpoint", False, f"{model.litellm_model} at {where} refused the call ({name}: {message})")
        return Check("endpoint", False, f"{model.litellm_model} at {where} did not answer ({name}: {message}); "
                                        "if it is a passing fault, launch again")
    return Check("endpoint", True, f"{model.litellm_model} at {where} answered")


def no_key_detail(model: ModelSettings, error: str) -> str:
    """A model called without any key: the registration's mistake, fixed in the admin, never by launching again."""
    return (
        f"configuration error: {model.litellm_model} was called without an API key: the model names no API key "
        f"variable and its sampling parameters no api_key (set one in the admin, Agent models; a local "
        f"OpenAI-compatible server that checks no key needs a placeholder such as {{\"api_key\": \"none\"}}) ({error})"
    )


def _task_folders(task_dirs: list[str], host: str) -> Check:
    missing = [path or "(no folder recorded)" for path in task_dirs if not path or not (Path(path) / "task.toml").is_file()]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        return Check("task folders", False, f"{len(missing)} task folder(s) missing on worker {host}: {shown}")
    return Check("task folders", True, f"all {len(task_dirs)} on {host}")


def _backend_checks(name: str, task_dirs: list[str], host: str) -> list[Check]:
    try:
        backend = backends.get(name)
    except backends.UnknownBackend as exc:
        return [Check("backend", False, str(exc.args[0]))]
    problems = backend.host_problems()
    if problems:
        return [Check("backend", False, f"{backend.label} is not usable on worker {host}: " + "; ".join(problems))]
    refused = []
    for task_dir in task_dirs:
        for problem in backend.task_problems(Path(task_dir)):
            refused.append(f"{Path(task_dir).name}: {problem}")
    if refused:
        more = f"; and {len(refused) - 5} more" if len(refused) > 5 else ""
        return [Check("backend", False, f"{backend.label} cannot run {len(refused)} task(s): " + "; ".join(refused[:5]) + more)]
    return [Check("backend", True, f"{backend.label} works on {host}")]
