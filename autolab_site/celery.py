"""The Celery application. Workers start with `celery -A autolab_site worker`."""
from __future__ import annotations

import logging
import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")

logger = logging.getLogger(__name__)


class HostlessBrokerFilter(logging.Filter):
    """Drop kombu's "No hostname was supplied" for a broker that has no host (the default filesystem://).

    kombu warns each time a message is sent, so every command that touched
    a board printed it, although kombu's filesystem transport needs no host.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("No hostname was supplied")


logging.getLogger("kombu.connection").addFilter(HostlessBrokerFilter())

app = Celery("autolab_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def import_agents_once(sender=None, **kwargs) -> None:
    """Pay litellm's slow first import (6-7 s) once, before the pool forks its children."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import harbor.agents.terminus_2  # noqa: F401  (imports litellm)
    except Exception:  # noqa: BLE001  (the trial will report it again, in context)
        logger.exception("could not pre-import Harbor's terminus-2 agent")
