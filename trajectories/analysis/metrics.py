"""Reading the task metric out of a benchmark call's terminal output.

Order of trust: the task's own regex (`TaskSpec.metric_pattern`, with a
named group `value` and optionally `unit`), then what the output prints
under a name: the metric's own name (`composite_quality: 0.56`), its words
(`Composite Score: 0.5643`, `MathVista accuracy = 0.41`), a generic
`score`/`reward`/`metric` (also as top-level JSON keys), or for runtime
metrics a time with its unit (`Time: 0.42 s`).

Never guess: when the best-named candidates disagree (say `Baseline time:
20 s` and `Your time: 0.4 s` for a runtime metric) the reading is
"unparseable", unless exactly one of them is named as the aggregate
(`Overall bpb` among per-family `bpb` lines). The same name printed several
times with different values (progress, then the final figure) yields the
last one.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from tasks.scoring import normalised_score
from tasks.spec import TaskSpec

from trajectories.reading.parsed import MetricReading

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0,
               "second": 1.0, "seconds": 1.0, "min": 60.0, "mins": 60.0, "minutes": 60.0}
UNIT = r"(?:ns|us|µs|μs|ms|seconds|second|secs|sec|s|minutes|mins|min|%|x|cycles|bpb|ppl)(?![\w/])"
# `label: value unit` at the start of a line (the label may hold spaces).
_LINE = re.compile(
    rf"^[ \t\-*>|]*[\"']?(?P<label>[A-Za-z][\w .()/\-]{{0,60}}?)[\"']?[ \t]*(?::|=|->)[ \t]*(?P<value>{NUMBER})(?![\w.])[ \t]*(?P<unit>{UNIT})?",
    re.M,
)
# `key=value` / `key: value` anywhere in a line (one-word keys only).
_INLINE = re.compile(
    rf"(?:(?<=[\s,;{{(\[])|^)[\"']?(?P<label>[A-Za-z_][\w.\-]{{0,40}})[\"']?[ \t]*(?:=|:)[ \t]*(?P<value>{NUMBER})(?![\w.])[ \t]*(?P<unit>{UNIT})?",
    re.M,
)
# Every candidate holds a separator and then a number ("score: 0.5", "x=3", "a -> .2"):
# lines without one are never handed to the two regexes above.
_SEPARATOR_NUMBER = re.compile(r"(?::|=|->)[ \t]*[-+]?\.?\d")
_NOT_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
_TIME_METRIC = re.compile(r"(^|_)(time|runtime|latency|seconds|sec|ms|duration|elapsed)(_|$)")
_IN_SECONDS = re.compile(r"(^|_)(seconds|sec|s)$")
_IN_MILLISECONDS = re.compile(r"(^|_)ms$")
_GENERIC_LABELS = {"score", "reward", "metric", "result", "objective", "final_score", "total_score", "final_metric",
                   "overall_score", "composite_score", "final_reward", "value"}
_TIME_LABEL = re.compile(r"(^|_)(time|runtime|elapsed|latency|duration|wall|median|mean)(_|$)")
_UNINFORMATIVE_WORDS = {"score", "value", "metric", "total", "final", "mean", "avg", "average", "overall", "seconds",
                        "second", "sec", "secs", "ms", "the", "and", "of", "per", "count", "num", "number"}
# Short names benchmark scripts print for a metric's word, or for its whole name.
_WORD_ALIASES = {"accuracy": {"acc"}, "runtime": {"time"}, "perplexity": {"ppl"}}
_NAME_ALIASES = {"bits_per_byte": {"bpb"}}
# When several names of equal standing disagree, one marked as the aggregate wins
# ("markov bpb: 1.2 ... Overall bpb: 2.1").
_AGGREGATE_WORDS = {"overall", "total", "final", "weighted", "aggregate", "composite", "mean", "average", "avg"}


@dataclass
class Candidate:
    label: str  # as printed
    value: float
    unit: str
    relevance: int  # 4 task regex, 3 the metric's name, 2 one of its words, 1 generic
    position: int


def clean_terminal(text: str) -> str:
    """Terminal output without colour codes; of carriage-return overwrites only what stayed on screen."""
    text = _ANSI.sub("", text or "")
    if "\r" in text:
        text = "\n".join(line.rsplit("\r", 1)[-1] if line.rstrip("\r") else line for line in text.replace("\r\n", "\n").split("\n"))
    return text


def read_metric(text: str, spec: TaskSpec) -> MetricReading:
    """The metric of one benchmark output; status "unparseable" when it is absent or ambiguous."""
    return find_metric(text, spec) or MetricReading(status="unparseable")


def find_metric(text: str, spec: TaskSpec) -> MetricReading | None:
    """Like `read_metric`, but None when no candidate value is printed at all.

    The difference matters for long-running benchmarks: nothing yet means
    "look at the next poll", an ambiguous output means "unparseable".
    """
    text = clean_terminal(text)
    candidates = list(_pattern_candidates(text, spec))
    if not candidates:
        candidates = list(_named_candidates(text, spec))
    candidates = [candidate for candidate in candidates if candidate.relevance > 0]
    if not candidates:
        return None
    best = max(candidate.relevance for candidate in candidates)
    top = [candidate for candidate in candidates if candidate.relevance == best]
    # Last value per name; the names must then agree.
    last_by_label: dict[str, Candidate] = {}
    for candidate in sorted(top, key=lambda c: c.position):
        last_by_label[_normalise(candidate.label)] = candidate
    values = {(candidate.value, candidate.unit) for candidate in last_by_label.values()}
    if len(values) != 1:
        aggregates = [
            candidate for label, candidate in last_by_label.items() if _AGGREGATE_WORDS & set(label.split("_"))
        ]
        if len(aggregates) != 1:
            return MetricReading(status="unparseable")
        last_by_label = {"aggregate": aggregates[0]}
    chosen = max(last_by_label.values(), key=lambda c: c.position)
    value, unit = _in_metric_unit(chosen.value, chosen.unit, spec.metric)
    return MetricReading(status="parsed", value=value, unit=unit, score=normalised_score(spec, value), name=chosen.label)


def _pattern_candidates(text: str, spec: TaskSpec):
    if not spec.metric_pattern:
        return
    try:
        pattern = re.compile(spec.metric_pattern, re.M)
    except re.error:
        return
    for match in pattern.finditer(text):
        groups = match.groupdict()
        raw = groups.get("value") if "value" in groups else (match.group(1) if pattern.groups else match.group(0))
        try:
            value = float(raw)
        except (TypeError, ValueError):
            continue
        yield Candidate(spec.metric or "metric", value, (groups.get("unit") or "").strip(), 4, match.start())


def _named_candidates(text: str, spec: TaskSpec):
    words = _metric_words(spec.metric)
    timed = _is_time_metric(spec.metric)
    json_spans: list[tuple[int, int]] = []
    for start, end, obj in _json_objects(text):
        json_spans.append((start, end))
        for key, value in obj.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                yield Candidate(key, float(value), "", _relevance(key, "", spec.metric, words, timed), start)

    def outside_json(position: int) -> bool:
        return not any(start <= position < end for start, end in json_spans)

    seen: set[tuple[int, str]] = set()
    lines = _lines_with_numbers(text)
    for regex in (_LINE, _INLINE):
        # A match never spans lines, so matching line by line finds the same ones in the same order.
        for match in (match for start, end in lines for match in regex.finditer(text, start, end)):
            if not outside_json(match.start("value")):
                continue
            key = (match.start("value"), match.group("value"))
            if key in seen:
                continue
            seen.add(key)
            label = match.group("label").strip()
            unit = match.group("unit") or ""
            relevance = _relevance(label, unit, spec.metric, words, timed)
            yield Candidate(label, float(match.group("value")), unit, relevance, match.start("value"))


def _lines_with_numbers(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line holding a separator followed by a number, in order."""
    lines: list[tuple[int, int]] = []
    line_end = -1
    for match in _SEPARATOR_NUMBER.finditer(text):
        position = match.start()
        if position < line_end:
            continue  # on the line already taken
        line_end = text.find("\n", position)
        if line_end == -1:
            line_end = len(text)
        lines.append((text.rfind("\n", 0, position) + 1, line_end))
    return lines


def _json_objects(text: str):
    """Top-level JSON objects printed in `text` (a benchmark's result dump)."""
    decoder = json.JSONDecoder()
    i = 0
    while True:
        i = text.find("{", i)
        if i == -1:
            return
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        if isinstance(obj, dict):
            yield i, end, obj
        i = end


def _relevance(label: str, unit: str, metric: str, words: list[set[str]], timed: bool) -> int:
    name = _normalise(label)
    if metric and name == _normalise(metric):
        return 3
    label_words = {_singular(word) for word in name.split("_")}
    if label_words & _NAME_ALIASES.get(_normalise(metric), set()):
        return 3
    if words and all(group & label_words for group in words):
        return 3
    if any(group & label_words for group in words):
        return 2
    if name in _GENERIC_LABELS or name.endswith("_score"):
        return 1
    if (timed or not metric) and _TIME_LABEL.search(name) and (unit in _TIME_UNITS or not unit):
        return 1
    return 0


@lru_cache(maxsize=4096)
def _normalise(label: str) -> str:
    return _NOT_ALPHANUMERIC.sub("_", label.lower()).strip("_")


def _metric_words(metric: str) -> list[set[str]]:
    """The metric's informative words, each with the short forms that stand for it."""
    groups = []
    for word in _normalise(metric).split("_"):
        if len(word) >= 3 and word not in _UNINFORMATIVE_WORDS:
            groups.append({_singular(word)} | _WORD_ALIASES.get(word, set()))
    return groups


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _is_time_metric(metric: str) -> bool:
    name = _normalise(metric)
    return bool(_TIME_METRIC.search(name))


def _in_metric_unit(value: float, unit: str, metric: str) -> tuple[float, str]:
    """Convert a printed time to the unit the metric's name states (runtime_seconds, latency_ms)."""
    name = _normalise(metric)
    if unit not in _TIME_UNITS:
        return value, unit
    if _IN_SECONDS.search(name):
        return value * _TIME_UNITS[unit], "s"
    if _IN_MILLISECONDS.search(name):
        return value * _TIME_UNITS[unit] / 1e-3, "ms"
    return value, unit
