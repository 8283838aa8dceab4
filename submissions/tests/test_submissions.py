"""A team's submission end to end: uploaded, checked, imported held back, regraded, marked, published, or refused.

Each spoilt submission (a changed task, a timeout multiplier of 2, missing
trajectories, a duplicate, an archive bomb, a path-traversal archive) ends
failed_checks with its reason, imports nothing, and leaves the board as it
was. The clean one is held back (on no board) until staff publish it; a
shared-mode one with a forged reward is refused the verified mark when the
regrade disagrees.
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from evaluations.boards import serving
from evaluations.models import Entry
from submissions import services, states
from submissions.models import Submission, Team
from trajectories import grades
from trajectories.models import Grade, Rollout
from trajectories.tests import factories

from submissions.tests.helpers import DIGEST, TASK, job_folder, tar_gz, traversal_tar, zip_bomb

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager_celery():
    """Sent tasks run in this process, as a worker would run them."""
    from autolab_site.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = previous


@pytest.fixture
def site(settings, tmp_path, eager_celery):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    settings.SUBMISSIONS_DIR = tmp_path / "submissions"
    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "artifacts")},
    }}
    version = factories.make_version("sub-1.0")
    # The version pins Harbor's digest of the task folder as imported (the trials' lock.json records it).
    factories.make_task(name=TASK, version="sub-1.0", harbor_digest=DIGEST, has_environment=True, has_tests=True, budget_sec=10800)
    # Our own run already on the board: whatever a submission does before it is published, this stays all there is.
    own = factories.make_task(name="own_task", version="sub-1.0", harbor_digest="f" * 64, has_environment=True, has_tests=True)
    factories.make_rollout(task=own, status="finished", reward=0.5)
    User = get_user_model()
    team = Team.objects.create(name="Outside Lab")
    member = User.objects.create_user("member", password="pw")
    team.members.add(member)
    other = Team.objects.create(name="Other Lab")
    stranger = User.objects.create_user("stranger", password="pw")
    other.members.add(stranger)
    staff = User.objects.create_user("staff", password="pw", is_staff=True)
    return {"version": version, "team": team, "member": member, "stranger": stranger, "staff": staff, "tmp": tmp_path}


def board_state(version) -> list[tuple]:
    return [(e.key, e.overall.avg if e.overall else None, e.overall.n_rollouts if e.overall else 0) for e in serving.build(version).entries]


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def submit(site, upload) -> Submission:
    response = client_for(site["member"]).post(reverse("submissions:new"), {
        "team": site["team"].pk, "version": "sub-1.0", "model_name": "claude-opus-4.6", "harness_name": "terminus-2",
        "harness_version": "2.0.0", "contact": "lab@example.org", "note": "our run", "archive": upload,
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    return Submission.objects.get(pk=int(response["Location"].rstrip("/").rsplit("/", 1)[1]))


def failed(submission: Submission) -> dict[str, str]:
    return {c["name"]: c["reason"] for c in submission.checks if not c["passed"] and not c.get("requires_regrade")}


def test_a_clean_job_is_held_back_then_published_verified_and_marked(site, shared_trials_dir):
    before = board_state(site["version"])
    submission = submit(site, tar_gz(job_folder(shared_trials_dir, site["tmp"] / "clean")))
    assert submission.state == states.CHECKED, submission.checks
    assert all(c["passed"] for c in submission.checks)
    assert len(submission.rollout_ids) == 2
    rollouts = Rollout.objects.filter(pk__in=submission.rollout_ids)
    assert all(r.held_back for r in rollouts)
    # Provenance stored from lock.json.
    r = rollouts.first()
    assert (r.task_digest, r.harbor_version, r.verifier_mode) == (DIGEST, "0.26.0", "separate")
    assert r.run_settings["multipliers"]["timeout_multiplier"] == 1.0 and r.trajectory_sha256
    assert board_state(site["version"]) == before  # held back: on no board
    # Nor on any list, page or export of rollouts, but to staff.
    for path in (f"/rollouts/{r.pk}/", f"/rollouts/{r.pk}/tabs/verifier/"):
        assert Client().get(path).status_code == 404, path
        assert client_for(site["member"]).get(path).status_code == 404, path
        assert client_for(site["staff"]).get(path).status_code == 200, path
    shown = client_for(site["staff"]).get(f"/rollouts/{r.pk}/").content.decode()
    assert "Harbor 0.26.0" in shown and "sealed (separate)" in shown and "held back" in shown
    for path in ("/rollouts/", "/failures/", f"/jobs/{r.job_id}/", "/search/?q=lora"):
        response = Client().get(path)
        assert response.status_code in (200, 404) and r.trial_name not in response.content.decode(), path
    assert all(row["id"] not in submission.rollout_ids for row in Client().get("/api/v1/rollouts/").json()["results"])

    # The member sees the checks; staff regrade (here: the regrade's grade recorded as the regrade path records it).
    page = client_for(site["member"]).get(reverse("submissions:detail", args=[submission.pk])).content.decode()
    assert "checks passed" in page and "every trial ran the version&#x27;s task" in page and "Publish" not in page
    for rollout in rollouts:
        grade = grades.start_regrade(rollout, requested_by=site["staff"], backend="test")
        grades.record_regrade(grade, _verdict(rollout.reward), verifier_version="v2")
    staff = client_for(site["staff"])
    staff.post(reverse("submissions:verify", args=[submission.pk]))
    submission.refresh_from_db()
    assert (submission.state, submission.mark) == (states.VERIFIED, states.MARK_VERIFIED)
    staff.post(reverse("submissions:publish", args=[submission.pk]))
    submission.refresh_from_db()
    assert submission.state == states.PUBLISHED
    assert not Rollout.objects.filter(pk__in=submission.rollout_ids, held_back=True).exists()
    after = board_state(site["version"])
    assert len(after) == len(before) + 2
    marked = Entry.objects.filter(version=site["version"], submission_id=submission.pk)
    assert {e.submission_mark for e in marked} == {"verified"} and marked.count() == 2
    assert [e.to_state for e in submission.events.all()] == ["received", "checked", "verified", "published"]
    # The board marks its entries, each linking to the record, which is public now (without the contact).
    record = reverse("submissions:detail", args=[submission.pk])
    page = Client().get("/", {"version": "sub-1.0"}).content.decode()
    assert page.count(f'href="{record}"') == 2 and "submission-mark" in page
    assert 'name="origin"' in page  # "Results from": shown once a team's results are on the board
    ours = Client().get("/", {"version": "sub-1.0", "origin": "ours"}).content.decode()
    assert f'href="{record}"' not in ours and "submission-mark" not in ours
    verified_only = Client().get("/", {"version": "sub-1.0", "origin": "verified"}).content.decode()
    assert verified_only.count(f'href="{record}"') == 2
    public = Client().get(record)
    assert public.status_code == 200 and "lab@example.org" not in public.content.decode()
    assert [e.comparison for e in serving.build(site["version"]).entries if e.submission_mark] == [True, True]
    row = next(row for row in Client().get("/api/v1/rollouts/").json()["results"] if row["id"] == r.pk)
    assert (row["task_digest"], row["harbor_version"], row["verifier_mode"]) == (DIGEST, "0.26.0", "separate")
    assert row["run_settings"]["agent"]["name"] == "terminus-2"


def test_a_self_reported_submission_is_published_out_of_dominance(site, shared_trials_dir):
    submission = submit(site, tar_gz(job_folder(shared_trials_dir, site["tmp"] / "self")))
    staff = client_for(site["staff"])
    staff.post(reverse("submissions:self_report", args=[submission.pk]))
    staff.post(reverse("submissions:publish", args=[submission.pk]))
    submission.refresh_from_db()
    assert (submission.state, submission.mark) == (states.PUBLISHED, states.MARK_SELF_REPORTED)
    marked = [e for e in serving.build(site["version"]).entries if e.submission_mark]
    assert len(marked) == 2 and all(e.submission_mark == "self_reported" and not e.comparison for e in marked)
    page = Client().get("/", {"version": "sub-1.0", "origin": "self_reported"}).content.decode()
    assert page.count("self-reported</a>") == 2


def _verdict(reward):
    """What a regrade's verifier leaves, as trajectories.grades reads it."""
    from trajectories.services import Verification

    return Verification(reward=reward, reward_valid=True, fields={"reward": reward}, stdout="", outputs={},
                        exception_type="", exception_message="", warnings=())


@pytest.mark.parametrize("spoil, check, words", [
    ({"digest": "0" * 64}, "task_digest", "the task differs from the version's"),
    ({"multiplier": 2.0}, "timeouts_and_resources", "timeout_multiplier 2"),
    ({"drop_trajectory": True}, "trajectories", "no agent trajectory"),
])
def test_a_spoilt_job_fails_its_check_and_imports_nothing(site, shared_trials_dir, spoil, check, words):
    before, rollouts = board_state(site["version"]), Rollout.objects.count()
    submission = submit(site, tar_gz(job_folder(shared_trials_dir, site["tmp"] / "spoilt", **spoil)))
    assert submission.state == states.FAILED_CHECKS
    assert words in failed(submission)[check]
    assert submission.rollout_ids == [] and Rollout.objects.count() == rollouts
    assert board_state(site["version"]) == before
    page = client_for(site["member"]).get(reverse("submissions:detail", args=[submission.pk])).content.decode()
    assert "failed checks" in page and words.split(" ")[0] in page


def test_a_duplicate_is_refused(site, shared_trials_dir):
    first = submit(site, tar_gz(job_folder(shared_trials_dir, site["tmp"] / "one")))
    assert first.state == states.CHECKED
    rollouts = Rollout.objects.count()
    second = submit(site, tar_gz(job_folder(shared_trials_dir, site["tmp"] / "two")))
    assert second.state == states.FAILED_CHECKS
    assert "the same trial is already on the site" in failed(second)["duplicates"]
    assert Rollout.objects.count() == rollouts


@pytest.mark.parametrize("upload, words", [
    (lambda: zip_bomb(8 << 20), "declares 8388608 bytes uncompressed, over the limit"),
    (traversal_tar, "path leaving the archive refused"),
])
def test_a_hostile_archive_is_refused_having_written_nothing(site, settings, upload, words):
    settings.AUTOLAB_ARCHIVE_MAX_BYTES = 1 << 20
    before, rollouts = board_state(site["version"]), Rollout.objects.count()
    submission = submit(site, upload())
    assert submission.state == states.FAILED_CHECKS
    assert words in failed(submission)["readable"]
    assert Rollout.objects.count() == rollouts and board_state(site["version"]) == before
    assert not (site["tmp"] / "evil.txt").exists() and not (settings.UPLOADS_DIR.parent / "evil.txt").exists()


def test_a_forged_reward_graded_in_the_agents_sandbox_is_refused_the_verified_mark(site, shared_trials_dir):
    """The real trials' review path; the regrade's verdict recorded as the regrade path records it (the regrade run
    for real, sealed, in bubblewrap: test_sealed_regrade.py)."""
    submission = submit(site, tar_gz(job_folder(shared_trials_dir, site["tmp"] / "forged", mode="shared", forged_reward=1.0)))
    assert submission.state == states.CHECKED
    sealed = next(c for c in submission.checks if c["name"] == "verifier_sealed")
    assert not sealed["passed"] and "must be regraded before it counts" in sealed["reason"]
    # Never self-reported: only a sealed regrade can make it count.
    ok, why = services.self_report(submission, by=site["staff"])
    assert not ok and "sealed regrade" in why
    for rollout in Rollout.objects.filter(pk__in=submission.rollout_ids):
        grade = grades.start_regrade(rollout, requested_by=site["staff"], backend="test")
        grades.record_regrade(grade, _verdict(0.0), verifier_version="v2")  # the sealed verifier finds nothing worth a reward
    before = board_state(site["version"])
    response = client_for(site["staff"]).post(reverse("submissions:verify", args=[submission.pk]), follow=True)
    assert "disagrees with the submitted reward beyond the verifier" in response.content.decode()
    submission.refresh_from_db()
    assert (submission.state, submission.mark) == (states.CHECKED, "")
    assert all(not row["agrees"] and row["submitted"] == 1.0 and row["regraded"] == 0.0 for row in submission.regrade.values())
    assert board_state(site["version"]) == before


# -- who may do what ----------------------------------------------------------------------------------

MEMBER_URLS = ["submissions:list", "submissions:new"]
RECORD_URLS = ["submissions:detail"]
STAFF_ACTIONS = ["submissions:regrade", "submissions:verify", "submissions:self_report", "submissions:publish", "submissions:reject"]


@pytest.fixture
def a_submission(site):
    submission = Submission.objects.create(
        team=site["team"], version=site["version"], model_name="m", harness_name="h", contact="c", file_name="job.tar.gz",
        state=states.CHECKED,
    )
    return submission


def every_url(submission) -> list[str]:
    return [reverse(n) for n in MEMBER_URLS] + [reverse(n, args=[submission.pk]) for n in RECORD_URLS + STAFF_ACTIONS]


@pytest.mark.parametrize("method", ["get", "post"])
def test_anonymous_is_sent_to_log_in_everywhere(a_submission, method):
    for url in every_url(a_submission):
        response = getattr(Client(), method)(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url


def test_another_team_sees_nothing_of_it(site, a_submission):
    client = client_for(site["stranger"])
    assert client.get(reverse("submissions:list")).status_code == 200
    assert f"#{a_submission.pk}" not in client.get(reverse("submissions:list")).content.decode()
    assert client.get(reverse("submissions:detail", args=[a_submission.pk])).status_code == 404
    for name in STAFF_ACTIONS:
        assert client.post(reverse(name, args=[a_submission.pk])).status_code == 403, name
    a_submission.refresh_from_db()
    assert a_submission.state == states.CHECKED


def test_a_member_sees_their_own_but_never_publishes_regrades_or_rejects(site, a_submission):
    client = client_for(site["member"])
    assert f"#{a_submission.pk}" in client.get(reverse("submissions:list")).content.decode()
    assert client.get(reverse("submissions:detail", args=[a_submission.pk])).status_code == 200
    for name in STAFF_ACTIONS:
        assert client.post(reverse(name, args=[a_submission.pk]), {"reason": "x"}).status_code == 403, name
    a_submission.refresh_from_db()
    assert a_submission.state == states.CHECKED and not Grade.objects.exists()


def test_a_logged_in_visitor_of_no_team_is_refused(site, a_submission):
    client = client_for(get_user_model().objects.create_user("visitor", password="pw"))
    assert client.get(reverse("submissions:list")).status_code == 403
    assert client.get(reverse("submissions:new")).status_code == 403
    assert client.get(reverse("submissions:detail", args=[a_submission.pk])).status_code == 404


def test_staff_see_every_submission_and_act(site, a_submission):
    client = client_for(site["staff"])
    assert f"#{a_submission.pk}" in client.get(reverse("submissions:list")).content.decode()
    page = client.get(reverse("submissions:detail", args=[a_submission.pk])).content.decode()
    assert "Regrade a sample" in page and "Reject" in page
    client.post(reverse("submissions:reject", args=[a_submission.pk]), {"reason": "not our rules"})
    a_submission.refresh_from_db()
    assert a_submission.state == states.REJECTED
    assert a_submission.events.get().note == "not our rules"


def test_a_trial_harbors_analysis_flags_for_reward_hacking_is_refused_and_imports_nothing(site, shared_trials_dir):
    analyze = pytest.importorskip("harbor.analyze.models", reason="Harbor's analyze models write the fixture")
    job = job_folder(shared_trials_dir, site["tmp"] / "hacked")
    trial = sorted(job.iterdir())[0]
    (trial / "analysis.json").write_text(analyze.AnalyzeResult(
        trial_name=trial.name, summary="wrote /logs/verifier/reward.json itself at step 12",
        checks={"reward_hacking": {"explanation": "wrote its own reward (step 12)", "outcome": "fail"}},
    ).model_dump_json())
    before, rollouts = board_state(site["version"]), Rollout.objects.count()
    submission = submit(site, tar_gz(job))
    assert submission.state == states.FAILED_CHECKS, submission.checks
    assert "review: reward_hacking fail" in failed(submission)["reward_hacking"]
    assert Rollout.objects.count() == rollouts and board_state(site["version"]) == before


def test_a_check_whose_worker_died_is_failed_by_the_sweep_and_an_unsent_one_is_sent_again(site, settings, shared_trials_dir):
    from datetime import timedelta

    from django.utils import timezone

    stale = Submission.objects.create(
        team=site["team"], version=site["version"], model_name="m", harness_name="h", contact="c", file_name="job.tar.gz",
        sent=True, claimed_at=timezone.now() - timedelta(hours=2),
    )
    unsent = services.receive(
        team=site["team"], user=site["member"], version=site["version"],
        upload=tar_gz(job_folder(shared_trials_dir, site["tmp"] / "late")), file_name="job.tar.gz",
        model_name="m", harness_name="h", contact="c",
    )
    assert unsent.state == states.RECEIVED and not unsent.sent
    assert sorted(services.sweep()) == sorted([stale.pk, unsent.pk])
    stale.refresh_from_db()
    unsent.refresh_from_db()
    assert stale.state == states.FAILED_CHECKS and "worker ended" in stale.events.last().note
    assert unsent.state == states.CHECKED  # sent again, and checked by the (eager) worker
    assert services.run_check(unsent.pk) == "skipped"  # a message delivered twice


def test_staff_regrade_a_sample_on_the_backend_they_choose(site, a_submission, monkeypatch):
    """A submitted rollout has no campaign, so its "own" backend is bubblewrap, which cannot build a task whose
    Dockerfile installs packages: the submission page offers the backend, as the rollout's regrade form does."""
    seen = {}

    def request(rollouts, *, requested_by=None, backend="", sync=False):
        seen["backend"] = backend
        from evaluations.regrades.regrade import Report
        return Report()

    monkeypatch.setattr("evaluations.regrades.regrade.request", request)
    client = client_for(site["staff"])
    page = client.get(reverse("submissions:detail", args=[a_submission.pk])).content.decode()
    assert 'name="backend"' in page and 'value="podman"' in page
    client.post(reverse("submissions:regrade", args=[a_submission.pk]), {"per_task": 1, "backend": "podman"})
    assert seen["backend"] == "podman"


@pytest.mark.parametrize("state", list(states.LABELS))
def test_each_state_shows_its_label_and_is_a_valid_choice(a_submission, state):
    """The state's choices are the stored names with their labels: the page says "failed checks", not the raw
    "failed_checks", and the admin's validation accepts every state a submission can be in."""
    a_submission.state = state
    assert a_submission.get_state_display() == states.LABELS[state]
    Submission._meta.get_field("state").clean(state, a_submission)
