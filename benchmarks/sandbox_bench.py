"""What a sandbox costs a trial, and what sealed grading adds, side by side on every backend.

    .venv/bin/python benchmarks/sandbox_bench.py [--n 3]

One Harbor `nop` trial of the runner's tiny test task per row, `--n` times,
all in one run (this machine's speed drifts):

- nothing: Harbor's calls on a no-op environment (every exec succeeds at
  once): what Harbor itself costs, the floor;
- bubblewrap, podman, docker: each shared (the verifier in the agent's
  sandbox) and sealed (`SealedTrial`: a second environment for the
  verifier), the containers' first build (the task's image removed first)
  and cached (a second trial of the same task).

Printed per row: the median overhead from the trial's start to the agent's
start beside the no-op floor, the verifier's phase (for sealed trials, its
environment's start and stop included), and the whole trial; and per
backend what sealing adds to a trial, in seconds and as a ratio.
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


def one_trial(base: Path, backend: str, *, sealed: bool = False) -> dict[str, float]:
    """(start -> agent start, verifier phase, whole trial) in seconds, for one nop trial."""
    from harbor.models.trial.config import AgentConfig, TaskConfig, TrialConfig, VerifierConfig
    from harbor.trial.hooks import TrialEvent
    from harbor.trial.trial import Trial

    from evaluations.sandbox.sealing import SealedTrial

    config = TrialConfig(
        task=TaskConfig(path=TASK), trials_dir=base / "trials", trial_name=f"bench__{uuid.uuid4().hex[:6]}",
        agent=AgentConfig(name="nop"),
        environment=environment(backend, base / "sandboxes"),
        verifier=VerifierConfig(import_path="evaluations.running.verifier:TolerantVerifier"),
    )
    marks: dict[str, float] = {}

    async def run():
        trial = await (SealedTrial if sealed else Trial).create(config)

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
    if result.exception_info is not None:
        raise RuntimeError(f"{backend}: {result.exception_info.exception_type}: {result.exception_info.exception_message}")
    verifier = result.verifier
    return {
        "to_agent": marks["agent_start"] - marks["start"],
        "verifier": (verifier.finished_at - verifier.started_at).total_seconds() if verifier else float("nan"),
        "total": marks["end"] - marks["start"],
    }


def remove_task_images(engine: str) -> None:
    listed = subprocess.run([engine, "images", "--format", "{{.Repository}}:{{.Tag}}"],
                            capture_output=True, text=True).stdout.split()
    for image in listed:
        if image.startswith(("localhost/hb__", "hb__")):
            subprocess.run([engine, "rmi", "-f", image], capture_output=True)


def rows_for(backend: str) -> list[tuple[str, str, bool, bool]]:
    """(row name, backend, sealed, first build) for one backend."""
    if backend == "bubblewrap":
        return [("bubblewrap, shared", backend, False, False), ("bubblewrap, sealed", backend, True, False)]
    return [
        (f"{backend}, shared, first build", backend, False, True), (f"{backend}, sealed, first build", backend, True, True),
        (f"{backend}, shared, cached", backend, False, False), (f"{backend}, sealed, cached", backend, True, False),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=3, help="trials per row")
    args = parser.parse_args()
    import django

    django.setup()
    from evaluations.sandbox.backends import get

    backends = ("bubblewrap", "podman", "docker")
    unavailable = {name: get(name).host_problems() for name in backends}
    rows = [("nothing", "nothing", False, False)]
    rows += [row for name in backends if not unavailable[name] for row in rows_for(name)]
    runs: dict[str, list[dict[str, float]]] = {row[0]: [] for row in rows}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for _ in range(args.n):
            for name, backend, sealed, first_build in rows:  # interleaved: drift touches every row alike
                if first_build:
                    remove_task_images(backend)
                runs[name].append(one_trial(base, backend, sealed=sealed))
    median = {name: {key: statistics.median(r[key] for r in results) for key in results[0]}
              for name, results in runs.items()}
    floor = median["nothing"]["to_agent"]
    print(f"nop trial of tiny_sum, {args.n} per row; medians (start -> agent as a ratio to no sandbox)")
    print(f"{'row':<34}{'start -> agent':>18}{'verifier phase':>16}{'whole trial':>13}")
    for name, figures in median.items():
        print(f"{name:<34}{figures['to_agent'] * 1000:>9.0f} ms {figures['to_agent'] / floor:>5.0f}x"
              f"{figures['verifier']:>14.2f} s{figures['total']:>11.2f} s")
    for name in backends:
        if unavailable[name]:
            print(f"{name:<34}unavailable: {'; '.join(unavailable[name])}")
    print("\nwhat sealed grading adds to a trial (a second environment for the verifier):")
    for name in backends:
        for suffix in ("", ", first build", ", cached"):
            shared, sealed = f"{name}, shared{suffix}", f"{name}, sealed{suffix}"
            if shared in median and sealed in median:
                added = median[sealed]["total"] - median[shared]["total"]
                print(f"  {name + suffix:<30}+{added:6.2f} s per trial ({median[sealed]['total'] / median[shared]['total']:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
