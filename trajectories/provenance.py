"""Where a rollout's usage (tokens, cost) and its steps come from, and which of them count: the one source of these rules.

The agent under test is root in its sandbox: a file it writes there may
say anything. Harbor's oracle and nop agents write no trajectory of their
own, so a `/logs/agent/trajectory.json` the sandbox wrote was once copied
into the trial folder and imported as if a harness had written it: its
`final_metrics` set the rollout's cost and tokens, its forged benchmark
call its curve and best score (issue 43).

So our runner says, in a file at the root of every trial folder (`FILE_NAME`:
no sandbox's log folder is bound there and no copy out of a sandbox goes
there), where the trial's record comes from:

- `usage`: HARNESS, the harness ran on the host and measured its model
  calls there (terminus-2 calls through litellm on the worker; Harbor's
  result.json `agent_result`); AGENT, the harness runs inside the sandbox
  and its usage is read from the sandbox's own files (Harbor's installed
  agents, claude-code and the like); NONE, the harness calls no model
  (oracle, nop).
- `trajectory`: HARNESS, the harness writes agent/trajectory*.json on the
  host; AGENT, any trajectory comes from the sandbox (written there, or
  converted from the logs it left).
- `from_sandbox`: the trial folder's files copied out of the agent's
  sandbox (None while the trial runs: not known yet).

A trial folder imported from elsewhere has no such file: its usage and
steps are what the trial reports (TRIAL), counted as they always were.

What counts where (`counts`): tokens and cost fill a rollout's counted
fields, which every cost figure reads (the board, the estimates, the job
summary), only from HARNESS or TRIAL; AGENT's are kept apart as reported
(`split_usage`), shown as such and never counted; NONE has none. A
trajectory's curve and benchmark calls enter the board, and the failure
rules that read steps run, only for a HARNESS or TRIAL trajectory; an
AGENT one is shown as the agent's own account. With a HARNESS trajectory,
files copied from the sandbox under agent/ are not read as the trajectory
(`sandbox_agent_files`): a host-side harness's record is what the host wrote.

Django-free, like statuses: the models, the importer, the runner and the
board read the same names.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

HARNESS = "harness"
AGENT = "agent"
NONE = "none"
TRIAL = "trial"

USAGE_SOURCES = (HARNESS, AGENT, NONE, TRIAL)
TRAJECTORY_SOURCES = (HARNESS, AGENT, TRIAL)
# The sources whose numbers enter figures.
COUNTED = frozenset({HARNESS, TRIAL})

# What the rollout page and the API say of each.
USAGE_LABELS = {
    HARNESS: "measured on the host by the harness",
    AGENT: "reported from inside the agent's sandbox: not counted in any cost figure",
    NONE: "none: the harness calls no model",
    TRIAL: "as the imported trial reports it",
}
TRAJECTORY_LABELS = {
    HARNESS: "written on the host by the harness",
    AGENT: "written inside the agent's sandbox (or converted from its logs): the agent's own account, "
    "left out of the board's curves and of the failure rules that read steps",
    TRIAL: "as the imported trial holds it",
}

# At the trial folder's root: Harbor writes config.json, result.json and trial.log there, never this.
FILE_NAME = "autolab-provenance.json"
WRITER = "autolab-site runner"


class ProvenanceError(ValueError):
    """A provenance file that does not say what it must."""


@dataclass(frozen=True)
class Provenance:
    usage: str = TRIAL
    trajectory: str = TRIAL
    # Relative paths (POSIX) of the files copied out of the agent's sandbox; None: not known yet.
    from_sandbox: frozenset[str] | None = field(default_factory=frozenset)
    harness: str = ""

    def to_json(self) -> bytes:
        data = {
            "written_by": WRITER,
            "harness": self.harness,
            "usage": self.usage,
            "trajectory": self.trajectory,
            "from_sandbox": None if self.from_sandbox is None else sorted(self.from_sandbox),
        }
        return json.dumps(data, indent=2).encode()

    def sandbox_agent_files(self, names) -> list[str]:
        """Which of `names` the trajectory reader must not read: agent/ files copied from the sandbox, when the
        harness writes its trajectory on the host (sorted)."""
        if self.trajectory != HARNESS or not self.from_sandbox:
            return []
        return sorted(name for name in names if name.startswith("agent/") and name in self.from_sandbox)


IMPORTED = Provenance()


def parse(raw: bytes) -> Provenance:
    """The provenance in a FILE_NAME's bytes; ProvenanceError naming what is wrong."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProvenanceError(f"{FILE_NAME}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ProvenanceError(f"{FILE_NAME}: not a JSON object")
    usage, trajectory, files = data.get("usage"), data.get("trajectory"), data.get("from_sandbox")
    if usage not in (HARNESS, AGENT, NONE):
        raise ProvenanceError(f"{FILE_NAME}: usage {usage!r} is not one of harness, agent, none")
    if trajectory not in (HARNESS, AGENT):
        raise ProvenanceError(f"{FILE_NAME}: trajectory {trajectory!r} is not one of harness, agent")
    if files is not None and not (isinstance(files, list) and all(isinstance(name, str) for name in files)):
        raise ProvenanceError(f"{FILE_NAME}: from_sandbox is not a list of paths")
    harness = data.get("harness") if isinstance(data.get("harness"), str) else ""
    return Provenance(usage, trajectory, None if files is None else frozenset(files), harness[:200])


def counts(source: str) -> bool:
    """Whether numbers from this source (a usage or trajectory source) enter figures."""
    return source in COUNTED


@dataclass(frozen=True)
class Usage:
    """A trial's tokens and cost, as one source gives them (None: not given)."""

    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None

    def as_dict(self) -> dict:
        return {name: value for name, value in vars(self).items() if value is not None}


def split_usage(source: str, measured: Usage) -> tuple[Usage, dict]:
    """(the rollout's counted usage, what it keeps as reported only) for usage read from a trial whose usage source is `source`."""
    if source == NONE:
        return Usage(), {}
    if source == AGENT:
        return Usage(), measured.as_dict()
    return measured, {}
