"""A submission's state is written by `submissions.services` alone (`_change`, one function per change, each with its event)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("autolab_site", "agents", "tasks", "trajectories", "evaluations", "submissions")
WRITES = re.compile(r"submission\w*\.state\s*=[^=]|\.update\([^)]*\bstate=|Submission\.objects\.create\([^)]*\bstate=", re.S)


def writers(root: Path = ROOT) -> list[str]:
    found = []
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            if "tests" in path.parts or "migrations" in path.parts:
                continue
            text = path.read_text()
            if "Submission" not in text and "submission" not in text:
                continue
            for match in WRITES.finditer(text):
                found.append(f"{path.relative_to(root)}:{text[:match.start()].count(chr(10)) + 1}")
    return found


def test_only_the_services_write_a_submissions_state():
    assert [w for w in writers() if not w.startswith("submissions/services.py")] == []
    assert len([w for w in writers() if w.startswith("submissions/services.py")]) == 1  # _change's


def test_the_guard_finds_a_second_writer(tmp_path):
    (tmp_path / "evaluations").mkdir()
    (tmp_path / "evaluations" / "probe.py").write_text("def sneak(submission):\n    submission.state = 'published'\n")
    assert writers(tmp_path) == ["evaluations/probe.py:2"]
