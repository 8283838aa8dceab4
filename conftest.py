"""Fixtures shared by every app's tests."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("AUTOLAB_SHARED_DIR", ROOT.parent / "shared"))
SHARED_TASKS = SHARED / "autolab" / "tasks"
SHARED_TRIALS = SHARED / "autolab" / "trials"
# AutoLab v1.1's own task directories, whole (33 of its 36: task.toml, environment/, tests/, solution/).
SHARED_V11_TASKS = SHARED / "autolab-v1.1" / "tasks"
EXAMPLE_TASKS = ROOT / "examples" / "tasks"


@pytest.fixture(scope="session", autouse=True)
def broker_namespace():
    """This test session's name space on the Redis broker (evaluations.tests.worker_helpers.BrokerNamespace),
    None when Redis is not reachable. Everything the session sends, and every worker it starts, uses it:
    sessions sharing a Redis database (CI's CELERY_BROKER_URL, every session on a host) never take or
    delete each other's messages. At the end its keys, and only them, are deleted, and any worker the
    session started and left running is killed (a worker also dies with the session's process; the keys of
    a session killed before its end are deleted by the next session on the host)."""
    from evaluations.tests.worker_helpers import BrokerNamespace, Worker

    namespace = BrokerNamespace.new()
    if not namespace.reachable():
        yield None
        Worker.kill_all()
        return
    BrokerNamespace.sweep(namespace.url)  # what sessions killed on this host left
    namespace.enter()
    try:
        yield namespace
    finally:
        Worker.kill_all()
        namespace.leave()


@pytest.fixture(autouse=True)
def plain_static_files(settings):
    """Pages name static files plainly in tests, whatever a `make demo` left in staticfiles/.

    WhiteNoise then serves them from the finders, so tests always see the
    files of the checkout, never a stale collected copy.
    """
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}


@pytest.fixture(autouse=True)
def no_recent_boards():
    """Each test starts without the boards an earlier test's process kept (evaluations.boards.serving's
    recent boards: a rolled-back database may give a new version an old one's id and generation)."""
    from evaluations.boards.serving import forget_recent_boards

    forget_recent_boards()
    yield
    forget_recent_boards()


@pytest.fixture(autouse=True)
def roomy_search_budget(settings):
    """Searches in tests run to completion, whatever the machine's load.

    The time budget (AUTOLAB_SEARCH_TIMEOUT_SEC, 1 s) guards a public site;
    a test of a few hundred statements on a loaded 2-core CI machine can
    pass it and get part of its answer. Tests of the budget set their own.
    """
    settings.AUTOLAB_SEARCH_TIMEOUT_SEC = 60


@pytest.fixture
def migrate():
    """`migrate([(app, migration)])` moves the test database to a migration and returns that state's apps;
    the database is moved forward again afterwards. For tests of data migrations."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    def to(target):
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(target)
        # (app, None) unapplies all of an app's migrations: no node of the state.
        return executor.loader.project_state([node for node in target if node[1] is not None]).apps

    def latest():
        """The database at the newest migrations: where the site's own code (search, models) may run on it."""
        return to(MigrationExecutor(connection).loader.graph.leaf_nodes())

    to.latest = latest
    yield to
    latest()


@pytest.fixture
def shared_tasks_dir() -> Path:
    if not SHARED_TASKS.is_dir():
        pytest.skip(f"real AutoLab tasks not found at {SHARED_TASKS} (../shared is absent)")
    return SHARED_TASKS


@pytest.fixture
def real_tasks_dir() -> Path:
    if not SHARED_V11_TASKS.is_dir():
        pytest.skip(f"AutoLab v1.1's task directories not found at {SHARED_V11_TASKS} (../shared is absent)")
    return SHARED_V11_TASKS


@pytest.fixture
def shared_trials_dir() -> Path:
    if not SHARED_TRIALS.is_dir():
        pytest.skip(f"real Harbor trials not found at {SHARED_TRIALS} (../shared is absent)")
    return SHARED_TRIALS


def chromium_path() -> str | None:
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def browser():
    """A headless Debian Chromium driven by Playwright (no downloaded browser)."""
    executable = chromium_path()
    if executable is None:
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop; Django refuses ORM calls from
    # a thread with a running loop unless told this is intended (tests only).
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def pytest_collection_modifyitems(config, items):
    """Run browser tests last.

    Playwright's sync API keeps an asyncio loop running on the main thread for
    as long as the session-scoped browser lives; tests that call
    asyncio.run() (Harbor trials) must therefore run before the first
    browser test.
    """
    items.sort(key=lambda item: "browser" in getattr(item, "fixturenames", ()))
