"""A judge's answer read strictly into a Reading (Django-free).

The judge is asked for one JSON object: `summary` and `checks`, criterion
name to `{outcome, explanation, steps}` (Harbor's analysis.json shape, plus
the steps). Anything else is refused with the reason, which becomes the
failed review's error: a reading half guessed would sit on the failures page
beside the rules as if it were the judge's. Two leniencies only: one
Markdown code fence around the object (models add it even when told not
to), and cited steps that are not in the trajectory, which are dropped (and
counted in the reading's `extra`) rather than linked to nothing.
"""
from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence

from trajectories.reading.review_data import Check, Reading, ReadingError

FENCE = re.compile(r"\A```(?:json|JSON)?\s*\n(.*)\n```\Z", re.DOTALL)
MAX_SUMMARY = 20_000
MAX_EXPLANATION = 10_000


def parse_answer(
    text: str | None, criteria: Sequence[str], step_ids: Collection[int], *,
    tokens_in: int | None = None, tokens_out: int | None = None, cost_usd: float | None = None,
) -> Reading:
    """The reading in the judge's `text`, one check per criterion in the rubric's order; ReadingError if malformed."""
    data = _object(text)
    summary = data.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise ReadingError("the answer has no summary (a non-empty string)")
    checks = data.get("checks")
    if not isinstance(checks, dict):
        raise ReadingError("the answer's checks are not an object of criterion name to verdict")
    missing = [name for name in criteria if name not in checks]
    if missing:
        raise ReadingError(f"the answer leaves out {', '.join(missing)}")
    unknown = sorted(name for name in checks if name not in criteria)
    if unknown:
        raise ReadingError(f"the answer has criteria the rubric does not: {', '.join(map(str, unknown))}")
    dropped: dict[str, list[int]] = {}
    read = []
    for name in criteria:
        check, left_out = _check(name, checks[name], step_ids)
        read.append(check)
        if left_out:
            dropped[name] = left_out
    extra = {"dropped_steps": dropped} if dropped else {}
    return Reading(summary.strip()[:MAX_SUMMARY], tuple(read), tokens_in, tokens_out, cost_usd, extra)


def _object(text: str | None) -> dict:
    if text is None or not text.strip():
        raise ReadingError("the judge answered nothing")
    body = text.strip()
    fenced = FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ReadingError(f"the answer is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ReadingError(f"the answer is JSON but not an object ({type(data).__name__})")
    return data


def _check(name: str, verdict, step_ids: Collection[int]) -> tuple[Check, list[int]]:
    if not isinstance(verdict, dict):
        raise ReadingError(f"check {name}: not an object")
    outcome = verdict.get("outcome")
    if not isinstance(outcome, str):
        raise ReadingError(f"check {name}: no outcome")
    explanation = verdict.get("explanation", "")
    if not isinstance(explanation, str):
        raise ReadingError(f"check {name}: the explanation is not text")
    steps = verdict.get("steps", [])
    if not isinstance(steps, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in steps):
        raise ReadingError(f"check {name}: steps must be a list of step numbers")
    kept = tuple(dict.fromkeys(s for s in steps if s in step_ids))
    left_out = [s for s in steps if s not in step_ids]
    # Check refuses an outcome that is not one of Harbor's three.
    return Check(name, outcome.strip().lower(), explanation.strip()[:MAX_EXPLANATION], kept), left_out
