"""A large board is never computed in a request: the page serves the last one with its age while a worker
(the task evaluations.rebuild_board, on its own queue) brings it up to date."""
from __future__ import annotations

import time

import pytest

from evaluations.boards import board as board_shape
from evaluations.boards import compute, serving
from trajectories.models import Rollout

from evaluations.tests.board_factories import hand_table, make_rollout

NOTICE = "newer results have come in since"


@pytest.fixture
def redis_cache(settings, redis_broker):
    """A cache every process shares (Redis), as a deployment with workers has: LocMemCache is per process."""
    url = redis_broker.rsplit("/", 1)[0] + "/14"
    import redis

    redis.Redis.from_url(url).flushdb()
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
    settings.AUTOLAB_BOARD_INLINE_MAX_ROLLOUTS = 0  # every board counts as large
    serving.forget_recent_boards()
    yield url
    redis.Redis.from_url(url).flushdb()


@pytest.mark.django_db
def test_the_last_board_is_served_with_its_age_while_a_worker_rebuilds(client, redis_cache, redis_app):
    world = hand_table()
    first = client.get("/", {"version": "1.1"})
    assert first.status_code == 200 and NOTICE not in first.content.decode()
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)

    # The request does not compute: it serves the board from before the rollout, says so, and asks a
    # worker for the new one (a message on the boards queue; no worker runs here).
    stale = client.get("/", {"version": "1.1"})
    html = stale.content.decode()
    assert NOTICE in html and "being updated" in html
    assert "computed less than a minute ago" in html
    assert "Model A" in html
    api = client.get("/api/v1/leaderboard/", {"version": "1.1"})
    assert api["X-Board-Stale"] == "1"
    before = {e["model"]: e["avg"] for e in api.json()["entries"]}
    assert client.get("/heatmap/", {"version": "1.1"}).content.decode().count(NOTICE) == 1

    # What the worker runs.
    assert "rollouts read" in serving.rebuild(world["version"].id, None, None)
    assert NOTICE not in client.get("/", {"version": "1.1"}).content.decode()
    api = client.get("/api/v1/leaderboard/", {"version": "1.1"})
    assert api["X-Board-Stale"] == "0"
    after = {e["model"]: e["avg"] for e in api.json()["entries"]}
    assert after["model-a"] > before["model-a"]
    assert after == {e.model: e.overall.avg for e in compute.compute_board(world["version"]).entries}


@pytest.mark.django_db
def test_the_last_board_a_process_holds_is_served_without_reading_it_again(redis_cache, redis_app):
    """A new rollout moves the generation: the page serves the last board, which this process made or read
    already. It is served as the object in hand, not unpickled from the cache again (~25 ms at 100 entries)."""
    world = hand_table()
    first, freshness = serving.served_board(world["version"])
    assert not freshness.stale
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
def test_a_worker_pickles_the_board_it_stores_once(redis_cache, redis_app, monkeypatch):
    """The last board's entry names the stored board instead of holding a second copy of it: a second
    pickling was a fifth of a worker's update at 100 entries."""
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
    # one, read through the name its entry holds.
    serving.forget_recent_boards()
    current, freshness = serving.served_board(world["version"])
    assert current == pickled[0] and current is not pickled[0] and not freshness.stale
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
    serving.forget_recent_boards()
    last, freshness = serving.served_board(world["version"])
    assert freshness.stale and last == pickled[0]
    assert len(pickled) == 1  # serving stores nothing


@pytest.mark.django_db
def test_a_per_process_cache_keeps_no_pickled_board(settings):
    """With LocMemCache the process's own memory is the cache: the board is not pickled into it as well."""
    from django.core.cache import cache

    world = hand_table()
    serving.served_board(world["version"])
    key = serving.board_key(world["version"].id)
    assert serving._recalled(key) is not None and cache.get(key) is None


@pytest.mark.django_db
def test_a_page_says_so_when_no_worker_can_be_asked(client, redis_cache, broker_down):
    world = hand_table()
    client.get("/", {"version": "1.1"})
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
    html = client.get("/heatmap/", {"version": "1.1"}).content.decode()
    assert NOTICE in html and "could not be updated" in html


@pytest.mark.django_db
def test_the_embedded_default_computes_in_the_request(client, settings):
    """With the per-process cache, no worker's board would reach the page: it is computed here, as before."""
    settings.AUTOLAB_BOARD_INLINE_MAX_ROLLOUTS = 0
    world = hand_table()
    client.get("/", {"version": "1.1"})
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
    response = client.get("/api/v1/leaderboard/", {"version": "1.1"})
    assert response["X-Board-Stale"] == "0"
    assert response.json()["entries"][0]["avg"] == compute.compute_board(world["version"]).entries[0].overall.avg


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_on_the_boards_queue_brings_the_page_up_to_date(client, redis_cache, worker_env, tmp_path, redis_app):
    from evaluations.tests.worker_helpers import Worker

    worker = Worker({**worker_env, "CACHE_URL": redis_cache}, tmp_path / "boards.log", queues=("boards",))
    try:
        worker.wait_ready()
        world = hand_table()
        client.get("/", {"version": "1.1"})
        make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.0, index=9)
        assert NOTICE in client.get("/", {"version": "1.1"}).content.decode()
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            response = client.get("/api/v1/leaderboard/", {"version": "1.1"})
            if response["X-Board-Stale"] == "0":
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the board was not rebuilt: {worker.output()[-2000:]}")
        assert Rollout.objects.count() == serving.build(world["version"]).n_rollouts
        assert "rollouts read" in worker.output()
    finally:
        worker.kill()
