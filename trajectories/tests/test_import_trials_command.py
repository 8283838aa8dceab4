"""The import_trials management command."""
from __future__ import annotations

import io
import json
import signal

import pytest
from django.core.management import CommandError, call_command

from trajectories import services
from trajectories.management.commands.import_trials import progress_line
from trajectories.models import Rollout

from .trialdata import make_task, make_trial

pytestmark = pytest.mark.django_db


def run(*args) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("import_trials", *[str(a) for a in args], stdout=out, stderr=err)
        code = 0
    except CommandError as exc:
        code = exc.returncode
        err.write(str(exc))
    return out.getvalue(), err.getvalue(), code


@pytest.fixture
def jobs(tmp_path):
    make_task("demo_task")
    for n in range(3):
        make_trial(tmp_path / "jobs" / "job-1", f"lib__demo_task__{n}")
    return tmp_path / "jobs"


def test_lines_and_summary(jobs):
    out, _, code = run(jobs)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "lib__demo_task__0: created: demo_task, test-model, terminus-2 2.0.0, 3 steps, reward 0.5"
    assert lines[-1].startswith("3 created, 0 updated, 0 unchanged, 0 failed of 3 trials (9 steps stored)")
    out, _, code = run(jobs)
    assert code == 0 and out.strip().splitlines()[-1].startswith("0 created, 0 updated, 3 unchanged")
    assert Rollout.objects.count() == 3


def test_force_imports_unchanged_trials_anew(jobs):
    from trajectories.models import Step

    assert run(jobs)[2] == 0
    ids = dict(Rollout.objects.values_list("trial_name", "pk"))
    analysed = dict(Step.objects.values_list("pk", "kinds"))
    assert any(analysed.values())
    # Rows from an older release: no kinds, no search words.
    Step.objects.update(kinds="", search_document="")
    out, _, code = run(jobs)
    assert code == 0 and "3 unchanged" in out.splitlines()[-1]
    assert not any(Step.objects.values_list("kinds", flat=True))

    out, _, code = run(jobs, "--force")
    assert code == 0 and out.strip().splitlines()[-1].startswith("0 created, 3 updated, 0 unchanged, 0 failed")
    assert dict(Rollout.objects.values_list("trial_name", "pk")) == ids
    assert sorted(Step.objects.values_list("kinds", flat=True)) == sorted(analysed.values())
    assert all(Step.objects.values_list("search_document", flat=True))


def test_json_document(jobs):
    make_trial(jobs / "job-1", "lib__zzz__9", task_name="lib__zzz")
    out, _, code = run(jobs, "--json")
    assert code == 1
    document = json.loads(out)
    assert document["counts"] == {"created": 3, "updated": 0, "unchanged": 0, "failed": 1}
    first = document["trials"][0]
    assert first["task"] == "demo_task" and first["model"] == "test-model" and first["harness"] == "terminus-2 2.0.0"
    assert first["rollout_id"] == Rollout.objects.get(trial_name="lib__demo_task__0").pk
    assert first["n_steps"] == 3 and first["n_episodes"] == 2
    assert first["tokens"] == {"input": 1000, "cached": 100, "output": 50}
    assert first["reward"] == 0.5 and first["verifier_fields"] == {"reward": 0.5, "metric": 12.5}
    rollout = Rollout.objects.get(pk=first["rollout_id"])
    assert first["exception_type"] == ""
    assert (first["n_benchmark_calls"], first["n_edits"]) == (rollout.n_benchmark_calls, rollout.n_edits)
    failed = document["trials"][-1]
    assert failed["outcome"] == "failed" and "no registered task matches 'lib__zzz'" in failed["error"]
    assert set(failed) == {"path", "trial_name", "outcome", "error"}


def test_real_trials_json(shared_trials_dir):
    make_task("flux2_klein_lora")
    out, _, code = run(shared_trials_dir, "--json")
    assert code == 0
    trials = {t["model"]: t for t in json.loads(out)["trials"]}
    assert trials["claude-opus-4.6"]["n_steps"] == 139 and trials["claude-opus-4.6"]["reward"] == 0.9102
    assert trials["claude-opus-4.6"]["tokens"] == {"input": 14_491_493, "cached": 0, "output": 21_042}
    assert trials["xai-grok-4-20-reasoning"]["verifier_fields"]["reason"] == "no_lora_file"


def test_failure_gives_non_zero_exit(jobs):
    (jobs / "job-1" / "lib__demo_task__1" / "agent" / "trajectory.json").write_text("{oops")
    out, err, code = run(jobs)
    assert code == 1
    assert "lib__demo_task__1: failed:" in out and "trajectory.json" in out
    assert "1 trial(s) failed" in err
    assert Rollout.objects.count() == 2


def test_missing_path(tmp_path):
    out, err, code = run(tmp_path / "nope")
    assert code == 1 and "no such file or folder" in out


def test_ctrl_c_stops_between_trials_and_a_rerun_continues(jobs, monkeypatch):
    real = services.ingest_trial_dir
    calls = []

    def ingest_then_press_ctrl_c(*args, **kwargs):
        calls.append(1)
        outcome = real(*args, **kwargs)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)
        return outcome

    monkeypatch.setattr(services, "ingest_trial_dir", ingest_then_press_ctrl_c)
    # Python's default (KeyboardInterrupt), or SIG_IGN when the tests run in a background job.
    before = signal.getsignal(signal.SIGINT)
    out, err, code = run(jobs)
    assert code == 130
    assert "interrupted after 1 of 3 trials" in err
    assert "stopping after the current trial" in err
    assert Rollout.objects.count() == 1
    # The command's handler is gone: the one before it is back.
    assert signal.getsignal(signal.SIGINT) is before

    monkeypatch.setattr(services, "ingest_trial_dir", real)
    out, _, code = run(jobs)
    assert code == 0 and "2 created, 0 updated, 1 unchanged" in out


def test_keyboard_interrupt_during_a_trial_rolls_it_back(jobs, monkeypatch):
    from trajectories.storing import ingest
    from trajectories.models import Step, ToolCall

    real = ingest.insert_rows
    calls = []

    def interrupted_second_trial(model, rows):
        if model is ToolCall:
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt
        return real(model, rows)

    monkeypatch.setattr(ingest, "insert_rows", interrupted_second_trial)
    out, err, code = run(jobs)
    assert code == 130 and "1 created" in out and "interrupted" in out
    # The second trial's rollout and steps were rolled back with it.
    assert Rollout.objects.count() == 1 and Step.objects.count() == 3


def test_progress_line():
    assert progress_line(0, 10, 0.0) == "0/10 trials, 0.0/s, ETA ?"
    assert progress_line(5, 10, 2.5) == "5/10 trials, 2.0/s, ETA 2.5s"
    assert progress_line(1, 1000, 1.0) == "1/1000 trials, 1.0/s, ETA 16m 39s"
