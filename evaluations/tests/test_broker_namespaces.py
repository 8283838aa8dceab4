"""Test sessions that share a Redis database stay apart: each has a name space of keys it alone uses and cleans."""
from __future__ import annotations

import base64
import json

import pytest
from kombu import Connection

from evaluations.tests.worker_helpers import BrokerNamespace, use_broker

pytestmark = pytest.mark.worker


@pytest.fixture
def two_namespaces(redis_broker):
    """Two sessions' name spaces on the same Redis database (this session's URL)."""
    first, second = BrokerNamespace.new(redis_broker.url), BrokerNamespace.new(redis_broker.url)
    assert first.prefix != second.prefix
    yield first, second
    first.clean()
    second.clean()


def send(namespace: BrokerNamespace, queue: str, body: str) -> None:
    """A message to `queue` as kombu sends it in `namespace` (the transport option a worker's settings set)."""
    with Connection(namespace.url, transport_options=namespace.transport_options()) as connection:
        with connection.SimpleQueue(queue) as simple:
            simple.put(body)


def bodies(namespace: BrokerNamespace, queue: str) -> list[str]:
    return [base64.b64decode(json.loads(raw)["body"]).decode() for raw in namespace.waiting(queue)]


def test_cleaning_one_namespace_leaves_the_others_keys(two_namespaces):
    first, second = two_namespaces
    send(first, "cpu", "first's")
    send(second, "cpu", "second's")
    plain = first.client()
    plain.set("someone-elses-key", "kept")  # a key outside any name space: another user of the database
    try:
        assert len(first.waiting("cpu")) == 1 and len(second.waiting("cpu")) == 1
        assert all(key.startswith(first.prefix.encode()) for key in first.keys())
        before = sorted(second.keys())

        assert first.clean() >= 2  # its queue and kombu's binding set
        assert first.keys() == [] and first.waiting("cpu") == []
        assert sorted(second.keys()) == before and bodies(second, "cpu") == ["second's"]
        assert plain.get("someone-elses-key") == b"kept"
    finally:
        plain.delete("someone-elses-key")


def test_a_namespace_with_glob_characters_cleans_only_its_own_keys(redis_broker):
    odd = BrokerNamespace(redis_broker.url, redis_broker.prefix + "[a]*:")
    near = BrokerNamespace(redis_broker.url, redis_broker.prefix + "a-:")
    for namespace in (odd, near):
        namespace.client().set(namespace.key("x"), "1")
    assert odd.clean() == 1
    assert near.keys() == [near.key("x").encode()]
    near.clean()


def test_the_reaper_reads_the_queues_of_its_own_namespace(two_namespaces):
    """dispatch.waiting_task_ids reads the lists itself (kombu's prefix does not cover LRANGE): in its
    name space, not another's nor the bare keys."""
    from autolab_site.celery import app
    from evaluations.running import dispatch

    first, second = two_namespaces
    use_broker(first.url, first)
    try:
        app.send_task("evaluations.run_rollout", args=[0], queue="cpu", task_id="in-first")
        assert dispatch.waiting_task_ids() == {"in-first"}
        use_broker(second.url, second)
        assert dispatch.waiting_task_ids() == set()
    finally:
        use_broker(None)
    assert len(first.waiting("cpu")) == 1


def test_the_settings_put_a_worker_in_its_namespace(tmp_path):
    """What a worker's process reads: AUTOLAB_BROKER_KEY_PREFIX becomes kombu's global_keyprefix."""
    import os
    import subprocess
    import sys

    from evaluations.tests.worker_helpers import ROOT

    code = ("import json, django; from django.conf import settings; django.setup();"
            "print(json.dumps(settings.CELERY_BROKER_TRANSPORT_OPTIONS))")
    env = {**os.environ, "AUTOLAB_DATA_DIR": str(tmp_path), "CELERY_BROKER_URL": "redis://127.0.0.1:6379/3",
           "AUTOLAB_BROKER_KEY_PREFIX": "session-a:"}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["global_keyprefix"] == "session-a:"


def test_the_keys_of_a_session_whose_process_is_gone_are_swept(redis_broker):
    """A session killed before its end (SIGKILL, a machine's timeout) left its keys: the next one deletes them,
    and not those of a session still running."""
    import socket

    gone = BrokerNamespace(redis_broker.url, f"autolab-test:{socket.gethostname()}:{2**22 + 17}:0a0a0a0a:")
    gone.client().set(gone.key("cpu"), "left")
    redis_broker.client().set(redis_broker.key("cpu"), "mine")
    assert BrokerNamespace.sweep(redis_broker.url) >= 1
    assert gone.keys() == [] and redis_broker.keys() == [redis_broker.key("cpu").encode()]


def test_this_session_sends_in_its_namespace_whatever_the_suites_broker(broker_namespace):
    """CI runs every session on one CELERY_BROKER_URL: what this process sends, and every process it starts
    (process_env copies the environment), carries the session's prefix."""
    import os

    from autolab_site.celery import app
    from evaluations.tests.worker_helpers import PREFIX_VARIABLE

    if broker_namespace is None:
        pytest.skip("Redis is not reachable")
    assert app.conf.broker_transport_options["global_keyprefix"] == broker_namespace.prefix
    assert os.environ[PREFIX_VARIABLE] == broker_namespace.prefix
