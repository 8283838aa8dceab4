"""Reading Harbor task directories (pure, no database)."""
from __future__ import annotations

import re

import pytest

from tasks.taskdir import TaskDirError, directory_checksum, find_task_dirs, harbor_digest, parse_task_dir

from .conftest import GOOD_TOML

SHARED_EXPECTED = {
    # name: (category, metric, direction, baseline, reference, budget, gpus, gpu_type)
    "adaptive_compression": ("puzzle_and_challenge", "bits_per_byte", "lower", 5.0, 3.8, 14400, 0, ""),
    "discover_sorting": ("puzzle_and_challenge", "comparator_count", "lower", 80, 60, 7200, 0, ""),
    "flash_attention": ("system_optimization", "runtime_seconds", "lower", 0.75, 0.10, 7200, 0, ""),
    "flux2_klein_lora": ("model_development", "composite_quality", "higher", 0.0, 0.88, 14400, 1, "L40S"),
    "grpo_multisource": ("model_development", "mathvista_accuracy", "higher", 0.20, 0.65, 28800, 1, "L40S"),
    "hash_join": ("system_optimization", "runtime_seconds", "lower", 20.0, 0.04, 7200, 0, ""),
    "ntt_butterfly_cuda": ("cuda", "runtime_ms", "lower", 109.8, 1.28, 7200, 1, "H100"),
    "regex_engine": ("system_optimization", "runtime_seconds", "lower", 1.5, 0.37, 7200, 0, ""),
    "scaling_law": ("model_development", "perplexity", "lower", 25.0, 18.0, 43200, 1, "H100"),
    "vliw_scheduler": ("puzzle_and_challenge", "cycles", "lower", 4080, 1300, 7200, 0, ""),
}


@pytest.mark.shared
def test_parses_every_shared_task(shared_tasks_dir):
    directories = find_task_dirs(shared_tasks_dir)
    assert sorted(d.name for d in directories) == sorted(SHARED_EXPECTED)
    for directory in directories:
        task = parse_task_dir(directory)
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
        assert task.instruction.strip(), task.name
        assert len(task.checksum) == 64


@pytest.mark.shared
def test_shared_task_details(shared_tasks_dir):
    flux = parse_task_dir(shared_tasks_dir / "flux2_klein_lora")
    assert flux.library == "musubi-tuner"
    assert flux.author == "AutoPhD Gym"
    assert flux.build_timeout_sec == 10800
    assert flux.memory_mb == 65536 and flux.storage_mb == 61440 and flux.cpus == 8
    assert flux.optimization["constraints"] == {"max_train_hours": 4, "max_train_epochs": 50}
    assert "model_version" in flux.optimization["search_space"]["editable"]
    assert flux.metadata["domain"] == "model_development"
    assert flux.verifier_timeout_sec == 7200
    assert flux.allow_internet is False
    assert "Anchored-linear" in flux.reference_method

    flash = parse_task_dir(shared_tasks_dir / "flash_attention")
    assert "attention" in flash.tags and flash.difficulty == "expert"
    assert flash.baseline_method.startswith("O(n^2)")
    assert flash.has_environment is False  # the shared copy ships toml + instruction only


def test_valid_task(make_task):
    folder = make_task("toy")
    task = parse_task_dir(folder)
    assert task.name == "toy"
    assert (task.metric, task.direction, task.baseline_score, task.reference_score) == ("runtime_seconds", "lower", 2.0, 0.5)
    assert task.budget_sec == 600 and task.verifier_timeout_sec == 60
    assert task.tags == ["python", "toy"]
    assert task.benchmark_commands == ["python3 /app/bench.py"]
    assert re.search(task.benchmark_pattern, "cd /app && python3  /app/bench.py --quick")
    assert task.has_environment and task.has_tests and not task.has_solution
    assert task.source_path == str(folder.resolve())


def test_checksum_is_deterministic_and_content_sensitive(make_task):
    folder = make_task("toy")
    first = directory_checksum(folder)
    assert directory_checksum(folder) == first
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"cache")
    assert directory_checksum(folder) == first  # caches are not content
    (folder / "tests" / "test.sh").write_text("#!/bin/bash\necho changed\n")
    changed = directory_checksum(folder)
    assert changed != first
    (folder / "tests" / "test.sh").rename(folder / "tests" / "run.sh")
    assert directory_checksum(folder) not in (first, changed)


def test_harbor_digest_is_harbors_own_and_not_the_sites_checksum(make_task):
    """What a trial's lock.json records for the folder: Harbor's Packager's hash, of the files Harbor publishes."""
    from harbor.publisher.packager import Packager

    folder = make_task("toy")
    task = parse_task_dir(folder)
    assert task.harbor_digest == Packager.compute_content_hash(folder)[0] and len(task.harbor_digest) == 64
    assert task.harbor_digest != task.checksum
    (folder / "notes.txt").write_text("not published")  # outside what Harbor publishes: the site's checksum moves
    assert harbor_digest(folder) == task.harbor_digest and directory_checksum(folder) != task.checksum
    (folder / "tests" / "test.sh").write_text("#!/bin/bash\necho changed\n")
    assert harbor_digest(folder) != task.harbor_digest


def test_a_folder_harbor_cannot_hash_is_refused_with_harbors_reason(make_task):
    folder = make_task("toy")
    (folder / "tests" / ".harborignore").mkdir()  # Harbor's ignore rules must be a file: Harbor refuses the folder
    with pytest.raises(TaskDirError, match="Harbor cannot hash this task folder: Ignore rules must be a regular file"):
        parse_task_dir(folder)


def test_name_from_task_table(make_task):
    toml = '[task]\nname = "autolab/renamed"\n\n' + GOOD_TOML.format(domain="cuda", baseline=2.0).replace(
        'version = "1.1"\n', ""
    )
    folder = make_task("folder_name", toml='version = "1.1"\n' + toml)
    assert parse_task_dir(folder).name == "renamed"


def test_unknown_domain_is_kept(make_task):
    task = parse_task_dir(make_task("toy", domain="robotics"))
    assert task.category == "robotics"
    assert not task.known_category


def test_singular_gpu_type_and_stray_keys(make_task):
    toml = GOOD_TOML.format(domain="cuda", baseline=2.0).replace(
        "gpus = 0\n", 'gpus = 2\ngpu_type = "L40S"\n\nsource = "stray line inside [environment]"\n'
    )
    task = parse_task_dir(make_task("toy", toml=toml))
    assert (task.gpus, task.gpu_type) == (2, "L40S")


def test_scoring_hints(make_task):
    toml = GOOD_TOML.format(domain="cuda", baseline=2.0).replace(
        'benchmark_command = "python3 /app/bench.py"\n',
        'scoring = "anchored_linear"\nbenchmark_pattern = "make bench"\nmetric_pattern = "time: ([0-9.]+)"\n',
    )
    task = parse_task_dir(make_task("toy", toml=toml))
    assert task.scoring_rule == "anchored_linear"
    assert task.benchmark_pattern == "make bench"
    assert task.metric_pattern == "time: ([0-9.]+)"
    assert task.benchmark_commands == []


def replace(old: str, new: str) -> str:
    toml = GOOD_TOML.format(domain="system_optimization", baseline=2.0)
    assert old in toml
    return toml.replace(old, new)


@pytest.mark.parametrize(
    "toml, message",
    [
        (replace('direction = "lower"', 'direction = "sideways"'), 'direction must be "lower" or "higher"'),
        (replace('direction = "lower"\n', ""), "missing direction in [optimization]"),
        (replace('metric = "runtime_seconds"\n', ""), "missing metric in [optimization]"),
        (replace("score = 2.0\n", ""), "missing score in [optimization.baseline]"),
        (replace("[optimization.reference]\nscore = 0.5\n", "[optimization.reference]\n"), "missing score in [optimization.reference]"),
        (replace("score = 2.0", 'score = "fast"'), "[optimization.baseline] score must be a finite number"),
        (replace("score = 2.0", "score = nan"), "must be a finite number"),
        (GOOD_TOML.format(domain="cuda", baseline=2.0).split("[optimization]")[0], "missing [optimization] section"),
        (replace("gpus = 0", "gpus = 1.5"), "[environment] gpus must be a whole number"),
        (replace('metric = "runtime_seconds"', 'metric = "t"\nscoring = "cubic"'), "scoring must be one of"),
        (replace('metric = "runtime_seconds"', 'metric = "t"\nmetric_pattern = "(unclosed"'), "not a valid regular expression"),
    ],
)
def test_bad_task_toml(make_task, toml, message):
    folder = make_task("toy", toml=toml)
    with pytest.raises(TaskDirError) as caught:
        parse_task_dir(folder)
    assert str(folder / "task.toml") in str(caught.value)
    assert message in str(caught.value)


def test_toml_syntax_error_names_file_line_and_column(make_task):
    toml = GOOD_TOML.format(domain="cuda", baseline=2.0).replace("cpus = 1", "cpus = = 1")
    folder = make_task("toy", toml=toml)
    line = toml.splitlines().index("cpus = = 1") + 1
    with pytest.raises(TaskDirError) as caught:
        parse_task_dir(folder)
    message = str(caught.value)
    assert message.startswith(f"{folder / 'task.toml'}: line {line}, column 8: invalid TOML")


def test_missing_files(make_task):
    folder = make_task("no_toml", toml="")
    with pytest.raises(TaskDirError, match="missing task.toml"):
        parse_task_dir(folder)
    folder = make_task("no_instruction", instruction=None)
    with pytest.raises(TaskDirError, match=r"instruction\.md: missing instruction\.md"):
        parse_task_dir(folder)


def test_find_task_dirs(tmp_path, make_task):
    make_task("a")
    make_task("b", toml="")  # looks like a task: reported, not skipped
    (tmp_path / "tasks" / "notes").mkdir()  # nothing task-like: ignored
    (tmp_path / "tasks" / ".hidden").mkdir()
    assert [d.name for d in find_task_dirs(tmp_path / "tasks")] == ["a", "b"]
    assert find_task_dirs(tmp_path / "tasks" / "a") == [tmp_path / "tasks" / "a"]
    assert find_task_dirs(tmp_path / "nowhere") == []


def test_byte_order_mark_is_ignored(make_task):
    folder = make_task("toy")
    toml = (folder / "task.toml").read_text()
    (folder / "task.toml").write_text("\ufeff" + toml, encoding="utf-8")
    assert parse_task_dir(folder).metric == "runtime_seconds"
