"""The Celery application. Workers start with `celery -A autolab_site worker`."""
from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")

app = Celery("autolab_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
