"""Load the demo content `make demo` shows: example tasks, real AutoLab data
when ../shared (or $AUTOLAB_SHARED_DIR) is present, AutoLab v1.1's published
figures, and small real campaigns on the example tasks (AutoLab's and RE-Bench's).

Safe to run again: every step is idempotent.
"""
from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

EXAMPLES_VERSION = "examples"
REBENCH_EXAMPLES_VERSION = "rebench-examples"
AUTOLAB_VERSION = "1.1"


def shared_dir() -> Path:
    """../shared/autolab beside the checkout, or under $AUTOLAB_SHARED_DIR (as the tests read it)."""
    return Path(os.environ.get("AUTOLAB_SHARED_DIR") or settings.BASE_DIR.parent / "shared") / "autolab"


class Command(BaseCommand):
    help = "Load example tasks, the shared AutoLab tasks and trials, and queue a demo campaign."

    def add_arguments(self, parser):
        parser.add_argument("--no-campaign", action="store_true", help="do not queue the demo campaign")
        parser.add_argument(
            "--run-now",
            action="store_true",
            help="run the demo campaign in this process instead of queueing it for the worker",
        )

    def handle(self, *args, no_campaign=False, run_now=False, **options):
        from tasks.services import ensure_version, import_tasks

        ensure_version(EXAMPLES_VERSION, benchmark="autolab-site", demo=True)
        report = import_tasks(settings.BASE_DIR / "examples" / "tasks", version=EXAMPLES_VERSION)
        self.stdout.write(f"example tasks: {report.summary()}")
        # The RE-Bench-style examples: a version of their own, scored by the best of the score log.
        report = import_tasks(settings.BASE_DIR / "examples" / "tasks" / "rebench", version=REBENCH_EXAMPLES_VERSION)
        ensure_version(REBENCH_EXAMPLES_VERSION, demo=True)
        self.stdout.write(f"RE-Bench-style example tasks: {report.summary()}")

        shared = shared_dir()
        if (shared / "tasks").is_dir():
            report = import_tasks(shared / "tasks", version=AUTOLAB_VERSION)
            self.stdout.write(f"AutoLab tasks from {shared / 'tasks'}: {report.summary()}")
        else:
            self.stdout.write(f"no shared AutoLab tasks at {shared / 'tasks'}; skipped")

        if (shared / "trials").is_dir():
            from trajectories.services import import_path

            trials = import_path(shared / "trials", version=AUTOLAB_VERSION)
            self.stdout.write(f"AutoLab trials from {shared / 'trials'}: {trials.summary()}")

        from evaluations.demo import load_published_figures, run_demo_campaigns

        self.stdout.write(load_published_figures(version_name=AUTOLAB_VERSION))
        if not no_campaign:
            for version in (EXAMPLES_VERSION, REBENCH_EXAMPLES_VERSION):
                for line in run_demo_campaigns(tasks_version=version, run_now=run_now):
                    self.stdout.write(line)
