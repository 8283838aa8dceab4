"""A huge observation is stored bounded; its full text streams on request, as plain text."""
from __future__ import annotations

import pytest
from django.urls import reverse

from trajectories.models import Observation, Rollout
from trajectories.storing.observation_text import bound, compress, decompressed_chunks
from trajectories.services import import_trial_dir

from . import trialdata


# (length of the text, limit, characters kept, cut?)
BOUND_CASES = [
    (10, 20, 10, False),
    (20, 20, 20, False),
    (21, 20, 20, True),
    (1_000_000, 1000, 1000, True),
    (5, 0, 5, False),  # a limit of 0 means no limit
]


@pytest.mark.parametrize("length, limit, kept, cut", BOUND_CASES)
def test_bound(length, limit, kept, cut):
    text = "".join(chr(ord("a") + i % 26) for i in range(length))
    bounded = bound(text, limit)
    assert len(bounded.kept) == kept and bounded.cut == cut and bounded.full_length == length
    if cut:
        head, tail = bounded.kept[: bounded.cut_at], bounded.kept[bounded.cut_at :]
        assert text.startswith(head) and text.endswith(tail) and len(head) + len(tail) == limit


def test_compressed_text_comes_back_in_pieces():
    text = "línea\n" * 100_000
    pieces = list(decompressed_chunks(compress(text), chunk_bytes=1000))
    assert len(pieces) > 1 and b"".join(pieces).decode() == text


def huge_output_trial(root, size: int):
    data = trialdata.trajectory(2)
    # The first agent step's output: a build log of `size` characters whose
    # first and last lines say where they are.
    body = "".join(f"line {i:08d} of the build log\n" for i in range(size // 30 + 1))
    text = "FIRST LINE\n" + body[: size - len("FIRST LINE\n") - len("LAST LINE\n")] + "LAST LINE\n"
    data["steps"][1]["observation"]["results"][0]["content"] = text
    return trialdata.make_trial(root, trajectory_data=data), text


@pytest.fixture
def huge(tmp_path, settings, db):
    settings.AUTOLAB_OBSERVATION_MAX_CHARS = 10_000
    trialdata.make_task()
    folder, text = huge_output_trial(tmp_path, 3_000_000)
    outcome = import_trial_dir(folder)
    assert outcome.ok, outcome.error
    return Rollout.objects.get(pk=outcome.rollout_id), text


@pytest.mark.django_db
def test_a_huge_observation_is_stored_as_its_head_and_tail(huge):
    rollout, text = huge
    observation = Observation.objects.get(step__rollout=rollout, step__step_id=2)
    assert len(observation.content) == 10_000
    assert observation.content.startswith("FIRST LINE\n") and observation.content.endswith("LAST LINE\n")
    assert observation.full_length == len(text)


@pytest.mark.django_db
def test_load_on_demand_sends_the_bounded_text_with_a_link_to_the_full_one(client, huge):
    rollout, text = huge
    url = reverse("trajectories:step_observation", args=[rollout.pk, 2]) + "?position=0"
    response = client.get(url)
    assert response.status_code == 200
    body = response.content.decode()
    assert len(response.content) < 100_000
    assert "FIRST LINE" in body and "LAST LINE" in body
    full_url = reverse("trajectories:observation_text", args=[rollout.pk, 2, 0])
    assert full_url in body


@pytest.mark.django_db
def test_the_full_text_streams_as_plain_text(client, huge):
    rollout, text = huge
    response = client.get(reverse("trajectories:observation_text", args=[rollout.pk, 2, 0]))
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert b"".join(response.streaming_content).decode() == text


@pytest.mark.django_db
def test_a_small_observation_streams_whole_too(client, tmp_path):
    trialdata.make_task()
    outcome = import_trial_dir(trialdata.make_trial(tmp_path))
    response = client.get(reverse("trajectories:observation_text", args=[outcome.rollout_id, 2, 0]))
    assert b"".join(response.streaming_content).decode() == "time: 10.0 ms"
    assert client.get(reverse("trajectories:observation_text", args=[outcome.rollout_id, 2, 7])).status_code == 404
    assert client.get(reverse("trajectories:observation_text", args=[outcome.rollout_id, 99, 0])).status_code == 404


@pytest.mark.django_db
def test_the_rollout_page_of_a_huge_observation_stays_small(client, huge):
    rollout, _ = huge
    response = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk]))
    assert response.status_code == 200 and len(response.content) < 200_000
    assert "3000000 characters" in response.content.decode()


@pytest.mark.django_db
def test_a_grown_trajectory_with_a_huge_output_keeps_its_stored_steps(huge, tmp_path):
    import json

    rollout, _ = huge
    first = set(Observation.objects.filter(step__rollout=rollout).values_list("pk", flat=True))
    path = tmp_path / rollout.trial_name / "agent" / "trajectory.json"
    data = json.loads(path.read_text())
    data["steps"].append(dict(data["steps"][-1], step_id=data["steps"][-1]["step_id"] + 1))
    path.write_text(json.dumps(data))
    outcome = import_trial_dir(tmp_path / rollout.trial_name)
    assert outcome.ok and outcome.n_steps == len(data["steps"])
    kept = set(Observation.objects.filter(step__rollout=rollout).values_list("pk", flat=True))
    assert first < kept  # appended, not replaced
