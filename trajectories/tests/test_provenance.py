"""trajectories.provenance: no number the agent's sandbox wrote fills a rollout's counted usage, curve or cause (issue 43).

Trial folders as our runner leaves them (with its provenance file at the
root) and as they come from elsewhere (without): the table of cases says
where the usage and the steps come from and what the rollout counts.
"""
from __future__ import annotations

import ast
import json
from html import unescape
from pathlib import Path

import pytest
from django.conf import settings

from trajectories import provenance
from trajectories.failures.service import facts_for
from trajectories.models import Rollout
from trajectories.provenance import AGENT, HARNESS, IMPORTED, NONE, TRIAL, Provenance, ProvenanceError, Usage
from trajectories.reading.trial_folder import read_trial_folder
from trajectories.services import import_trial_dir, live_import, record_provenance

from .trialdata import make_task, make_trial, trajectory, write_json

FORGED_TOKENS = 900_000_000


def forged_trajectory() -> dict:
    """What a sandbox writes: a tiny cost, huge token counts, a benchmark call claiming a perfect run."""
    data = trajectory(1)
    data["final_metrics"] = {
        "total_prompt_tokens": FORGED_TOKENS, "total_completion_tokens": FORGED_TOKENS, "total_cost_usd": 1e-6,
    }
    return data


def runner_trial(tmp_path: Path, record: Provenance, *, agent_result: dict | None = None, **trial) -> Path:
    folder = make_trial(tmp_path / "trials", **trial)
    if agent_result is not None:
        result = json.loads((folder / "result.json").read_text())
        result["agent_result"] = agent_result
        write_json(folder / "result.json", result)
    record_provenance(folder, record)
    return folder


@pytest.mark.parametrize(
    "raw, expected",
    [
        (Provenance(HARNESS, HARNESS, frozenset({"agent/x"}), "terminus-2").to_json(),
         Provenance(HARNESS, HARNESS, frozenset({"agent/x"}), "terminus-2")),
        (Provenance(NONE, AGENT, None, "oracle").to_json(), Provenance(NONE, AGENT, None, "oracle")),
        (b'{"usage": "agent", "trajectory": "agent", "from_sandbox": []}', Provenance(AGENT, AGENT, frozenset())),
        (b"not json", "not JSON"),
        (b"[1]", "not a JSON object"),
        # "trial" is what an import without the file means: no file may claim it, nor anything else.
        (b'{"usage": "trial", "trajectory": "harness"}', "usage 'trial'"),
        (b'{"usage": "harness", "trajectory": "sandbox"}', "trajectory 'sandbox'"),
        (b'{"usage": "harness", "trajectory": "harness", "from_sandbox": "agent/x"}', "not a list"),
    ],
)
def test_parse(raw, expected):
    if isinstance(expected, str):
        with pytest.raises(ProvenanceError, match=expected):
            provenance.parse(raw)
    else:
        assert provenance.parse(raw) == expected


MEASURED = Usage(n_input_tokens=10, n_cache_tokens=1, n_output_tokens=2, cost_usd=0.5)


@pytest.mark.parametrize(
    "source, counted, reported",
    [
        (HARNESS, MEASURED, {}),
        (TRIAL, MEASURED, {}),
        (AGENT, Usage(), {"n_input_tokens": 10, "n_cache_tokens": 1, "n_output_tokens": 2, "cost_usd": 0.5}),
        (NONE, Usage(), {}),
    ],
)
def test_split_usage(source, counted, reported):
    assert provenance.split_usage(source, MEASURED) == (counted, reported)
    assert provenance.counts(source) == (source in (HARNESS, TRIAL))


@pytest.mark.django_db
def test_a_model_free_harness_has_no_usage_whatever_its_sandbox_wrote(tmp_path):
    """The oracle's case: its sandbox's trajectory.json was copied in; it is read as the agent's own account only."""
    make_task("demo_task")
    folder = runner_trial(
        tmp_path, Provenance(NONE, AGENT, frozenset({"agent/trajectory.json", "agent/oracle.txt"}), "oracle"),
        trajectory_data=forged_trajectory(), agent_result={},
    )
    outcome = import_trial_dir(folder)
    rollout = Rollout.objects.get(pk=outcome.rollout_id)
    assert (rollout.cost_usd, rollout.n_input_tokens, rollout.n_output_tokens, rollout.reported_usage) == (None, None, None, {})
    assert (rollout.usage_source, rollout.trajectory_source) == (NONE, AGENT)
    assert rollout.n_steps == 2  # shown, as the agent's own account
    facts = facts_for(rollout)
    assert (facts.has_trajectory, facts.best_score, facts.curve) == (False, None, [])


@pytest.mark.django_db
def test_an_installed_agents_usage_is_reported_not_counted(tmp_path):
    make_task("demo_task")
    folder = runner_trial(tmp_path, Provenance(AGENT, AGENT, frozenset({"agent/sessions/log.jsonl"}), "claude-code"))
    rollout = Rollout.objects.get(pk=import_trial_dir(folder).rollout_id)
    assert (rollout.cost_usd, rollout.n_input_tokens, rollout.n_output_tokens) == (None, None, None)
    assert rollout.reported_usage == {"n_input_tokens": 1000, "n_cache_tokens": 100, "n_output_tokens": 50, "cost_usd": 0.25}
    assert rollout.usage_source == AGENT


@pytest.mark.django_db
def test_a_host_side_harness_reads_no_trajectory_file_its_sandbox_planted(tmp_path):
    """terminus-2 writes agent/trajectory*.json on the host: a continuation copied from /logs/agent is not its."""
    make_task("demo_task")
    folder = runner_trial(
        tmp_path, Provenance(HARNESS, HARNESS, frozenset({"agent/trajectory.cont-1.json"}), "terminus-2"),
        agent_result={"n_input_tokens": 1000, "n_output_tokens": 50},
    )
    write_json(folder / "agent" / "trajectory.cont-1.json", forged_trajectory())
    read = read_trial_folder(folder)
    assert any(w.startswith("agent/trajectory.cont-1.json: copied from the agent's sandbox") for w in read.warnings)
    rollout = Rollout.objects.get(pk=import_trial_dir(folder).rollout_id)
    assert (rollout.n_input_tokens, rollout.n_output_tokens) == (1000, 50)
    # No cost from Harbor: the host-written trajectory's totals would fill it, the planted file's never do.
    assert rollout.cost_usd is None and rollout.n_steps == 3
    assert (rollout.usage_source, rollout.trajectory_source) == (HARNESS, HARNESS)
    assert facts_for(rollout).has_trajectory


@pytest.mark.django_db
def test_a_folder_imported_from_elsewhere_counts_as_it_reports(tmp_path):
    make_task("demo_task")
    folder = make_trial(tmp_path / "trials")
    rollout = Rollout.objects.get(pk=import_trial_dir(folder).rollout_id)
    assert (rollout.usage_source, rollout.trajectory_source) == (TRIAL, TRIAL)
    assert (rollout.cost_usd, rollout.n_input_tokens) == (0.25, 1000)
    (folder / provenance.FILE_NAME).write_text('{"usage": "trial"}')
    rollout = Rollout.objects.get(pk=import_trial_dir(folder).rollout_id)
    assert rollout.usage_source == TRIAL and rollout.cost_usd == 0.25
    assert any(w.startswith(f"{provenance.FILE_NAME}: usage 'trial'") for w in rollout.validation_warnings)


@pytest.mark.django_db
def test_a_live_tick_keeps_an_agents_totals_apart(tmp_path):
    from trajectories.models import RolloutStatus
    from trajectories.tests.factories import make_rollout

    task = make_task("demo_task")
    folder = runner_trial(tmp_path, Provenance(AGENT, AGENT, None, "claude-code"), finished=False)
    config = json.loads((folder / "config.json").read_text())
    rollout = make_rollout(task=task, trial_name=config["trial_name"], status=RolloutStatus.RUNNING,
                           n_input_tokens=None, n_output_tokens=None, reward=None)
    live = live_import(folder, rollout.pk)
    assert not live.tick().error
    data = trajectory(3)
    data["final_metrics"] = {"total_prompt_tokens": 7777, "total_completion_tokens": 77}
    write_json(folder / "agent" / "trajectory.json", data)
    assert not live.tick().error
    rollout.refresh_from_db()
    assert (rollout.n_input_tokens, rollout.n_output_tokens, rollout.usage_source) == (None, None, AGENT)
    assert rollout.reported_usage["n_input_tokens"] == 7777


def test_set_usage_is_the_one_writer_of_a_rollouts_counted_usage():
    """Only ingest.set_usage (through trajectories.provenance.split_usage) assigns them on a rollout: a second writer
    could fill them from a file the agent wrote. (generate_synthetic makes rows of made-up data; it is not a trial.)"""
    counted = {"n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd"}
    allowed = {("trajectories/storing/ingest.py", "set_usage")}
    writers = set()
    root = Path(settings.BASE_DIR)
    for app in ("trajectories", "evaluations", "agents", "tasks", "autolab_site"):
        for path in (root / app).rglob("*.py"):
            relative = path.relative_to(root).as_posix()
            if "/tests/" in relative or "/migrations/" in relative or relative.endswith("generate_synthetic.py"):
                continue
            tree = ast.parse(path.read_text())
            for function in [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]:
                for node in ast.walk(function):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                    for target in targets:
                        if (isinstance(target, ast.Attribute) and target.attr in counted
                                and isinstance(target.value, ast.Name) and target.value.id == "rollout"):
                            writers.add((relative, function.name))
    assert writers == allowed


@pytest.mark.django_db
def test_the_rollout_page_says_where_usage_and_steps_come_from(tmp_path, client):
    make_task("demo_task")
    folder = runner_trial(tmp_path, Provenance(AGENT, AGENT, frozenset(), "claude-code"))
    rollout = Rollout.objects.get(pk=import_trial_dir(folder).rollout_id)
    html = unescape(client.get(f"/rollouts/{rollout.pk}/").content.decode())
    usage = html.split('id="usage-source"', 1)[1].split("</dd>", 1)[0]
    assert provenance.USAGE_LABELS[AGENT] in usage and "1000 in / 50 out, $0.25" in usage and "counted nowhere" in usage
    steps = html.split('id="trajectory-source"', 1)[1].split("</dd>", 1)[0]
    assert "the agent's own account" in steps
    assert "what the agent saw" in html.split('id="curve-source"', 1)[1][:400]

    folder = make_trial(tmp_path / "elsewhere", "lib__demo_task__other12")
    other = Rollout.objects.get(pk=import_trial_dir(folder).rollout_id)
    html = unescape(client.get(f"/rollouts/{other.pk}/").content.decode())
    assert provenance.USAGE_LABELS[TRIAL] in html.split('id="usage-source"', 1)[1].split("</dd>", 1)[0]
    assert "own account" not in html.split('id="trajectory-source"', 1)[1].split("</dd>", 1)[0]
