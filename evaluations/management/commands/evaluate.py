"""Start an evaluation campaign: `manage.py evaluate --model M --harness H [...]`."""
from __future__ import annotations

import time

from django.core.management.base import CommandError

from autolab_site.commands import BenchmarkCommand

from evaluations.running.campaign_progress import campaign_progress
from evaluations.running.campaigns import CampaignError, create_campaign, launch, preflight_here, resolve_tasks
from evaluations.demo import DEMO_HARNESSES, demo_model_and_harness
from evaluations.running.local_runs import run_campaign_sync
from evaluations.running.runner import MODEL_FREE_AGENTS
from agents.models import AgentModel, Harness
from evaluations.models import Backend, Campaign
from agents.services import normalise_model_name
from tasks.models import BenchmarkVersion


class Command(BenchmarkCommand):
    help = "Create a campaign (model x harness x version x tasks x k) and enqueue its rollouts."


    def add_arguments(self, parser):
        parser.add_argument("--model", required=True, help="AgentModel name (as registered)")
        parser.add_argument("--harness", required=True, help="Harness name, optionally name@version")
        parser.add_argument("--version", default="", help="benchmark version (default: the newest)")
        parser.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
        parser.add_argument("--k", type=int, default=3, help="rollouts per task (default 3)")
        parser.add_argument("--backend", default=Backend.DOCKER, choices=Backend.values)
        parser.add_argument("--wait", action="store_true", help="wait until every rollout has finished")
        parser.add_argument(
            "--sync", action="store_true",
            help="run the rollouts here, each in a process of its own, instead of on Celery workers",
        )
        parser.add_argument(
            "--concurrency", type=int, default=1,
            help="with --sync: how many rollouts run at once, each in a process of its own (default 1)",
        )
        parser.add_argument(
            "--supersede", action="store_true",
            help="re-evaluate: earlier rollouts of this model, harness and tasks leave the figures "
            "(default: the new rollouts add to them)",
        )
        parser.add_argument(
            "--no-preflight", action="store_true",
            help="queue at once, without checking the key, endpoint, tasks and backend on a worker first",
        )

    def handle(self, *args, **options):
        if options["concurrency"] < 1:
            raise CommandError(f"--concurrency must be 1 or more, not {options['concurrency']}")
        if options["model"] == options["harness"] and options["model"] in MODEL_FREE_AGENTS:
            # `--model oracle --harness oracle`: Harbor's reference-solution and no-op agents need no registration.
            demo_model_and_harness(*next(entry for entry in DEMO_HARNESSES if entry[0] == options["model"]))
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
            if options["sync"]:
                campaign = self.checked_here(model, harness, version, tasks, options)
            else:
                campaign = launch(
                    model, harness, version, tasks=tasks, k=options["k"], backend=options["backend"],
                    supersede=options["supersede"], preflight=not options["no_preflight"],
                )
        except CampaignError as exc:
            raise CommandError(str(exc)) from exc
        n = len(tasks or version.tasks.all()) * options["k"]
        self.stdout.write(f"campaign {campaign.pk}: {n} rollouts of {model} / {harness} on {version} ({campaign.backend})")
        if campaign.status == Campaign.Status.CHECKING:
            self.stdout.write("preflight: a worker of each queue checks the key, endpoint, tasks and backend first")
        self.stdout.write(f"progress: /campaigns/{campaign.pk}/")
        report = getattr(campaign, "send_report", None)
        if report is not None and report.unsent:
            self.stderr.write(self.style.WARNING(report.message))
        if options["sync"]:
            outcomes = run_campaign_sync(campaign, own_process=True, concurrency=options["concurrency"])
            self.stdout.write(", ".join(f"{n} {status}" for status, n in sorted(outcomes.items())))
        elif options["wait"]:
            self.wait(campaign)
        return None

    def checked_here(self, model, harness, version, tasks, options) -> Campaign:
        """--sync: the preflight runs in this process, before the campaign exists; then its rollouts."""
        if not options["no_preflight"]:
            report = preflight_here(model, harness, version, tasks, options["backend"])
            if not report.ok:
                raise CommandError(f"preflight failed: {report.reason}")
        # Nothing is sent to the broker: a running worker would take rollouts of this campaign.
        return create_campaign(model, harness, version, tasks=tasks, k=options["k"], backend=options["backend"],
                               supersede=options["supersede"], enqueue=False)

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
            if not progress["active"] and campaign.status != Campaign.Status.CHECKING:
                if campaign.status_reason:
                    self.stdout.write(f"{campaign.get_status_display()}: {campaign.status_reason}")
                return
            time.sleep(2)
