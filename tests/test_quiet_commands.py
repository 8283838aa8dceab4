"""Commands say what they did and nothing else: no broker warning on the default filesystem transport (issue 46)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_sending_a_message_on_the_filesystem_broker_prints_no_hostname_warning(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "DATABASE_URL")}
    env.update(AUTOLAB_DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="autolab_site.settings", PYTHONPATH=str(ROOT))
    code = "import django; django.setup(); from autolab_site.celery import app; app.send_task('nothing.here', queue='boards')"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "No hostname was supplied" not in done.stderr + done.stdout
