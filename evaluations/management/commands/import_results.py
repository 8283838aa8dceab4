"""python manage.py import_results FILE.csv [--json]: published scores, all or nothing."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluations.published import COLUMNS, ResultsImportError, import_results


class Command(BaseCommand):
    help = (
        "Import published per-task or per-rollout scores (columns: "
        + ", ".join(COLUMNS)
        + "), or a paper's main table (model, harness, version, source and <scope>_avg / _best / _dom columns), "
        "and report which published figures the per-task scores reproduce. "
        "Every row is validated first; nothing is imported if any row is wrong."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--json", action="store_true", help="the file is a JSON list of objects (default: by extension)")

    def handle(self, *args, file: Path, json: bool = False, **options):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        try:
            text = file.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError:
            raise CommandError(f"{file}: not UTF-8 text") from None
        try:
            report = import_results(text, as_json=json or file.suffix.lower() == ".json")
        except ResultsImportError as error:
            lines = "\n".join(f"  {e}" for e in error.errors)
            raise CommandError(f"{file}: nothing imported, {len(error.errors)} problem(s):\n{lines}") from None
        self.stdout.write(self.style.SUCCESS(report.summary()))
        for line in report.checks:
            self.stdout.write(f"  {line}")
