"""What every management command of the site that names a benchmark version shares.

Django gives each command a `--version` that prints Django's version and
exits 0: `import_results FILE --version 1.1` once imported nothing and said
"6.1.3". A command built on `BenchmarkCommand` owns `--version`, for the
benchmark version it names (tests/test_commands.py holds every command of
the project to it).
"""
from __future__ import annotations

from django.core.management.base import BaseCommand


class BenchmarkCommand(BaseCommand):
    """A command whose `--version` names a benchmark version (added by the command's add_arguments)."""

    def add_base_argument(self, parser, *args, **kwargs):
        if "--version" in args:
            return
        super().add_base_argument(parser, *args, **kwargs)
