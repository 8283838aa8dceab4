"""python manage.py import_tasks PATH [--version 1.1] [--no-clip] [--json]"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from autolab_site.commands import BenchmarkCommand

from tasks.images import ImageMirrorError, MirrorMap
from tasks.lib.numbers import format_number
from tasks.services import FAILED, TaskImportResult, import_tasks
from tasks.worker_images import answering_engines, environment_problems

JSON_FIELDS = ("category", "metric", "direction", "baseline_score", "reference_score", "budget_sec", "gpus", "gpu_type")


class Command(BenchmarkCommand):
    help = (
        "Import Harbor task directories (one task folder, or a folder of them such as an "
        "AutoLab checkout's tasks/) into a benchmark version. Unchanged tasks are left alone."
    )


    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="a task folder, or a folder of task folders")
        parser.add_argument("--version", default="1.1", help='benchmark version name (default "1.1")')
        parser.add_argument(
            "--no-clip",
            action="store_true",
            help="do not cap rewards at 1 in this version (AutoLab v1.0 published rewards above 1)",
        )
        parser.add_argument(
            "--benchmark", default=None,
            help='the benchmark a new version belongs to (default "AutoLab", or "RE-Bench" for tasks scored by its rule)',
        )
        parser.add_argument("--json", action="store_true", help="print one JSON document instead of lines")

    def handle(self, *args, **options):
        version = options["version"]
        clip_rewards = False if options["no_clip"] else None
        report = import_tasks(options["path"], version=version, clip_rewards=clip_rewards, benchmark=options["benchmark"])
        for result in report.results:
            if result.outcome != FAILED:
                result.warnings += image_warnings(Path(result.path), bool(result.fields.get("gpus")))
        if options["json"]:
            self.stdout.write(dumps(json_document(report)))
        else:
            for result in report.results:
                self.stdout.write(describe(result))
            summary = f"{report.summary()} (version {version})"
            self.stdout.write(self.style.SUCCESS(summary) if report.ok else self.style.ERROR(summary))
        if not report.ok:
            raise CommandError(f"{report.counts[FAILED]} task(s) failed to import", returncode=1)


def image_warnings(task_dir: Path, needs_gpu: bool) -> list[str]:
    """What this machine's container engines cannot build of the task's image (tasks.worker_images), per engine.

    Information, like the GPU warning: the task is imported all the same,
    and a worker set up otherwise (a registry, a mirror map, stand-ins) can
    run it. A GPU task's image is a GPU worker's business.
    """
    if needs_gpu:
        return []
    try:
        mirrors = MirrorMap.from_environment()
    except ImageMirrorError as exc:
        return [str(exc)]
    return [f"{engine} here cannot build its image: {problem}"
            for engine in answering_engines() for problem in environment_problems(engine, task_dir, mirrors)]


def dumps(document) -> str:
    return json.dumps(document, indent=2, sort_keys=False)


def json_document(report) -> dict:
    tasks = []
    for result in report.results:
        entry = {"name": result.name, "outcome": result.outcome, "path": result.path}
        if result.outcome == FAILED:
            entry["error"] = result.error
        else:
            entry.update({key: result.fields.get(key) for key in JSON_FIELDS})
            # Spelled as in the brief's JSON contract too: baseline / reference.
            entry["baseline"] = result.fields.get("baseline_score")
            entry["reference"] = result.fields.get("reference_score")
            if result.changed_fields:
                entry["changed_fields"] = result.changed_fields
            if result.warnings:
                entry["warnings"] = result.warnings
        tasks.append(entry)
    return {"version": report.version, "path": report.path, "tasks": tasks, "counts": report.counts}


def describe(result: TaskImportResult) -> str:
    """One line per task: name, outcome, category, metric, anchors, budget, GPU."""
    if result.outcome == FAILED:
        return f"{result.name}: failed: {result.error}"
    fields = result.fields
    budget = fields.get("budget_sec")
    budget_text = f"{budget / 3600:g} h" if budget else "no budget"
    gpus = fields.get("gpus") or 0
    gpu_text = f"{gpus} x {fields.get('gpu_type') or 'GPU'}" if gpus else "CPU only"
    return (
        f"{result.name}: {result.outcome}, {fields.get('category') or 'uncategorised'}, "
        f"{fields.get('metric')} ({fields.get('direction')} is better), "
        f"{format_number(fields.get('baseline_score'))} → {format_number(fields.get('reference_score'))}, "
        f"{budget_text}, {gpu_text}"
    ) + "".join(f"\n  warning: {warning}" for warning in result.warnings)
