"""The real AutoLab v1.1 CPU tasks through our runner and through Harbor's own `harbor run`, side by side.

    AUTOLAB_IMAGE_MIRRORS=scripts/standins/mirrors.txt \\
        .venv/bin/python benchmarks/real_tasks_bench.py [--tasks a,b] [--engines podman,docker]
                                                         [--pairs 2] [--agents oracle,nop] [--json]

Every task of ../shared/autolab-v1.1/tasks with `gpus = 0` is listed. One
this worker cannot build is printed with the reason, per engine
(`tasks.worker_images.environment_problems` under the worker's mirror map:
AUTOLAB_IMAGE_MIRRORS, else scripts/standins/mirrors.txt when present, else
the stand-ins' own pairs). Each one it can build runs, per engine and agent:

- ours: `manage.py evaluate --model A --harness A --tasks T --k 1 --backend E
  --sync` on a scratch site (SQLite in a temporary folder, the real tasks
  imported with import_tasks into a version that seals grading: the
  verifier in a fresh container of its own, the agent's workspace carried);
- Harbor's: `harbor run -p COPY -a A -e ...` on a copy of the task folder
  in which only the Dockerfile's FROM is the stand-in (Harbor knows no
  mirror map) and, when the task does not set it, `[verifier]
  environment_mode = "separate"` with the same `[[artifacts]]` our sealing
  carries (both said in the output). Harbor's Podman and Docker
  environments need two offline changes, made in a subclass here and
  nothing else: no egress sidecar can be pulled, so a task without internet
  gets Harbor's own `docker-compose-no-network.yaml`; and on a host with
  compose v1 only (Debian's docker-compose), Harbor's Docker environment
  uses compose v1's dialect (`exec -T`, no SELinux label on binds, the
  switches Harbor's ContainerRuntime has for it). `--no-delete` keeps
  Harbor's image between trials, as our runner keeps its own. Offline,
  Harbor runs with HARBOR_TELEMETRY=0 and LITELLM_LOCAL_MODEL_COST_MAP=True
  (our settings set the latter too): each would otherwise wait out a
  network timeout per process.

Each (task, engine) starts with one untimed pair (ours, then Harbor's) of
the first agent: each side builds its image there and reuses it after
(ours by its named image, Harbor's by the engine's layer cache). Then, per
agent, --pairs timed pairs in turn (ours, Harbor's, ours, Harbor's ...):
the machine's drift touches both alike.

Printed per task, engine and agent: both sides' rewards (every run, the
warm-up's included), the task's reference ([optimization.reference]) and
the metric the verifier reported, whether the rewards agree, and the
median wall time per trial of each side with the ratio ours / Harbor's.
Wall time is the whole process (`evaluate --sync` with its preflight,
the campaign and the final import; `harbor run` with its job), one trial
each; the trial's own span (result.json's started_at to finished_at) and
its phases follow, for where the time goes.

A deterministic verifier's reward must equal Harbor's. A reward that
varies from run to run (a timed task, a verifier drawing a random seed)
agrees when the medians of the two sides differ by no more than the larger
within-side spread (max - min) of that verifier's rewards: its own noise
as this run measured it. The target is ours within 1.3x Harbor's; nothing
is asserted.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED_TASKS = Path(os.environ.get("AUTOLAB_SHARED_DIR", ROOT.parent / "shared")) / "autolab-v1.1" / "tasks"
MIRRORS_FILE = ROOT / "scripts" / "standins" / "mirrors.txt"
# The stand-ins' pairs (scripts/standins/mirrors.txt) for a checkout without that file.
DEFAULT_MIRRORS = ("ubuntu:22.04=localhost/autolab-standin-ubuntu:bookworm,"
                   "python:3.*-slim=localhost/autolab-standin-python:bookworm")
VERSION = "real-bench"
TARGET_RATIO = 1.3
HARBOR_ENVIRONMENTS = {"podman": "benchmarks.real_tasks_bench:HarborPodman",
                       "docker": "benchmarks.real_tasks_bench:HarborDocker"}
AGENT_NAMES = {"oracle": "reference solution (oracle)", "nop": "no-op baseline (nop)"}


# -- Harbor's own environments, offline ---------------------------------------------------


@functools.cache
def _harbor_environment_classes() -> dict[str, type]:
    """Harbor's Podman and Docker environments with the two offline changes the module docstring names."""
    from harbor.environments.docker.docker import DockerEnvironment
    from harbor.environments.docker.runtime import DOCKER_RUNTIME, ContainerRuntime
    from harbor.environments.podman import PodmanEnvironment
    from harbor.models.task.config import NetworkMode

    no_network = Path(DockerEnvironment._DOCKER_COMPOSE_BUILD_PATH).parent / "docker-compose-no-network.yaml"

    class NoNetwork:
        """`network_mode: none` from Harbor's own compose file, where Harbor would start its egress sidecar."""

        @property
        def capabilities(self):
            return super().capabilities.model_copy(update={"disable_internet": True})  # type: ignore[misc]

        @property
        def _docker_compose_paths(self) -> list[Path]:
            paths = list(super()._docker_compose_paths)  # type: ignore[misc]
            if self.network_policy.network_mode == NetworkMode.NO_NETWORK:  # type: ignore[attr-defined]
                paths.append(no_network)
            return paths

        async def _apply_network_policy(self, policy) -> None:
            # The container has no network from its start; no phase of these tasks asks for another.
            if policy.network_mode not in (NetworkMode.PUBLIC, NetworkMode.NO_NETWORK):
                await super()._apply_network_policy(policy)  # type: ignore[misc]

    class HarborPodman(NoNetwork, PodmanEnvironment):
        pass

    class HarborDocker(NoNetwork, DockerEnvironment):
        @classmethod
        @functools.cache
        def runtime(cls) -> ContainerRuntime:
            if _compose_v2():
                return DOCKER_RUNTIME
            return ContainerRuntime(engine=("docker",), compose=(shutil.which("docker-compose") or "docker-compose",),
                                    supports_compose_wait=False, supports_compose_cp=False,
                                    supports_compose_project_directory=True)

        def _write_mounts_compose_file(self) -> Path:
            if not _compose_v2():  # compose v1 refuses `bind: {selinux: z}`
                self._host_mounts = [{k: v for k, v in m.items() if k != "bind"} for m in self._host_mounts]
            return super()._write_mounts_compose_file()

        async def _run_docker_compose_command(self, command: list[str], *args, **kwargs):
            if command[:1] == ["exec"] and "-T" not in command and not _compose_v2():
                command = ["exec", "-T", *command[1:]]  # compose v1 asks for a TTY otherwise
            return await super()._run_docker_compose_command(command, *args, **kwargs)

    return {"HarborPodman": HarborPodman, "HarborDocker": HarborDocker}


@functools.cache
def _compose_v2() -> bool:
    try:
        return subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def __getattr__(name: str):
    # `harbor run -e benchmarks.real_tasks_bench:HarborPodman` imports them by name.
    classes = _harbor_environment_classes()
    if name in classes:
        return classes[name]
    raise AttributeError(name)


# -- the tasks -------------------------------------------------------------------------


@dataclass
class TaskInfo:
    name: str
    path: Path
    gpus: int
    reference: float | None
    metric: str
    direction: str
    problems: dict[str, list[str]] = field(default_factory=dict)  # engine -> why it cannot build here


def real_tasks(root: Path) -> list[TaskInfo]:
    found = []
    for path in sorted(p for p in root.iterdir() if (p / "task.toml").is_file()):
        config = tomllib.loads((path / "task.toml").read_text())
        optimization = config.get("optimization", {})
        reference = optimization.get("reference", {}).get("score")
        found.append(TaskInfo(
            name=path.name, path=path, gpus=int(config.get("environment", {}).get("gpus", 0) or 0),
            reference=float(reference) if isinstance(reference, (int, float)) else None,
            metric=str(optimization.get("metric", "")), direction=str(optimization.get("direction", "")),
        ))
    return found


def harbor_copy(task: Path, destination: Path) -> tuple[Path, list[str]]:
    """The task folder for Harbor: the FROM lines through the mirror map, and our sealed verifier's mode.

    Returns the copy and what was changed in it, for the output.
    """
    from tasks.images import MirrorMap, mirrored_dockerfile
    from tasks.sealing import seal_task_dir

    copy = destination / task.name
    shutil.copytree(task, copy)
    changes = []
    dockerfile = copy / "environment" / "Dockerfile"
    text, pairs = mirrored_dockerfile(dockerfile.read_text(), MirrorMap.from_environment())
    dockerfile.write_text(text)
    changes += [f"FROM {requested} -> {used}" for requested, used in pairs]
    toml = copy / "task.toml"
    source = toml.read_text()
    config = tomllib.loads(source)
    if "environment_mode" not in config.get("verifier", {}):
        carried = [a for a in seal_task_dir(task).carried if a not in _declared_artifacts(config)]
        source = set_separate_verifier(source, carried)
        toml.write_text(source)
        changes.append('[verifier] environment_mode = "separate"' +
                       (f", [[artifacts]] {', '.join(carried)} (as our sealing carries)" if carried else ""))
    return copy, changes


def _declared_artifacts(config: dict) -> list[str]:
    return [a if isinstance(a, str) else a.get("source", "") for a in config.get("artifacts", [])]


def set_separate_verifier(source: str, carried: list[str]) -> str:
    """task.toml's text with `environment_mode = "separate"` in [verifier] and an [[artifacts]] per carried path."""
    line = 'environment_mode = "separate"\n'
    header = re.search(r"^\[verifier\][ \t]*(#.*)?\n", source, re.MULTILINE)
    if header:
        source = source[:header.end()] + line + source[header.end():]
    else:
        source = source.rstrip("\n") + "\n\n[verifier]\n" + line
    for path in carried:
        source = source.rstrip("\n") + f'\n\n[[artifacts]]\nsource = "{path}"\n'
    return source


# -- one run of each side ----------------------------------------------------------------


@dataclass
class Run:
    side: str  # "ours" | "harbor"
    agent: str
    timed: bool
    wall: float  # the whole process, seconds
    reward: float | None = None
    metric: float | None = None
    error: str = ""  # the run gave no reward
    note: str = ""  # it did, but the side said something (Harbor's verifier refusing a field of reward.json)
    trial: dict[str, float] = field(default_factory=dict)  # phases of the trial, seconds
    process: dict[str, float] = field(default_factory=dict)  # the process around the trial, seconds


def _when(value) -> float | None:
    if not value:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def trial_phases(result: dict) -> dict[str, float]:
    """Harbor's timing phases of one trial's result.json, in seconds (what each side's trial spent where)."""
    marks = {
        "start": _when(result.get("started_at")),
        "env_end": _when((result.get("environment_setup") or {}).get("finished_at")),
        "agent_start": _when((result.get("agent_execution") or {}).get("started_at")),
        "agent_end": _when((result.get("agent_execution") or {}).get("finished_at")),
        "verifier_start": _when((result.get("verifier") or {}).get("started_at")),
        "verifier_end": _when((result.get("verifier") or {}).get("finished_at")),
        "end": _when(result.get("finished_at")),
    }
    spans = {
        "trial": ("start", "end"), "environment": ("start", "agent_start"), "agent": ("agent_start", "agent_end"),
        "agent->verifier": ("agent_end", "verifier_start"), "verifier": ("verifier_start", "verifier_end"),
        "after verifier": ("verifier_end", "end"),
    }
    return {name: marks[b] - marks[a] for name, (a, b) in spans.items() if marks[a] is not None and marks[b] is not None}


def metric_of(fields: dict, task: TaskInfo) -> float | None:
    for key in ("metric", task.metric):
        value = fields.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def run_ours(task: TaskInfo, engine: str, agent: str, env: dict[str, str], timed: bool) -> Run:
    from trajectories.models import Rollout

    started = time.time()
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "evaluate", "--model", agent, "--harness", agent, "--version",
         VERSION, "--tasks", task.name, "--k", "1", "--backend", engine, "--sync"],
        env=env, capture_output=True, text=True,
    )
    wall = time.perf_counter() - t0
    ended = started + wall
    rollout = (Rollout.objects.filter(task__name=task.name, task__version__name=VERSION, model__name=agent,
                                      campaign__backend=engine, campaign__created_at__gte=_aware(started))
               .order_by("-pk").first())
    run = Run("ours", agent, timed, wall)
    if rollout is None:
        run.error = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        run.error = run.error[0]
        return run
    run.reward = rollout.reward
    run.metric = metric_of(rollout.verifier_fields or {}, task)
    if rollout.status != "finished" or rollout.reward is None:
        last = rollout.events.order_by("-at", "-id").first()
        run.error = f"{rollout.status}: {last.detail if last else ''}"[:300]
    result = _our_result_json(rollout)
    run.trial = trial_phases(result) if result else {}
    events = list(rollout.events.order_by("at", "id").values_list("status", "at"))
    trial_start, trial_end = _when(result.get("started_at")), _when(result.get("finished_at"))
    if events and trial_start and trial_end:
        claimed = next((at.timestamp() for status, at in events if status not in ("queued",)), None)
        last = events[-1][1].timestamp()
        run.process = {
            "to trial start": trial_start - started,  # start-up, preflight, campaign, claim, trial set-up
            "claim->trial": trial_start - claimed if claimed else float("nan"),
            "after trial": last - trial_end,  # final import, the trial folder to storage
            "exit": ended - last,
        }
    return run


def _aware(timestamp: float):
    from datetime import timezone

    return datetime.fromtimestamp(timestamp - 1, tz=timezone.utc)


def _our_result_json(rollout) -> dict:
    """The trial's result.json, from the artifact storage the runner moved the trial folder to."""
    from trajectories.services import stored_json

    found = stored_json(rollout, "result.json")
    return found if isinstance(found, dict) else {}


def run_harbor(task: TaskInfo, copy: Path, engine: str, agent: str, env: dict[str, str], jobs: Path,
               timed: bool) -> Run:
    job = f"{task.name}-{engine}-{agent}-{uuid.uuid4().hex[:6]}"
    started = time.time()
    t0 = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "harbor"), "run", "-p", str(copy), "-a", agent,
         "-e", HARBOR_ENVIRONMENTS[engine], "-o", str(jobs), "--job-name", job, "-n", "1", "--no-delete", "-y", "-q"],
        env=env, capture_output=True, text=True, cwd=str(jobs),
    )
    wall = time.perf_counter() - t0
    run = Run("harbor", agent, timed, wall)
    results = [p for p in (jobs / job).glob("*/result.json")]
    if not results:
        tail = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()][-3:]
        run.error = f"exit code {done.returncode}: " + " | ".join(line.strip() for line in tail)[:300]
        return run
    result = json.loads(results[0].read_text())
    run.trial = trial_phases(result)
    fields = (result.get("verifier_result") or {}).get("rewards") or {}
    verifier_json = results[0].parent / "verifier" / "reward.json"
    if verifier_json.is_file():
        fields = {**json.loads(verifier_json.read_text()), **fields}
    reward = fields.get("reward")
    run.reward = float(reward) if isinstance(reward, (int, float)) else None
    run.metric = metric_of(fields, task)
    if result.get("exception_info"):
        info = result["exception_info"]
        said = f"{info.get('exception_type')}: {info.get('exception_message', '')}"[:300]
        if run.reward is not None and info.get("exception_type") == "VerifierOutputParseError":
            # Harbor 0.26's verifier refuses a reward.json with a non-numeric field ("speedup": null), which
            # AutoLab's verifiers write; the verifier's own reward is still in the file.
            run.note = "Harbor's verifier refused reward.json (a non-numeric field); reward read from the file"
        else:
            run.error = said
    trial_start, trial_end = _when(result.get("started_at")), _when(result.get("finished_at"))
    if trial_start and trial_end:
        run.process = {"to trial start": trial_start - started, "after trial": started + wall - trial_end}
    run.harbor_images = [results[0].parent.name.lower()]  # type: ignore[attr-defined]
    return run


# -- the comparison --------------------------------------------------------------------


@dataclass
class Row:
    task: str
    engine: str
    agent: str
    reference: float | None
    ours: list[float | None]
    harbor: list[float | None]
    metric_ours: list[float | None]
    metric_harbor: list[float | None]
    verdict: str
    ours_wall: float | None
    harbor_wall: float | None
    ours_trial: float | None
    harbor_trial: float | None
    errors: list[str]

    @property
    def ratio(self) -> float | None:
        return self.ours_wall / self.harbor_wall if self.ours_wall and self.harbor_wall else None

    @property
    def trial_ratio(self) -> float | None:
        return self.ours_trial / self.harbor_trial if self.ours_trial and self.harbor_trial else None


def reward_verdict(ours: list[float | None], harbor: list[float | None]) -> str:
    """Equal (a deterministic verifier), within its noise, or not: see the module docstring."""
    if not ours or not harbor or any(r is None for r in ours + harbor):
        return "missing"
    if len(set(ours + harbor)) == 1:
        return "equal"
    noise = max(max(ours) - min(ours), max(harbor) - min(harbor))
    difference = abs(statistics.median(ours) - statistics.median(harbor))
    if min(len(ours), len(harbor)) < 2:
        return f"differ by {difference:.4g} (one run on a side: the verifier's noise is not measured)"
    if noise == 0:
        return f"DIFFERENT (deterministic on each side, {difference:.4g} apart)"
    within = "within noise" if difference <= noise else "OUTSIDE noise"
    return f"{within} (medians {difference:.4g} apart, spread {noise:.4g})"


def median_of(runs: list[Run], key: str | None = None) -> float | None:
    values = [(r.wall if key is None else r.trial.get(key)) for r in runs if r.timed and r.trial and not r.error]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def make_row(task: TaskInfo, engine: str, agent: str, runs: list[Run]) -> Row:
    ours = [r for r in runs if r.side == "ours" and r.agent == agent]
    harbor = [r for r in runs if r.side == "harbor" and r.agent == agent]
    return Row(
        task=task.name, engine=engine, agent=agent, reference=task.reference,
        ours=[r.reward for r in ours], harbor=[r.reward for r in harbor],
        metric_ours=[r.metric for r in ours], metric_harbor=[r.metric for r in harbor],
        verdict=reward_verdict([r.reward for r in ours], [r.reward for r in harbor]),
        ours_wall=median_of(ours), harbor_wall=median_of(harbor),
        ours_trial=median_of(ours, "trial"), harbor_trial=median_of(harbor, "trial"),
        errors=[f"{r.side}: {r.error}" for r in ours + harbor if r.error]
        + sorted({f"{r.side}: {r.note}" for r in ours + harbor if r.note}),
    )


def _rewards(values: list) -> str:
    return " ".join("-" if v is None else f"{v:.4g}" for v in values) or "-"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def print_rows(rows: list[Row]) -> None:
    header = ("task", "engine", "agent", "ours reward", "Harbor reward", "reference", "metric ours / Harbor",
              "s/trial ours", "Harbor", "ratio", "trial ratio", "verdict")
    table = [header]
    for row in rows:
        metric = (f"{_rewards(sorted(set(m for m in row.metric_ours if m is not None)))} / "
                  f"{_rewards(sorted(set(m for m in row.metric_harbor if m is not None)))}")
        table.append((
            row.task, row.engine, row.agent, _rewards(row.ours), _rewards(row.harbor),
            "-" if row.reference is None else f"{row.reference:g}", metric, _seconds(row.ours_wall),
            _seconds(row.harbor_wall), "-" if row.ratio is None else f"{row.ratio:.2f}",
            "-" if row.trial_ratio is None else f"{row.trial_ratio:.2f}", row.verdict,
        ))
    widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
    print()
    for line, row in zip(table, [None, *rows]):
        print("  ".join(cell.rjust(width) if 7 <= i <= 10 else cell.ljust(width)
                        for i, (cell, width) in enumerate(zip(line, widths))) + "  " + line[-1])
        for note in (row.errors if row else []):
            print(f"{'':<6}{note}")


PHASES = ("environment", "agent", "agent->verifier", "verifier", "after verifier", "trial")


def print_phases(task: str, engine: str, runs: list[Run]) -> None:
    """Where a trial's time goes, each side (medians of the timed runs, every agent)."""
    print(f"  {task} on {engine}: median seconds per timed run")
    for side in ("ours", "harbor"):
        mine = [r for r in runs if r.side == side and r.timed and r.trial and not r.error]
        if not mine:
            continue
        trial = "  ".join(f"{name} {statistics.median(r.trial[name] for r in mine if name in r.trial):.1f}"
                          for name in PHASES if any(name in r.trial for r in mine))
        around = "  ".join(f"{name} {statistics.median(r.process[name] for r in mine if name in r.process):.1f}"
                           for name in ("to trial start", "claim->trial", "after trial", "exit")
                           if any(name in r.process for r in mine))
        print(f"    {side:<7}process {statistics.median(r.wall for r in mine):.1f} = [{around}]; trial: {trial}")


# -- set-up ----------------------------------------------------------------------------


def mirror_setting() -> str:
    value = os.environ.get("AUTOLAB_IMAGE_MIRRORS", "").strip()
    if value:
        return value
    return str(MIRRORS_FILE) if MIRRORS_FILE.is_file() else DEFAULT_MIRRORS


def scratch_site(work: Path, tasks: list[TaskInfo]) -> dict[str, str]:
    """A fresh site in `work` (SQLite, trials, artifacts), the tasks imported; the environment its commands run with."""
    env = dict(os.environ)
    env.update({
        "AUTOLAB_DATA_DIR": str(work / "data"), "DATABASE_URL": "", "DJANGO_SETTINGS_MODULE": "autolab_site.settings",
        "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
        # Harbor's agents use litellm, which otherwise tries to download its price list (our settings say the same).
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        # Harbor reports each job to its telemetry host when the process ends; offline that call waits out its timeout.
        "HARBOR_TELEMETRY": "0",
    })
    env.pop("DATABASE_URL")
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from evaluations.demo import demo_model_and_harness
    from tasks.services import import_tasks

    call_command("migrate", verbosity=0, interactive=False)
    for task in tasks:
        report = import_tasks(task.path, version=VERSION)
        if not report.ok:
            raise SystemExit(f"import_tasks {task.path}: {report.summary()}")
    for agent in AGENT_NAMES:
        demo_model_and_harness(agent, agent, AGENT_NAMES[agent])
    return env


def remove_harbor_images(engine: str, trial_names: list[str]) -> None:
    """Harbor's compose names each trial's image after its project: the images this run's Harbor trials made."""
    listed = subprocess.run([engine, "images", "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True,
                            text=True).stdout.split()
    prefixes = tuple(name.lower() for name in trial_names)
    for image in listed:
        if image.removeprefix("localhost/").startswith(prefixes):
            subprocess.run([engine, "rmi", "-f", image], capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: every CPU task that can run here)")
    parser.add_argument("--engines", default="podman,docker")
    parser.add_argument("--pairs", type=int, default=2, help="timed pairs (ours, Harbor's) per task, engine and agent")
    parser.add_argument("--agents", default="oracle,nop")
    parser.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (trials, jobs, database)")
    args = parser.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    agents = [a for a in args.agents.split(",") if a]
    if not SHARED_TASKS.is_dir():
        print(f"no real tasks here: {SHARED_TASKS} is missing", file=sys.stderr)
        return 2
    bad = [e for e in engines if e not in HARBOR_ENVIRONMENTS] + [a for a in agents if a not in AGENT_NAMES]
    if bad or args.pairs < 1:
        print(f"unknown engine or agent: {', '.join(bad)}" if bad else "--pairs must be 1 or more", file=sys.stderr)
        return 2
    os.environ["AUTOLAB_IMAGE_MIRRORS"] = mirror_setting()
    from tasks.images import ImageMirrorError, MirrorMap
    from tasks.worker_images import answering_engines, environment_problems

    try:
        mirrors = MirrorMap.from_environment()
    except ImageMirrorError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    everything = real_tasks(SHARED_TASKS)
    wanted = [t for t in args.tasks.split(",") if t]
    unknown = [t for t in wanted if t not in {task.name for task in everything}]
    if unknown:
        print(f"no real task named {', '.join(unknown)} in {SHARED_TASKS}", file=sys.stderr)
        return 2
    cpu = [task for task in everything if task.gpus == 0]
    answering = answering_engines()
    for task in cpu:
        for engine in engines:
            task.problems[engine] = (environment_problems(engine, task.path, mirrors) if engine in answering
                                     else [f"{engine} does not answer on this host"])
    selected = [t for t in cpu if (not wanted or t.name in wanted) and any(not t.problems[e] for e in engines)]
    say = (lambda *a, **k: None) if args.json else print
    say(f"AUTOLAB_IMAGE_MIRRORS={os.environ['AUTOLAB_IMAGE_MIRRORS']}")
    say(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    say(f"\n{len(cpu)} real CPU tasks in {SHARED_TASKS} ({len(everything) - len(cpu)} GPU tasks not listed):")
    for task in cpu:
        for engine in engines:
            state = ("runs here" + ("" if task in selected else ", not selected (--tasks)")) if not task.problems[engine] \
                else "cannot run here: " + "; ".join(task.problems[engine])
            say(f"  {task.name:<24}{engine:<8}{state}")

    work = Path(tempfile.mkdtemp(prefix="real-tasks-bench-"))
    # Stopped with SIGTERM, the run still removes its Harbor images and its scratch folder (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rows: list[Row] = []
    all_runs: dict[tuple[str, str], list[Run]] = {}
    changes: dict[str, list[str]] = {}
    harbor_trials: dict[str, list[str]] = {engine: [] for engine in engines}
    try:
        env = scratch_site(work, selected)
        jobs = work / "jobs"
        jobs.mkdir()
        for task in selected:
            copy, changes[task.name] = harbor_copy(task.path, work / "harbor-tasks")
            say(f"\n{task.name}: Harbor's copy: {'; '.join(changes[task.name])}")
            for engine in engines:
                if task.problems[engine]:
                    continue
                runs: list[Run] = []

                def pair(agent: str, timed: bool) -> None:
                    for side in ("ours", "harbor"):
                        run = (run_ours(task, engine, agent, env, timed) if side == "ours"
                               else run_harbor(task, copy, engine, agent, env, jobs, timed))
                        harbor_trials[engine] += getattr(run, "harbor_images", [])
                        runs.append(run)
                        say(f"  {engine:<7}{agent:<7}{side:<7}{'timed' if timed else 'warm-up':<8}"
                            f"{run.wall:7.1f} s  reward {run.reward}  metric {run.metric}"
                            + (f"  error: {run.error}" if run.error else "") + (f"  ({run.note})" if run.note else ""), flush=True)

                pair(agents[0], timed=False)  # each side builds its image here, once
                for agent in agents:
                    for _ in range(args.pairs):
                        pair(agent, timed=True)
                all_runs[(task.name, engine)] = runs
                rows += [make_row(task, engine, agent, runs) for agent in agents]
    finally:
        for engine, names in harbor_trials.items():
            remove_harbor_images(engine, names)
        if args.keep:
            say(f"\nkept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if args.json:
        print(json.dumps({
            "mirrors": os.environ["AUTOLAB_IMAGE_MIRRORS"], "load_average_end": load, "target_ratio": TARGET_RATIO,
            "tasks": [{"name": t.name, "problems": t.problems, "selected": t in selected,
                       "harbor_copy_changes": changes.get(t.name, [])} for t in cpu],
            "rows": [{**asdict(row), "ratio": row.ratio, "trial_ratio": row.trial_ratio} for row in rows],
            "runs": {f"{task}/{engine}": [asdict(run) for run in runs] for (task, engine), runs in all_runs.items()},
        }, indent=2, default=str))
        return 0
    print_rows(rows)
    print(f"\nwall time: the whole process, one trial each (median of the timed runs); ratio = ours / Harbor's; "
          f"target {TARGET_RATIO}x. trial ratio: the trials' own spans (result.json).")
    over = [row for row in rows if row.ratio is not None and row.ratio > TARGET_RATIO]
    print(f"within {TARGET_RATIO}x: {sum(1 for r in rows if r.ratio is not None and r.ratio <= TARGET_RATIO)} of "
          f"{sum(1 for r in rows if r.ratio is not None)} rows" + (f"; over: {', '.join(f'{r.task}/{r.engine}/{r.agent} {r.ratio:.2f}x' for r in over)}" if over else ""))
    print("\nwhere the time goes (process = [start -> trial start, claim -> trial start, trial end -> last event, "
          "-> exit]; trial phases from result.json):")
    for (task, engine), runs in all_runs.items():
        print_phases(task, engine, runs)
    print(f"\nload average at the end: {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
