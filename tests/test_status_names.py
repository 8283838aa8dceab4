"""A rollout's statuses are one vocabulary: trajectories.statuses names them and every set of them.

There were three: `statuses.ENDED` and the runner's own `TERMINAL`, the
models' `ACTIVE_STATUSES` beside `statuses.ACTIVE`, and literals such as
`status="queued"`. A set spelled out again drifts from the rule it copies
(an "active" that forgets verifying, an "ended" that forgets cancelled)
with no test noticing. This reads every module's source (ast) and fails,
outside statuses.py, on
- a tuple, list or set of two or more rollout statuses, written as strings
  or as members (`RolloutStatus.FINISHED`, `statuses.FAILED`): name the set
  in statuses.py;
- a status written as a string where a status is compared, filtered or set
  (`x.status == "failed"`, `filter(status="queued")`, `status: str = "finished"`):
  use statuses' name.
"""
from __future__ import annotations

import ast

from tests.test_status_writers import project_sources
from trajectories import statuses

OWNER = "trajectories/statuses.py"
VALUES = frozenset(statuses.ALL)
NAMES = frozenset(value.upper() for value in VALUES)
# What a module calls the rollout statuses' namespaces (lifecycle's `S = RolloutStatus`).
NAMESPACES = frozenset({"statuses", "RolloutStatus", "S"})


def _is_status(node: ast.AST) -> bool:
    """A rollout status written out: its string, or a member of one of its namespaces."""
    if isinstance(node, ast.Constant):
        return node.value in VALUES
    return (
        isinstance(node, ast.Attribute) and node.attr in NAMES
        and isinstance(node.value, ast.Name) and node.value.id in NAMESPACES
    )


def _is_status_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in VALUES


def _names_status(node: ast.AST) -> bool:
    """`status`, or `<anything>.status`."""
    return (isinstance(node, ast.Name) and node.id == "status") or (isinstance(node, ast.Attribute) and node.attr == "status")


def spelled_statuses(source: str) -> list[tuple[int, str]]:
    """(line, source) of each set of statuses and each status string used as a status."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and sum(map(_is_status, node.elts)) >= 2:
            found.append(node)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(map(_names_status, operands)) and any(map(_is_status_literal, operands)):
                found.append(node)
        elif isinstance(node, ast.keyword) and (node.arg == "status" or (node.arg or "").startswith("status__")):
            if _is_status_literal(node.value):
                found.append(node.value)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(map(_names_status, targets)) and node.value is not None and _is_status_literal(node.value):
                found.append(node)
    return sorted((node.lineno, ast.get_source_segment(source, node)) for node in found)


def test_statuses_are_named_through_statuses():
    problems = [
        f"{relative}:{line}: {text.splitlines()[0]}"
        for relative, source in project_sources()
        if relative != OWNER
        for line, text in spelled_statuses(source)
    ]
    assert problems == []


def test_the_scan_finds_each_spelling():
    source = (
        "DONE = ('finished', 'failed', 'cancelled')\n"
        "ENDED = [RolloutStatus.FINISHED, S.FAILED]\n"
        "rollout.status == 'incomplete'\n"
        "Rollout.objects.filter(status='queued')\n"
        "status: str = 'finished'\n"
        "JUDGED = ('done', 'failed')\n"  # one status word among others: not a set of statuses
        "grade.state == 'failed'\n"  # a regrade's state, not a rollout's status
        "rollout.status in statuses.ACTIVE\n"  # named: fine
        "(C.RUNNING, C.PENDING)\n"  # a campaign's statuses
    )
    assert [line for line, _ in spelled_statuses(source)] == [1, 2, 3, 4, 5]


def test_active_and_ended_cover_every_status_the_runner_leaves():
    """The named sets still say what the copies they replace said."""
    assert statuses.ACTIVE == {statuses.QUEUED, statuses.PREPARING, statuses.RUNNING, statuses.VERIFYING}
    assert set(statuses.ENDED) == {statuses.FINISHED, statuses.FAILED, statuses.CANCELLED}
    assert statuses.IN_ATTEMPT == statuses.ACTIVE - {statuses.QUEUED}
    assert statuses.RAN == set(statuses.ENDED) - {statuses.CANCELLED}
    assert all(not statuses.TRANSITIONS[status] for status in statuses.ENDED)
