"""The anchors a rollout's reward was computed with (tasks.anchors), on hand-made and real verifier outputs."""
from __future__ import annotations

import json

import pytest

from tasks import anchors
from tasks.scoring import ANCHORED_LINEAR, LOG_STRETCH, score_with
from tasks.taskdir import parse_task_dir

# flux2_klein_lora's real reward.json (opus 4.6) and its task.toml anchors 0.0 -> 0.88.
FLUX_FIELDS = {
    "reward": 0.9102,
    "metric": 0.5643,
    "optimized_score": 0.5643,
    "baseline_score_measured": 0.4918,
    "baseline_score_task_toml": 0.0,
    "reference_score": 0.62,
}
FLUX_OUTPUTS = {"baseline_score.json": {"score": 0.4918}, "optimized_score.json": {"score": 0.5643}}


def resolve(fields, outputs=None, rule=ANCHORED_LINEAR, direction="higher", base=0.0, ref=0.88, clip=True, reward=None):
    reward = fields.get("reward") if reward is None else reward
    return anchors.resolve(rule, direction, clip, base, ref, reward, fields, outputs or {})


# A flux2_klein_lora-like verifier whose LoRA beat its reference: it writes the
# unclipped reward, metric / reference_score (its baseline 0), on a version
# that clips (the board counts it as 1.0).
ABOVE_ONE_FIELDS = {
    "reward": 1.0711,
    "metric": 0.6641,
    "optimized_score": 0.6641,
    "baseline_score_measured": 0.4918,
    "baseline_score_task_toml": 0.0,
    "reference_score": 0.62,
}


def test_a_reward_above_one_on_a_clipping_version_is_reproduced_unclipped():
    """It once fell back to task.toml's anchors: the clipped score (1.0) was compared with the raw reward."""
    found = resolve(ABOVE_ONE_FIELDS, clip=True)
    assert found.status == anchors.REPRODUCED
    assert (found.baseline, found.reference) == (0.0, 0.62)
    assert found.reference_sources == ("reward.json reference_score",)
    # Unclipped versions read it the same way.
    assert resolve(ABOVE_ONE_FIELDS, clip=False).status == anchors.REPRODUCED


def test_flux_reward_is_reproduced_by_the_toml_baseline_and_the_verifiers_reference():
    found = resolve(FLUX_FIELDS, FLUX_OUTPUTS)
    assert found.status == anchors.REPRODUCED
    assert (found.baseline, found.reference) == (0.0, 0.62)
    assert found.baseline_sources == ("reward.json baseline_score_task_toml", "task.toml")
    assert found.reference_sources == ("reward.json reference_score",)
    assert found.metric == 0.5643 and found.metric_source == "reward.json metric"
    assert found.differ_from_task
    assert score_with(ANCHORED_LINEAR, 0.5643, found.baseline, found.reference, True) == pytest.approx(0.9102, abs=5e-4)
    text = anchors.describe(found)
    assert "reference 0.62 (reward.json reference_score)" in text and "task.toml says 0 → 0.88" in text


@pytest.mark.parametrize(
    "fields, outputs, task, expected",
    [
        # task.toml's own anchors reproduce the reward: nothing differs.
        ({"reward": 0.5, "metric": 0.44}, {}, (0.0, 0.88), (anchors.REPRODUCED, 0.0, 0.88)),
        # The measured baseline is the one: (0.5643 - 0.4918) / (0.62 - 0.4918) = 0.5655.
        ({**FLUX_FIELDS, "reward": 0.5655}, FLUX_OUTPUTS, (0.0, 0.88), (anchors.REPRODUCED, 0.4918, 0.62)),
        # Only the score files report the metric and the baseline.
        ({"reward": 0.5655, "reference_score": 0.62}, FLUX_OUTPUTS, (0.0, 0.88), (anchors.REPRODUCED, 0.4918, 0.62)),
        # No metric: nothing to check against, task.toml's.
        ({"reward": 0.0, "reason": "no_lora_file"}, {}, (0.0, 0.88), (anchors.UNCHECKED, 0.0, 0.88)),
        # No reward either.
        ({"metric": 0.3}, {}, (0.0, 0.88), (anchors.UNCHECKED, 0.0, 0.88)),
        # Nothing reproduces 0.7: task.toml's, flagged.
        ({"reward": 0.7, "metric": 0.5643, "reference_score": 0.62}, {}, (0.0, 0.88), (anchors.MISMATCH, 0.0, 0.88)),
        # A metric below every baseline scores 0 under any pair; the verifier's pair is preferred.
        ({"reward": 0.0, "metric": 0.3, "baseline_score_measured": 0.4918, "reference_score": 0.62}, {}, (0.0, 0.88),
         (anchors.REPRODUCED, 0.4918, 0.62)),
        # A pair that reproduces the reward unclipped beats one that only does after clipping:
        # 0.7 against 0 -> 0.62 is 1.13, clipped to 1; against 0 -> 0.7 it is exactly 1.
        ({"reward": 1.0, "metric": 0.7, "reference_score": 0.62}, {}, (0.0, 0.7), (anchors.REPRODUCED, 0.0, 0.7)),
        # Booleans and text are not anchors.
        ({"reward": 0.5, "metric": 0.44, "baseline_ok": True, "reference_note": "n/a"}, {}, (0.0, 0.88),
         (anchors.REPRODUCED, 0.0, 0.88)),
        # No anchors anywhere.
        ({"reward": 0.5, "metric": 0.44}, {}, (None, None), (anchors.MISMATCH, None, None)),
    ],
)
def test_resolve_anchored_linear(fields, outputs, task, expected):
    found = resolve(fields, outputs, base=task[0], ref=task[1])
    assert (found.status, found.baseline, found.reference) == expected


@pytest.mark.parametrize(
    "fields, task, clip, expected",
    [
        # hash_join-like runtime: the verifier measured a 25 s baseline, task.toml says 20 s.
        # 0.5 * ln(25 / 1) / ln(25 / 0.04) = 0.25
        ({"reward": 0.25, "metric": 1.0, "baseline_score_measured": 25.0}, (20.0, 0.04), True,
         (anchors.REPRODUCED, 25.0, 0.04)),
        # task.toml's: 0.5 * ln(20 / 1) / ln(20 / 0.04) = 0.2410
        ({"reward": 0.241, "metric": 1.0, "baseline_score_measured": 25.0}, (20.0, 0.04), True,
         (anchors.REPRODUCED, 20.0, 0.04)),
        # v1.0 does not clip: three equal factors of speed-up past the baseline score 1.5.
        ({"reward": 1.5, "metric": 20.0 * (0.04 / 20.0) ** 3}, (20.0, 0.04), False, (anchors.REPRODUCED, 20.0, 0.04)),
        # A reported reference that does not beat the baseline in the task's direction is never used.
        ({"reward": 0.25, "metric": 1.0, "reference_score": 30.0}, (20.0, 0.04), True, (anchors.MISMATCH, 20.0, 0.04)),
    ],
)
def test_resolve_log_stretch(fields, task, clip, expected):
    found = resolve(fields, rule=LOG_STRETCH, direction="lower", base=task[0], ref=task[1], clip=clip)
    assert (found.status, found.baseline, found.reference) == expected


@pytest.mark.parametrize(
    "fields, outputs, name, expected",
    [
        # discover_sorting and most AutoLab v1.1 tasks: the metric under `metric`.
        ({"reward": 1.0, "metric": 60, "correctness": True}, {}, "comparator_count", (60.0, "reward.json metric")),
        ({"reward": 0.5, "metric": 1.25}, {}, "", (1.25, "reward.json metric")),
        # No metric: a failed check writes none, or null.
        ({"reward": 0.0, "reason": "build_file_modified"}, {}, "runtime_seconds", (None, "")),
        ({"reward": 0.0, "metric": None, "correctness": False}, {}, "comparator_count", (None, "")),
        ({}, {}, "", (None, "")),
        # Not a number: text, a boolean, a nested value, NaN.
        ({"reward": 0.0, "metric": "fast"}, {}, "", (None, "")),
        ({"reward": 1.0, "metric": True}, {}, "", (None, "")),
        ({"reward": 1.0, "metric": {"raw": 3}}, {}, "", (None, "")),
        ({"reward": 1.0, "metric": float("nan")}, {}, "", (None, "")),
        # Under the task's own metric name (adaptive_compression, scaling_law, moving_mnist_world_model).
        ({"reward": 0.8, "correctness": True, "bits_per_byte": 2.113}, {}, "bits_per_byte",
         (2.113, "reward.json bits_per_byte")),
        ({"reward": 0.4, "perplexity": 31.5, "test_loss": 3.45}, {}, "perplexity", (31.5, "reward.json perplexity")),
        ({"reward": 0.4, "perplexity": None}, {}, "perplexity", (None, "")),
        # `metric` naming the metric, its value in `score` (the CUDA tasks: icp_correspondence_step_cuda).
        ({"reward": 0.5, "score": 12.5, "metric": "runtime_ms", "speedup": 5.2}, {}, "runtime_ms",
         (12.5, "reward.json score")),
        # A bare `score` may be anything (a normalised one): not read without that label.
        ({"reward": 0.5, "score": 0.5}, {}, "runtime_ms", (None, "")),
        # `metric` wins over the named key; the reward is never the metric, whatever the task calls it.
        ({"reward": 0.9, "metric": 2.0, "bits_per_byte": 2.1}, {}, "bits_per_byte", (2.0, "reward.json metric")),
        ({"reward": 0.9}, {}, "reward", (None, "")),
        # flux2_klein_lora: `optimized_score`, and its optimized_score.json.
        ({"reward": 0.91, "optimized_score": 0.5643}, {}, "composite_quality", (0.5643, "reward.json optimized_score")),
        ({"reward": 0.91}, {"optimized_score.json": {"score": 0.5643}}, "composite_quality",
         (0.5643, "optimized_score.json")),
    ],
)
def test_verifier_metric(fields, outputs, name, expected):
    assert anchors.verifier_metric(fields, outputs, name) == expected


def test_describe_metric():
    assert anchors.describe_metric(60.0, "comparator_count", "lower") == "comparator_count 60 (lower is better)"
    assert anchors.describe_metric(0.81641234, "psnr", "higher") == "psnr 0.816412 (higher is better)"
    assert anchors.describe_metric(2.5, "", "") == "metric 2.5"
    assert anchors.describe_metric(None, "psnr", "higher") == ""


def test_the_task_named_metric_resolves_the_anchors():
    """adaptive_compression writes `bits_per_byte`, no `metric`: its reward is still checked against its anchors."""
    fields = {"reward": 0.5, "bits_per_byte": 2.0}
    found = anchors.resolve(ANCHORED_LINEAR, "lower", True, 3.0, 1.0, 0.5, fields, {}, metric_name="bits_per_byte")
    assert (found.status, found.metric, found.metric_source) == (anchors.REPRODUCED, 2.0, "reward.json bits_per_byte")
    assert anchors.resolve(ANCHORED_LINEAR, "lower", True, 3.0, 1.0, 0.5, fields, {}).status == anchors.UNCHECKED


def test_round_trip_through_json():
    found = resolve(FLUX_FIELDS, FLUX_OUTPUTS)
    again = anchors.Anchors.from_dict(json.loads(json.dumps(found.as_dict())))
    assert again == found
    assert anchors.Anchors.from_dict({}).status == anchors.UNCHECKED


def test_describe_each_status():
    assert "cannot be checked" in anchors.describe(resolve({"reward": 0.0}))
    assert "disagree" in anchors.describe(resolve({"reward": 0.7, "metric": 0.5643}))
    same = anchors.describe(resolve({"reward": 0.5, "metric": 0.44}))
    assert "task.toml says" not in same and "baseline 0 (task.toml)" in same


@pytest.mark.shared
def test_every_real_trial_reward_is_reproduced_by_its_anchors(shared_tasks_dir, shared_trials_dir):
    checked = 0
    for trial in sorted(p for p in shared_trials_dir.iterdir() if p.is_dir()):
        config = json.loads((trial / "config.json").read_text())
        task_name = config["task"]["path"].rstrip("/").rsplit("/", 1)[-1].rsplit("__", 1)[-1]
        task = parse_task_dir(shared_tasks_dir / task_name)
        verifier = trial / "verifier"
        fields = json.loads((verifier / "reward.json").read_text())
        outputs = {p.name: json.loads(p.read_text()) for p in verifier.glob("*.json") if p.name != "reward.json"}
        rule = ANCHORED_LINEAR if task.category == "model_development" else LOG_STRETCH
        found = anchors.resolve(rule, task.direction, True, task.baseline_score, task.reference_score,
                                fields["reward"], fields, outputs, metric_name=task.metric)
        if found.metric is None:
            assert found.status == anchors.UNCHECKED  # grok: no LoRA, no metric
            continue
        assert found.status == anchors.REPRODUCED, (trial.name, found)
        normalised = score_with(rule, found.metric, found.baseline, found.reference, True)
        assert abs(normalised - fields["reward"]) <= 5e-4, (trial.name, normalised, fields["reward"])
        checked += 1
    assert checked >= 1
