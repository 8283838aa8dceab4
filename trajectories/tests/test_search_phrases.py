"""Search that finds phrases (issue 46): the rollouts holding a phrase first, in their verifier's output and trial log too.

"No LoRA file" found 16 steps holding the three words apart, the prompt
first, and not the verifier's output, where the phrase was.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from trajectories.search import query as search
from trajectories.services import store_trial_files

from . import factories

pytestmark = pytest.mark.django_db

URL = reverse("trajectories:search")
PROMPT = "You are an agent. No internet access. Train a LoRA and save it to a file under /app/output."


def where(hits):
    return [(h.rollout_id, h.where) for h in hits]


@pytest.fixture
def lora():
    """Two rollouts of the same task: one whose words are only apart, one whose verifier printed the phrase."""
    apart = factories.make_rollout(verifier_stdout="Checking LoRA output...\nLoRA valid: 336 tensors\nreward 0.41")
    factories.add_step(apart, 1, source="user", message=PROMPT)
    factories.add_step(apart, 2, message="No GPU yet; the LoRA config is in a file I wrote.", commands=["ls /app\n"])
    factories.add_step(apart, 3, outputs=["No such file or directory: lora.toml"])
    holding = factories.make_rollout(
        task=apart.task,
        reward=0.0,
        verifier_stdout="[Step 1/4] Checking LoRA output...\nERROR: No LoRA file found at /app/output/lora.safetensors\n",
        verifier_fields={"reward": 0.0, "reason": "no_lora_file"},
    )
    factories.add_step(holding, 1, source="user", message=PROMPT)
    factories.add_step(holding, 2, message="Training is slow.", commands=["python3 train.py\n"])
    return apart, holding


@pytest.mark.parametrize("q", ["No LoRA file", '"No LoRA file"', "no lora file"])
def test_a_phrase_in_the_verifiers_output_ranks_its_rollout_first(lora, q):
    apart, holding = lora
    hits = search.search_steps(q)
    assert where(hits)[0] == (holding.pk, "verifier")
    assert hits[0].rank == 1.0 and "No LoRA file found at /app/output" in hits[0].snippet
    # Exact phrases before words apart, whatever the rollouts' order.
    ranks = [hit.rank for hit in hits]
    assert ranks == sorted(ranks, reverse=True)
    assert all(hit.rank < 1.0 for hit in hits if hit.rollout_id == apart.pk)


def test_the_prompt_does_not_outrank_what_the_run_wrote(lora):
    """The task's prompt holds the words in every rollout of the task: it comes after the steps the run made."""
    apart, holding = lora
    hits = search.search_steps("No LoRA file")
    prompts = [i for i, hit in enumerate(hits) if hit.step_id == 1]
    run = [i for i, hit in enumerate(hits) if hit.rollout_id == apart.pk and hit.step_id in (2, 3)]
    assert prompts and run and max(run) < min(prompts)
    # Still found: only ranked last.
    assert {hit.rollout_id for hit in hits if hit.step_id == 1} == {apart.pk, holding.pk}


def test_the_verifiers_fields_and_outputs_are_searched(lora):
    """reward.json's reason ("no_lora_file") holds the phrase's words in order: a phrase too."""
    apart, holding = lora
    hits = search.search_steps("no_lora_file")
    assert where(hits)[0] == (holding.pk, "verifier") and hits[0].rank == 1.0


def test_a_regrade_reindexes_the_verifiers_output(lora):
    from trajectories.search.texts import index_verifier

    apart, holding = lora
    apart.verifier_stdout = "ERROR: No LoRA file found at /app/output"
    apart.save(update_fields=["verifier_stdout"])
    index_verifier(apart)
    assert {(h.rollout_id, h.where) for h in search.search_steps("No LoRA file") if h.rank == 1.0} == {
        (apart.pk, "verifier"), (holding.pk, "verifier"),
    }


def use_folder(settings, path) -> None:
    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(path)}}}


def test_words_only_in_the_trial_log_find_it(settings, tmp_path, client):
    use_folder(settings, tmp_path / "artifacts")
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, message="Start the training.")
    other = factories.make_rollout()
    factories.add_step(other, 1, message="Nothing to see.")
    folder = tmp_path / "trial"
    folder.mkdir()
    lines = [f"{n:04d} INFO waiting for the sandbox" for n in range(500)]
    lines.insert(250, "0250 WARNING sandbox heartbeat lost, retrying the exec")
    (folder / "trial.log").write_text("\n".join(lines) + "\n")
    store_trial_files(rollout, folder, ["trial.log"])

    hits = search.search_steps("heartbeat lost")
    assert where(hits) == [(rollout.pk, "log")]
    assert hits[0].rank == 1.0 and "sandbox heartbeat lost, retrying" in hits[0].snippet
    # The search page links the hit to the Log tab, filtered to the query.
    html = client.get(URL, {"q": "heartbeat lost"}).content.decode()
    assert reverse("trajectories:trial_tab", args=[rollout.pk, "log"]) + "?q=heartbeat+lost" in html
    assert "1 match" in html


def test_a_secret_in_the_trial_log_is_never_shown_by_search(settings, tmp_path, client):
    use_folder(settings, tmp_path / "artifacts")
    rollout = factories.make_rollout()
    folder = tmp_path / "trial"
    folder.mkdir()
    (folder / "trial.log").write_text("starting\nusing key xai-0123456789abcdefghij for the model\n")
    store_trial_files(rollout, folder, ["trial.log"])
    html = client.get(URL, {"q": "using key"}).content.decode()
    assert "1 match" in html and "0123456789abcdefghij" not in html


def test_a_step_kind_filter_leaves_the_verifier_and_log_out(lora):
    apart, holding = lora
    assert all(hit.where != "verifier" for hit in search.search_steps("No LoRA file", search.Filters(kind="benchmark")))
    assert search.search_steps("No LoRA file", search.Filters(task=apart.task_id))[0].where == "verifier"


def test_the_real_trial_whose_verifier_found_no_lora_file_comes_first(shared_tasks_dir, shared_trials_dir):
    """The issue's own search, on the real trials: grok's verifier printed "ERROR: No LoRA file found"."""
    rollouts = factories.import_shared_rollouts(shared_tasks_dir, shared_trials_dir)
    hits = search.search_steps("No LoRA file")
    assert where(hits)[0] == (rollouts["grok"].pk, "verifier")
    assert "No LoRA file found at /app/output/lora.safetensors" in hits[0].snippet
    # The prompt (step 1, the same in both trials) comes after every step the agents wrote.
    assert all(hit.step_id == 1 for hit in hits[hits.index(next(h for h in hits if h.step_id == 1)):])


def test_a_phrase_is_its_words_in_order_apart_only_by_what_is_no_word():
    from trajectories.search.document import phrase_of

    phrase = phrase_of("No LoRA file")
    assert phrase.find("error: no lora file found") == 7
    assert phrase.find("reason: no_lora_file") == 8
    assert phrase.find("no, lora is a file") == -1
    assert phrase.find("piano lora file") == -1  # "no" must begin a word
    assert phrase_of("no lora fi").find("no lora files") == 0  # the last word as typed so far
    assert phrase_of('"no lora fi"').find("no lora files") == -1  # quoted: finished
    assert phrase_of("--") is None
