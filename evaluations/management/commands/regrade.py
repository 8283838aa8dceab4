"""Regrade ended rollouts: the task's current verifier on their recorded outputs, without running the agent again."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluations.regrades import regrade
from evaluations.sandbox.backends import BACKENDS


class Command(BaseCommand):
    help = (
        "Run each named rollout's task's current verifier on the rollout's recorded outputs in a fresh sandbox, "
        "and record the new reward (with the verifier's version, when and by whom) in its grade history. "
        "Rollouts whose recorded outputs do not cover what the verifier needs are left as they were, and said so."
    )

    def add_arguments(self, parser):
        parser.add_argument("rollouts", nargs="*", type=int, metavar="ROLLOUT_ID")
        parser.add_argument("--campaign", type=int, help="every current rollout of this campaign")
        parser.add_argument("--task", default="", metavar="VERSION/NAME", help="every current rollout of this task")
        parser.add_argument("--backend", choices=sorted(BACKENDS), help="sandbox backend (default: the rollout's)")
        parser.add_argument("--sync", action="store_true", help="run here, now, instead of on a worker")

    def handle(self, *args, **options):
        if not (options["rollouts"] or options["campaign"] is not None or options["task"]):
            raise CommandError("name rollouts (ROLLOUT_ID ...), --campaign N or --task VERSION/NAME")
        try:
            rollouts = regrade.select(ids=options["rollouts"], campaign_id=options["campaign"], task=options["task"])
        except regrade.Selection as exc:
            raise CommandError(str(exc)) from None
        if not rollouts:
            raise CommandError("no rollout to regrade")
        report = regrade.request(rollouts, backend=options["backend"] or "", sync=options["sync"])
        for line in report.lines():
            self.stdout.write(line)
        failed = len(report.refused) + sum(1 for grade in report.grades if grade.state == "failed")
        if failed:
            raise CommandError(f"{failed} of {len(rollouts)} rollouts were not regraded (left as they were)")
