"""Which workspace files a task declares read-only, which it pins itself, and which a sealed verifier takes from its image."""
from __future__ import annotations

import pytest

from tasks.read_only import declared_read_only, in_workspace, pinned_under_orig, restored_from_image

# (instruction text, the paths it declares read-only), in AutoLab's own wordings.
DECLARED = [
    ("| `solve.py` | **Edit this file only** |\n| `main.py` | Local verifier (read-only) |", ["main.py"]),
    ("| `/app/main.py`      | Read-only — local evaluator |\n| `/app/data/visible/`| Read-only — visible test sequences |",
     ["/app/main.py", "/app/data/visible/"]),
    ("| Model code (read-only) | `/app/model/` |", ["/app/model/"]),  # the word in one cell, the path in another
    ("| `/app/data/*.npz` | Read-only — train / val / test_public |", ["/app/data/*.npz"]),
    # Functions and classes in the same row are no files.
    ("| `main.py` | Harness: calls `find_bit_flips`, evaluates `MiniResNet` (read-only) |", ["main.py"]),
    ("| `/app/solve.c` | **Edit** |", []),
    ("| `/app/solve.py` | **Edit**; read-only files around it |", []),  # a row that says edit names the solution
    ("Do not modify `main.go`, `go.mod`, `Makefile`", ["main.go", "go.mod", "Makefile"]),
    ("- Do NOT modify `/app/evaluate.py`, `/app/eval_prompts.txt`, or any file under `/opt/musubi-tuner/`.",
     ["/app/evaluate.py", "/app/eval_prompts.txt", "/opt/musubi-tuner/"]),
    # Of a line with several sentences, only the one that forbids.
    ("- Edit `/app/src/solve.rs` only. Do not modify `src/main.rs`, `Cargo.toml`, or anything under `/tests/`.",
     ["src/main.rs", "Cargo.toml", "/tests/"]),
    ("Edit `/app/solve.c` only. Python standard library only.", []),
    ("```\n| `main.py` | read-only |\n```\n", []),  # an example in a code block
    ("The verifier compiles `make -C /app` (read-only)", []),  # a command is no path
]


@pytest.mark.parametrize("text,expected", DECLARED)
def test_declared_read_only(text, expected):
    assert declared_read_only(text) == expected


@pytest.mark.parametrize(
    "path,expected",
    [("main.py", "main.py"), ("/app/main.py", "main.py"), ("/app/model/", "model"), ("/app/data/*.npz", "data/*.npz"),
     ("/orig/", None), ("/app", None), ("/application/x", None), ("../etc/passwd", None)],
)
def test_in_workspace(path, expected):
    assert in_workspace(path, "/app") == expected


def test_pinned_under_orig_are_the_workspace_files_a_build_step_writes_to_orig():
    runs = [
        ("mkdir -p /orig && sha256sum /app/Makefile | cut -d' ' -f1 > /orig/build_file.sha256", "/"),  # vliw_scheduler
        ("cp /app/train.sh /orig/train.sh && sha256sum /app/train_config.yaml > /orig/x.sha256", "/app"),
        ("make && echo 'Build OK'", "/app"),  # no /orig: pins nothing
        ("sha256sum main.c > /orig/main.sha256", "/app"),  # relative, from the workspace
        ("sha256sum solve.h > /orig/solve.sha256", "/"),  # relative, from elsewhere: not followed
    ]
    assert pinned_under_orig(runs, "/app") == {"Makefile", "train.sh", "train_config.yaml", "main.c"}


def test_restored_are_the_declared_files_the_task_does_not_pin():
    instruction = (
        "| `solve.c` | **Edit this file only** |\n| `main.c`  | Program generator + correctness checker (read-only) |\n"
        "| `Makefile` | Build config (read-only) |\n\nDo NOT modify `/orig/`, or `/models/`.\n"
    )
    runs = [("mkdir -p /orig && sha256sum /app/Makefile | cut -d' ' -f1 > /orig/build_file.sha256", "/")]
    # vliw_scheduler: its verifier judges the Makefile against its own pin; main.c it trusts.
    assert restored_from_image(instruction, runs, "/app") == ["main.c"]
    assert restored_from_image("", runs, "/app") == []


def test_the_real_tasks(real_tasks_dir):
    from tasks.sealing import seal_task_dir

    restored = {folder.name: seal_task_dir(folder).restored for folder in sorted(real_tasks_dir.iterdir())}
    # The tasks whose verifiers run a file of the workspace they do not pin: the image's copy is graded.
    assert restored["discover_sorting"] == ["main.py"]
    assert restored["fredkin_sort_network"] == ["main.py", "Dockerfile"]
    # Pinned under /orig at build time: judged by the task's own check, as in Harbor's run.
    assert "Makefile" not in restored["vliw_scheduler"] and "main.py" not in restored["adaptive_compression"]
    assert restored["levenshtein_distance"] == []  # hash-protects all three of its read-only files
    assert all(".." not in path and not path.startswith("/") for paths in restored.values() for path in paths)
