"""python manage.py import_results FILE [--version V] [--harness H] [--source S] [--set main|ablation] [--dry-run]

Published scores, a paper's main table or a wide per-task table; all or nothing.
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from autolab_site.commands import BenchmarkCommand
from evaluations.results.published import COLUMNS, SCOPE_ALIASES, Defaults, ResultsImportError, import_results


class Command(BenchmarkCommand):
    help = (
        "Import published per-task or per-rollout scores (columns: "
        + ", ".join(COLUMNS)
        + "), a paper's main table (model, harness, version, source and <scope>_avg / _best / _dom columns; "
        "scopes: overall, a category, or a paper's short name: " + ", ".join(sorted(SCOPE_ALIASES)) + "), "
        "or a wide per-task table (task, then one column per model), and report which published figures the "
        "per-task scores reproduce. Options fill in columns the file does not have. "
        "Every row is validated first; nothing is imported if any row is wrong."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--json", action="store_true", help="the file is a JSON list of objects (default: by extension)")
        parser.add_argument("--version", default="", help="the benchmark version, for a file without a version column")
        parser.add_argument("--harness", default="", help='the harness, for a file without one ("terminus-2")')
        parser.add_argument("--source", default="", help='the citation, for a file without one ("Paper 2026, Table 2")')
        parser.add_argument("--set", default="", choices=["", "main", "ablation"],
                            help="main (default) or ablation, for a file without a set column")
        parser.add_argument("--dry-run", action="store_true", help="check everything and say what would be imported")

    def handle(self, *args, file: Path, json: bool = False, **options):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        try:
            text = file.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError:
            raise CommandError(f"{file}: not UTF-8 text") from None
        defaults = Defaults(options["version"], options["harness"], options["source"], options["set"])
        try:
            report = import_results(text, as_json=json or file.suffix.lower() == ".json", defaults=defaults,
                                    dry_run=options["dry_run"])
        except ResultsImportError as error:
            lines = "\n".join(f"  {e}" for e in error.errors)
            raise CommandError(f"{file}: nothing imported, {len(error.errors)} problem(s):\n{lines}") from None
        self.stdout.write(self.style.SUCCESS(report.summary()))
        for line in report.checks:
            self.stdout.write(f"  {line}")
