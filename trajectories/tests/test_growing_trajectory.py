"""GrowingTrajectory: the steps a rewritten trajectory.json gained, read without decoding the rest again."""
from __future__ import annotations

import json

import pytest
from harbor.utils.trajectory_utils import format_trajectory_json

from trajectories.reading.growing_trajectory import GrowingTrajectory, NotYet


def document(n: int, **tail) -> dict:
    steps = [
        {"step_id": i, "source": "agent", "message": f"step {i} — ünïcode", "metrics": {"prompt_token_ids": [1, 2, 3]}}
        for i in range(1, n + 1)
    ]
    return {"schema_version": "ATIF-v1.6", "agent": {"name": "terminus-2"}, "steps": steps, **tail}


WRITERS = {
    "harbor": lambda data: format_trajectory_json(data).encode(),
    "indent-2": lambda data: json.dumps(data, indent=2).encode(),
    "compact": lambda data: json.dumps(data, ensure_ascii=False).encode(),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_each_read_returns_the_new_steps_and_the_tail(writer):
    write = WRITERS[writer]
    growing = GrowingTrajectory()
    assert growing.restart(write(document(0))) == document(0)
    seen = []
    for n in (1, 2, 5, 5, 9):
        growth = growing.read(write(document(n, final_metrics={"total_steps": n})))
        assert growth is not None
        seen += growth.steps
        assert growth.tail == {"final_metrics": {"total_steps": n}}
        assert growing.n_steps == n
    assert seen == document(9)["steps"]


def test_a_rewritten_step_or_another_document_is_not_a_continuation():
    write = WRITERS["harbor"]
    growing = GrowingTrajectory()
    assert growing.restart(write(document(3)))["steps"] == document(3)["steps"]
    changed = document(4)
    changed["steps"][1]["message"] = "revised"
    assert growing.read(write(changed)) is None
    assert growing.read(write({"steps": [{"step_id": 1}]})) is None
    assert GrowingTrajectory().read(write(document(1))) is None  # nothing read yet


def test_a_file_caught_mid_write_is_not_yet_readable_and_is_read_once_written():
    write = WRITERS["harbor"]
    growing = GrowingTrajectory()
    growing.restart(write(document(3)))
    whole = write(document(5))
    for cut in (0, 10, len(write(document(3))) - 20, len(whole) - 40, len(whole) - 1):
        with pytest.raises(NotYet):
            growing.read(whole[:cut])
    assert [step["step_id"] for step in growing.read(whole).steps] == [4, 5]


@pytest.mark.parametrize("raw", [b"", b"[]", b'{"steps": 3}', b'{"agent": {}}', b'{"steps": []} trailing', b"\xff{}"])
def test_restart_refuses_what_is_no_trajectory(raw):
    assert GrowingTrajectory().restart(raw) is None


def test_keys_before_the_steps_are_part_of_what_must_not_change():
    growing = GrowingTrajectory()
    growing.restart(json.dumps({"session_id": "a", "steps": [{"step_id": 1}]}).encode())
    assert growing.read(json.dumps({"session_id": "b", "steps": [{"step_id": 1}, {"step_id": 2}]}).encode()) is None


def test_many_reads_of_one_step_each():
    write = WRITERS["harbor"]
    growing = GrowingTrajectory()
    growing.restart(write(document(3)))
    for n in range(4, 200):
        growth = growing.read(write(document(n)))
        assert [step["step_id"] for step in growth.steps] == [n]
    whole = write(document(200))
    with pytest.raises(NotYet):
        growing.read(whole[: len(whole) // 2])
    changed = document(200)
    changed["steps"][150]["message"] = "changed"
    assert growing.read(write(changed)) is None
    assert [step["step_id"] for step in growing.read(whole).steps] == [200]
