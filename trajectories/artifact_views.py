"""A rollout's trial files, served from the shared artifact storage (trajectories.storing.artifacts).

Only files the rollout lists can be asked for; text is served as plain
text (never rendered as HTML), anything else as a download
(application/octet-stream, attachment). Every file is served with its
secrets masked (artifacts.shown_file): text a line at a time, a binary
byte for byte.
"""
from __future__ import annotations

from pathlib import PurePosixPath

from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404

from trajectories.visibility import shown as visible_rollouts
from trajectories.models import Rollout
from trajectories.storing import artifacts

# Served inline as text/plain: what people open in a browser tab.
TEXT_SUFFIXES = {".txt", ".log", ".json", ".jsonl", ".pane", ".md", ".toml", ".yaml", ".yml", ".py", ".sh", ".csv", ".diff"}


def trial_file(request, pk: int, path: str):
    rollout = get_object_or_404(visible_rollouts(request, Rollout.objects.only("pk", "trial_name", "artifacts")), pk=pk)
    found = artifacts.shown_file(rollout, path)
    if found is None:
        raise Http404(f"rollout {pk} has no file {path}")
    chunks, text = found
    name = PurePosixPath(path).name
    if text and PurePosixPath(path).suffix.lower() in TEXT_SUFFIXES:
        response = StreamingHttpResponse(chunks, content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'inline; filename="{_quoted(name)}"'
    else:
        # Whatever it claims to be (an .html, an .svg), it is the agent's: a download, never rendered.
        response = StreamingHttpResponse(chunks, content_type="application/octet-stream")
        response["Content-Disposition"] = f'attachment; filename="{_quoted(name)}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _quoted(name: str) -> str:
    return name.replace("\\", "_").replace('"', "_")
