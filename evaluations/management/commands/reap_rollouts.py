"""Rescue rollouts whose worker stopped beating: re-queue them or mark them failed."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from evaluations.campaigns import reap_stale


class Command(BaseCommand):
    help = "Re-queue (or fail, after too many attempts) rollouts with no heartbeat for --stale-after seconds."

    def add_arguments(self, parser):
        parser.add_argument("--stale-after", type=float, default=None, help="seconds (default RUNNER_STALE_SEC)")
        parser.add_argument("--no-enqueue", action="store_true", help="mark re-queued rollouts but send no task")

    def handle(self, *args, **options):
        report = reap_stale(stale_after=options["stale_after"], enqueue=not options["no_enqueue"])
        self.stdout.write(str(report))
