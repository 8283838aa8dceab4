"""How much the bubblewrap sandbox costs: start, one exec, stop, and a whole nop trial.

    .venv/bin/python benchmarks/sandbox_bench.py [--n 50]

Needs root, bwrap, nsenter, setpriv, prlimit (see README, Evaluation
runner). Printed: median start, exec (`true`) and stop times of the
environment on the runner's tiny test task, the same exec run directly on
the host for comparison (ratio), and the wall time of a complete Harbor
`nop` trial. Targets: exec <= 30 ms, start <= 200 ms, nop trial <= 2 s.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")
TASK = ROOT / "evaluations" / "tests" / "tasks" / "tiny_sum"


def make_env(base: Path):
    from harbor.models.task.config import NetworkMode, NetworkPolicy
    from harbor.models.task.task import Task
    from harbor.models.trial.paths import TrialPaths

    from evaluations.sandbox.bubblewrap import BubblewrapEnvironment

    task = Task(task_dir=TASK)
    paths = TrialPaths(trial_dir=base / f"trial-{uuid.uuid4().hex[:6]}")
    paths.mkdir()
    return BubblewrapEnvironment(
        environment_dir=task.paths.environment_dir, environment_name="tiny", session_id=f"bench-{uuid.uuid4().hex[:8]}",
        trial_paths=paths, task_env_config=task.config.environment,
        network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK), sandbox_root=base / "sandboxes",
    )


async def measure(base: Path, n: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"start": [], "exec": [], "stop": []}
    for _ in range(max(n // 10, 3)):
        env = make_env(base)
        t0 = time.perf_counter()
        await env.start(force_build=False)
        times["start"].append(time.perf_counter() - t0)
        for _ in range(10):
            t0 = time.perf_counter()
            await env.exec("true")
            times["exec"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await env.stop(delete=True)
        times["stop"].append(time.perf_counter() - t0)
    return times


def nop_trial(base: Path) -> float:
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
    from harbor.trial.trial import Trial

    config = TrialConfig(
        task=TaskConfig(path=TASK), trials_dir=base / "trials", trial_name=f"bench__{uuid.uuid4().hex[:6]}",
        agent=AgentConfig(name="nop"),
        environment=EnvironmentConfig(
            import_path="evaluations.sandbox.bubblewrap:BubblewrapEnvironment",
            kwargs={"sandbox_root": str(base / "sandboxes")},
        ),
    )

    async def run():
        trial = await Trial.create(config)
        return await trial.run()

    t0 = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50, help="number of execs to time")
    args = parser.parse_args()
    import django

    django.setup()
    from evaluations.sandbox.bubblewrap import host_problems

    problems = host_problems()
    if problems:
        print("sandbox unavailable:", "; ".join(problems))
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        times = asyncio.run(measure(base, args.n))
        host = []
        for _ in range(args.n):
            t0 = time.perf_counter()
            subprocess.run(["/bin/bash", "-c", "true"], check=True)
            host.append(time.perf_counter() - t0)
        trial = nop_trial(base)
    exec_ms = statistics.median(times["exec"]) * 1000
    host_ms = statistics.median(host) * 1000
    print(f"start  median {statistics.median(times['start']) * 1000:7.1f} ms  (target <= 200)")
    print(f"exec   median {exec_ms:7.1f} ms  (target <= 30); bash on the host {host_ms:.1f} ms, ratio {exec_ms / host_ms:.1f}")
    print(f"stop   median {statistics.median(times['stop']) * 1000:7.1f} ms")
    print(f"nop trial     {trial * 1000:7.1f} ms  (target <= 2000)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
