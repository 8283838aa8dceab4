"""Importing on several processes: the same result as one process (PostgreSQL).

Workers commit their own transactions, which a test transaction would hide
from them, so these tests commit for real (transaction=True).
"""
import threading
from datetime import timedelta

import pytest
from django.db import connection

from trajectories.storing import bulk
from trajectories.models import Rollout, Step
from trajectories.services import import_path

from .trialdata import START, make_task, make_trial

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="parallel import runs on PostgreSQL only"),
]


def make_job(root, prefix: str, n: int, models=("openai/model-a", "openai/model-b")):
    for index in range(n):
        make_trial(
            root,
            f"lib__demo_task__{prefix}{index:03d}",
            model=models[index % len(models)],
            n_agent_steps=3 + index % 4,
            start=START + timedelta(minutes=index),
        )
    return root


def stored(prefix: str):
    rows = Step.objects.filter(rollout__trial_name__contains=f"__{prefix}").order_by("rollout__trial_name", "position")
    return [
        (r.rollout.trial_name.split("__")[-1][1:], r.position, r.step_id, r.kinds, r.message, set(r.search_document.split()))
        for r in rows.select_related("rollout")
    ]


@pytest.fixture(autouse=True)
def parallel_possible():
    # Else import_path would quietly import on one process and test nothing new.
    assert bulk.usable_jobs(3) == 3, f"threads running in this test process: {threading.enumerate()}"


def test_a_parallel_import_stores_what_a_serial_one_does(tmp_path):
    make_task("demo_task")
    serial = import_path(make_job(tmp_path / "serial", "s", 12), jobs=1)
    parallel = import_path(make_job(tmp_path / "parallel", "p", 12), jobs=3)
    assert serial.ok and parallel.ok, parallel.as_dict()
    assert parallel.counts["created"] == 12
    # The report lists trials in folder order, whatever order they finished in.
    assert [o.trial_name for o in parallel.outcomes] == [f"lib__demo_task__p{i:03d}" for i in range(12)]
    assert stored("p") == stored("s")
    # Repeats of each (task, model, harness) are numbered 0..n-1, each once,
    # though workers numbered the same groups at the same time.
    for model_id in Rollout.objects.values_list("model_id", flat=True).distinct():
        group = Rollout.objects.filter(model_id=model_id)
        assert sorted(r.index for r in group) == list(range(group.count()))
    again = import_path(tmp_path / "parallel", jobs=3)
    assert again.counts["unchanged"] == 12
    # Forced, the workers import every trial anew, to the same rows.
    Step.objects.filter(rollout__trial_name__contains="__p").update(kinds="")
    forced = import_path(tmp_path / "parallel", jobs=3, force=True)
    assert forced.counts["updated"] == 12
    assert stored("p") == stored("s")


def test_stopping_hands_out_no_more_trials_and_a_rerun_continues(tmp_path):
    make_task("demo_task")
    job = make_job(tmp_path, "x", 10)
    first = import_path(job, jobs=2, should_stop=lambda: True)
    assert first.interrupted and 1 <= first.done < 10
    assert Rollout.objects.count() == first.done
    rest = import_path(job, jobs=2)
    assert rest.ok and rest.counts["unchanged"] == first.done and rest.counts["created"] == 10 - first.done


def test_one_process_inside_a_transaction_or_beside_other_threads():
    from django.db import transaction

    assert bulk.usable_jobs(4) == 4 and bulk.usable_jobs(None) >= 1
    with transaction.atomic():
        assert bulk.usable_jobs(4) == 1
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert bulk.usable_jobs(4) == 1
    finally:
        stop.set()
        other.join()
