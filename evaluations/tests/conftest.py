"""Fixtures of the leaderboard tests."""
import pytest
from django.core.cache import cache

from .board_factories import hand_table


@pytest.fixture(autouse=True)
def clear_cache():
    """Boards are cached per process: every test starts and ends cold."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def world():
    """The hand-computed 3-entry x 4-task table, stored as rollouts."""
    return hand_table()
