"""The demo (`make demo`, load_demo): oracle, nop and the scripted stub evaluated on the example tasks,
oracle and nop on real AutoLab v1.1 tasks where podman can build them, and AutoLab v1.1's published
figures as the release printed them."""
from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

from agents.models import AgentModel, Harness
from agents.services import ensure_harness
from tasks.models import BenchmarkVersion, Task
from tasks.real_offline import OFFLINE_REAL_TASKS, WHOLE_TASKS_FOLDER, RealTaskChoice, runnable_here, whole_task_dirs
from tasks.services import TaskImportReport, import_tasks
from tasks.taskdir import find_task_dirs

from evaluations.models import Campaign
from evaluations.results.published import ResultsImportError, import_results
from evaluations.running.campaigns import cancel, create_campaign
from evaluations.running.local_runs import run_campaign_sync
from evaluations.sandbox import backends


# AutoLab v1.1's main table, shipped as data with its citation (evaluations/results/data/README.md).
PUBLISHED_TABLE = Path(__file__).resolve().parent / "results" / "data" / "autolab-v1.1-main-table.csv"
PUBLISHED_VERSION = "1.1"

DEMO_HARNESSES = [
    # (harness name, model name, display name)
    ("oracle", "oracle", "reference solution (oracle)"),
    ("nop", "nop", "no-op baseline (nop)"),
    ("terminus-2", "scripted-stub", "scripted stub (not a model)"),
]
# The real tasks need no model server: their reference solution and their starting code.
REAL_DEMO_HARNESSES = DEMO_HARNESSES[:2]
# The engine the demo runs real tasks on: they build their own images (bubblewrap cannot).
REAL_ENGINE = "podman"


def shared_root() -> Path:
    """../shared beside the checkout, or $AUTOLAB_SHARED_DIR (as the tests read it)."""
    return Path(os.environ.get("AUTOLAB_SHARED_DIR") or Path(settings.BASE_DIR).parent / "shared")


def demo_backend() -> tuple[str, str]:
    """(backend, why) for the demo: podman when it works here, else bubblewrap; ("", why not) for neither."""
    podman = backends.get("podman").host_problems() or backends.get("podman").task_problems(examples_dir() / "count_primes")
    if not podman:
        return "podman", "podman is installed: the demo runs in containers"
    bubblewrap = backends.get("bubblewrap").host_problems()
    if not bubblewrap:
        return "bubblewrap", f"no podman ({'; '.join(podman)}): the demo runs in the bubblewrap sandbox"
    return "", f"no sandbox on this host: podman: {'; '.join(podman)}; bubblewrap: {'; '.join(bubblewrap)}"


def run_demo_campaigns(
    tasks_version: str = "examples", *, run_now: bool = False, k: int = 1, backend: str = ""
) -> list[str]:
    """Evaluate oracle, nop and the scripted stub on the example tasks (podman, else bubblewrap).

    `run_now` runs the rollouts in this process; otherwise they are queued
    for a worker (which serves the stub itself). Idempotent: an entry that
    already has a campaign on this version (ended, or queued when not
    running now) is skipped. Returns one line per entry for the caller to print.
    """
    version = BenchmarkVersion.objects.filter(name=tasks_version).first()
    if version is None:
        return [f"demo campaigns skipped: no benchmark version {tasks_version!r} (import the example tasks first)"]
    why = "as asked"
    if not backend:
        backend, why = demo_backend()
    if not backend:
        return [f"demo campaigns skipped: {why}"]
    lines = [f"demo backend: {backend} ({why})"]
    for harness_name, model_name, display in DEMO_HARNESSES:
        model, harness = demo_model_and_harness(harness_name, model_name, display)
        lines.append(demo_campaign(model, harness, version, f"demo {display}", backend=backend, run_now=run_now, k=k))
    return lines


def demo_campaign(
    model: AgentModel, harness: Harness, version: BenchmarkVersion, label: str, *, backend: str,
    run_now: bool, k: int = 1, tasks: list[Task] | None = None,
) -> str:
    """One demo entry's campaign on `version` (its `tasks`, or all), queued or run here; its line.

    Idempotent: an entry that already has a campaign on this version
    (ended, or queued when not running now) gets none; a queued one is
    replaced when running now.
    """
    existing = Campaign.objects.filter(model=model, harness=harness, version=version).exclude(
        status=Campaign.Status.CANCELLED
    )
    done = existing.exclude(status__in=[Campaign.Status.PENDING, Campaign.Status.RUNNING]).first()
    if done is not None:
        return f"{label}: campaign {done.pk} already {done.get_status_display().lower()}"
    waiting = existing.first()
    if waiting is not None and not run_now:
        return f"{label}: campaign {waiting.pk} already queued"
    if waiting is not None:
        cancel(waiting, detail="replaced by a demo run in this process")
    campaign = create_campaign(
        model, harness, version, tasks=tasks, k=k, backend=backend, notes="demo", enqueue=not run_now
    )
    if run_now:
        outcomes = run_campaign_sync(campaign)
        summary = ", ".join(f"{n} {status}" for status, n in sorted(outcomes.items()))
        return f"{label}: campaign {campaign.pk} ran: {summary}"
    return f"{label}: campaign {campaign.pk} queued ({campaign.rollouts.count()} rollouts)"


def import_autolab_tasks(shared: Path, version_name: str = PUBLISHED_VERSION) -> list[str]:
    """AutoLab v1.1's tasks from ../shared, one line each source: those the demo runs whole
    (autolab-v1.1/tasks), the others as published in autolab/tasks (task.toml and instruction).

    A task is read from one place only, so a second import finds it unchanged.
    """
    whole = whole_task_dirs(shared / WHOLE_TASKS_FOLDER).runnable
    metadata = shared / "autolab" / "tasks"
    lines = []
    if metadata.is_dir():
        report = TaskImportReport(version=version_name, path=str(metadata))
        for folder in find_task_dirs(metadata):
            if folder.name not in {w.name for w in whole}:
                report.results.extend(import_tasks(folder, version=version_name).results)
        lines.append(f"AutoLab tasks from {metadata}: {report.summary()}")
    else:
        lines.append(f"no shared AutoLab tasks at {metadata}; skipped")
    if whole:
        report = TaskImportReport(version=version_name, path=str(shared / WHOLE_TASKS_FOLDER))
        for folder in whole:
            report.results.extend(import_tasks(folder, version=version_name).results)
        lines.append(f"AutoLab tasks the demo runs, whole, from {shared / WHOLE_TASKS_FOLDER}: {report.summary()}")
    return lines


def real_task_choice(shared: Path, names: tuple[str, ...] = OFFLINE_REAL_TASKS) -> RealTaskChoice:
    """The real tasks of ../shared podman can build and run here (tasks.real_offline's choice)."""
    choice = whole_task_dirs(shared / WHOLE_TASKS_FOLDER, names)
    if not choice.runnable:
        return choice
    engine = backends.get(REAL_ENGINE)
    return runnable_here(choice, REAL_ENGINE, engine.host_problems(), engine.task_problems)


def run_real_demo_campaigns(
    shared: Path, *, run_now: bool = False, names: tuple[str, ...] = OFFLINE_REAL_TASKS,
    version_name: str = PUBLISHED_VERSION,
) -> list[str]:
    """Oracle and nop on the real AutoLab tasks podman can run here, in their version (its board beside the
    published rows); one line saying why when none can. Idempotent as `demo_campaign`."""
    choice = real_task_choice(shared, names)
    if not choice.runnable:
        return [f"real AutoLab rollouts skipped: {choice.why_none}"]
    version = BenchmarkVersion.objects.filter(name=version_name).first()
    names_here = [folder.name for folder in choice.runnable]
    tasks = list(Task.objects.filter(version=version, name__in=names_here).order_by("name"))
    if not tasks:
        return [f"real AutoLab rollouts skipped: no task of {', '.join(names_here)} in version {version_name} "
                "(import the shared tasks first)"]
    lines = [f"real AutoLab tasks on {REAL_ENGINE}: {', '.join(task.name for task in tasks)}"
             + (f" (left out: {'; '.join(choice.reasons)})" if choice.reasons else "")]
    for harness_name, model_name, display in REAL_DEMO_HARNESSES:
        model, harness = demo_model_and_harness(harness_name, model_name, display)
        lines.append(demo_campaign(model, harness, version, f"demo {display} on AutoLab v{version_name}",
                                   backend=REAL_ENGINE, run_now=run_now, tasks=tasks))
    return lines


def load_published_figures(path: Path = PUBLISHED_TABLE, version_name: str = PUBLISHED_VERSION) -> str:
    """Import the shipped published table (idempotent); one line for the caller to print.

    Its per-category columns are checked against the version's tasks'
    categories, so without the version's tasks it is skipped, and said so.
    """
    version = BenchmarkVersion.objects.filter(name=version_name).first()
    if version is None or not version.tasks.exists():
        return (f"published figures of AutoLab v{version_name} skipped: no tasks of version {version_name} here "
                "(their categories name the table's columns)")
    try:
        report = import_results(path.read_text(encoding="utf-8"))
    except ResultsImportError as error:
        return f"published figures of AutoLab v{version_name} not loaded: {error.errors[0]}"
    return f"published figures of AutoLab v{version_name} ({path.name}): {report.summary()}"


def stub_port() -> int:
    return int(getattr(settings, "STUB_LLM_PORT", 8765))


def demo_model_and_harness(harness_name: str, model_name: str, display: str) -> tuple[AgentModel, Harness]:
    from evaluations.running.stub_llm import STUB_API_KEY, STUB_MODEL_INFO

    model, created = AgentModel.objects.get_or_create(
        name=model_name, defaults={"display_name": display, "is_scripted": True, "provider": "autolab-site"}
    )
    if harness_name == "terminus-2":
        wanted = {
            "litellm_model": f"openai/{model_name}",
            "api_base": f"http://127.0.0.1:{stub_port()}/v1",
            "api_key_env": "",
            # The stub checks no key; a literal placeholder spares the
            # workers an OPENAI_API_KEY just for the demo.
            "sampling_params": {"temperature": 0.0, "model_info": STUB_MODEL_INFO, "api_key": STUB_API_KEY},
        }
        changed = [name for name, value in wanted.items() if getattr(model, name) != value]
        for name in changed:
            setattr(model, name, wanted[name])
        if changed:
            model.save(update_fields=changed)
    harness = ensure_harness(harness_name)
    return model, harness


def examples_dir() -> Path:
    return Path(settings.BASE_DIR) / "examples" / "tasks"
