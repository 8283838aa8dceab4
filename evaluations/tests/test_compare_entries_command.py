"""`compare_entries` prints what a plain numpy computation of the paired clustered bootstrap gives.

The numbers here are worked out from the rollouts' and the published scores
directly (numpy, no project figure code): the per-task differences, the
bootstrap as its documentation states it (evaluations/figures/bootstrap.py:
tasks drawn within each category in sorted order from the generator
(seed, 1), each entry's rollouts on a task from the generator (seed, 0,
crc32 of the entry's and the task's names)), the percentile interval,
P(ahead), Holm, the rank ranges and the runs needed.
"""
from __future__ import annotations

import io
import math
import re
import zlib
from statistics import NormalDist

import numpy as np
import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion, Task

from evaluations.tests.board_factories import make_rollout

pytestmark = pytest.mark.django_db

B, SEED = 400, 5
CATEGORY = {"t1": "alpha", "t2": "alpha", "t3": "alpha", "t4": "beta", "t5": "beta", "t6": "beta"}
# v1.0 published rewards above 1 (the version does not clip).
ROLLOUTS = {
    "model-a": {"t1": [0.9, 0.7, 1.0], "t2": [0.4, 0.5, 0.3], "t3": [1.2, 0.9, 1.1], "t4": [0.2, 0.0, 0.1], "t5": [0.6, 0.6, 0.5], "t6": [0.3, 0.4, 0.2]},
    "model-b": {"t1": [0.5, 0.6, 0.4], "t2": [0.3, 0.2, 0.4], "t3": [0.8, 0.7, 0.9], "t4": [0.1, 0.0, 0.0], "t5": [0.5, 0.2, 0.3], "t6": [0.1, 0.2, 0.0]},
    "model-c": {"t1": [0.1, 0.0, 0.2], "t2": [0.0, 0.1, 0.0], "t3": [0.3, 0.2, 0.4], "t4": [0.0, 0.0, 0.0], "t5": [0.2, 0.1, 0.0]},
}
PUBLISHED = {"model-p": {"t1": 0.8, "t2": 0.35, "t3": 1.05, "t4": 0.15, "t5": 0.55, "t6": 0.3}}


@pytest.fixture
def world(tmp_path):
    cache.clear()
    version = BenchmarkVersion.objects.create(name="1.0", clip_rewards=False)
    tasks = {name: Task.objects.create(version=version, name=name, category=c, budget_sec=3600) for name, c in CATEGORY.items()}
    harness = Harness.objects.create(name="terminus-2", version="2.0.0")
    keys = {}
    for name, per_task in ROLLOUTS.items():
        model = AgentModel.objects.create(name=name, display_name=name)
        keys[name] = f"m{model.id}-h{harness.id}"
        for task, scores in per_task.items():
            for index, score in enumerate(scores):
                make_rollout(tasks[task], model, harness, score, index=index)
    rows = "".join(f"{m},terminus-2,1.0,{t},{s},AutoLab paper v1.0\n" for m, per in PUBLISHED.items() for t, s in per.items())
    path = tmp_path / "per_task.csv"
    path.write_text("model,harness,version,task,score,source\n" + rows)
    call_command("import_results", str(path), stdout=io.StringIO())
    return {"tasks": {n: t.id for n, t in tasks.items()}, "keys": keys}


def scores_of(world) -> dict[str, dict[str, list[float]]]:
    """Entry key -> task name -> scores, as the command names entries."""
    result = {world["keys"][m]: per for m, per in ROLLOUTS.items()}
    result.update({"published:p0": {t: [s] for t, s in PUBLISHED["model-p"].items()}})
    return result


def rollout_replicates(key: str, task_id: int, scores: list[float]) -> np.ndarray:
    n = len(scores)
    rng = np.random.default_rng((SEED, 0, zlib.crc32(repr(key).encode()), zlib.crc32(repr(task_id).encode())))
    picks = (rng.random((B, n)) * n).astype(np.int64)
    return np.asarray(scores)[picks].sum(axis=1) / n


def numpy_pair(world, a: str, b: str, scope: str | None) -> dict:
    scores = scores_of(world)
    names = sorted(CATEGORY)  # the board's task order: by category, then name
    names.sort(key=lambda t: (CATEGORY[t], t))
    common = [t for t in names if t in scores[a] and t in scores[b] and (scope is None or CATEGORY[t] == scope)]
    out = {"tasks": len(common)}
    if not common:
        return out
    diffs = np.array([np.mean(scores[a][t]) - np.mean(scores[b][t]) for t in common])
    out["difference"] = diffs.mean()
    per_task = np.stack([rollout_replicates(a, world["tasks"][t], scores[a][t]) - rollout_replicates(b, world["tasks"][t], scores[b][t]) for t in common], axis=1)
    rng = np.random.default_rng((SEED, 1))
    columns = []
    for category in sorted({CATEGORY[t] for t in common}):
        mine = np.array([j for j, t in enumerate(common) if CATEGORY[t] == category])
        columns.append(mine[rng.integers(0, len(mine), size=(B, len(mine)))])
    draws = np.concatenate(columns, axis=1)
    replicates = np.take_along_axis(per_task, draws, axis=1).mean(axis=1)
    out["ci"] = tuple(np.percentile(replicates, [2.5, 97.5]))
    out["ahead"] = (replicates > 1e-9).mean() + (np.abs(replicates) <= 1e-9).mean() / 2
    tail = min((replicates <= 1e-9).sum(), (replicates >= -1e-9).sum())
    out["p"] = min(1.0, 2 * (tail + 1) / (B + 1))
    # Runs needed: the normal approximation with the variance parts.
    va = [np.var(scores[a][t], ddof=1) if len(scores[a][t]) > 1 else 0.0 for t in common]
    vb = [np.var(scores[b][t], ddof=1) if len(scores[b][t]) > 1 else 0.0 for t in common]
    within = np.mean(np.add(va, vb))
    explained = np.mean([x / len(scores[a][t]) + y / len(scores[b][t]) for x, y, t in zip(va, vb, common)])
    between = max(0.0, np.var(diffs, ddof=1) - explained) if len(common) > 1 else 0.0
    z = NormalDist().inv_cdf(0.975)
    room = (abs(out["difference"]) / z) ** 2 - between / len(common)
    if len(common) < 2 or abs(out["difference"]) < 1e-9 or room <= 0:
        out["runs"] = None
    else:
        out["runs"] = 1 if within <= 0 else max(1, math.ceil(within / (len(common) * room)))
    return out


def holm(ps):
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    adjusted, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


LINE = re.compile(
    r"^(\d+)-(\d+)\s+(\S+(?: tasks)?)\s+(\d+)\s+(\S+)\s+(\[\S+, \S+\]|–)\s+(\S+)\s+(\S+)\s+(\S+)\s+(yes|no)\s+(\S+)$"
)


def parse(text: str):
    entries = re.findall(r"^  \[(\d+)\] (\S+): ", text, flags=re.M)
    order = [key for _, key in entries]
    pairs = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            x, y, scope, tasks, diff, ci, ahead, p, p_holm, sep, runs = m.groups()
            pairs[(order[int(x) - 1], order[int(y) - 1], None if scope == "all tasks" else scope)] = {
                "tasks": int(tasks), "diff": diff, "ci": ci, "ahead": ahead, "p": p, "holm": p_holm, "sep": sep == "yes", "runs": runs,
            }
    ranks_text = text.split("Rank ranges", 1)[1].split("Visible against sealed", 1)[0]
    scopes = [None, *re.findall(r"(\w+) \(\d+\)", ranks_text.splitlines()[1])[1:]]
    ranks = {}
    for line in ranks_text.splitlines()[2:]:
        m = re.match(r"^\[(\d+)\]\s+(.*)$", line)
        if m:
            cells = m.group(2).split()
            for scope, cell in zip(scopes, cells):
                low, high = map(int, cell.split("-"))
                ranks[(order[int(m.group(1)) - 1], scope)] = (low, high)
    return order, pairs, ranks


def test_the_command_prints_the_independent_computation(world):
    out = io.StringIO()
    call_command("compare_entries", "--version", "1.0", "--resamples", str(B), "--seed", str(SEED), stdout=out)
    text = out.getvalue()
    order, printed, ranks = parse(text)
    keys = world["keys"]
    # The comparison set by Avg@k, then the published main set.
    assert order == [keys["model-a"], keys["model-b"], keys["model-c"], "published:p0"]
    assert "95% intervals from the paired clustered bootstrap" in text
    scopes = [None, "alpha", "beta"]
    expected = {}
    for x, a in enumerate(order):
        for b in order[x + 1:]:
            for scope in scopes:
                expected[(a, b, scope)] = numpy_pair(world, a, b, scope)
            holms = holm([expected[(a, b, s)]["p"] for s in ("alpha", "beta")])
            for s, adjusted in zip(("alpha", "beta"), holms):
                expected[(a, b, s)]["holm"] = adjusted
    assert set(printed) == set(expected)
    for key, mine in expected.items():
        got = printed[key]
        assert got["tasks"] == mine["tasks"], key
        assert got["diff"] == f"{mine['difference']:+.4f}", key
        assert got["ci"] == f"[{mine['ci'][0]:+.4f}, {mine['ci'][1]:+.4f}]", key
        assert got["ahead"] == f"{mine['ahead']:.3f}" and got["p"] == f"{mine['p']:.3f}", key
        holm_p = mine["p"] if key[2] is None else mine["holm"]
        assert got["holm"] == f"{holm_p:.3f}", key
        separated = mine["tasks"] >= 2 and (
            (mine["ci"][0] > 1e-9 or mine["ci"][1] < -1e-9) if key[2] is None else holm_p < 0.05
        )
        assert got["sep"] == separated, key
        assert got["runs"] == ("–" if mine["runs"] is None else str(mine["runs"])), key
    # Rank ranges: per scope, the ranks consistent with every separated pair (a category's Holm over its pairs).
    for scope in scopes:
        if scope is not None:
            family = [(a, b) for x, a in enumerate(order) for b in order[x + 1:]]
            for (a, b), adjusted in zip(family, holm([expected[(a, b, scope)]["p"] for a, b in family])):
                expected[(a, b, scope)]["sep_rank"] = expected[(a, b, scope)]["tasks"] >= 2 and adjusted < 0.05
        else:
            for x, a in enumerate(order):
                for b in order[x + 1:]:
                    e = expected[(a, b, None)]
                    e["sep_rank"] = e["tasks"] >= 2 and (e["ci"][0] > 1e-9 or e["ci"][1] < -1e-9)
        for a in order:
            above = below = 0
            for b in order:
                if b == a:
                    continue
                e = expected[(a, b, scope)] if (a, b, scope) in expected else expected[(b, a, scope)]
                sign = 1 if (a, b, scope) in expected else -1
                if e["sep_rank"] and sign * e["difference"] > 0:
                    below += 1
                elif e["sep_rank"] and sign * e["difference"] < 0:
                    above += 1
            assert ranks[(a, scope)] == (1 + above, len(order) - below), (a, scope)
    # Something is separated and something is not: the case is not vacuous.
    assert any(p["sep"] for p in printed.values()) and not all(p["sep"] for p in printed.values())
    assert any(r[0] != r[1] for r in ranks.values()) and any(r[0] == r[1] for r in ranks.values())


def test_unknown_entries_and_versions_are_refused(world):
    with pytest.raises(CommandError, match="no benchmark version '9.9'"):
        call_command("compare_entries", "--version", "9.9", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no entry nobody"):
        call_command("compare_entries", "--version", "1.0", "--entries", "nobody", world["keys"]["model-a"], stdout=io.StringIO())
