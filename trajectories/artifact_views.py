"""A rollout's trial files, served from the shared artifact storage (trajectories.storing.artifacts).

Only files the rollout lists can be asked for; text is served as plain
text (never rendered as HTML), anything else as a download
(application/octet-stream, attachment).
"""
from __future__ import annotations

import io
from pathlib import PurePosixPath

from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404

from autolab_site.masking import mask_text
from trajectories.models import Rollout
from trajectories.reading import trial_tabs
from trajectories.storing import artifacts

# config.json and result.json are a few KB; a bigger one is cut rather than read whole.
MASKED_FILE_LIMIT = 4 * 1024 * 1024
# Served inline as text/plain: what people open in a browser tab.
TEXT_SUFFIXES = {".txt", ".log", ".json", ".jsonl", ".pane", ".md", ".toml", ".yaml", ".yml", ".py", ".sh", ".csv", ".diff"}


def trial_file(request, pk: int, path: str):
    rollout = get_object_or_404(Rollout.objects.only("pk", "trial_name", "artifacts"), pk=pk)
    handle = artifacts.open_artifact(rollout, path)
    if handle is None:
        raise Http404(f"rollout {pk} has no file {path}")
    name = PurePosixPath(path).name
    if path in trial_tabs.SETTINGS_FILES:
        # Small files Harbor writes, holding the agent's env: served with secrets masked (autolab_site.masking).
        with handle:
            text = mask_text(handle.read(MASKED_FILE_LIMIT).decode("utf-8", "replace"))
        response = FileResponse(io.BytesIO(text.encode()), content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'inline; filename="{_quoted(name)}"'
    elif PurePosixPath(path).suffix.lower() in TEXT_SUFFIXES:
        response = FileResponse(handle, content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'inline; filename="{_quoted(name)}"'
    else:
        # Whatever it claims to be (an .html, an .svg), it is the agent's: a download, never rendered.
        response = FileResponse(handle, as_attachment=True, filename=name, content_type="application/octet-stream")
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _quoted(name: str) -> str:
    return name.replace("\\", "_").replace('"', "_")
