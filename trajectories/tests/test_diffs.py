"""The one reading of unified diffs (trajectories.analysis.diffs): headers and line classes."""
import pytest

from trajectories.analysis.diffs import diff_lines, files_in_diff


@pytest.mark.parametrize(
    "diff, files",
    [
        ("--- a/app/solve.c\n+++ b/app/solve.c\n@@ -1 +1 @@\n", ["app/solve.c"]),
        ("--- /app/solve.c\t2026-01-01\n+++ /app/solve.c\t2026-01-02\n", ["/app/solve.c"]),
        ("--- /dev/null\n+++ b/new.py\n", ["new.py"]),
        ("--- a/gone.py\n+++ /dev/null\n", ["gone.py"]),
        ("diff --git a/x.c b/x.c\nindex 1..2\n--- a/x.c\n+++ b/x.c\n", ["x.c"]),
        ("--- a/old name.py\n+++ b/new name.py\n", ["old name.py", "new name.py"]),
        ("Index: src/a.c\n===\n--- src/a.c\n+++ src/a.c\n", ["src/a.c"]),
        ("+++ b/x\n-- not a header\n+ not one either\n", ["x"]),
        ("", []),
        (None, []),
    ],
)  # fmt: skip
def test_files_in_diff(diff, files):
    assert files_in_diff(diff) == files


def test_diff_lines_classes():
    diff = "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-old\n+new\n ctx\n--- a/gone.py\n+++ /dev/null\n"
    assert [cls for cls, _ in diff_lines(diff)] == ["file", "file", "file", "hunk", "del", "add", "ctx", "file", "file"]
    assert files_in_diff(diff) == ["x.c", "gone.py"]
