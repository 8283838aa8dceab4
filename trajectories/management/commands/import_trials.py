"""python manage.py import_trials PATH [--version V] [--json]

PATH is a Harbor trial folder, a job folder, a folder of jobs, or a .tar.gz,
.tgz, .tar or .zip of any of these. Each trial imports in its own
transaction. Ctrl-C stops between trials (a second Ctrl-C stops at once,
rolling back the trial in progress); running the command again continues,
as trials already imported come back "unchanged". On PostgreSQL trials
import on one process per CPU, up to 8 (--jobs to choose), so lines come in the
order trials finish.
"""
from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

from django.core.management.base import CommandError

from autolab_site.commands import BenchmarkCommand
from autolab_site.durations import format_duration
from tasks.lib.numbers import format_number

from trajectories import statuses
from trajectories.services import FAILED, ImportReport, TrialOutcome, import_path


class Command(BenchmarkCommand):
    help = (
        "Import Harbor trials (a trial folder, a job folder, a folder of jobs, or an archive of "
        "these) as rollouts. Unchanged trials are left alone; re-run trials are replaced."
    )


    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="trial folder, job folder, folder of jobs, or archive")
        parser.add_argument("--version", default=None, help="benchmark version the tasks belong to (default: newest)")
        parser.add_argument("--json", action="store_true", help="print one JSON document instead of lines")
        parser.add_argument(
            "--jobs",
            type=int,
            default=None,
            help="processes importing at once (default: one per CPU, up to 8, on PostgreSQL; always 1 on SQLite)",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="import trials again even when their files have not changed (after an upgrade of the analysis)",
        )
        parser.add_argument(
            "--store-files",
            action="store_true",
            help="also copy each trial's folder to the artifact storage, for the rollout page's Artifacts and Log tabs",
        )

    def handle(self, *args, **options):
        self.stop_requested = False
        show_progress = _is_tty(self.stderr)
        as_json = options["json"]

        def on_progress(report: ImportReport, outcome: TrialOutcome) -> None:
            if not as_json:
                if show_progress:
                    self.stderr.write("\r\033[K", ending="")
                self.stdout.write(describe(outcome))
            if show_progress:
                self.stderr.write("\r\033[K" + progress_line(report.done, report.total, report.elapsed), ending="")
                self.stderr.flush()

        with self.interrupts_stop_between_trials():
            report = import_path(
                options["path"],
                version=options["version"],
                on_progress=on_progress,
                should_stop=lambda: self.stop_requested,
                jobs=options["jobs"],
                force=options["force"],
                store_files=options["store_files"],
            )
        if show_progress:
            self.stderr.write("\r\033[K", ending="")

        if as_json:
            self.stdout.write(json.dumps(json_document(report), indent=2))
        else:
            for error in report.errors:
                self.stdout.write(self.style.ERROR(error))
            summary = summary_line(report)
            self.stdout.write(self.style.SUCCESS(summary) if report.ok else self.style.ERROR(summary))
        if report.interrupted:
            raise CommandError(
                f"interrupted after {report.done} of {report.total} trials; run the command again to continue",
                returncode=130,
            )
        if not report.ok:
            failed = report.counts[FAILED]
            raise CommandError(f"{failed} trial(s) failed to import" if failed else "; ".join(report.errors), returncode=1)

    def interrupts_stop_between_trials(self):
        """SIGINT sets a flag checked between trials; a second one interrupts."""
        command = self

        class Handler:
            def __enter__(self):
                self.previous = None
                if threading.current_thread() is threading.main_thread():
                    self.previous = signal.signal(signal.SIGINT, self.handle)
                return self

            def handle(self, signum, frame):
                if command.stop_requested:
                    raise KeyboardInterrupt
                command.stop_requested = True
                command.stderr.write("\nstopping after the current trial (Ctrl-C again to stop now)")

            def __exit__(self, *exc):
                if self.previous is not None:
                    signal.signal(signal.SIGINT, self.previous)
                return False

        return Handler()


def _is_tty(stream) -> bool:
    target = getattr(stream, "_out", stream)
    try:
        return bool(target.isatty())
    except (AttributeError, ValueError):
        return False


def progress_line(done: int, total: int, elapsed: float) -> str:
    """"12/40 trials, 3.1/s, ETA 9.0s": count, rate and time left."""
    rate = done / elapsed if elapsed > 0 else 0.0
    left = (total - done) / rate if rate > 0 else None
    eta = "?" if left is None else format_duration(left)
    return f"{done}/{total} trials, {rate:.1f}/s, ETA {eta}"


def describe(outcome: TrialOutcome) -> str:
    """One line per trial: task, model, harness, steps, reward, outcome."""
    if outcome.outcome == FAILED:
        return f"{outcome.trial_name or outcome.path}: failed: {outcome.error}"
    extra = ""
    reason = outcome.verifier_fields.get("reason") if isinstance(outcome.verifier_fields, dict) else None
    if reason:
        extra = f" ({reason})"
    if outcome.exception_type:
        extra += f", {outcome.exception_type}"
    steps = f"{outcome.n_steps} steps"
    if outcome.trajectory == "none":
        steps = "NO TRAJECTORY (reward and result only)"
    elif outcome.trajectory.startswith("converted "):
        steps += f" ({outcome.trajectory})"
    if outcome.status == statuses.INCOMPLETE:
        extra += f"; INCOMPLETE: {outcome.status_reason}"
    return (
        f"{outcome.trial_name}: {outcome.outcome}: {outcome.task}, {outcome.model}, {outcome.harness}, "
        f"{steps}, reward {format_number(outcome.reward, "none")}{extra}"
    )


def summary_line(report: ImportReport) -> str:
    counts = report.counts
    steps = sum(o.n_steps for o in report.outcomes if o.outcome in ("created", "updated"))
    text = (
        f"{counts['created']} created, {counts['updated']} updated, {counts['unchanged']} unchanged, "
        f"{counts['failed']} failed of {report.total} trials ({steps} steps stored) in {report.elapsed:.1f} s"
    )
    stored = [o for o in report.outcomes if o.outcome in ("created", "updated")]
    notes = [
        (sum(o.trajectory == "none" for o in stored), "without a trajectory"),
        (sum(o.trajectory.startswith("converted ") for o in stored), "converted from a native agent log"),
        (sum(o.status == statuses.INCOMPLETE for o in stored), "incomplete (no result.json)"),
    ]
    for n, what in notes:
        if n:
            text += f"; {n} {what}"
    if report.interrupted:
        text += "; interrupted"
    return text


def json_document(report: ImportReport) -> dict:
    trials = []
    for outcome in report.outcomes:
        entry = outcome.as_dict()
        if outcome.outcome != FAILED:
            entry["tokens"] = {
                "input": outcome.n_input_tokens,
                "cached": outcome.n_cache_tokens,
                "output": outcome.n_output_tokens,
            }
        trials.append(entry)
    return {
        "source": report.source,
        "total": report.total,
        "counts": report.counts,
        "interrupted": report.interrupted,
        "errors": report.errors,
        "trials": trials,
    }
