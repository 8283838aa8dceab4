"""A board is never built in a request: a page serves the last board stored (the cache, else the database)
with its age, or says that it is being built, while the one build asked for runs on the boards queue (the
task evaluations.rebuild_board)."""
from __future__ import annotations

import re
import time
from datetime import timedelta
from pathlib import Path

import pytest

from evaluations.boards import board as board_shape
from evaluations.boards import compute, serving
from evaluations.models import StoredBoard
from trajectories.models import Rollout

from evaluations.tests.board_factories import build_boards, hand_table, make_rollout

NOTICE = "newer results have come in since"
BUILDING = "is being built"


@pytest.fixture
def redis_cache(settings, redis_broker):
    """A cache every process shares (Redis), as a deployment with workers has: LocMemCache is per process.

    In this session's name space (its keys start with the session's prefix; emptied with it): the
    environment a worker needs to share it."""
    prefix = redis_broker.key("cache")
    settings.CACHES = {"default": {
        "BACKEND": "evaluations.tests.worker_helpers.NamespacedRedisCache", "LOCATION": redis_broker.url,
        "KEY_PREFIX": prefix,
    }}
    serving.forget_recent_boards()
    yield {"CACHE_URL": redis_broker.url, "AUTOLAB_CACHE_KEY_PREFIX": prefix}


@pytest.fixture
def sent(monkeypatch):
    """The builds asked of the boards queue, recorded instead of sent."""
    asked = []
    monkeypatch.setattr(serving.dispatch, "send_rebuild", lambda *which: asked.append(which) or "task-id")
    return asked


@pytest.mark.django_db
def test_a_board_never_built_is_being_built_and_asked_for_once(client, sent):
    world = hand_table()
    which = (world["version"].id, None, None)
    for _ in range(4):  # four first views: one build asked for
        page = client.get("/", {"version": "1.1"})
        assert page.status_code == 202 and page["Retry-After"] == "5"
        html = page.content.decode()
        assert BUILDING in html and "Model A" not in html
        assert '<meta http-equiv="refresh" content="5">' in html
    assert client.get("/heatmap/", {"version": "1.1"}).status_code == 202
    api = client.get("/api/v1/leaderboard/", {"version": "1.1"})
    assert api.status_code == 202 and api.json()["status"] == "building" and api["X-Board-Status"] == "building"
    assert client.get("/charts/", {"version": "1.1"}).json()["status"] == "building"
    assert sent == [which]
    assert not StoredBoard.objects.get().data  # nothing built in a request

    # What the worker runs: the board stored, its claim let go.
    assert "rollouts read" in serving.rebuild(*which)
    assert StoredBoard.objects.get().build_claimed_at is None
    page = client.get("/", {"version": "1.1"})
    assert page.status_code == 200 and "Model A" in page.content.decode() and NOTICE not in page.content.decode()
    assert client.get("/api/v1/leaderboard/", {"version": "1.1"})["X-Board-Status"] == "current"
    assert sent == [which]


@pytest.mark.django_db
def test_the_last_board_is_served_with_its_age_while_a_worker_rebuilds(client, sent):
    world = hand_table()
    build_boards(world["version"])
    first = client.get("/", {"version": "1.1"})
    assert first.status_code == 200 and NOTICE not in first.content.decode()
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)

    # The request does not compute: it serves the board from before the rollout, says so, and asks a
    # worker for the new one, once.
    stale = client.get("/", {"version": "1.1"})
    html = stale.content.decode()
    assert NOTICE in html and "being updated" in html
    assert "computed less than a minute ago" in html
    assert "Model A" in html
    api = client.get("/api/v1/leaderboard/", {"version": "1.1"})
    assert api["X-Board-Stale"] == "1" and api["X-Board-Status"] == "stale"
    before = {e["model"]: e["avg"] for e in api.json()["entries"]}
    assert client.get("/heatmap/", {"version": "1.1"}).content.decode().count(NOTICE) == 1
    assert len(sent) == 1

    assert "rollouts read" in serving.rebuild(world["version"].id, None, None)
    assert NOTICE not in client.get("/", {"version": "1.1"}).content.decode()
    api = client.get("/api/v1/leaderboard/", {"version": "1.1"})
    assert api["X-Board-Stale"] == "0"
    after = {e["model"]: e["avg"] for e in api.json()["entries"]}
    assert after["model-a"] > before["model-a"]
    assert after == {e.model: e.overall.avg for e in compute.compute_board(world["version"]).entries}


@pytest.mark.django_db
def test_a_flushed_cache_serves_the_board_stored_in_the_database(client, redis_cache, sent):
    """After a flush (Redis restarted, a deploy), another process serves the stored board, never builds."""
    from django.core.cache import cache

    world = hand_table()
    built = serving.build(world["version"])
    cache.clear()
    serving.forget_recent_boards()  # another process
    served, freshness = serving.served_board(world["version"])
    assert served == built and served is not built and not freshness.stale
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
    cache.clear()
    serving.forget_recent_boards()
    html = client.get("/", {"version": "1.1"}).content.decode()
    assert NOTICE in html and "Model A" in html
    assert len(sent) == 1


@pytest.mark.django_db
def test_a_build_asked_for_twice_is_made_once(sent):
    """A claim that outlived BUILD_CLAIM_SEC (its worker died) is claimed again; a second message for a
    board already current is answered without a build."""
    world = hand_table()
    which = (world["version"].id, None, None)
    assert serving.request_build(*which) and serving.request_build(*which)
    assert len(sent) == 1
    StoredBoard.objects.update(build_claimed_at=StoredBoard.objects.get().build_claimed_at - timedelta(seconds=serving.BUILD_CLAIM_SEC + 1))
    assert serving.request_build(*which) and len(sent) == 2
    assert "rollouts read" in serving.rebuild(*which)
    serving.forget_recent_boards()  # the worker that takes the second message
    assert "already current" in serving.rebuild(*which)


@pytest.mark.django_db
def test_with_eager_tasks_a_page_still_never_builds(client):
    """Where Celery runs tasks in the caller (task_always_eager), asking for a build would build in the
    request: nothing is sent, and the page says the board is being built until something builds it."""
    from autolab_site.celery import app

    world = hand_table()
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        assert client.get("/", {"version": "1.1"}).status_code == 202
        assert not StoredBoard.objects.get().data
        build_boards(world["version"])
        assert client.get("/", {"version": "1.1"}).status_code == 200
    finally:
        app.conf.task_always_eager = previous


@pytest.mark.django_db
def test_the_last_board_a_process_holds_is_served_without_reading_it_again(redis_cache, sent):
    """A new rollout moves the generation: the page serves the last board, which this process made or read
    already. It is served as the object in hand, not unpickled again (~25 ms at 100 entries)."""
    world = hand_table()
    first = serving.build(world["version"])
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
    time.sleep(0.01)
    stale, freshness = serving.served_board(world["version"])
    assert freshness.stale and stale is first

    # A board another process stored (a worker's) is not in this one's memory: read from the cache.
    serving.rebuild(world["version"].id, None, None)
    serving.forget_recent_boards()
    rebuilt, freshness = serving.served_board(world["version"])
    assert not freshness.stale and rebuilt is not first
    assert rebuilt.n_rollouts == first.n_rollouts + 1


@pytest.mark.django_db
def test_a_worker_pickles_the_board_it_stores_in_the_cache_once(redis_cache, monkeypatch, sent):
    from django.core.cache.backends import redis as redis_backend

    world = hand_table()
    pickled = []
    dumps = redis_backend.RedisSerializer.dumps

    def counted(self, obj):
        if isinstance(obj, board_shape.Board):
            pickled.append(obj)
        return dumps(self, obj)

    monkeypatch.setattr(redis_backend.RedisSerializer, "dumps", counted)
    serving.rebuild(world["version"].id, None, None)
    assert len(pickled) == 1

    # Another process, holding no board, serves the stored one as current; after a new rollout, as the last
    # one, from the database.
    serving.forget_recent_boards()
    current, freshness = serving.served_board(world["version"])
    assert current == pickled[0] and current is not pickled[0] and not freshness.stale
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
    serving.forget_recent_boards()
    last, freshness = serving.served_board(world["version"])
    assert freshness.stale and last == pickled[0]
    assert len(pickled) == 1  # serving stores nothing


@pytest.mark.django_db
def test_a_per_process_cache_keeps_no_pickled_board(sent):
    """With LocMemCache the process's own memory is the cache: the board is not pickled into it as well;
    other processes read the one stored in the database."""
    from django.core.cache import cache

    world = hand_table()
    serving.build(world["version"])
    key = serving.board_key(world["version"].id)
    assert serving._recalled(key) is not None and cache.get(key) is None
    serving.forget_recent_boards()  # another process (a web worker beside the boards worker)
    served, freshness = serving.served_board(world["version"])
    assert served is not None and not freshness.stale and sent == []


@pytest.mark.django_db
def test_a_page_says_so_when_no_worker_can_be_asked(client, broker_down):
    world = hand_table()
    html = client.get("/heatmap/", {"version": "1.1"}).content.decode()
    assert "could not be asked for" in html
    assert StoredBoard.objects.get().build_claimed_at is None  # the next request asks again
    api = client.get("/api/v1/leaderboard/", {"version": "1.1"})
    assert api.status_code == 503 and api.json()["status"] == "unavailable"
    build_boards(world["version"])
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
    html = client.get("/heatmap/", {"version": "1.1"}).content.decode()
    assert NOTICE in html and "could not be updated" in html


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_on_the_boards_queue_builds_the_page(client, redis_cache, worker_env, tmp_path, redis_app):
    from evaluations.tests.worker_helpers import Worker

    worker = Worker({**worker_env, **redis_cache}, tmp_path / "boards.log", queues=("boards",))
    try:
        worker.wait_ready()
        world = hand_table()
        assert client.get("/", {"version": "1.1"}).status_code == 202
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            response = client.get("/api/v1/leaderboard/", {"version": "1.1"})
            if response.status_code == 200:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the board was not built: {worker.output()[-2000:]}")
        make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
        assert NOTICE in client.get("/", {"version": "1.1"}).content.decode()
        while time.monotonic() < deadline:
            response = client.get("/api/v1/leaderboard/", {"version": "1.1"})
            if response["X-Board-Stale"] == "0":
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the board was not rebuilt: {worker.output()[-2000:]}")
        assert Rollout.objects.count() == serving.board(world["version"]).n_rollouts
        assert "rollouts read" in worker.output()
    finally:
        worker.kill()


# Who may build a board: the boards worker's task (serving.rebuild, through serving.build), the command that
# builds them ahead (build_boards), and compute itself. A page, the API or a query that called one of these
# would compute a board in a request again.
BUILDERS = re.compile(r"\b(compute_board|updated_board|_updated|_compute|_build)\(|serving\.build\(|^from [\w.]+ import [^\n]*\bbuild\b", re.M)
# The builders themselves and the commands staff run by hand (no request waits on them).
MAY_BUILD = {
    "evaluations/boards/compute.py", "evaluations/boards/serving.py", "evaluations/management/commands/build_boards.py",
    "evaluations/management/commands/compare_entries.py",
}


def test_no_request_path_builds_a_board():
    root = Path(__file__).resolve().parents[2]
    found = []
    for app in ("autolab_site", "agents", "tasks", "trajectories", "evaluations", "submissions"):
        for path in sorted((root / app).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            if "/tests/" in where or "/migrations/" in where or where in MAY_BUILD:
                continue
            found += [f"{where}: {m.group(0)}" for m in BUILDERS.finditer(path.read_text())]
    assert found == []
    # The check sees a builder where there is one.
    assert BUILDERS.search("data = serving.build(version)") and BUILDERS.search("compute.compute_board(v)")
    assert BUILDERS.search("from evaluations.boards.serving import board, build") and not BUILDERS.search("# import to build")
