"""Trial text masked as it is read: what the agent printed reaches no row, search word or page with a secret in it.

Every reader of a trial hands its result through here (read_trial_folder,
read_verification, Inspect's read_log, a live import's new steps), so that
all that is stored and derived from it (steps, search words, diffs,
failure evidence, what the judge is sent) holds the masked text only:
search cannot find a secret that no row holds. The rule is
autolab_site.masking's; the text of a trial is masked in one call
(mask_values: the triggers are looked for once in all of its texts), and a
long trajectory read again step by step (`restream`) a step at a time.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from autolab_site.masking import mask_text, mask_values
from trajectories.reading.parsed import ParsedStep, ParsedTrajectory


def mask_steps(steps: list[ParsedStep]) -> None:
    """Mask, in place, the text of `steps`: messages, reasoning, tool calls' arguments, outputs, extras."""
    values: list[Any] = []
    for step in steps:
        values += [step.message, step.reasoning, step.extra]
        values += [call.arguments for call in step.tool_calls]
        for observation in step.observations:
            values += [observation.content, observation.extra]
    masked = iter(mask_values(values))
    for step in steps:
        step.message, step.reasoning, step.extra = next(masked), next(masked), next(masked)
        for call in step.tool_calls:
            call.arguments = next(masked)
        for observation in step.observations:
            observation.content, observation.extra = next(masked), next(masked)


def mask_trajectory(trajectory: ParsedTrajectory | None) -> None:
    """Mask, in place, a trajectory: its steps, extras and warnings, its subagents', and the steps it reads again later."""
    if trajectory is None:
        return
    mask_steps(trajectory.steps)
    trajectory.agent_extra, trajectory.final_metrics, trajectory.warnings = mask_values(
        [trajectory.agent_extra, trajectory.final_metrics, trajectory.warnings]
    )
    for sub in trajectory.subagents:
        mask_trajectory(sub)
    if trajectory.restream is not None:
        trajectory.restream = _masked_restream(trajectory.restream)


def _masked_restream(restream: Callable) -> Callable:
    """A ParsedTrajectory.restream that hands each step on masked (a long trajectory's text, read a step at a time)."""

    def masked(on_step: Callable[[int, ParsedStep], None]) -> None:
        def each(position: int, step: ParsedStep) -> None:
            mask_steps([step])
            on_step(position, step)

        restream(each)

    return masked


def mask_folder(folder) -> None:
    """Mask, in place, everything read of a trial folder (reading.trial_folder.TrialFolder) that is text."""
    mask_trajectory(folder.trajectory)
    for sub in folder.subtrajectory_files.values():
        mask_trajectory(sub)
    (
        folder.config, folder.exception_message, folder.exception_traceback, folder.verifier_fields,
        folder.verifier_stdout, folder.verifier_outputs, folder.warnings, folder.excluded, folder.score_log,
    ) = mask_values([
        folder.config, folder.exception_message, folder.exception_traceback, folder.verifier_fields,
        folder.verifier_stdout, folder.verifier_outputs, folder.warnings, folder.excluded, folder.score_log,
    ])
    # Harbor's analysis.json is masked where a review is written (trajectories.reviews.record_review).


def mask_reading(reading):
    """A review's reading (reading.review_data.Reading) with its prose masked: a judge may quote what it read."""
    checks = tuple(replace(check, explanation=mask_text(check.explanation)) for check in reading.checks)
    return replace(reading, summary=mask_text(reading.summary), checks=checks)
