"""Every relative link of the README and docs/ reaches a file, and every #anchor a heading of it.

The README is a front page linking docs/ pages by reader, and the pages
link each other's sections: a heading renamed or a section moved would
leave a link that goes nowhere, which no reader reports.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)


def prose(text: str) -> str:
    """The text outside code blocks and code spans, where a `](` is Markdown's."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(page: Path) -> list[str]:
    return [target for target in LINK.findall(prose(page.read_text(encoding="utf-8")))
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


def test_the_docs_pages_exist():
    assert {page.name for page in PAGES} >= {
        "README.md", "running-the-site.md", "operators.md", "adding-a-task.md", "leaderboard.md",
        "api.md", "scaling.md", "security.md", "development.md",
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_its_heading(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked.relative_to(ROOT) if linked.is_relative_to(ROOT) else linked}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}:\n" + "\n".join(broken)


@pytest.mark.parametrize(("heading", "anchor"), [
    ("A rollout's life, and what survives a crash", "a-rollouts-life-and-what-survives-a-crash"),
    ("A real model with a real API key (not run by the test suite)",
     "a-real-model-with-a-real-api-key-not-run-by-the-test-suite"),
    ("Log in as staff after `make demo`", "log-in-as-staff-after-make-demo"),
    ("RE-Bench beside AutoLab", "re-bench-beside-autolab"),
])
def test_anchors_are_githubs(heading, anchor):
    assert slug(heading) == anchor
