"""Trajectory analysis: step kinds, edit diffs, benchmark metrics, best-so-far curve.

Pure functions over parsed steps (no ORM, no HTTP): ingestion calls
`analyse_rollout` once per rollout and stores the result beside the steps.

A long-running benchmark (terminus-2 starts it and then polls with empty
keystrokes) prints its result in a later step's observation. When a
benchmark step's own output holds no metric, the observations of the
following polls are read, up to the next step that does anything else. A
metric found there is the benchmark step's (the call that ran the command,
and its step shows it), while its point on the best-so-far curve lies at the
step that printed it, at that step's elapsed time: the result was not known
before. A poll is a step that only waits (empty keystrokes, sleep), waits
and looks, or reads the file the benchmark's output was sent to
(`python3 evaluate.py > eval.log &`, then `tail eval.log`). Terminal text
before the last echo of the benchmark command is ignored: a screen may still
show the previous run's result.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

from trajectories.analysis import tool_vocabulary as vocabulary

from trajectories.analysis.benchmark_commands import matcher_for
from trajectories.analysis.curve import Reading, aware, best_so_far
from trajectories.analysis.edits import FileTracker, cat_outputs, prompt_cwd, tool_writes
from trajectories.analysis.metrics import find_metric
from trajectories.reading.parsed import MetricReading, ParsedStep, ParsedToolCall, RolloutAnalysis, StepAnalysis, TaskSpec
from trajectories.analysis.shell import Command, split_commands
from trajectories.analysis.step_kinds import Context, StepKind, call_kinds, shell_text, union
from trajectories.analysis.tool_vocabulary import message_commands, rejected_reply, text_function_calls

__all__ = ["StepKind", "analyse_rollout"]

BENCHMARK = StepKind.BENCHMARK.value
EDIT = StepKind.EDIT.value
WAIT = StepKind.WAIT.value
INSPECT = StepKind.INSPECT.value
SUBMIT = StepKind.SUBMIT.value
# What most steps (no benchmark call) keep of their benchmark calls: nothing, shared.
_NOTHING: frozenset[str] = frozenset()


def analyse_rollout(
    steps: list[ParsedStep],
    spec: TaskSpec,
    agent_started_at: datetime | None,
    *,
    max_wait_steps: int = 200,
) -> RolloutAnalysis:
    """Analyse one rollout's steps against its task.

    `agent_started_at` anchors elapsed times; without it the first step's
    timestamp does. `max_wait_steps` bounds how far a benchmark's result is
    looked for in the polls that follow it.
    """
    analyser = RolloutAnalyser(spec, agent_started_at, max_wait_steps=max_wait_steps)
    analyser.add(steps)
    return analyser.result()


class RolloutAnalyser:
    """analyse_rollout one batch of steps at a time, for a rollout that is still running.

    Each step is analysed once, when it arrives: what a step is depends
    only on the steps before it (the files they wrote, the calls already
    classified). Only a benchmark step whose result is still awaited (its
    polls reach the last step so far) is looked at again when more steps
    arrive. `result()` after each `add` equals analyse_rollout of all the
    steps added so far, at a cost that grows with the new steps, not with
    the rollout.
    """

    def __init__(self, spec: TaskSpec, agent_started_at: datetime | None, *, max_wait_steps: int = 200):
        self.spec = spec
        self.agent_started_at = agent_started_at
        self.max_wait_steps = max_wait_steps
        self.steps: list[ParsedStep] = []
        self.analyses: list[StepAnalysis] = []
        self._context = Context(benchmark=matcher_for(spec))
        self._tracker = FileTracker()
        self._classified: dict[tuple, _Call] = {}
        self._benchmark_call_ids: list[set[str]] = []
        self._step_commands: list[list[Command]] = []
        self._benchmark_logs: list[set[str]] = []
        self._benchmark_lines: list[list[str]] = []
        self._n_benchmark_calls = 0
        self._n_edits = 0
        self._first_benchmark: int | None = None
        self._editors: dict[str, list[int]] = {}
        # Benchmark steps whose result may still come, by position.
        self._awaited: list[int] = []
        self._revised: set[int] = set()
        # Benchmark steps that have a metric, in order: each is measured at the first result() after it arrived.
        self._measured: list[int] = []
        # Where a benchmark step's metric was printed, when a later poll printed it: by position.
        self._printed: dict[int, int] = {}
        self._times: list[float | None] = []
        self._start: datetime | None = None
        # The calls of the last step that did more than wait (_call_keys), to tell a check repeated.
        self._last_calls: tuple | None = None
        # Steps before this one are held without their text (let_go).
        self._let_go = 0

    def add(self, steps: list[ParsedStep]) -> None:
        for step in steps:
            self._add(step)

    def _add(self, step: ParsedStep) -> None:
        tracker, context = self._tracker, self._context
        per_call: list[list[str]] = []
        diffs: list[str] = []
        edited: list[str] = []
        commands_here: list[Command] = []
        # Only filled for benchmark calls.
        benchmark_ids: set[str] = set()
        logs: set[str] = set()
        typed: list[str] = []
        reads_files = False
        calls = step.tool_calls or _message_calls(step)
        for call in calls:
            text, commands, kinds, reads = _classify(call, context, self._classified)
            reads_files = reads_files or reads
            per_call.append(list(kinds))
            if commands:
                commands_here.extend(commands)
            if BENCHMARK in kinds:
                self._n_benchmark_calls += 1
                benchmark_ids.add(call.call_id)
                logs.update(_output_files(commands))
                typed.append((text or "").strip().split("\n", 1)[0][:60])
            if EDIT in kinds or commands:
                for path, diff in _apply_edits(tracker, call, commands):
                    diffs.append(diff)
                    if path and path not in edited:
                        edited.append(path)
            if step.observations:
                # Before the next call: it may edit what this one read (Codex bundles calls in one step).
                _learn_from_read(tracker, step, call, commands, len(calls), skip=set(edited))
        if step.observations:
            skip = set(edited)
            for observation in step.observations:
                _learn(tracker, observation.content, skip=skip, reads_files=reads_files)
        # One call's kinds (ordered, "other" only alone) are already its step's kinds.
        kinds = list(per_call[0]) if len(per_call) == 1 else union(per_call)
        if step.extra.get("task_complete") is True and SUBMIT not in kinds:
            # terminus-2 may record `"task_complete": true` on the step itself.
            kinds = union(per_call + [[SUBMIT]])
        # Commands read from the message are no stored tool calls: their kinds are the step's only.
        call_kinds_stored = per_call if step.tool_calls else []
        position = len(self.steps)
        self.steps.append(step)
        keys = _call_keys(calls)
        repeats = keys is not None and keys == self._last_calls and _only_looks(kinds)
        if calls and not set(kinds) <= {WAIT}:
            self._last_calls = keys
        self.analyses.append(
            StepAnalysis(kinds=kinds, call_kinds=call_kinds_stored, diff="".join(diffs), edited_files=edited, repeats=repeats)
        )
        self._step_commands.append(commands_here)
        if typed:
            self._benchmark_call_ids.append(benchmark_ids)
            self._benchmark_logs.append(logs)
            self._benchmark_lines.append([line for line in typed if line])
        else:
            self._benchmark_call_ids.append(_NOTHING)
            self._benchmark_logs.append(_NOTHING)
            self._benchmark_lines.append([])
        if BENCHMARK in kinds:
            self._awaited.append(position)
            if self._first_benchmark is None:
                self._first_benchmark = position
        if EDIT in kinds:
            self._n_edits += 1
        for path in edited:
            self._editors.setdefault(path, []).append(step.step_id)
        self._add_time(step)

    def _add_time(self, step: ParsedStep) -> None:
        if self._start is None:
            start = self.agent_started_at or step.timestamp
            if start is None:
                self._times.append(None)
                return
            # The first timestamp anchors the rollout: the steps before it had none.
            self._start = aware(start)
        self._times.append(None if step.timestamp is None else (aware(step.timestamp) - self._start).total_seconds())

    def let_go(self, light: list[ParsedStep]) -> None:
        """Attach the metrics that can be now, then hold `light[i]` instead of each step no metric can still read.

        For an importer that streams a long trajectory (its steps' text
        decoded weighed 1.7 times the file): `light` holds the same steps
        without their text (reading.atif.without_text). A metric reads its
        benchmark step's observations and the polls after it, so every step
        before the first still awaited is done with. The result is the same:
        result() after any add equals the analysis of the steps so far.
        """
        self._attach_metrics()
        done = min(self._awaited, default=len(self.steps))
        for position in range(self._let_go, done):
            self.steps[position] = light[position]
        self._let_go = max(self._let_go, done)

    def revised(self) -> set[int]:
        """Positions of the steps whose metric the last result() changed (new steps aside), and forget them."""
        revised, self._revised = self._revised, set()
        return revised

    def result(self) -> RolloutAnalysis:
        self._attach_metrics()
        return self._summarise()

    def _attach_metrics(self) -> None:
        """A metric for each awaited benchmark step; it stays awaited while its polls reach the last step so far."""
        steps, analyses, spec = self.steps, self.analyses, self.spec
        still: list[int] = []
        for index in self._awaited:
            lines = self._benchmark_lines[index]
            reading = find_metric(_after_echo(_observation_text(steps[index], self._benchmark_call_ids[index]), lines), spec)
            following = index + 1
            while reading is None and following < len(steps) and following - index <= self.max_wait_steps:
                if not _is_poll(steps[following], analyses[following], self._step_commands[following], self._benchmark_logs[index]):
                    break
                reading = find_metric(_after_echo(_observation_text(steps[following], set()), lines), spec)
                if reading is not None:
                    self._printed[index] = following
                following += 1
            if reading is None and following >= len(steps) and following - index <= self.max_wait_steps:
                still.append(index)
            metric = reading or MetricReading(status="unparseable")
            if analyses[index].metric is None:
                self._measured.append(index)
            elif analyses[index].metric != metric:
                self._revised.add(index)
            analyses[index].metric = metric
        self._awaited = still

    def _reading(self, index: int) -> Reading:
        """Benchmark step `index`'s metric placed where it was printed; at the step's own time when that step has none."""
        at = self._printed.get(index, index)
        t = self._times[at] if self._times[at] is not None else self._times[index]
        return Reading(step_id=self.steps[at].step_id, t=t, reading=self.analyses[index].metric)

    def _summarise(self) -> RolloutAnalysis:
        analyses, times = self.analyses, self._times
        readings = [self._reading(index) for index in self._measured]
        curve = best_so_far(readings, self.spec.direction)
        improvements = [point.t for point in curve if point.improved and point.t is not None]
        last_t = next((t for t in reversed(times) if t is not None), None)
        budget_used = None
        if last_t is not None and self.spec.budget_sec:
            budget_used = last_t / self.spec.budget_sec
        return RolloutAnalysis(
            steps=analyses,
            curve=curve,
            n_benchmark_calls=self._n_benchmark_calls,
            n_edits=self._n_edits,
            first_benchmark_sec=times[self._first_benchmark] if self._first_benchmark is not None else None,
            last_improvement_sec=improvements[-1] if improvements else None,
            budget_used_fraction=budget_used,
            best_metric=curve[-1].best_metric if curve else None,
            best_score=curve[-1].best_score if curve else None,
            files=self._tracker.net_changes(self._editors),
        )


class _Call(NamedTuple):
    text: str | None  # the shell text, None when not a shell call
    commands: list[Command]
    kinds: list[str]
    reads_files: bool  # runs `cat`: its output may show a file's content


def _classify(call, context: Context, seen: dict) -> _Call:
    """What a call runs and its kinds.

    A rollout repeats calls (terminus-2 polls with the same empty keystrokes
    over and over): identical calls, same tool and same arguments, are
    classified once per rollout. The commands are shared between them and
    must not be changed.
    """
    key = _call_key(call)
    found = seen.get(key) if key is not None else None
    if found is None:
        text = shell_text(call)
        commands = split_commands(text) if text is not None else []
        reads_files = any(command.program == "cat" for command in commands)
        found = _Call(text, commands, call_kinds(call, context, commands), reads_files)
        if key is not None:
            seen[key] = found
    return found


def _call_keys(calls) -> tuple | None:
    """The calls of a step as one comparable value; None when it has none, or one cannot be compared."""
    keys = tuple(_call_key(call) for call in calls)
    return keys if keys and None not in keys else None


def _only_looks(kinds: list[str]) -> bool:
    """A step that inspects, and perhaps waits, and does nothing else."""
    return INSPECT in kinds and set(kinds) <= {INSPECT, WAIT}


def _call_key(call) -> tuple | None:
    """The tool and its arguments as a dict key; None when an argument is a list or a dict.

    The arguments' types are part of the key: `True == 1`, yet the rules tell them apart.
    """
    arguments = call.arguments
    if type(arguments) is not dict:
        return None
    key = (call.function_name, tuple(arguments.items()), tuple(map(type, arguments.values())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _apply_edits(tracker: FileTracker, call, commands):
    writes = tool_writes(call)
    if writes is not None:
        for write in writes:
            yield tracker.apply(write)
        return
    yield from tracker.apply_commands(commands or [])


def _message_calls(step: ParsedStep) -> list[ParsedToolCall]:
    """An agent step without tool calls may hold its commands in its message (tool_vocabulary.message_commands).

    Not a reply the harness refused (terminus-2 answers an unparseable one
    with its parse-error prompt, and runs nothing of it); OpenHands' calls
    written as text are calls like any other.
    """
    if step.source != "agent" or not step.message:
        return []
    if rejected_reply([o.content for o in step.observations]):
        return []
    text_calls = text_function_calls(step.message)
    if text_calls:
        return [ParsedToolCall("", name, arguments) for name, arguments in text_calls]
    calls = []
    for command in message_commands(step.message):
        if command.submit:
            calls.append(ParsedToolCall("", "mark_task_complete", {}))
        elif command.keystrokes:
            calls.append(ParsedToolCall("", "bash_command", {"keystrokes": command.text}))
        else:
            calls.append(ParsedToolCall("", "bash", {"command": command.text}))
    return calls


def _learn_from_read(tracker: FileTracker, step: ParsedStep, call, commands: list[Command], n_calls: int, skip: set[str]) -> None:
    """Seed a file's content from what a read tool (Read, read_file, view) or a lone `cat file` command showed.

    A terminal's `cat` output is read from its screen (cat_outputs); a
    tool's output is the file itself, once its line numbers are taken off.
    """
    use = vocabulary.use_of(call)
    path = ""
    if use.role == vocabulary.READ or (use.role == vocabulary.EDITOR and use.action == "view"):
        path = use.path if use.whole_file else ""
    elif use.role == vocabulary.SHELL and not use.keystrokes:
        path = _lone_cat(commands)
    if not path or tracker.resolve(path) in skip:
        return
    output = _output_of(step, call, n_calls)
    content = vocabulary.read_output_content(_unwrap(output)) if output is not None else None
    if content is not None:
        tracker.seed(path, content)


def _lone_cat(commands: list[Command]) -> str:
    """The file of a call that is one `cat <file>` and nothing else, or ""."""
    if len(commands) != 1:
        return ""
    command = commands[0]
    words = command.words
    if command.program != "cat" or len(words) != 2 or words[1].startswith("-") or command.output_files or len(command.stages) != 1:
        return ""
    return words[1]


def _output_of(step: ParsedStep, call, n_calls: int) -> str | None:
    linked = [obs.content for obs in step.observations if call.call_id and obs.source_call_id == call.call_id]
    if linked:
        return linked[0]
    if n_calls == 1 and len(step.observations) == 1:
        return step.observations[0].content
    return None


# mini-swe-agent wraps a command's output: <returncode>0</returncode>\n<output>\n...</output>
_MINI_OUTPUT = re.compile(r"\A\s*<returncode>0</returncode>\s*<output>\n?(.*)</output>\s*\Z", re.S)


def _unwrap(output: str) -> str:
    match = _MINI_OUTPUT.match(output)
    return match.group(1) if match else output


def _learn(tracker: FileTracker, content: str, skip: set[str], reads_files: bool) -> None:
    """Seed file contents from `cat` output, except files this very step changed; follow the prompt's cwd."""
    if reads_files:
        for path, text in cat_outputs(content):
            if tracker.resolve(path) not in skip:
                tracker.seed(path, text)
    cwd = prompt_cwd(content)
    if cwd:
        tracker.cwd = cwd


def _observation_text(step: ParsedStep, call_ids: set[str]) -> str:
    """The output of a step's benchmark calls: linked results when the harness links them, else all."""
    linked = [obs.content for obs in step.observations if obs.source_call_id and obs.source_call_id in call_ids]
    if linked:
        return "\n".join(linked)
    if any(obs.source_call_id for obs in step.observations) and call_ids - {""}:
        # Results are linked, but none to a benchmark call: unlinked ones may still hold it.
        return "\n".join(obs.content for obs in step.observations if not obs.source_call_id)
    return "\n".join(obs.content for obs in step.observations)


def _after_echo(text: str, typed_lines: list[str]) -> str:
    """Terminal text from the last echo of the benchmark command on.

    A terminal screen can still show an earlier run's result above the
    command just typed; that result is not this run's.
    """
    cut = max((text.rfind(line) for line in typed_lines), default=-1)
    return text[cut:] if cut > 0 else text


def _is_poll(step: ParsedStep, analysis: StepAnalysis, commands: list[Command], logs: set[str]) -> bool:
    """Waits, waits and looks, or reads the benchmark's log: the benchmark may still be printing."""
    kinds = set(analysis.kinds)
    if not step.tool_calls or not kinds or not kinds <= {WAIT, INSPECT}:
        return False
    if WAIT in kinds:
        return True
    return bool(logs) and any(word in logs for command in commands for stage in command.stages for word in stage[1:])


def _output_files(commands: list[Command]) -> set[str]:
    """Where a benchmark's output went: `> eval.log`, `| tee eval.log`."""
    files = {path for command in commands for _, path in command.output_files}
    for command in commands:
        for stage in command.stages:
            if stage and stage[0].rsplit("/", 1)[-1] == "tee":
                files.update(word for word in stage[1:] if not word.startswith("-"))
    return files
