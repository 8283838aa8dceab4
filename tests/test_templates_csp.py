"""No template holds what the strict Content-Security-Policy refuses.

The browser test (test_csp_browser.py) opens the main pages; this reads
every template, so that a page it does not open cannot bring back an inline
handler, a style attribute or an inline script either.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = sorted(p for d in ("templates", "tasks", "evaluations", "trajectories", "submissions") for p in (ROOT / d).rglob("templates/**/*.html")) + sorted(
    (ROOT / "templates").glob("*.html")
)
HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I)
STYLE_ATTRIBUTE = re.compile(r"<[a-z][^>]*\sstyle\s*=", re.I)
SCRIPT = re.compile(r"<script\b([^>]*)>", re.I)
STYLE_BLOCK = re.compile(r"<style\b([^>]*)>", re.I)


@pytest.mark.parametrize("path", sorted(set(TEMPLATES)), ids=lambda p: str(p.relative_to(ROOT)))
def test_template_has_nothing_the_csp_refuses(path):
    text = path.read_text()
    assert not HANDLER.search(text), "inline event handler"
    assert not STYLE_ATTRIBUTE.search(text), "style attribute"
    for attrs in SCRIPT.findall(text):
        # Our own files, or data (json_script), or an inline script carrying the nonce.
        assert "src=" in attrs or 'type="application/json"' in attrs or "csp_nonce" in attrs, attrs
    for attrs in STYLE_BLOCK.findall(text):
        assert "csp_nonce" in attrs, attrs


def test_the_templates_are_found():
    names = {p.name for p in TEMPLATES}
    assert {"base.html", "rollout_detail.html", "leaderboard.html", "task_detail.html"} <= names
