"""A rollout's trajectory compressed for an LLM judge, within a token budget (Django-free).

A 139-step AutoLab rollout is mostly the agent waiting on a training run;
a 20,000-step one is a hundred times that. The judge needs the few steps
that decide a verdict (the benchmark calls with their metric, the edits as
diffs) in full, the rest only enough to follow the story, and every step's
number so that it can cite it. So:

- runs of waits (and of the same look repeated) fold into one line, as on
  the rollout page;
- each output is cut to its head and tail;
- the text is rendered at the most detailed level that fits the budget,
  the benchmark calls and edits losing detail last; when even one line per
  key step does not fit (a very long rollout on a small budget), key steps
  are thinned evenly and, last, the middle of the text is cut.

Tokens are estimated, not counted: a tokenizer per provider would be a
dependency for a figure that only has to be safe. ASCII text runs about four
characters a token; anything else is counted a token a character.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from math import ceil

from trajectories.analysis import folding
from trajectories.analysis.step_kinds import StepKind

# The token budgets staff may set (`analyze_rollouts --max-tokens`, the button's field): the default, the
# least (the instructions and the default rubric take about 1,100 of it) and the most.
DEFAULT_BUDGET = 30_000
MIN_BUDGET = 4_000
MAX_BUDGET = 1_000_000

# Kinds that decide a verdict: shown in full for as long as the budget allows.
KEY_KINDS = frozenset({StepKind.BENCHMARK.value, StepKind.EDIT.value, StepKind.SUBMIT.value})
# Of those, the ones that run or end the task (the rest are edits).
_CALL_KINDS = frozenset({StepKind.BENCHMARK.value, StepKind.SUBMIT.value})


@dataclass(frozen=True, slots=True)
class DigestStep:
    """What the judge may read of one main-trajectory step."""

    step_id: int
    source: str = "agent"
    kinds: tuple[str, ...] = ()
    elapsed_sec: float | None = None
    message: str = ""
    commands: tuple[str, ...] = ()  # each call as text: its shell command, else name(arguments)
    outputs: tuple[str, ...] = ()
    diff: str = ""
    metric: str = ""  # "metric 1.234 s (score 0.41)" for a benchmark call that printed one
    repeats: bool = False

    @property
    def is_key(self) -> bool:
        return bool(KEY_KINDS & set(self.kinds))

    @property
    def foldable(self) -> bool:
        """As on the rollout page (trajectories.analysis.folding)."""
        return folding.foldable(self.kinds, self.repeats)


@dataclass(frozen=True, slots=True)
class DigestHeader:
    """The facts above the steps: what the task was and how the run ended."""

    task: str
    instruction: str = ""
    budget_sec: float | None = None
    duration_sec: float | None = None
    reward: float | None = None
    n_benchmark_calls: int | None = None
    exception: str = ""


@dataclass(frozen=True, slots=True)
class Level:
    """How much of each step one rendering keeps (characters; None: all of it, 0: none)."""

    name: str
    key_output: int | None
    key_message: int | None
    diff: int | None
    other_output: int | None
    other_message: int | None
    command: int
    others: str = "full"  # full | line (one line each) | gap (runs of them counted in one line)
    key_line: bool = False  # key steps as one line each


LEVELS: tuple[Level, ...] = (
    Level("full", 6000, 3000, None, 1500, 1000, 4000),
    Level("detailed", 2500, 1000, None, 500, 300, 1500),
    Level("key steps in full", 1200, 600, None, 0, 0, 200, others="line"),
    Level("key steps", 500, 300, 4000, 0, 0, 300, others="gap"),
    Level("key steps, short", 160, 120, 1200, 0, 0, 200, others="gap"),
    Level("key steps, one line each", 0, 0, 0, 0, 0, 160, others="gap", key_line=True),
)


@dataclass(frozen=True, slots=True)
class Digest:
    """The compressed trajectory: its text, estimated tokens, and what it kept."""

    text: str
    tokens: int
    budget: int
    level: str
    step_ids: frozenset[int]  # every step of the trajectory: what the judge may cite
    n_steps: int
    shown: int  # steps rendered on a line or more of their own
    folded: int  # steps inside fold lines
    omitted: int  # steps only counted (gap lines, thinning, the cut)


def estimate_tokens(text: str) -> int:
    """About four characters of ASCII a token, one token for any other character: an upper bound that is cheap."""
    other = sum(1 for char in text if ord(char) > 127) if not text.isascii() else 0
    return ceil((len(text) - other) / 4) + other


def head_tail(text: str, limit: int | None) -> str:
    """`text` cut to about `limit` characters: its head and its tail, saying how much was left out."""
    text = text.strip("\n")
    if limit is None or len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    head = int(limit * 0.6)
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:] if tail else ''}"


def one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "t=?"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"t={hours}h{rest // 60:02d}m" if hours else f"t={rest // 60}m{rest % 60:02d}s"


# Units: what one line (or block) of the digest stands for -----------------------


@dataclass(frozen=True, slots=True)
class _Fold:
    steps: tuple[DigestStep, ...]


def units(steps: list[DigestStep]) -> list[DigestStep | _Fold]:
    """The steps in order, each run of folding.FOLD_MIN_STEPS or more foldable ones as one fold."""
    out: list[DigestStep | _Fold] = []
    run: list[DigestStep] = []

    def close() -> None:
        if len(run) >= folding.FOLD_MIN_STEPS:
            out.append(_Fold(tuple(run)))
        else:
            out.extend(run)
        run.clear()

    for step in steps:
        if step.foldable:
            run.append(step)
            continue
        close()
        out.append(step)
    close()
    return out


def _span(steps: tuple[DigestStep, ...] | list[DigestStep]) -> str:
    first, last = steps[0].step_id, steps[-1].step_id
    return f"step {first}" if first == last else f"steps {first}-{last}"


def _fold_line(fold: _Fold) -> str:
    waits = sum(1 for step in fold.steps if folding.only_waits(step.kinds))
    checks = len(fold.steps) - waits
    start, end = fold.steps[0].elapsed_sec, fold.steps[-1].elapsed_sec
    parts = [f"{waits} waits"] if waits else []
    if checks:
        parts.append(f"{checks} repeated checks")
    took = f", {clock(start)} to {clock(end)}" if start is not None and end is not None else ""
    return f"[{_span(fold.steps)} folded: {' and '.join(parts)}{took}]"


def _gap_line(steps: list[DigestStep]) -> str:
    kinds = Counter(kind for step in steps for kind in (step.kinds or ("message",)))
    what = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
    return f"[{_span(steps)} not shown: {len(steps)} steps ({what})]"


def _title(step: DigestStep) -> str:
    kinds = " ".join(step.kinds) if step.kinds else step.source
    return f"## step {step.step_id} ({clock(step.elapsed_sec)}) [{kinds}]"


def _line(step: DigestStep, limit: int) -> str:
    what = step.metric or "; ".join(step.commands) or step.message
    files = _diff_files(step.diff)
    if files:
        what = f"edits {', '.join(files)}; {what}"
    return f"- step {step.step_id} ({clock(step.elapsed_sec)}) [{' '.join(step.kinds) or step.source}] {one_line(what, limit)}"


def _diff_files(diff: str) -> list[str]:
    files = []
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:].strip()
            name = name[2:] if name.startswith("b/") else name
            if name not in files and name != "/dev/null":
                files.append(name)
    return files


def _block(step: DigestStep, output: int | None, message: int | None, diff: int | None, command: int) -> str:
    lines = [_title(step)]
    if step.message and message != 0:
        lines.append(head_tail(step.message, message))
    for text in step.commands:
        lines.append("$ " + head_tail(text, command))
    if step.metric:
        lines.append(f"=> {step.metric}")
    if step.diff and diff != 0:
        lines.append("diff:\n" + head_tail(step.diff, diff))
    if output != 0:
        for text in step.outputs:
            if text.strip():
                lines.append("output:\n" + head_tail(text, output))
    return "\n".join(lines)


def _render(units_: list, level: Level, demoted: frozenset[int] = frozenset()) -> tuple[list[str], int, int, int]:
    """The digest's lines at `level`, key steps in `demoted` counted as others: (lines, shown, folded, omitted)."""
    lines: list[str] = []
    gap: list[DigestStep] = []
    shown = folded = omitted = 0

    def flush() -> None:
        nonlocal omitted
        if gap:
            lines.append(_gap_line(gap))
            omitted += len(gap)
            gap.clear()

    for unit in units_:
        if isinstance(unit, _Fold):
            if level.others == "gap":
                gap.extend(unit.steps)
                continue
            flush()
            lines.append(_fold_line(unit))
            folded += len(unit.steps)
            continue
        step = unit
        if step.is_key and step.step_id not in demoted:
            flush()
            shown += 1
            if level.key_line:
                lines.append(_line(step, level.command))
            else:
                lines.append(_block(step, level.key_output, level.key_message, level.diff, level.command))
        elif level.others == "gap":
            gap.append(step)
        else:
            flush()
            shown += 1
            if level.others == "line":
                lines.append(_line(step, level.command))
            else:
                lines.append(_block(step, level.other_output, level.other_message, None, level.command))
    flush()
    return lines, shown, folded, omitted


def header_text(header: DigestHeader, n_steps: int, instruction_chars: int = 3000) -> str:
    facts = [f"Task: {header.task}"]
    if header.budget_sec is not None:
        facts.append(f"Time budget: {clock(header.budget_sec)[2:]}")
    if header.duration_sec is not None:
        facts.append(f"Agent ran for: {clock(header.duration_sec)[2:]}")
    facts.append(f"Reward: {'none' if header.reward is None else format(header.reward, '.4g')}")
    if header.n_benchmark_calls is not None:
        facts.append(f"Benchmark calls: {header.n_benchmark_calls}")
    facts.append(f"Steps: {n_steps}")
    if header.exception:
        facts.append(f"Ended with: {one_line(header.exception, 300)}")
    text = "\n".join(facts)
    if header.instruction:
        text += "\n\n# Instruction\n" + head_tail(header.instruction, instruction_chars)
    return text


def compress(header: DigestHeader, steps: list[DigestStep], budget: int) -> Digest:
    """The most detailed rendering of `steps` whose estimated tokens fit `budget`.

    Always fits: past the last level, key steps are thinned evenly (the
    first and last kept) and, failing that, the middle of the text is cut.
    """
    budget = max(int(budget), 1)
    ids = frozenset(step.step_id for step in steps)
    folded_units = units(steps)
    top = header_text(header, len(steps))
    if estimate_tokens(top) > budget // 4:
        top = header_text(header, len(steps), instruction_chars=max(budget // 2, 200))
    text = ""
    for level in LEVELS:
        lines, shown, folded, omitted = _render(folded_units, level)
        text = _join(top, lines)
        if estimate_tokens(text) <= budget:
            return Digest(text, estimate_tokens(text), budget, level.name, ids, len(steps), shown, folded, omitted)
    # Even one line per key step is too much: thin them evenly, the edits before the benchmark calls
    # (a benchmark call's metric says more than a one-line edit), the first and last of each kept.
    level = LEVELS[-1]
    keys = [unit for unit in folded_units if isinstance(unit, DigestStep) and unit.is_key]
    calls = [step.step_id for step in keys if _CALL_KINDS & set(step.kinds)]
    edits = [step.step_id for step in keys if not _CALL_KINDS & set(step.kinds)]
    plans = [(keep, len(calls)) for keep in _halvings(len(edits)) + [0]]
    plans += [(0, keep) for keep in _halvings(len(calls)) + [0]]
    for keep_edits, keep_calls in plans:
        kept = {edits[i] for i in _evenly(len(edits), keep_edits)} | {calls[i] for i in _evenly(len(calls), keep_calls)}
        demoted = frozenset(step.step_id for step in keys if step.step_id not in kept)
        # A key step left out is counted in a gap line, as the other steps are.
        lines, shown, folded, omitted = _render(folded_units, level, demoted)
        note = f"{len(demoted)} of {len(keys)} benchmark calls and edits left out to fit the budget"
        text = _join(top, lines, note=note)
        if estimate_tokens(text) <= budget:
            return Digest(text, estimate_tokens(text), budget, f"{level.name}, thinned", ids, len(steps), shown, folded, omitted)
    text = cut_middle(text, budget)
    return Digest(text, estimate_tokens(text), budget, "cut", ids, len(steps), 0, 0, len(steps))


def _join(top: str, lines: list[str], note: str = "") -> str:
    middle = f"\n[{note}]" if note else ""
    return f"{top}\n\n# Trajectory{middle}\n" + "\n".join(lines) + "\n"


def _halvings(n: int) -> list[int]:
    counts = []
    while n > 2:
        n = n // 2
        counts.append(max(n, 2))
    return counts or [min(n, 2)]


def _evenly(n: int, keep: int) -> list[int]:
    """`keep` indexes spread over range(n), the first and the last among them."""
    if keep >= n:
        return list(range(n))
    if keep <= 1:
        return [0][:keep]
    return sorted({round(i * (n - 1) / (keep - 1)) for i in range(keep)})


def cut_middle(text: str, budget: int) -> str:
    """`text` with its middle cut until its estimate fits `budget` (the last resort)."""
    marker = "\n[... the middle of the trajectory is cut to fit the budget ...]\n"
    keep = budget * 4 - len(marker)
    while keep > 0:
        cut = text[: keep // 2] + marker + text[len(text) - keep // 2:]
        if estimate_tokens(cut) <= budget:
            return cut
        keep = int(keep * 0.8)
    return text[: max(budget, 0)]
