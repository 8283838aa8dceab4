"""A stub LLM judge for tests: an OpenAI-compatible chat-completions server on 127.0.0.1, in a thread.

It answers fixed texts chosen by a marker found in the request's messages
(the first rule whose marker is there wins), with fixed token counts in
`usage`. A rule's answer may also be an HTTP status (an error) or a delay
(a judge that does not answer in time). It records every request it got.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROMPT_TOKENS, COMPLETION_TOKENS = 1200, 300


@dataclass
class Rule:
    marker: str
    text: str = ""
    status: int = 200
    delay: float = 0.0


@dataclass
class StubJudge:
    rules: list[Rule] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, content: str) -> Rule:
        for rule in self.rules:
            if rule.marker in content:
                return rule
        return Rule("", status=500, text="no rule for this request")

    def start(self) -> StubJudge:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002
                pass

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                stub.requests.append(body)
                content = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
                rule = stub.answer(content)
                if rule.delay:
                    stub.stopping.wait(rule.delay)  # cut short when the stub stops
                if rule.status != 200:
                    return self._send(rule.status, {"error": {"message": rule.text, "type": "server_error"}})
                self._send(200, {
                    "id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "stub"),
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": rule.text}}],
                    "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                              "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS},
                })

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout case)

        self.stopping = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # Request threads are joined when the stub stops: a test leaves no thread behind (a later test's
        # parallel import refuses to fork a process with other threads).
        self.server.daemon_threads = False
        self.server.block_on_close = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.stopping.set()
            self.server.shutdown()
            self.server.server_close()
            self.thread.join(timeout=10)
