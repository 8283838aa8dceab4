"""What each step of a rollout does: benchmark, edit, build, inspect, wait, submit.

One table (`RULES`) decides. A tool call's kinds are the union of the rules
that fire for it: call-level rules look at the tool itself (submit tools,
editors, empty keystrokes), command-level rules look at each simple command
of a shell call (a terminus-2 keystroke string may hold several, joined by
`&&`, `;` or newlines; heredoc bodies are never split). A step's kinds are
the union over its calls. A call that no rule claims is "other".

What a tool is (a shell, an editor, a reader, a submit tool), whatever a
harness calls it, comes from the one vocabulary table in
trajectories.analysis.tool_vocabulary. terminus-2's keystrokes are text typed into
tmux: "" or "\\n" just waits, "C-c" is a key chord.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Callable

from trajectories.analysis.benchmark_commands import BenchmarkMatcher
from trajectories.analysis import tool_vocabulary as vocabulary
from trajectories.analysis.edits import is_editor_view, shell_writes, tool_writes
from trajectories.reading.parsed import ParsedToolCall
from trajectories.analysis.shell import Command, split_commands


class StepKind(str, Enum):
    BENCHMARK = "benchmark"
    EDIT = "edit"
    BUILD = "build"
    INSPECT = "inspect"
    WAIT = "wait"
    SUBMIT = "submit"
    OTHER = "other"

    def __str__(self) -> str:
        return self.value


ORDER = [kind.value for kind in StepKind]

# tmux key names terminus-2 accepts as keystrokes ("C-c", "Escape", ...).
_TMUX_KEY = re.compile(r"(?:C|M|S)-\S|Escape|Enter|Tab|BSpace|Up|Down|Left|Right|Home|End|PageUp|PageDown|NPage|PPage")

_INSPECT_PROGRAMS = {
    "cat", "ls", "ll", "grep", "egrep", "fgrep", "rg", "ag", "head", "tail", "less", "more", "find", "fd", "wc",
    "nvidia-smi", "ps", "top", "htop", "df", "du", "free", "file", "stat", "tree", "pwd", "which", "whereis", "type",
    "env", "printenv", "uname", "lscpu", "nproc", "hostname", "whoami", "id", "date", "uptime", "lsof", "pgrep",
    "diff", "cmp", "md5sum", "sha256sum", "sha1sum", "xxd", "od", "hexdump", "readlink", "realpath", "jq", "bat",
    "awk", "column", "sort", "uniq", "cut", "strings", "nm", "objdump", "readelf", "ldd", "lspci",
    "locate", "history", "watch", "vmstat", "iostat", "mount", "ulimit", "getconf", "lsblk", "tac",
}
_GIT_INSPECT = {"diff", "log", "status", "show", "branch", "blame", "ls-files", "grep", "rev-parse", "remote"}
_PIP_INSPECT = {"list", "show", "freeze", "check", "--version", "-V"}
_BUILD_PROGRAMS = {
    "make", "cmake", "ninja", "gcc", "g++", "cc", "c++", "clang", "clang++", "nvcc", "rustc", "javac", "meson",
    "bazel", "scons", "ld", "ar", "as", "tsc", "maturin",
}
_PYTHON = re.compile(r"python[0-9.]*")
_INSTALLERS = {"pip", "pip3", "conda", "mamba", "apt", "apt-get", "npm", "yarn", "pnpm", "poetry", "gem", "brew"}


@dataclass
class Context:
    """What the rules may consult besides the command."""

    benchmark: BenchmarkMatcher


@dataclass(frozen=True)
class Rule:
    kind: StepKind
    why: str
    call: Callable[[ParsedToolCall], bool] | None = None  # call-level test
    command: Callable[[Command, Context], bool] | None = None  # per simple shell command


def _python_prints(command: Command) -> bool:
    """`python -c "..."` or `python - <<EOF` that writes no file: a look at the environment."""
    words = command.words
    if not words or _PYTHON.fullmatch(command.program) is None:
        return False
    if "--version" in words or "-V" in words:
        return True
    inline = "-c" in words or (command.heredoc is not None and (len(words) == 1 or words[1:2] == ["-"]))
    return inline and not shell_writes(command)


def _is_benchmark(command: Command, context: Context) -> bool:
    # Reading or writing the benchmark script is not running it.
    if command.program in _INSPECT_PROGRAMS or shell_writes(command):
        return False
    if any(word in ("--help", "-h") for word in command.words[1:]):
        return False
    return context.benchmark.matches(command)


def _inspects(command: Command, context: Context) -> bool:
    program, words = command.program, command.words
    if shell_writes(command):
        return False
    if any(word in ("--help", "-h", "--version") for word in words[1:2] + words[-1:]) and not command.output_files:
        return True  # reading a program's usage is reading
    if program == "tail" and _follows(words):
        return False  # tail -f watches a running job: waiting
    if program == "sed":
        return "-i" not in words and not any(word.startswith("-i") for word in words)
    if program == "git":
        return len(words) > 1 and words[1] in _GIT_INSPECT
    if program in ("pip", "pip3") or (program.startswith("python") and words[1:3] == ["-m", "pip"]):
        sub = words[3] if program.startswith("python") and len(words) > 3 else (words[1] if len(words) > 1 else "")
        return sub in _PIP_INSPECT
    if program == "cargo":
        return len(words) > 1 and words[1] in ("tree", "metadata", "--version")
    return program in _INSPECT_PROGRAMS or _python_prints(command)


def _builds(command: Command, context: Context) -> bool:
    program, words = command.program, command.words
    if program in _BUILD_PROGRAMS:
        return True
    if program == "cargo":
        return len(words) > 1 and words[1] in ("build", "run", "bench", "test", "check", "install", "rustc")
    if program == "go":
        return len(words) > 1 and words[1] in ("build", "install", "run", "test")
    if program in _INSTALLERS or (program.startswith("python") and words[1:3] == ["-m", "pip"]):
        return any(word in ("install", "add", "sync", "build") for word in words[1:3] + words[3:4])
    if program == "uv":
        return len(words) > 1 and (words[1] in ("sync", "add", "build") or words[1:3] == ["pip", "install"])
    if program.startswith("python") and len(words) > 1 and words[1].endswith("setup.py"):
        return True
    if program.startswith("python") and words[1:3] == ["-m", "build"]:
        return True
    return False


def _waits(command: Command, context: Context) -> bool:
    program, words = command.program, command.words
    if program in ("sleep", "wait"):
        return True
    if program == "tmux" and len(words) > 1 and words[1] in ("wait", "wait-for"):
        return True
    return program == "tail" and _follows(words)


def _follows(words: list[str]) -> bool:
    return any(word in ("-f", "-F", "--follow") for word in words[1:])


def _empty_keystrokes(call: ParsedToolCall) -> bool:
    """Nothing typed, only key chords, or a few keys without Enter left to sit for a while."""
    text = shell_text(call)
    if text is None:
        return False
    # Only key names typed? The first word usually says no without splitting a long text.
    first = text.split(None, 1)
    if not first or (_TMUX_KEY.fullmatch(first[0]) and all(_TMUX_KEY.fullmatch(word) for word in text.split())):
        return True
    # terminus-2: keystrokes without a newline are not run; with a long
    # duration they answer a prompt or page through output and then wait.
    args = call.arguments if isinstance(call.arguments, dict) else {}
    duration = args.get("duration")
    long_wait = isinstance(duration, (int, float)) and duration >= 10
    return "keystrokes" in args and long_wait and "\n" not in text and len(text) <= 20


def _submits(call: ParsedToolCall) -> bool:
    args = call.arguments if isinstance(call.arguments, dict) else {}
    if args.get("task_complete") is True:
        return True
    return vocabulary.use_of(call).role == vocabulary.SUBMIT


def _editor_writes(call: ParsedToolCall) -> bool:
    writes = tool_writes(call)
    return bool(writes)


def _submit_echo(command: Command, context: Context) -> bool:
    # mini-swe-agent ends with `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.
    return command.program == "echo" and any("SUBMIT" in word and "COMPLETE" in word for word in command.words)


def _background_output(call: ParsedToolCall) -> bool:
    """Reading a background job's new output (claude-code's BashOutput): waiting on it."""
    return vocabulary.use_of(call).role == vocabulary.WAIT


RULES: tuple[Rule, ...] = (
    Rule(StepKind.SUBMIT, "the harness's submit / task-complete tool", call=_submits),
    Rule(StepKind.WAIT, "empty keystrokes or a bare key chord (C-c): the agent waits", call=_empty_keystrokes),
    Rule(StepKind.WAIT, "reads a background job's output (BashOutput)", call=_background_output),
    Rule(StepKind.EDIT, "editor or patch tool writing a file", call=_editor_writes),
    Rule(StepKind.INSPECT, "a tool reading or searching files (Read, view, Grep, read_file)", call=is_editor_view),
    Rule(StepKind.BENCHMARK, "runs the task's local evaluation", command=_is_benchmark),
    Rule(StepKind.EDIT, "writes a file (heredoc, echo >, tee, sed -i, python open(...,'w'), cp, patch)",
         command=lambda command, context: bool(shell_writes(command))),
    Rule(StepKind.BUILD, "compiles or installs (make, gcc, nvcc, cargo build, pip install)", command=_builds),
    Rule(StepKind.INSPECT, "reads files or the system (cat, ls, grep, nvidia-smi, git diff)", command=_inspects),
    Rule(StepKind.WAIT, "sleep / wait / tail -f", command=_waits),
    Rule(StepKind.SUBMIT, "mini-swe-agent's submit echo", command=_submit_echo),
)


def shell_text(call: ParsedToolCall) -> str | None:
    """The shell text a call runs, or None when it is not a shell call (see tool_vocabulary)."""
    use = vocabulary.use_of(call)
    if use.role == vocabulary.SHELL:
        return use.command if use.command is not None else ("" if use.keystrokes else None)
    if use.role == vocabulary.PYTHON:
        return use.command
    return None


# The table split by level once, so that each call and command only meets the rules of its level.
_CALL_RULES = tuple((rule.call, rule.kind.value) for rule in RULES if rule.call is not None)
_COMMAND_RULES = tuple((rule.command, rule.kind.value) for rule in RULES if rule.command is not None)
_WAIT, _BENCHMARK, _OTHER = StepKind.WAIT.value, StepKind.BENCHMARK.value, StepKind.OTHER.value


def call_kinds(call: ParsedToolCall, context: Context, commands: list[Command] | None = None) -> list[str]:
    """The kinds of one tool call, in StepKind order; ["other"] when no rule fires."""
    kinds: set[str] = set()
    for test, kind in _CALL_RULES:
        if test(call):
            kinds.add(kind)
    text = shell_text(call)
    if text is not None and _WAIT not in kinds:
        if commands is None:
            commands = split_commands(text)
        for command in commands:
            for test, kind in _COMMAND_RULES:
                if test(command, context):
                    kinds.add(kind)
        if _BENCHMARK not in kinds and context.benchmark.pattern is not None:
            kinds.update(_pattern_across_commands(text, commands, context))
    if not kinds:
        kinds.add(_OTHER)
    return [kind for kind in ORDER if kind in kinds]


def _pattern_across_commands(text: str, commands: list[Command], context: Context) -> set[str]:
    """A task regex spanning commands ("make && ./attn") that starts at a command which may run it."""
    match = context.benchmark.pattern.search(text)
    if match is None:
        return set()
    for command in commands:
        if command.start <= match.start() < command.start + len(command.text):
            if command.program in _INSPECT_PROGRAMS or shell_writes(command):
                return set()
            return {_BENCHMARK}
    return set()


def ordered(kinds) -> list[str]:
    values = {str(kind) for kind in kinds}
    return [kind for kind in ORDER if kind in values]


def union(kind_lists: list[list[str]]) -> list[str]:
    """A step's kinds from its calls' kinds; "other" only when nothing else applies."""
    values = {kind for kinds in kind_lists for kind in kinds}
    if len(values) > 1:
        values.discard(StepKind.OTHER.value)
    return ordered(values)
