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
def redis_broker(broker_namespace):
    """This session's name space on Redis (a `BrokerNamespace`), emptied before and after the test."""
    from evaluations.tests.worker_helpers import broker_url

    if broker_namespace is None:
        pytest.skip(f"Redis is not reachable at {broker_url()}")
    broker_namespace.clean()
    yield broker_namespace
    broker_namespace.clean()


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


@pytest.fixture
def redis_app(redis_broker):
    """The Celery app of this process sending to this session's name space on Redis (whatever the suite's
    broker); yields the `BrokerNamespace`."""
    from evaluations.tests.worker_helpers import use_broker

    use_broker(redis_broker.url, redis_broker)
    yield redis_broker
    use_broker(None)


@pytest.fixture
def broker_down():
    """The Celery app of this process sending to a Redis port nothing listens on."""
    from evaluations.tests.worker_helpers import use_broker

    use_broker("redis://127.0.0.1:1/0")
    yield
    use_broker(None)


@pytest.fixture(params=("podman", "docker"))
def engine(request):
    """A container engine this host runs (each test runs on both; skipped with the reason where one is missing)."""
    from evaluations.tests.container_helpers import require_engine

    require_engine(request.param)
    return request.param
