"""Small ORM factories for explorer tests (no importer needed).

They build the rows the importer and the analysis would store, with plain
defaults that any test can override by keyword.
"""
from __future__ import annotations

from datetime import timedelta
from itertools import count

from django.utils import timezone

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion, Task
from trajectories.models import Observation, Rollout, Step, ToolCall
from trajectories.search import query as search

_seq = count(1)


def make_version(name: str = "1.1") -> BenchmarkVersion:
    version, _ = BenchmarkVersion.objects.get_or_create(name=name)
    return version


def make_task(name: str | None = None, version: str = "1.1", **fields) -> Task:
    defaults = dict(
        category="system_optimization",
        metric="latency_ms",
        direction="lower",
        baseline_score=100.0,
        reference_score=20.0,
        budget_sec=7200,
    )
    defaults.update(fields)
    return Task.objects.create(version=make_version(version), name=name or f"task_{next(_seq)}", **defaults)


def make_model(name: str | None = None, **fields) -> AgentModel:
    return AgentModel.objects.create(name=name or f"model-{next(_seq)}", **fields)


def make_harness(name: str = "terminus-2", version: str = "2.0.0") -> Harness:
    harness, _ = Harness.objects.get_or_create(name=name, version=version)
    return harness


def make_rollout(task: Task | None = None, model: AgentModel | None = None, harness: Harness | None = None, **fields) -> Rollout:
    start = timezone.now() - timedelta(hours=3)
    defaults = dict(
        trial_name=f"trial__{next(_seq)}",
        reward=0.5,
        verifier_fields={"reward": 0.5},
        started_at=start,
        environment_setup_started_at=start,
        environment_setup_finished_at=start + timedelta(seconds=60),
        agent_setup_started_at=start + timedelta(seconds=60),
        agent_setup_finished_at=start + timedelta(seconds=90),
        agent_started_at=start + timedelta(seconds=90),
        agent_finished_at=start + timedelta(seconds=3690),
        verifier_started_at=start + timedelta(seconds=3700),
        verifier_finished_at=start + timedelta(seconds=3800),
        finished_at=start + timedelta(seconds=3800),
        n_input_tokens=1000,
        n_output_tokens=100,
        n_episodes=3,
    )
    defaults.update(fields)
    return Rollout.objects.create(
        task=task or make_task(),
        model=model or make_model(),
        harness=harness or make_harness(),
        **defaults,
    )


def add_step(
    rollout: Rollout,
    step_id: int,
    *,
    message: str = "",
    reasoning: str = "",
    source: str = "agent",
    elapsed_sec: float | None = None,
    commands: list[str] = (),
    outputs: list[str] = (),
    kinds: list[str] = (),
    **fields,
) -> Step:
    """A main-trajectory step with terminus-style tool calls and outputs."""
    if elapsed_sec is None:
        elapsed_sec = float(step_id * 10)
    step = Step.objects.create(
        rollout=rollout,
        position=step_id - 1,
        step_id=step_id,
        source=source,
        message=message,
        reasoning=reasoning,
        elapsed_sec=elapsed_sec,
        timestamp=(rollout.agent_started_at or timezone.now()) + timedelta(seconds=elapsed_sec),
        kinds=f" {' '.join(kinds)} " if kinds else "",
        **fields,
    )
    for i, keystrokes in enumerate(commands):
        ToolCall.objects.create(
            step=step,
            position=i,
            call_id=f"call_{step_id}_{i}",
            function_name="bash_command",
            arguments={"keystrokes": keystrokes, "duration": 1.0},
        )
    for i, content in enumerate(outputs):
        Observation.objects.create(step=step, position=i, content=content)
    search.rebuild_documents([rollout.pk])
    return step


def make_explored_rollout(**fields) -> Rollout:
    """A rollout with a user prompt, edits, three benchmark calls and a submit.

    Metric is lower-is-better latency; calls at steps 3, 5 and 7 measure
    90, 60 and 70 ms, so the best so far is 90, 60, 60.
    """
    rollout = make_rollout(n_steps=8, n_benchmark_calls=3, n_edits=1, last_improvement_sec=50.0, **fields)
    task = rollout.task
    add_step(rollout, 1, source="user", message="Make the join faster.", elapsed_sec=0.0)
    add_step(rollout, 2, message="Look around first.", commands=["ls /app\n"], outputs=["main.c  Makefile\n"], kinds=["inspect"])
    readings = {3: 90.0, 5: 60.0, 7: 70.0}
    curve = []
    best = None
    for step_id in range(3, 9):
        if step_id in readings:
            value = readings[step_id]
            improved = best is None or value < best
            best = value if improved else best
            score = (task.baseline_score - value) / (task.baseline_score - task.reference_score)
            best_score = (task.baseline_score - best) / (task.baseline_score - task.reference_score)
            add_step(
                rollout,
                step_id,
                message=f"Benchmark run {step_id}.",
                commands=["python3 /app/evaluate_local.py\n"],
                outputs=[f"latency_ms: {value}\n"],
                kinds=["benchmark"],
                metric_value=value,
                metric_unit="ms",
                metric_score=score,
                metric_status="parsed",
            )
            curve.append(
                dict(step_id=step_id, t=step_id * 10.0, metric=value, score=score, best_metric=best, best_score=best_score, improved=improved)
            )
        elif step_id == 4:
            add_step(
                rollout,
                4,
                message="Switch to a hash table.",
                commands=["cat > /app/main.c <<'EOF'\nint main(){}\nEOF\n"],
                outputs=[""],
                kinds=["edit"],
                diff="--- a/app/main.c\n+++ b/app/main.c\n@@ -1,2 +1,2 @@\n-int main(){return 1;}\n+int main(){}\n",
            )
        elif step_id == 8:
            add_step(rollout, 8, message="Done.", commands=[], outputs=[], kinds=["submit"])
        else:
            add_step(rollout, step_id, message="Wait for the build.", commands=["make\n"], outputs=["cc -O2 main.c\n"], kinds=["build"])
    rollout.curve = curve
    rollout.best_metric = best
    rollout.save(update_fields=["curve", "best_metric"])
    return rollout


def make_anchored_pair() -> tuple[Rollout, Rollout]:
    """Two rollouts of one task: a scored with task.toml's anchors (100 -> 20), b with its verifier's reference (30)."""
    from tasks.anchors import Anchors

    a = make_explored_rollout()
    b = make_explored_rollout(task=a.task)
    b.anchors = Anchors(baseline=100.0, reference=30.0, status="reproduced", baseline_sources=("task.toml",),
                        reference_sources=("reward.json reference_score",), task_baseline=100.0, task_reference=20.0).as_dict()
    b.save(update_fields=["anchors"])
    return a, b


def import_shared_rollouts(tasks_dir, trials_dir) -> dict[str, Rollout]:
    """Import the real shared tasks and trials; rollouts keyed "opus" / "grok"."""
    from tasks.services import import_tasks
    from trajectories.services import import_path

    import_tasks(tasks_dir, version="1.1")
    report = import_path(trials_dir)
    assert report.ok, report.as_dict()
    rollouts = {}
    for rollout in Rollout.objects.select_related("model"):
        key = "opus" if "opus" in rollout.model.name else "grok" if "grok" in rollout.model.name else rollout.model.name
        rollouts[key] = rollout
    return rollouts
