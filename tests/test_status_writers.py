"""A status has one writer (a rollout's: trajectories.lifecycle; a campaign's: evaluations.running.lifecycle); so has a state.

`evaluations/running/lifecycle.py` once said it was "the one owner", while claim and
cancel wrote around its table and five other modules wrote statuses of
their own. This reads every module's source (ast) and fails on a status
write anywhere else: an assignment to `.status`, `setattr(x, "status", ...)`,
`status=` given to a queryset's update/create or to a model's constructor,
or "status" in `update_fields`. A regrade's and a review's `state` likewise:
trajectories.grades and trajectories.reviews write them, nothing else.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("autolab_site", "agents", "tasks", "trajectories", "evaluations", "submissions")
OWNERS = {"trajectories/lifecycle.py", "evaluations/running/lifecycle.py"}
# Upload jobs have a status of their own, written where their life is (their values say so).
OTHER_STATUSES = {"trajectories/storing/uploads.py": "UploadJob.Status"}
# Writes to a `status` that is no model's (reviewed; named by their source text).
NOT_A_MODEL = {
    ("trajectories/storing/ingest.py", "outcome.status = rollout.status"),  # an import's report
}
WRITING_CALLS = {"update", "create", "get_or_create", "update_or_create"}
MODELS_WITH_STATUS = {"Rollout", "Campaign", "UploadJob"}


def status_writes(tree: ast.AST, source: str, field: str = "status", models=MODELS_WITH_STATUS) -> list[tuple[int, str, str]]:
    """(line, source of the write, source of the value written) for every write of `field` ("status" or "state")."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == field:
                    found.append((node.lineno, ast.get_source_segment(source, node), ast.get_source_segment(source, node.value)))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name == "setattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == field:
                found.append((node.lineno, ast.get_source_segment(source, node), ast.get_source_segment(source, node.args[2])))
            for keyword in node.keywords:
                if keyword.arg == field and (name in WRITING_CALLS or name in models):
                    found.append((node.lineno, ast.get_source_segment(source, node), ast.get_source_segment(source, keyword.value)))
                if keyword.arg == "update_fields" and f"'{field}'" in ast.dump(keyword.value).replace('"', "'"):
                    found.append((node.lineno, ast.get_source_segment(source, node), ""))
    return found


def project_sources():
    """(path from the root, source) of every module but tests and migrations."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/tests/" not in f"/{relative}" and "/migrations/" not in relative:
                yield relative, path.read_text()


def writes_outside_their_owner() -> list[str]:
    problems = []
    for relative, source in project_sources():
        if relative in OWNERS:
            continue
        for line, text, value in status_writes(ast.parse(source), source):
            if (relative, text) in NOT_A_MODEL:
                continue
            if relative in OTHER_STATUSES and OTHER_STATUSES[relative] in (value or text):
                continue
            problems.append(f"{relative}:{line}: {text.splitlines()[0]}")
    return problems


def test_no_status_is_written_outside_its_lifecycle():
    assert writes_outside_their_owner() == []


def test_the_scan_sees_each_kind_of_write():
    """The scan itself, on the writes it must catch (it fails on none, it catches none)."""
    source = (
        "rollout.status = 'finished'\n"
        "setattr(rollout, 'status', 'failed')\n"
        "Rollout.objects.filter(pk=1).update(status='queued')\n"
        "Campaign.objects.create(status='checking')\n"
        "Rollout(trial_name='x', status='finished')\n"
        "rollout.save(update_fields=['status'])\n"
        "JsonResponse({}, status=400)\n"  # not a write
        "Rollout.objects.filter(status='queued')\n"  # a read
    )
    assert [line for line, _, _ in status_writes(ast.parse(source), source)] == [1, 2, 3, 4, 5, 6]


# A regrade's and a review's state: each has its one writer too (a Grade's decides a rollout's reward).
STATE_OWNERS = {"trajectories/grades.py": "Grade", "trajectories/reviews.py": "Review"}


def state_writes_outside_their_owner() -> list[str]:
    problems = []
    for relative, source in project_sources():
        for line, text, value in status_writes(ast.parse(source), source, "state", set(STATE_OWNERS.values())):
            if value and ".State." not in value:
                continue  # another object's state (the stub LLM's), not a model's
            owner = STATE_OWNERS.get(relative)
            if owner is None or any(other in text for other in STATE_OWNERS.values() if other != owner):
                problems.append(f"{relative}:{line}: {text.splitlines()[0]}")
    return problems


def test_no_grade_or_review_state_is_written_outside_its_owner():
    assert state_writes_outside_their_owner() == []


def test_the_state_scan_sees_each_kind_of_write():
    source = (
        "Grade.objects.filter(pk=1).update(state=Grade.State.FAILED)\n"
        "grade.state = Grade.State.DONE\n"
        "grade.save(update_fields=['state'])\n"
        "self.state = StubState(scripts)\n"  # found, and left alone: not a model's
        "Grade.objects.filter(state=Grade.State.QUEUED)\n"  # a read
    )
    assert sorted(line for line, _, _ in status_writes(ast.parse(source), source, "state", set(STATE_OWNERS.values()))) == [1, 2, 3, 4]
