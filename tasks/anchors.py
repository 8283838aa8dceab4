"""Which anchors a rollout's reward was computed with: one rule, no ORM.

A verifier may score against anchors of its own: AutoLab's flux2_klein_lora
measures a baseline at run time and scores against a reference of 0.62
while its task.toml says 0.0 -> 0.88. The reward is the truth, so every
normalised figure of a rollout (its benchmark calls' scores, its best-so-far
curve, the budget curves of the leaderboard) must use the anchors that
produced it.

The rule (`resolve`):

1. Candidates: every baseline the verifier reports (numeric `baseline*`
   fields of reward.json, the `score` of its `baseline*.json` files) and
   task.toml's baseline; the same for references (`reference*`). Equal values
   are one candidate with all their sources.
2. The verifier's metric (`verifier_metric`, the one owner of it: the API,
   the rollout page and its plot read it there too).
3. Every (baseline, reference) pair whose reference beats its baseline in
   the task's direction is scored under the task's rule, with the version's
   clipping and without it (a verifier may write a reward above 1 that the
   board clips); a pair reproduces the reward when it lands within TOLERANCE
   of it. Pairs that reproduce it before flooring and clipping come first
   (every pair turns a metric below both baselines into 0), then the
   verifier's own anchors before task.toml's, in the order reported.
4. The first reproducing pair is the rollout's anchors (REPRODUCED). With no
   metric or no reward to check against, task.toml's (UNCHECKED); when no
   pair reproduces the reward, task.toml's too, and the pages say that the
   curve and the reward disagree (MISMATCH).

`for_task` is the one call for a rollout of a task: it looks up the task's
scoring rule and resolves; `stored` reads back what was resolved at import.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .lib.numbers import as_float, format_number
from .scoring import DEFAULT_RULE, anchors_agree, raw_score, rule_for, score_with
from .spec import TaskSpec

TOLERANCE = 5e-4  # AutoLab verifiers round rewards to 4 decimals

REPRODUCED = "reproduced"
UNCHECKED = "unchecked"
MISMATCH = "mismatch"

TASK_TOML = "task.toml"
METRIC_FIELDS = ("metric", "optimized_score")
METRIC_FILE = "optimized_score.json"


@dataclass(frozen=True)
class Candidate:
    """One anchor value and every place that reports it."""

    value: float
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Anchors:
    """The anchors a rollout's figures use, where they come from and whether they were checked."""

    baseline: float | None
    reference: float | None
    status: str
    baseline_sources: tuple[str, ...] = ()
    reference_sources: tuple[str, ...] = ()
    metric: float | None = None
    metric_source: str = ""
    reward: float | None = None
    task_baseline: float | None = None
    task_reference: float | None = None
    tried: int = 0  # pairs scored

    @property
    def differ_from_task(self) -> bool:
        return (self.baseline, self.reference) != (self.task_baseline, self.task_reference)

    def as_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "reference": self.reference,
            "status": self.status,
            "baseline_sources": list(self.baseline_sources),
            "reference_sources": list(self.reference_sources),
            "metric": self.metric,
            "metric_source": self.metric_source,
            "reward": self.reward,
            "task_baseline": self.task_baseline,
            "task_reference": self.task_reference,
            "tried": self.tried,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Anchors":
        names = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in names}
        for key in ("baseline_sources", "reference_sources"):
            values[key] = tuple(values.get(key) or ())
        values.setdefault("status", UNCHECKED)
        values.setdefault("baseline", None)
        values.setdefault("reference", None)
        return cls(**values)


def candidates(prefix: str, task_value: float | None, fields: Mapping, outputs: Mapping) -> list[Candidate]:
    """`prefix` ("baseline" or "reference") anchors: the verifier's, in order, then task.toml's."""
    reported = [
        (as_float(value), f"reward.json {key}")
        for key, value in fields.items() if isinstance(key, str) and key.lower().startswith(prefix)
    ]
    reported += [
        (as_float(content.get("score")), name)
        for name, content in outputs.items()
        if isinstance(name, str) and name.lower().startswith(prefix) and isinstance(content, Mapping)
    ]
    reported.append((as_float(task_value), TASK_TOML))
    return _grouped(reported)


def _grouped(reported: list[tuple[float | None, str]]) -> list[Candidate]:
    """One candidate for each value reported (equal within 1e-12), with all its sources, in the order first reported."""
    found: list[Candidate] = []
    for value, source in reported:
        if value is None:
            continue
        for i, candidate in enumerate(found):
            if math.isclose(candidate.value, value, rel_tol=0, abs_tol=1e-12):
                found[i] = Candidate(candidate.value, (*candidate.sources, source))
                break
        else:
            found.append(Candidate(value, (source,)))
    return found


def verifier_metric(fields: Mapping, outputs: Mapping, name: str = "") -> tuple[float | None, str]:
    """The metric the verifier scored, and where it was read; (None, "") when it wrote none.

    `name` is the task's metric (task.toml's `[optimization] metric`).
    AutoLab v1.1's verifiers write it in one of these places, read in this
    order (the first finite number wins; null, text and booleans are no
    metric):

    1. reward.json's `metric` (most tasks: discover_sorting writes
       `{"reward": 1.0, "metric": 60, "correctness": true}`);
    2. reward.json's key named after the task's metric (adaptive_compression's
       `bits_per_byte`, scaling_law's `perplexity`, moving_mnist_world_model's
       `psnr`), never `reward`;
    3. `optimized_score` (flux2_klein_lora);
    4. `score`, only when `metric` holds the metric's name instead of its
       value (the CUDA tasks: `"metric": "runtime_ms", "score": 12.3`): a
       bare `score` may be a normalised one;
    5. the `score` of optimized_score.json.
    """
    keys = [METRIC_FIELDS[0]]
    if name and name not in ("reward", *METRIC_FIELDS):
        keys.append(name)
    keys += METRIC_FIELDS[1:]
    if isinstance(fields.get("metric"), str) and fields["metric"]:
        keys.append("score")
    for key in keys:
        value = as_float(fields.get(key))
        if value is not None:
            return value, f"reward.json {key}"
    scores = outputs.get(METRIC_FILE)
    if isinstance(scores, Mapping):
        value = as_float(scores.get("score"))
        if value is not None:
            return value, METRIC_FILE
    return None, ""


def describe_metric(value: float | None, name: str, direction: str) -> str:
    """The verifier's metric as the rollout page says it: "comparator_count 60 (lower is better)"; "" without one."""
    if value is None:
        return ""
    text = f"{name or 'metric'} {format_number(value)}"
    return f"{text} ({direction} is better)" if direction in ("lower", "higher") else text


def resolve(
    rule: str,
    direction: str,
    clip: bool,
    task_baseline: float | None,
    task_reference: float | None,
    reward: float | None,
    fields: Mapping | None = None,
    outputs: Mapping | None = None,
    tolerance: float = TOLERANCE,
    transform: str = "identity",
    offset: float = 0.0,
    metric_name: str = "",
) -> Anchors:
    """The anchors that turn the verifier's metric into its reward (see the module doc)."""
    fields = fields if isinstance(fields, Mapping) else {}
    outputs = outputs if isinstance(outputs, Mapping) else {}
    metric, metric_source = verifier_metric(fields, outputs, metric_name)
    reward = as_float(reward)
    fallback = unchecked(task_baseline, task_reference, metric=metric, metric_source=metric_source, reward=reward)
    if metric is None or reward is None:
        return fallback
    baselines = candidates("baseline", task_baseline, fields, outputs)
    references = candidates("reference", task_reference, fields, outputs)
    matches = []
    tried = 0
    for b_order, baseline in enumerate(baselines):
        for r_order, reference in enumerate(references):
            if not anchors_agree(direction, baseline.value, reference.value):
                continue
            tried += 1
            # A verifier may write its reward unclipped on a version that
            # clips (the board clips it): either form may be the one it wrote.
            scores = {score_with(rule, metric, baseline.value, reference.value, capped, transform, offset)
                      for capped in (clip, False)}
            if not any(score is not None and abs(score - reward) <= tolerance for score in scores):
                continue
            raw = raw_score(rule, metric, baseline.value, reference.value, transform, offset)
            exact = raw is not None and abs(raw - reward) <= tolerance
            matches.append((not exact, b_order + r_order, b_order, baseline, reference))
    if not matches:
        return replace(fallback, status=MISMATCH, tried=tried)
    *_, baseline, reference = min(matches, key=lambda m: m[:3])
    return replace(
        fallback,
        baseline=baseline.value,
        reference=reference.value,
        status=REPRODUCED,
        baseline_sources=baseline.sources,
        reference_sources=reference.sources,
        tried=tried,
    )


def unchecked(
    task_baseline: float | None,
    task_reference: float | None,
    *,
    metric: float | None = None,
    metric_source: str = "",
    reward: float | None = None,
) -> Anchors:
    """task.toml's anchors, taken without a check: what a rollout uses when its reward cannot confirm any pair."""
    baseline, reference = as_float(task_baseline), as_float(task_reference)
    return Anchors(
        baseline=baseline,
        reference=reference,
        status=UNCHECKED,
        baseline_sources=(TASK_TOML,) if baseline is not None else (),
        reference_sources=(TASK_TOML,) if reference is not None else (),
        metric=metric,
        metric_source=metric_source,
        reward=reward,
        task_baseline=baseline,
        task_reference=reference,
    )


def task_rule(spec: TaskSpec) -> str:
    """The rule `spec`'s task is scored by: its own, else its category's; the default for a rule no longer known."""
    try:
        return rule_for(spec.category, spec.scoring_rule)
    except ValueError:
        return DEFAULT_RULE


def for_task(spec: TaskSpec, reward: float | None, fields: Mapping | None, outputs: Mapping | None) -> Anchors:
    """The anchors of a rollout of the task `spec` describes with task.toml's anchors: its rule looked up, then `resolve`."""
    return resolve(
        task_rule(spec),
        spec.direction,
        spec.clip,
        spec.baseline_score,
        spec.reference_score,
        reward,
        fields,
        outputs,
        transform=spec.transform,
        offset=spec.transform_offset,
        metric_name=spec.metric,
    )


def stored(data: Mapping[str, Any] | None, task_baseline: float | None, task_reference: float | None) -> Anchors:
    """A rollout's anchors as its import stored them; task.toml's, unchecked, for a rollout stored before they were resolved."""
    if data:
        return Anchors.from_dict(data)
    return unchecked(task_baseline, task_reference)


def describe(anchors: Anchors) -> str:
    """What the pages say about a rollout's anchors, in one sentence or two."""
    def where(sources: tuple[str, ...]) -> str:
        return " = ".join(sources) if sources else "nowhere"

    pair = f"baseline {format_number(anchors.baseline)} ({where(anchors.baseline_sources)}) and reference {format_number(anchors.reference)} ({where(anchors.reference_sources)})"
    if anchors.status == REPRODUCED:
        text = f"Scores use {pair}: they turn the verifier's metric {format_number(anchors.metric)} into its reward {format_number(anchors.reward)}."
        if anchors.differ_from_task:
            text += f" task.toml says {format_number(anchors.task_baseline)} → {format_number(anchors.task_reference)}; the verifier did not score with those."
        return text
    if anchors.status == MISMATCH:
        return (
            f"No pair of the verifier's and task.toml's anchors turns the verifier's metric {format_number(anchors.metric)} "
            f"into its reward {format_number(anchors.reward)}: scores use task.toml's {pair}, so the curve and the reward disagree."
        )
    missing = "no metric" if anchors.metric is None else "no reward"
    return f"The verifier reported {missing}, so its anchors cannot be checked: scores use {pair}."
