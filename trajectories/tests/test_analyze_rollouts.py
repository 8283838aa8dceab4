"""analyze_rollouts end to end: a stub judge (a real HTTP server) reads the real shared trials through litellm.

The stub answers a verdict for the zero-score grok rollout, malformed JSON
for the scored opus one, and errors when told to: each rollout's review is
stored (or failed, with the reason) through trajectories.reviews, and no
rollout's failure stops the batch.
"""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from agents.models import AgentModel
from trajectories.analysis.judge_rubric import load_rubric
from trajectories.models import Review
from trajectories.tests import factories
from trajectories.tests.stub_judge import COMPLETION_TOKENS, PROMPT_TOKENS, Rule, StubJudge

pytestmark = pytest.mark.django_db

CRITERIA = load_rubric().names


def verdict(failing: dict[str, list[int]]) -> str:
    checks = {
        name: {"outcome": "fail" if name in failing else "pass", "explanation": f"why {name}", "steps": failing.get(name, [])}
        for name in CRITERIA
    }
    return json.dumps({"summary": "The agent trained once and stopped.", "checks": checks})


@pytest.fixture
def shared(shared_tasks_dir, shared_trials_dir):
    return factories.import_shared_rollouts(shared_tasks_dir, shared_trials_dir)


@pytest.fixture
def stub():
    judge = StubJudge().start()
    yield judge
    judge.stop()


@pytest.fixture
def judge_model(stub):
    return AgentModel.objects.create(
        name="stub-judge", litellm_model="openai/stub-judge", api_base=stub.api_base, is_judge=True,
        sampling_params={"api_key": "stub-needs-no-key"}, input_usd_per_mtok=3.0, output_usd_per_mtok=15.0,
    )


def run(*args: str) -> str:
    out = StringIO()
    call_command("analyze_rollouts", *args, stdout=out)
    return out.getvalue()


def test_a_verdict_and_a_malformed_answer_on_the_real_trials(shared, stub, judge_model):
    grok, opus = shared["grok"], shared["opus"]
    assert grok.reward == 0.0 and opus.reward > 0.5
    stub.rules = [
        # Step 999999 is in no trajectory: dropped, not linked to nothing.
        Rule("Reward: 0\n", verdict({"premature_stop": [3, 999999], "budget_misjudged": [5]})),
        Rule("Reward: 0.9102", '{"summary": "cut off mid-answer", "checks": {'),
    ]
    out = run("--judge", "stub-judge", str(grok.pk), str(opus.pk))

    read = Review.objects.get(rollout=grok, source="judge")
    assert read.state == "done" and read.judge == "stub-judge" and read.rubric == "autolab-default"
    assert read.summary == "The agent trained once and stopped."
    checks = {c.name: (c.outcome, c.steps) for c in read.checks.all()}
    assert list(checks) == list(CRITERIA)
    assert checks["premature_stop"] == ("fail", [3]) and checks["budget_misjudged"] == ("fail", [5])
    assert checks["reward_hacking"] == ("pass", [])
    assert (read.tokens_in, read.tokens_out) == (PROMPT_TOKENS, COMPLETION_TOKENS)
    assert read.cost_usd == pytest.approx((PROMPT_TOKENS * 3.0 + COMPLETION_TOKENS * 15.0) / 1e6)

    refused = Review.objects.get(rollout=opus, source="judge")
    assert refused.state == "failed" and "not JSON" in refused.error and not refused.checks.exists()
    assert refused.tokens_in == PROMPT_TOKENS  # a refused answer was still paid for
    assert "2 rollouts: 1 read, 0 already read, 1 failed" in out

    # What the judge was sent: the rubric, the compressed trajectory with step numbers, within the budget.
    sent = stub.requests[0]
    assert sent["model"] == "stub-judge" and sent["max_tokens"] > 0
    user = sent["messages"][1]["content"]
    assert "## premature_stop" in user and "Task: flux2_klein_lora" in user and "## step " in user
    assert len(user) / 4 < 30_000


def test_cached_unless_replaced_and_the_default_is_the_failed_rollouts(shared, stub, judge_model, tmp_path):
    grok = shared["grok"]
    stub.rules = [Rule("Reward: 0\n", verdict({}))]
    assert "1 read" in run("--judge", "stub-judge")  # no ids: the failed rollouts, grok only
    assert len(stub.requests) == 1
    assert "already read" in run("--judge", "stub-judge", str(grok.pk))
    assert len(stub.requests) == 1  # cached: the judge was not asked again

    stub.rules = [Rule("Reward: 0\n", verdict({"ignored_feedback": [4]}))]
    run("--judge", "stub-judge", "--replace", str(grok.pk))
    review = Review.objects.get(rollout=grok, source="judge")
    assert review.checks.get(name="ignored_feedback").outcome == "fail"
    assert Review.objects.filter(rollout=grok).count() == 1

    # Another rubric is another review, the first one kept.
    other = tmp_path / "one.toml"
    other.write_text('[[criteria]]\nname = "only_one"\ndescription = "Is there one?"\n')
    stub.rules = [Rule("Reward: 0\n", json.dumps({"summary": "s", "checks": {"only_one": {"outcome": "not_applicable"}}}))]
    run("--judge", "stub-judge", "--rubric", str(other), str(grok.pk))
    assert Review.objects.filter(rollout=grok, source="judge", state="done").count() == 2


def test_an_http_error_and_a_timeout_fail_their_rollout_only(shared, stub, judge_model, settings):
    settings.AUTOLAB_JUDGE_TIMEOUT_SEC = 1
    grok, opus = shared["grok"], shared["opus"]
    stub.rules = [Rule("Reward: 0\n", "overloaded", status=500), Rule("Reward: 0.9102", verdict({}), delay=4)]
    out = StringIO()
    with pytest.raises(CommandError, match=r"every reading failed \(2\)"):  # it exited 0, as if all was well
        call_command("analyze_rollouts", "--judge", "stub-judge", str(opus.pk), str(grok.pk), stdout=out)
    assert "2 rollouts: 0 read, 0 already read, 2 failed" in out.getvalue()
    errors = dict(Review.objects.filter(source="judge").values_list("rollout_id", "error"))
    assert errors[grok.pk].startswith("the judge gave no answer:") and "overloaded" in errors[grok.pk]
    assert errors[opus.pk].startswith("the judge gave no answer:") and "imeout" in errors[opus.pk]

    # A failed reading is tried again without --replace, and a good answer replaces it.
    stub.rules = [Rule("Reward: 0\n", verdict({}))]
    run("--judge", "stub-judge", str(grok.pk))
    assert Review.objects.get(rollout=grok).state == "done"


def test_a_judge_that_cannot_be_used_refuses_the_request(shared, judge_model):
    with pytest.raises(CommandError, match="no model is registered as 'nobody'"):
        run("--judge", "nobody")
    with pytest.raises(CommandError, match="max-tokens"):
        run("--judge", "stub-judge", "--max-tokens", "10")
    with pytest.raises(CommandError, match="cannot be read"):
        run("--judge", "stub-judge", "--rubric", "/nonexistent/rubric.toml")
    assert not Review.objects.exists()
