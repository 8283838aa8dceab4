"""Analyse stored rollouts again from their files in the artifact storage (after an upgrade of the analysis)."""
from __future__ import annotations

from django.core.management.base import CommandError

from autolab_site.commands import BenchmarkCommand

from trajectories import services
from trajectories.models import Rollout


class Command(BenchmarkCommand):
    help = (
        "Import rollouts again from their files in the artifact storage, every row anew, keeping their ids: after an "
        "upgrade whose analysis changed (step kinds, metrics, best-so-far curves). Rollouts without stored files are "
        "named: import their trial folders again with import_trials --force."
    )

    def add_arguments(self, parser):
        parser.add_argument("--version", help="only rollouts of this benchmark version")
        parser.add_argument("--task", help="only rollouts of this task name")
        parser.add_argument("--rollout", type=int, action="append", default=[], help="only this rollout id (repeatable)")

    def handle(self, *args, **options):
        rollouts = Rollout.objects.select_related("task__version").order_by("pk")
        if options["version"]:
            rollouts = rollouts.filter(task__version__name=options["version"])
        if options["task"]:
            rollouts = rollouts.filter(task__name=options["task"])
        if options["rollout"]:
            rollouts = rollouts.filter(pk__in=options["rollout"])
        done = skipped = failed = 0
        for rollout in rollouts.iterator(chunk_size=100):
            outcome = services.reanalyse_stored(rollout)
            if isinstance(outcome, str):
                skipped += 1
                self.stdout.write(f"  rollout {rollout.pk} ({rollout.trial_name}): skipped, {outcome}")
            elif outcome.error:
                failed += 1
                self.stdout.write(f"  rollout {rollout.pk} ({rollout.trial_name}): failed, {outcome.error}")
            else:
                done += 1
        if not done + skipped + failed:
            raise CommandError("no rollout matches")
        self.stdout.write(f"Analysed {done} rollout{'s' if done != 1 else ''} again; {skipped} skipped, {failed} failed.")
        if failed or (skipped and not done):
            raise CommandError(f"{failed} failed, {skipped} skipped and {done} analysed again")
