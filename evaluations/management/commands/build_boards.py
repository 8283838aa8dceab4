"""Build boards now, in this process, and store them (what the boards queue's worker does): after a deploy
or a restore, so that the first pages serve a board instead of saying it is being built."""
from __future__ import annotations

import time

from autolab_site.commands import BenchmarkCommand
from tasks.models import BenchmarkVersion


class Command(BenchmarkCommand):
    help = "Build the boards of every benchmark version (or --version's), unfiltered, and store them."

    def add_arguments(self, parser):
        parser.add_argument("--version", help="the benchmark version (its name); default: every version")

    def handle(self, *args, **options):
        from evaluations.boards import serving

        versions = BenchmarkVersion.objects.order_by("name")
        if options["version"]:
            versions = versions.filter(name=options["version"])
        for version in versions:
            start = time.monotonic()
            data = serving.build(version)
            self.stdout.write(f"{version}: {len(data.entries)} entries, {data.n_rollouts} rollouts, {time.monotonic() - start:.2f} s")
