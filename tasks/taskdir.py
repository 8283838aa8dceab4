"""Read a Harbor task directory into plain values, without the ORM.

A task directory holds `task.toml`, `instruction.md`, `environment/`,
`tests/test.sh` and `solution/`. We read `task.toml` ourselves with tomllib
because Harbor's TaskConfig drops AutoLab's `[optimization]` section, which is
where the metric, its direction and the two scoring anchors live.

Two digests of the folder are kept: `checksum`, the site's own (every file
but caches: what tells an import that a task changed), and `harbor_digest`,
Harbor's (its Packager's hash of the files it publishes), which a trial's
`lock.json` records and a submitted trial's must equal.

Everything that is wrong with a directory raises TaskDirError with a message
that names the file and what is wrong, so an importer can report it and move
on to the next task.
"""
from __future__ import annotations

import datetime
import math
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autolab_site.checksums import tree_checksum

from .lib.numbers import as_float
from .score_record import snapshot_problem

TASK_TOML = "task.toml"
INSTRUCTION = "instruction.md"
DIRECTIONS = ("lower", "higher")
SCORING_RULES = ("log_stretch", "anchored_linear", "rebench")
TRANSFORMS = ("identity", "log")
KNOWN_CATEGORIES = ("system_optimization", "puzzle_and_challenge", "model_development", "cuda")

# Left out of the checksum: caches that running a task's scripts on the host
# leaves behind, and version-control metadata. They are not task content.
IGNORED_NAMES = {"__pycache__", ".git", ".DS_Store", ".pytest_cache"}
IGNORED_SUFFIXES = (".pyc", ".pyo")


class TaskDirError(Exception):
    """A task directory that cannot be read; the message says where and why."""

    def __init__(self, message: str, path: Path | str | None = None):
        super().__init__(message)
        self.path = str(path) if path is not None else ""


@dataclass
class ParsedTask:
    """Everything the registry stores about one task directory.

    Field names match tasks.models.Task so that the importer can copy them
    across; `benchmark_commands` is extra (it lives in `optimization`).
    """

    name: str
    category: str = ""
    difficulty: str = ""
    tags: list[str] = field(default_factory=list)
    library: str = ""
    author: str = ""
    metric: str = ""
    direction: str = ""
    baseline_score: float | None = None
    baseline_method: str = ""
    reference_score: float | None = None
    reference_method: str = ""
    reference_source: str = ""
    scoring_rule: str = ""
    transform: str = "identity"
    transform_offset: float = 0.0
    final_only: bool = False
    benchmark_pattern: str = ""
    metric_pattern: str = ""
    budget_sec: int | None = None
    verifier_timeout_sec: int | None = None
    build_timeout_sec: int | None = None
    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    gpus: int = 0
    gpu_type: str = ""
    allow_internet: bool = False
    instruction: str = ""
    optimization: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    checksum: str = ""
    harbor_digest: str = ""  # hex, without Harbor's "sha256:"
    source_path: str = ""
    has_environment: bool = False
    has_tests: bool = False
    has_solution: bool = False
    benchmark_commands: list[str] = field(default_factory=list)

    @property
    def known_category(self) -> bool:
        return self.category in KNOWN_CATEGORIES

    def model_fields(self) -> dict[str, Any]:
        """The values to store on a Task row (all but the extras)."""
        values = asdict(self)
        values.pop("benchmark_commands")
        return values


def is_task_dir(path: Path) -> bool:
    return (path / TASK_TOML).is_file()


def looks_like_task_dir(path: Path) -> bool:
    """A folder that is meant to be a task, even if its task.toml is missing.

    Used to report "missing task.toml" for such folders instead of silently
    skipping them when a whole checkout is imported.
    """
    if is_task_dir(path):
        return True
    return (path / INSTRUCTION).is_file() or (path / "environment").is_dir() or (path / "tests" / "test.sh").is_file()


def find_task_dirs(root: Path) -> list[Path]:
    """The task folders under `root`: `root` itself, or its direct subfolders.

    Subfolders that do not look like tasks at all (no task.toml, no
    instruction.md, no environment/) are ignored; hidden folders too.
    """
    if looks_like_task_dir(root):
        return [root]
    if not root.is_dir():
        return []
    return sorted(
        child
        for child in root.iterdir()
        if child.is_dir() and not child.name.startswith(".") and looks_like_task_dir(child)
    )


def _not_content(relative: str) -> bool:
    parts = relative.split("/")
    return any(part in IGNORED_NAMES for part in parts) or relative.endswith(IGNORED_SUFFIXES)


def directory_checksum(root: Path) -> str:
    """The task folder's content checksum; caches (__pycache__, .pyc) are not content."""
    return tree_checksum(root, _not_content)


def harbor_digest(root: Path) -> str:
    """Harbor's digest of the task folder, as a trial's lock.json records it ("sha256:" + this hex).

    Harbor 0.26's own definition, called rather than copied: its Packager
    hashes the files it would publish (task.toml, instruction.md, README.md,
    trajectory.json, environment/, tests/, solution/, steps/, less what
    .harborignore and .gitignore leave out), which is what
    `harbor.models.job.lock` records for a local or git task. A folder of
    task.toml and instruction.md alone gets the digest of those two, which
    no run of the full task matches.
    """
    from harbor.publisher.packager import Packager

    try:
        content_hash, _ = Packager.compute_content_hash(root)
    except ValueError as error:  # Harbor's refusals: an ignore file that is not a file, or links out of the folder
        raise TaskDirError(f"{root}: Harbor cannot hash this task folder: {error}", root) from error
    return content_hash


def parse_task_dir(path: Path | str) -> ParsedTask:
    """Read one task directory; raise TaskDirError naming the file on problems."""
    root = Path(path)
    if not root.is_dir():
        raise TaskDirError(f"{root}: not a directory", root)
    toml_path = root / TASK_TOML
    if not toml_path.is_file():
        raise TaskDirError(f"{toml_path}: missing task.toml (every task directory needs one)", root)
    data = load_toml(toml_path)
    instruction_path = root / INSTRUCTION
    if not instruction_path.is_file():
        raise TaskDirError(f"{instruction_path}: missing instruction.md", root)
    try:
        instruction = instruction_path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TaskDirError(f"{instruction_path}: not valid UTF-8 ({error.reason} at byte {error.start})", root)

    reader = _Reader(toml_path, data)
    metadata = reader.table("metadata")
    agent = reader.table("agent")
    verifier = reader.table("verifier")
    environment = reader.table("environment")
    optimization = reader.table("optimization", required=True)

    metric = reader.text(optimization, "metric", "[optimization]", required=True)
    direction = reader.text(optimization, "direction", "[optimization]", required=True).strip().lower()
    if direction not in DIRECTIONS:
        reader.fail(f'[optimization] direction must be "lower" or "higher", not {optimization["direction"]!r}')
    baseline = reader.subtable(optimization, "baseline", "[optimization.baseline]")
    reference = reader.subtable(optimization, "reference", "[optimization.reference]")
    baseline_score = reader.number(baseline, "score", "[optimization.baseline]", required=True)
    reference_score = reader.number(reference, "score", "[optimization.reference]", required=True)

    scoring_rule = reader.text(optimization, "scoring", "[optimization]").strip()
    if scoring_rule and scoring_rule not in SCORING_RULES:
        reader.fail(f"[optimization] scoring must be one of {', '.join(SCORING_RULES)}, not {scoring_rule!r}")
    scoring = reader.table("scoring")
    if scoring:
        declared = reader.text(scoring, "rule", "[scoring]").strip()
        if declared and declared not in SCORING_RULES:
            reader.fail(f"[scoring] rule must be one of {', '.join(SCORING_RULES)}, not {declared!r}")
        if declared and scoring_rule and declared != scoring_rule:
            reader.fail(f"[scoring] rule {declared!r} contradicts [optimization] scoring {scoring_rule!r}")
        scoring_rule = declared or scoring_rule
    transform = reader.text(scoring, "transform", "[scoring]").strip() or "identity"
    if transform not in TRANSFORMS:
        reader.fail(f"[scoring] transform must be one of {', '.join(TRANSFORMS)}, not {transform!r}")
    offset = reader.number(scoring, "log_offset", "[scoring]") or 0.0
    if offset and transform != "log":
        reader.fail("[scoring] log_offset only applies to transform = \"log\"")
    final_only = scoring.get("final_only", False)
    if not isinstance(final_only, bool):
        reader.fail(f"[scoring] final_only must be true or false, not {final_only!r}")
    if scoring_rule != "rebench" and any(scoring.get(key) is not None for key in ("transform", "final_only", "snapshot")):
        reader.fail('[scoring] transform, final_only and snapshot belong to rule = "rebench"')
    if scoring_rule == "rebench" and transform == "log":
        for label, value in (("baseline", baseline_score), ("reference", reference_score)):
            if value - offset <= 0:
                reader.fail(f"[optimization.{label}] score {value:g} must exceed log_offset {offset:g} under the log transform")
    snapshot = scoring.get("snapshot")
    if snapshot is not None and snapshot_problem(snapshot):
        reader.fail(snapshot_problem(snapshot))
    if snapshot is not None and final_only:
        reader.fail("[scoring] snapshot belongs to a task scored by the best of its score log (final_only = false)")
    if scoring_rule == "rebench" and not final_only and snapshot is None:
        reader.fail(
            "[scoring] final_only = false (the best of the score log) needs snapshot = [...], the files the scoring "
            "tool scores: the runner copies them out of the agent's reach at each call and the verifier scores "
            "the copies again, since a score log the agent could write would decide its score. Declare snapshot, "
            "or set final_only = true"
        )
    commands = reader.commands(optimization)
    benchmark_pattern = reader.text(optimization, "benchmark_pattern", "[optimization]")
    if not benchmark_pattern and commands:
        benchmark_pattern = "|".join(command_pattern(command) for command in commands)
    metric_pattern = reader.text(optimization, "metric_pattern", "[optimization]")
    for key, pattern in (("benchmark_pattern", benchmark_pattern), ("metric_pattern", metric_pattern)):
        try:
            re.compile(pattern)
        except re.error as error:
            reader.fail(f"[optimization] {key} is not a valid regular expression: {error}")

    return ParsedTask(
        name=task_name(root, data),
        category=reader.text(metadata, "domain", "[metadata]") or reader.text(metadata, "category", "[metadata]"),
        difficulty=reader.text(metadata, "difficulty", "[metadata]"),
        tags=[str(tag) for tag in reader.items(metadata, "tags", "[metadata]")],
        library=reader.text(metadata, "library", "[metadata]"),
        author=reader.text(metadata, "author", "[metadata]"),
        metric=metric.strip(),
        direction=direction,
        baseline_score=baseline_score,
        baseline_method=reader.text(baseline, "method", "[optimization.baseline]"),
        reference_score=reference_score,
        reference_method=reader.text(reference, "method", "[optimization.reference]"),
        reference_source=reader.text(reference, "source", "[optimization.reference]"),
        scoring_rule=scoring_rule,
        transform=transform,
        transform_offset=offset,
        final_only=final_only,
        benchmark_pattern=benchmark_pattern,
        metric_pattern=metric_pattern,
        budget_sec=reader.seconds(agent, "timeout_sec", "[agent]"),
        verifier_timeout_sec=reader.seconds(verifier, "timeout_sec", "[verifier]"),
        build_timeout_sec=reader.seconds(environment, "build_timeout_sec", "[environment]"),
        cpus=reader.number(environment, "cpus", "[environment]"),
        memory_mb=reader.count(environment, "memory_mb", "[environment]"),
        storage_mb=reader.count(environment, "storage_mb", "[environment]"),
        gpus=reader.gpus(environment),
        gpu_type=reader.gpu_type(environment),
        allow_internet=bool(environment.get("allow_internet", False)),
        instruction=instruction,
        optimization=jsonable(optimization),
        metadata=jsonable(metadata),
        checksum=directory_checksum(root),
        harbor_digest=harbor_digest(root),
        source_path=str(root.resolve()),
        has_environment=(root / "environment").is_dir(),
        has_tests=(root / "tests").is_dir(),
        has_solution=(root / "solution").is_dir(),
        benchmark_commands=commands,
    )


def read_gpus(root: Path) -> tuple[int, str]:
    """The GPUs a task folder's task.toml asks for, read as parse_task_dir reads them: (count, type(s))."""
    toml_path = root / TASK_TOML
    reader = _Reader(toml_path, load_toml(toml_path))
    environment = reader.table("environment")
    return reader.gpus(environment), reader.gpu_type(environment)


def load_toml(toml_path: Path) -> dict[str, Any]:
    """Parse a TOML file; a syntax error names the file, line and column."""
    try:
        text = toml_path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TaskDirError(f"{toml_path}: not valid UTF-8 ({error.reason} at byte {error.start})", toml_path.parent)
    # Editors on Windows sometimes add a byte-order mark; TOML has no use for it.
    text = text.removeprefix("\ufeff")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TaskDirError(f"{toml_path}: {describe_toml_error(error)}", toml_path.parent) from error


def describe_toml_error(error: tomllib.TOMLDecodeError) -> str:
    """'line L, column C: problem', on any Python version.

    Python 3.14 gives TOMLDecodeError lineno/colno attributes; before that the
    position is only inside the message, as "(at line L, column C)".
    """
    message = str(getattr(error, "msg", "") or error)
    lineno = getattr(error, "lineno", None)
    colno = getattr(error, "colno", None)
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)", message)
    if found:
        lineno = lineno or int(found.group(1))
        colno = colno or int(found.group(2))
        message = message[: found.start()] + message[found.end() :]
    elif "(at end of document)" in message:
        message = message.replace("(at end of document)", "").strip()
        return f"end of file: invalid TOML: {message}"
    if lineno is None:
        return f"invalid TOML: {message}"
    return f"line {lineno}, column {colno}: invalid TOML: {message.strip()}"


def task_name(root: Path, data: dict[str, Any]) -> str:
    """`[task] name` (the part after "org/"), else `[metadata] name`, else the folder."""
    for table in ("task", "metadata"):
        value = data.get(table, {})
        if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"].strip():
            return value["name"].strip().rsplit("/", 1)[-1]
    return root.resolve().name


def command_pattern(command: str) -> str:
    """A regex that recognises `command` in a shell line, spacing aside."""
    return r"\s+".join(re.escape(word) for word in command.split())


def jsonable(value: Any) -> Any:
    """TOML values as JSON values: dates and times become ISO strings."""
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [jsonable(item) for item in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


class _Reader:
    """Typed look-ups in task.toml that fail with the file and key named."""

    def __init__(self, path: Path, data: dict[str, Any]):
        self.path = path
        self.data = data

    def fail(self, problem: str):
        raise TaskDirError(f"{self.path}: {problem}", self.path.parent)

    def table(self, key: str, required: bool = False) -> dict[str, Any]:
        value = self.data.get(key)
        if value is None:
            if required:
                self.fail(f"missing [{key}] section")
            return {}
        if not isinstance(value, dict):
            self.fail(f"[{key}] must be a table, not {type(value).__name__}")
        return value

    def subtable(self, table: dict[str, Any], key: str, where: str) -> dict[str, Any]:
        value = table.get(key)
        if value is None:
            self.fail(f"missing {where} section (with score and method)")
        if not isinstance(value, dict):
            self.fail(f"{where} must be a table with score and method")
        return value

    def text(self, table: dict[str, Any], key: str, where: str, required: bool = False) -> str:
        value = table.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                self.fail(f"missing {key} in {where}")
            return ""
        if not isinstance(value, str):
            self.fail(f"{where} {key} must be a string, not {value!r}")
        return value

    def items(self, table: dict[str, Any], key: str, where: str) -> list[Any]:
        value = table.get(key, [])
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            self.fail(f"{where} {key} must be a list")
        return value

    def number(self, table: dict[str, Any], key: str, where: str, required: bool = False) -> float | None:
        value = table.get(key)
        if value is None:
            if required:
                self.fail(f"missing {key} in {where}")
            return None
        if as_float(value) is None:
            self.fail(f"{where} {key} must be a finite number, not {value!r}")
        return float(value)

    def count(self, table: dict[str, Any], key: str, where: str) -> int | None:
        value = self.number(table, key, where)
        if value is None:
            return None
        if value < 0 or value != int(value):
            self.fail(f"{where} {key} must be a whole number >= 0, not {table[key]!r}")
        return int(value)

    def seconds(self, table: dict[str, Any], key: str, where: str) -> int | None:
        value = self.number(table, key, where)
        if value is None:
            return None
        if value < 0:
            self.fail(f"{where} {key} must be >= 0, not {table[key]!r}")
        return int(round(value))

    def gpus(self, environment: dict[str, Any]) -> int:
        return self.count(environment, "gpus", "[environment]") or 0

    def gpu_type(self, environment: dict[str, Any]) -> str:
        """Harbor's `gpu_types = [...]` list, or the singular `gpu_type` some tasks use."""
        types = environment.get("gpu_types")
        if types is None:
            types = environment.get("gpu_type")
        if types is None:
            return ""
        if isinstance(types, str):
            types = [types]
        if not isinstance(types, list) or not all(isinstance(item, str) for item in types):
            self.fail("[environment] gpu_types must be a list of strings")
        return ", ".join(item.strip() for item in types if item.strip())

    def commands(self, optimization: dict[str, Any]) -> list[str]:
        """Explicit local benchmark commands: `benchmark_command` (string or list)."""
        value = optimization.get("benchmark_command", optimization.get("benchmark_commands"))
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.fail("[optimization] benchmark_command must be a string or a list of strings")
        return [item.strip() for item in value if item.strip()]
