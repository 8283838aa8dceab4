"""The automatic checks of a submission: plain facts in, a list of `CheckResult` out (Django-free).

`services` reads the job folder into `TrialFacts` (through
`trajectories.services`, whose `harbor_lock` reads lock.json and config.json),
the version's rules into `VersionRules` and what the board already holds into
`Known`; each check here says passed or not, and why, in words shown to the
team and to staff. A check that fails blocks the submission, except the
verifier's mode: a run graded in the agent's own sandbox may be regraded,
sealed, and only then count (`requires_regrade`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from tasks.spec import name_candidates

SEPARATE = "separate"

# Names of the checks, in the order they are shown.
READABLE = "readable"
TASK_DIGEST = "task_digest"
TIMEOUTS = "timeouts_and_resources"
VERIFIER_SEALED = "verifier_sealed"
TRIALS_PER_TASK = "trials_per_task"
TRAJECTORIES = "trajectories"
REWARD_HACKING = "reward_hacking"
DUPLICATES = "duplicates"

MAX_NAMED = 5  # trials named in one reason, then "and N more"


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    reason: str
    # Failed, but mended by a sealed regrade rather than fatal: the submission stays checked, never self-reported.
    requires_regrade: bool = False

    @property
    def blocks(self) -> bool:
        return not self.passed and not self.requires_regrade

    def as_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "reason": self.reason, "requires_regrade": self.requires_regrade}


@dataclass(frozen=True)
class TrialFacts:
    """One submitted trial as the checks see it."""

    trial_name: str
    trial_id: str = ""
    task_name: str = ""
    task_digest: str = ""
    multipliers: dict[str, float | None] = field(default_factory=dict)
    overrides: dict[str, object] = field(default_factory=dict)
    verifier_mode: str = ""
    has_trajectory: bool = True
    trajectory_sha256: str = ""
    error: str = ""  # why it could not be read ("" when it was)
    hacking_flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class VersionRules:
    # Task name -> the digest the version pins: Harbor's of the task folder as imported (`Task.harbor_digest`),
    # as hex in the lock reader's form (`trajectories.services.digest_hex`), as `TrialFacts.task_digest` is.
    task_digests: dict[str, str]
    min_trials_per_task: int = 1
    # Tasks imported from their task.toml and instruction.md alone (no environment/ or tests/): their digest is of
    # those files, which no run of the full task matches.
    description_only: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Known:
    """What is already on the site: trial ids and names, and trajectory digests."""

    trial_ids: frozenset[str] = frozenset()
    trial_names: frozenset[str] = frozenset()
    trajectory_digests: frozenset[str] = frozenset()


def _named(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    return shown + (f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else "")


def run_checks(trials: list[TrialFacts], rules: VersionRules, known: Known = Known()) -> list[CheckResult]:
    """Every check on the submission's trials (an empty submission fails the first)."""
    if not trials:
        return [CheckResult(READABLE, False, "no Harbor trial folders found (each needs result.json or config.json)")]
    read = [replace(t, task_name=version_task_name(t.task_name, rules)) for t in trials if not t.error]
    results = [check_readable(trials)]
    results += [
        check_task_digests(read, rules),
        check_timeouts(read),
        check_verifier(read),
        check_trials_per_task(read, rules),
        check_trajectories(read),
        check_hacking(read),
        check_duplicates(read, known),
    ]
    return results


def version_task_name(trial_task_name: str, rules: VersionRules) -> str:
    """The version's name for a trial's task, as the site's import finds it (tasks.services.match_task: the whole
    name, then the part after the last "__"); the name as written when the version has neither."""
    found = [name for name in name_candidates(trial_task_name) if name in rules.task_digests]
    return found[0] if found else trial_task_name


def check_readable(trials: list[TrialFacts]) -> CheckResult:
    bad = [f"{t.trial_name}: {t.error}" for t in trials if t.error]
    if bad:
        return CheckResult(READABLE, False, f"{len(bad)} trial folders cannot be read: {_named(bad)}")
    return CheckResult(READABLE, True, f"{len(trials)} trial folders read")


def check_task_digests(trials: list[TrialFacts], rules: VersionRules) -> CheckResult:
    unknown = sorted({t.task_name for t in trials if t.task_name not in rules.task_digests})
    if unknown:
        return CheckResult(TASK_DIGEST, False, f"tasks not in this benchmark version: {_named(unknown)}")
    unpinned = sorted({t.task_name for t in trials if not rules.task_digests[t.task_name]})
    if unpinned:
        return CheckResult(
            TASK_DIGEST, False,
            f"the version records no Harbor digest for {_named(unpinned)}: staff must import its task folder again "
            "(manage.py import_tasks), which records it",
        )
    missing = [t.trial_name for t in trials if not t.task_digest]
    if missing:
        return CheckResult(TASK_DIGEST, False, f"no task digest recorded (lock.json or result.json) in {_named(missing)}")
    differing = [t for t in trials if t.task_digest != rules.task_digests[t.task_name]]
    described = sorted({t.task_name for t in differing if t.task_name in rules.description_only})
    if described:
        return CheckResult(
            TASK_DIGEST, False,
            f"the version holds only the task.toml and instruction.md of {_named(described)} (imported without "
            "environment/ and tests/), whose digest no run of the full task matches: staff must import the full task folder",
        )
    changed = [
        f"{t.trial_name} ({t.task_name}: {t.task_digest[:12]}, the version's {rules.task_digests[t.task_name][:12]})"
        for t in differing
    ]
    if changed:
        return CheckResult(TASK_DIGEST, False, f"the task differs from the version's: {_named(changed)}")
    return CheckResult(TASK_DIGEST, True, "every trial ran the version's task, digest for digest")


def check_timeouts(trials: list[TrialFacts]) -> CheckResult:
    problems = []
    for t in trials:
        changed = [f"{name} {value:g}" for name, value in sorted(t.multipliers.items()) if value is not None and value != 1.0]
        changed += [f"{name} {value}" for name, value in sorted(t.overrides.items())]
        if changed:
            problems.append(f"{t.trial_name} ({', '.join(changed)})")
    if problems:
        return CheckResult(
            TIMEOUTS, False, f"timeout multipliers must be 1 and nothing overridden (time, CPUs, memory, storage, GPUs): {_named(problems)}",
        )
    return CheckResult(TIMEOUTS, True, "every timeout multiplier is 1, no resource or timeout overridden")


def check_verifier(trials: list[TrialFacts]) -> CheckResult:
    shared = [f"{t.trial_name} ({t.verifier_mode})" for t in trials if t.verifier_mode and t.verifier_mode != SEPARATE]
    unknown = [t.trial_name for t in trials if not t.verifier_mode]
    if shared or unknown:
        # A trial from before lock.json records no mode: it may have been shared, never known to be sealed.
        why = ([f"graded in the agent's own sandbox, where the agent could write its reward: {_named(shared)}"] if shared else []) + (
            [f"no verifier mode recorded (no lock.json): {_named(unknown)}"] if unknown else [])
        return CheckResult(VERIFIER_SEALED, False, f"must be regraded before it counts: {'; '.join(why)}", requires_regrade=True)
    return CheckResult(VERIFIER_SEALED, True, "every trial was graded sealed (a separate verifier environment)")


def check_trials_per_task(trials: list[TrialFacts], rules: VersionRules) -> CheckResult:
    counts = Counter(t.task_name for t in trials)
    short = [f"{task} ({n})" for task, n in sorted(counts.items()) if n < rules.min_trials_per_task]
    if short:
        return CheckResult(
            TRIALS_PER_TASK, False, f"fewer than {rules.min_trials_per_task} trials per task: {_named(short)}",
        )
    return CheckResult(TRIALS_PER_TASK, True, f"at least {rules.min_trials_per_task} trials per task")


def check_trajectories(trials: list[TrialFacts]) -> CheckResult:
    missing = [t.trial_name for t in trials if not t.has_trajectory]
    if missing:
        return CheckResult(TRAJECTORIES, False, f"no agent trajectory (agent/trajectory.json or a harness log) in {_named(missing)}")
    return CheckResult(TRAJECTORIES, True, "every trial has its trajectory")


def check_hacking(trials: list[TrialFacts]) -> CheckResult:
    flagged = [f"{t.trial_name} ({', '.join(t.hacking_flags)})" for t in trials if t.hacking_flags]
    if flagged:
        return CheckResult(REWARD_HACKING, False, f"flagged for reward hacking: {_named(flagged)}")
    return CheckResult(REWARD_HACKING, True, "no reward-hacking flag from the failure rules or a review")


def check_duplicates(trials: list[TrialFacts], known: Known) -> CheckResult:
    dupes = []
    seen_ids: Counter = Counter(t.trial_id for t in trials if t.trial_id)
    seen_digests: Counter = Counter(t.trajectory_sha256 for t in trials if t.trajectory_sha256)
    for t in trials:
        if t.trial_name in known.trial_names or (t.trial_id and t.trial_id in known.trial_ids):
            dupes.append(f"{t.trial_name} (the same trial is already on the site)")
        elif t.trajectory_sha256 and t.trajectory_sha256 in known.trajectory_digests:
            dupes.append(f"{t.trial_name} (an identical trajectory is already on the site)")
        elif (t.trial_id and seen_ids[t.trial_id] > 1) or (t.trajectory_sha256 and seen_digests[t.trajectory_sha256] > 1):
            dupes.append(f"{t.trial_name} (sent twice in this submission)")
    if dupes:
        return CheckResult(DUPLICATES, False, f"duplicates: {_named(dupes)}")
    return CheckResult(DUPLICATES, True, "no trial or trajectory already on the site")
