"""Human baselines from a CSV of scoring events: the documented format and its reader. No ORM.

RE-Bench compares agents with human experts' attempts (eight hours each in
the paper). Each attempt is a run of its cohort's entry ("Human experts,
8 h"); its scoring events are its score log. One row per scoring event:

    attempt_id,task,cohort,source,elapsed_seconds,score,raw_score
    h01,window_sums,"Human experts, 8 h",professional network,1800,,3.2
    h01,window_sums,"Human experts, 8 h",professional network,7200,0.91,

- attempt_id: one attempt; all its rows name the same task and cohort.
- task: the task's name in the benchmark version.
- cohort: the entry the attempt belongs to.
- source: optional, who the person is or how they were recruited (kept with the attempt).
- elapsed_seconds: when the score was recorded, from the attempt's start (>= 0).
- score (normalised) or raw_score (the task's raw metric, normalised here by
  the task's own rule): one of the two on every row.
- duration_seconds: optional, the attempt's length (else its last event's time).

The attempt's last event is its final submission. Any bad row refuses the
whole file, naming the line: nothing is half-imported.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from tasks.lib.numbers import parse_number_cell

REQUIRED = ("attempt_id", "task", "cohort", "elapsed_seconds")
OPTIONAL = ("source", "score", "raw_score", "duration_seconds")


class HumanBaselineError(ValueError):
    """A CSV that cannot be imported; the message names the line and the problem."""


@dataclass
class Attempt:
    attempt_id: str
    task: str
    cohort: str
    source: str = ""
    # (elapsed seconds, normalised score, raw score or None), in time order.
    events: list[tuple[float, float, float | None]] = field(default_factory=list)
    duration: float | None = None

    @property
    def final(self) -> float | None:
        return self.events[-1][1] if self.events else None

    @property
    def length(self) -> float:
        last = self.events[-1][0] if self.events else 0.0
        return max(self.duration or 0.0, last)

    def checksum(self) -> str:
        payload = json.dumps([self.task, self.cohort, self.source, self.events, self.duration])
        return hashlib.sha256(payload.encode()).hexdigest()


def _cell_number(row: dict[str, str], name: str, line: int) -> float | None:
    """The number in column `name` (None when empty); a cell holding anything else stops the import."""
    problems: list[str] = []
    value = parse_number_cell(row.get(name), name, problems)
    if problems:
        raise HumanBaselineError(f"line {line}: {problems[0]}")
    return value


def read_attempts(text: str, normalise: Callable[[str, float], float | None]) -> list[Attempt]:
    """The attempts of a CSV, in file order; `normalise(task, raw)` scores a raw value (None: cannot)."""
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")))
    columns = [c.strip() for c in reader.fieldnames or []]
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise HumanBaselineError(f"line 1: missing column(s) {', '.join(missing)} (need {', '.join(REQUIRED)} and score or raw_score)")
    if "score" not in columns and "raw_score" not in columns:
        raise HumanBaselineError("line 1: need a score or a raw_score column")
    attempts: dict[str, Attempt] = {}
    for line, raw_row in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw_row.items() if k}
        if not any(row.values()):
            continue
        attempt_id, task, cohort = row.get("attempt_id", ""), row.get("task", ""), row.get("cohort", "")
        for name, value in (("attempt_id", attempt_id), ("task", task), ("cohort", cohort)):
            if not value:
                raise HumanBaselineError(f"line {line}: {name} is empty")
        elapsed = _cell_number(row, "elapsed_seconds", line)
        if elapsed is None or elapsed < 0:
            raise HumanBaselineError(f"line {line}: elapsed_seconds must be a number of seconds >= 0")
        score = _cell_number(row, "score", line)
        raw = _cell_number(row, "raw_score", line)
        if score is None and raw is None:
            raise HumanBaselineError(f"line {line}: give a score or a raw_score")
        if score is None:
            score = normalise(task, raw)
            if score is None:
                raise HumanBaselineError(f"line {line}: raw_score {raw:g} cannot be scored by {task}'s rule")
        if score < 0:
            raise HumanBaselineError(f"line {line}: a normalised score is never below 0 (got {score:g})")
        attempt = attempts.get(attempt_id)
        if attempt is None:
            attempt = attempts[attempt_id] = Attempt(attempt_id, task, cohort, row.get("source", ""))
        elif (attempt.task, attempt.cohort) != (task, cohort):
            raise HumanBaselineError(f"line {line}: attempt {attempt_id} was {attempt.task} of {attempt.cohort!r} on an earlier line")
        attempt.events.append((elapsed, score, raw))
        duration = _cell_number(row, "duration_seconds", line)
        if duration is not None:
            attempt.duration = max(attempt.duration or 0.0, duration)
    if not attempts:
        raise HumanBaselineError("the file has no rows")
    for attempt in attempts.values():
        attempt.events.sort(key=lambda e: e[0])
    return list(attempts.values())
