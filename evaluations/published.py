"""Import published scores (a paper's per-task or per-rollout table).

Every row is checked before anything is written, and then all rows are
written in one transaction: a file either imports completely or not at all,
with every problem reported by row number (CSV rows count the header as row
1, so the first data row is row 2; JSON items count from 1).

Columns: model, harness, version, task, rollout_index (optional), score,
source. Models and harnesses that are not known yet are created (published
results are often for models never run here); versions and tasks must exist.
Importing a row again replaces its score and source.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field

from django.db import transaction

from tasks.models import BenchmarkVersion, Task

from .models import Harness, PublishedResult
from .services import ensure_harness, ensure_model, normalise_model_name

COLUMNS = ("model", "harness", "version", "task", "rollout_index", "score", "source")
REQUIRED = ("model", "harness", "version", "task", "score", "source")


class ResultsImportError(Exception):
    """The file was rejected; `errors` lists every problem found."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    sources: set[str] = field(default_factory=set)

    def summary(self) -> str:
        return f"{self.created} published scores created, {self.updated} updated ({len(self.sources)} source(s))"


@dataclass
class CleanRow:
    number: str  # "row 2" or "item 1"
    model: str
    harness: str
    task: Task
    rollout_index: int | None
    score: float
    source: str


def read_rows(text: str, as_json: bool) -> list[tuple[str, dict]]:
    """(label, raw row) pairs; a file that cannot be read at all is rejected."""
    if as_json:
        try:
            items = json.loads(text)
        except json.JSONDecodeError as error:
            raise ResultsImportError([f"not valid JSON: {error}"]) from None
        if isinstance(items, dict) and isinstance(items.get("results"), list):
            items = items["results"]
        if not isinstance(items, list):
            raise ResultsImportError(['JSON must be a list of objects (or {"results": [...]})'])
        rows = []
        for number, item in enumerate(items, start=1):
            if not isinstance(item, dict):
                raise ResultsImportError([f"item {number}: not an object"])
            rows.append((f"item {number}", {k: "" if v is None else str(v) for k, v in item.items()}))
        return rows
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in (reader.fieldnames or [])]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ResultsImportError([f"row 1 (header): missing column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}"])
    reader.fieldnames = header
    return [(f"row {number}", row) for number, row in enumerate(reader, start=2)]


def _find_harness(value: str) -> tuple[str, str]:
    """(name, version) of a harness cell: "terminus-2" or "terminus-2 2.0.0" as the site prints it."""
    for harness in Harness.objects.all():
        if str(harness) == value:
            return harness.name, harness.version
    return value, ""


def validate(rows: list[tuple[str, dict]]) -> tuple[list[CleanRow], list[str]]:
    errors: list[str] = []
    clean: list[CleanRow] = []
    versions = {v.name: v for v in BenchmarkVersion.objects.all()}
    seen: dict[tuple, str] = {}
    for label, raw in rows:
        row = {k.strip().lower(): (v or "").strip() for k, v in raw.items() if k}
        problems = [f"missing {c}" for c in REQUIRED if not row.get(c)]
        task = None
        if row.get("version"):
            version = versions.get(row["version"])
            if version is None:
                problems.append(f"unknown benchmark version {row['version']!r}")
            elif row.get("task"):
                task = Task.objects.filter(version=version, name=row["task"]).first()
                if task is None:
                    problems.append(f"no task {row['task']!r} in version {row['version']}")
        score = None
        if row.get("score"):
            try:
                score = float(row["score"])
            except ValueError:
                problems.append(f"score {row['score']!r} is not a number")
            else:
                if not math.isfinite(score):
                    problems.append(f"score {row['score']!r} is not finite")
                    score = None
        index = None
        if row.get("rollout_index"):
            try:
                index = int(row["rollout_index"])
                if index < 0:
                    raise ValueError
            except ValueError:
                problems.append(f"rollout_index {row['rollout_index']!r} is not a whole number >= 0")
        if row.get("model") and not normalise_model_name(row["model"]):
            problems.append(f"model {row['model']!r} is empty once normalised")
        if problems:
            errors.append(f"{label}: {'; '.join(problems)}")
            continue
        model = normalise_model_name(row["model"])
        key = (model, row["harness"], task.id, index)
        if key in seen:
            errors.append(f"{label}: the same model, harness, task and rollout_index as {seen[key]}")
            continue
        seen[key] = label
        clean.append(CleanRow(label, model, row["harness"], task, index, score, row["source"]))
    # A task's score is either one published figure or per-rollout scores.
    kinds: dict[tuple, set] = {}
    for row in clean:
        kinds.setdefault((row.model, row.harness, row.task.id), set()).add(row.rollout_index is None)
    for row in clean:
        if len(kinds[(row.model, row.harness, row.task.id)]) > 1 and row.rollout_index is None:
            errors.append(f"{row.number}: a per-task score mixed with per-rollout scores for the same task")
    if not rows:
        errors.append("the file holds no rows")
    return clean, errors


def import_results(text: str, as_json: bool = False) -> ImportReport:
    """Validate every row, then import all of them in one transaction."""
    clean, errors = validate(read_rows(text, as_json))
    if errors:
        raise ResultsImportError(errors)
    report = ImportReport()
    with transaction.atomic():
        for row in clean:
            name, version = _find_harness(row.harness)
            _, created = PublishedResult.objects.update_or_create(
                model=ensure_model(row.model),
                harness=ensure_harness(name, version),
                version=row.task.version,
                task=row.task,
                rollout_index=row.rollout_index,
                defaults={"score": row.score, "source": row.source},
            )
            report.created += created
            report.updated += not created
            report.sources.add(row.source)
    return report
