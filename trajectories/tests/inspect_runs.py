"""Real Inspect AI logs made by the test suite: a tiny task run offline on Inspect's `mockllm`.

The task is RE-Bench-like: the model calls `bash` to run a scoring tool
(`python3 /app/score.py`), which records a runtime and then an
intermediate score (Inspect's `score()`: a ScoreEvent with
`intermediate=True`, as METR's task bridge records a scoring tool's
scores). The scorer normalises the runtime under the window_sums rule
(start 5 ms, reference 0.1 ms, log) and carries the raw runtime in its
metadata. The model's replies are scripted ModelOutputs with their usage
set, so no token counting (which would download tiktoken) ever happens.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import math
import re
from pathlib import Path

START_MS, REFERENCE_MS = 5.0, 0.1


def normalised(runtime_ms: float) -> float:
    return max(0.0, (math.log(runtime_ms) - math.log(START_MS)) / (math.log(REFERENCE_MS) - math.log(START_MS)))


def make_eval_log(
    log_dir: Path,
    runtimes: list[float],
    *,
    task_name: str = "window_sums",
    final_runtime: float | None = None,
    samples: int = 1,
    model: str = "mockllm/model",
    solver_name: str = "scored_agent",
    cost_per_call: float = 0.01,
    log_format: str = "eval",
) -> Path:
    """Run the task once per sample; return the log's path (.eval, or .json with log_format="json")."""
    from inspect_ai import Task, eval
    from inspect_ai.agent import AgentState
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, execute_tools, get_model
    from inspect_ai.model._providers.mockllm import MockLLM
    from inspect_ai.scorer import Score, mean, score, scorer
    from inspect_ai.solver import solver
    from inspect_ai.tool import tool
    from inspect_ai.util import store

    @tool(name="bash")
    def bash():
        async def execute(cmd: str) -> str:
            """Run a shell command.

            Args:
                cmd: The command to run.
            """
            found = re.search(r"--runtime ([0-9.]+)", cmd)
            if "score.py" in cmd and found:
                # The scoring tool: it measures, then records an intermediate score as METR's bridge does.
                store().set("runtime_ms", float(found.group(1)))
                await score(AgentState(messages=[]))
                return f"correct: yes\nruntime_ms: {float(found.group(1)):.4f}\n"
            return "solve.py starter.py score.py\n"

        return execute

    @scorer(metrics=[mean()])
    def runtime_score():
        async def do_score(state, target):
            runtime = store().get("runtime_ms")
            if runtime is None:
                return Score(value=0.0, explanation="not scored yet")
            return Score(value=round(normalised(runtime), 6), metadata={"raw": runtime})

        return do_score

    @solver(name=solver_name)
    def scored_agent():
        async def solve(state, generate):
            state.tools = [bash()]
            while True:
                output = await get_model().generate(state.messages, tools=state.tools)
                state.output = output
                state.messages.append(output.message)
                if not output.message.tool_calls:
                    break
                result = await execute_tools(state.messages, state.tools)
                state.messages.extend(m for m in result.messages if isinstance(m, ChatMessageTool))
            if final_runtime is not None:
                store().set("runtime_ms", final_runtime)
            return state

        return solve

    def replies():
        for _ in range(samples):
            calls = [("ls /app", None)] + [(f"python3 /app/score.py --runtime {r}", r) for r in runtimes]
            for number, (command, _) in enumerate(calls):
                out = ModelOutput.for_tool_call(model="mockllm", tool_name="bash", tool_arguments={"cmd": command},
                                                content=f"Step {number}: run it.")
                out.usage = ModelUsage(input_tokens=100 + number, output_tokens=20, total_tokens=120 + number,
                                       total_cost=cost_per_call)
                yield out
            done = ModelOutput.from_content(model="mockllm", content="Done.")
            done.usage = ModelUsage(input_tokens=200, output_tokens=5, total_tokens=205, total_cost=cost_per_call)
            yield done

    task = Task(
        name=task_name,
        dataset=[Sample(id=f"run-{i + 1}", input="Make window_sums fast; score with python3 /app/score.py.", target="")
                 for i in range(samples)],
        solver=scored_agent(),
        scorer=runtime_score(),
    )
    def run():
        with _offline_token_count(MockLLM):
            return eval(
                task,
                model=get_model(model, custom_outputs=replies()),
                log_dir=str(log_dir),
                log_format=log_format,
                display="none",
                max_samples=1,
            )

    # A thread of its own: Inspect runs an event loop, and the caller may have one running (Playwright's).
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        logs = pool.submit(run).result()
    log = logs[0]
    assert log.status == "success", log.error
    return Path(log.location)


def make_qa_log(log_dir: Path, answers: dict[str, str | None], *, target: str = "Paris", errors: tuple[str, ...] = (),
                parallel_submit: bool = False) -> Path:
    """A question task scored by Inspect's `includes()` ("C" / "I"), answered through basic_agent's `submit`.

    `answers`: sample id -> the answer its model submits; samples in
    `errors` raise in the solver, which Inspect records as the sample's
    error (fail_on_error=False) and does not score. With `parallel_submit`
    the model runs `bash` and submits in one message.
    """
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageAssistant, ModelOutput, ModelUsage, get_model
    from inspect_ai.model._providers.mockllm import MockLLM
    from inspect_ai.scorer import includes
    from inspect_ai.solver import basic_agent, solver
    from inspect_ai.tool import ToolCall, bash

    def replies():
        for sample_id, answer in answers.items():
            if sample_id in errors:
                continue
            out = ModelOutput.for_tool_call(model="mockllm", tool_name="submit", tool_arguments={"answer": answer},
                                            content="I know.")
            if parallel_submit:
                out.choices[0].message = ChatMessageAssistant(content="Check, then answer.", model="mockllm", tool_calls=[
                    ToolCall(id="c1", function="bash", arguments={"cmd": "echo checked"}),
                    ToolCall(id="c2", function="submit", arguments={"answer": answer}),
                ])
            out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
            yield out

    agent = basic_agent(tools=[bash()] if parallel_submit else [], max_attempts=1)

    @solver
    def maybe_failing():
        async def solve(state, generate):
            if state.sample_id in errors:
                raise RuntimeError("the sandbox went away")
            return await agent(state, generate)

        return solve

    task = Task(name="capitals", dataset=[Sample(id=i, input="Capital of France?", target=target) for i in answers],
                solver=maybe_failing(), scorer=includes())

    def run():
        with _offline_token_count(MockLLM):
            return eval(task, model=get_model("mockllm/model", custom_outputs=replies()), log_dir=str(log_dir),
                        display="none", max_samples=1, fail_on_error=False)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        log = pool.submit(run).result()[0]
    return Path(log.location)


@contextlib.contextmanager
def _offline_token_count(mock_class):
    """mockllm counts tokens with tiktoken, which downloads its encoding: count characters instead."""
    original = mock_class.count_text_tokens

    async def by_characters(self, text: str) -> int:
        return max(1, len(text) // 4)

    mock_class.count_text_tokens = by_characters
    try:
        yield
    finally:
        mock_class.count_text_tokens = original


def make_graded_epochs_log(log_dir: Path, grades: dict[str, str], *, reducer: str | None = None) -> Path:
    """A task of several epochs whose solver answers by a script: `grades[sample][epoch - 1]`.

    Each grade is Inspect's letter ("C", "I", "P"), scored as it is; "!"
    makes that epoch raise, which Inspect records as the sample's error and
    does not score. `reducer` is the task's epoch reducer (Inspect's default,
    "mean", when None).
    """
    from inspect_ai import Epochs, Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.model._providers.mockllm import MockLLM
    from inspect_ai.scorer import Score, accuracy, scorer, stderr
    from inspect_ai.solver import solver

    @solver
    def scripted_grader():
        async def solve(state, generate):
            grade = grades[str(state.sample_id)][state.epoch - 1]
            if grade == "!":
                raise RuntimeError("the sandbox went away")
            state.output = ModelOutput.from_content(model="mockllm", content=grade)
            return state

        return solve

    @scorer(metrics=[accuracy(), stderr()])
    def letter():
        async def score(state, target):
            return Score(value=state.output.completion)

        return score

    n_epochs = max(len(g) for g in grades.values())
    task = Task(name="capitals", dataset=[Sample(id=i, input="Capital of France?", target="Paris") for i in grades],
                solver=scripted_grader(), scorer=letter(), epochs=Epochs(n_epochs, reducer) if reducer else n_epochs)

    def run():
        with _offline_token_count(MockLLM):
            return eval(task, model="mockllm/model", log_dir=str(log_dir), display="none", fail_on_error=False)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        log = pool.submit(run).result()[0]
    return Path(log.location)
