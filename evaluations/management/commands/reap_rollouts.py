"""The reaper: rescue rollouts whose worker died, send lost messages, remove leftover sandboxes."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from evaluations.running.reaper import reap


class Command(BaseCommand):
    help = (
        "Re-queue (or fail, after too many attempts) rollouts with no heartbeat for --stale-after seconds, "
        "send queued rollouts whose message is gone, and remove this host's leftover sandboxes."
    )

    def add_arguments(self, parser):
        parser.add_argument("--stale-after", type=float, default=None, help="seconds (default RUNNER_STALE_SEC)")
        parser.add_argument("--no-enqueue", action="store_true", help="mark re-queued rollouts but send no message")

    def handle(self, *args, **options):
        report = reap(stale_after=options["stale_after"], enqueue=not options["no_enqueue"])
        self.stdout.write(str(report))
