"""The board's shape: what `serving.board(version)` returns, written once.

Every reader of a board (the leaderboard, heatmap, model and task pages,
their templates, the API and CSV exports, the import report) reads these
attributes, so a field is renamed here and wherever Python still names it
the old way fails with an AttributeError instead of reading None.

Frozen dataclasses with slots, not TypedDicts: an attribute that does not
exist fails at once, where a dict's `.get("old_name")` quietly reads None
(no type checker runs in CI to catch it); frozen, because one cached board
serves every request and no page may change it for the next; slots, for a
board of thousands of cells. Templates read attributes as they read keys.
What a board shows that no one renames (the dispositions counted in
`BoardEntry.excluded`, a score@k's `by_k`) stays a dict.

JSON: `to_json` is the one conversion, used by the API wherever it emits a
part of the board as it is (the version, the published entries). Field
order is JSON's key order: the JSON users read is byte for byte what it was
when boards were dicts (tests/test_board_json.py).

Caching: boards are pickled into Django's cache, possibly a Redis that
several deployments share. SHAPE, a fingerprint of every type's fields, is
part of the cache key, so a board pickled under another shape (a dict from
before these types, or a renamed field) is never read as this one. Every
type pickles as its constructor's arguments (evaluations.boards.frozen): half the
time of the dataclasses module's way, for a board of thousands of cells.

No Django here: the board is plain data between the database and the pages.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from evaluations.boards.frozen import pickled_by_fields
from evaluations.figures import aggregation as agg

# One entry's figures over one scope: aggregation's own type (its `as_dict` is its JSON).
Figures = agg.Figures

# A measure's short name (a published figure's `measure`, a column's sort key) -> its Figures fields.
MEASURE_FIELDS = {"avg": "avg", "best": "best", "dom": "dominance"}


def measure_value(figures: Figures, measure: str) -> float | None:
    """A figure by its measure's short name: "dom" is Dominance."""
    return getattr(figures, MEASURE_FIELDS[measure])


def measure_interval(figures: Figures, measure: str) -> tuple[float, float] | None:
    """The interval of a figure, by its measure's short name."""
    return getattr(figures, f"{MEASURE_FIELDS[measure]}_ci")


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """The benchmark version a board is of."""

    id: int
    name: str
    benchmark: str
    label: str
    clip_rewards: bool


@dataclass(frozen=True, slots=True)
class BoardFilters:
    """The filters that chose the board's entries (None: all)."""

    harness: int | None
    open_weight: bool | None


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """A task of the version, in the board's order (by category, then name)."""

    id: int
    name: str
    category: str
    budget_sec: float | None
    final_only: bool


@dataclass(frozen=True, slots=True)
class UsageFigures:
    """What an entry's counted rollouts consumed over one scope: `aggregation.Usage` as pages show it.

    Totals are None where no rollout reported them (unknown, not zero).
    """

    n_rollouts: int
    cost_usd: float | None
    cost_known_rollouts: int
    cost_per_rollout: float | None
    input_tokens: int | None
    output_tokens: int | None
    tokens_per_rollout: float | None
    agent_hours: float | None
    benchmark_calls_per_hour: float | None

    @classmethod
    def of(cls, usage: agg.Usage) -> UsageFigures:
        return cls(**usage.as_dict())


@dataclass(frozen=True, slots=True)
class Medals:
    """Tasks won per medal (aggregation.MEDALS) over one scope."""

    gold: int
    silver: int
    bronze: int


@dataclass(frozen=True, slots=True)
class EntryScope:
    """An entry's usage, medals, curves and Pareto flags over all tasks or one category."""

    usage: UsageFigures
    medals: Medals | None  # None: outside the comparison set
    score_at_k: list[float]
    budget_curve: list[float]  # at each point of Board.budget_grid
    pareto_cost: bool
    pareto_tokens: bool


EMPTY_SCOPE = EntryScope(
    usage=UsageFigures.of(agg.Usage()), medals=None, score_at_k=[], budget_curve=[], pareto_cost=False,
    pareto_tokens=False,
)


def entry_key(model_id: int, harness_id: int) -> str:
    """An entry's key (`BoardEntry.key`): what a board's rows, cells and counts and an entry's cache counter are keyed by."""
    return f"m{model_id}-h{harness_id}"


def entry_pair(key: str) -> tuple[int, int]:
    """entry_key's (model id, harness id) back."""
    model, harness = key.split("-")
    return int(model[1:]), int(harness[1:])


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """One model x harness on the version: who it is, whether it competes, and its figures."""

    key: str
    model_id: int
    model: str
    model_label: str
    open_weight: bool | None
    scripted: bool
    human: bool
    harness_id: int
    harness: str
    ablation: bool
    in_comparison: bool  # staff's setting
    comparison: bool  # in the comparison set: ranked, with Dominance and medals
    note: str
    overall: Figures | None  # None when the version has no task
    categories: dict[str, Figures]
    scopes: dict[str, EntryScope]  # "" is all tasks
    excluded: dict[str, int]  # rollouts left out, by disposition (aggregation.INFRA, ...)
    # A team's published submission (Entry.submission_id) and its mark, "verified" or "self_reported"; "" for ours.
    submission_id: int | None = None
    submission_mark: str = ""

    def figures(self, category: str | None) -> Figures | None:
        """The figures over all tasks (category None) or one category."""
        if category:
            return self.categories.get(category)
        return self.overall

    def scope(self, category: str | None) -> EntryScope:
        return self.scopes.get(category or "", EMPTY_SCOPE)


@dataclass(frozen=True, slots=True)
class Cell:
    """One entry on one task: its counted scores, and the rollouts behind them."""

    avg: float | None  # None: only infrastructure errors
    best: float | None
    scores: list[float]
    rollout_ids: list[int]
    best_rollout_id: int | None
    infra_rollout_ids: list[int]
    clipped_rollout_ids: list[int]  # counted as 1.0: the version clips rewards


@dataclass(frozen=True, slots=True)
class PaperFigure:
    """A figure as a paper printed it, set beside the one its entry's per-task scores give."""

    scope: str  # "" is all tasks
    measure: str  # a key of MEASURE_FIELDS
    value: float
    printed: str
    ours: float | None
    status: str  # "reproduced", "differs" or "unchecked" (leaderboard.FIGURE_VERDICTS)
    source: str


@dataclass(frozen=True, slots=True)
class PublishedCell:
    avg: float
    best: float
    scores: list[float]


@dataclass(frozen=True, slots=True)
class PublishedEntry:
    """A published entry (model, harness, source): its per-task scores aggregated as ours, and the paper's figures."""

    key: str
    ablation: bool
    compared: bool
    model: str
    model_id: int
    model_label: str
    open_weight: bool | None
    human: bool
    harness: str
    harness_id: int
    version: str
    source: str
    paper: list[PaperFigure]
    overall: Figures | None  # None: no per-task scores, the paper's figures only
    categories: dict[str, Figures]
    avg: float | None
    best: float | None
    n_tasks: int
    n_tasks_total: int
    n_scores: int
    cells: dict[int, PublishedCell]

    def figures(self, category: str | None) -> Figures | None:
        if category:
            return self.categories.get(category)
        return self.overall

    @property
    def sources(self) -> list[str]:
        """Every source of the entry's figures, its per-task scores' first: a main table imported
        from one source and per-task scores from another are both this entry's, each cited."""
        return list(dict.fromkeys([self.source, *(f.source for f in self.paper)]))

    def printed(self, scope: str | None, measure: str) -> float | None:
        """The paper's own figure for a scope (None: all tasks, or a category) and measure, if it printed one."""
        wanted = scope or ""
        return next((f.value for f in self.paper if f.scope == wanted and f.measure == measure), None)


@dataclass(frozen=True, slots=True)
class BudgetPoint:
    """RE-Bench's score@k at one total budget (time_curves.Allocation, in seconds)."""

    budget: float
    by_k: dict[str, float]  # every k that fits in the data, as text (JSON's keys)
    best_k: int | None
    best: float | None


@dataclass(frozen=True, slots=True)
class CostPoint:
    cost: float
    score: float
    budget: float
    k: int


@dataclass(frozen=True, slots=True)
class EntryTimeCurves:
    """One entry's three RE-Bench curves over one scope."""

    data_end: float  # seconds: its longest run
    score_at_data_end: float | None
    budget: list[BudgetPoint]
    elapsed: list[float | None]  # at each time of TimeCurveScope.elapsed
    dollars_per_hour: float | None
    cost: list[CostPoint]
    n_runs: int


@dataclass(frozen=True, slots=True)
class TimeCurveScope:
    budgets: list[float]
    elapsed: list[float]
    entries: dict[str, EntryTimeCurves]


@dataclass(frozen=True, slots=True)
class Board:
    """Every figure of one benchmark version, for the entries its filters chose."""

    version: VersionInfo
    filters: BoardFilters
    categories: list[str]  # the biggest first
    tasks: list[TaskInfo]
    entries: list[BoardEntry]  # by Avg@k, best first
    n_comparison: int
    cells: dict[int, dict[str, Cell]]  # task id -> entry key -> cell
    budget_grid: list[float]
    published: list[PublishedEntry]
    n_resamples: int
    scoring: str
    human_hourly_rate_usd: float | None
    time_curves: dict[str, TimeCurveScope] | None  # by scope ("" all tasks); None unless scored by score logs
    # The database's generation the board was computed at (invalidation.generation: global and version
    # counters), and when: a page serving the last board while a newer one is computed shows its age.
    generation: str = ""
    computed_at: float = 0.0
    n_rollouts: int = 0  # rollouts read, counted or not: how big the board is to compute

    @property
    def identity(self) -> tuple:
        """What tells this board from any other (boards are immutable: a change makes a new one)."""
        return (self.version.id, self.filters, self.generation, self.computed_at)

    def shown_category(self, category: str | None) -> str | None:
        """The category a page asked for, if the board has it; else None (all tasks)."""
        return category if category in self.categories else None

    def cell(self, task_id: int, key: str) -> Cell | None:
        return self.cells.get(task_id, {}).get(key)

    def curves(self, category: str | None) -> TimeCurveScope | None:
        """RE-Bench's curves over all tasks or one category; None for a version scored by the reward."""
        return (self.time_curves or {}).get(category or "")


@dataclass(frozen=True, slots=True)
class TaskResult:
    """One entry on one task, as the task page lists it."""

    entry: BoardEntry
    cell: Cell
    best_url: str | None
    best_number: int | None  # the best rollout's number (Rollout.number), as its page calls it
    rollouts_url: str


@dataclass(frozen=True, slots=True)
class EntryOnBoard:
    """One of a model's entries, with the board of its version (the model page)."""

    entry: BoardEntry
    board: Board


# --- JSON --------------------------------------------------------------------


def to_json(value: Any) -> Any:
    """A board, or any part of it, as JSON-ready data: objects keyed by field, in field order.

    Figures keep aggregation's own JSON (`Figures.as_dict`, its key order);
    intervals are lists; a dict's keys stay as they are (JSON makes task
    ids text).
    """
    if isinstance(value, Figures):
        return value.as_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    return value


# --- the cache's shape version -------------------------------------------------


# Every type of this module (a test keeps the list whole), and aggregation's Figures.
SHAPE_TYPES: tuple[type, ...] = (
    Board, VersionInfo, BoardFilters, TaskInfo, BoardEntry, Figures, EntryScope, UsageFigures, Medals, Cell,
    PublishedEntry, PaperFigure, PublishedCell, TimeCurveScope, EntryTimeCurves, BudgetPoint, CostPoint,
    TaskResult, EntryOnBoard,
)


def fingerprint(types: tuple[type, ...]) -> str:
    """A short digest of the types' names, fields and field types: it changes whenever the shape does.

    The module is part of a type's name: a pickle refers to its class by
    module, so a board pickled before a type moved cannot be read after it.
    """
    text = ";".join(
        f"{t.__module__}.{t.__qualname__}(" + ",".join(f"{f.name}:{f.type}" for f in fields(t)) + ")" for t in types
    )
    return hashlib.sha256(text.encode()).hexdigest()[:12]


SHAPE = fingerprint(SHAPE_TYPES)

for _type in SHAPE_TYPES:  # pickled by the worker once per update, unpickled by every web process
    pickled_by_fields(_type)
