"""A Harbor job folder's analysis.json, applied after its trials are imported.

The job's summary is kept as its JobReview (keyed by the job's id, which
every trial's config.json names); each trial's reading in the file becomes
that trial's Harbor review, unless the trial folder holds its own
analysis.json (the trial's own file is the finer source, and the importer
has already stored it). A malformed file is recorded on the JobReview and
reported; the trials stay imported.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from autolab_site.masking import mask_text
from autolab_site.safe_files import read_file
from trajectories import reviews
from trajectories.models import JobReview, Rollout
from trajectories.reading import analysis_file
from trajectories.reading.trial_folder import is_trial_dir
from trajectories.storing.ingest import HARBOR_RUBRIC

# A job's reading of thousands of trials is a few MB; past this it is not one.
FILE_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class ImportedTrial:
    """A trial folder of this import and the rollout it became (None when it failed)."""

    path: Path
    rollout_id: int | None
    trial_name: str = ""


def apply_job_analyses(root: Path, trials: list[ImportedTrial]) -> list[str]:
    """Apply the analysis.json of every job folder at or below `root` holding these trials; what went wrong.

    A trial imported on its own has its job folder above `root`: that
    folder was not given, and is not read (an upload's trial at the top
    of its archive would otherwise reach the uploads folder).
    """
    by_job: dict[Path, list[ImportedTrial]] = {}
    for trial in trials:
        if trial.path.parent.is_relative_to(root):
            by_job.setdefault(trial.path.parent, []).append(trial)
    problems = []
    for job_dir, job_trials in sorted(by_job.items()):
        problem = apply_job_analysis(job_dir, job_trials)
        if problem:
            problems.append(problem)
    return problems


def apply_job_analysis(job_dir: Path, trials: list[ImportedTrial]) -> str:
    """One job folder's analysis.json (if any): its summary stored, its trial readings applied; "" or the problem."""
    name = analysis_file.FILE_NAME
    path = job_dir / name
    if not _is_regular(path) or is_trial_dir(job_dir):
        return ""
    rollouts = {
        rollout.pk: rollout for rollout in Rollout.objects.filter(pk__in=[t.rollout_id for t in trials if t.rollout_id])
    }
    job_id = _job_id(job_dir, rollouts.values())
    try:
        raw = read_file(job_dir, name, limit=FILE_LIMIT + 1)
        if len(raw) > FILE_LIMIT:
            raise analysis_file.AnalysisFileError(f"{name}: larger than {FILE_LIMIT // 2**20} MB")
        job = analysis_file.read_job_analysis(analysis_file.decode(raw))
    except (analysis_file.AnalysisFileError, OSError) as exc:
        error = str(exc) if isinstance(exc, analysis_file.AnalysisFileError) else f"{name}: cannot be read ({exc})"
        JobReview.objects.update_or_create(job_id=job_id, defaults={"error": error, "source_path": str(path)[:1000]})
        return f"{path}: {error}; the trials are imported, the job's analysis is not"

    by_name: dict[str, tuple[ImportedTrial, Rollout]] = {}
    for trial in trials:
        rollout = rollouts.get(trial.rollout_id)
        if rollout is not None:
            for key in (trial.path.name, trial.trial_name, rollout.trial_name):
                if key:
                    by_name.setdefault(key, (trial, rollout))
    with transaction.atomic():
        JobReview.objects.update_or_create(job_id=job_id, defaults={
            "summary": mask_text(job.summary), "cost_usd": job.cost_usd, "n_trials": len(job.trials), "error": "",
            "source_path": str(path)[:1000],
        })
        for entry in job.trials:
            found = by_name.get(entry.trial_name)
            if found is None or _is_regular(found[0].path / name):
                continue  # not among this import's trials, or its own file already spoke
            _, rollout = found
            if entry.reading is not None:
                reviews.record_review(rollout, entry.reading, source="harbor", rubric=HARBOR_RUBRIC, replace=True)
            else:
                reviews.record_failed_review(rollout, entry.error, source="harbor", rubric=HARBOR_RUBRIC)
    return ""


def _job_id(job_dir: Path, rollouts) -> str:
    """The job's id as its trials record it (config.json job_id); else the job's result.json id; else the folder name."""
    counts = Counter(rollout.job_id for rollout in rollouts if rollout.job_id)
    if counts:
        return counts.most_common(1)[0][0]
    try:
        data = json.loads(read_file(job_dir, "result.json", limit=1_000_000))
    except (OSError, ValueError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("id"), str) and data["id"].strip():
        return data["id"].strip()[:100]
    return job_dir.name[:100]


def _is_regular(path: Path) -> bool:
    try:
        return path.lstat().st_mode & 0o170000 == 0o100000
    except OSError:
        return False
