"""Human baselines: the CSV of scoring events, their entries on the board, published human figures."""
from __future__ import annotations

import io
import math
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from evaluations.boards import compute
from evaluations.results.human_baselines import HumanBaselineError
from evaluations.results.human_import import import_human_csv
from agents.models import AgentModel, Harness
from evaluations.models import Entry, PublishedFigure
from tasks.models import BenchmarkVersion
from tasks.services import import_tasks
from trajectories.models import Rollout

from evaluations.tests.board_factories import build_boards, make_rollout

pytestmark = pytest.mark.django_db
REBENCH_TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "rebench"
H = 3600

# Two attempts per task; window_sums by raw runtime (normalised here), scaling_forecast by score.
CSV = """attempt_id,task,cohort,source,elapsed_seconds,score,raw_score
h1,window_sums,"Human experts, 8 h",professional network,3600,,1.0
h1,window_sums,"Human experts, 8 h",professional network,28800,,0.1
h2,window_sums,"Human experts, 8 h",hiring process,7200,,0.5
h2,window_sums,"Human experts, 8 h",hiring process,28800,,2.0
h3,scaling_forecast,"Human experts, 8 h",graduate outreach,14400,0.9,
h3,scaling_forecast,"Human experts, 8 h",graduate outreach,28800,0.4,
h4,scaling_forecast,"Human experts, 8 h",hiring process,28800,0.8,
"""


@pytest.fixture
def version():
    assert import_tasks(REBENCH_TASKS, version="rebench-examples").ok
    return BenchmarkVersion.objects.get(name="rebench-examples")


def test_a_rebench_version_takes_the_score_log_convention_and_never_clips(version):
    assert version.scoring == "best_of_score_log" and not version.clip_rewards and version.benchmark == "RE-Bench"
    assert version.tasks.get(name="scaling_forecast").final_only


def test_attempts_become_rollouts_of_the_cohort(version):
    report = import_human_csv(CSV, version)
    assert (report.created, report.cohorts) == (4, ["Human experts, 8 h"])
    h1 = Rollout.objects.get(trial_name="human__rebench-examples__h1")
    assert h1.model.kind == "human" and str(h1.harness) == "human"
    ln = math.log
    expected = [(ln(1.0) - ln(5)) / (ln(0.1) - ln(5)), 1.0]
    assert [e["score"] for e in h1.score_log] == pytest.approx(expected)
    assert [e["t"] for e in h1.score_log] == [3600, 28800]
    assert h1.reward == pytest.approx(1.0) and h1.agent_duration_sec == 8 * H
    assert h1.verifier_fields["source"] == "professional network"
    again = import_human_csv(CSV, version)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 4)


def test_the_board_scores_humans_by_their_convention_and_keeps_them_apart(version):
    import_human_csv(CSV, version)
    data = compute.compute_board(version)
    human = next(e for e in data.entries if e.human)
    assert human.comparison is False
    cells = data.cells
    window = version.tasks.get(name="window_sums").id
    scaling = version.tasks.get(name="scaling_forecast").id
    # window_sums: the best of each log (1.0 and 0.5's score, h2's final being worse than its first).
    ln = math.log
    h2 = (ln(0.5) - ln(5)) / (ln(0.1) - ln(5))
    assert sorted(cells[window][human.key].scores) == pytest.approx(sorted([1.0, h2]))
    # scaling_forecast is final-only: h3's final 0.4, not its earlier 0.9.
    assert sorted(cells[scaling][human.key].scores) == pytest.approx([0.4, 0.8])
    assert human.overall.avg == pytest.approx(((1.0 + h2) / 2 + 0.6) / 2)
    assert human.overall.dominance is None


def test_staff_may_put_humans_in_the_agents_dominance_set(version):
    import_human_csv(CSV, version)
    model, harness = AgentModel.objects.create(name="agent-x"), Harness.objects.create(name="inspect")
    make_rollout(version.tasks.get(name="window_sums"), model, harness, 0.5)
    human = Rollout.objects.filter(model__kind="human").first().model
    assert compute.compute_board(version).n_comparison == 1
    Entry.objects.create(model=human, harness=Rollout.objects.filter(model=human).first().harness, version=version,
                         humans_compete=True)
    data = compute.compute_board(version)
    assert data.n_comparison == 2
    assert next(e for e in data.entries if e.human).overall.dominance is not None


@pytest.mark.parametrize(
    "text, message",
    [
        ("attempt_id,task,cohort\nh1,window_sums,c\n", "missing column(s) elapsed_seconds"),
        ("attempt_id,task,cohort,elapsed_seconds,score\nh1,window_sums,c,60,\n", "line 2: give a score or a raw_score"),
        ("attempt_id,task,cohort,elapsed_seconds,score\nh1,window_sums,c,-5,0.1\n", "line 2: elapsed_seconds"),
        ("attempt_id,task,cohort,elapsed_seconds,score\nh1,window_sums,c,5,abc\n", "line 2: score must be a number"),
        ("attempt_id,task,cohort,elapsed_seconds,raw_score\nh1,window_sums,c,5,-1\n", "cannot be scored"),
        ("attempt_id,task,cohort,elapsed_seconds,score\nh1,nope,c,5,0.1\n", "no task nope"),
        ("attempt_id,task,cohort,elapsed_seconds,score\nh1,window_sums,c,5,0.1\nh1,scaling_forecast,c,6,0.1\n",
         "line 3: attempt h1 was window_sums"),
    ],
)
def test_bad_files_are_refused_whole_naming_the_line(version, text, message):
    good = "h9,window_sums,c,5,0.1\n" if "raw_score" not in text.splitlines()[0] else ""
    with pytest.raises(HumanBaselineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_human_csv(text + good, version)
    assert Rollout.objects.count() == 0


def test_the_command(version, tmp_path):
    path = tmp_path / "humans.csv"
    path.write_text(CSV)
    out = io.StringIO()
    call_command("import_humans", str(path), "--version", "rebench-examples", stdout=out)
    assert "4 created" in out.getvalue()
    path.write_text("attempt_id,task\n")
    with pytest.raises(CommandError, match="nothing imported"):
        call_command("import_humans", str(path), "--version", "rebench-examples")


def test_the_papers_human_figures_are_published_results(version, tmp_path):
    source = "RE-Bench, Wijk et al. 2024 (arXiv 2411.15114): 71 eight-hour attempts by 61 experts"
    table = tmp_path / "paper.csv"
    table.write_text(
        "model,harness,version,source,overall_avg\n"
        f'"Human experts, 8 h",human,rebench-examples,"{source}",0.64\n'
        f'"Human experts, 8 h (professional networks)",human,rebench-examples,"{source}, by recruiting source",0.98\n'
    )
    call_command("import_results", str(table), stdout=io.StringIO())
    figure = PublishedFigure.objects.get(model__name="Human experts, 8 h")
    assert figure.value == 0.64 and figure.model.kind == "human" and str(figure.harness) == "human"
    published = compute.compute_board(version).published
    assert {p.model for p in published} == {"Human experts, 8 h", "Human experts, 8 h (professional networks)"}
    assert all(p.human and p.source.startswith("RE-Bench") for p in published)


def test_the_agent_filters_keep_the_human_reference(version):
    import_human_csv(CSV, version)
    model, harness = AgentModel.objects.create(name="agent-x", open_weight=False), Harness.objects.create(name="inspect")
    make_rollout(version.tasks.get(name="window_sums"), model, harness, 0.5)
    for data in (compute.compute_board(version, harness=harness.id), compute.compute_board(version, open_weight=False)):
        assert {e.model for e in data.entries} == {"agent-x", "Human experts, 8 h"}
        assert data.n_comparison == 1
        assert set(data.time_curves[""].entries) == {e.key for e in data.entries}


def test_the_page_shows_humans_apart_and_published_human_figures_as_published(version, client, tmp_path):
    import_human_csv(CSV, version)
    table = tmp_path / "paper.csv"
    table.write_text('model,harness,version,source,overall_avg\n"Human experts, 8 h (paper)",human,rebench-examples,"RE-Bench paper",0.64\n')
    call_command("import_results", str(table), stdout=io.StringIO())
    build_boards(version)
    html = client.get("/", {"version": "rebench-examples"}).content.decode()
    humans = html.split('id="human-baselines"')[1].split("</tbody>")[0]
    assert "Human experts, 8 h" in humans and "a human baseline: a reference, not ranked" in humans
    published = html.split('id="published-table"')[1].split("</table>")[0]
    assert "Human experts, 8 h (paper)" in published and ">published</span>" in published and "RE-Bench paper" in published
    rows = client.get("/api/v1/rollouts.csv", {"version": "rebench-examples"}).content.decode()
    assert '""t"": 3600' in rows  # the score log as JSON


def test_the_rollout_page_says_what_the_leaderboard_counts(version, client):
    import_human_csv(CSV, version)
    h2 = Rollout.objects.get(trial_name="human__rebench-examples__h2")
    h3 = Rollout.objects.get(trial_name="human__rebench-examples__h3")
    html = client.get(f"/rollouts/{h2.pk}/").content.decode()
    run = html.split('id="run-score"')[1].split("</dd>")[0]
    ln = math.log
    assert f"<strong>{(ln(0.5) - ln(5)) / (ln(0.1) - ln(5)):.4f}</strong>" in run and "the best of 2 intermediate scores" in run
    run = client.get(f"/rollouts/{h3.pk}/").content.decode().split('id="run-score"')[1].split("</dd>")[0]
    assert "<strong>0.4</strong>" in run and "final-only" in run  # its final, not its earlier 0.9
