"""Recognising a task's local benchmark command in what an agent typed.

AutoLab instructions name the command the agent may run to score itself
("Local eval | `python3 /app/evaluate_local.py`", an "## Evaluation" section
with a fenced `python3 /app/main.py`, "`make && ./attn`"). A call counts as a
benchmark call when one of its commands runs the same program: same script
or executable name, whatever the interpreter, directory or arguments
(`python /app/evaluate.py --lora_path x 2>&1 | tee log`). Reading the script
(`cat /app/evaluate.py`) is not running it: only the program position counts.

Sources, in order: the task's own regex (`TaskSpec.benchmark_pattern`),
explicit commands from task.toml (`TaskSpec.benchmark_commands`), commands
found in the instruction, scripts the instruction's file table calls the
local verifier or evaluator ("| `main.py` | Local verifier (read-only) |":
AutoLab's discover_sorting, fredkin_sort_network and resnet_bit_flip name
no command, only that file), then generic names (evaluate*.py, bench*,
score*).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from tasks.spec import TaskSpec

from trajectories.analysis.shell import Command, split_commands

# Interpreters whose first non-option argument is the program that runs.
_INTERPRETER = re.compile(r"^(python[0-9.]*|pypy3?|bash|sh|zsh|dash|node|ruby|perl|Rscript|julia|uv|poetry|conda)$")
_PY_OPTIONS_WITH_VALUE = {"-X", "-W", "-Q"}
# Program names that are build steps when they stand alone ("make && ./attn").
_BUILD_ONLY = re.compile(r"^(make|cmake|ninja|gcc|g\+\+|cc|clang\+?\+?|nvcc|rustc)$")
# Generic benchmark program names: evaluate.py, evaluate_local.py, eval.py,
# bench, benchmark.sh, run_bench.py, score.py, run_eval.sh ...
GENERIC_NAME = re.compile(
    r"^(?:run_?)?(?:evaluate\w*|eval|eval_\w+|\w*_eval|bench\w*|\w*_bench\w*|benchmark\w*|score\w*|\w*_score)"
    r"(?:\.(?:py|sh|js|rb|pl))?$",
    re.IGNORECASE,
)
_GENERIC_MAKE_TARGET = re.compile(r"^(bench\w*|eval\w*|score|run|perf)$")
# Words in an instruction line or heading that mark a command as the local scoring one.
_CONTEXT = re.compile(r"eval|benchmark|\bbench\b|scor|verif|measur|\btim(e|ing)\b|local|speed|perf", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"<[A-Za-z_ -]+>")


@dataclass(frozen=True)
class Invocation:
    """What a command runs, reduced to what identifies a benchmark."""

    kind: str  # script (a file run directly or by an interpreter) | module | make | cargo | program
    name: str  # file name without directory, module, make target, cargo subcommand or program name


def invocation(words: list[str]) -> Invocation | None:
    """The program a stage's words (wrappers already removed) run."""
    if not words:
        return None
    program = words[0]
    base = program.rsplit("/", 1)[-1]
    if _INTERPRETER.match(base):
        args = words[1:]
        if base in ("uv", "poetry", "conda"):
            # uv run python x.py / conda run -n env python x.py
            if not args or args[0] != "run":
                return Invocation("program", base)
            rest = args[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[2:] if rest[0] in ("-n", "--name", "-p", "--prefix", "--with") else rest[1:]
            return invocation(rest)
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "-m" and i + 1 < len(args):
                return Invocation("module", args[i + 1])
            if arg in ("-c", "-e", "-"):
                return None
            if arg.startswith("-"):
                i += 2 if arg in _PY_OPTIONS_WITH_VALUE else 1
                continue
            return Invocation("script", arg.rsplit("/", 1)[-1])
        return None
    if base == "make":
        target = ""
        args = words[1:]
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-C", "-f", "-j", "-l", "-o", "-W", "--directory", "--file") and i + 1 < len(args):
                i += 2
                continue
            if arg.startswith("-") or "=" in arg:
                i += 1
                continue
            target = arg
            break
        return Invocation("make", target)
    if base == "cargo":
        sub = next((arg for arg in words[1:] if not arg.startswith("-") and not arg.startswith("+")), "")
        return Invocation("cargo", sub)
    if "/" in program:
        return Invocation("script", base)
    return Invocation("program", base)


@dataclass
class BenchmarkMatcher:
    """Decides whether a command runs the task's local benchmark."""

    pattern: re.Pattern | None = None
    invocations: set[Invocation] = field(default_factory=set)

    def matches(self, command: Command) -> bool:
        for words in command.stage_words():
            if self.pattern is not None and self.pattern.search(" ".join(words)):
                return True
            found = invocation(words)
            if found is None:
                continue
            if found in self.invocations:
                return True
            if found.kind == "script" and GENERIC_NAME.match(found.name):
                return True
            if found.kind == "make" and _GENERIC_MAKE_TARGET.match(found.name):
                return True
            if found.kind == "cargo" and found.name == "bench":
                return True
        return False


def matcher_for(spec: TaskSpec) -> BenchmarkMatcher:
    return _matcher(spec.benchmark_pattern, tuple(spec.benchmark_commands), spec.instruction)


@lru_cache(maxsize=256)
def _matcher(pattern: str, explicit: tuple[str, ...], instruction: str) -> BenchmarkMatcher:
    compiled = None
    if pattern:
        try:
            compiled = re.compile(pattern)
        except re.error:
            compiled = None  # a broken task regex must not stop the analysis
    commands = list(explicit) + benchmark_commands_from_instruction(instruction)
    invocations: set[Invocation] = set()
    for text in commands:
        invocations.update(_command_invocations(text))
    invocations.update(Invocation("script", name) for name in evaluator_scripts_from_instruction(instruction))
    return BenchmarkMatcher(pattern=compiled, invocations=invocations)


def _command_invocations(text: str) -> list[Invocation]:
    """The programs `text` runs, its build steps left out ("make && ./attn" -> attn)."""
    found: list[Invocation] = []
    for command in split_commands(text):
        if _PLACEHOLDER.search(command.text):
            continue  # "/app/<binary>": no name to recognise
        for words in command.stage_words()[:1]:
            call = invocation(words)
            if call is None or words[0] == "cd":
                continue
            found.append(call)
    runs = [
        call
        for call in found
        if not (call.kind == "program" and _BUILD_ONLY.match(call.name))
        and not (call.kind == "make" and not _GENERIC_MAKE_TARGET.match(call.name or "-"))
        and not (call.kind == "cargo" and call.name == "build")
    ]
    return runs


_INLINE = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.M)
_RUNNER = re.compile(
    r"^(?:[A-Z_]+=\S+\s+)*(?:sudo\s+|timeout\s+\S+\s+|time\s+)*"
    r"(python[0-9.]*|pypy3?|bash|sh|make|cargo|go|node|npm|npx|uv|pytest|torchrun|accelerate|\./\S+|/\S+/bin/\S+)(\s|$)"
)


def looks_like_command(text: str) -> bool:
    """`python3 /app/evaluate.py` is a command; `/app/solve.c` or `n = 4096` are not."""
    return _RUNNER.match(text.strip()) is not None


def benchmark_commands_from_instruction(text: str) -> list[str]:
    """Local evaluation commands named in a task instruction, in order of appearance.

    A command counts when it is in inline code or a fenced block and either
    its own line (a table row, a trailing `# comment`), the paragraph before
    its block, or its section heading talks about evaluating, benchmarking,
    scoring or timing, or the command itself names such a script.
    """
    if not text:
        return []
    found: list[str] = []

    def add(command: str) -> None:
        command = command.strip().rstrip(";")
        if command and looks_like_command(command) and command not in found:
            found.append(command)

    headings = [(match.start(), match.group(1)) for match in _HEADING.finditer(text)]

    def heading_before(offset: int) -> str:
        title = ""
        for start, heading in headings:
            if start > offset:
                break
            title = heading
        return title

    fenced_spans = []
    for match in _FENCE.finditer(text):
        fenced_spans.append((match.start(), match.end()))
        before = text[max(0, match.start() - 300) : match.start()]
        paragraph = before.rsplit("\n\n", 1)[-1]
        context = heading_before(match.start()) + " " + paragraph
        for line in match.group(2).splitlines():
            code, _, comment = line.partition(" #")
            code = code.strip()
            if code.startswith("$ "):
                code = code[2:].strip()
            if not code or code.startswith("#") or not looks_like_command(code):
                continue
            if _CONTEXT.search(context) or _CONTEXT.search(comment) or _names_benchmark(code):
                add(code)

    for match in _INLINE.finditer(text):
        if any(start <= match.start() < end for start, end in fenced_spans):
            continue
        code = match.group(1).strip()
        if not looks_like_command(code):
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        line = text[line_start : line_end if line_end != -1 else len(text)]
        if _CONTEXT.search(line.replace(match.group(0), " ")) or _names_benchmark(code):
            add(code)
    return found


def _names_benchmark(command: str) -> bool:
    for part in split_commands(command):
        call = invocation(part.words)
        if call and call.kind == "script" and GENERIC_NAME.match(call.name):
            return True
    return False


# A script file named alone in inline code: `main.py`, `/app/main.py` (not `python3 /app/main.py`, a command).
_SCRIPT_FILE = re.compile(r"^(?:[\w./-]*/)?([\w.-]+\.(?:py|sh|js|rb|pl))$")
# What a line must call the file for it to be the local evaluator. Narrower than _CONTEXT: a file table
# also says "Training script run once at build time", and "time" there is no benchmark.
_EVALUATOR = re.compile(r"verif|evaluat|\beval\b|benchmark|\bbench\b|harness|simulator|scorer", re.IGNORECASE)
# A line that tells the agent to edit the file names the solution, whatever else it says of it.
_EDITABLE = re.compile(r"\bedit", re.IGNORECASE)


def evaluator_scripts_from_instruction(text: str) -> list[str]:
    """Names of the scripts an instruction calls its local verifier or evaluator, in order.

    AutoLab's file tables name the local evaluator as a file, not a command
    ("| `main.py` | Local verifier (read-only) |"); running it, with whatever
    interpreter and arguments, is the agent's benchmark call. Only table
    rows count: prose says "the benchmark times the untouched starter
    (`/app/starter.py`)" of a file that is no evaluator. Never a row that
    tells the agent to edit the file (that file is the solution).
    """
    if not text:
        return []
    found: list[str] = []
    fenced = [(match.start(), match.end()) for match in _FENCE.finditer(text)]
    for match in _INLINE.finditer(text):
        if any(start <= match.start() < end for start, end in fenced):
            continue
        script = _SCRIPT_FILE.match(match.group(1).strip())
        if script is None:
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        line = text[line_start : line_end if line_end != -1 else len(text)]
        if not line.lstrip().startswith("|"):
            continue
        line = line.replace(match.group(0), " ")
        if _EVALUATOR.search(line) and not _EDITABLE.search(line) and script.group(1) not in found:
            found.append(script.group(1))
    return found
