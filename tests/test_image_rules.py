"""A task's base images have one owner (issue 44); a second reader of FROM lines, or a second asker of the engine, fails here.

tasks/images.py reads a Dockerfile's FROM lines and applies the worker's
mirror map; tasks/worker_images.py asks the engine what it has. The
preflight, the runner's check before a trial, `import_tasks`, the demo and
the sandbox all go through them: a module that parsed FROM or inspected an
image on its own would decide "can this worker build it?" a second way.
"""
from __future__ import annotations

import ast

from .test_status_writers import project_sources

FROM_READERS = {"tasks/dockerfile.py", "tasks/images.py"}
IMAGE_ASKERS = {"tasks/worker_images.py"}


def strings(source: str) -> list[tuple[int, str]]:
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_only_the_owners_read_from_lines_or_ask_the_engine_for_images():
    found = []
    for relative, source in project_sources():
        texts = strings(source)
        if relative not in FROM_READERS and any(text in ("FROM", "FROM ") for _, text in texts):
            found.append(f"{relative}: reads a Dockerfile's FROM (tasks.images.base_images does)")
        for index, (line, text) in enumerate(texts):
            following = [value for _, value in texts[index + 1:index + 2]]
            if relative not in IMAGE_ASKERS and text == "image" and following == ["inspect"]:
                found.append(f"{relative}:{line}: asks the engine for an image (tasks.worker_images.image_id does)")
    assert found == []


def test_the_guard_can_fail():
    """A module reading FROM on its own, and one inspecting an image, are found."""
    source = 'def base(text):\n    return [l for l in text.splitlines() if l.startswith("FROM ")]\n' \
             'def has(engine, ref):\n    return run([engine, "image", "inspect", ref])\n'
    texts = strings(source)
    assert any(text == "FROM " for _, text in texts)
    assert any(text == "image" and texts[index + 1][1] == "inspect" for index, (_, text) in enumerate(texts[:-1]))
