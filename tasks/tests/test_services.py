"""tasks.services: importing, matching trials to tasks, TaskSpec."""
from __future__ import annotations

import pytest

from tasks.models import BenchmarkVersion, Task, TaskRevision
from tasks.scoring import normalised_score
from tasks.services import TaskNotFound, benchmark_commands, import_tasks, match_task, task_spec

from .conftest import GOOD_TOML
from .test_taskdir import SHARED_EXPECTED

pytestmark = pytest.mark.django_db


@pytest.mark.shared
def test_import_shared_tasks(shared_tasks_dir):
    report = import_tasks(shared_tasks_dir, version="1.1")
    assert report.ok
    assert report.counts == {"imported": 10, "updated": 0, "unchanged": 0, "failed": 0}
    assert report.summary() == "10 imported, 0 updated, 0 unchanged, 0 failed"
    version = BenchmarkVersion.objects.get(name="1.1")
    assert version.benchmark == "AutoLab" and version.clip_rewards
    for task in Task.objects.filter(version=version):
        expected = SHARED_EXPECTED[task.name]
        got = (
            task.category,
            task.metric,
            task.direction,
            task.baseline_score,
            task.reference_score,
            task.budget_sec,
            task.gpus,
            task.gpu_type,
        )
        assert got == pytest.approx(expected), task.name
    flash = Task.objects.get(name="flash_attention")
    assert (flash.baseline_score, flash.reference_score, flash.budget_sec) == (0.75, 0.10, 7200)
    assert Task.objects.get(name="flux2_klein_lora").gpu_type == "L40S"
    assert Task.objects.get(name="grpo_multisource").gpu_type == "L40S"
    assert Task.objects.get(name="ntt_butterfly_cuda").gpu_type == "H100"
    assert TaskRevision.objects.count() == 10

    again = import_tasks(shared_tasks_dir, version="1.1")
    assert again.counts == {"imported": 0, "updated": 0, "unchanged": 10, "failed": 0}
    assert Task.objects.count() == 10 and TaskRevision.objects.count() == 10


def test_reimport_unchanged_is_a_no_op(make_task):
    folder = make_task("toy")
    first = import_tasks(folder)
    assert [r.outcome for r in first.results] == ["imported"]
    task = Task.objects.get()
    updated_at = task.updated_at
    second = import_tasks(folder)
    assert [r.outcome for r in second.results] == ["unchanged"]
    assert Task.objects.count() == 1 and TaskRevision.objects.count() == 1
    assert Task.objects.get().updated_at == updated_at


def test_reimport_records_harbors_digest_on_a_task_imported_before_it_was_recorded(make_task):
    folder = make_task("toy")
    import_tasks(folder)
    task = Task.objects.get()
    pinned = task.harbor_digest
    assert len(pinned) == 64 and pinned != task.checksum
    Task.objects.update(harbor_digest="")  # as imported before the field existed
    report = import_tasks(folder)
    assert [(r.outcome, r.changed_fields) for r in report.results] == [("updated", ["harbor_digest"])]
    task.refresh_from_db()
    assert task.harbor_digest == pinned and report.results[0].fields["harbor_digest"] == pinned


def test_changed_task_updates_in_place_with_revision(make_task):
    folder = make_task("toy", baseline=2.0)
    import_tasks(folder)
    task = Task.objects.get()
    (folder / "task.toml").write_text(GOOD_TOML.format(domain="system_optimization", baseline=3.0))
    report = import_tasks(folder)
    assert [r.outcome for r in report.results] == ["updated"]
    assert "baseline_score" in report.results[0].changed_fields
    assert Task.objects.count() == 1
    task.refresh_from_db()
    assert task.baseline_score == 3.0
    latest = task.revisions.first()
    assert task.revisions.count() == 2
    assert latest.checksum == task.checksum
    assert latest.changed_fields["baseline_score"] == {"old": 2.0, "new": 3.0}
    assert "instruction" not in latest.changed_fields


def test_failures_are_reported_and_the_rest_imports(make_task, tmp_path):
    make_task("good")
    make_task("no_toml", toml="")
    make_task("bad_toml", toml=GOOD_TOML.format(domain="cuda", baseline=2.0).replace("cpus = 1", "cpus = = 1"))
    make_task("no_optimization", toml=GOOD_TOML.format(domain="cuda", baseline=2.0).split("[optimization]")[0])
    make_task("robotics", domain="robotics")
    report = import_tasks(tmp_path / "tasks")
    outcomes = {r.name: r.outcome for r in report.results}
    assert outcomes == {
        "bad_toml": "failed",
        "good": "imported",
        "no_optimization": "failed",
        "no_toml": "failed",
        "robotics": "imported",
    }
    errors = {r.name: r.error for r in report.results if r.error}
    assert "missing task.toml" in errors["no_toml"]
    assert "bad_toml/task.toml: line " in errors["bad_toml"]
    assert "missing [optimization] section" in errors["no_optimization"]
    assert not report.ok
    assert set(Task.objects.values_list("name", flat=True)) == {"good", "robotics"}
    assert Task.objects.get(name="robotics").category == "robotics"


def test_missing_or_empty_path(tmp_path):
    report = import_tasks(tmp_path / "absent")
    assert report.counts["failed"] == 1 and "does not exist" in report.results[0].error
    (tmp_path / "empty").mkdir()
    report = import_tasks(tmp_path / "empty")
    assert "no task.toml" in report.results[0].error
    assert not BenchmarkVersion.objects.exists()


def test_clip_setting_of_version(make_task):
    folder = make_task("toy")
    import_tasks(folder, version="1.0", clip_rewards=False)
    assert BenchmarkVersion.objects.get(name="1.0").clip_rewards is False
    import_tasks(folder, version="1.0")  # None keeps the setting
    assert BenchmarkVersion.objects.get(name="1.0").clip_rewards is False
    assert task_spec(Task.objects.get()).clip is False


def test_task_spec_and_benchmark_commands(make_task):
    import_tasks(make_task("toy"))
    task = Task.objects.get()
    spec = task_spec(task)
    assert (spec.name, spec.category, spec.direction, spec.clip) == ("toy", "system_optimization", "lower", True)
    assert spec.benchmark_commands == ("python3 /app/bench.py",)
    assert benchmark_commands(task) == ["python3 /app/bench.py"]
    # log-stretch by category: baseline 2.0, reference 0.5
    assert normalised_score(spec, 0.5) == pytest.approx(0.5)


def test_match_task(make_task):
    import_tasks(make_task("flux2_klein_lora"), version="1.0")
    import_tasks(make_task("flux2_klein_lora"), version="1.1")
    import_tasks(make_task("musubi-tuner__other"), version="1.1")
    assert match_task("flux2_klein_lora").version.name == "1.1"  # newest version
    assert match_task("musubi-tuner__flux2_klein_lora").version.name == "1.1"
    assert match_task("musubi-tuner__flux2_klein_lora", version="1.0").version.name == "1.0"
    assert match_task("musubi-tuner__other").name == "musubi-tuner__other"  # exact first
    with pytest.raises(TaskNotFound) as caught:
        match_task("musubi-tuner__flux2_klein")  # no fuzzy matching
    assert "'musubi-tuner__flux2_klein', 'flux2_klein'" in str(caught.value)
    with pytest.raises(TaskNotFound, match="in version 2.0"):
        match_task("flux2_klein_lora", version="2.0")
    with pytest.raises(TaskNotFound):
        match_task("")
