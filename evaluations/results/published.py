"""Import published results: a paper's per-task (or per-rollout) scores, or its main table.

Two shapes, told apart by the header (or, in JSON, by the keys):

- scores: model, harness, version, task, rollout_index (optional), score,
  source. A task's score is either one published figure or per-rollout
  scores.
- the paper's table: model, harness, version, source and figure columns
  named `<scope>_<measure>`: scope `overall` (or `all`) or a category of the
  version, measure `avg`, `best` or `dom` (`dominance`): `overall_avg`,
  `cuda_dom`. An empty cell is a figure the paper does not give. A paper's
  short scope names are understood (SCOPE_ALIASES: `modeldev`, `system`,
  `puzzle`, ...);
- a wide per-task table, as papers print them: a `task` column, then one
  column per model, each cell that model's score on that task.

`Defaults` (the command's --version, --harness, --source, --set) fill in a
column a file does not have, or a cell it leaves empty. A `set` column (or
--set) says `main` or `ablation`: ablations are shown apart, badged, and
left out of the published entries' Dominance unless staff include them
(the `compared` flag, in the admin), as a paper keeps them out of its own
comparison. A dry run checks and reports everything and writes nothing.

Every row is checked before anything is written, and then all rows are
written in one transaction: a file either imports completely or not at all,
with every problem reported by row number (CSV rows count the header as row
1, so the first data row is row 2; JSON items count from 1). A score above 1
on a version that clips rewards is refused, never clipped: either the
version should not clip (AutoLab v1.0 published rewards above 1) or the
score is wrong.

Models and harnesses that are not known yet are created (published results
are often for models never run here); versions and tasks must exist.
Importing a row again replaces it. After an import the report says, for
every published figure of the entries it touched, whether the per-task
scores of the same entry reproduce it (`aggregation.reproduces`).
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

from django.db import transaction

from tasks.lib.numbers import parse_number_cell
from tasks.models import BenchmarkVersion, Task

from evaluations.boards import compute, invalidation, published_entries
from evaluations.figures import aggregation as agg
from agents.models import AgentModel, Harness
from agents.services import HUMAN_HARNESS, ensure_harness, ensure_human_cohort, ensure_model, normalise_model_name

from evaluations.boards.board import PaperFigure, PublishedEntry
from evaluations.models import PublishedFigure, PublishedResult

COLUMNS = ("model", "harness", "version", "task", "rollout_index", "score", "source", "set")
REQUIRED = ("model", "harness", "version", "task", "score", "source")
FIGURE_KEYS = ("model", "harness", "version", "source")
# Columns a row's identity comes from, besides its figures (never a model of a wide table).
META_COLUMNS = ("model", "harness", "version", "source", "set", "task", "rollout_index", "score")
SETS = {"main": False, "ablation": True, "ablations": True}
# How papers name AutoLab's categories in their column headers (docs/leaderboard.md).
SCOPE_ALIASES = {
    "modeldev": "model_development", "model_dev": "model_development", "model": "model_development",
    "ml": "model_development", "system": "system_optimization", "systems": "system_optimization",
    "sysopt": "system_optimization", "sys": "system_optimization", "puzzle": "puzzle_and_challenge",
    "puzzles": "puzzle_and_challenge", "puzzle_challenge": "puzzle_and_challenge", "gpu": "cuda", "kernels": "cuda",
}
MEASURES = {"avg": "avg", "best": "best", "dom": "dom", "dominance": "dom"}
ALL_TASKS = ("overall", "all")
MEASURE_LABELS = dict(PublishedFigure.Measure.choices)


class ResultsImportError(Exception):
    """The file was rejected; `errors` lists every problem found."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Defaults:
    """What the command line says for columns a file leaves out (or cells it leaves empty)."""

    version: str = ""
    harness: str = ""
    source: str = ""
    set: str = ""

    def fill(self, row: dict) -> dict:
        filled = dict(row)
        for name in ("version", "harness", "source", "set"):
            if not filled.get(name) and getattr(self, name):
                filled[name] = getattr(self, name)
        return filled


@dataclass
class ImportReport:
    kind: str = "scores"  # or "figures"
    dry_run: bool = False
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    sources: set[str] = field(default_factory=set)
    checks: list[str] = field(default_factory=list)
    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(published_entries.FIGURE_VERDICTS, 0))

    def summary(self) -> str:
        what = "published figures" if self.kind == "figures" else "published scores"
        created, updated = ("would be created", "would be updated") if self.dry_run else ("created", "updated")
        text = (f"{self.created} {what} {created}, {self.updated} {updated}, {self.unchanged} unchanged "
                f"({len(self.sources)} source(s))")
        if self.dry_run:
            text = "dry run, nothing written: " + text
        if self.checks:
            text += "; " + ", ".join(f"{n} {published_entries.FIGURE_VERDICTS[status]}" for status, n in self.verdicts.items())
        return text

    def lines(self) -> list[str]:
        return [self.summary(), *self.checks]


@dataclass
class CleanRow:
    number: str  # "row 2" or "item 1"
    model: str
    harness: str
    task: Task
    rollout_index: int | None
    score: float
    source: str
    ablation: bool = False


@dataclass
class CleanFigures:
    number: str
    model: str
    harness: str
    version: BenchmarkVersion
    source: str
    figures: list[tuple[str, str, float, int]]  # (scope, measure, value, decimals)
    ablation: bool = False


def set_of(row: dict, problems: list[str]) -> bool:
    """Whether a row is an ablation (its `set`: main or ablation; empty is main)."""
    value = (row.get("set") or "main").strip().lower()
    if value not in SETS:
        problems.append(f"set {row.get('set')!r} is neither main nor ablation")
        return False
    return SETS[value]


def widen(rows: list[tuple[str, dict]], header: list[str]) -> tuple[list[tuple[str, dict]], list[str]]:
    """A wide per-task table (task, then a column per model) as long rows: one per filled cell."""
    models = [c for c in header if c not in META_COLUMNS]
    long = []
    for label, row in rows:
        for model in models:
            if (row.get(model) or "").strip():
                long.append((f"{label}, column {model!r}", {**{k: row.get(k, "") for k in META_COLUMNS if k in row},
                                                         "model": model, "score": row[model]}))
    return long, models


def read_rows(text: str, as_json: bool) -> list[tuple[str, dict]]:
    """(label, raw row) pairs, keys lower-cased; a file that cannot be read at all is rejected."""
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
            rows.append((f"item {number}", {str(k).strip().lower(): "" if v is None else str(v) for k, v in item.items()}))
        return rows
    reader = csv.DictReader(io.StringIO(text))
    reader.fieldnames = [h.strip().lower() for h in (reader.fieldnames or [])]
    return [(f"row {number}", row) for number, row in enumerate(reader, start=2)]


def header_of(rows: list[tuple[str, dict]], text: str, as_json: bool) -> list[str]:
    if not as_json:
        return [h.strip().lower() for h in next(csv.reader(io.StringIO(text)), [])]
    keys: list[str] = []
    for _, row in rows:
        keys.extend(k for k in row if k not in keys)
    return keys


def figure_column(name: str) -> tuple[str, str] | None:
    """"cuda_dom" -> ("cuda", "dom"), "overall_avg" -> ("overall", "avg"); None for other columns."""
    scope, _, measure = name.rpartition("_")
    if scope and measure in MEASURES:
        return scope, MEASURES[measure]
    return None


def _find_harness(value: str) -> tuple[str, str]:
    """(name, version) of a harness cell: "terminus-2" or "terminus-2 2.0.0" as the site prints it."""
    for harness in Harness.objects.all():
        if str(harness) == value:
            return harness.name, harness.version
    return value, ""


# PositiveIntegerField's range on every database Django supports.
MAX_ROLLOUT_INDEX = 2_147_483_647


def _cell_problems(raw: dict) -> list[str]:
    """What no column can store: a NUL character (PostgreSQL refuses it), cells beyond the header's columns."""
    problems = []
    if any("\x00" in str(text) for pair in raw.items() for text in pair if text is not None):
        problems.append("holds a NUL character (0x00)")
    if None in raw:  # csv.DictReader's key for cells past the header's
        problems.append(f"{len(raw) - 1 + len(raw[None])} cells, but the header names {len(raw) - 1} columns")
    return problems


def _entry_problems(row: dict) -> list[str]:
    """A model or harness name that would be empty, or cut short (two names differing past the limit would merge)."""
    problems = []
    if row.get("model"):
        model = normalise_model_name(row["model"])
        limit = AgentModel._meta.get_field("name").max_length
        if not model:
            problems.append(f"model {row['model']!r} is empty once normalised")
        elif len(model) > limit:
            problems.append(f"model name is {len(model)} characters long (at most {limit})")
    if row.get("harness"):
        name, version = _find_harness(row["harness"])
        for what, text in (("name", name), ("version", version)):
            limit = Harness._meta.get_field(what).max_length
            if len(text) > limit:
                problems.append(f"harness {what} is {len(text)} characters long (at most {limit})")
    return problems


def _first_occurrence(seen: dict[tuple, str], key: tuple, label: str, errors: list[str], what: str) -> bool:
    """True the first time `key` comes; after that an error naming the row it repeats."""
    if key in seen:
        errors.append(f"{label}: the same {what} as {seen[key]}")
        return False
    seen[key] = label
    return True


def published_entry(model_name: str, harness_text: str):
    """The (model, harness) a published row belongs to; harness "human" names a human cohort (RE-Bench's experts)."""
    name, version = _find_harness(harness_text)
    if name == HUMAN_HARNESS and not version:
        try:
            return ensure_human_cohort(model_name)
        except ValueError as error:
            raise ResultsImportError([str(error)]) from None
    return ensure_model(model_name), ensure_harness(name, version)


def check_range(name: str, value: float, version: BenchmarkVersion, measure: str = "avg") -> str:
    """A problem with a published value's range, or ""."""
    if value < 0:
        return f"{name} {value:g} is below 0: no normalised score is"
    if measure == "dom" and value > 1:
        return f"{name} {value:g} is above 1: Dominance is a share of entries beaten"
    if version.clip_rewards and value > 1:
        return (
            f"{name} {value:g} is above 1, but version {version.name} clips rewards to [0, 1]: "
            "fix the value, or import the version's tasks with --no-clip if its published rewards exceed 1 (as AutoLab v1.0's did)"
        )
    return ""


def validate(rows: list[tuple[str, dict]], defaults: Defaults = Defaults()) -> tuple[list[CleanRow], list[str]]:
    errors: list[str] = []
    clean: list[CleanRow] = []
    versions = {v.name: v for v in BenchmarkVersion.objects.all()}
    seen: dict[tuple, str] = {}
    for label, raw in rows:
        row = defaults.fill({k: (v or "").strip() for k, v in raw.items() if k})
        problems = [f"missing {c}" for c in REQUIRED if not row.get(c)]
        task = version = None
        if row.get("version"):
            version = versions.get(row["version"])
            if version is None:
                problems.append(f"unknown benchmark version {row['version']!r}")
            elif row.get("task"):
                task = Task.objects.filter(version=version, name=row["task"]).first()
                if task is None:
                    problems.append(f"no task {row['task']!r} in version {row['version']}")
        score = parse_number_cell(row.get("score"), "score", problems)
        if score is not None and version is not None and (problem := check_range("score", score, version)):
            problems.append(problem)
        index = None
        if row.get("rollout_index"):
            try:
                index = int(row["rollout_index"])
                if not 0 <= index <= MAX_ROLLOUT_INDEX:
                    raise ValueError
            except ValueError:
                problems.append(f"rollout_index {row['rollout_index']!r} is not a whole number from 0 to {MAX_ROLLOUT_INDEX}")
        ablation = set_of(row, problems)
        problems += _entry_problems(row)
        if problems:
            errors.append(f"{label}: {'; '.join(problems)}")
            continue
        model = normalise_model_name(row["model"])
        if not _first_occurrence(seen, (model, row["harness"], task.id, index), label, errors, "model, harness, task and rollout_index"):
            continue
        clean.append(CleanRow(label, model, row["harness"], task, index, score, row["source"], ablation))
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


def validate_figures(
    rows: list[tuple[str, dict]], header: list[str], defaults: Defaults = Defaults()
) -> tuple[list[CleanFigures], list[str]]:
    """The paper's table: every row an entry, every figure column a scope's Avg@k, Best@k or Dominance."""
    errors: list[str] = []
    columns = [c for c in header if c not in (*FIGURE_KEYS, "set")]
    figures = {c: figure_column(c) for c in columns}
    for column in (c for c, parsed in figures.items() if parsed is None):
        errors.append(
            f"row 1 (header): column {column!r} is neither one of {', '.join(FIGURE_KEYS)} "
            "nor a figure named <scope>_avg, <scope>_best or <scope>_dom (scope: overall or a category)"
        )
    versions = {v.name: v for v in BenchmarkVersion.objects.all()}
    categories: dict[int, list[str]] = {}
    reported: set[tuple[str, str]] = set()
    clean: list[CleanFigures] = []
    seen: dict[tuple, str] = {}
    for label, raw in rows:
        row = defaults.fill({k: (v or "").strip() for k, v in raw.items() if k})
        problems = [f"missing {c}" for c in FIGURE_KEYS if not row.get(c)]
        version = versions.get(row.get("version", ""))
        if row.get("version") and version is None:
            problems.append(f"unknown benchmark version {row['version']!r}")
        given = []
        for column, parsed in figures.items():
            if parsed is None or not row.get(column):
                continue
            scope, measure = parsed
            value = parse_number_cell(row[column], column, problems)
            if value is None or version is None:
                continue
            if scope in ALL_TASKS:
                scope = ""
            else:
                names = categories.setdefault(version.id, sorted(set(version.tasks.values_list("category", flat=True))))
                if scope not in names and SCOPE_ALIASES.get(scope) in names:
                    scope = SCOPE_ALIASES[scope]
                if scope not in names:
                    if (column, version.name) not in reported:
                        reported.add((column, version.name))
                        problems.append(f"column {column!r}: no category {scope!r} in version {version.name} ({', '.join(names)})")
                    continue
            if problem := check_range(column, value, version, measure):
                problems.append(problem)
                continue
            given.append((scope, measure, value, agg.printed_decimals(row[column])))
        if not problems and not given:
            problems.append("no figure given")
        ablation = set_of(row, problems)
        problems += _entry_problems(row)
        if problems:
            errors.append(f"{label}: {'; '.join(problems)}")
            continue
        model = normalise_model_name(row["model"])
        if not _first_occurrence(seen, (model, row["harness"], version.id), label, errors, "model, harness and version"):
            continue
        clean.append(CleanFigures(label, model, row["harness"], version, row["source"], given, ablation))
    if not rows:
        errors.append("the file holds no rows")
    return clean, errors


def import_results(text: str, as_json: bool = False, defaults: Defaults = Defaults(), dry_run: bool = False) -> ImportReport:
    """Validate every row, then import all of them in one transaction, then check the published figures.

    The table's shape is told by its header: figure columns (the paper's
    table), `task` without `model` (a wide per-task table), else scores.
    `dry_run` does all of it and rolls it back.
    """
    rows = read_rows(text, as_json)
    header = header_of(rows, text, as_json)
    if not as_json and (separated := _separator_hint(header)):
        raise ResultsImportError([f"row 1 (header): {separated}"])
    repeated = sorted({column for column in header if header.count(column) > 1})
    unreadable = [f"{label}: {'; '.join(problems)}" for label, raw in rows if (problems := _cell_problems(raw))]
    if repeated or unreadable:  # before any lookup: a NUL in a task name fails the query itself
        raise ResultsImportError([*(f"row 1 (header): column {column!r} appears twice" for column in repeated), *unreadable])
    if "task" not in header and "score" not in header and any(figure_column(c) for c in header):
        return _written(lambda: _import_figures(rows, header, defaults), dry_run)
    if "task" in header and "model" not in header and "score" not in header:
        rows, models = widen(rows, header)
        if not models:
            raise ResultsImportError(["row 1 (header): a wide table needs a column per model beside its task column"])
        header = [*header, "model", "score"]
    missing = [c for c in REQUIRED if c not in header and not getattr(defaults, c, "")]
    if missing and not as_json:
        raise ResultsImportError(
            [f"row 1 (header): missing column(s) {', '.join(missing)}{_options_for(missing)}; "
             f"expected {', '.join(COLUMNS)}, a wide table (task, then a column per model), or the paper's table: "
             "model, harness, version, source and <scope>_avg / _best / _dom columns"]
        )
    return _written(lambda: _import_scores(rows, defaults), dry_run)


# The columns the command's options (and the upload form's fields) fill in: `Defaults`.
OPTION_COLUMNS = ("version", "harness", "source", "set")


def _options_for(missing: list[str]) -> str:
    """The options that can stand for missing columns, named only where one exists (no --model, --task, --score)."""
    fillable = [c for c in missing if c in OPTION_COLUMNS]
    if not fillable:
        return ""
    return " (" + ", ".join(f"--{c}" for c in fillable) + (" fills" if len(fillable) == 1 else " fill") + " in " + (
        "that column" if len(fillable) == 1 else "those columns") + ")"


def _separator_hint(header: list[str]) -> str:
    """A header read as one column that holds another separator: the file is not comma-separated."""
    if len(header) != 1:
        return ""
    for separator, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "bars")):
        if separator in header[0]:
            return f"the file is separated by {name}, not commas: save it as comma-separated CSV"
    return ""


def _written(run, dry_run: bool) -> ImportReport:
    """`run()`, committed, or rolled back for a dry run (and no board cached meanwhile kept)."""
    with transaction.atomic():
        report = run()
        report.dry_run = dry_run
        if dry_run:
            transaction.set_rollback(True)
    if dry_run:
        invalidation.invalidate()
    return report


def _import_scores(rows: list[tuple[str, dict]], defaults: Defaults) -> ImportReport:
    clean, errors = validate(rows, defaults)
    if errors:
        raise ResultsImportError(errors)
    report = ImportReport()
    touched = set()
    for row in clean:
        model, harness = published_entry(row.model, row.harness)
        _count_write(report, _write_row(
            PublishedResult, {"model": model, "harness": harness, "version": row.task.version, "task": row.task,
                              "rollout_index": row.rollout_index},
            {"score": row.score, "source": row.source, "ablation": row.ablation, "compared": not row.ablation},
        ))
        report.sources.add(row.source)
        touched.add((model.id, harness.id, row.task.version_id))
    check_figures(report, touched)
    return report


def _import_figures(rows: list[tuple[str, dict]], header: list[str], defaults: Defaults) -> ImportReport:
    clean, errors = validate_figures(rows, header, defaults)
    if errors:
        raise ResultsImportError(errors)
    report = ImportReport(kind="figures")
    touched = set()
    for row in clean:
        model, harness = published_entry(row.model, row.harness)
        for scope, measure, value, decimals in row.figures:
            _count_write(report, _write_row(
                PublishedFigure, {"model": model, "harness": harness, "version": row.version, "scope": scope,
                                  "measure": measure},
                {"value": value, "decimals": decimals, "source": row.source, "ablation": row.ablation,
                 "compared": not row.ablation},
            ))
        report.sources.add(row.source)
        touched.add((model.id, harness.id, row.version.id))
    check_figures(report, touched)
    return report


CREATED, UPDATED, UNCHANGED = "created", "updated", "unchanged"


def _write_row(model_class, lookup: dict, values: dict) -> str:
    """Create or update one published row; a row that already holds `values` is left as it is ("unchanged")."""
    row = model_class.objects.filter(**lookup).first()
    if row is None:
        model_class.objects.create(**lookup, **values)
        return CREATED
    if all(getattr(row, name) == value for name, value in values.items()):
        return UNCHANGED
    for name, value in values.items():
        setattr(row, name, value)
    row.save(update_fields=list(values))
    return UPDATED


def _count_write(report: ImportReport, what: str) -> None:
    report.created += what == CREATED
    report.updated += what == UPDATED
    report.unchanged += what == UNCHANGED


def check_figures(report: ImportReport, touched: set[tuple[int, int, int]]) -> None:
    """Add to `report` a verdict on every published figure of the touched (model, harness, version)."""
    for version in BenchmarkVersion.objects.filter(id__in={v for _, _, v in touched}).order_by("name"):
        for group in compute.published_entries(version):
            if (group.model_id, group.harness_id, version.id) not in touched:
                continue
            for figure in group.paper:
                report.verdicts[figure.status] += 1
                report.checks.append(describe_check(group, figure))


def describe_check(group: PublishedEntry, figure: PaperFigure) -> str:
    where = f"{group.model} / {group.harness}, {figure.scope or 'all tasks'}, {MEASURE_LABELS[figure.measure]} {figure.printed}"
    if figure.status == "reproduced":
        return f"{where}: reproduced ({figure.ours:.4f})"
    if figure.status == "differs":
        return f"{where}: differs, the per-task scores give {figure.ours:.4f}"
    return f"{where}: no per-task scores to check it against"
