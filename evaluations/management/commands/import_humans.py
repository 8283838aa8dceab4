"""python manage.py import_humans FILE.csv --version V

Human baselines, one row per scoring event (evaluations.results.human_baselines
documents the columns). The whole file imports in one transaction; running
it again changes nothing.
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from autolab_site.commands import BenchmarkCommand

from evaluations.results.human_baselines import HumanBaselineError
from evaluations.results.human_import import import_human_csv
from tasks.models import BenchmarkVersion


class Command(BenchmarkCommand):
    help = "Import human baseline attempts from a CSV of scoring events (attempt_id, task, cohort, source, elapsed_seconds, score or raw_score)."


    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--version", required=True, help="the benchmark version of the tasks")

    def handle(self, *args, **options):
        version = BenchmarkVersion.objects.filter(name=options["version"]).first()
        if version is None:
            raise CommandError(f"no benchmark version {options['version']!r}")
        try:
            text = options["path"].read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"{options['path']}: {error}") from None
        try:
            report = import_human_csv(text, version)
        except HumanBaselineError as error:
            raise CommandError(f"{options['path']}: {error} (nothing imported)") from None
        self.stdout.write(self.style.SUCCESS(report.summary()))
