"""Start an evaluation campaign: `manage.py evaluate --model M --harness H [...]`."""
from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from evaluations.campaigns import CampaignError, campaign_progress, create_campaign, resolve_tasks, run_campaign_sync
from evaluations.models import AgentModel, Backend, Campaign, Harness
from evaluations.services import normalise_model_name
from tasks.models import BenchmarkVersion


class Command(BaseCommand):
    help = "Create a campaign (model x harness x version x tasks x k) and enqueue its rollouts."

    def add_base_argument(self, parser, *args, **kwargs):
        # Our --version names the benchmark version, not Django's.
        if "--version" in args:
            return
        super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--model", required=True, help="AgentModel name (as registered)")
        parser.add_argument("--harness", required=True, help="Harness name, optionally name@version")
        parser.add_argument("--version", default="", help="benchmark version (default: the newest)")
        parser.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
        parser.add_argument("--k", type=int, default=3, help="rollouts per task (default 3)")
        parser.add_argument("--backend", default=Backend.DOCKER, choices=Backend.values)
        parser.add_argument("--wait", action="store_true", help="wait until every rollout has finished")
        parser.add_argument(
            "--sync", action="store_true", help="run the rollouts in this process instead of on Celery workers"
        )

    def handle(self, *args, **options):
        model = AgentModel.objects.filter(name=normalise_model_name(options["model"])).first()
        if model is None:
            raise CommandError(f"no model {options['model']!r}; register it in the admin (Agent models) first")
        name, _, version_name = options["harness"].partition("@")
        harnesses = Harness.objects.filter(name=name)
        if version_name:
            harnesses = harnesses.filter(version=version_name)
        harness = harnesses.order_by("-created_at").first()
        if harness is None:
            raise CommandError(f"no harness {options['harness']!r}; register it in the admin (Harnesses) first")
        if options["version"]:
            version = BenchmarkVersion.objects.filter(name=options["version"]).first()
            if version is None:
                raise CommandError(f"no benchmark version {options['version']!r}")
        else:
            version = BenchmarkVersion.objects.order_by("-created_at").first()
            if version is None:
                raise CommandError("no benchmark version: import tasks first (manage.py import_tasks)")
        try:
            tasks = resolve_tasks(version, options["tasks"].split(","))
            campaign = create_campaign(
                model, harness, version, tasks=tasks, k=options["k"], backend=options["backend"],
                enqueue=not options["sync"],
            )
        except CampaignError as exc:
            raise CommandError(str(exc)) from exc
        total = campaign.rollouts.count()
        self.stdout.write(f"campaign {campaign.pk}: {total} rollouts of {model} / {harness} on {version} ({campaign.backend})")
        self.stdout.write(f"progress: /campaigns/{campaign.pk}/")
        report = getattr(campaign, "send_report", None)
        if report is not None and report.unsent:
            self.stderr.write(self.style.WARNING(report.message))
        if options["sync"]:
            outcomes = run_campaign_sync(campaign)
            self.stdout.write(", ".join(f"{n} {status}" for status, n in sorted(outcomes.items())))
        elif options["wait"]:
            self.wait(campaign)
        return None

    def wait(self, campaign: Campaign) -> None:
        last = None
        while True:
            campaign.refresh_from_db()
            progress = campaign_progress(campaign)
            line = f"{progress['done']}/{progress['total']} done " + " ".join(
                f"{status}={n}" for status, n in progress["counts"].items() if n
            )
            if line != last:
                self.stdout.write(line)
                last = line
            if not progress["active"]:
                return
            time.sleep(2)
