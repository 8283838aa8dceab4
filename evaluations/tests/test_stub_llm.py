"""The scripted stub LLM's port: shared between workers, never mistaken for another program."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from evaluations.running import stub_llm


class NotTheStub(BaseHTTPRequestHandler):
    """Whatever else may hold the port: a web server that answers 404."""

    def do_GET(self):  # noqa: N802
        self.send_error(404)

    do_POST = do_GET

    def log_message(self, format, *args):  # noqa: A002
        pass


@pytest.fixture
def other_program():
    server = HTTPServer(("127.0.0.1", 0), NotTheStub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def no_stub_here(monkeypatch):
    monkeypatch.setattr(stub_llm, "_running", None)


def test_a_port_held_by_another_program_is_a_clear_error(other_program, no_stub_here):
    with pytest.raises(stub_llm.StubPortTaken, match=rf"port {other_program} .* not the scripted stub LLM; .*set AUTOLAB_STUB_LLM_PORT"):
        stub_llm.ensure_stub_server(other_program)
    assert not stub_llm.is_stub_listening(other_program)


def test_a_stub_another_worker_serves_is_used_as_it_is(no_stub_here):
    elsewhere = stub_llm.start_stub_server(port=0)  # as if another worker process had started it
    try:
        assert stub_llm.is_stub_listening(elsewhere.port)
        assert stub_llm.ensure_stub_server(elsewhere.port) is None
    finally:
        elsewhere.shutdown()
        elsewhere.server_close()


def test_the_stub_starts_once_per_process(no_stub_here):
    from evaluations.tests.test_runner_sync import free_port

    port = free_port()
    first = stub_llm.ensure_stub_server(port)
    try:
        assert first is not None and first.port == port
        assert stub_llm.ensure_stub_server(port) is first
    finally:
        stub_llm.stop_stub_server()


def test_after_a_benchmark_call_the_stub_waits_for_its_result(tmp_path):
    from evaluations.tests.runner_helpers import EXAMPLES

    script = stub_llm.script_for_task(EXAMPLES / "count_primes", bench_duration=0.3)
    state = stub_llm.StubState([script])
    conversation = [{"role": "system", "content": "x"}, {"role": "user", "content": script.marker}]

    def turn(screen: str) -> str:
        answer = state.choose(conversation)
        conversation.extend([{"role": "assistant", "content": answer}, {"role": "user", "content": screen}])
        return answer

    assert turn("def count_primes(n): ...") == script.replies[0]  # read
    assert turn("checking...") == script.replies[1]  # run the benchmark
    assert turn("still checking...") == stub_llm.WAIT_REPLY  # no result on screen yet
    assert turn("runtime_seconds: 0.30") == stub_llm.WAIT_REPLY
    assert turn("") == script.replies[2]  # the result was seen: rewrite
    assert turn("$ python3 /app/bench.py") == script.replies[3]  # benchmark again
    assert turn("runtime_seconds: 0.004") == stub_llm.WAIT_REPLY  # (the screen it answers came before the result)
    assert turn("$ ") == script.replies[4]  # submit


def test_the_default_scripts_cover_every_example_and_runner_task():
    """The stub finds its tasks wherever its module sits: when it found none, every stub run scored 0."""
    from django.conf import settings

    root = settings.BASE_DIR
    tasks = [*root.glob("examples/tasks/*/task.toml"), *root.glob("examples/tasks/rebench/*/task.toml"),
             *root.glob("evaluations/tests/tasks/*/task.toml")]  # fmt: skip
    assert len(tasks) >= 7  # 3 AutoLab examples, 2 RE-Bench examples, the runner's 2 test tasks
    expected = sorted(stub_llm.script_for_task(path.parent).marker for path in tasks)
    assert sorted(s.marker for s in stub_llm.default_scripts()) == expected
