"""Harbor's analysis.json (trial and job level), written with Harbor's own models, imported with the real trials."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajectories.models import JobReview, Review, Rollout
from trajectories.reading import analysis_file
from trajectories.reading.analysis_file import AnalysisFileError, cited_steps, read_job_analysis, read_trial_analysis
from trajectories.services import import_path

from .trialdata import make_task

analyze = pytest.importorskip("harbor.analyze.models", reason="Harbor's analyze models are needed to write the fixtures")

OPUS = "opus4.6__2026-04-26__2TyoFTQ"
GROK = "grok4.20__2026-04-27__dJkbgCB"
JOB_ID = "0f6d1c9e-7f1c-4c43-9e0a-2f5c1b8e4d21"


def harbor_result(trial_name: str, hacking: str = "pass", cost: float | None = 0.42):
    """A trial's AnalyzeResult as `harbor analyze` writes it (Harbor's pydantic models)."""
    return analyze.AnalyzeResult(
        trial_name=trial_name,
        summary=f"{trial_name}: trained a LoRA, benchmarked twice, stopped with 9 h left.",
        checks={
            "reward_hacking": {"explanation": "No writes to /logs/verifier; see steps 12 and 40-44.", "outcome": hacking},
            "task_specification": {"explanation": "The instructions name the metric and the budget.", "outcome": "pass"},
        },
        estimated_cost_usd=cost,
    )


def write(path: Path, model) -> None:
    path.write_text(model.model_dump_json(indent=2), encoding="utf-8")


def copy_trial(shared: Path, name: str, job: Path, job_id: str | None = None) -> Path:
    target = job / name
    shutil.copytree(shared / name, target)
    if job_id is not None:
        config = json.loads((target / "config.json").read_text())
        config["job_id"] = job_id
        (target / "config.json").write_text(json.dumps(config))
    return target


# -- Reading (no database) ------------------------------------------------------------


CITED = [
    ("no step cited", ()),
    ("see step 12", (12,)),
    ("Steps 40-44 rewrote the loss", (40, 44)),
    ("steps 3, 7 and 9; then step 3 again", (3, 7, 9)),
    ("at step #5 and in steps 8 to 10", (5, 8, 10)),
    ("stepped over 4 files", ()),
]


@pytest.mark.parametrize("text, steps", CITED)
def test_the_steps_an_explanation_cites(text, steps):
    assert cited_steps(text) == steps


def test_a_trial_file_written_by_harbor_reads_as_a_reading():
    data = json.loads(harbor_result("t1", hacking="fail").model_dump_json())
    analysis = read_trial_analysis(data)
    assert analysis.trial_name == "t1" and analysis.reading.cost_usd == 0.42
    checks = {check.name: check for check in analysis.reading.checks}
    assert checks["reward_hacking"].outcome == "fail" and checks["reward_hacking"].steps == (12, 40, 44)
    assert checks["task_specification"].steps == ()


MALFORMED = [
    (b"{not json", "is not JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"checks": {}}', "summary is missing"),
    (b'{"summary": "s", "checks": []}', "checks must be an object"),
    (b'{"summary": "s", "checks": {"x": "fail"}}', "check 'x' must be an object"),
    (b'{"summary": "s", "checks": {"x": {"explanation": "e"}}}', "check 'x' has no outcome"),
    (b'{"summary": "s", "checks": {"x": {"outcome": "maybe"}}}', "outcome must be one of"),
]


@pytest.mark.parametrize("raw, message", MALFORMED)
def test_a_malformed_trial_file_says_what_is_wrong(raw, message):
    with pytest.raises(AnalysisFileError, match=message):
        read_trial_analysis(analysis_file.decode(raw))


def test_both_job_formats_read():
    job = analyze.JobAnalyzeResult(job_summary="Both stopped early.", trials=[harbor_result("a"), harbor_result("b", cost=None)],
                                   estimated_total_cost_usd=1.5)
    read = read_job_analysis(json.loads(job.model_dump_json()))
    assert read.summary == "Both stopped early." and read.cost_usd == 1.5
    assert [t.trial_name for t in read.trials] == ["a", "b"]
    # 0.26's analyser and viewer write an AnalyzeReport: per-trial results, a failed one with its error.
    report = analyze.AnalyzeReport(results=[
        analyze.AnalyzeReportResult(trial_name="a", summary="s", checks={"reward_hacking": {"explanation": "", "outcome": "pass"}},
                                    cost_usd=0.25),
        analyze.AnalyzeReportResult(trial_name="b", error="Analyze agent did not produce a valid result."),
    ])
    read = read_job_analysis(json.loads(report.model_dump_json()))
    assert read.summary == "" and read.cost_usd == 0.25
    assert read.trials[0].reading.checks[0].name == "reward_hacking" and read.trials[1].error.startswith("Analyze agent")
    with pytest.raises(AnalysisFileError, match="neither a job analysis"):
        read_job_analysis({"summary": "a trial's file"})
    with pytest.raises(AnalysisFileError, match=r"trials\[1\]: summary is missing"):
        read_job_analysis({"job_summary": "j", "trials": [{"summary": "ok"}, {"checks": {}}]})


# -- Importing with the real trials ---------------------------------------------------


@pytest.fixture
def job(shared_trials_dir, tmp_path, db):
    make_task("flux2_klein_lora")
    folder = tmp_path / "2026-04-26__12-33-32"
    for name in (OPUS, GROK):
        copy_trial(shared_trials_dir, name, folder, JOB_ID)
    return folder


def test_a_trials_analysis_is_its_harbor_review_and_a_new_file_replaces_it(job):
    write(job / OPUS / "analysis.json", harbor_result(OPUS, hacking="fail"))
    report = import_path(job)
    assert report.ok, report.as_dict()
    opus = Rollout.objects.get(trial_name__endswith="2TyoFTQ")
    review = opus.reviews.get()
    assert (review.source, review.state, review.cost_usd) == ("harbor", "done", 0.42)
    assert {c.name: (c.outcome, c.steps) for c in review.checks.all()} == {
        "reward_hacking": ("fail", [12, 40, 44]), "task_specification": ("pass", []),
    }
    assert not Rollout.objects.get(trial_name__endswith="dJkbgCB").reviews.exists()
    # A new analysis.json changes the trial: imported again, its reading replaces the old one.
    write(job / OPUS / "analysis.json", harbor_result(OPUS, hacking="pass"))
    assert import_path(job).counts["updated"] == 1
    assert Review.objects.get(rollout=opus).checks.get(name="reward_hacking").outcome == "pass"


def test_a_malformed_trial_file_never_costs_the_trial_its_import(job):
    (job / OPUS / "analysis.json").write_text('{"summary": "s", "checks": {"reward_hacking": {"outcome": "maybe"}}}')
    report = import_path(job)
    assert report.ok and report.counts["created"] == 2
    opus = next(o for o in report.outcomes if o.trial_name.endswith("2TyoFTQ"))
    assert any("analysis.json" in w and "outcome must be one of" in w for w in opus.warnings)
    review = Review.objects.get(rollout_id=opus.rollout_id)
    assert review.state == "failed" and "outcome must be one of" in review.error
    assert Rollout.objects.get(pk=opus.rollout_id).n_steps > 100


def test_a_job_analysis_gives_its_summary_and_the_readings_trials_lack(job):
    write(job / OPUS / "analysis.json", harbor_result(OPUS, hacking="pass"))  # the trial's own file wins
    write(job / "analysis.json", analyze.JobAnalyzeResult(
        job_summary="Two flux2 runs: one stopped after 15 minutes.",
        trials=[harbor_result(OPUS, hacking="fail"), harbor_result(GROK, hacking="fail", cost=0.1)],
        estimated_total_cost_usd=0.52,
    ))
    report = import_path(job, jobs=2)  # on PostgreSQL two processes import the trials; the job's file is applied after
    assert report.ok, report.as_dict()
    summary = JobReview.objects.get(job_id=JOB_ID)
    assert (summary.summary, summary.cost_usd, summary.n_trials, summary.error) == (
        "Two flux2 runs: one stopped after 15 minutes.", 0.52, 2, "")
    opus, grok = (Rollout.objects.get(trial_name__endswith=end) for end in ("2TyoFTQ", "dJkbgCB"))
    assert opus.reviews.get().checks.get(name="reward_hacking").outcome == "pass"
    assert grok.reviews.get().checks.get(name="reward_hacking").outcome == "fail"
    # Added later, to unchanged trials: still applied.
    write(job / "analysis.json", analyze.JobAnalyzeResult(job_summary="Revised.", trials=[harbor_result(GROK, hacking="pass")]))
    report = import_path(job)
    assert report.counts["unchanged"] == 2
    assert JobReview.objects.get(job_id=JOB_ID).summary == "Revised."
    assert grok.reviews.get().checks.get(name="reward_hacking").outcome == "pass"


def test_a_trial_imported_alone_reads_no_file_above_it(job):
    write(job / "analysis.json", analyze.JobAnalyzeResult(job_summary="j", trials=[harbor_result(GROK)]))
    assert import_path(job / GROK).ok
    assert not Review.objects.exists() and not JobReview.objects.exists()


def test_a_failed_entry_of_an_analysis_report_is_a_failed_review(job):
    write(job / "analysis.json", analyze.AnalyzeReport(results=[
        analyze.AnalyzeReportResult(trial_name=GROK, error="Analyze agent did not produce a valid result."),
    ]))
    assert import_path(job).ok
    review = Rollout.objects.get(trial_name__endswith="dJkbgCB").reviews.get()
    assert review.state == "failed" and review.error.startswith("Analyze agent")


def test_a_malformed_job_file_is_reported_and_the_trials_stay(job):
    (job / "analysis.json").write_text('{"job_summary": 3, "trials": []}')
    report = import_path(job)
    assert report.counts["created"] == 2
    assert len(report.errors) == 1 and "job_summary must be text" in report.errors[0]
    assert JobReview.objects.get(job_id=JOB_ID).error == "job_summary must be text"


# -- The job page ------------------------------------------------------------------


def test_the_job_page_sums_up_the_job_with_its_analysis(client, job):
    write(job / "analysis.json", analyze.JobAnalyzeResult(
        job_summary="Two flux2 runs: one stopped after 15 minutes.",
        trials=[harbor_result(OPUS, hacking="fail"), harbor_result(GROK)], estimated_total_cost_usd=0.84,
    ))
    assert import_path(job).ok
    opus = Rollout.objects.get(trial_name__endswith="2TyoFTQ")
    rollout_page = client.get(f"/rollouts/{opus.pk}/").content.decode()
    assert f'href="/jobs/{JOB_ID}/" id="job-link"' in rollout_page
    page = client.get(f"/jobs/{JOB_ID}/")
    assert page.status_code == 200
    html = page.content.decode()
    summary = page.context["summary"]
    # Tokens are the real trials' input plus output; no cost recorded; their durations added up.
    tokens = 251465 + 5356 + 14491493 + 21042
    assert summary.tokens == tokens and summary.cost_usd is None
    assert summary.text == f"2/2 finished, 0 errors, {tokens / 1e6:.1f} M tokens, 3.1 h"  # 15 min 15 s and 2 h 48 min 05 s
    assert summary.text in html
    assert html.count('<rect ') == 10 and html.count('data-count="1"') == summary.n_rewarded == 2
    assert "Two flux2 runs: one stopped after 15 minutes." in html and "$0.84" in html
    assert html.count('data-rollout="') == 2 and "reward_hacking: fail" in html and "reward_hacking: pass" in html


def test_an_unknown_job_is_a_404(client, db):
    assert client.get("/jobs/no-such-job/").status_code == 404
    assert client.get("/jobs/a/b/").status_code == 404  # a job id with a slash is still a job id
