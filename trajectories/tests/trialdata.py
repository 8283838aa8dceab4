"""Small Harbor trial folders written on the fly for import tests."""
from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

START = datetime(2026, 1, 2, 10, 0, 0, tzinfo=timezone.utc)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def trajectory(n_agent_steps: int = 2, *, model: str = "openai/test-model", start: datetime = START) -> dict[str, Any]:
    """An ATIF-v1.6 terminus-2 style trajectory: a prompt, then agent steps."""
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "timestamp": (start + timedelta(seconds=1)).isoformat(), "source": "user", "message": "Make it fast."}
    ]
    for episode in range(n_agent_steps):
        call_id = f"call_{episode}_1"
        steps.append(
            {
                "step_id": episode + 2,
                "timestamp": (start + timedelta(seconds=60 * (episode + 1))).isoformat(),
                "source": "agent",
                "model_name": model,
                "message": f"Analysis: step {episode}",
                "reasoning_content": f"thinking {episode}",
                "tool_calls": [
                    {
                        "tool_call_id": call_id,
                        "function_name": "bash_command",
                        "arguments": {"keystrokes": f"python3 bench.py --run {episode}\n", "duration": 1.0},
                    }
                ],
                "observation": {"results": [{"source_call_id": call_id, "content": f"time: {10 - episode}.0 ms"}]},
                "metrics": {"prompt_tokens": 100 + episode, "completion_tokens": 10 + episode, "cached_tokens": episode},
            }
        )
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": "session-1",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": model, "extra": {"parser": "json"}},
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": sum(s.get("metrics", {}).get("prompt_tokens", 0) for s in steps),
            "total_completion_tokens": sum(s.get("metrics", {}).get("completion_tokens", 0) for s in steps),
            "total_cached_tokens": sum(s.get("metrics", {}).get("cached_tokens", 0) for s in steps),
        },
    }


def make_trial(
    root: Path,
    trial_name: str = "lib__demo_task__abc1234",
    *,
    task_name: str = "lib__demo_task",
    model: str = "openai/test-model",
    n_agent_steps: int = 2,
    finished: bool = True,
    reward: dict[str, Any] | None = None,
    exception: dict[str, Any] | None = None,
    start: datetime = START,
    trajectory_data: dict[str, Any] | None = None,
) -> Path:
    """Write a trial folder under `root` and return its path."""
    folder = Path(root) / trial_name
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "agent").mkdir(parents=True)
    config = {
        "task": {"path": f"/tasks/{task_name}"},
        "trial_name": trial_name,
        "trials_dir": "jobs/x",
        "agent": {"name": "terminus-2", "import_path": None, "model_name": model, "kwargs": {}, "env": {}},
        "job_id": "job-1",
    }
    write_json(folder / "config.json", config)
    data = trajectory_data if trajectory_data is not None else trajectory(n_agent_steps, model=model, start=start)
    write_json(folder / "agent" / "trajectory.json", data)
    if not finished:
        return folder
    reward = reward if reward is not None else {"reward": 0.5, "metric": 12.5}
    (folder / "verifier").mkdir()
    write_json(folder / "verifier" / "reward.json", reward)
    (folder / "verifier" / "test-stdout.txt").write_text("verifier says hello\n")
    agent_start = start
    result = {
        "id": "11111111-2222-3333-4444-555555555555",
        "task_name": task_name,
        "trial_name": trial_name,
        "trial_uri": f"file:///jobs/x/{trial_name}",
        "task_id": {"path": f"/tasks/{task_name}"},
        "task_checksum": "abc",
        "config": config,
        "agent_info": {"name": "terminus-2", "version": "2.0.0", "model_info": {"name": model.split("/")[-1], "provider": "openai"}},
        "agent_result": {
            "n_input_tokens": 1000,
            "n_cache_tokens": 100,
            "n_output_tokens": 50,
            "cost_usd": 0.25,
            "metadata": {"n_episodes": n_agent_steps, "api_request_times_msec": [1000.0, 2000.5]},
        },
        "verifier_result": {"rewards": {k: v for k, v in reward.items() if isinstance(v, (int, float))}},
        "exception_info": exception,
        "started_at": iso(start - timedelta(minutes=5)),
        "finished_at": iso(start + timedelta(hours=1, minutes=10)),
        "environment_setup": {"started_at": iso(start - timedelta(minutes=5)), "finished_at": iso(start - timedelta(minutes=1))},
        "agent_setup": {"started_at": iso(start - timedelta(minutes=1)), "finished_at": iso(agent_start)},
        "agent_execution": {"started_at": iso(agent_start), "finished_at": iso(start + timedelta(hours=1))},
        "verifier": {"started_at": iso(start + timedelta(hours=1)), "finished_at": iso(start + timedelta(hours=1, minutes=9))},
    }
    write_json(folder / "result.json", result)
    return folder


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def make_task(name: str = "demo_task", version: str = "1.1"):
    """A registered task, made with the ORM so tests need no task folders."""
    from tasks.models import BenchmarkVersion, Task

    benchmark_version, _ = BenchmarkVersion.objects.get_or_create(name=version)
    task, _ = Task.objects.get_or_create(
        version=benchmark_version,
        name=name,
        defaults={"category": "system_optimization", "metric": "time_ms", "direction": "lower", "budget_sec": 7200},
    )
    return task
