"""Where the site's SECRET_KEY comes from when the environment gives none.

A constant fallback key would sign every session and password-reset link of
every site that forgot to set one with the same public value. So: a site
with nothing configured (`make demo`, a laptop) generates a random key once
into its data directory, readable by its owner only; a site that answers to
public host names with DEBUG off and no SECRET_KEY refuses to start, because
there the key must come from the operator (every web server and worker must
share it, and a data volume is the wrong place to keep it).

Django-free: settings import this before Django is configured.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

KEY_FILE_NAME = "secret_key"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


class MissingSecretKey(RuntimeError):
    """The configuration needs an explicit SECRET_KEY and has none."""


def is_local(hosts: list[str]) -> bool:
    """True when every allowed host is this machine (no public name, no "*")."""
    return all(host.strip().lower() in LOCAL_HOSTS for host in hosts)


def resolve_secret_key(environ_key: str | None, *, debug: bool, hosts: list[str], data_dir: Path) -> str:
    """The key to use: the environment's, else (local or DEBUG only) the data directory's."""
    if environ_key:
        return environ_key
    if not debug and not is_local(hosts):
        raise MissingSecretKey(
            "SECRET_KEY is not set, and ALLOWED_HOSTS names a public host "
            f"({', '.join(hosts)}) with DEBUG off. Set SECRET_KEY in the environment "
            "(for example SECRET_KEY=$(openssl rand -hex 32)), the same on every web "
            "server and worker. Only a site that answers on 127.0.0.1/localhost (or "
            "runs with DEBUG=true) generates a key of its own into its data directory."
        )
    return read_or_create_key(data_dir / KEY_FILE_NAME)


def read_or_create_key(path: Path) -> str:
    """The key in `path`, created once (mode 0600) if absent.

    Several processes start at once (gunicorn workers, Celery): the key is
    written to a private temporary file and linked into place, so a reader
    sees either no file or the whole key, and exactly one key wins.
    """
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50) + "\n")
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process won: use its key
    finally:
        temporary.unlink(missing_ok=True)
    return _read(path)


def _read(path: Path) -> str:
    # A key file others can read is not secret: take their permissions away.
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)
    key = path.read_text().strip()
    if not key:
        raise MissingSecretKey(f"the secret key file {path} is empty: remove it to generate a new key")
    return key
