"""Published results reproduce the paper: Dominance among published entries, the paper's own table, clipping."""
from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from evaluations.boards import serving
from evaluations.models import PublishedFigure, PublishedResult
from tasks.models import BenchmarkVersion, Task

from evaluations.tests.board_factories import build_boards

pytestmark = pytest.mark.django_db

PER_TASK = "model,harness,version,task,score,source\n"
# Per-task means A: .5 .2 .7 0 | B: .5 .1 1 .2 | C: 0 .2 .7 .2 (board_factories.SCORES, one score per task).
TABLE = {
    "model-a": {"t1": 0.5, "t2": 0.2, "t3": 0.7},
    "model-b": {"t1": 0.5, "t2": 0.1, "t3": 1.0, "t4": 0.2},
    "model-c": {"t1": 0.0, "t2": 0.2, "t3": 0.7, "t4": 0.2},
}


@pytest.fixture
def version():
    cache.clear()
    version = BenchmarkVersion.objects.create(name="1.1", clip_rewards=True)
    for name, category in (("t1", "alpha"), ("t2", "alpha"), ("t3", "beta"), ("t4", "beta")):
        Task.objects.create(version=version, name=name, category=category)
    return version


def write(tmp_path, text: str, name: str = "results.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def import_per_task(tmp_path, source: str = "Paper 2026, Table 9"):
    rows = "".join(
        f'{model},terminus-2,1.1,{task},{score},"{source}"\n' for model, tasks in TABLE.items() for task, score in tasks.items()
    )
    call_command("import_results", str(write(tmp_path, PER_TASK + rows, "per_task.csv")), stdout=open("/dev/null", "w"))


def published(version) -> dict:
    return {p.model: p for p in serving.build(version).published}


def test_dominance_among_the_published_entries_of_a_version(tmp_path, version):
    import_per_task(tmp_path)
    rows = published(version)
    assert rows["model-a"].overall.avg == pytest.approx(0.35)
    assert rows["model-b"].overall.dominance == pytest.approx(0.625)
    assert rows["model-a"].overall.dominance == pytest.approx(0.4375)
    assert sum(r.overall.dominance for r in rows.values()) / 3 == pytest.approx(0.5)
    assert rows["model-a"].categories["alpha"].dominance == pytest.approx(0.75)
    assert rows["model-a"].overall.n_tasks == 3


def test_the_papers_table_imports_and_says_which_figures_reproduce(tmp_path, version, capsys):
    import_per_task(tmp_path)
    paper = (
        "model,harness,version,source,overall_avg,overall_best,overall_dom,alpha_avg,beta_dom\n"
        "model-a,terminus-2,1.1,Paper 2026 Table 2,0.350,0.350,0.44,0.35,\n"  # .4375 rounds to .44
        "model-b,terminus-2,1.1,Paper 2026 Table 2,0.460,,0.625,0.3,0.875\n"  # .45, not .46
        "model-z,terminus-2,1.1,Paper 2026 Table 2,0.2,,,,\n"  # no per-task scores
    )
    call_command("import_results", str(write(tmp_path, paper, "paper.csv")))
    out = capsys.readouterr().out
    assert PublishedFigure.objects.count() == 9
    assert "9 published figures created" in out
    assert "model-a / terminus-2, all tasks, Avg@k 0.350: reproduced (0.3500)" in out
    assert "model-a / terminus-2, all tasks, Dominance 0.44: reproduced (0.4375)" in out
    assert "model-b / terminus-2, all tasks, Avg@k 0.460: differs, the per-task scores give 0.4500" in out
    assert "model-b / terminus-2, beta, Dominance 0.875: reproduced (0.8750)" in out
    assert "model-z / terminus-2, all tasks, Avg@k 0.2: no per-task scores to check it against" in out
    assert "7 reproduced, 1 differing, 1 unchecked" in out
    # The page shows each paper figure beside ours, with its verdict.
    rows = published(version)
    figures = {(f.scope, f.measure): f for f in rows["model-b"].paper}
    assert figures[("", "avg")].status == "differs" and figures[("", "avg")].ours == pytest.approx(0.45)
    assert rows["model-z"].n_scores == 0 and rows["model-z"].overall is None
    # Paper-only entries are not in the published comparison set.
    assert rows["model-b"].overall.dominance == pytest.approx(0.625)


def test_paper_table_problems_are_reported_by_row_and_column(tmp_path, version):
    paper = (
        "model,harness,version,source,overall_avg,gamma_avg,overall_speed\n"
        "model-a,terminus-2,1.1,paper,1.2,,\n"
        "model-a,terminus-2,1.1,paper,0.3,0.2,\n"
    )
    with pytest.raises(CommandError) as raised:
        call_command("import_results", str(write(tmp_path, paper)))
    message = str(raised.value)
    assert "column 'gamma_avg': no category 'gamma' in version 1.1 (alpha, beta)" in message
    assert "column 'overall_speed'" in message
    assert PublishedFigure.objects.count() == 0


def test_a_score_above_1_on_a_clipping_version_is_refused_not_clipped(tmp_path, version):
    with pytest.raises(CommandError) as raised:
        call_command("import_results", str(write(tmp_path, PER_TASK + "model-a,terminus-2,1.1,t1,1.25,paper\n")))
    assert "row 2: score 1.25 is above 1, but version 1.1 clips rewards to [0, 1]" in str(raised.value)
    assert not PublishedResult.objects.exists()
    paper = "model,harness,version,source,overall_avg\nmodel-a,terminus-2,1.1,paper,1.1\n"
    with pytest.raises(CommandError, match="row 2: overall_avg 1.1 is above 1, but version 1.1 clips"):
        call_command("import_results", str(write(tmp_path, paper, "paper.csv")))


def test_a_version_that_does_not_clip_keeps_scores_above_1(tmp_path):
    cache.clear()
    v10 = BenchmarkVersion.objects.create(name="1.0", clip_rewards=False)
    Task.objects.create(version=v10, name="t1", category="alpha")
    call_command("import_results", str(write(tmp_path, PER_TASK + "model-a,terminus-2,1.0,t1,1.25,paper\n")), stdout=open("/dev/null", "w"))
    assert published(v10)["model-a"].overall.avg == pytest.approx(1.25)


def test_a_negative_score_is_refused(tmp_path, version):
    with pytest.raises(CommandError, match="row 2: score -0.1 is below 0"):
        call_command("import_results", str(write(tmp_path, PER_TASK + "model-a,terminus-2,1.1,t1,-0.1,paper\n")))


def test_the_leaderboard_sets_the_papers_figures_beside_ours(client, tmp_path, version):
    import_per_task(tmp_path)
    paper = "model,harness,version,source,overall_avg,overall_dom\nmodel-b,terminus-2,1.1,Table 2,0.460,0.625\n"
    call_command("import_results", str(write(tmp_path, paper, "paper.csv")), stdout=open("/dev/null", "w"))
    build_boards()
    html = client.get("/?version=1.1").content.decode()
    table = html.split('id="published-table"', 1)[1].split("</table>", 1)[0]
    # The printed figure is the figure, its mark beside it; the source is a footnote.
    # (Each the best of its column among the published main set: bold, as the measured table marks it.)
    best = '<strong class="best" title="the best of this column among the compared entries">{}</strong>'
    assert re.search(r'<span class="printed">%s</span><span class="mark differs" title="the per-task scores give 0.450">≠' % best.format("0.460"), table)
    assert re.search(r'<span class="printed">%s</span><span class="mark reproduced"[^>]*>✓' % best.format("0.625"), table)
    sources = html.split('id="published-sources"', 1)[1].split("</ol>", 1)[0]
    assert "Table 2" in sources or "Paper 2026" in sources
    assert 'id="published-legend"' in html
    model_page = client.get("/models/model-b/").content.decode()
    assert "all tasks dom 0.625 ✓" in model_page


def test_exports_carry_what_the_page_shows_of_a_version_with_published_results_only(tmp_path, version, client):
    """Such a version's leaderboard.csv was 2 bytes and its /api/v1/heatmap/ empty, while the page showed every figure."""
    import csv
    import io

    paper = (
        "model,harness,version,source,overall_avg,overall_best,overall_dom,alpha_avg\n"
        "model-z,terminus-2,1.1,Paper 2026 Table 2,0.412,0.6,0.55,0.3\n"
    )
    call_command("import_results", str(write(tmp_path, paper, "paper.csv")), stdout=open("/dev/null", "w"))
    import_per_task(tmp_path, source="Paper 2026 Table 9")
    build_boards()
    page = client.get("/?version=1.1").content.decode()
    assert "0.412" in page
    rows = list(csv.DictReader(io.StringIO(client.get("/api/v1/leaderboard.csv?version=1.1").content.decode())))
    by_model = {(r["model"], r["source"]): r for r in rows}
    printed = by_model[("model-z", "Paper 2026 Table 2")]
    assert (printed["origin"], printed["avg"], printed["best"], printed["dominance"], printed["avg_alpha"]) == (
        "published", "0.412", "0.6", "0.55", "0.3")
    assert float(by_model[("model-a", "Paper 2026 Table 9")]["avg"]) == pytest.approx(0.35)  # from its per-task scores
    cells = client.get("/api/v1/heatmap/?version=1.1").json()["cells"]
    mine = [c for c in cells if c["model"] == "model-b" and c["task"] == "t3"]
    assert mine == [{**mine[0], "avg": 1.0, "origin": "published", "source": "Paper 2026 Table 9"}]
    assert len([c for c in cells if c["origin"] == "published"]) == 11


@pytest.fixture
def autolab(db):
    cache.clear()
    version = BenchmarkVersion.objects.create(name="1.0", clip_rewards=False)
    for name, category in (("attn", "cuda"), ("lora", "model_development"), ("sort", "puzzle_and_challenge"),
                           ("join", "system_optimization")):
        Task.objects.create(version=version, name=name, category=category)
    return version


# As a paper prints its main table: no harness, version or source columns, its own scope names, a set column.
MAIN_TABLE = (
    "model,set,overall_avg,overall_best,overall_dom,cuda_avg,modeldev_avg,puzzle_avg,system_avg\n"
    "opus,main,0.41,0.52,0.61,0.3,0.4,0.5,0.44\n"
    "gpt,main,0.38,0.47,0.39,0.2,0.35,0.45,0.5\n"
    "opus-no-tools,ablation,0.2,0.3,,0.1,0.2,0.3,0.2\n"
)
WIDE = "task,opus,gpt,opus-no-tools\nattn,0.3,0.2,0.1\nlora,0.4,0.35,0.2\nsort,0.5,0.45,0.3\njoin,0.44,0.5,0.2\n"


def test_a_papers_tables_import_as_printed_with_options_for_what_they_leave_out(tmp_path, autolab, capsys):
    """The main table was refused (no harness, version or source; `modeldev` no scope), and so was the wide one."""
    options = ["--version", "1.0", "--harness", "terminus-2", "--source", "AutoLab paper, Table 2"]
    call_command("import_results", str(write(tmp_path, MAIN_TABLE, "main.csv")), *options)
    assert PublishedFigure.objects.filter(scope="model_development").count() == 3
    assert set(PublishedFigure.objects.filter(ablation=True).values_list("model__name", flat=True)) == {"opus-no-tools"}
    # The wide per-task table: one column per model, its set told by the option.
    main_only = "task,opus,gpt\n" + "\n".join(",".join(line.split(",")[:3]) for line in WIDE.splitlines()[1:]) + "\n"
    call_command("import_results", str(write(tmp_path, main_only, "wide.csv")), *options, "--source", "Table 9")
    ablations = "task,opus-no-tools\n" + "\n".join(f"{l.split(',')[0]},{l.split(',')[3]}" for l in WIDE.splitlines()[1:]) + "\n"
    call_command("import_results", str(write(tmp_path, ablations, "ablation.csv")), *options, "--source", "Table 9",
                 "--set", "ablation")
    assert PublishedResult.objects.count() == 12 and PublishedResult.objects.filter(ablation=True).count() == 4
    published = {p.model: p for p in serving.build(autolab).published if p.source == "Table 9"}
    # Ablations are apart: after the main entries, and outside their Dominance (which averages 0.5 over the two).
    assert [p.ablation for p in serving.build(autolab).published] == [False, False, True]
    assert published["opus"].overall.dominance + published["gpt"].overall.dominance == pytest.approx(1.0)
    assert not published["opus-no-tools"].compared
    # The paper's printed main-table figures sit on the entries they print, as printed.
    assert published["opus"].printed("model_development", "avg") == 0.4


def test_a_dry_run_says_what_would_be_imported_and_writes_nothing(tmp_path, autolab, capsys):
    call_command("import_results", str(write(tmp_path, MAIN_TABLE, "main.csv")), "--version", "1.0",
                 "--harness", "terminus-2", "--source", "paper", "--dry-run")
    out = capsys.readouterr().out
    assert "dry run, nothing written: 20 published figures would be created" in out
    assert PublishedFigure.objects.count() == 0
    assert serving.build(autolab).published == []


def test_a_wide_table_without_a_version_is_refused_naming_the_option(tmp_path, autolab):
    with pytest.raises(CommandError, match=r"missing column\(s\) harness, version, source \(--harness, --version, --source fill in those columns\)"):
        call_command("import_results", str(write(tmp_path, WIDE, "wide.csv")))
    assert PublishedResult.objects.count() == 0


def test_a_semicolon_table_is_told_so_and_no_option_that_does_not_exist_is_named(tmp_path, autolab):
    """A per-task table separated by semicolons suggested "(or the option --model)": there is no --model."""
    per_task = PER_TASK + "opus,terminus-2,1.0,attn,0.3,Table 9\n"
    for table in (per_task, MAIN_TABLE):
        with pytest.raises(CommandError) as raised:
            call_command("import_results", str(write(tmp_path, table.replace(",", ";"), "table.csv")))
        assert "row 1 (header): the file is separated by semicolons, not commas" in str(raised.value)
        assert "--model" not in str(raised.value)
    with pytest.raises(CommandError) as raised:
        call_command("import_results", str(write(tmp_path, "task,score\nattn,0.3\n", "table.csv")))
    assert "missing column(s) model, harness, version, source (--harness, --version, --source fill in those columns)" in str(
        raised.value) and "--model" not in str(raised.value)


def test_importing_the_same_table_again_changes_nothing_and_says_so(tmp_path, autolab, capsys):
    """It reported every figure "updated"."""
    options = ["--version", "1.0", "--harness", "terminus-2", "--source", "AutoLab paper, Table 2"]
    call_command("import_results", str(write(tmp_path, MAIN_TABLE, "main.csv")), *options)
    assert "20 published figures created, 0 updated, 0 unchanged" in capsys.readouterr().out
    call_command("import_results", str(write(tmp_path, MAIN_TABLE, "main.csv")), *options)
    assert "0 published figures created, 0 updated, 20 unchanged" in capsys.readouterr().out
    call_command("import_results", str(write(tmp_path, MAIN_TABLE.replace("0.41", "0.42"), "main.csv")), *options)
    assert "0 published figures created, 1 updated, 19 unchanged" in capsys.readouterr().out
    call_command("import_results", str(write(tmp_path, WIDE, "wide.csv")), *options)
    assert "12 published scores created, 0 updated, 0 unchanged" in capsys.readouterr().out
    call_command("import_results", str(write(tmp_path, WIDE, "wide.csv")), *options)
    assert "0 published scores created, 0 updated, 12 unchanged" in capsys.readouterr().out


def test_the_leaderboard_csv_says_which_published_rows_are_ablations(tmp_path, autolab, client):
    """The CSV said ablation=False for every published row of a main table imported as printed; JSON and page were right."""
    import csv
    import io

    options = ["--version", "1.0", "--harness", "terminus-2", "--source", "AutoLab paper, Table 2"]
    call_command("import_results", str(write(tmp_path, MAIN_TABLE, "main.csv")), *options, stdout=open("/dev/null", "w"))
    build_boards()
    text = client.get("/api/v1/leaderboard.csv?version=1.0").content.decode()
    in_csv = {r["model"]: r["ablation"] for r in csv.DictReader(io.StringIO(text)) if r["origin"] == "published"}
    in_json = {p["model"]: p["ablation"] for p in client.get("/api/v1/leaderboard/?version=1.0").json()["published"]}
    assert in_json == {"opus": False, "gpt": False, "opus-no-tools": True}
    assert in_csv == {model: str(flag).lower() for model, flag in in_json.items()}


def test_the_heatmap_page_shows_the_published_per_task_scores_its_exports_carry(tmp_path, version, client):
    """The page showed the task names and none of the published figures its CSV and JSON carry."""
    import_per_task(tmp_path)
    build_boards()
    cells = [c for c in client.get("/api/v1/heatmap/?version=1.1").json()["cells"] if c["origin"] == "published"]
    assert len(cells) == 11
    html = client.get("/heatmap/?version=1.1").content.decode()
    board = html.split('id="heatmap-table"', 1)[1].split("</table>", 1)[0]
    for name in ("model-a", "model-b", "model-c"):
        assert name in board.split("</thead>", 1)[0]
    shown = re.findall(r'<td class="num cell published[^"]*"[^>]*data-task="([^"]+)" data-model="([^"]+)"[^>]*>([0-9.]+)</td>',
                       board)
    assert sorted(shown) == sorted((c["task"], c["model"], f'{c["avg"]:.3f}') for c in cells)
    assert "Paper 2026, Table 9" in html  # whose figures they are


def test_each_figure_keeps_its_own_source_on_the_board_and_the_model_page(tmp_path, version, client):
    """A main table from "A", then per-task scores from `--source B`: both cited, not only B (issue 46)."""
    table = "model,harness,version,source,overall_avg\nmodel-a,terminus-2,1.1,Paper A Table 2,0.35\n"
    call_command("import_results", str(write(tmp_path, table, "main.csv")), stdout=open("/dev/null", "w"))
    wide = "task,model-a\nt1,0.5\nt2,0.2\nt3,0.7\n"
    call_command("import_results", str(write(tmp_path, wide, "wide.csv")), "--version", "1.1", "--harness", "terminus-2",
                 "--source", "Paper B Table 9", stdout=open("/dev/null", "w"))
    (entry,) = serving.build(version).published
    assert entry.sources == ["Paper B Table 9", "Paper A Table 2"]
    assert {f.source for f in entry.paper} == {"Paper A Table 2"}

    page = client.get("/?version=1.1").content.decode()
    footnotes = re.search(r'<ol class="sources muted" id="published-sources">(.*?)</ol>', page, re.S).group(1)
    assert "Paper A Table 2" in footnotes and "Paper B Table 9" in footnotes
    assert 'href="#source-1"' in page and 'href="#source-2"' in page
    model_page = client.get("/models/model-a/").content.decode()
    cell = re.search(r'<td class="source">(.*?)</td>', model_page, re.S).group(1)
    assert "Paper A Table 2" in cell and "Paper B Table 9" in cell
    assert "Paper B Table 9; Paper A Table 2" in client.get("/api/v1/leaderboard.csv?version=1.1").content.decode()
