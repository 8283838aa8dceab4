"""Re-run the failure classifier over stored rollouts (after a rule change, say)."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from trajectories.failures import service as failure_service
from trajectories.failures.rules import CAUSES
from trajectories.models import Rollout


class Command(BaseCommand):
    help = "Classify rollouts again: outcome, failure cause, evidence and behaviour flags. Staff labels are kept."

    def add_arguments(self, parser):
        parser.add_argument("--unclassified", action="store_true", help="only rollouts without an outcome yet")
        parser.add_argument("--task", help="only rollouts of this task name")
        parser.add_argument("--model", help="only rollouts of this model name")
        parser.add_argument("--batch-size", type=int, default=200, help="rollouts per transaction (default 200)")

    def handle(self, *args, **options):
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        rollouts = Rollout.objects.all()
        if options["unclassified"]:
            rollouts = rollouts.filter(outcome="")
        if options["task"]:
            rollouts = rollouts.filter(task__name=options["task"])
        if options["model"]:
            rollouts = rollouts.filter(model__name=options["model"])
        counts = failure_service.reclassify(rollouts, batch_size=options["batch_size"])
        total = sum(counts.values())
        self.stdout.write(f"Classified {total} rollout{'s' if total != 1 else ''}.")
        for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            name = CAUSES.get(key, key)
            self.stdout.write(f"  {name}: {n}")
