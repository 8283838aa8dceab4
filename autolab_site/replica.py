"""Pages read from a PostgreSQL read replica, when one is configured (DATABASE_REPLICA_URL).

Only reads of a web request with a safe method (GET, HEAD) go to the
replica, and only outside a transaction: every write, every task of a
worker, every read inside `atomic()` (which may lock rows or must see what
it wrote) uses the primary. A client that has just written (a form's POST,
then its redirect) reads from the primary for PRIMARY_AFTER_WRITE_SEC: a
replica lags its primary, and staff must see their own change at once.
"""
from __future__ import annotations

import time
from contextvars import ContextVar

from django.conf import settings
from django.db import connections

REPLICA = "replica"
PRIMARY_AFTER_WRITE_SEC = 10
COOKIE = "autolab_wrote"

_reading_replica: ContextVar[bool] = ContextVar("reading_replica", default=False)


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


def read_alias() -> str:
    """Where a read goes now: the replica in a safe request outside a transaction, else the primary."""
    if _reading_replica.get() and replica_configured() and not connections["default"].in_atomic_block:
        return REPLICA
    return "default"


class ReplicaRouter:
    """Django's database router: reads where `read_alias` says, writes and migrations on the primary."""

    def db_for_read(self, model, **hints) -> str:
        return read_alias()

    def db_for_write(self, model, **hints) -> str:
        return "default"

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True  # one database, copied

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints) -> bool:
        return db == "default"


def reads_replica(method: str, cookies: dict[str, str], now: float) -> bool:
    """Whether a request's reads may go to the replica: safe, and not just after the client wrote."""
    if method not in ("GET", "HEAD"):
        return False
    try:
        wrote_at = float(cookies.get(COOKIE, ""))
    except ValueError:
        wrote_at = 0.0
    return now - wrote_at >= PRIMARY_AFTER_WRITE_SEC


class ReplicaReadsMiddleware:
    """Marks the reads of safe requests for the replica, and remembers when a client wrote."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not replica_configured():
            return self.get_response(request)
        now = time.time()
        token = _reading_replica.set(reads_replica(request.method, request.COOKIES, now))
        try:
            response = self.get_response(request)
        finally:
            _reading_replica.reset(token)
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            response.set_cookie(COOKIE, f"{now:.3f}", max_age=PRIMARY_AFTER_WRITE_SEC, httponly=True, samesite="Lax")
        return response
