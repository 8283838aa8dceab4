"""Migration 0033 masks the secrets of rows stored before imports masked them (issue 43), search words included."""
from __future__ import annotations

import pytest

from trajectories.storing.observation_text import compress

from . import planted_secrets

BEFORE = [("trajectories", "0034_rollout_verifier_mode")]
AFTER = [("trajectories", "0035_mask_stored_secrets")]


def old_rows(apps):
    """A rollout as a database before 0033 held it: every text column with the planted secrets, its search words built."""
    from trajectories.search.query import rebuild_documents

    get = apps.get_model
    block = planted_secrets.block()
    task = get("tasks", "Task").objects.create(version=get("tasks", "BenchmarkVersion").objects.create(name="9.9"), name="old_task")
    rollout = get("trajectories", "Rollout").objects.create(
        task=task, model=get("agents", "AgentModel").objects.create(name="old-model"),
        harness=get("agents", "Harness").objects.create(name="h"), trial_name="old", job_id="job-old",
        exception_message=block, exception_traceback=block, verifier_stdout=block, status_reason=block[:1000],
        verifier_fields={"reward": 0.0, "reason": block, "api_key": f"{planted_secrets.REWARD_SECRET}abc"},
        config={"agent": {"env": {"OPENAI_API_KEY": f"{planted_secrets.ENV_SECRET}abc"}}},
        validation_warnings=[block], failure_evidence=[{"step": 1, "text": block}],
    )
    step = get("trajectories", "Step")
    main = step.objects.create(rollout=rollout, position=0, step_id=1, source="agent", message=block, reasoning=block)
    get("trajectories", "ToolCall").objects.create(step=main, position=0, function_name="bash_command", arguments={"keystrokes": block})
    # A cut output: its row keeps a head and a tail, the whole (the secrets in its middle) is compressed apart.
    whole = "head line\n" * 50 + block + "\ntail line" * 50
    observation = get("trajectories", "Observation").objects.create(
        step=main, position=0, content=whole[:300] + whole[-300:], cut_at=300, full_length=len(whole),
    )
    get("trajectories", "ObservationText").objects.create(observation=observation, data=compress(whole))
    get("trajectories", "Observation").objects.create(step=main, position=1, content=block)
    sub = get("trajectories", "SubTrajectory").objects.create(rollout=rollout, name="summary", raw={"note": block})
    sub_step = step.objects.create(rollout=rollout, subtrajectory=sub, position=0, step_id=1, source="agent", message=block)
    get("trajectories", "ToolCall").objects.create(step=sub_step, position=0, function_name="bash", arguments={"cmd": block})
    get("trajectories", "RolloutEvent").objects.create(rollout=rollout, status="failed", detail=block)
    get("trajectories", "Grade").objects.create(rollout=rollout, kind="regrade", message=block, verifier_stdout=block)
    review = get("trajectories", "Review").objects.create(rollout=rollout, source="harbor", summary=block, error=block)
    get("trajectories", "ReviewCheck").objects.create(review=review, name="c", outcome="fail", explanation=block)
    get("trajectories", "JobReview").objects.create(job_id="job-old", summary=block)
    names = ("Step", "ToolCall", "Observation", "RolloutDocument", "StepChunk")
    rebuild_documents([rollout.pk], models=tuple(get("trajectories", name) for name in names))
    return rollout.pk, whole


@pytest.mark.django_db(transaction=True)
def test_stored_rows_and_search_words_lose_their_secrets(migrate):
    from trajectories.models import Grade, JobReview, Observation, Review, ReviewCheck, Rollout
    from trajectories.search import query as search

    apps = migrate(BEFORE)
    pk, whole = old_rows(apps)
    # Before: a secret is in the search words (the site's search itself reads columns later migrations add).
    words = str(apps.get_model("trajectories", "RolloutDocument").objects.get(rollout_id=pk).words).lower()
    assert planted_secrets.core(0).lower()[:12] in words, "before: a secret is in the search words"
    migrate(AFTER)
    # The rows as the site reads them now: later migrations add columns the models know, and change no text.
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    rollout = Rollout.objects.get(pk=pk)
    others = [
        *Grade.objects.values_list("message", "verifier_stdout"), *Review.objects.values_list("summary", "error"),
        *ReviewCheck.objects.values_list("explanation"), *JobReview.objects.values_list("summary"),
    ]
    assert planted_secrets.leaks(planted_secrets.stored_text(rollout) + repr(others)) == []
    for _, core in planted_secrets.all_cores():
        assert search.search(core).hits == []
    assert search.search("OPENAI_API_KEY").hits, "the words around a secret are still found"
    cut = Observation.objects.select_related("full_text").get(step__rollout=rollout, position=0, step__subtrajectory=None)
    assert cut.content.startswith("head line\n") and cut.content.endswith("tail line") and cut.cut_at == 300
    assert len(cut.content) == 600 and cut.full_length < len(whole)


@pytest.mark.django_db(transaction=True)
def test_rows_without_secrets_are_not_written(migrate):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    apps = migrate(BEFORE)
    get = apps.get_model
    task = get("tasks", "Task").objects.create(version=get("tasks", "BenchmarkVersion").objects.create(name="9.9"), name="t")
    rollout = get("trajectories", "Rollout").objects.create(
        task=task, model=get("agents", "AgentModel").objects.create(name="m"), harness=get("agents", "Harness").objects.create(name="h"),
        trial_name="clean", exception_message="max_tokens: 100 and a basic idea",
    )
    get("trajectories", "Step").objects.create(rollout=rollout, position=0, step_id=1, source="agent", message="python3 train.py --token-budget 5")
    with CaptureQueriesContext(connection) as queries:
        migrate(AFTER)
    assert not [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
