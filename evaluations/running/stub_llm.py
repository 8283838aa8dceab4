"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1.

It is not a model: it replays fixed terminus-2 replies (analysis, plan,
commands with keystrokes and durations, task_complete), chosen by which
task's instruction appears in the conversation. The reply to send is the
number of assistant turns already in the request, so a retried request gets
the same answer. Tests and the demo use it to drive terminus-2 through
litellm exactly as a real model would, with no API key and no network.

For each example task the script reads the editable file, runs the local
benchmark, writes the reference solution (from the task's solution/solve.sh),
runs the benchmark again and submits. After a benchmark call it does not
type on until the terminal shows the benchmark's metric (it answers "wait"
instead): on a busy machine a benchmark outlasts any fixed wait, and text
typed into a terminal that is still running it goes astray.
"""
from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

# Not a secret: the stub accepts any key, litellm only wants one to be set.
STUB_API_KEY = "scripted-stub-needs-no-key"
STUB_MODEL_INFO = {
    "max_input_tokens": 128000,
    "max_output_tokens": 8192,
    "max_tokens": 8192,
    "input_cost_per_token": 0.0,
    "output_cost_per_token": 0.0,
}


def reply(analysis: str, plan: str, commands: list[tuple[str, float]], task_complete: bool = False) -> str:
    return json.dumps(
        {
            "analysis": analysis,
            "plan": plan,
            "commands": [{"keystrokes": keys, "duration": duration} for keys, duration in commands],
            "task_complete": task_complete,
        }
    )


# A reply that only waits: it does not advance the script.
WAIT_ANALYSIS = "The benchmark is still running."
WAIT_REPLY = reply(WAIT_ANALYSIS, "Wait for it to print its result.", [("", 5.0)])
MAX_WAITS = 36  # three minutes of waiting for one benchmark call


@dataclass
class Script:
    """The replies for one task, recognised by `marker` in the conversation.

    `done_pattern`: what the terminal shows once a benchmark call has
    finished (the task's metric_pattern); the replies after `benchmark_turns`
    wait for it.
    """

    marker: str
    replies: list[str] = field(default_factory=list)
    done_pattern: re.Pattern | None = None
    benchmark_turns: tuple[int, ...] = ()


def solution_keystrokes(task_dir: Path) -> str:
    """The task's reference solve.sh as typed into a shell, with /app spelled out."""
    text = (task_dir / "solution" / "solve.sh").read_text()
    lines = [line for line in text.splitlines() if not line.startswith("APP_DIR=")]
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)  # the shebang and the header comment
    text = "\n".join(lines).strip() + "\n"
    text = re.sub(r'"\$\{?APP_DIR\}?/([^"\s]*)"', r"/app/\1", text)
    return re.sub(r"\$\{?APP_DIR\}?/", "/app/", text)


def _task_toml(task_dir: Path) -> dict:
    import tomllib

    return tomllib.loads((task_dir / "task.toml").read_text())


def script_for_task(task_dir: Path, *, bench_duration: float | None = None) -> Script:
    """Read, benchmark, edit with the reference solution, benchmark again, submit."""
    task_dir = Path(task_dir)
    instruction = (task_dir / "instruction.md").read_text()
    marker = instruction.strip().splitlines()[0].strip()
    optimization = _task_toml(task_dir).get("optimization", {})
    bench = optimization.get("benchmark_command") or "ls /app"
    solve = solution_keystrokes(task_dir)
    written = re.findall(r"cat > (/app/\S+)", solve)
    editable = written[0] if written else "/app"
    duration = bench_duration if bench_duration is not None else (4.0 if "bench.py" in bench else 1.5)
    pattern = optimization.get("metric_pattern")
    return _measure_edit_measure(marker, editable, bench, solve, duration, re.compile(pattern) if pattern else None)


def script_for_real_task(task_dir: Path, *, benchmark: str, editable: str, solution: str, done_pattern: str) -> Script:
    """Read, run the task's own evaluation, write solution/`solution` into `editable`, evaluate again, submit.

    For a real AutoLab task, whose task.toml names no benchmark command or
    metric pattern and whose solve.sh copies from /solution (which only the
    oracle gets): the caller says which command the instruction means, and
    the file is typed in as a heredoc, as a model would write it.
    """
    task_dir = Path(task_dir)
    marker = (task_dir / "instruction.md").read_text().strip().splitlines()[0].strip()
    text = (task_dir / "solution" / solution).read_text()
    if "AUTOLAB_EOF" in text:
        raise ValueError(f"solution/{solution} holds the heredoc's end marker AUTOLAB_EOF")
    write = f"cat > {editable} <<'AUTOLAB_EOF'\n{text.rstrip()}\nAUTOLAB_EOF\n"
    return _measure_edit_measure(marker, editable, benchmark, write, 2.0, re.compile(done_pattern))


def _measure_edit_measure(marker: str, editable: str, bench: str, write: str, duration: float,
                          done_pattern: re.Pattern | None) -> Script:
    """The script every task gets: read the editable file, benchmark, rewrite it, benchmark again, submit."""
    replies = [
        reply("I have not seen the code yet.", f"Read {editable} first.", [(f"cat {editable}\n", 0.3)]),
        reply("This is the starting point.", "Measure it with the local benchmark.", [(f"{bench}\n", duration)]),
        reply("The baseline is measured.", f"Rewrite {editable} with a better method.", [(write, 0.5)]),
        reply("The new version is in place.", "Measure again.", [(f"{bench}\n", duration)]),
        reply("The benchmark improved.", "Submit.", [], task_complete=True),
        reply("Confirmed.", "Done.", [], task_complete=True),
    ]
    return Script(marker=marker, replies=replies, done_pattern=done_pattern, benchmark_turns=(1, 3))


def fallback_script() -> Script:
    return Script(
        marker="",
        replies=[
            reply("Unknown task.", "Look around.", [("ls /app\n", 0.3)]),
            reply("Nothing to do.", "Submit.", [], task_complete=True),
            reply("Confirmed.", "Done.", [], task_complete=True),
        ],
    )


class StubState:
    def __init__(self, scripts: list[Script]):
        self.scripts = scripts
        self.requests = 0
        self.lock = threading.Lock()

    def choose(self, messages: list[dict]) -> str:
        text = "\n".join(_content(message) for message in messages if message.get("role") in ("user", "system"))
        script = next((s for s in self.scripts if s.marker and s.marker in text), None) or fallback_script()
        turn, waits, since = 0, 0, []
        for message in messages:
            if message.get("role") == "assistant":
                if WAIT_ANALYSIS in _content(message):
                    waits += 1
                else:
                    turn, waits, since = turn + 1, 0, []
            elif message.get("role") == "user":
                since.append(_content(message))
        if (script.done_pattern is not None and turn - 1 in script.benchmark_turns and waits < MAX_WAITS
                and not script.done_pattern.search("\n".join(since))):
            return WAIT_REPLY
        return script.replies[min(turn, len(script.replies) - 1)]


def _content(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


class Handler(BaseHTTPRequestHandler):
    server_version = "autolab-stub-llm/1"

    def log_message(self, format, *args):  # noqa: A002  (quiet in tests)
        pass

    def do_GET(self):  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            return self._send(200, {"object": "list", "data": [{"id": "scripted-stub", "object": "model"}]})
        return self._send(404, {"error": {"message": "not found"}})

    def do_POST(self):  # noqa: N802
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._send(400, {"error": {"message": "invalid JSON"}})
        state: StubState = self.server.state  # type: ignore[attr-defined]
        with state.lock:
            state.requests += 1
        messages = body.get("messages") or []
        content = state.choose(messages)
        prompt_tokens = sum(len(_content(m)) for m in messages) // 4 + 1
        completion_tokens = len(content) // 4 + 1
        return self._send(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model") or "scripted-stub",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class StubServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, scripts: list[Script]):
        super().__init__(("127.0.0.1", port), Handler)
        self.state = StubState(scripts)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "StubServer":
        self._thread = threading.Thread(target=self.serve_forever, name="stub-llm", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        super().shutdown()
        self.server_close()


def default_scripts() -> list[Script]:
    """Scripts for every task under examples/tasks and the runner's own test tasks."""
    # This file is <root>/evaluations/running/stub_llm.py.
    evaluations = Path(__file__).resolve().parents[1]
    root = evaluations.parent
    scripts = []
    folders = [root / "examples" / "tasks", root / "examples" / "tasks" / "rebench", evaluations / "tests" / "tasks"]
    for folder in folders:
        if not folder.is_dir():
            continue
        for task_dir in sorted(folder.iterdir()):
            if (task_dir / "solution" / "solve.sh").is_file() and (task_dir / "instruction.md").is_file():
                scripts.append(script_for_task(task_dir))
    return scripts


def start_stub_server(port: int = 0, scripts: list[Script] | None = None) -> StubServer:
    """Start the stub in a background thread; port 0 picks a free port."""
    return StubServer(port, scripts if scripts is not None else default_scripts()).start()


_running: StubServer | None = None


class StubPortTaken(RuntimeError):
    """The stub's port is held by a program that is not the stub."""


def ensure_stub_server(port: int) -> StubServer | None:
    """Serve the stub on `port` from this process unless the stub already listens there.

    Workers call this before running a scripted model, so the demo needs no
    separate server process. Returns the server started here, or None when
    another worker process serves it. Raises StubPortTaken when something
    else holds the port: the agent would get its answers (a web server's
    404s, say) and fail for a reason that has nothing to do with it.
    """
    global _running
    if _running is not None and _running.port == port:
        return _running
    try:
        _running = start_stub_server(port=port)
    except OSError:
        if not is_stub_listening(port):
            raise StubPortTaken(
                f"port {port} on 127.0.0.1 is held by another program, not the scripted stub LLM; "
                "stop it or set AUTOLAB_STUB_LLM_PORT to a free port"
            ) from None
        return None
    return _running


def is_stub_listening(port: int) -> bool:
    """Whether the scripted stub (of this or another process) answers on `port`."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as response:
            return response.headers.get("Server", "").startswith(Handler.server_version)
    except (OSError, ValueError):
        return False


def stop_stub_server() -> None:
    """Stop the server ensure_stub_server started in this process, if any."""
    global _running
    if _running is not None:
        _running.shutdown()
        _running = None
