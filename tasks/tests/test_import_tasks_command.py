"""python manage.py import_tasks"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tasks.models import BenchmarkVersion, Task

from .conftest import GOOD_TOML

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("import_tasks", *map(str, args), stdout=out)
    return out.getvalue()


@pytest.mark.shared
def test_imports_shared_tasks_with_one_line_each(shared_tasks_dir):
    output = run(shared_tasks_dir, "--version", "1.1")
    # What this machine cannot honour (a GPU it lacks) follows a task's line, indented.
    lines = [line for line in output.strip().splitlines() if not line.startswith("  warning: ")]
    assert len(lines) == 11
    assert (
        "flash_attention: imported, system_optimization, runtime_seconds (lower is better), 0.75 → 0.1, 2 h, CPU only"
        in lines
    )
    assert any(line.startswith("flux2_klein_lora: imported") and line.endswith("1 x L40S") for line in lines)
    assert lines[-1] == "10 imported, 0 updated, 0 unchanged, 0 failed (version 1.1)"
    again = run(shared_tasks_dir, "--version", "1.1")
    assert again.strip().splitlines()[-1] == "0 imported, 0 updated, 10 unchanged, 0 failed (version 1.1)"


@pytest.mark.shared
def test_json_output_for_shared_tasks(shared_tasks_dir):
    document = json.loads(run(shared_tasks_dir, "--json"))
    assert document["counts"] == {"imported": 10, "updated": 0, "unchanged": 0, "failed": 0}
    by_name = {task["name"]: task for task in document["tasks"]}
    assert by_name["ntt_butterfly_cuda"]["gpu_type"] == "H100"
    flash = by_name["flash_attention"]
    assert (flash["metric"], flash["direction"], flash["baseline"], flash["reference"], flash["budget_sec"]) == (
        "runtime_seconds",
        "lower",
        0.75,
        0.10,
        7200,
    )


def broken_folder(make_task, tmp_path):
    make_task("good")
    make_task("bad_toml", toml=GOOD_TOML.format(domain="cuda", baseline=2.0).replace("gpus = 0", "gpus = [0"))
    return tmp_path / "tasks"


def test_failure_exits_non_zero_and_others_import(make_task, tmp_path):
    folder = broken_folder(make_task, tmp_path)
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("import_tasks", str(folder), stdout=out)
    assert caught.value.returncode == 1
    output = out.getvalue()
    assert "good: imported" in output
    assert "bad_toml: failed: " in output and "bad_toml/task.toml: line " in output
    assert "1 imported, 0 updated, 0 unchanged, 1 failed" in output
    assert Task.objects.filter(name="good").exists()


def test_json_output_with_failure_parses(make_task, tmp_path):
    folder = broken_folder(make_task, tmp_path)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("import_tasks", str(folder), "--json", stdout=out)
    document = json.loads(out.getvalue())
    assert document["counts"]["failed"] == 1 and document["counts"]["imported"] == 1
    bad = next(task for task in document["tasks"] if task["name"] == "bad_toml")
    assert bad["outcome"] == "failed" and "line" in bad["error"]
    good = next(task for task in document["tasks"] if task["name"] == "good")
    assert good["metric"] == "runtime_seconds" and good["budget_sec"] == 600 and good["gpus"] == 0


def test_version_and_no_clip(make_task):
    run(make_task("toy"), "--version", "1.0", "--no-clip")
    version = BenchmarkVersion.objects.get()
    assert version.name == "1.0" and version.clip_rewards is False


def test_missing_path_fails(tmp_path):
    with pytest.raises(CommandError):
        call_command("import_tasks", str(tmp_path / "absent"), stdout=StringIO())


def test_exit_status_of_a_real_process(tmp_path):
    """The shell sees a non-zero status and stdout holds only the JSON document."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "AUTOLAB_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, str(root / "manage.py"), "import_tasks", str(tmp_path / "absent"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1
    document = json.loads(done.stdout)
    assert document["counts"]["failed"] == 1
    assert "does not exist" in document["tasks"][0]["error"]
    assert "1 task(s) failed to import" in done.stderr
