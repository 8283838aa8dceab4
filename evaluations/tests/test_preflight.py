"""The preflight: each check against real endpoints and folders, and what a campaign does with the reports."""
from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from evaluations.models import Campaign
from evaluations.running.campaigns import fail_silent_preflights, launch, record_preflight
from evaluations.running.preflight import ModelSettings, run_checks
from evaluations.running.stub_llm import STUB_API_KEY, start_stub_server
from trajectories.models import Rollout, RolloutStatus

from evaluations.tests.runner_helpers import import_examples, utility_entry
from evaluations.tests.sandbox_helpers import TINY_TASK, require_sandbox


class RefusingEndpoint(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that wants a key it was not given (what a new user hits)."""

    def do_POST(self):  # noqa: N802
        body = json.dumps({"error": {"message": "Missing credentials. Please pass an `api_key`.",
                                     "type": "invalid_request_error", "code": "invalid_api_key"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002
        pass


@pytest.fixture
def refusing_endpoint():
    server = HTTPServer(("127.0.0.1", 0), RefusingEndpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def stub():
    server = start_stub_server(port=0)
    yield f"http://127.0.0.1:{server.port}/v1"
    server.shutdown()
    server.server_close()


def by_name(report):
    return {check.name: check for check in report.checks}


def test_a_key_variable_missing_on_the_worker_fails_and_the_endpoint_is_not_called(monkeypatch):
    monkeypatch.delenv("AUTOLAB_TEST_ABSENT_KEY", raising=False)
    called = []
    model = ModelSettings(harness="terminus-2", litellm_model="openai/gpt-x", api_key_env="AUTOLAB_TEST_ABSENT_KEY")
    report = run_checks(model, "bubblewrap", [str(TINY_TASK)], completion=lambda **kw: called.append(kw))
    checks = by_name(report)
    assert not report.ok and called == []
    assert "the API key variable AUTOLAB_TEST_ABSENT_KEY is not set on worker" in checks["api key"].detail
    assert checks["endpoint"].detail == "not tried: there is no key to call it with"
    assert report.reason.startswith("api key: the API key variable AUTOLAB_TEST_ABSENT_KEY is not set")


def test_an_endpoint_that_refuses_the_key_fails_through_litellm(refusing_endpoint, monkeypatch):
    monkeypatch.setenv("AUTOLAB_TEST_KEY", "sk-wrong")
    model = ModelSettings(harness="terminus-2", litellm_model="openai/gpt-x", api_base=refusing_endpoint,
                          api_key_env="AUTOLAB_TEST_KEY")
    checks = by_name(run_checks(model, "bubblewrap", [str(TINY_TASK)]))
    assert checks["api key"].ok
    endpoint = checks["endpoint"]
    assert not endpoint.ok and "refused the call (AuthenticationError" in endpoint.detail
    assert "Missing credentials" in endpoint.detail


def test_an_endpoint_nobody_listens_on_did_not_answer(monkeypatch):
    from evaluations.tests.test_broker_loss import closed_port

    model = ModelSettings(harness="terminus-2", litellm_model="openai/gpt-x",
                          api_base=f"http://127.0.0.1:{closed_port()}/v1", sampling_params={"api_key": "x"})
    endpoint = by_name(run_checks(model, "bubblewrap", [str(TINY_TASK)]))["endpoint"]
    assert not endpoint.ok and "did not answer" in endpoint.detail and "launch again" in endpoint.detail


def test_a_model_registered_without_any_key_is_a_configuration_error(monkeypatch):
    """litellm calls it an InternalServerError; it is the registration's mistake, and launching again never fixes it."""
    from evaluations.tests.test_broker_loss import closed_port

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = ModelSettings(harness="terminus-2", litellm_model="openai/gpt-x", api_base=f"http://127.0.0.1:{closed_port()}/v1")
    endpoint = by_name(run_checks(model, "bubblewrap", [str(TINY_TASK)]))["endpoint"]
    assert not endpoint.ok
    assert endpoint.detail.startswith("configuration error: openai/gpt-x was called without an API key")
    assert "api_key" in endpoint.detail and "Missing credentials" in endpoint.detail
    assert "launch again" not in endpoint.detail and "did not answer" not in endpoint.detail


def test_the_scripted_stub_answers_a_one_token_completion(stub):
    require_sandbox()
    model = ModelSettings(harness="terminus-2", litellm_model="openai/scripted-stub", api_base=stub,
                          sampling_params={"api_key": STUB_API_KEY})
    report = run_checks(model, "bubblewrap", [str(TINY_TASK)])
    assert report.ok, report.reason
    assert [c.name for c in report.checks] == ["endpoint", "task folders", "backend"]


def test_model_free_harnesses_skip_the_model_checks_and_missing_tasks_are_named(tmp_path):
    report = run_checks(ModelSettings(harness="oracle"), "bubblewrap", [str(TINY_TASK), str(tmp_path / "gone")])
    checks = by_name(report)
    assert "api key" not in checks and "endpoint" not in checks
    assert not checks["task folders"].ok
    assert "1 task folder(s) missing on worker" in checks["task folders"].detail
    assert str(tmp_path / "gone") in checks["task folders"].detail


def test_a_backend_this_worker_lacks_or_that_cannot_run_a_task(tmp_path):
    docker = by_name(run_checks(ModelSettings(harness="nop"), "docker", [str(TINY_TASK)]))["backend"]
    if shutil.which("docker") is None:
        assert not docker.ok and "Docker is not usable on worker" in docker.detail and "docker is not installed" in docker.detail
    gpu = tmp_path / "gpu_task"
    shutil.copytree(TINY_TASK, gpu)
    toml = gpu / "task.toml"
    toml.write_text(toml.read_text().replace("gpus = 0\n", "gpus = 1\n"))
    from evaluations.tests.container_helpers import podman_problem

    if not podman_problem():
        podman = by_name(run_checks(ModelSettings(harness="nop"), "podman", [str(gpu)]))["backend"]
        assert not podman.ok
        assert "Podman cannot run 1 task(s): gpu_task: needs 1 GPU, and Harbor's Podman environment cannot give" in podman.detail
    unknown = by_name(run_checks(ModelSettings(harness="nop"), "kubernetes", []))["backend"]
    assert not unknown.ok and "unknown sandbox backend 'kubernetes'" in unknown.detail


# -- what a campaign does with the reports ---------------------------------------------


def report(queue: str, ok: bool, detail: str = "fine") -> dict:
    return {"worker": "worker-1", "queue": queue, "ok": ok, "checks": [{"name": "endpoint", "ok": ok, "detail": detail}]}


@pytest.fixture
def gpu_and_cpu(db):
    """The example tasks, one of them needing a GPU: a campaign needs both queues."""
    version = import_examples()
    version.tasks.filter(name="ring_classifier").update(gpus=1, gpu_type="H100")
    model, harness = utility_entry("nop")
    return launch(model, harness, version, k=2, backend="bubblewrap")


def test_a_campaign_starts_only_once_every_queue_passed(gpu_and_cpu):
    campaign = gpu_and_cpu
    assert campaign.status == Campaign.Status.CHECKING and Rollout.objects.count() == 0
    assert record_preflight(campaign.pk, report("cpu", True)) == Campaign.Status.CHECKING
    assert Rollout.objects.count() == 0
    assert record_preflight(campaign.pk, report("gpu", True)) == Campaign.Status.PENDING
    assert Rollout.objects.filter(campaign=campaign, status=RolloutStatus.QUEUED).count() == 6
    campaign.refresh_from_db()
    assert set(campaign.preflight) == {"cpu", "gpu"} and campaign.status == Campaign.Status.PENDING


def test_a_failed_queue_fails_the_campaign_with_its_reason_and_queues_nothing(gpu_and_cpu):
    campaign = gpu_and_cpu
    record_preflight(campaign.pk, report("gpu", False, "the API key variable X is not set on worker gpu-1"))
    record_preflight(campaign.pk, report("cpu", True))  # too late: it failed
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.FAILED and Rollout.objects.count() == 0
    assert campaign.status_reason == (
        "preflight failed on worker-1 (queue gpu): endpoint: the API key variable X is not set on worker gpu-1"
    )


def test_a_queue_no_worker_serves_fails_the_campaign_after_the_timeout(gpu_and_cpu):
    from django.utils import timezone

    campaign = gpu_and_cpu
    Campaign.objects.filter(pk=campaign.pk).update(preflight_sent_at=timezone.now())
    record_preflight(campaign.pk, report("cpu", True))
    assert fail_silent_preflights(timeout_sec=60) == []  # not yet
    Campaign.objects.filter(pk=campaign.pk).update(preflight_sent_at=timezone.now() - timezone.timedelta(minutes=5))
    assert fail_silent_preflights(timeout_sec=60) == [campaign.pk]
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.FAILED
    assert "no worker answered on queue gpu within 60 s" in campaign.status_reason
    assert "celery -A autolab_site worker -Q gpu" in campaign.status_reason


def test_supersede_takes_effect_when_the_campaign_starts(db):
    version = import_examples()
    model, harness = utility_entry("nop")
    first = launch(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=1,
                   backend="bubblewrap", preflight=False)
    again = launch(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=1,
                   backend="bubblewrap", supersede=True)
    assert not first.rollouts.get().superseded  # nothing yet: it may fail its preflight
    record_preflight(again.pk, report("cpu", True))
    assert first.rollouts.get().superseded and not again.rollouts.get().superseded
    added = launch(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=1,
                   backend="bubblewrap")
    record_preflight(added.pk, report("cpu", True))
    assert not again.rollouts.get().superseded  # "add rollouts" pools them
    assert Rollout.objects.filter(superseded=False).count() == 2


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_preflight_waits_for_a_busy_worker_of_its_queue_and_fails_once_none_serves_it(redis_app, worker_env, tmp_path):
    from django.utils import timezone

    from evaluations.tests.worker_helpers import Worker

    version = import_examples()
    model, harness = utility_entry("nop")
    campaign = launch(model, harness, version, k=1, backend="bubblewrap")
    # Its preflight message is gone, as if the worker's one process were running a trial for hours.
    redis_app.clean()
    Campaign.objects.filter(pk=campaign.pk).update(preflight_sent_at=timezone.now() - timezone.timedelta(minutes=5))
    worker = Worker(worker_env, tmp_path / "worker.log", queues=("cpu",))
    try:
        worker.wait_ready()
        assert fail_silent_preflights(timeout_sec=60) == []
        campaign.refresh_from_db()
        assert campaign.status == Campaign.Status.CHECKING, (campaign.status_reason, worker.output())
        assert campaign.status_reason == "preflight: waiting for a free worker on queue cpu (its workers are busy)"
    finally:
        worker.kill()
    assert fail_silent_preflights(timeout_sec=60) == [campaign.pk]
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.FAILED and "no worker answered on queue cpu" in campaign.status_reason
