"""The demo loads AutoLab v1.1's published main table, shipped as data with its citation (issue 46)."""
from __future__ import annotations

import csv
import io

import pytest
from django.core.cache import cache
from django.core.management import call_command

from evaluations.boards import serving
from evaluations.demo import PUBLISHED_TABLE, load_published_figures
from evaluations.models import PublishedFigure
from tasks.models import BenchmarkVersion, Task

pytestmark = pytest.mark.django_db

CATEGORIES = ("cuda", "model_development", "puzzle_and_challenge", "system_optimization")
CITATION = "AutoLab repository README, release v1.1.26.05.10, commit 7aff5fe"


@pytest.fixture
def version():
    cache.clear()
    version = BenchmarkVersion.objects.create(name="1.1", clip_rewards=True)
    for number, category in enumerate(CATEGORIES):
        Task.objects.create(version=version, name=f"task{number}", category=category)
    return version


def test_the_shipped_table_is_the_printed_one():
    """11 main entries with 15 figures, 6 ablations without Dominance, two decimals as printed, one citation."""
    with PUBLISHED_TABLE.open(encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    main = [r for r in rows if r["set"] == "main"]
    ablation = [r for r in rows if r["set"] == "ablation"]
    assert (len(main), len(ablation)) == (11, 6)
    figures = [c for c in rows[0] if c.endswith(("_avg", "_best", "_dom"))]
    assert len(figures) == 15
    for row in rows:
        assert CITATION in row["source"] and row["version"] == "1.1" and row["harness"] == "terminus-2"
        for column in figures:
            if row["set"] == "ablation" and column.endswith("_dom"):
                assert row[column] == ""
            else:
                assert len(row[column]) == 4 and 0 <= float(row[column]) <= 1, (row["model"], column)
    # Spot checks against the picture, one per category and set.
    by_model = {r["model"]: r for r in rows}
    assert by_model["claude-opus-4.6"]["cuda_dom"] == "0.97"
    assert by_model["grok-4-20"]["model_development_avg"] == "0.13"
    assert by_model["gemini-3.1-pro"]["puzzle_and_challenge_best"] == "0.81"
    assert by_model["minimax-m2.7"]["system_optimization_dom"] == "0.18"
    assert by_model["deepseek-v4-flash"]["puzzle_and_challenge_best"] == "0.72"
    assert by_model["qwen-3.5-plus"]["overall_avg"] == "0.37"


def test_the_demo_loads_it_as_published_rows_again_and_again(version):
    line = load_published_figures()
    assert "225 published figures created" in line
    assert "0 published figures created, 0 updated, 225 unchanged" in load_published_figures()
    assert PublishedFigure.objects.count() == 225
    published = serving.build(version).published
    assert len(published) == 17
    assert [p.ablation for p in published] == [False] * 11 + [True] * 6
    first = published[0]
    assert first.model == "claude-opus-4.6" and first.printed(None, "avg") == 0.68 and first.printed("cuda", "dom") == 0.97
    assert all(CITATION in source for p in published for source in p.sources)
    assert not any(f.measure == "dom" for p in published if p.ablation for f in p.paper)


def test_without_the_versions_tasks_it_says_why_it_skips():
    assert "skipped: no tasks of version 1.1" in load_published_figures()
    assert not PublishedFigure.objects.exists()


@pytest.mark.shared
def test_load_demo_reads_the_shared_folder_named_by_the_environment(monkeypatch, tmp_path, shared_tasks_dir):
    """A clone elsewhere than beside ../shared finds it through AUTOLAB_SHARED_DIR, as the tests do."""
    (tmp_path / "autolab").mkdir()
    (tmp_path / "autolab" / "tasks").symlink_to(shared_tasks_dir)
    monkeypatch.setenv("AUTOLAB_SHARED_DIR", str(tmp_path))
    cache.clear()
    out = io.StringIO()
    call_command("load_demo", "--no-campaign", stdout=out)
    assert f"AutoLab tasks from {tmp_path / 'autolab' / 'tasks'}" in out.getvalue()
    assert "published figures of AutoLab v1.1 (autolab-v1.1-main-table.csv): 225 published figures created" in out.getvalue()
    assert len(serving.build(BenchmarkVersion.objects.get(name="1.1")).published) == 17
