"""The rollout page's trial tabs (Verifier, Artifacts, Config, Log, Exception) and the artifact viewer.

Each tab is an HTML fragment fetched when opened (static/js/trial_tabs.js
sends `X-Requested-With: fetch`), so the rollout page's first load does not
grow with the trial's files; the same URL without that header answers a
whole page, so every tab works without JavaScript. What the trial wrote is
the agent's: templates escape it, and files are read only from the artifact
storage, only when the rollout lists them (trajectories.storing.artifacts).
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.paginator import Paginator
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from autolab_site.masking import mask_secrets, mask_text
from autolab_site.safe_files import UnsafePath, read_file
from tasks.models import TaskRevision
from tasks.services import describe_anchors

from trajectories import explorer
from trajectories.forms import TrialTabForm
from trajectories.visibility import shown as visible_rollouts
from trajectories.models import Rollout
from trajectories.reading import trial_tabs
from trajectories.services import anchors_in_use
from trajectories.storing import artifacts

ARTIFACTS_PER_PAGE = 500
# reward.json, config and the like are small; a verifier that printed megabytes keeps its end.
JSON_BYTES = 256 * 1024


def _fragment_wanted(request) -> bool:
    return request.headers.get("X-Requested-With") == "fetch"


def _paths(rollout: Rollout) -> list[str]:
    return [entry["path"] for entry in rollout.artifacts or [] if isinstance(entry, dict) and "path" in entry]


def _pretty(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _verifier(rollout: Rollout, params: dict) -> dict:
    paths = _paths(rollout)
    streams = []
    for path in trial_tabs.verifier_streams(paths):
        found = artifacts.shown_tail(rollout, path, trial_tabs.VIEW_BYTES)
        if found is not None:
            streams.append({"path": path, "text": found[0], "cut": found[1]})
    stored_stdout = "verifier/test-stdout.txt" in {s["path"] for s in streams}
    stdout = rollout.verifier_stdout or ""
    reward_json = artifacts.shown_head(rollout, trial_tabs.REWARD_JSON, JSON_BYTES) if trial_tabs.REWARD_JSON in paths else None
    anchors = explorer.rollout_anchors(rollout)
    return {
        "streams": streams,
        # The stdout imported with the trial, when the storage has no copy of it.
        "imported_stdout": "" if stored_stdout else mask_text(stdout[-trial_tabs.VIEW_BYTES:]),
        "imported_stdout_cut": not stored_stdout and len(stdout) > trial_tabs.VIEW_BYTES,
        "reward_json": (reward_json[0] or "") if reward_json is not None else _pretty(mask_secrets(rollout.verifier_fields or {})),
        "reward_json_stored": reward_json is not None,
        "outputs": [(name, _pretty(mask_secrets(value))) for name, value in sorted((rollout.verifier_outputs or {}).items())],
        "anchors": anchors,
        "anchors_text": describe_anchors(anchors),
        "anchors_in_use": anchors_in_use(rollout.task),
    }


def _artifacts(rollout: Rollout, params: dict) -> dict:
    files = [artifacts.ArtifactFile(**entry) for entry in rollout.artifacts or []]
    page = Paginator(files, ARTIFACTS_PER_PAGE).get_page(params.get("page"))
    return {
        "page": page,
        "n_files": len(files),
        "total_bytes": sum(f.size for f in files),
        "files": [(f, trial_tabs.file_kind(f.path)) for f in page.object_list],
    }


def _task_toml(rollout: Rollout) -> dict:
    task = rollout.task
    text = None
    if task.source_path:
        try:
            text = read_file(Path(task.source_path), "task.toml", limit=JSON_BYTES).decode("utf-8", "replace")
        except (OSError, UnsafePath):
            text = None
    revisions = [
        trial_tabs.Revision(imported_at, tuple(sorted(changed or {})))
        for imported_at, changed in TaskRevision.objects.filter(task=task).values_list("imported_at", "changed_fields")
    ]
    return {
        "task_toml": mask_text(text) if text is not None else None,
        "task_toml_path": str(Path(task.source_path) / "task.toml") if task.source_path else "",
        "task_toml_note": trial_tabs.task_toml_note(rollout.started_at or rollout.imported_at, revisions),
    }


def _config(rollout: Rollout, params: dict) -> dict:
    model, harness = rollout.model, rollout.harness
    return {
        "config_json": _pretty(mask_secrets(rollout.config or {})),
        **_task_toml(rollout),
        "model_settings": _pretty(mask_secrets({
            "name": model.name,
            "provider": model.provider,
            "litellm_model": model.litellm_model,
            "api_base": model.api_base,
            "sampling_params": model.sampling_params,
        })),
        # A variable's name, not its value: where the runner reads the key from.
        "api_key_env": model.api_key_env,
        "harness_settings": _pretty(mask_secrets({
            "name": harness.name, "version": harness.version, "import_path": harness.import_path, "params": harness.params,
        })),
    }


def _log(rollout: Rollout, params: dict) -> dict:
    paths = _paths(rollout)
    path = trial_tabs.trial_log_path(paths)
    found = artifacts.shown_tail(rollout, path, trial_tabs.LOG_BYTES) if path else None
    view = trial_tabs.filter_log(found[0], params.get("q") or "") if found else None
    return {
        "log_path": path if found else None,
        "view": view,
        "log_cut": bool(found and found[1]),
        "log_bytes": trial_tabs.LOG_BYTES,
        "q": params.get("q") or "",
        "other_logs": trial_tabs.other_logs(paths, path),
    }


def _exception(rollout: Rollout, params: dict) -> dict:
    # Harbor writes the failure's whole text to exception.txt beside result.json.
    found = artifacts.shown_tail(rollout, trial_tabs.EXCEPTION_FILE, trial_tabs.VIEW_BYTES)
    return {
        "exception_message": mask_text(rollout.exception_message),
        "exception_traceback": mask_text(rollout.exception_traceback),
        "exception_file": found[0] if found else None,
        "exception_file_name": trial_tabs.EXCEPTION_FILE,
    }


BUILDERS = {"verifier": _verifier, "artifacts": _artifacts, "config": _config, "log": _log, "exception": _exception}
assert set(BUILDERS) == trial_tabs.TAB_SLUGS


@require_GET
def trial_tab(request, pk: int, tab: str):
    """One trial tab: a fragment for the page's script, a whole page for a plain link."""
    if tab not in trial_tabs.TAB_SLUGS:
        raise Http404(f"No tab {tab!r}: the tabs are {', '.join(slug for slug, _ in trial_tabs.TABS)}")
    form = TrialTabForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
    rollout = get_object_or_404(visible_rollouts(request, Rollout.objects.select_related("task__version", "model", "harness")), pk=pk)
    context = {"rollout": rollout, "task": rollout.task, "tab": tab, "tabs": trial_tabs.TABS, "nav": "rollouts"}
    context.update(BUILDERS[tab](rollout, form.cleaned_data))
    fragment = _fragment_wanted(request)
    template = f"trajectories/tabs/{tab}.html" if fragment else "trajectories/trial_tab_page.html"
    response = render(request, template, context)
    patch_vary_headers(response, ["X-Requested-With"])
    return response


@require_GET
def artifact_view(request, pk: int, path: str):
    """One stored file of the trial in a page: text escaped (its first VIEW_BYTES), a binary as a download link."""
    rollout = get_object_or_404(visible_rollouts(request, Rollout.objects.select_related("task__version", "model", "harness")), pk=pk)
    entry = artifacts.listed(rollout, path)
    found = artifacts.shown_head(rollout, path, trial_tabs.VIEW_BYTES) if entry is not None else None
    if entry is None or found is None:
        raise Http404(f"rollout {pk} has no file {path}")
    text, shown_bytes = found
    context = {
        "nav": "rollouts",
        "rollout": rollout,
        "task": rollout.task,
        "file": entry,
        # Every file is shown with secrets masked: config.json and result.json record the agent's env.
        "text": text,
        "shown_bytes": shown_bytes,
        "partial": text is not None and shown_bytes < entry.size,
    }
    return render(request, "trajectories/artifact_view.html", context)
