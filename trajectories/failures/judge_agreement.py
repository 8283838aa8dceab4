"""When the failure rules and our LLM judge disagree about a rollout (pure; the cases staff read first).

The rules say *what* went wrong (a cause), the judge's checks say whether
the agent's behaviour failed a criterion. They disagree when:

- the rule names a cause of the agent's, but the judge fails no check
  (`rule_only`: the rule may be wrong, or the rubric misses it);
- the rule finds nothing (no cause, or `unknown`), but the judge fails a
  check (`judge_only`: the judge saw what no rule looks for).

A cause outside the agent (infrastructure, configuration) is not the
judge's to confirm: a judge passing everything there agrees. The rule read
is the classifier's own cause, not a staff label: labels stay the final
word, and this only points at what to read.
"""
from __future__ import annotations

from trajectories.failures.rules import NOT_THE_AGENTS, UNKNOWN

RULE_ONLY = "rule_only"
JUDGE_ONLY = "judge_only"
AGREE = ""

# The rule found nothing.
RULE_SILENT = ("", UNKNOWN)
# Causes the judge's checks say nothing about.
NOT_JUDGED = tuple(NOT_THE_AGENTS)

DISAGREEMENTS = {
    RULE_ONLY: "the rule names a cause, the judge fails no check",
    JUDGE_ONLY: "the rule finds no cause, the judge fails a check",
}


def disagreement(rule_cause: str | None, judge_fails: int | None) -> str:
    """RULE_ONLY, JUDGE_ONLY or AGREE ("") for a rule's cause and the number of checks the judge failed.

    `judge_fails` None means the judge has not read the rollout: nothing to disagree with.
    """
    if judge_fails is None:
        return AGREE
    cause = rule_cause or ""
    if judge_fails == 0 and cause not in RULE_SILENT and cause not in NOT_JUDGED:
        return RULE_ONLY
    if judge_fails > 0 and cause in RULE_SILENT:
        return JUDGE_ONLY
    return AGREE
