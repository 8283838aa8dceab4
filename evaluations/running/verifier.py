"""A Harbor verifier that reads AutoLab's reward.json without rejecting it.

AutoLab's tests write fields such as `"reason": "no_lora_file"`,
`"correctness": true` or `"metric": null` beside the reward. Harbor 0.25
rejects any non-numeric value (VerifierOutputParseError), which loses the
reward and marks the trial as crashed. This verifier keeps finite numbers
(booleans as 1.0/0.0) as Harbor rewards and leaves reward.json untouched in
the trial folder, where the importer reads every field.

Plugged in with `VerifierConfig(import_path="evaluations.running.verifier:TolerantVerifier")`.
"""
from __future__ import annotations

import json
import math
from typing import Any

from harbor.models.verifier.result import VerifierResult
from harbor.verifier.verifier import DownloadVerifierDirError, RewardFileEmptyError, Verifier, VerifierOutputParseError

from evaluations.sandbox.errors import SandboxEndedByAgentError


def numeric_rewards(data: Any) -> tuple[dict[str, float], dict[str, Any]]:
    """Split a parsed reward.json into (numeric rewards, every other field)."""
    if not isinstance(data, dict):
        data = {"reward": data}
    rewards: dict[str, float] = {}
    others: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, bool):
            rewards[key] = 1.0 if value else 0.0
        elif isinstance(value, (int, float)) and math.isfinite(value):
            rewards[key] = value
        else:
            others[key] = value
    return rewards, others


class TolerantVerifier(Verifier):
    async def verify(self) -> VerifierResult:
        # Kill what the agent left running and remount for grading before
        # anything of the verifier runs (bubblewrap sandbox; no-op elsewhere).
        begin = getattr(self.environment, "begin_verification", None)
        if begin is not None:
            await begin()
        try:
            return await super().verify()
        except DownloadVerifierDirError as exc:
            # A sandbox whose files were too big to copy out is the agent's
            # doing, not a verifier's fault (sandbox.staging.SafeTransfers).
            if isinstance(exc.__cause__, SandboxEndedByAgentError):
                raise exc.__cause__ from None
            raise

    def _parse_reward_json(self) -> dict[str, float | int]:
        path = self.trial_paths.reward_json_path
        if path.stat().st_size == 0:
            raise RewardFileEmptyError(f"Reward file is empty at {path}")
        try:
            data = json.loads(path.read_text())
        except ValueError as exc:
            if self.trial_paths.reward_text_path.exists():
                return self._parse_reward_text()
            raise VerifierOutputParseError(f"reward.json is not JSON: {exc}") from exc
        rewards, others = numeric_rewards(data)
        if others:
            self.logger.debug("reward.json fields kept outside the rewards: %s", sorted(others))
        return rewards
