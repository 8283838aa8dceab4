"""python manage.py import_inspect PATH [--version V] [--human-cohort NAME] [--scorer NAME] [--json]

PATH is an Inspect AI log (`.eval` or `.json`) or a folder of them. Each
sample becomes a rollout; each log imports in one transaction, so a damaged
log fails alone and leaves nothing behind. Importing again changes nothing.
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from autolab_site.commands import BenchmarkCommand

from trajectories.storing.ingest import FAILED
from trajectories.storing.inspect_import import import_inspect_log
from trajectories.reading.inspect_log import find_logs


class Command(BenchmarkCommand):
    help = "Import Inspect AI eval logs (.eval or .json, or a folder of them): each sample becomes a rollout."


    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="an Inspect log or a folder of logs")
        parser.add_argument("--version", default=None, help="benchmark version the tasks belong to (default: newest)")
        parser.add_argument("--human-cohort", default="", help='import the samples as human attempts of this cohort ("Human experts, 8 h")')
        parser.add_argument("--scorer", default=None, help="the scorer whose score is the reward (default: the first numeric one)")
        parser.add_argument("--json", action="store_true", help="print one JSON document instead of lines")

    def handle(self, *args, **options):
        path: Path = options["path"]
        logs = find_logs(path)
        if not logs:
            raise CommandError(f"{path}: no Inspect log (.eval or .json) here")
        outcomes = []
        for log in logs:
            for outcome in import_inspect_log(
                log, version=options["version"], human_cohort=options["human_cohort"], scorer=options["scorer"]
            ):
                outcomes.append(outcome)
                if not options["json"]:
                    self.stdout.write(describe(outcome))
        counts: dict[str, int] = {}
        for outcome in outcomes:
            counts[outcome.outcome] = counts.get(outcome.outcome, 0) + 1
        if options["json"]:
            self.stdout.write(json.dumps({"source": str(path), "counts": counts, "samples": [o.as_dict() for o in outcomes]}, indent=2, default=str))
        else:
            summary = f"{len(logs)} log(s), {len(outcomes)} result(s): " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            self.stdout.write(self.style.ERROR(summary) if counts.get(FAILED) else self.style.SUCCESS(summary))
        if counts.get(FAILED):
            raise CommandError(f"{counts[FAILED]} log(s) or sample(s) failed to import", returncode=1)


def describe(outcome) -> str:
    if outcome.outcome == FAILED:
        return f"failed: {outcome.error}"
    reward = "no reward" if outcome.reward is None else f"reward {outcome.reward:g}"
    return f"{outcome.trial_name}: {outcome.outcome} ({outcome.task}, {outcome.model}, {outcome.n_steps} steps, {reward})"
