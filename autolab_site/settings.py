"""Settings for autolab-site, read from the environment.

With no environment variables at all the site runs on a bare machine: SQLite
in the data directory and Celery on kombu's filesystem transport. Production
(docker-compose, CI) sets DATABASE_URL and CELERY_BROKER_URL to PostgreSQL and
Redis.
"""
from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from autolab_site.secret_key import MissingSecretKey, resolve_secret_key

# litellm otherwise fetches a price list from the internet at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("AUTOLAB_DATA_DIR", BASE_DIR / "data")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
# Tests add Django's "testserver" themselves.
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Never a constant: SECRET_KEY from the environment, else (local hosts or
# DEBUG only) one generated into the data directory (autolab_site.secret_key).
try:
    SECRET_KEY = resolve_secret_key(os.environ.get("SECRET_KEY"), debug=DEBUG, hosts=ALLOWED_HOSTS, data_dir=DATA_DIR)
except MissingSecretKey as error:
    raise ImproperlyConfigured(str(error)) from None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "tasks",
    "agents",
    "evaluations",
    "trajectories",
    "submissions",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Pages and API answers compressed for clients that ask (a rollout page's
    # HTML is ~100 KB, a tenth of that gzipped); static files are WhiteNoise's,
    # precompressed. Django pads each with random bytes against BREACH, and
    # CSRF tokens are masked per response.
    "django.middleware.gzip.GZipMiddleware",
    "autolab_site.middleware.RejectInvalidInputMiddleware",
    "autolab_site.replica.ReplicaReadsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "autolab_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "autolab_site.wsgi.application"

DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'db.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file (not :memory:) so that a real Celery worker started by a test
    # can open the same test database; the pid keeps parallel runs apart.
    DATABASES["default"]["TEST"] = {
        "NAME": os.environ.get("AUTOLAB_TEST_DB") or str(DATA_DIR / f"test-{os.getpid()}.sqlite3")
    }
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    DATABASES["default"]["CONN_MAX_AGE"] = 0
else:
    DATABASES["default"]["TEST"] = {"NAME": os.environ.get("AUTOLAB_TEST_DB") or "test_autolab_site"}

# A PostgreSQL read replica for the pages (autolab_site/replica.py): safe requests read from it
# outside transactions; writes, workers and anything inside atomic() use the primary.
if os.environ.get("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = dj_database_url.parse(os.environ["DATABASE_REPLICA_URL"], conn_max_age=60)
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
DATABASE_ROUTERS = ["autolab_site.replica.ReplicaRouter"]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # After collectstatic: hashed names, gzip copies, far-future cache headers (autolab_site.storage).
    "staticfiles": {"BACKEND": "autolab_site.storage.StaticStorage"},
    # Trial folders, once their trial ends (trajectories.storing.artifacts): shared by
    # the web servers and every worker host. A folder by default; an
    # S3-compatible bucket (django-storages) with AUTOLAB_ARTIFACTS_S3_BUCKET.
    "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(Path(os.environ.get("AUTOLAB_ARTIFACTS_DIR", DATA_DIR / "artifacts")))},
    },
}
if os.environ.get("AUTOLAB_ARTIFACTS_S3_BUCKET"):
    STORAGES["artifacts"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": os.environ["AUTOLAB_ARTIFACTS_S3_BUCKET"],
            # MinIO and other S3-compatible stores: their URL, and path-style addressing.
            "endpoint_url": os.environ.get("AUTOLAB_ARTIFACTS_S3_ENDPOINT_URL") or None,
            "region_name": os.environ.get("AUTOLAB_ARTIFACTS_S3_REGION") or None,
            "addressing_style": "path" if os.environ.get("AUTOLAB_ARTIFACTS_S3_ENDPOINT_URL") else None,
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": True,
        },
    }
# Serve straight from the finders when collectstatic has not run (local use, tests).
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

MEDIA_ROOT = DATA_DIR / "media"
# Where Harbor trial folders produced by our own runner live.
TRIALS_DIR = Path(os.environ.get("AUTOLAB_TRIALS_DIR", DATA_DIR / "trials"))
# Characters of one observation (a tool's output) kept in its row: longer
# ones keep their first and last halves of this, the whole text compressed
# beside them and streamed on request (trajectories.storing.observation_text). 0: no limit.
AUTOLAB_OBSERVATION_MAX_CHARS = int(os.environ.get("AUTOLAB_OBSERVATION_MAX_CHARS", str(256 * 1024)))
# Where uploaded archives are unpacked before import.
UPLOADS_DIR = DATA_DIR / "uploads"
# Uploads (trajectories.storing.uploads): imported by a Celery worker of this queue.
# An archive is refused, before anything is extracted, when it declares
# more than AUTOLAB_ARCHIVE_MAX_BYTES uncompressed or more than
# AUTOLAB_ARCHIVE_MAX_FILES entries; the upload itself may be at most
# AUTOLAB_ARCHIVE_MAX_BYTES. An import whose worker on another host has not
# reported for AUTOLAB_UPLOAD_STALE_SEC is failed by the reaper.
AUTOLAB_ARCHIVE_MAX_BYTES = int(os.environ.get("AUTOLAB_ARCHIVE_MAX_BYTES", str(4 * 1024**3)))
AUTOLAB_ARCHIVE_MAX_FILES = int(os.environ.get("AUTOLAB_ARCHIVE_MAX_FILES", "100000"))
AUTOLAB_UPLOAD_QUEUE = os.environ.get("AUTOLAB_UPLOAD_QUEUE", "cpu")
AUTOLAB_UPLOAD_STALE_SEC = float(os.environ.get("AUTOLAB_UPLOAD_STALE_SEC", "900"))
# A team's submission is checked on the upload queue; a check a worker took this long ago and never ended is failed.
AUTOLAB_SUBMISSION_STALE_SEC = float(os.environ.get("AUTOLAB_SUBMISSION_STALE_SEC", "1800"))
SUBMISSIONS_DIR = Path(os.environ.get("AUTOLAB_SUBMISSIONS_DIR", DATA_DIR / "submissions"))
# Our LLM judge (trajectories.judge): the Agent model used when none is named
# (else the one model marked "is judge"), how long one answer may take, and
# the Celery queue the staff's "Analyse" button sends its task to.
AUTOLAB_JUDGE_MODEL = os.environ.get("AUTOLAB_JUDGE_MODEL", "")
AUTOLAB_JUDGE_TIMEOUT_SEC = float(os.environ.get("AUTOLAB_JUDGE_TIMEOUT_SEC", "300"))
AUTOLAB_JUDGE_QUEUE = os.environ.get("AUTOLAB_JUDGE_QUEUE", "cpu")
# Boards (evaluations.boards.serving): never computed in a request. The task
# evaluations.rebuild_board, on this queue, builds a board and stores it (the
# cache and the database); a page serves the last one stored, with its age,
# or says that it is being built.
AUTOLAB_BOARD_QUEUE = os.environ.get("AUTOLAB_BOARD_QUEUE", "boards")
# Search's bounds (trajectories.search.query): its time budget per query, the
# shortest text searched for as typed, and how many such scans of every
# rollout run at once on the site.
AUTOLAB_SEARCH_TIMEOUT_SEC = float(os.environ.get("AUTOLAB_SEARCH_TIMEOUT_SEC", "1.0"))
AUTOLAB_SEARCH_MIN_CHARS = int(os.environ.get("AUTOLAB_SEARCH_MIN_CHARS", "3"))
AUTOLAB_SEARCH_SCANS = int(os.environ.get("AUTOLAB_SEARCH_SCANS", "1"))
# A search told that every scan slot is taken is answered after this pause
# (with Retry-After): a client sending such queries in a loop then costs
# the site a cheap answer every half second, not one per millisecond.
AUTOLAB_SEARCH_BUSY_PAUSE_SEC = float(os.environ.get("AUTOLAB_SEARCH_BUSY_PAUSE_SEC", "0.5"))
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# The site's login (any active account), not the admin's, which refuses accounts that are not staff.
LOGIN_URL = "login"
# Where a login goes when its `next` is missing or refused (Django's default, /accounts/profile/, is no page here).
LOGIN_REDIRECT_URL = "evaluations:leaderboard"
LOGOUT_REDIRECT_URL = "evaluations:leaderboard"

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "autolab-site",
    }
}
if os.environ.get("CACHE_URL", "").startswith("redis://"):
    CACHES["default"] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": os.environ["CACHE_URL"],
        # Every key starts with it: sites, or test sessions, sharing one Redis database stay apart.
        "KEY_PREFIX": os.environ.get("AUTOLAB_CACHE_KEY_PREFIX", ""),
    }

# Celery. The embedded default is kombu's filesystem transport, so `make demo`
# needs no broker server.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "filesystem://"
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue_dir = DATA_DIR / "celery" / "queue"
    _processed_dir = DATA_DIR / "celery" / "processed"
    _queue_dir.mkdir(parents=True, exist_ok=True)
    _processed_dir.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "processed_folder": str(_processed_dir),
        # Otherwise kombu keeps its exchange table in ./control of the cwd.
        "control_folder": str(DATA_DIR / "celery" / "control"),
        "store_processed": False,
    }
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Evaluation runner (evaluations.running.runner, evaluations.running.campaigns).
# One task per rollout, routed by the task's resources: `cpu` or `gpu` (with
# the GPU type passed along); start workers with `-Q cpu` / `-Q gpu` and a
# per-queue `--concurrency`.
CELERY_TASK_ROUTES = {
    "evaluations.run_rollout": {"queue": "cpu"},
    "evaluations.reap_rollouts": {"queue": "cpu"},
    "trajectories.import_upload": {"queue": AUTOLAB_UPLOAD_QUEUE},
    "submissions.check": {"queue": AUTOLAB_UPLOAD_QUEUE},
    "submissions.sweep": {"queue": "cpu"},
    "trajectories.analyze_rollouts": {"queue": AUTOLAB_JUDGE_QUEUE},
    "evaluations.rebuild_board": {"queue": AUTOLAB_BOARD_QUEUE},
}
if CELERY_BROKER_URL.startswith("redis"):
    # A trial can run 12 h with acks_late: Redis must not hand its message to
    # another worker meanwhile (the default visibility timeout is 1 h).
    CELERY_BROKER_TRANSPORT_OPTIONS = {**CELERY_BROKER_TRANSPORT_OPTIONS, "visibility_timeout": 16 * 3600}
    # A name space on the broker: every key and broadcast channel kombu uses starts with it (its
    # global_keyprefix), so sites, or test sessions, that share one Redis database stay apart.
    BROKER_KEY_PREFIX = os.environ.get("AUTOLAB_BROKER_KEY_PREFIX", "")
    if BROKER_KEY_PREFIX:
        CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = BROKER_KEY_PREFIX
        CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"global_keyprefix": BROKER_KEY_PREFIX}
CELERY_BEAT_SCHEDULE = {
    "reap-stale-rollouts": {"task": "evaluations.reap_rollouts", "schedule": 60.0},
    "sweep-submission-checks": {"task": "submissions.sweep", "schedule": 60.0},
}
SANDBOX_DIR = Path(os.environ.get("AUTOLAB_SANDBOX_DIR", DATA_DIR / "sandboxes"))
RUNNER_HEARTBEAT_SEC = float(os.environ.get("AUTOLAB_RUNNER_HEARTBEAT_SEC", "2"))
RUNNER_STALE_SEC = float(os.environ.get("AUTOLAB_RUNNER_STALE_SEC", "60"))
RUNNER_MAX_ATTEMPTS = int(os.environ.get("AUTOLAB_RUNNER_MAX_ATTEMPTS", "3"))
RUNNER_RETRY_BACKOFF_SEC = float(os.environ.get("AUTOLAB_RUNNER_RETRY_BACKOFF_SEC", "30"))
STUB_LLM_PORT = int(os.environ.get("AUTOLAB_STUB_LLM_PORT", "8765"))
# A queued rollout past its due time by this much, whose message waits in no queue, is sent again.
RUNNER_RESEND_GRACE_SEC = float(os.environ.get("AUTOLAB_RUNNER_RESEND_GRACE_SEC", "120"))
# A campaign's preflight that no worker answered for this long fails (no worker serves its queue).
RUNNER_PREFLIGHT_TIMEOUT_SEC = float(os.environ.get("AUTOLAB_RUNNER_PREFLIGHT_TIMEOUT_SEC", "120"))
# A worker moves an ended trial's folder to the artifact storage; keep a local copy as well?
KEEP_TRIAL_FOLDERS = env_bool("AUTOLAB_KEEP_TRIAL_FOLDERS", False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"

# A site served over HTTPS (behind a proxy that terminates TLS and sets
# X-Forwarded-Proto): cookies only over HTTPS, HSTS, http:// redirected.
# `manage.py check --deploy` is clean with it (tests/test_settings.py).
HTTPS = env_bool("AUTOLAB_HTTPS", False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("AUTOLAB_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("AUTOLAB_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("AUTOLAB_HSTS_PRELOAD", True)

# Content-Security-Policy on every response: scripts and styles from our own
# static files only (the few inline blocks carry the request's nonce), no
# inline handlers, no style attributes (static/js/layout.js sets computed
# sizes through the CSSOM, which CSP allows), nothing from another origin.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    # plotly.js adds its rules through the CSSOM to a <style> element the chart pages give a nonce.
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
