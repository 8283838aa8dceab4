"""Which steps fold (trajectories.analysis.folding): one table, the rollout page and the judge's digest alike.

The two once kept their own copies of the rule, and disagreed on a step
with no kind marked as a repeated look: the page folded it, the digest not.
"""
from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest

from tests.test_import_graph import project_modules
from trajectories import explorer
from trajectories.analysis import folding
from trajectories.analysis.judge_digest import DigestStep

# (kinds, repeats, folds, only waits)
CASES = [
    (("wait",), False, True, True),
    (("wait",), True, True, True),
    (("inspect",), False, False, False),
    (("inspect",), True, True, False),
    (("inspect", "wait"), True, True, False),
    (("inspect", "wait"), False, False, False),
    (("edit",), True, False, False),
    (("wait", "benchmark"), False, False, False),
    ((), False, False, False),
    ((), True, False, False),  # a message says something, whatever came before it
]


@pytest.mark.parametrize(("kinds", "repeats", "folds", "waits"), CASES)
def test_the_rule(kinds, repeats, folds, waits):
    assert folding.foldable(kinds, repeats) is folds
    assert folding.only_waits(kinds) is waits


@pytest.mark.parametrize(("kinds", "repeats", "folds", "waits"), CASES)
def test_the_page_and_the_digest_fold_alike(kinds, repeats, folds, waits):
    outline_row = SimpleNamespace(kind_list=list(kinds), repeats=repeats)
    assert explorer.foldable(outline_row) is folds
    assert DigestStep(step_id=1, kinds=kinds, repeats=repeats).foldable is folds


OWNED = {"FOLD_MIN_STEPS", "FOLDABLE_KINDS", "REPEATED_KINDS"}


def test_no_other_module_defines_the_folding_constants():
    found = {}
    for name, path in project_modules().items():
        if name == "trajectories.analysis.folding":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in OWNED for t in node.targets):
                found.setdefault(name, []).append(node.lineno)
    assert found == {}, f"use trajectories.analysis.folding: {found}"
