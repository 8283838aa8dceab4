"""Fixtures of the evaluations tests: cold caches, the hand-made board, real brokers and workers."""
import pytest
from django.core.cache import cache

from evaluations.tests.board_factories import build_boards, hand_table


@pytest.fixture(autouse=True)
def clear_cache():
    """Boards are cached per process: every test starts and ends cold."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def world():
    """The hand-computed 3-entry x 4-task table, stored as rollouts, and its board (no filters) built, as the
    boards worker would have: a page never builds one. A test that changes rollouts, or asks for filters,
    builds again (board_factories.build_boards)."""
    found = hand_table()
    build_boards(found["version"])
    return found


@pytest.fixture
def redis_broker():
    """This test run's Redis database, emptied before and after."""
    import redis

    from evaluations.tests.worker_helpers import broker_url, purge

    try:
        redis.Redis.from_url(broker_url(), socket_connect_timeout=1).ping()
    except redis.exceptions.ConnectionError:
        pytest.skip(f"Redis is not reachable at {broker_url()}")
    purge()
    yield broker_url()
    purge()


@pytest.fixture
def worker_env(tmp_path, redis_broker, settings):
    from evaluations.tests.worker_helpers import process_env

    return process_env(tmp_path, redis_broker, settings)


@pytest.fixture
def worker(worker_env, tmp_path):
    from evaluations.tests.worker_helpers import Worker

    started = Worker(worker_env, tmp_path / "worker.log")
    yield started
    started.kill()


def use_broker(url: str | None) -> None:
    """Point this process's Celery app's sending at another broker (None: back to the configured one).

    Sending reads broker_write_url: setting broker_url would do nothing where CELERY_BROKER_URL is in the
    environment (as in CI), since Celery's settings prefer that variable."""
    from kombu import pools

    from autolab_site.celery import app

    app.conf.broker_write_url = url
    # Connections and producers are pooled per broker: start afresh.
    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def redis_app(redis_broker):
    """The Celery app of this process sending to this test's Redis database (whatever the suite's broker)."""
    use_broker(redis_broker)
    yield redis_broker
    use_broker(None)


@pytest.fixture
def broker_down():
    """The Celery app of this process sending to a Redis port nothing listens on."""
    use_broker("redis://127.0.0.1:1/0")
    yield
    use_broker(None)


@pytest.fixture(params=("podman", "docker"))
def engine(request):
    """A container engine this host runs (each test runs on both; skipped with the reason where one is missing)."""
    from evaluations.tests.container_helpers import require_engine

    require_engine(request.param)
    return request.param
