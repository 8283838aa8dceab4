"""Metric extraction from benchmark output, by table, and on the real opus4.6 evaluation."""
from __future__ import annotations

import pytest

from tasks.scoring import normalised_score
from tasks.spec import TaskSpec
from trajectories.analysis.metrics import clean_terminal, find_metric, read_metric

from .real_trials import OPUS, flux2_spec, load_steps

QUALITY = TaskSpec(name="flux2_klein_lora", metric="composite_quality", direction="higher")
RUNTIME = TaskSpec(name="hash_join", metric="runtime_seconds", direction="lower")
ACCURACY = TaskSpec(name="grpo_multisource", metric="mathvista_accuracy", direction="higher")
NO_METRIC = TaskSpec(name="t")
BPB = TaskSpec(name="adaptive_compression", metric="bits_per_byte", direction="lower")
SORTING = TaskSpec(name="discover_sorting", metric="comparator_count", direction="lower")
NTT = TaskSpec(name="ntt_butterfly_cuda", metric="runtime_ms", direction="lower")
PPL = TaskSpec(name="scaling_law", metric="perplexity", direction="lower")
CYCLES = TaskSpec(name="vliw_scheduler", metric="cycles", direction="lower")

CASES = [
    # (output, spec, (value, unit, name)) — None: nothing to read; "unparseable": ambiguous
    ("Composite Score: 0.5643\n", QUALITY, (0.5643, "", "Composite Score")),
    ("composite_quality = 0.61\n", QUALITY, (0.61, "", "composite_quality")),
    ("  CLIP sim: 0.7572 (normalized: 0.6429)\n", QUALITY, None),
    ('{"score": 0.5, "baseline": {"score": 0.3}, "n": 8}\n', QUALITY, (0.5, "", "score")),
    ("\x1b[1;32mscore: 0.71\x1b[0m\n", QUALITY, (0.71, "", "score")),
    ("score: 0.1\rscore: 0.9\n", QUALITY, (0.9, "", "score")),  # only what stayed on screen
    ("epoch 1 score: 0.30\nepoch 2 score: 0.42\nscore: 0.45\n", QUALITY, "unparseable"),
    ("score: 0.30\n...\nscore: 0.45\n", QUALITY, (0.45, "", "score")),  # same name printed again: the last
    ("metric=0.8 steps=100\n", NO_METRIC, (0.8, "", "metric")),
    ("Time: 0.42 s\n", RUNTIME, (0.42, "s", "Time")),
    ("runtime: 12.3 ms\n", RUNTIME, (0.0123, "s", "runtime")),  # in the unit the metric's name states
    ("Baseline time: 20.0 s\nYour time: 0.40 s\n", RUNTIME, "unparseable"),
    ("Time: 12 s\n", QUALITY, None),  # a time is no quality score
    ("MathVista accuracy: 0.41\nVQA accuracy: 0.93\n", ACCURACY, (0.41, "", "MathVista accuracy")),
    ("mathvista_accuracy=0.38 vqa_retention=0.95\n", ACCURACY, (0.38, "", "mathvista_accuracy")),
    ("steps: 100%|██████████| 3000/3000 [2:08:56<00:00,  2.58s/it, avr_loss=0.29]\n", QUALITY, None),
    ("Generating 1/8: a portrait of a warrior in naruto style\n", QUALITY, None),
    ("Traceback (most recent call last):\nRuntimeError: CUDA out of memory\n", QUALITY, None),
    # The other real AutoLab metrics, in the forms scripts print them.
    ("markov_order1 bpb: 1.912\nperiodic_clean bpb: 0.102\nOverall bpb: 2.134\n", BPB, (2.134, "", "Overall bpb")),
    ("bits per byte = 3.5\n", BPB, (3.5, "", "bits per byte")),
    ("Comparators: 60\nCorrect: 65536/65536\n", SORTING, (60.0, "", "Comparators")),
    # discover_sorting's own main.py --verify, as the real task prints it (its checksum may be all digits).
    ("result=ok comparators=80 checksum=9f1c2d3e4a5b6c7d\n", SORTING, (80.0, "", "comparators")),
    ("root@box:/app# python3 /app/main.py --verify\nresult=ok comparators=60 checksum=1234567890123456\n", SORTING,
     (60.0, "", "comparators")),
    ("Median runtime: 0.87 s\n", NTT, (870.0, "ms", "Median runtime")),
    ("step 900 loss=3.41\nTest perplexity: 29.84\n", PPL, (29.84, "", "Test perplexity")),
    ("val_ppl=31.2\nTest perplexity: 29.84\n", PPL, "unparseable"),  # two perplexities: not guessed
    ("Total cycles: 1234 (baseline 4080)\n", CYCLES, (1234.0, "", "Total cycles")),
]


@pytest.mark.parametrize("text,spec,expected", CASES, ids=[repr(case[0][:40]) for case in CASES])
def test_metric_table(text, spec, expected):
    reading = find_metric(text, spec)
    if expected is None:
        assert reading is None
        assert read_metric(text, spec).status == "unparseable"
    elif expected == "unparseable":
        assert reading is not None and reading.status == "unparseable" and reading.value is None
    else:
        value, unit, name = expected
        assert (reading.status, reading.unit, reading.name) == ("parsed", unit, name)
        assert reading.value == pytest.approx(value)


TASK_PATTERN = [
    (r"Median runtime: (?P<value>[\d.]+) (?P<unit>ms)", "trials: 5\nMedian runtime: 3.25 ms\nscore: 9\n", (3.25, "ms")),
    (r"cycles=(\d+)", "cycles=1234\ncycles=1100\n", (1100.0, "")),  # the final figure
    (r"never printed (?P<value>\d+)", "score: 0.5\n", (0.5, "")),  # falls back to generic reading
    (r"broken (regex", "score: 0.5\n", (0.5, "")),
]


@pytest.mark.parametrize("pattern,text,expected", TASK_PATTERN)
def test_task_pattern_first(pattern, text, expected):
    spec = TaskSpec(name="t", metric_pattern=pattern)
    reading = read_metric(text, spec)
    assert (reading.status, reading.value, reading.unit) == ("parsed", *expected)


def test_reading_is_scored_by_the_tasks_rule():
    spec = TaskSpec(name="t", category="model_development", metric="composite_quality", direction="higher",
                    baseline_score=0.49, reference_score=0.88)
    reading = read_metric("Composite Score: 0.5643\n", spec)
    assert reading.score is not None
    assert reading.score == normalised_score(spec, 0.5643)
    # Without anchors there is a value but no score.
    assert read_metric("Composite Score: 0.5643\n", QUALITY).score is None


def test_clean_terminal():
    assert clean_terminal("\x1b[31merror\x1b[0m\r\nok\n") == "error\nok\n"
    assert clean_terminal("50%\r100%\n") == "100%\n"


def test_real_opus_evaluation_output(shared_trials_dir, shared_tasks_dir):
    steps = load_steps(shared_trials_dir / OPUS)
    spec = flux2_spec(shared_tasks_dir)
    by_id = {step.step_id: step for step in steps}
    # The evaluation started in step 133 printed its result JSON in step 137's poll.
    assert find_metric(by_id[133].observations[0].content, spec) is None
    reading = read_metric(by_id[137].observations[0].content, spec)
    assert (reading.status, reading.value, reading.name) == ("parsed", 0.5643, "score")
    assert reading.score == normalised_score(spec, 0.5643)
    assert reading.score is not None


def test_only_lines_with_a_number_after_a_separator_are_read_and_in_order():
    # Long output without figures, then the result; ratios and arrows count as separators too.
    noise = "".join(f"Generating {i}/8: a portrait: done\n" for i in range(200))
    assert find_metric(noise + "score: 0.25\nscore -> 0.5\n", QUALITY).value == 0.5
    assert find_metric(noise, QUALITY) is None
    # A value inside a printed JSON object is read from the JSON, not twice.
    reading = find_metric(noise + '{"score": 0.75}\n', QUALITY)
    assert (reading.status, reading.value) == ("parsed", 0.75)
