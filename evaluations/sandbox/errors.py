"""What a sandbox says when the agent's own code ended it.

A sandbox that dies while the agent's code runs (every process killed, the
container stopped, out of memory, a disk filled past the task's
`storage_mb`) is the agent's doing: the rollout is graded on what it left
(under sealed grading, in a fresh sandbox) or fails, and counts; it is never
retried, which would let an agent doing badly erase its zero by crashing.
Faults outside the sandbox (the engine unreachable, an image that does not
build, a worker that dies, a host out of disk) stay infrastructure errors.

The name is what the failure rules key on (trajectories.failures.rules:
SANDBOX_ENDED_TYPES), as Harbor's own exception names are.
"""
from __future__ import annotations


class SandboxEndedByAgentError(RuntimeError):
    """The agent's code ended its sandbox; the message says how ("every process was killed", ...)."""

    def __init__(self, how: str):
        super().__init__(f"the agent's code ended its sandbox: {how}")
        self.how = how
