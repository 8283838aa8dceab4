"""The automatic checks, one table of cases, without a database."""
from __future__ import annotations

import pytest

from submissions import checks
from submissions.checks import CheckResult, Known, TrialFacts, VersionRules

DIGEST = "8d43ec4f2d0602a819b961da9112e6df69bcae4c51c9cd1d37f6ba071d01b894"
RULES = VersionRules(task_digests={"hash_join": DIGEST}, min_trials_per_task=2)


def trial(n: int, **fields) -> TrialFacts:
    base = dict(
        trial_name=f"hash_join__{n}", trial_id=f"id-{n}", task_name="hash_join", task_digest=DIGEST,
        multipliers={"timeout_multiplier": 1.0, "agent_timeout_multiplier": None}, overrides={},
        verifier_mode="separate", has_trajectory=True, trajectory_sha256=f"sha-{n}",
    )
    base.update(fields)
    return TrialFacts(**base)


def by_name(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {r.name: r for r in results}


def test_a_clean_submission_passes_every_check():
    results = checks.run_checks([trial(1), trial(2)], RULES)
    assert [r.name for r in results if not r.passed] == []
    assert len(results) == 8


@pytest.mark.parametrize("change, name, words", [
    ({"task_digest": "0" * 64}, checks.TASK_DIGEST, "the task differs from the version's"),
    ({"task_name": "other_task"}, checks.TASK_DIGEST, "tasks not in this benchmark version: other_task"),
    ({"task_digest": ""}, checks.TASK_DIGEST, "no task digest recorded"),
    ({"multipliers": {"timeout_multiplier": 2.0}}, checks.TIMEOUTS, "timeout_multiplier 2"),
    ({"multipliers": {"agent_timeout_multiplier": 1.5}}, checks.TIMEOUTS, "agent_timeout_multiplier 1.5"),
    ({"overrides": {"environment.override_cpus": 8}}, checks.TIMEOUTS, "environment.override_cpus 8"),
    ({"has_trajectory": False}, checks.TRAJECTORIES, "no agent trajectory"),
    ({"hacking_flags": ("failure rule: protected_file_modified",)}, checks.REWARD_HACKING, "protected_file_modified"),
    ({"error": "result.json: not JSON"}, checks.READABLE, "cannot be read"),
])
def test_each_rule_broken_blocks_with_its_reason(change, name, words):
    results = by_name(checks.run_checks([trial(1, **change), trial(2)], RULES))
    assert not results[name].passed and results[name].blocks
    assert words in results[name].reason
    assert "hash_join__1" in results[name].reason or name == checks.TASK_DIGEST and "other_task" in results[name].reason


def test_a_task_without_a_pinned_digest_or_imported_without_its_folders_is_named():
    unpinned = by_name(checks.run_checks([trial(1), trial(2)], VersionRules(task_digests={"hash_join": ""})))
    assert "records no Harbor digest for hash_join" in unpinned[checks.TASK_DIGEST].reason
    assert "manage.py import_tasks" in unpinned[checks.TASK_DIGEST].reason
    described = VersionRules(task_digests={"hash_join": "0" * 64}, description_only=frozenset({"hash_join"}))
    result = by_name(checks.run_checks([trial(1), trial(2)], described))[checks.TASK_DIGEST]
    assert result.blocks and "holds only the task.toml and instruction.md of hash_join" in result.reason
    # Its digest matching (the team ran those two files as the task) passes: the digest is all the check compares.
    assert by_name(checks.run_checks([trial(1), trial(2)], VersionRules(
        task_digests={"hash_join": DIGEST}, description_only=frozenset({"hash_join"}),
    )))[checks.TASK_DIGEST].passed


def test_a_shared_verifier_needs_a_regrade_but_does_not_block():
    result = by_name(checks.run_checks([trial(1, verifier_mode="shared"), trial(2)], RULES))[checks.VERIFIER_SEALED]
    assert not result.passed and result.requires_regrade and not result.blocks
    assert "must be regraded before it counts" in result.reason


def test_too_few_trials_per_task():
    result = by_name(checks.run_checks([trial(1)], RULES))[checks.TRIALS_PER_TASK]
    assert result.blocks and "fewer than 2 trials per task: hash_join (1)" in result.reason


@pytest.mark.parametrize("known, words", [
    (Known(trial_names=frozenset({"hash_join__1"})), "the same trial is already on the site"),
    (Known(trial_ids=frozenset({"id-1"})), "the same trial is already on the site"),
    (Known(trajectory_digests=frozenset({"sha-1"})), "an identical trajectory is already on the site"),
])
def test_duplicates_of_what_the_site_holds(known, words):
    result = by_name(checks.run_checks([trial(1), trial(2)], RULES, known))[checks.DUPLICATES]
    assert result.blocks and words in result.reason


def test_the_same_trajectory_twice_in_one_submission():
    result = by_name(checks.run_checks([trial(1), trial(2, trajectory_sha256="sha-1")], RULES))[checks.DUPLICATES]
    assert result.blocks and "sent twice" in result.reason


def test_no_trials_at_all():
    (result,) = checks.run_checks([], RULES)
    assert result.name == checks.READABLE and result.blocks


def test_a_task_named_with_its_library_prefix_is_the_versions_task():
    """Harbor trials name their task like "musubi-tuner__flux2_klein_lora"; the site's import takes the part after
    the last "__" (tasks.services.match_task), so the checks do too: the trial is judged by its digest, never
    called "not in this benchmark version"."""
    prefixed = [trial(1, task_name="lib__hash_join"), trial(2, task_name="lib__hash_join")]
    results = by_name(checks.run_checks(prefixed, RULES))
    assert results[checks.TASK_DIGEST].passed, results[checks.TASK_DIGEST].reason
    assert results[checks.TRIALS_PER_TASK].passed, results[checks.TRIALS_PER_TASK].reason
    missing = by_name(checks.run_checks([trial(1, task_name="lib__hash_join", task_digest=""), trial(2)], RULES))
    assert "no task digest recorded" in missing[checks.TASK_DIGEST].reason


def test_a_verifier_mode_not_recorded_is_said_so_not_called_shared():
    """Trials from before lock.json record no verifier mode: the reason says that, rather than that they were
    graded in the agent's own sandbox; either way they must be regraded before they count."""
    result = by_name(checks.run_checks([trial(1, verifier_mode=""), trial(2, verifier_mode="shared")], RULES))[checks.VERIFIER_SEALED]
    assert result.requires_regrade and not result.blocks
    assert "no verifier mode recorded (no lock.json): hash_join__1" in result.reason
    assert "graded in the agent's own sandbox, where the agent could write its reward: hash_join__2" in result.reason
    assert "must be regraded before it counts" in result.reason
