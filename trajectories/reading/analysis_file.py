"""Harbor's `analysis.json` files read into plain data (Django-free).

`harbor analyze` writes two kinds of file:

- in each analysed trial folder, its `AnalyzeResult`: `trial_name`,
  `summary` (prose), `checks` (criterion name -> `{explanation, outcome}`,
  outcome one of pass / fail / not_applicable) and `estimated_cost_usd`
  (may be null);
- in a job folder, the whole job's reading: `JobAnalyzeResult`
  (`job_summary`, `trials`: a list of the above, `estimated_total_cost_usd`),
  or, as 0.26's analyser and viewer write it, an `AnalyzeReport`
  (`results`: per trial `trial_name`, `summary`, `checks`, `cost_usd`,
  and `error` when that trial's analysis failed).

Both are read here without Harbor's pydantic models, so that a file from
another Harbor version still reads, and a malformed one is refused with a
message naming what is wrong (`AnalysisFileError`), never an exception
that would cost the trial its import. Harbor's checks carry no step
numbers: the steps a check rests on are those its explanation cites
("step 12", "steps 40-44", "steps 3, 7 and 9"), or a `steps` list where a
producer gives one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tasks.lib.numbers import as_float

from trajectories.reading.json_data import JsonFileError, clean_text, decode_tolerantly
from trajectories.reading.review_data import Check, Reading, ReadingError

FILE_NAME = "analysis.json"
# A reading's prose is a few paragraphs; past this it is not a summary.
TEXT_LIMIT = 100_000
# Steps cited by one check, at most (links, not a list of the trajectory).
STEPS_LIMIT = 30
CITED_STEPS = re.compile(r"\bsteps?\s*#?\s*(\d+)((?:\s*(?:,|and|&|or|to|-|–|—)\s*#?\s*\d+)*)", re.IGNORECASE)
NUMBER = re.compile(r"\d+")


class AnalysisFileError(ValueError):
    """An analysis.json that cannot be read as Harbor's: the message says why."""


@dataclass(frozen=True, slots=True)
class TrialAnalysis:
    """One trial's reading as Harbor wrote it; `error` instead of a reading when its analysis failed."""

    trial_name: str
    reading: Reading | None = None
    error: str = ""


@dataclass(frozen=True, slots=True)
class JobAnalysis:
    """A job folder's analysis.json: the job's summary (may be empty) and each trial's reading."""

    summary: str
    trials: tuple[TrialAnalysis, ...] = ()
    cost_usd: float | None = None


def cited_steps(text: str) -> tuple[int, ...]:
    """The step numbers an explanation cites, in order of first mention ("steps 4-9" cites 4 and 9)."""
    found: list[int] = []
    for match in CITED_STEPS.finditer(text):
        for number in NUMBER.findall(match.group(0)):
            value = int(number)
            if value not in found and value < 2**31:
                found.append(value)
    return tuple(found[:STEPS_LIMIT])


def decode(raw: bytes | str) -> Any:
    """The file's JSON document; AnalysisFileError when it is not JSON."""
    try:
        return decode_tolerantly(raw).data
    except (JsonFileError, ValueError) as exc:
        raise AnalysisFileError(f"{FILE_NAME} is not JSON ({exc})") from exc


def read_trial_file(raw: bytes | str) -> TrialAnalysis:
    """A trial folder's analysis.json, its bytes decoded and read; AnalysisFileError naming the fault."""
    data = decode(raw)
    return read_trial_analysis(data)


def read_trial_analysis(data: Any, *, where: str = FILE_NAME) -> TrialAnalysis:
    """A trial's AnalyzeResult (a decoded JSON object) as a Reading; AnalysisFileError naming the fault."""
    if not isinstance(data, dict):
        raise AnalysisFileError(f"{where} is not a JSON object (a {type(data).__name__})")
    trial_name = text_field(data.get("trial_name"), f"{where}: trial_name", required=False)
    error = data.get("error")
    if isinstance(error, str) and error.strip():
        # An AnalyzeReport's entry for a trial whose analysis failed.
        return TrialAnalysis(trial_name, error=clean_text(error)[:TEXT_LIMIT])
    summary = text_field(data.get("summary"), f"{where}: summary", required=True)
    checks_data = data.get("checks", {})
    if not isinstance(checks_data, dict):
        raise AnalysisFileError(f"{where}: checks must be an object of criterion name to {{explanation, outcome}}")
    checks = tuple(_check(name, value, where) for name, value in checks_data.items())
    cost = as_float(data.get("estimated_cost_usd", data.get("cost_usd")))
    try:
        reading = Reading(summary, checks, cost_usd=cost if cost is None or cost >= 0 else None)
    except ReadingError as exc:
        raise AnalysisFileError(f"{where}: {exc}") from exc
    return TrialAnalysis(trial_name, reading)


def read_job_analysis(data: Any) -> JobAnalysis:
    """A job's JobAnalyzeResult or AnalyzeReport as a JobAnalysis; AnalysisFileError naming the fault.

    One malformed trial entry refuses the file: its other entries would be
    applied while the file says something is wrong, and the job's summary
    may rest on the faulty one.
    """
    if not isinstance(data, dict):
        raise AnalysisFileError(f"{FILE_NAME} is not a JSON object (a {type(data).__name__})")
    if "trials" in data or "job_summary" in data:
        entries, summary = data.get("trials", []), text_field(data.get("job_summary"), "job_summary", required=False)
        cost = as_float(data.get("estimated_total_cost_usd"))
        key = "trials"
    elif "results" in data:
        entries, summary, key = data["results"], "", "results"
        cost = None
    else:
        raise AnalysisFileError(
            f"{FILE_NAME}: neither a job analysis (job_summary, trials) nor an analysis report (results)"
        )
    if not isinstance(entries, list):
        raise AnalysisFileError(f"{FILE_NAME}: {key} must be a list")
    trials = tuple(read_trial_analysis(entry, where=f"{FILE_NAME}: {key}[{index}]") for index, entry in enumerate(entries))
    if cost is None and key == "results":
        costs = [as_float(entry.get("cost_usd")) for entry in entries if isinstance(entry, dict)]
        known = [value for value in costs if value is not None]
        cost = sum(known) if known else None
    return JobAnalysis(summary, trials, cost)


def _check(name: Any, value: Any, where: str) -> Check:
    if not isinstance(name, str) or not name.strip():
        raise AnalysisFileError(f"{where}: a check has no name")
    if not isinstance(value, dict):
        raise AnalysisFileError(f"{where}: check {name!r} must be an object with explanation and outcome")
    outcome = value.get("outcome")
    if not isinstance(outcome, str):
        raise AnalysisFileError(f"{where}: check {name!r} has no outcome")
    explanation = text_field(value.get("explanation"), f"{where}: check {name!r} explanation", required=False)
    steps = value.get("steps")
    if isinstance(steps, list):
        cited = tuple(dict.fromkeys(s for s in steps if isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**31))
    else:
        cited = cited_steps(explanation)
    try:
        return Check(clean_text(name)[:100], outcome.strip().lower(), explanation, cited[:STEPS_LIMIT])
    except ReadingError as exc:
        raise AnalysisFileError(f"{where}: {exc}") from exc


def text_field(value: Any, what: str, *, required: bool) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise AnalysisFileError(f"{what} must be text" if value is not None else f"{what} is missing")
    return clean_text(value)[:TEXT_LIMIT]
