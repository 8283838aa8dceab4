"""The failure classifier's rule table, case by case (no database)."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from trajectories.failures import rules as f
from trajectories.failures.rules import RolloutFacts, StepFacts, Thresholds, classify

FLUX_INSTRUCTION = """# FLUX.2 klein LoRA Training

| Item | Path / Value |
|------|--------------|
| Editable | `/app/train.sh`, `/app/dataset.toml` |
| Eval prompts | `/app/eval_prompts.txt` (8 prompts) |

## Rules

- Do not modify `/app/evaluate.py`, `/app/eval_prompts.txt`, or any file under
  `/models/`.
- No external network access.
"""

HASH_JOIN_INSTRUCTION = """# Hash Join

The function signature in `solve.h` is fixed and must not change.

| Path | Permission |
|------|-----------|
| `/app/solve.c` | **Edit** |
| `/app/main.c` | Read-only |
| `/app/Makefile` | Read-only |

## Rules

- Do not modify `Makefile`. Build configuration is fixed.
- Edit `/app/solve.c` only.
"""


def diff_of(path: str) -> str:
    return f"--- a{path}\n+++ b{path}\n@@ -1 +1 @@\n-old\n+new\n"


def facts(**kw) -> RolloutFacts:
    """A finished two-hour rollout that used most of its budget; tests change one thing."""
    base = dict(
        status="finished",
        reward=0.0,
        verifier_fields={"reward": 0.0},
        budget_sec=7200,
        agent_duration_sec=7000,
        n_benchmark_calls=6,
        steps=[StepFacts(1, ["prompt"]), StepFacts(2, ["benchmark"]), StepFacts(3, ["submit"])],
    )
    base.update(kw)
    return RolloutFacts(**base)


# (id, facts, outcome, primary cause, secondary causes that must be present)
CASES = [
    ("grok-like no_lora_file, stopped early",
     facts(verifier_fields={"reward": 0.0, "reason": "no_lora_file"}, agent_duration_sec=660, budget_sec=14400,
           n_benchmark_calls=1, verifier_stdout="ERROR: No LoRA file found at /app/output/lora.safetensors"),
     "zero", f.NO_ARTIFACT, [f.PREMATURE_TERMINATION]),
    # AutoLab's verifiers say "correctness": false beside no_output_file: the artifact is missing, not wrong.
    ("no output file, correctness false",
     facts(verifier_fields={"reward": 0.0, "reason": "no_output_file", "correctness": False}), "zero", f.NO_ARTIFACT, []),
    ("missing output in stdout only",
     facts(verifier_stdout="[1/3] checking\nERROR: output file /app/out.bin does not exist\n"),
     "zero", f.NO_ARTIFACT, []),
    ("reason build_failed",
     facts(verifier_fields={"reward": 0.0, "reason": "build_failed"}), "zero", f.BUILD_FAILED, []),
    ("make error in stdout, correctness false",
     facts(verifier_fields={"reward": 0.0, "correctness": False, "metric": None},
           verifier_stdout="gcc -O2 solve.c\nsolve.c:3: error: expected ';'\nmake: *** [Makefile:4: solve] Error 1\n"),
     "zero", f.BUILD_FAILED, [f.CORRECTNESS_FAILED]),
    ("correctness false",
     facts(verifier_fields={"reward": 0.0, "correctness": False, "metric": None, "speedup": None}),
     "zero", f.CORRECTNESS_FAILED, []),
    ("wrong answer in stdout",
     facts(verifier_stdout="case 3: wrong answer (expected 17, got 16)\n"), "zero", f.CORRECTNESS_FAILED, []),
    ("nondeterministic reason",
     facts(verifier_fields={"reward": 0.0, "reason": "nondeterministic_output"}), "zero", f.NONDETERMINISTIC, []),
    ("verifier says build file modified",
     facts(verifier_fields={"reward": 0.0, "reason": "build_file_modified"}), "zero", f.PROTECTED_FILE_MODIFIED, []),
    ("checksum mismatch of a pinned file in stdout",
     facts(verifier_stdout="SHA256 mismatch: /app/Makefile differs from /orig/Makefile\n"),
     "zero", f.PROTECTED_FILE_MODIFIED, []),
    ("edit to a read-only file in the trajectory",
     facts(instruction=FLUX_INSTRUCTION, verifier_fields={"reward": 0.0, "metric": 0.41, "correctness": True},
           steps=[StepFacts(4, ["edit"], diff=diff_of("/app/train.sh")),
                  StepFacts(7, ["edit"], diff=diff_of("/app/evaluate.py"))]),
     "zero", f.PROTECTED_FILE_MODIFIED, [f.NO_IMPROVEMENT]),
    ("edit under a read-only folder",
     facts(instruction=FLUX_INSTRUCTION, steps=[StepFacts(9, ["edit"], edited_files=["/models/vae/ae.safetensors"])]),
     "zero", f.PROTECTED_FILE_MODIFIED, []),
    ("edit to a bare-named read-only file",
     facts(instruction=HASH_JOIN_INSTRUCTION, steps=[StepFacts(5, ["edit", "benchmark"], diff=diff_of("/app/Makefile"))]),
     "zero", f.PROTECTED_FILE_MODIFIED, []),
    ("edits to editable files only",
     facts(instruction=HASH_JOIN_INSTRUCTION, steps=[StepFacts(5, ["edit"], diff=diff_of("/app/solve.c"))]),
     "zero", f.NO_IMPROVEMENT, []),
    ("timeout, no artifact",
     facts(exception_type="AgentTimeoutError", exception_message="Agent execution timed out after 7200.0 seconds",
           agent_duration_sec=7200, verifier_fields={"reward": 0.0, "reason": "no_output"}),
     "zero", f.BUDGET_EXHAUSTED, [f.NO_ARTIFACT]),
    ("timeout, verifier measured a valid artifact",
     facts(exception_type="AgentTimeoutError", verifier_fields={"reward": 0.0, "correctness": True, "metric": 101.0}),
     "zero", f.NO_IMPROVEMENT, []),
    ("premature: valid artifact after 10 minutes, 1 benchmark call",
     facts(agent_duration_sec=600, n_benchmark_calls=1, verifier_fields={"reward": 0.0, "correctness": True, "metric": 99.0}),
     "zero", f.PREMATURE_TERMINATION, [f.NO_IMPROVEMENT]),
    ("no improvement: ran the clock, reward 0, correct",
     facts(verifier_fields={"reward": 0.0, "correctness": True, "metric": 100.2, "speedup": 0.99}),
     "zero", f.NO_IMPROVEMENT, []),
    ("a benign status is not a reason",
     facts(verifier_fields={"reward": 0.0, "status": "ok", "correctness": True}), "zero", f.NO_IMPROVEMENT, []),
    ("no improvement said by the verifier",
     facts(verifier_fields={"reward": 0.0, "reason": "no_improvement"}), "zero", f.NO_IMPROVEMENT, []),
    ("context length exceeded",
     facts(exception_type="ContextLengthExceededError", exception_message="prompt is too long", reward=None,
           verifier_fields={}), "no_reward", f.AGENT_ERROR, []),
    # A provider's fault is not the agent's: it is retried, then left out of the figures (issue 15).
    ("litellm rate limit",
     facts(exception_type="litellm.RateLimitError", exception_message="429", reward=None, verifier_fields={}),
     "infra_error", f.INFRASTRUCTURE_ERROR, []),
    ("a wrong API key",
     facts(exception_type="litellm.AuthenticationError", exception_message="Missing credentials", reward=None,
           verifier_fields={}, steps=[]), "infra_error", f.CONFIGURATION_ERROR, []),
    ("an unknown model, said only in the message",
     facts(exception_type="RuntimeError", exception_message="litellm.NotFoundError: model_not_found", reward=None,
           verifier_fields={}, steps=[]), "infra_error", f.CONFIGURATION_ERROR, []),
    ("unknown exception type whose message names the provider",
     facts(exception_type="RuntimeError", exception_message="litellm.BadRequestError: invalid json in response",
           reward=None, verifier_fields={}), "no_reward", f.AGENT_ERROR, []),
    # The agent's code ended its own sandbox: the name says "Sandbox", the cause is the agent's.
    ("the agent killed every process of its sandbox",
     facts(exception_type="SandboxEndedByAgentError", exception_message="the agent's code ended its sandbox: every "
           "process in it was killed", reward=None, verifier_fields={}), "no_reward", f.SANDBOX_ENDED, []),
    ("environment failed to start",
     facts(exception_type="EnvironmentStartTimeoutError", reward=None, verifier_fields={}, agent_duration_sec=None,
           steps=[]), "infra_error", f.INFRASTRUCTURE_ERROR, []),
    ("sandbox build failed",
     facts(exception_type="SandboxBuildFailedError", exception_message="image build failed", reward=None,
           verifier_fields={}), "infra_error", f.INFRASTRUCTURE_ERROR, []),
    ("verifier timeout",
     facts(exception_type="VerifierTimeoutError", reward=None, verifier_fields={}), "no_reward", f.VERIFIER_ERROR, []),
    ("a shared verifier's timeout: the agent's sandbox, where anything may be at fault",
     facts(exception_type="VerifierTimeoutError", verifier_mode="shared", reward=None, verifier_fields={}),
     "no_reward", f.VERIFIER_ERROR, []),
    # Sealed grading: a fresh environment given only the agent's artifacts; the time went to the agent's code.
    ("a separate verifier's timeout",
     facts(exception_type="VerifierTimeoutError", exception_message="Verifier execution timed out after 15.0 seconds",
           verifier_mode="separate", reward=None, verifier_fields={}), "no_reward", f.CANDIDATE_TIMEOUT, []),
    ("the verifier says the candidate ran out of time",
     facts(verifier_fields={"reward": 0.0, "reason": "candidate_timeout", "error": "ran out of time"}),
     "zero", f.CANDIDATE_TIMEOUT, []),
    ("the verifier says the candidate left processes running (a fork bomb)",
     facts(verifier_fields={"reward": 0.0, "reason": "candidate_left_processes",
                            "error": "the candidate left 128 processes running (its limit: 128)"}),
     "zero", f.GRADING_DISRUPTED, []),
    # Outside the candidate: the verifier's environment did not start, or the verifier failed on its own.
    ("a separate verifier whose environment did not start",
     facts(exception_type="EnvironmentStartTimeoutError", exception_message="Verifier environment start timed out "
           "after 120 seconds", verifier_mode="separate", reward=None, verifier_fields={}),
     "infra_error", f.INFRASTRUCTURE_ERROR, []),
    ("a separate verifier that left no reward file",
     facts(exception_type="RewardFileNotFoundError", verifier_mode="separate", reward=None, verifier_fields={}),
     "no_reward", f.VERIFIER_ERROR, []),
    ("the verifier says it failed (test.sh: verify.py left no reward)",
     facts(verifier_fields={"reward": 0.0, "reason": "verifier_failed",
                            "error": "verify.py exited with status 1 and wrote no reward"}), "zero", f.VERIFIER_ERROR, []),
    ("reward file missing",
     facts(exception_type="RewardFileNotFoundError", reward=None, verifier_fields={}), "no_reward", f.VERIFIER_ERROR, []),
    ("reward file unparseable",
     facts(exception_type="VerifierOutputParseError", reward=None, verifier_fields={}), "no_reward", f.VERIFIER_ERROR, []),
    ("an unexplained reason is not guessed",
     facts(verifier_fields={"reward": 0.0, "reason": "quota_policy_7"}), "zero", f.UNKNOWN, []),
    ("an unexplained error line is not guessed",
     facts(verifier_stdout="ERROR: something odd happened\n"), "zero", f.UNKNOWN, []),
    ("no reward and no exception is not guessed",
     facts(reward=None, verifier_fields={}), "no_reward", f.UNKNOWN, []),
]  # fmt: skip


@pytest.mark.parametrize("name, given, outcome, cause, secondary", CASES, ids=[c[0] for c in CASES])
def test_cause_table(name, given, outcome, cause, secondary):
    result = classify(given)
    assert (result.outcome, result.cause) == (outcome, cause)
    assert set(secondary) <= set(result.secondary)
    assert cause not in result.secondary
    if cause != f.UNKNOWN:
        # The primary cause always comes with its evidence.
        assert any(e["cause"] == cause and e["text"] for e in result.evidence)


def test_every_cause_has_a_row_a_case_and_a_name():
    table_causes = {rule.cause for rule in f.RULES}
    assert table_causes | {f.UNKNOWN} == set(f.CAUSES) == set(f.CAUSE_HELP)
    assert {case[3] for case in CASES} == set(f.CAUSES)


def test_priority_is_the_table_order():
    # A timeout that also left a modified protected file: the rule violation wins.
    given = facts(exception_type="AgentTimeoutError", verifier_fields={"reward": 0.0, "reason": "build_file_modified"})
    result = classify(given)
    assert result.cause == f.PROTECTED_FILE_MODIFIED
    assert result.secondary == [f.BUDGET_EXHAUSTED]
    order = [rule.cause for rule in f.RULES]
    assert order.index(f.INFRASTRUCTURE_ERROR) < order.index(f.BUDGET_EXHAUSTED) < order.index(f.NO_ARTIFACT)
    assert order.index(f.NO_ARTIFACT) < order.index(f.PREMATURE_TERMINATION) < order.index(f.NO_IMPROVEMENT)


def test_edit_evidence_points_at_the_step():
    given = facts(instruction=FLUX_INSTRUCTION, steps=[StepFacts(7, ["edit"], diff=diff_of("/app/evaluate.py"))])
    evidence = [e for e in classify(given).evidence if e["cause"] == f.PROTECTED_FILE_MODIFIED]
    assert evidence == [
        {
            "kind": "step",
            "text": "step 7 edited app/evaluate.py, which the instruction marks read-only (/app/evaluate.py)",
            "step_id": 7,
            "cause": f.PROTECTED_FILE_MODIFIED,
        }
    ]


@pytest.mark.parametrize(
    "unused, calls, thresholds, premature",
    [
        (0.9, 2, Thresholds(), True),
        (0.9, 3, Thresholds(), False),
        (0.5, 0, Thresholds(), False),  # exactly half left is not "more than half"
        (0.6, 0, Thresholds(), True),
        (0.6, 0, Thresholds(premature_unused_fraction=0.7), False),
        (0.9, 5, Thresholds(premature_max_benchmark_calls=5), True),
    ],
)
def test_premature_thresholds(unused, calls, thresholds, premature):
    given = facts(agent_duration_sec=7200 * (1 - unused), n_benchmark_calls=calls)
    assert (f.PREMATURE_TERMINATION in [classify(given, thresholds).cause]) is premature


def test_premature_uses_stored_budget_fraction_when_durations_are_missing():
    given = facts(agent_duration_sec=None, budget_used_fraction=0.1, n_benchmark_calls=0)
    assert classify(given).cause == f.PREMATURE_TERMINATION
    evidence = [e for e in classify(given).evidence if e["cause"] == f.PREMATURE_TERMINATION]
    assert evidence[0]["step_id"] == 3  # the submit step
    assert "10%" in evidence[0]["text"]


def test_crashed_agent_is_not_premature():
    given = facts(agent_duration_sec=300, n_benchmark_calls=0, exception_type="ContextLengthExceededError",
                  reward=None, verifier_fields={})  # fmt: skip
    result = classify(given)
    assert result.cause == f.AGENT_ERROR and f.PREMATURE_TERMINATION not in result.secondary


# Outcomes and behaviour flags ----------------------------------------------------


@pytest.mark.parametrize(
    "given, outcome, flags",
    [
        (facts(status="running", reward=None), "running", []),
        (facts(status="queued", reward=None), "running", []),
        (facts(status="cancelled", reward=None), "cancelled", []),
        (facts(reward=0.7, verifier_fields={"reward": 0.7}), "scored", []),
        (facts(reward=0.7, exception_type="AgentTimeoutError"), "scored", [f.TIMED_OUT_BUT_SCORED]),
        (facts(reward=0.7, n_benchmark_calls=0), "scored", [f.NEVER_CALLED_BENCHMARK]),
        (facts(reward=0.5, best_score=0.8), "scored", [f.REGRESSED_AFTER_BEST]),
        (facts(reward=0.79, best_score=0.8), "scored", []),  # within the noise tolerance
        (
            facts(reward=0.5, curve=[{"step": 3, "metric": 10.0, "best_metric": 10.0}, {"step": 5, "metric": 12.0, "best_metric": 10.0}]),
            "scored",
            [f.REGRESSED_AFTER_BEST],
        ),
        (
            facts(reward=0.5, curve=[{"step": 3, "metric": 12.0, "best_metric": 12.0}, {"step": 5, "metric": 10.0, "best_metric": 10.0}]),
            "scored",
            [],
        ),
    ],
)
def test_outcomes_and_flags(given, outcome, flags):
    result = classify(given)
    assert result.outcome == outcome
    assert result.flags == flags
    if outcome in ("scored", "running", "cancelled"):
        assert (result.cause, result.secondary, result.evidence) == ("", [], [])


# Reading the instruction -------------------------------------------------------


@pytest.mark.parametrize(
    "instruction, read_only, editable",
    [
        (FLUX_INSTRUCTION, ["/app/evaluate.py", "/app/eval_prompts.txt", "/models/"], ["/app/train.sh", "/app/dataset.toml"]),
        (HASH_JOIN_INSTRUCTION, ["/app/main.c", "/app/Makefile", "Makefile"], ["/app/solve.c"]),
        ("- Edit `/app/src/solve.rs` only. Do not modify `src/main.rs`, `Cargo.toml`, or anything under `/tests/`.",
         ["src/main.rs", "Cargo.toml", "/tests/"], ["/app/src/solve.rs"]),
        ("| Function signature | `/app/solve.h` (read-only) |\n| Editable | `/app/solve.cu` |", ["/app/solve.h"], ["/app/solve.cu"]),
        ("Editable: `/app/train.py`, `/app/rewards.py`\n\n- Do NOT modify `/orig/`, or `/models/`",
         ["/orig/", "/models/"], ["/app/train.py", "/app/rewards.py"]),
        # Names no file: nothing is assumed.
        ("- Do not modify tokenizer, evaluation scripts, or test data", [], []),
        # "Everything except X is read-only" must not protect X.
        ("Everything except `/app/solve.c` is read-only.", [], []),
        ("Do not use `numpy`; run `python3 /app/evaluate.py` to score.", [], []),
    ],
)  # fmt: skip
def test_instruction_paths(instruction, read_only, editable):
    assert f.read_only_paths(instruction) == read_only
    assert f.editable_paths(instruction) == editable


@pytest.mark.parametrize(
    "edited, rule, matches",
    [
        ("/app/Makefile", "Makefile", True),
        ("app/Makefile", "/app/Makefile", True),
        ("/app/solve.c", "/app/solve.h", False),
        ("/models/vae/ae.safetensors", "/models/", True),
        ("/app/models/x", "/models/", False),
        ("/app/tests/t.py", "tests/", True),
        ("/app/MyMakefile", "Makefile", False),
    ],
)
def test_path_matching(edited, rule, matches):
    assert (f.protected_match(edited, [rule]) is not None) is matches


@pytest.mark.parametrize(
    "exception_type, message, family",
    [
        ("AgentTimeoutError", "", "timeout"),
        ("VerifierTimeoutError", "", "verifier"),
        ("RewardFileEmptyError", "", "verifier"),
        ("EnvironmentStartTimeoutError", "", "infrastructure"),
        ("AgentSetupTimeoutError", "", "infrastructure"),
        ("DockerException", "", "infrastructure"),
        ("RuntimeError", "docker: no space left on device", "infrastructure"),
        ("OutputLengthExceededError", "", "agent"),
        ("litellm.exceptions.ServiceUnavailableError", "", "provider"),
        ("ApiOverloadedError", "", "provider"),
        ("RateLimitError", "429", "provider"),
        ("RuntimeError", "upstream answered 503", "provider"),
        ("AuthenticationError", "", "configuration"),
        ("MissingModelCredentialError", "", "configuration"),
        ("BadRequestError", "", "configuration"),
        ("RunnerConfigError", "", "configuration"),
        ("NeedsContainerBackend", "", "configuration"),
        ("RuntimeError", "Missing credentials. Please pass an `api_key`", "configuration"),
        # litellm's wording when no key was given at all: a configuration mistake, not a passing fault (issue 46).
        ("litellm.InternalServerError", "InternalServerError: OpenAIException - Missing credentials. Please pass an "
         "`api_key`, `workload_identity`, `admin_api_key`, or set the `OPENAI_API_KEY`", "configuration"),
        ("InternalServerError", "upstream answered 500", "provider"),
        ("ContextLengthExceededError", "", "agent"),
        ("RuntimeError", "maximum context length is 200000 tokens", "agent"),
        ("KeyError", "'foo'", ""),
        ("", "", ""),
    ],
)
def test_exception_families(exception_type, message, family):
    assert f.exception_family(exception_type, message) == family


@pytest.mark.parametrize("fields, cause", [
    ({"reward": 0.0, "reason": "candidate_timeout", "error": "ran out of time"}, f.CANDIDATE_TIMEOUT),
    ({"reward": 0.0, "reason": "candidate_left_processes", "error": "the candidate left 3 processes running"},
     f.GRADING_DISRUPTED),
])
def test_a_candidate_the_verifier_gave_up_on_is_that_alone(fields, cause):
    """Not also wrong, not also a verifier error: the verifier's reason and its words are the evidence."""
    result = classify(facts(verifier_fields=fields))
    assert (result.cause, result.secondary) == (cause, [])
    assert [e["text"] for e in result.evidence] == [f"reason: {fields['reason']}", f"error: {fields['error']}"]


def test_a_separate_verifiers_timeout_is_the_agents_and_says_why():
    result = classify(facts(exception_type="VerifierTimeoutError", exception_message="Verifier execution timed out "
                            "after 15.0 seconds", verifier_mode="separate", reward=None, verifier_fields={}))
    assert result.cause == f.CANDIDATE_TIMEOUT and f.VERIFIER_ERROR not in result.secondary
    assert result.cause not in f.NOT_THE_AGENTS and result.outcome == "no_reward"
    assert [e["text"] for e in result.evidence if e["cause"] == f.CANDIDATE_TIMEOUT] == [
        "VerifierTimeoutError: Verifier execution timed out after 15.0 seconds (a separate verifier: a fresh "
        "environment given only the agent's artifacts)"]


# The real shared trials, read straight from their files -------------------------


def facts_from_trial_dir(folder: Path, instruction: str = "", budget_sec: float | None = None) -> RolloutFacts:
    """The facts a trial folder holds, without the importer (steps carry no kinds)."""
    result = json.loads((folder / "result.json").read_text())
    reward_file = folder / "verifier" / "reward.json"
    fields = json.loads(reward_file.read_text()) if reward_file.exists() else {}
    stdout_file = folder / "verifier" / "test-stdout.txt"
    execution = result.get("agent_execution") or {}
    duration = None
    if execution.get("started_at") and execution.get("finished_at"):
        start, end = (datetime.fromisoformat(execution[k].replace("Z", "+00:00")) for k in ("started_at", "finished_at"))
        duration = (end - start).total_seconds()
    exception = result.get("exception_info") or {}
    trajectory_file = folder / "agent" / "trajectory.json"
    steps = json.loads(trajectory_file.read_text())["steps"] if trajectory_file.exists() else []
    submit_ids = {
        s["step_id"] for s in steps if any(c.get("function_name") == "mark_task_complete" for c in s.get("tool_calls") or [])
    }
    reward = fields.get("reward") if isinstance(fields.get("reward"), (int, float)) else None
    return RolloutFacts(
        status="finished",
        reward=reward,
        verifier_fields=fields,
        verifier_stdout=stdout_file.read_text() if stdout_file.exists() else "",
        exception_type=exception.get("exception_type", ""),
        exception_message=exception.get("exception_message", ""),
        budget_sec=budget_sec,
        agent_duration_sec=duration,
        instruction=instruction,
        steps=[StepFacts(s["step_id"], ["submit"] if s["step_id"] in submit_ids else []) for s in steps],
    )


def shared_trial(trials_dir: Path, prefix: str) -> Path:
    matches = sorted(p for p in trials_dir.iterdir() if p.name.startswith(prefix))
    assert matches, f"no {prefix}* trial under {trials_dir}"
    return matches[0]


@pytest.mark.shared
def test_shared_grok_rollout_left_no_artifact(shared_trials_dir, shared_tasks_dir):
    instruction = (shared_tasks_dir / "flux2_klein_lora" / "instruction.md").read_text()
    given = facts_from_trial_dir(shared_trial(shared_trials_dir, "grok4.20__"), instruction, budget_sec=14400)
    result = classify(given)
    assert (result.outcome, result.cause) == ("zero", f.NO_ARTIFACT)
    assert {"kind": "verifier", "text": "reason: no_lora_file", "step_id": None, "cause": f.NO_ARTIFACT} in result.evidence
    # It also stopped after 11 of its 240 minutes.
    assert f.PREMATURE_TERMINATION in result.secondary


@pytest.mark.shared
def test_shared_opus_rollout_scored(shared_trials_dir, shared_tasks_dir):
    instruction = (shared_tasks_dir / "flux2_klein_lora" / "instruction.md").read_text()
    result = classify(facts_from_trial_dir(shared_trial(shared_trials_dir, "opus4.6__"), instruction, budget_sec=14400))
    assert (result.outcome, result.cause, result.secondary, result.evidence) == ("scored", "", [], [])


# Hand-made trial folders, through the importer ------------------------------------

TRIALS = Path(__file__).parent / "trials" / "failures"

HASH_JOIN_TASK_INSTRUCTION = HASH_JOIN_INSTRUCTION + """
## Evaluation

```bash
make && ./bench
```
"""

# folder -> (outcome, primary cause, secondary causes that must be present)
TRIAL_CASES = {
    "no_artifact": ("zero", f.NO_ARTIFACT, []),
    "build_failed": ("zero", f.BUILD_FAILED, [f.CORRECTNESS_FAILED]),
    "correctness_failed": ("zero", f.CORRECTNESS_FAILED, []),
    "nondeterministic": ("zero", f.NONDETERMINISTIC, []),
    "protected_by_verifier": ("zero", f.PROTECTED_FILE_MODIFIED, []),
    "protected_by_edit": ("zero", f.PROTECTED_FILE_MODIFIED, [f.NO_IMPROVEMENT]),
    "premature_termination": ("zero", f.PREMATURE_TERMINATION, [f.NO_IMPROVEMENT]),
    "budget_exhausted": ("zero", f.BUDGET_EXHAUSTED, [f.NO_ARTIFACT]),
    "no_improvement": ("zero", f.NO_IMPROVEMENT, []),
    "agent_error": ("no_reward", f.AGENT_ERROR, []),
    # Graded in a fresh sandbox after its own was ended: the zero is the agent's, never retried.
    "sandbox_ended": ("zero", f.SANDBOX_ENDED, [f.NO_IMPROVEMENT]),
    "infrastructure_error": ("infra_error", f.INFRASTRUCTURE_ERROR, []),
    "configuration_error": ("infra_error", f.CONFIGURATION_ERROR, []),
    "verifier_error": ("no_reward", f.VERIFIER_ERROR, []),
    # result.json: a separate verifier (sealed grading) that ran out of time.
    "candidate_timeout": ("no_reward", f.CANDIDATE_TIMEOUT, []),
    "grading_disrupted": ("zero", f.GRADING_DISRUPTED, []),
    "unknown": ("zero", f.UNKNOWN, []),
    "scored_after_timeout": ("scored", "", []),
}


@pytest.fixture
def imported_trials(db):
    """Every folder under trials/failures imported for a registered hash_join task."""
    from tasks.models import BenchmarkVersion, Task
    from trajectories.models import Rollout
    from trajectories.services import import_path

    version, _ = BenchmarkVersion.objects.get_or_create(name="1.1")
    Task.objects.create(
        version=version, name="hash_join", category="system_optimization", metric="time_ms", direction="lower",
        baseline_score=5.0, reference_score=1.0, budget_sec=7200, instruction=HASH_JOIN_TASK_INSTRUCTION,
        benchmark_pattern=r"\./bench",
    )  # fmt: skip
    report = import_path(TRIALS, version="1.1")
    assert report.ok, report.as_dict()
    return {r.trial_name.rsplit("__", 1)[1]: r for r in Rollout.objects.select_related("task")}


def test_trial_folders_cover_every_cause():
    assert sorted(p.name for p in TRIALS.iterdir()) == sorted(TRIAL_CASES)
    assert {cause for _, cause, _ in TRIAL_CASES.values()} - {""} == set(f.CAUSES)


@pytest.mark.parametrize("name", sorted(TRIAL_CASES))
def test_trial_folder_causes(imported_trials, name):
    outcome, cause, secondary = TRIAL_CASES[name]
    rollout = imported_trials[name]
    assert (rollout.outcome, rollout.failure_cause) == (outcome, cause)
    assert set(secondary) <= set(rollout.failure_secondary)
    assert rollout.infra_error is (cause in f.NOT_THE_AGENTS)


def test_trial_folder_evidence(imported_trials):
    edit = [e for e in imported_trials["protected_by_edit"].failure_evidence if e["cause"] == f.PROTECTED_FILE_MODIFIED]
    assert len(edit) == 1 and edit[0]["kind"] == "step" and edit[0]["step_id"] == 3
    assert "Makefile" in edit[0]["text"]
    timeout = imported_trials["budget_exhausted"].failure_evidence[0]
    assert timeout == {
        "kind": "exception",
        "text": "AgentTimeoutError: Agent execution timed out after 7200.0 seconds",
        "step_id": None,
        "cause": f.BUDGET_EXHAUSTED,
    }
    assert imported_trials["scored_after_timeout"].behaviour_flags == [f.TIMED_OUT_BUT_SCORED]


# The shared real trials, through the importer --------------------------------------


@pytest.mark.shared
@pytest.mark.django_db
def test_shared_trials_through_the_importer(shared_tasks_dir, shared_trials_dir):
    from tasks.services import import_tasks
    from trajectories.models import Rollout
    from trajectories.services import import_path

    import_tasks(shared_tasks_dir, version="1.1")
    report = import_path(shared_trials_dir, version="1.1")
    assert report.ok, report.as_dict()
    grok = Rollout.objects.get(trial_name__endswith="dJkbgCB")
    assert (grok.outcome, grok.failure_cause) == ("zero", f.NO_ARTIFACT)
    assert {"kind": "verifier", "text": "reason: no_lora_file", "step_id": None, "cause": f.NO_ARTIFACT} in grok.failure_evidence
    assert grok.infra_error is False
    opus = Rollout.objects.get(trial_name__endswith="2TyoFTQ")
    assert (opus.outcome, opus.failure_cause, opus.failure_secondary, opus.failure_evidence) == ("scored", "", [], [])


def test_unknown_shows_what_was_seen_reasons_first():
    result = classify(facts(verifier_fields={"reward": 0.0, "reason": "quota_policy_7"}))
    assert result.cause == f.UNKNOWN
    assert [e["text"] for e in result.evidence] == ["reason: quota_policy_7", "reward: 0.0"]


@pytest.mark.django_db
def test_the_failures_page_groups_categories_by_benchmark(client):
    """RE-Bench's domains were listed among AutoLab's categories."""
    from tasks.models import BenchmarkVersion, Task

    autolab = BenchmarkVersion.objects.create(name="1.1")
    rebench = BenchmarkVersion.objects.create(name="rebench-1", benchmark="RE-Bench")
    Task.objects.create(version=autolab, name="join", category="system_optimization")
    Task.objects.create(version=rebench, name="rust", category="optimize_kernel")
    page = client.get("/failures/").content.decode()
    assert '<optgroup label="AutoLab"><option value="system_optimization">System optimization</option></optgroup>' in page
    assert '<optgroup label="RE-Bench"><option value="optimize_kernel">' in page
    only = client.get("/failures/?version=1.1").content.decode()
    assert "optimize_kernel" not in only.split('name="category"', 1)[1].split("</select>", 1)[0]


@pytest.mark.parametrize(
    "classified, reward, infra, outcome",
    [
        ("zero", 0.0, True, "infra_error"),  # labelled infrastructure error
        ("scored", 0.4, True, "infra_error"),
        ("no_reward", None, True, "infra_error"),
        ("infra_error", None, False, "no_reward"),  # labelled the agent's
        ("infra_error", 0.0, False, "zero"),
        ("infra_error", 0.3, False, "scored"),
        ("zero", 0.0, False, "zero"),
        ("running", None, True, "running"),  # not a cause's to change
        ("excluded", None, True, "excluded"),
        ("incomplete", None, True, "incomplete"),
        ("cancelled", None, True, "cancelled"),
    ],
)
def test_labelled_outcome(classified, reward, infra, outcome):
    from trajectories.failures.rules import labelled_outcome

    assert labelled_outcome(classified, reward, infra) == outcome


@pytest.mark.django_db
def test_the_failures_page_offers_each_category_once_by_its_label(client):
    """Three categories were listed twice (two AutoLab-style benchmarks) and RE-Bench's as raw ids."""
    from tasks.models import BenchmarkVersion, Task

    for name, benchmark in (("1.1", "AutoLab"), ("synthetic", "Synthetic"), ("rebench-1", "RE-Bench")):
        version = BenchmarkVersion.objects.create(name=name, benchmark=benchmark)
        Task.objects.create(version=version, name=f"{name}-a", category="system_optimization")
        Task.objects.create(version=version, name=f"{name}-b", category="cuda" if benchmark != "RE-Bench" else "scaling_law")
    Task.objects.create(version=BenchmarkVersion.objects.get(name="rebench-1"), name="k", category="optimize_kernel")
    page = client.get("/failures/").content.decode()
    select = page.split('name="category"', 1)[1].split("</select>", 1)[0]
    assert select.count('value="system_optimization"') == 1 and select.count('value="cuda"') == 1
    assert '<option value="optimize_kernel">Optimize kernel</option>' in select
    assert '<option value="scaling_law">Scaling law</option>' in select
    assert ">optimize_kernel<" not in select and ">scaling_law<" not in select


@pytest.mark.django_db
def test_behaviour_flags_are_shown_by_name_with_their_meaning(client):
    """Flags showed as raw ids (`regressed_after_best`) with nothing to say what they mean."""
    from trajectories.tests import factories

    factories.make_rollout(reward=0.0, outcome="zero", failure_cause=f.NO_IMPROVEMENT,
                           behaviour_flags=[f.REGRESSED_AFTER_BEST, f.NEVER_CALLED_BENCHMARK])
    page = client.get("/failures/").content.decode()
    assert ('<span class="badge" title="Finished worse than its best-so-far" data-flag="regressed_after_best">'
            "Regressed after its best</span>") in page
    assert ">regressed_after_best<" not in page and ">never_called_benchmark<" not in page
    assert "<dt>Never ran the benchmark</dt><dd>Never ran the local benchmark.</dd>" in page
    rollouts = client.get("/rollouts/").content.decode()
    assert '<option value="regressed_after_best" title="Finished worse than its best-so-far">Regressed after its best</option>' in rollouts
    assert "<td>No improvement</td>" in rollouts
