"""What a Harbor trial ran with: its `lock.json` (Harbor 0.26) and `config.json`, read into typed fields once.

The one reader of these settings: the import stores them on the rollout
(`Rollout.task_digest`, `harbor_version`, `run_settings`) and the
submission checks (`submissions.checks`) judge them. Django-free.

Harbor 0.26 writes `lock.json` beside every trial (schema_version 2):
`task` {name, type, digest ("sha256:<hex>"), source, path, git_commit},
`timeout_multiplier`, `agent` {name, import_path, model_name, skills,
kwargs, env, ...}, `environment` {type, override_* ...}, `verifier`
{disable, environment_mode}, and Harbor's own `harbor` {version, commit}
where it records them. `config.json` (any version) holds the multipliers
(`timeout_multiplier`, `agent_timeout_multiplier`, ...) and the overrides
(`agent.override_timeout_sec`, `environment.override_cpus`, ...).
`result.json` adds `task_checksum` and `verifier_environment_mode`.
A field absent from the lock is taken from config.json or result.json.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tasks.lib.numbers import as_float

FILE_NAME = "lock.json"

MULTIPLIERS = (
    "timeout_multiplier",
    "agent_timeout_multiplier",
    "verifier_timeout_multiplier",
    "agent_setup_timeout_multiplier",
    "environment_build_timeout_multiplier",
)
# (section, key): a value other than null (or false) overrides what the task declares.
OVERRIDES = (
    ("agent", "override_timeout_sec"),
    ("agent", "override_setup_timeout_sec"),
    ("agent", "max_timeout_sec"),
    ("environment", "override_cpus"),
    ("environment", "override_memory_mb"),
    ("environment", "override_storage_mb"),
    ("environment", "override_gpus"),
    ("verifier", "override_timeout_sec"),
    ("verifier", "max_timeout_sec"),
)
SEPARATE = "separate"
SHARED = "shared"


@dataclass(frozen=True)
class RunSettings:
    """A trial's settings as Harbor recorded them ("" / None where nothing says)."""

    has_lock: bool = False
    lock_schema_version: int | None = None
    task_name: str = ""
    task_digest: str = ""  # hex, without "sha256:"
    task_git_commit: str = ""
    harbor_version: str = ""
    harbor_commit: str = ""
    agent_name: str = ""
    agent_import_path: str = ""
    model_name: str = ""
    verifier_mode: str = ""  # SEPARATE, SHARED or ""
    verifier_disabled: bool = False
    multipliers: dict[str, float | None] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)  # "agent.override_timeout_sec": 7200

    def as_dict(self) -> dict[str, Any]:
        """What the rollout stores (`Rollout.run_settings`): no agent kwargs or env, which may hold secrets."""
        return {
            "has_lock": self.has_lock,
            "lock_schema_version": self.lock_schema_version,
            "task_git_commit": self.task_git_commit,
            "harbor_commit": self.harbor_commit,
            "agent": {"name": self.agent_name, "import_path": self.agent_import_path, "model_name": self.model_name},
            "verifier": {"mode": self.verifier_mode, "disabled": self.verifier_disabled},
            "multipliers": dict(self.multipliers),
            "overrides": dict(self.overrides),
        }


def digest_hex(value: Any) -> str:
    """"sha256:ab12..." or "ab12..." as lower-case hex; "" for anything else."""
    if not isinstance(value, str):
        return ""
    text = value.strip().lower()
    if text.startswith("sha256:"):
        text = text[len("sha256:"):]
    return text if text and all(c in "0123456789abcdef" for c in text) else ""


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _stripped(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def read_settings(lock: dict | None, config: dict | None, result: dict | None = None) -> RunSettings:
    """The settings of one trial from its parsed lock.json, config.json and result.json (each may be None)."""
    lock, config, result = _dict(lock), _dict(config), _dict(result)
    task, agent, verifier, harbor = _dict(lock.get("task")), _dict(lock.get("agent")), _dict(lock.get("verifier")), _dict(lock.get("harbor"))
    config_agent = _dict(config.get("agent"))
    multipliers: dict[str, float | None] = {}
    for name in MULTIPLIERS:
        value = lock.get(name) if name in lock else config.get(name)
        multipliers[name] = as_float(value)
    overrides: dict[str, Any] = {}
    for section, key in OVERRIDES:
        for source in (_dict(lock.get(section)), _dict(config.get(section))):
            value = source.get(key)
            if value not in (None, False):
                overrides[f"{section}.{key}"] = value
                break
    mode = _stripped(verifier.get("environment_mode")) or _stripped(result.get("verifier_environment_mode"))
    schema = lock.get("schema_version")
    return RunSettings(
        has_lock=bool(lock),
        lock_schema_version=schema if isinstance(schema, int) and not isinstance(schema, bool) else None,
        task_name=_stripped(task.get("name")) or _stripped(result.get("task_name")),
        task_digest=digest_hex(task.get("digest")) or digest_hex(result.get("task_checksum")),
        task_git_commit=_stripped(task.get("git_commit")) or _stripped(task.get("git_commit_id")),
        harbor_version=_stripped(harbor.get("version")) or _stripped(lock.get("harbor_version")),
        harbor_commit=_stripped(harbor.get("commit")) or _stripped(lock.get("harbor_commit")),
        agent_name=_stripped(agent.get("name")) or _stripped(config_agent.get("name")),
        agent_import_path=_stripped(agent.get("import_path")) or _stripped(config_agent.get("import_path")),
        model_name=_stripped(agent.get("model_name")) or _stripped(config_agent.get("model_name")),
        verifier_mode=mode if mode in (SEPARATE, SHARED) else "",
        verifier_disabled=bool(verifier.get("disable") or _dict(config.get("verifier")).get("disable")),
        multipliers=multipliers,
        overrides=overrides,
    )
