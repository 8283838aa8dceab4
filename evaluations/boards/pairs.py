"""A board's entries as one table for paired comparison: the rollouts' entries and the published ones.

Reads a `board.Board` (no database, no HTTP): per entry and task the counted
scores the board counted (its cells), a published entry's per-task scores
beside them. The figures are evaluations.figures.paired's.
"""
from __future__ import annotations

from dataclasses import dataclass

from evaluations.boards import board as board_shape
from evaluations.figures import aggregation as agg
from evaluations.figures import paired


@dataclass(frozen=True)
class Comparable:
    """One entry that can be compared: measured here (a board entry) or published (a paper's per-task scores)."""

    key: str  # the board entry's key, or "published:" + the published entry's
    label: str
    published: bool
    comparison: bool  # in the board's comparison set (published: in the paper's own, not an ablation)
    avg: float | None  # the board's Avg@k over all tasks


PUBLISHED = "published:"


def comparables(board: board_shape.Board) -> dict[str, Comparable]:
    """Every entry with a counted score, by key: the board's order, then the published entries'."""
    result = {}
    for e in board.entries:
        if any(e.key in by_entry and by_entry[e.key].scores for by_entry in board.cells.values()):
            label = f"{e.model_label} / {e.harness}"
            result[e.key] = Comparable(e.key, label, False, e.comparison, e.overall.avg if e.overall else None)
    for p in board.published:
        if p.cells:
            key = PUBLISHED + p.key
            label = f"{p.model_label} / {p.harness} (published: {p.source})"
            result[key] = Comparable(key, label, True, not p.ablation, p.avg)
    return result


def score_table(board: board_shape.Board) -> agg.ScoreTable:
    """The board's counted scores and the published per-task scores, one table, tasks by id."""
    scores: dict[tuple[str, int], list[float]] = {}
    for task_id, by_entry in board.cells.items():
        for key, cell in by_entry.items():
            if cell.scores:
                scores[(key, task_id)] = list(cell.scores)
    for p in board.published:
        for task_id, cell in p.cells.items():
            if cell.scores:
                scores[(PUBLISHED + p.key, task_id)] = list(cell.scores)
    return agg.ScoreTable(
        entries=list(comparables(board)), tasks=[t.id for t in board.tasks], scores=scores,
        categories={t.id: t.category for t in board.tasks},
    )


def default_entries(board: board_shape.Board) -> list[str]:
    """The entries a comparison takes unless told: the comparison set's, then the published main set's."""
    return [key for key, c in comparables(board).items() if c.comparison]


@dataclass
class Comparison:
    """Paired differences of every pair of `entries` (overall and per category) and the rank ranges they allow."""

    table: agg.ScoreTable
    entries: list[str]
    scopes: list[str | None]  # None all tasks, then the categories
    pairs: dict[str | None, dict[tuple[str, str], paired.PairedDifference]]  # categories: Holm over the pair's
    ranks: dict[str | None, dict[str, tuple[int, int]]]
    n_resamples: int
    seed: int


def compare_all(
    board: board_shape.Board, entries: list[str], n_resamples: int = agg.DEFAULT_RESAMPLES, seed: int = agg.DEFAULT_SEED,
) -> Comparison:
    table = score_table(board)
    kept = paired.Replicates(table, n_resamples, seed)
    scopes: list[str | None] = [None, *board.categories]
    # The table's per-category claims: Holm over each pair's categories; the rank ranges': over each category's pairs.
    raw = {scope: paired.pairwise(table, entries, scope, replicates=kept, holm_over_pairs=False) for scope in scopes}
    pairs = paired.holm_over_categories(raw)
    ranks = {
        scope: paired.rank_ranges(entries, raw[scope] if scope is None else paired.holm_over_pairs_of(raw[scope]))
        for scope in scopes
    }
    return Comparison(table, entries, scopes, pairs, ranks, n_resamples, seed)


def compare_two(
    board: board_shape.Board, a: str, b: str, n_resamples: int = agg.DEFAULT_RESAMPLES, seed: int = agg.DEFAULT_SEED,
) -> list[paired.PairedDifference]:
    """`a` against `b`, overall then per category in the board's order (Holm over the categories)."""
    table = score_table(board)
    differences = {d.scope: d for d in paired.compare(table, a, b, n_resamples, seed)}
    return [differences[None]] + [differences[c] for c in board.categories if c in differences]


# The compare page's matrix: this many of the board's compared entries, from the top.
MATRIX_ENTRIES = 8


@dataclass
class Matrix:
    """The top entries' paired differences over all tasks, row minus column, and their rank ranges."""

    entries: list[Comparable]
    rows: list[list[paired.PairedDifference | None]]  # None on the diagonal
    ranks: list[tuple[int, int]]

    @property
    def lines(self) -> list[tuple[Comparable, tuple[int, int], list[paired.PairedDifference | None]]]:
        """(entry, rank range, its row) per entry, as the page lists them."""
        return list(zip(self.entries, self.ranks, self.rows))


def top_matrix(
    board: board_shape.Board, n: int = MATRIX_ENTRIES, n_resamples: int = agg.DEFAULT_RESAMPLES,
    seed: int = agg.DEFAULT_SEED,
) -> Matrix | None:
    """The matrix of the board's first `n` compared entries (None with fewer than two)."""
    known = comparables(board)
    keys = [k for k in default_entries(board) if not known[k].published][:n]
    if len(keys) < 2:
        return None
    table = score_table(board)
    pairs = paired.pairwise(table, keys, None, replicates=paired.Replicates(table, n_resamples, seed))
    ranks = paired.rank_ranges(keys, pairs)
    return Matrix(
        entries=[known[k] for k in keys],
        rows=[[None if a == b else pairs[(a, b)] for b in keys] for a in keys],
        ranks=[ranks[k] for k in keys],
    )

