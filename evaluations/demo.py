"""The demo (`make demo`, load_demo): oracle, nop and the scripted stub evaluated on the example tasks,
and AutoLab v1.1's published figures as the release printed them."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from agents.models import AgentModel, Harness
from agents.services import ensure_harness
from tasks.models import BenchmarkVersion

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
        existing = Campaign.objects.filter(model=model, harness=harness, version=version).exclude(
            status=Campaign.Status.CANCELLED
        )
        done = existing.exclude(status__in=[Campaign.Status.PENDING, Campaign.Status.RUNNING]).first()
        if done is not None:
            lines.append(f"demo {display}: campaign {done.pk} already {done.get_status_display().lower()}")
            continue
        waiting = existing.first()
        if waiting is not None and not run_now:
            lines.append(f"demo {display}: campaign {waiting.pk} already queued")
            continue
        if waiting is not None:
            cancel(waiting, detail="replaced by a demo run in this process")
        campaign = create_campaign(
            model, harness, version, k=k, backend=backend, notes="demo", enqueue=not run_now
        )
        if run_now:
            outcomes = run_campaign_sync(campaign)
            summary = ", ".join(f"{n} {status}" for status, n in sorted(outcomes.items()))
            lines.append(f"demo {display}: campaign {campaign.pk} ran: {summary}")
        else:
            lines.append(f"demo {display}: campaign {campaign.pk} queued ({campaign.rollouts.count()} rollouts)")
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
