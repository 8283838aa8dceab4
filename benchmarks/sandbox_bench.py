"""What a sandbox costs a trial, side by side: podman, bubblewrap, and no sandbox at all.

    .venv/bin/python benchmarks/sandbox_bench.py [--n 3]

One Harbor `nop` trial of the runner's tiny test task on each backend,
`--n` times, all in one run (this machine's speed drifts):

- nothing: Harbor's calls on a no-op environment (every exec succeeds at
  once): what Harbor itself costs, the floor;
- bubblewrap: our host sandbox;
- podman, first build: the task's image removed first, so the trial builds it;
- podman, cached: the image is there (a second trial of the same task).

Printed per backend: the median overhead from the trial's start to the
agent's start, and from the verifier's end to the trial's end (the
sandbox stopped and removed), each beside the no-op floor as a ratio.
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
NOOP_IMPORT_PATH = "benchmarks.sandbox_bench:NoopEnvironment"


def noop_environment_class():
    from harbor.environments.base import BaseEnvironment, ExecResult
    from harbor.environments.capabilities import EnvironmentCapabilities

    class NoopEnvironment(BaseEnvironment):
        """Succeeds at everything at once; its verifier "writes" reward 0."""

        @staticmethod
        def type() -> str:
            return "noop"

        @property
        def capabilities(self) -> EnvironmentCapabilities:
            return EnvironmentCapabilities(disable_internet=True)

        def _validate_definition(self) -> None:
            pass

        async def start(self, force_build: bool) -> None:
            pass

        async def stop(self, delete: bool) -> None:
            pass

        async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None) -> ExecResult:
            return ExecResult(stdout="", stderr="", return_code=0)

        async def upload_file(self, source_path, target_path) -> None:
            pass

        async def upload_dir(self, source_dir, target_dir) -> None:
            pass

        async def download_file(self, source_path, target_path) -> None:
            Path(target_path).parent.mkdir(parents=True, exist_ok=True)
            Path(target_path).write_text("")

        async def download_dir(self, source_dir, target_dir) -> None:
            Path(target_dir).mkdir(parents=True, exist_ok=True)
            if str(source_dir).rstrip("/").endswith("verifier"):
                (Path(target_dir) / "reward.json").write_text('{"reward": 0.0}')

    return NoopEnvironment


def __getattr__(name: str):
    # Harbor imports the no-op environment by its import path.
    if name == "NoopEnvironment":
        return noop_environment_class()
    raise AttributeError(name)


def environment(backend: str, sandbox_root: Path):
    from harbor.models.trial.config import EnvironmentConfig

    if backend == "nothing":
        return EnvironmentConfig(import_path=NOOP_IMPORT_PATH)
    from evaluations.sandbox.backends import get

    return get(backend).environment(sandbox_root)


def one_trial(base: Path, backend: str) -> dict[str, float]:
    """(start -> agent start, verifier end -> trial end) in seconds, for one nop trial."""
    from harbor.models.trial.config import AgentConfig, TaskConfig, TrialConfig, VerifierConfig
    from harbor.trial.hooks import TrialEvent
    from harbor.trial.trial import Trial

    config = TrialConfig(
        task=TaskConfig(path=TASK), trials_dir=base / "trials", trial_name=f"bench__{uuid.uuid4().hex[:6]}",
        agent=AgentConfig(name="nop"),
        environment=environment(backend, base / "sandboxes"),
        verifier=VerifierConfig(import_path="evaluations.verifier:TolerantVerifier"),
    )
    marks: dict[str, float] = {}

    async def run():
        trial = await Trial.create(config)

        def mark(name: str):
            async def hook(event) -> None:
                marks[name] = time.perf_counter()

            return hook

        trial.add_hook(TrialEvent.AGENT_START, mark("agent_start"))
        marks["start"] = time.perf_counter()
        result = await trial.run()
        marks["end"] = time.perf_counter()
        return result

    result = asyncio.run(run())
    verifier_end = result.verifier.finished_at.timestamp() if result.verifier else None
    ended = result.finished_at.timestamp()
    return {
        "to_agent": marks["agent_start"] - marks["start"],
        # Harbor records the verifier's end and the trial's end on the same clock.
        "after_verifier": (ended - verifier_end) if verifier_end else float("nan"),
        "total": marks["end"] - marks["start"],
    }


def remove_task_images() -> None:
    listed = subprocess.run(["podman", "images", "--format", "{{.Repository}}:{{.Tag}}"],
                            capture_output=True, text=True).stdout.split()
    for image in listed:
        if image.startswith("localhost/hb__"):
            subprocess.run(["podman", "rmi", "-f", image], capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=3, help="trials per backend")
    args = parser.parse_args()
    import django

    django.setup()
    from evaluations.sandbox.backends import get

    runs: dict[str, list[dict[str, float]]] = {"nothing": [], "bubblewrap": [], "podman, first build": [],
                                                "podman, cached": []}
    unavailable = {name: get(name).host_problems() for name in ("bubblewrap", "podman")}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for _ in range(args.n):
            runs["nothing"].append(one_trial(base, "nothing"))
            if not unavailable["bubblewrap"]:
                runs["bubblewrap"].append(one_trial(base, "bubblewrap"))
            if not unavailable["podman"]:
                remove_task_images()
                runs["podman, first build"].append(one_trial(base, "podman"))
                runs["podman, cached"].append(one_trial(base, "podman"))
    floor = {key: statistics.median(run[key] for run in runs["nothing"]) for key in ("to_agent", "after_verifier")}
    print(f"nop trial of tiny_sum, {args.n} per backend; medians (ratio to no sandbox)")
    print(f"{'backend':<22}{'start -> agent':>18}{'verifier -> end':>22}{'whole trial':>14}")
    for name, results in runs.items():
        if not results:
            problems = unavailable["podman" if name.startswith("podman") else name]
            print(f"{name:<22}  unavailable: {'; '.join(problems)}")
            continue
        to_agent = statistics.median(r["to_agent"] for r in results)
        after = statistics.median(r["after_verifier"] for r in results)
        total = statistics.median(r["total"] for r in results)
        print(f"{name:<22}{to_agent * 1000:>10.0f} ms {to_agent / floor['to_agent']:>5.0f}x"
              f"{after * 1000:>12.0f} ms {after / max(floor['after_verifier'], 1e-4):>6.0f}x{total:>12.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
