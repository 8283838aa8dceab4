"""Load the demo content `make demo` shows: example tasks, real AutoLab data
when ../shared (or $AUTOLAB_SHARED_DIR) is present, AutoLab v1.1's published
figures, small real campaigns on the example tasks (AutoLab's and RE-Bench's),
and oracle and nop on a few real AutoLab v1.1 tasks where podman can build them
(tasks.real_offline; offline, with AUTOLAB_IMAGE_MIRRORS naming the stand-ins).

Safe to run again: every step is idempotent.
"""
from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

EXAMPLES_VERSION = "examples"
REBENCH_EXAMPLES_VERSION = "rebench-examples"
AUTOLAB_VERSION = "1.1"


class Command(BaseCommand):
    help = "Load example tasks, the shared AutoLab tasks and trials, and queue the demo campaigns."

    def add_arguments(self, parser):
        parser.add_argument("--no-campaign", action="store_true", help="do not queue the demo campaigns")
        parser.add_argument(
            "--run-now",
            action="store_true",
            help="run the demo campaigns in this process instead of queueing them for the worker",
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

        from evaluations.demo import (
            import_autolab_tasks, load_published_figures, run_demo_campaigns, run_real_demo_campaigns, shared_root,
        )

        shared = shared_root()
        for line in import_autolab_tasks(shared, version_name=AUTOLAB_VERSION):
            self.stdout.write(line)

        trials = shared / "autolab" / "trials"
        if trials.is_dir():
            from trajectories.services import import_path

            self.stdout.write(f"AutoLab trials from {trials}: {import_path(trials, version=AUTOLAB_VERSION).summary()}")

        self.stdout.write(load_published_figures(version_name=AUTOLAB_VERSION))
        if not no_campaign:
            for version in (EXAMPLES_VERSION, REBENCH_EXAMPLES_VERSION):
                for line in run_demo_campaigns(tasks_version=version, run_now=run_now):
                    self.stdout.write(line)
            for line in run_real_demo_campaigns(shared, run_now=run_now, version_name=AUTOLAB_VERSION):
                self.stdout.write(line)
