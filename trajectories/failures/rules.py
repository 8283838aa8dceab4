"""Why did a rollout score zero? A pure, rule-table classifier.

The AutoLab paper read 302 zero-score rollouts by hand and found that most
were failures of budget governance (stopping early, or running out the clock
without a valid submission) rather than of skill. This module makes that
reading automatic and reproducible.

It knows nothing of the ORM: `trajectories.failures.service` builds a plain
`RolloutFacts` from a stored rollout and stores the `Classification`.

Every rollout gets an *outcome* (see `Outcome`). A rollout whose reward is
zero, or that has no reward, also gets one *primary cause* and any number of
*secondary causes*, each backed by evidence: dicts such as
``{"kind": "verifier", "text": "reason: no_lora_file", "step_id": None,
"cause": "no_artifact"}``. The causes are decided by `RULES`, one ordered
table: the first row that finds evidence gives the primary cause, every
other row that finds evidence gives a secondary cause. When no row finds
anything the cause is `unknown`; nothing is guessed.

Behaviour flags (`FLAGS`) mark how a run went, whatever its reward. The one
that needs evidence, `sealed_below_visible` (the counted grade below the best
the agent measured by more than the grader's noise), adds its evidence to the
same list with ``"cause": ""`` and ``"flag": "sealed_below_visible"``, after
the causes' evidence.

The order of `RULES` is the priority, and follows one principle: hard facts
first (Harbor's exception says the environment, the verifier or the model
API failed, or the agent hit its timeout; the verifier says the agent's
code, run while it was graded, ran out of time or left processes running),
then what the verifier reported about the artifact, then what can only be
read from the trajectory (edits to read-only files, stopping early), and
finally "a valid artifact that did not beat the baseline".
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tasks import scoring
from tasks.lib.numbers import as_float

from trajectories import statuses
from trajectories.verdict import (  # the verdict's vocabulary, which the causes below feed
    CONFIGURATION_ERROR,
    FAILED_OUTCOMES,
    INFRASTRUCTURE_ERROR,
    NOT_THE_AGENTS,
    Outcome,
)
from trajectories.verdict import outcome as labelled_outcome  # noqa: F401  (the outcome once a cause stands)
from trajectories.analysis.diffs import files_in_diff
from trajectories.analysis.step_kinds import StepKind

# Causes ----------------------------------------------------------------------

VERIFIER_ERROR = "verifier_error"
AGENT_ERROR = "agent_error"
SANDBOX_ENDED = "sandbox_ended"
CANDIDATE_TIMEOUT = "candidate_timeout"
GRADING_DISRUPTED = "grading_disrupted"
PROTECTED_FILE_MODIFIED = "protected_file_modified"
BUDGET_EXHAUSTED = "budget_exhausted"
BUILD_FAILED = "build_failed"
NONDETERMINISTIC = "nondeterministic"
CORRECTNESS_FAILED = "correctness_failed"
NO_ARTIFACT = "no_artifact"
PREMATURE_TERMINATION = "premature_termination"
NO_IMPROVEMENT = "no_improvement"
UNKNOWN = "unknown"

# Display order and wording (also the choices offered to staff labels).
CAUSES: dict[str, str] = {
    NO_ARTIFACT: "No artifact",
    PREMATURE_TERMINATION: "Premature termination",
    BUDGET_EXHAUSTED: "Budget exhausted",
    NO_IMPROVEMENT: "No improvement",
    CORRECTNESS_FAILED: "Correctness failed",
    BUILD_FAILED: "Build failed",
    NONDETERMINISTIC: "Nondeterministic",
    PROTECTED_FILE_MODIFIED: "Protected file modified",
    AGENT_ERROR: "Agent error",
    SANDBOX_ENDED: "Sandbox ended by the agent",
    CANDIDATE_TIMEOUT: "Timed out in grading",
    GRADING_DISRUPTED: "Grading disrupted by the agent",
    VERIFIER_ERROR: "Verifier error",
    INFRASTRUCTURE_ERROR: "Infrastructure error",
    CONFIGURATION_ERROR: "Configuration error",
    UNKNOWN: "Unknown",
}

CAUSE_HELP: dict[str, str] = {
    NO_ARTIFACT: "the verifier found nothing to score",
    PREMATURE_TERMINATION: "the agent stopped with most of its budget unused and few benchmark calls",
    BUDGET_EXHAUSTED: "the agent hit its timeout without a valid final artifact",
    NO_IMPROVEMENT: "a valid artifact that did not beat the baseline",
    CORRECTNESS_FAILED: "the artifact gave wrong results",
    BUILD_FAILED: "the artifact did not build",
    NONDETERMINISTIC: "the artifact's results changed between runs",
    PROTECTED_FILE_MODIFIED: "a file the instruction marks read-only was changed",
    AGENT_ERROR: "the agent failed (context length exceeded, unparseable reply, non-zero exit)",
    SANDBOX_ENDED: "the agent's code ended its own sandbox (killed every process, ran out of memory or "
    "processes, filled its disk past the task's storage): the agent's result, never retried",
    CANDIDATE_TIMEOUT: "the agent's code, run by the verifier, did not finish in time: the verifier says so, or a "
    "separate verifier (a fresh environment given only the agent's artifacts) ran out of time: the agent's result, "
    "counted 0, never retried",
    GRADING_DISRUPTED: "the agent's code, run by the verifier, left processes running (a fork bomb, a daemon), which "
    "would have shared the CPU with what the verifier timed next: the agent's result, counted 0, never retried",
    VERIFIER_ERROR: "the verifier timed out, failed, or left no readable reward, and nothing says the agent's code "
    "caused it (a timeout of a verifier that shares the agent's sandbox, a crash, an unparseable reward)",
    INFRASTRUCTURE_ERROR: "the sandbox failed to build or start, or the model provider failed (5xx, rate limit, "
    "no connection): not the agent's doing",
    CONFIGURATION_ERROR: "the model, its API key or endpoint (a missing key, an unknown model, a 4xx from the "
    "provider), or the sandbox backend for the task, was set up wrong: not the agent's doing",
    UNKNOWN: "no rule matched",
}


# The agent's code ended its sandbox or its grading: counted, never retried, and named beside the status
# where a grid shows only that ("failed (timed out in grading)").
ENDED_BY_THE_AGENT = (SANDBOX_ENDED, CANDIDATE_TIMEOUT, GRADING_DISRUPTED)

# Behaviour flags.
TIMED_OUT_BUT_SCORED = "timed_out_but_scored"
NEVER_CALLED_BENCHMARK = "never_called_benchmark"
REGRESSED_AFTER_BEST = "regressed_after_best"
SEALED_BELOW_VISIBLE = "sealed_below_visible"

FLAGS: dict[str, str] = {
    TIMED_OUT_BUT_SCORED: "hit its timeout, but the artifact left behind scored",
    NEVER_CALLED_BENCHMARK: "never ran the local benchmark",
    REGRESSED_AFTER_BEST: "finished worse than its best-so-far",
    SEALED_BELOW_VISIBLE: "the sealed verifier's counted grade is below the best score the agent measured in its "
    "benchmark calls by more than the grader's noise",
}
# How a flag is named on a page (its id stays in filters, exports and the API); FLAGS is its explanation.
FLAG_LABELS: dict[str, str] = {
    TIMED_OUT_BUT_SCORED: "Timed out but scored",
    NEVER_CALLED_BENCHMARK: "Never ran the benchmark",
    REGRESSED_AFTER_BEST: "Regressed after its best",
    SEALED_BELOW_VISIBLE: "Sealed grade below what it measured",
}



# Inputs and outputs -------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The knobs of the heuristic rules (settings.FAILURE_THRESHOLDS overrides)."""

    # premature_termination: more than this share of the budget left...
    premature_unused_fraction: float = 0.5
    # ...and at most this many local benchmark calls.
    premature_max_benchmark_calls: int = 2
    # regressed_after_best: the final reward is this much below the best
    # normalised score seen (local runs and the verifier are both noisy).
    regression_tolerance: float = 0.02
    # sealed_below_visible: the grader's noise on the anchored scale, where neither the task
    # ([optimization] grader_noise) nor the verifier (reward.json's grader_noise) declares one.
    grader_noise: float = 0.05


@dataclass
class StepFacts:
    step_id: int
    kinds: list[str] = field(default_factory=list)
    elapsed_sec: float | None = None
    diff: str = ""
    # Files the step edited; when empty they are read from `diff`.
    edited_files: list[str] = field(default_factory=list)


@dataclass
class RolloutFacts:
    """Everything the rules look at, as plain values."""

    status: str = statuses.FINISHED
    reward: float | None = None
    # Why the run's source leaves it out of the figures ("" when it counts).
    excluded: str = ""
    # Harbor 0.26's verdict that the reward counts (True), does not (False), or none given (None).
    reward_valid: bool | None = None
    # False when the trial was imported without a trajectory, or its trajectory is the agent's own account
    # (written in its sandbox, trajectories.provenance): its steps are unknown.
    has_trajectory: bool = True
    verifier_fields: dict[str, Any] = field(default_factory=dict)
    verifier_stdout: str = ""
    exception_type: str = ""
    exception_message: str = ""
    # Harbor 0.26's result.json: "separate" when the verifier ran in an environment of its own
    # (sealed grading), "shared" in the agent's sandbox, "" when it does not say.
    verifier_mode: str = ""
    budget_sec: float | None = None
    agent_duration_sec: float | None = None
    budget_used_fraction: float | None = None
    n_benchmark_calls: int = 0
    n_edits: int = 0
    best_score: float | None = None
    # Best-so-far curve points: {"step", "t", "metric", "score", "best_metric", "best_score"}
    curve: list[dict[str, Any]] = field(default_factory=list)
    # The score the figures count for it (trajectories.verdict, on its version's footing); None when not counted.
    sealed: float | None = None
    # The version's cap on a score (1.0 where it clips rewards), so the curve's scores stand on the same footing.
    clip_to: float | None = None
    # The grader's noise on the anchored scale as the task declares it ([optimization] grader_noise); None: not declared.
    grader_noise: float | None = None
    instruction: str = ""
    steps: list[StepFacts] = field(default_factory=list)


@dataclass
class Evidence:
    kind: str  # verifier | stdout | exception | step | budget
    text: str
    step_id: int | None = None

    def as_dict(self, cause: str) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "step_id": self.step_id, "cause": cause}


@dataclass
class Classification:
    outcome: str
    cause: str = ""  # "" when the outcome carries no cause (scored, running)
    secondary: list[str] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


# Reading exceptions ----------------------------------------------------------------

AGENT_TIMEOUT_TYPES = {"AgentTimeoutError"}
# The agent's code ended its own sandbox (evaluations.sandbox.errors): its
# result, although the name says "Sandbox" as infrastructure errors do.
SANDBOX_ENDED_TYPES = {"SandboxEndedByAgentError"}
VERIFIER_EXCEPTION_TYPES = {
    "VerifierTimeoutError",
    "RewardFileNotFoundError",
    "RewardFileEmptyError",
    "VerifierOutputParseError",
    "AddTestsDirError",
    "DownloadVerifierDirError",
    "RegradeError",
}
# The model, its key or endpoint, or the campaign's backend is set up wrong:
# fails at once, is never retried, and is not the agent's result.
CONFIGURATION_EXCEPTION_TYPES = {
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "BadRequestError",
    "UnprocessableEntityError",
    "UnsupportedParamsError",
    "InvalidRequestError",
    "MissingModelCredentialError",
    "ModelNotFoundError",
    "UnsupportedModelParametersError",
    "RunnerConfigError",  # evaluations.running.runner: the worker cannot run the rollout as configured
    "NeedsContainerBackend",  # the bubblewrap sandbox cannot run the task
    "PreflightError",
}
# Transient faults of the model provider: worth another attempt, and not the agent's result.
PROVIDER_EXCEPTION_TYPES = {
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "APIConnectionError",
    "APIError",
    "Timeout",
    "APITimeoutError",
    "ConnectionError",
}
INFRA_EXCEPTION_TYPES = {
    "EnvironmentStartTimeoutError",
    "AgentSetupTimeoutError",  # the harness never got installed: the agent did not start
    "SandboxBuildFailedError",
    "HealthcheckError",
    "InfrastructureTimeout",
    "SSHAccessError",
    "ServiceOperationsUnsupportedError",
}
_INFRA_TYPE = re.compile(r"Environment|Sandbox|Docker|Container|Healthcheck|Infrastructure|Bwrap|GKE|Pod", re.I)
_PROVIDER_TYPE = re.compile(r"Overloaded|RateLimit|ServiceUnavailable|InternalServer|BadGateway|NetworkConnection")
_AGENT_TYPE = re.compile(
    r"^Api|ContextLength|ContextWindow|OutputLength|OutputToken|ContentPolicy|ParseError|JSONDecode|"
    r"NonZeroAgentExitCode|SafetyRefusal",
)
_CONFIGURATION_MESSAGE = re.compile(
    r"missing credentials|api[_ ]?key|incorrect api key|invalid api key|unauthori[sz]ed|"
    r"model[_ ]not[_ ]found|does not exist or you do not have access|\b(401|403|404)\b",
    re.I,
)
# The client found no key to send: litellm raises it as an InternalServerError, which is no provider's fault.
_NO_CREDENTIALS_MESSAGE = re.compile(r"missing credentials|api_key client option must be set", re.I)
_PROVIDER_MESSAGE = re.compile(r"rate.?limit|overloaded|\b(500|502|503|504|529)\b|connection (refused|reset)", re.I)
_AGENT_MESSAGE = re.compile(
    r"context (length|window)|maximum context|too many tokens|litellm|could not parse|unparseable|invalid json",
    re.I,
)
_INFRA_MESSAGE = re.compile(
    r"docker|sandbox|container|bubblewrap|bwrap|failed to (build|start) (the )?(environment|image)|"
    r"no space left on device|environment (build|start)",
    re.I,
)


def exception_family(exception_type: str, message: str = "") -> str:
    """Sort a Harbor/litellm exception: timeout | sandbox_ended | verifier | configuration | provider | infrastructure | agent | "".

    The one table for both the runner (configuration: fail at once;
    provider and infrastructure: retry; the rest is the agent's result)
    and the failure classifier (the cause).
    """
    name = exception_type.rsplit(".", 1)[-1].strip()
    if not name:
        return ""
    if name in AGENT_TIMEOUT_TYPES:
        return "timeout"
    if name in SANDBOX_ENDED_TYPES:
        return "sandbox_ended"
    if name in VERIFIER_EXCEPTION_TYPES or name.startswith(("Verifier", "Reward")):
        return "verifier"
    if name in CONFIGURATION_EXCEPTION_TYPES or _NO_CREDENTIALS_MESSAGE.search(message):
        return "configuration"
    if name in PROVIDER_EXCEPTION_TYPES or _PROVIDER_TYPE.search(name):
        return "provider"
    if name in INFRA_EXCEPTION_TYPES or _INFRA_TYPE.search(name):
        return "infrastructure"
    if _AGENT_TYPE.search(name):
        return "agent"
    if _CONFIGURATION_MESSAGE.search(message):
        return "configuration"
    if _PROVIDER_MESSAGE.search(message):
        return "provider"
    if _AGENT_MESSAGE.search(message):
        return "agent"
    if _INFRA_MESSAGE.search(message):
        return "infrastructure"
    return ""


def _exception_evidence(facts: RolloutFacts) -> Evidence:
    message = facts.exception_message.strip().splitlines()[0] if facts.exception_message.strip() else ""
    text = f"{facts.exception_type}: {message}" if message else facts.exception_type
    return Evidence("exception", _clip(text))


# Reading the verifier ------------------------------------------------------------

# reward.json keys whose string values explain a zero.
_REASON_KEYS = ("reason", "error", "failure", "failure_reason", "detail", "status")
# ...unless they only say that all went well ("status": "ok").
_BENIGN = re.compile(r"^(ok|success|succeeded|pass(ed)?|done|complete(d)?|finished|none)$", re.I)
# reward.json keys whose False means the artifact is wrong.
_CORRECTNESS_KEYS = ("correctness", "correct", "is_correct", "passed", "valid")
# reward.json keys that hold a measured score: the artifact existed and ran.
_MEASURE_KEYS = ("metric", "optimized_score", "score", "speedup")


def verifier_reasons(fields: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for key in _REASON_KEYS:
        value = fields.get(key)
        if isinstance(value, str) and value.strip() and not _BENIGN.match(value.strip()):
            found.append((key, value.strip()))
    return found


def _reason_evidence(facts: RolloutFacts, pattern: re.Pattern[str], exclude: re.Pattern[str] | None = None) -> list[Evidence]:
    found = []
    for key, value in verifier_reasons(facts.verifier_fields):
        if pattern.search(value) and not (exclude and exclude.search(value)):
            found.append(Evidence("verifier", f"{key}: {value}"))
    return found


def _stdout_evidence(facts: RolloutFacts, pattern: re.Pattern[str], limit: int = 3) -> list[Evidence]:
    found = []
    for line in facts.verifier_stdout.splitlines():
        if pattern.search(line):
            found.append(Evidence("stdout", _clip(line.strip())))
            if len(found) >= limit:
                break
    return found


def _false_field_evidence(facts: RolloutFacts, keys: tuple[str, ...]) -> list[Evidence]:
    return [Evidence("verifier", f"{key}: false") for key in keys if facts.verifier_fields.get(key) is False]


def has_measured_artifact(facts: RolloutFacts) -> bool:
    """The verifier says the artifact existed, was correct or measured, and gave no failure reason."""
    fields = facts.verifier_fields
    if verifier_reasons(fields) or any(fields.get(key) is False for key in _CORRECTNESS_KEYS):
        return False
    if any(fields.get(key) is True for key in _CORRECTNESS_KEYS):
        return True
    return any(as_float(fields.get(key)) is not None for key in _MEASURE_KEYS)


# Reading the instruction ---------------------------------------------------------

_BACKTICKED = re.compile(r"`([^`\s]+)`")
_DO_NOT_MODIFY = re.compile(
    r"\b(?:do not|don't|must not|never|may not|cannot)\s+(?:modify|edit|change|touch|alter|overwrite|tamper with)\b(?P<rest>.*)",
    re.I | re.S,
)
_READ_ONLY = re.compile(r"\bread[- ]?only\b", re.I)
_EXCEPTION_WORDS = re.compile(r"\b(except|other than|besides|apart from)\b", re.I)
_EDITABLE_ROW = re.compile(r"\beditable\b|\*\*edit\b|\bedit this\b", re.I)
_EDIT_ONLY = re.compile(r"\bedit\s+((?:`[^`\s]+`[\s,]*(?:and|or)?\s*)+)only\b", re.I)
_EDITABLE_COLON = re.compile(r"\beditable(?: files?)?\s*:(?P<rest>.*)", re.I)


def _clauses(instruction: str) -> list[str]:
    """Table rows one by one, and the sentences of the prose around them.

    Prose lines of one paragraph are joined first, so that a rule wrapped
    over two lines ("or any file under\\n `/models/`.") stays one sentence.
    """
    clauses: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            text = " ".join(paragraph)
            clauses.extend(s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip())
            paragraph.clear()

    for line in instruction.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            flush()
            clauses.append(stripped)
        elif not stripped or stripped.startswith(("#", "```")):
            flush()
        elif stripped.startswith(("- ", "* ")):
            flush()
            paragraph.append(stripped[2:])
        else:
            paragraph.append(stripped)
    flush()
    return clauses


def read_only_paths(instruction: str) -> list[str]:
    """Files and folders the instruction marks read-only ("Do not modify `x`", "| `x` | Read-only |").

    Only backticked paths count: "Do not modify tokenizer, evaluation
    scripts" names no file, so nothing is assumed. Folders keep their
    trailing slash. Paths the instruction also calls editable are left out.
    """
    protected: list[str] = []
    for clause in _clauses(instruction):
        match = _DO_NOT_MODIFY.search(clause)
        if match:
            protected.extend(_BACKTICKED.findall(match.group("rest")))
        elif _READ_ONLY.search(clause) and not _EXCEPTION_WORDS.search(clause):
            protected.extend(_BACKTICKED.findall(clause))
    editable = editable_paths(instruction)
    result: list[str] = []
    for path in protected:
        if path not in result and not any(_path_matches(path, e) for e in editable):
            result.append(path)
    return result


def editable_paths(instruction: str) -> list[str]:
    """Files the instruction says the agent may edit ("Editable | `x`", "Edit `x` only")."""
    editable: list[str] = []
    for clause in _clauses(instruction):
        if _DO_NOT_MODIFY.search(clause) or (_READ_ONLY.search(clause) and not clause.startswith("|")):
            tokens = [t for m in _EDIT_ONLY.finditer(clause) for t in _BACKTICKED.findall(m.group(1))]
        elif clause.startswith("|"):
            tokens = _BACKTICKED.findall(clause) if _EDITABLE_ROW.search(clause) and not _READ_ONLY.search(clause) else []
        else:
            colon = _EDITABLE_COLON.search(clause)
            if colon:
                tokens = _BACKTICKED.findall(colon.group("rest"))
            else:
                tokens = [t for m in _EDIT_ONLY.finditer(clause) for t in _BACKTICKED.findall(m.group(1))]
        editable.extend(t for t in tokens if t not in editable)
    return editable


def _normalise(path: str) -> str:
    path = path.strip().strip("'\"")
    while path.startswith("./"):
        path = path[2:]
    return path


def _path_matches(edited: str, rule: str) -> bool:
    """Does an edited path fall under a path or folder named by the instruction?

    Instructions mix absolute (`/app/Makefile`) and bare (`Makefile`) names,
    and diffs may carry git's a/ b/ prefixes, so a match on trailing path
    components counts.
    """
    edited, rule = _normalise(edited), _normalise(rule)
    if not edited or not rule:
        return False
    rooted = "/" + edited.lstrip("/")
    if rule.endswith("/"):
        folder = "/" + rule.strip("/") + "/"
        return rooted.startswith(folder) or (not rule.startswith("/") and folder in rooted)
    rule_rooted = "/" + rule.lstrip("/")
    return rooted == rule_rooted or rooted.endswith(rule_rooted) or rule_rooted.endswith(rooted)


def protected_match(edited: str, protected: list[str]) -> str | None:
    for rule in protected:
        if _path_matches(edited, rule):
            return rule
    return None


# The rules --------------------------------------------------------------------

Detector = Callable[[RolloutFacts, Thresholds], list[Evidence]]


def _exception_of(family: str) -> Detector:
    def detect(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
        if exception_family(facts.exception_type, facts.exception_message) == family:
            return [_exception_evidence(facts)]
        return []

    return detect


SEPARATE_VERIFIER = "separate"
VERIFIER_TIMEOUT_TYPES = {"VerifierTimeoutError"}
# Reasons the examples' verifiers give (tests/candidate.py) for a candidate out of time, and one that left processes.
_CANDIDATE_TIMEOUT_REASON = re.compile(r"^candidate_timeout$", re.I)
_LEFT_PROCESSES_REASON = re.compile(r"left_processes|fork_?bomb", re.I)
# A verifier that says it failed (the examples' test.sh, when verify.py left no reward).
_VERIFIER_FAILED_REASON = re.compile(r"^verifier_(failed|error|crashed)$", re.I)


def _separate_verifier_timeout(facts: RolloutFacts) -> bool:
    """The verifier ran out of time in an environment of its own, where only the agent's artifacts came in.

    Harbor times the verifier's run alone (its environment's start has a
    timeout, and an error, of its own), so the time went to the verifier's
    work on what the agent left: the agent's code, when the verifier runs
    it. In a shared sandbox the agent's leftovers may be at fault too, but
    so may anything else there: that stays a verifier error.
    """
    name = facts.exception_type.rsplit(".", 1)[-1].strip()
    return name in VERIFIER_TIMEOUT_TYPES and facts.verifier_mode == SEPARATE_VERIFIER


def detect_candidate_timeout(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    found = _reason_evidence(facts, _CANDIDATE_TIMEOUT_REASON)
    if _separate_verifier_timeout(facts):
        evidence = _exception_evidence(facts)
        found.append(Evidence("exception", _clip(f"{evidence.text} (a separate verifier: a fresh environment given "
                                                 "only the agent's artifacts)")))
    return found + _error_evidence(facts) if found else []


def detect_grading_disrupted(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    found = _reason_evidence(facts, _LEFT_PROCESSES_REASON)
    return found + _error_evidence(facts) if found else []


def _error_evidence(facts: RolloutFacts) -> list[Evidence]:
    """The verifier's own words beside its reason ("error": "the candidate left 128 processes running")."""
    error = facts.verifier_fields.get("error")
    return [Evidence("verifier", _clip(f"error: {error.strip()}"))] if isinstance(error, str) and error.strip() else []


def detect_verifier_error(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    if _separate_verifier_timeout(facts):
        return []  # the agent's: detect_candidate_timeout
    if exception_family(facts.exception_type, facts.exception_message) == "verifier":
        return [_exception_evidence(facts)]
    return _reason_evidence(facts, _VERIFIER_FAILED_REASON)


_PROTECTED_REASON = re.compile(r"modified|tamper|checksum|sha-?256|protected|read.?only|forbidden_edit", re.I)
_PROTECTED_STDOUT = re.compile(
    r"(protected|read-only|pinned|/orig/).*(modified|changed|differs|mismatch)|"
    r"(modified|changed|tampered).*(protected|read-only|/orig/)|sha-?256 (mismatch|differs)|"
    r"has been (modified|tampered)|\w+_modified\b",
    re.I,
)


def detect_protected_by_verifier(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    return _reason_evidence(facts, _PROTECTED_REASON) + _stdout_evidence(facts, _PROTECTED_STDOUT)


def detect_protected_by_edit(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    protected = read_only_paths(facts.instruction)
    if not protected:
        return []
    found = []
    for step in facts.steps:
        if StepKind.EDIT.value not in step.kinds:
            continue
        for path in step.edited_files or files_in_diff(step.diff):
            rule = protected_match(path, protected)
            if rule:
                found.append(Evidence("step", f"step {step.step_id} edited {path}, which the instruction marks read-only ({rule})", step.step_id))
    return found


def detect_budget_exhausted(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    if exception_family(facts.exception_type, facts.exception_message) != "timeout":
        return []
    if has_measured_artifact(facts):
        return []  # a valid artifact was left behind; the timeout did not cost the score
    found = [_exception_evidence(facts)]
    if facts.agent_duration_sec is not None and facts.budget_sec:
        found.append(Evidence("budget", f"agent ran {_minutes(facts.agent_duration_sec)} of its {_minutes(facts.budget_sec)} budget"))
    return found


_BUILD_REASON = re.compile(r"build|compil|make_|cargo|nvcc|link", re.I)
_NOT_BUILD_REASON = re.compile(r"modified", re.I)
_BUILD_STDOUT = re.compile(
    r"make(\[\d+\])?: \*\*\*|compilation (failed|terminated)|build (failed|error)|failed to (build|compile)|"
    r"error\[E\d+\]|could not compile|undefined reference to|nvcc fatal|fatal error: |ld returned \d+ exit status",
    re.I,
)


def detect_build_failed(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    return (
        _reason_evidence(facts, _BUILD_REASON, exclude=_NOT_BUILD_REASON)
        + _false_field_evidence(facts, ("build", "build_ok", "built", "compiled"))
        + _stdout_evidence(facts, _BUILD_STDOUT)
    )


_NONDETERMINISM = re.compile(
    r"non.?determin|flaky|inconsistent (results?|outputs?)|not reproducible|unstable results?|differ(s|ed)? between runs",
    re.I,
)


def detect_nondeterministic(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    return (
        _reason_evidence(facts, _NONDETERMINISM)
        + _false_field_evidence(facts, ("deterministic", "reproducible"))
        + _stdout_evidence(facts, _NONDETERMINISM)
    )


_CORRECTNESS_REASON = re.compile(r"incorrect|wrong|correctness|mismatch|invalid|fail(ed)?_(check|test)|assert", re.I)
_CORRECTNESS_STDOUT = re.compile(
    r"\bincorrect\b|wrong (answer|result|output)|correctness (check )?fail|results? (do|does) not match|"
    r"output mismatch|\bFAIL(ED)?\b.*\bcorrect|invalid (output|result|distribution)",
    re.I,
)


def detect_correctness_failed(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    # A verifier that found nothing to run also says "correctness": false
    # (AutoLab's no_output_file): the artifact is missing, not wrong.
    missing = detect_no_artifact(facts, thresholds)
    return (
        _reason_evidence(facts, _CORRECTNESS_REASON, exclude=_PROTECTED_REASON)
        + ([] if missing else _false_field_evidence(facts, _CORRECTNESS_KEYS))
        + _stdout_evidence(facts, _CORRECTNESS_STDOUT)
    )


_NO_ARTIFACT_REASON = re.compile(r"^no_|missing|not.?found|absent|no_output|empty_output|nothing", re.I)
# Reasons that say "it ran, it just was not better": no_improvement, not no_artifact.
_NOT_BETTER_REASON = re.compile(r"improv|speedup|not_(faster|better)|below_baseline|worse", re.I)
_NO_ARTIFACT_STDOUT = re.compile(
    r"\bno\b.*\b(file|output|artifact|binary|checkpoint|model|adapter|submission)s?\b.*\bfound\b|"
    r"\b(file|output|artifact|binary|checkpoint|submission)\b.*\b(not found|does not exist|is missing)\b|"
    r"no such file or directory|produced (no|nothing)|nothing to (score|evaluate)",
    re.I,
)


def detect_no_artifact(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    return _reason_evidence(facts, _NO_ARTIFACT_REASON, exclude=_NOT_BETTER_REASON) + _stdout_evidence(facts, _NO_ARTIFACT_STDOUT)


def used_fraction(facts: RolloutFacts) -> float | None:
    if facts.agent_duration_sec is not None and facts.budget_sec:
        return facts.agent_duration_sec / facts.budget_sec
    return facts.budget_used_fraction


def detect_premature_termination(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    # Only an agent that stopped on its own: crashes and timeouts are other causes.
    if facts.exception_type:
        return []
    used = used_fraction(facts)
    if used is None or 1 - used <= thresholds.premature_unused_fraction:
        return []
    if facts.n_benchmark_calls > thresholds.premature_max_benchmark_calls:
        return []
    submits = [s for s in facts.steps if StepKind.SUBMIT.value in s.kinds]
    last = submits[-1] if submits else (facts.steps[-1] if facts.steps else None)
    budget = f" of its {_minutes(facts.budget_sec)} budget" if facts.budget_sec else " of its budget"
    calls = f"{facts.n_benchmark_calls} benchmark call{'s' if facts.n_benchmark_calls != 1 else ''}"
    return [Evidence("step", f"agent stopped after {used:.0%}{budget} with {calls}", last.step_id if last else None)]


_STDOUT_TROUBLE = re.compile(r"\berror\b|traceback|exception", re.I)


def detect_no_improvement(facts: RolloutFacts, thresholds: Thresholds) -> list[Evidence]:
    """The verifier ran cleanly, found no fault, and still gave zero."""
    if facts.reward is None or facts.reward > 0:
        return []
    fields = facts.verifier_fields
    reasons = verifier_reasons(fields)
    if any(not _NOT_BETTER_REASON.search(value) for _, value in reasons):
        return []
    if any(fields.get(key) is False for key in _CORRECTNESS_KEYS):
        return []
    if exception_family(facts.exception_type, facts.exception_message) in ("verifier", "infrastructure"):
        return []
    if _STDOUT_TROUBLE.search(facts.verifier_stdout):
        return []
    measured = [f"{key}: {value}" for key, value in reasons]
    measured += [f"{key}: {fields[key]}" for key in (*_MEASURE_KEYS, "baseline_score_measured", "baseline_score", "correctness") if key in fields]
    text = "verifier gave reward 0 with no fault found" + (f" ({', '.join(measured)})" if measured else "")
    return [Evidence("verifier", text)]


@dataclass(frozen=True)
class Rule:
    cause: str
    detect: Detector
    why: str
    # Reads the steps: not tried on a rollout imported without a trajectory,
    # whose zero steps and benchmark calls are unknown, not none.
    needs_steps: bool = False


# The one table. Order = priority: the first row with evidence is the primary cause.
RULES: tuple[Rule, ...] = (
    Rule(SANDBOX_ENDED, _exception_of("sandbox_ended"), "the agent's code ended its sandbox (all killed, OOM, disk full)"),
    Rule(CONFIGURATION_ERROR, _exception_of("configuration"), "the key, model, endpoint or backend was set up wrong (4xx)"),
    Rule(INFRASTRUCTURE_ERROR, _exception_of("infrastructure"), "Harbor: the environment failed to build or start"),
    Rule(INFRASTRUCTURE_ERROR, _exception_of("provider"), "the model provider failed: 5xx, rate limit, no connection"),
    Rule(CANDIDATE_TIMEOUT, detect_candidate_timeout,
         "a separate verifier's timeout (only the agent's artifacts in it), or the verifier: candidate_timeout"),
    Rule(GRADING_DISRUPTED, detect_grading_disrupted, "verifier: the agent's code left processes running (a fork bomb)"),
    Rule(VERIFIER_ERROR, detect_verifier_error,
         "Harbor: verifier timeout (shared sandbox), reward file missing or unparseable; or the verifier says it failed"),
    Rule(AGENT_ERROR, _exception_of("agent"), "provider / litellm error, context length exceeded, unparseable reply"),
    Rule(PROTECTED_FILE_MODIFIED, detect_protected_by_verifier, "verifier: *_modified reason, checksum of a pinned file"),
    Rule(BUDGET_EXHAUSTED, detect_budget_exhausted, "AgentTimeoutError and no measured artifact"),
    Rule(BUILD_FAILED, detect_build_failed, "verifier reason or stdout: the build failed"),
    Rule(NONDETERMINISTIC, detect_nondeterministic, "verifier reason or stdout: results differ between runs"),
    Rule(CORRECTNESS_FAILED, detect_correctness_failed, "verifier: correctness false, wrong results"),
    Rule(NO_ARTIFACT, detect_no_artifact, "verifier reason no_* / missing / not found, or stdout says so"),
    Rule(PROTECTED_FILE_MODIFIED, detect_protected_by_edit, "trajectory: an edit to a file the instruction marks read-only",
         needs_steps=True),
    Rule(PREMATURE_TERMINATION, detect_premature_termination, "stopped with most of the budget unused, few benchmark calls",
         needs_steps=True),
    Rule(NO_IMPROVEMENT, detect_no_improvement, "verifier ran cleanly, reward 0"),
)


# Classification ---------------------------------------------------------------


def find_causes(facts: RolloutFacts, thresholds: Thresholds = Thresholds()) -> tuple[str, list[str], list[dict[str, Any]]]:
    """Primary cause, secondary causes and all evidence, by the `RULES` table."""
    causes: list[str] = []
    evidence: list[dict[str, Any]] = []
    for rule in RULES:
        if rule.needs_steps and not facts.has_trajectory:
            continue
        found = rule.detect(facts, thresholds)
        if not found:
            continue
        if rule.cause not in causes:
            causes.append(rule.cause)
        evidence.extend(e.as_dict(rule.cause) for e in found)
    if not causes:
        # Show what was seen, so that staff can label it.
        reasons = verifier_reasons(facts.verifier_fields)
        others = [(k, v) for k, v in facts.verifier_fields.items() if k not in dict(reasons)]
        seen = [Evidence("verifier", _clip(f"{k}: {v}")) for k, v in [*reasons, *others]]
        if facts.exception_type:
            seen.append(_exception_evidence(facts))
        return UNKNOWN, [], [e.as_dict(UNKNOWN) for e in seen]
    return causes[0], causes[1:], evidence


def behaviour_flags(facts: RolloutFacts, thresholds: Thresholds = Thresholds()) -> list[str]:
    flags = []
    family = exception_family(facts.exception_type, facts.exception_message)
    if family == "timeout" and facts.reward is not None and facts.reward > 0:
        flags.append(TIMED_OUT_BUT_SCORED)
    if facts.n_benchmark_calls == 0 and facts.has_trajectory:
        flags.append(NEVER_CALLED_BENCHMARK)
    if regressed_after_best(facts, thresholds):
        flags.append(REGRESSED_AFTER_BEST)
    return flags


def regressed_after_best(facts: RolloutFacts, thresholds: Thresholds = Thresholds()) -> bool:
    """The final result is worse than the best the agent had measured before.

    Either the verifier's reward is below the curve's best normalised score,
    or the last local benchmark reading is not the best one (the curve's
    best_metric already knows the task's direction).
    """
    if facts.reward is not None and as_float(facts.best_score) is not None:
        if facts.reward < facts.best_score - thresholds.regression_tolerance:
            return True
    if facts.curve:
        last = facts.curve[-1]
        metric, best = last.get("metric"), last.get("best_metric")
        if as_float(metric) is not None and as_float(best) is not None and not math.isclose(metric, best, rel_tol=1e-9, abs_tol=1e-12):
            return True
    return False


def grader_noise(facts: RolloutFacts, thresholds: Thresholds = Thresholds()) -> float:
    """The margin within which the sealed grade may fall below the visible best: the verifier's, else the task's, else the default."""
    for declared in (as_float(facts.verifier_fields.get("grader_noise")), as_float(facts.grader_noise)):
        if declared is not None and declared >= 0:
            return declared
    return thresholds.grader_noise


def sealed_below_visible(facts: RolloutFacts, thresholds: Thresholds = Thresholds()) -> list[Evidence]:
    """The sealed verifier's counted grade falls below the best the agent measured by more than the grader's noise.

    Evidence: the benchmark call that first printed the best metric (its step) and the verifier's output.
    Nothing for a rollout that does not count (`sealed` None), or whose benchmark calls printed no scored metric.
    """
    if facts.sealed is None or not facts.has_trajectory:
        return []
    best, call = scoring.visible_best_call(facts.curve, facts.clip_to)
    if best is None or call is None:
        return []
    noise = grader_noise(facts, thresholds)
    if facts.sealed >= best - noise:
        return []
    step = call.get("step_id")
    metric = as_float(call.get("metric"))
    where = f"at step {step}" if step is not None else "in a benchmark call"
    measured = f"the agent measured {best:.2f} {where}" + (f" (metric {metric:g})" if metric is not None else "")
    return [
        Evidence("step", f"{measured}; the sealed verifier gave {facts.sealed:.2f} (grader noise {noise:g})",
                 step if isinstance(step, int) else None),
        Evidence("verifier", _verifier_output(facts)),
    ]


def _verifier_output(facts: RolloutFacts) -> str:
    """What the verifier wrote: reward.json's fields, else the end of its stdout."""
    if facts.verifier_fields:
        return _clip("reward.json: " + ", ".join(f"{k}: {v}" for k, v in facts.verifier_fields.items()))
    if facts.verifier_stdout.strip():
        return "test-stdout: …" + facts.verifier_stdout.strip()[-280:]
    return f"reward: {facts.reward}"


def classify(facts: RolloutFacts, thresholds: Thresholds = Thresholds()) -> Classification:
    if facts.status in statuses.ACTIVE:
        return Classification(outcome=Outcome.RUNNING)
    if facts.status == statuses.CANCELLED:
        return Classification(outcome=Outcome.CANCELLED)
    if facts.status == statuses.INCOMPLETE:
        return Classification(outcome=Outcome.INCOMPLETE)
    if facts.excluded:
        return Classification(outcome=Outcome.EXCLUDED, evidence=[Evidence("verifier", _clip(facts.excluded)).as_dict("")])
    flags = behaviour_flags(facts, thresholds)
    below = sealed_below_visible(facts, thresholds)
    flagged = [e.as_dict("") | {"flag": SEALED_BELOW_VISIBLE} for e in below]
    if below:
        flags.append(SEALED_BELOW_VISIBLE)
    if facts.reward is not None and facts.reward > 0:
        return Classification(outcome=Outcome.SCORED, flags=flags, evidence=flagged)
    cause, secondary, evidence = find_causes(facts, thresholds)
    if cause in NOT_THE_AGENTS and facts.reward_valid and facts.reward is not None:
        # Harbor 0.26 says the reward counts despite the fault (an exit code, an
        # unknown exception): the agent's result, not left out; the fault stays a secondary cause.
        secondary = [cause, *secondary]
        cause = next((c for c in secondary if c not in NOT_THE_AGENTS), UNKNOWN)
        secondary = [c for c in secondary if c != cause]
    if cause in NOT_THE_AGENTS:
        outcome = Outcome.INFRA_ERROR
        # Not the agent's result: left out of the figures, so no sealed grade stands against what it measured.
        flags = [f for f in flags if f != SEALED_BELOW_VISIBLE]
        flagged = []
    elif facts.reward is None:
        outcome = Outcome.NO_REWARD
    else:
        outcome = Outcome.ZERO
    return Classification(outcome=outcome, cause=cause, secondary=secondary, evidence=evidence + flagged, flags=flags)


# Small helpers ------------------------------------------------------------------


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min"
