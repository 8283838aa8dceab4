"""How fast trajectory analysis runs on the real opus trial.

    .venv/bin/python benchmarks/analysis_bench.py [--repeat 50]

Parses ../shared/autolab/trials/opus4.6__.../agent/trajectory.json once with
trajectories.reading.atif, then times `analyse_rollout` on its 139 steps. Printed:
the median and worst time per rollout and steps per second. Budget: about
5 ms median per rollout: analysis runs inside every import, and the whole
import should stay within 5x of Harbor's bare JSON parse of the trajectory.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("AUTOLAB_SHARED_DIR", ROOT.parent / "shared"))
TRIAL = SHARED / "autolab" / "trials" / "opus4.6__2026-04-26__2TyoFTQ"
TASK = SHARED / "autolab" / "tasks" / "flux2_klein_lora"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    if not TRIAL.is_dir() or not TASK.is_dir():
        print(f"the real trial or task is missing under {SHARED}", file=sys.stderr)
        return 1
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")
    import django

    django.setup()
    from tasks.models import BenchmarkVersion, Task
    from tasks.services import task_spec
    from tasks.taskdir import parse_task_dir
    from trajectories.analysis.rollout import analyse_rollout
    from trajectories.reading.atif import parse_trajectory_file

    # The task as the importer's analysis sees it: read by the project's own
    # reader, described by its own task_spec (an unsaved row; no database).
    spec = task_spec(Task(version=BenchmarkVersion(name="bench"), **parse_task_dir(TASK).model_fields()))
    steps = parse_trajectory_file(TRIAL / "agent" / "trajectory.json").steps
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = analyse_rollout(steps, spec, None)
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    print(f"steps per rollout:      {len(steps)}")
    print(f"benchmark calls found:  {result.n_benchmark_calls}, edits: {result.n_edits}, best: {result.best_metric}")
    print(f"median per rollout:     {median * 1000:.1f} ms (budget about 5 ms)")
    print(f"worst per rollout:      {max(times) * 1000:.1f} ms")
    print(f"steps per second:       {len(steps) / median:,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
