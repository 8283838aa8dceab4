"""Trial text reaches the database and the pages through the masked doors only (issue 43); a second writer fails here.

Imports store what the readers masked (trajectories.reading.masked), and
pages read stored files through the artifact storage's masked readers
(`artifacts.shown_*`, `log_tails`). This reads every module's source (ast)
and fails on a writer of trial text elsewhere: a step, tool call or
output row made outside the importer, a rollout's text column written
outside the modules reviewed here, a stored file read raw outside the
artifact storage. tests/test_no_secret_leaves.py then checks, page by
page, that what they write and serve shows no secret.
"""
from __future__ import annotations

import ast

from .test_status_writers import project_sources, status_writes

# Rows of a trajectory's text: made by the importer alone, from steps the readers masked.
STEP_MODELS = {"Step", "ToolCall", "Observation", "ObservationText"}
STEP_WRITERS = {
    "trajectories/storing/ingest.py",  # insert_steps, from reading.masked's steps (live ticks too)
    "evaluations/management/commands/generate_synthetic.py",  # made-up steps for load tests
}
# A rollout's columns of trial text, and who writes them (reviewed: each writes masked text).
ROLLOUT_TEXT = (
    "exception_message", "exception_traceback", "verifier_stdout", "verifier_fields", "verifier_outputs", "config",
    "agent_extra", "final_metrics", "status_reason", "excluded", "validation_warnings", "failure_evidence",
)
ROLLOUT_TEXT_WRITERS = {
    "trajectories/reading/trial_folder.py",  # a TrialFolder's fields, masked by read_trial_folder's last step
    "trajectories/reading/inspect_log.py",  # likewise, by read_log's
    "trajectories/reading/masked.py",  # the masking itself
    "trajectories/storing/ingest.py",  # copies a masked TrialFolder's fields into the rollout
    "trajectories/storing/live.py",  # masks a tick's final metrics and warnings
    "trajectories/lifecycle.py",  # masks a status's reason and an exception's text
    "trajectories/grades.py",  # copies a masked Verification's fields (reading.trial_folder.read_verification)
    "trajectories/failures/service.py",  # evidence quoted from the masked rows
    "evaluations/results/human_import.py",  # a human attempt's own ids, no trial text
    "evaluations/management/commands/generate_synthetic.py",  # made-up rollouts
}
# Writes of a field of the same name that is no rollout's (reviewed; named by their source's first line).
NOT_A_ROLLOUT = {
    ("evaluations/running/campaigns.py", "Campaign.objects.filter(pk=campaign.pk, status=Campaign.Status.CHECKING).update("),
    ("evaluations/sandbox/sealing.py", "task.config = seal(task.paths.task_dir, task.config).config"),  # Harbor's task
}
# Raw reads of a stored trial file: what the artifact storage's masked readers are built on, and the regrade's restore.
RAW_READS = {"open_artifact", "head", "tail", "tail_bytes"}
RAW_READERS = {"trajectories/storing/artifacts.py"}


def _called_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def step_rows_made(tree: ast.AST) -> list[int]:
    """Lines making a trajectory row: a model's constructor, insert_rows(Model, ...), Model.objects.create/bulk_create."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _called_name(node)
        if name in STEP_MODELS:
            lines.append(node.lineno)
        elif name == "insert_rows" and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in STEP_MODELS:
            lines.append(node.lineno)
        elif name in ("create", "bulk_create", "get_or_create", "update_or_create") and isinstance(node.func, ast.Attribute):
            target = ast.unparse(node.func.value)
            if any(target.startswith(f"{model}.objects") for model in STEP_MODELS):
                lines.append(node.lineno)
    return lines


def raw_file_reads(tree: ast.AST) -> list[int]:
    """Lines calling one of the artifact storage's raw readers (`artifacts.head(...)`, or the name imported)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RAW_READS:
            if ast.unparse(node.func.value).endswith("artifacts"):
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("artifacts"):
            if any(alias.name in RAW_READS for alias in node.names):
                lines.append(node.lineno)
    return lines


def found_outside(allowed: set[str], scan) -> list[str]:
    """path:line of every place `scan(tree)` finds in a module not `allowed`."""
    return [f"{path}:{line}" for path, source in project_sources() if path not in allowed for line in scan(ast.parse(source))]


def test_trajectory_rows_are_made_by_the_importer_only():
    assert found_outside(STEP_WRITERS, step_rows_made) == []


def test_a_rollouts_trial_text_is_written_by_the_reviewed_modules_only():
    found = []
    for path, source in project_sources():
        if path in ROLLOUT_TEXT_WRITERS:
            continue
        tree = ast.parse(source)
        for field in ROLLOUT_TEXT:
            found += [
                f"{path}:{line}: {text.splitlines()[0]}" for line, text, _ in status_writes(tree, source, field, {"Rollout"})
                if (path, text.splitlines()[0]) not in NOT_A_ROLLOUT
            ]
    assert found == []


def test_stored_files_are_read_raw_by_the_artifact_storage_only():
    assert found_outside(RAW_READERS, raw_file_reads) == []


def test_the_scans_see_each_kind_of_write():
    """The scans themselves, on the writes they must catch."""
    made = "Step(rollout=r)\ninsert_rows(Observation, rows)\nToolCall.objects.bulk_create([])\nOutlineStep(1)\n"
    assert sorted(step_rows_made(ast.parse(made))) == [1, 2, 3]
    written = "rollout.exception_message = m\nRollout.objects.filter(pk=1).update(config={})\nrollout.reward = 1\n"
    tree = ast.parse(written)
    assert sorted(line for field in ROLLOUT_TEXT for line, _, _ in status_writes(tree, written, field, {"Rollout"})) == [1, 2]
    reads = "artifacts.head(r, p, 1)\nfrom trajectories.storing.artifacts import tail_bytes\nartifacts.shown_head(r, p, 1)\n"
    assert sorted(raw_file_reads(ast.parse(reads))) == [1, 2]
