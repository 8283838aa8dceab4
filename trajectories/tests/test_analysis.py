"""analyse_rollout on the real opus4.6 and grok4.20 trials and on small made-up rollouts."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.scoring import normalised_score
from tasks.spec import TaskSpec
from trajectories.analysis.rollout import analyse_rollout
from trajectories.reading.parsed import ParsedObservation, ParsedStep, ParsedToolCall

from .real_trials import GROK, OPUS, flux2_spec, load_steps

T0 = datetime(2026, 4, 26, 12, 0, 0, tzinfo=timezone.utc)


@pytest.fixture
def flux2(shared_tasks_dir):
    return flux2_spec(shared_tasks_dir)


def test_real_opus_rollout(shared_trials_dir, flux2):
    steps = load_steps(shared_trials_dir / OPUS)
    result = analyse_rollout(steps, flux2, None)
    assert len(result.steps) == len(steps) == 139
    by_id = {step.step_id: analysis for step, analysis in zip(steps, result.steps)}

    # The one `python3 /app/evaluate.py` call; its result arrived in the poll of step 137.
    benchmark_steps = [step_id for step_id, analysis in by_id.items() if "benchmark" in analysis.kinds]
    assert benchmark_steps == [133]
    assert by_id[133].call_kinds == [["inspect"], ["benchmark"]]
    metric = by_id[133].metric
    assert (metric.status, metric.value, metric.name) == ("parsed", 0.5643, "score")
    assert metric.score == normalised_score(flux2, 0.5643)
    assert by_id[137].metric is None and by_id[137].kinds == ["wait"]

    # Edits of /app/train.sh (steps 9, 11, 14) and /app/dataset.toml (step 9) as real diffs.
    edit_steps = [step_id for step_id, analysis in by_id.items() if "edit" in analysis.kinds]
    assert edit_steps == [9, 11, 14]
    assert by_id[9].edited_files == ["/app/dataset.toml", "/app/train.sh"]
    assert "--- a/app/train.sh\n+++ b/app/train.sh\n" in by_id[9].diff
    assert "-    --model_version klein-9b\n+    --model_version klein-base-9b\n" in by_id[9].diff
    assert "-batch_size = 2\n+batch_size = 1\n" in by_id[9].diff
    assert "-    --fp8_base \\\n+    --fp8_base --fp8_scaled \\\n" in by_id[14].diff
    assert "previous content unknown" not in by_id[11].diff + by_id[14].diff

    # Submits at the end, inspections at the start, polls in between.
    assert by_id[138].kinds == ["submit"] and by_id[139].kinds == ["submit"]
    assert by_id[2].kinds == ["inspect"]
    assert by_id[50].kinds == ["wait"]

    assert len(result.curve) == 1
    point = result.curve[0]
    # Plotted where the score was printed: step 137, 275 s after the call.
    assert (point.step_id, point.metric, point.best_metric, point.improved) == (137, 0.5643, 0.5643, True)
    assert point.t == pytest.approx((steps[136].timestamp - steps[0].timestamp).total_seconds())
    assert result.n_benchmark_calls == 1
    assert result.n_edits == 3
    assert result.best_metric == 0.5643
    assert result.best_score == normalised_score(flux2, 0.5643)
    assert result.first_benchmark_sec == pytest.approx((steps[132].timestamp - steps[0].timestamp).total_seconds())
    assert result.last_improvement_sec == point.t
    last = (steps[-1].timestamp - steps[0].timestamp).total_seconds()
    assert result.budget_used_fraction == pytest.approx(last / 14400)


def test_real_grok_rollout_has_a_benchmark_call_but_no_result(shared_trials_dir, flux2):
    steps = load_steps(shared_trials_dir / GROK)
    result = analyse_rollout(steps, flux2, None)
    by_id = {step.step_id: analysis for step, analysis in zip(steps, result.steps)}
    # It ran `python3 /app/evaluate.py` and marked the task complete in the same step, before any output.
    assert by_id[13].kinds == ["benchmark", "inspect", "submit"]
    assert by_id[13].metric.status == "unparseable"
    assert result.curve == []
    assert result.best_metric is None and result.best_score is None and result.last_improvement_sec is None
    # Its sed edits of /app/train.sh are replayed on the content it had written.
    assert "-TEXT_ENC=/models/text_encoder\n+TEXT_ENC=/models/text_encoder/model-00001-of-00004.safetensors\n" in by_id[6].diff
    assert "-    --cache_latents \\\n" in by_id[7].diff
    assert by_id[14].kinds == ["submit"]


def step(step_id, seconds, calls=(), output="", source="agent"):
    return ParsedStep(
        step_id=step_id,
        timestamp=T0 + timedelta(seconds=seconds),
        source=source,
        tool_calls=[ParsedToolCall(f"call_{step_id}_{i}", name, args) for i, (name, args) in enumerate(calls)],
        observations=[ParsedObservation("", output)] if output else [],
    )


def keys(text, duration=1.0):
    return ("bash_command", {"keystrokes": text, "duration": duration})


HASH_JOIN = TaskSpec(
    name="hash_join", category="system_optimization", metric="runtime_seconds", direction="lower",
    baseline_score=20.0, reference_score=0.04, benchmark_pattern=r"\./bench\b", budget_sec=7200,
)


def test_runtime_rollout_curve_lower_is_better():
    steps = [
        step(1, 0, source="user"),
        step(2, 10, [keys("make && ./bench\n")], "root@x:/app# make && ./bench\nruntime: 18000 ms\nroot@x:/app# "),
        step(3, 100, [keys("cat > /app/solve.c <<'EOF'\nint fast;\nEOF\n"), keys("make && ./bench\n", 30)], "runtime: 900 ms\n"),
        step(4, 200, [keys("./bench\n")], "runtime: 1.5 s\n"),
        step(5, 300, [keys("./bench\n")], "Baseline time: 20.0 s\nYour time: 0.40 s\n"),
        step(6, 400, [("mark_task_complete", {})], ""),
    ]
    result = analyse_rollout(steps, HASH_JOIN, T0 - timedelta(seconds=20))
    assert [analysis.kinds for analysis in result.steps] == [
        [], ["benchmark", "build"], ["benchmark", "edit", "build"], ["benchmark"], ["benchmark"], ["submit"],
    ]
    assert [(point.step_id, point.t, point.metric, point.best_metric, point.improved) for point in result.curve] == [
        (2, 30.0, 18.0, 18.0, True),
        (3, 120.0, 0.9, 0.9, True),
        (4, 220.0, 1.5, 0.9, False),
    ]
    assert result.steps[4].metric.status == "unparseable"  # two different times: not guessed
    assert result.n_benchmark_calls == 4
    assert result.first_benchmark_sec == 30.0
    assert result.last_improvement_sec == 120.0
    assert result.best_metric == 0.9
    assert result.best_score == normalised_score(HASH_JOIN, 0.9)
    assert result.budget_used_fraction == pytest.approx(420 / 7200)
    assert result.steps[2].edited_files == ["/app/solve.c"]


def test_long_benchmark_result_found_in_later_polls_and_attributed_to_its_call():
    # The metric is the call's; its curve point is the poll's that printed it.
    spec = TaskSpec(name="t", metric="composite_quality", direction="higher", instruction="| Local eval | `python3 /app/evaluate.py` |")
    steps = [
        step(1, 0, [keys("python3 /app/evaluate.py\n", 60)], "Generating 1/8\n"),
        step(2, 60, [keys("", 60)], "Generating 8/8\n"),
        step(3, 120, [keys("", 60)], '{"score": 0.61}\n'),
        step(4, 180, [keys("python3 /app/evaluate.py\n", 60)], "Generating 1/8\n"),
        step(5, 240, [keys("ls /app/output\n")], '{"score": 0.70}\n'),  # not a poll: not read
    ]
    result = analyse_rollout(steps, spec, None)
    assert result.steps[0].metric.value == 0.61
    assert result.steps[2].metric is None
    assert result.steps[3].metric.status == "unparseable"
    assert [(point.step_id, point.t) for point in result.curve] == [(3, 120.0)]


def test_a_result_printed_by_a_later_poll_is_plotted_where_it_was_printed():
    # terminus-2: the command is typed at step 3, which shows nothing yet; the wait at step 4 prints the metric.
    spec = TaskSpec(name="t", metric="latency_ms", direction="lower", instruction="| Local eval | `python3 evaluate_local.py` |")
    steps = [
        step(1, 0, source="user"),
        step(2, 30, [keys("ls\n")], "evaluate_local.py  solve.py\n"),
        step(3, 60, [keys("python3 evaluate_local.py\n", 5)]),
        step(4, 95, [keys("", 30)], "root@h:/app# python3 evaluate_local.py\nlatency_ms: 42.0\nroot@h:/app# "),
        step(5, 130, [("mark_task_complete", {})]),
    ]
    result = analyse_rollout(steps, spec, T0)
    # The metric is the call's, on the step that ran it; the point is where and when it was printed.
    assert result.steps[2].kinds == ["benchmark"] and result.steps[2].metric.value == 42.0
    assert result.steps[3].kinds == ["wait"] and result.steps[3].metric is None
    assert [(point.step_id, point.t, point.metric) for point in result.curve] == [(4, 95.0, 42.0)]
    assert result.first_benchmark_sec == 60.0  # the call itself was launched at step 3
    assert result.last_improvement_sec == 95.0


def test_an_earlier_result_still_on_screen_is_not_the_new_runs():
    spec = TaskSpec(name="t", metric="composite_quality", direction="higher", instruction="| Local eval | `python3 /app/evaluate.py` |")
    screen = "Current Terminal Screen:\n{\"score\": 0.52}\nroot@h:/app# python3 /app/evaluate.py\nLoaded 15 reference images\n"
    steps = [
        step(1, 0, [keys("python3 /app/evaluate.py\n", 60)], screen),
        step(2, 60, [keys("", 60)], screen + "{\"score\": 0.58}\nroot@h:/app# "),
    ]
    result = analyse_rollout(steps, spec, None)
    assert result.steps[0].metric.value == 0.58


def test_benchmark_sent_to_a_log_is_read_when_the_agent_reads_the_log():
    spec = TaskSpec(name="t", metric="composite_quality", direction="higher", instruction="| Local eval | `python3 /app/evaluate.py` |")
    steps = [
        step(1, 0, [keys("python3 /app/evaluate.py > /app/eval.log 2>&1 &\n")], "[1] 4242\n"),
        step(2, 60, [keys("sleep 60 && tail -3 /app/eval.log\n", 65)], "Generating 8/8\n"),
        step(3, 130, [keys("cat /app/eval.log\n")], "Composite Score: 0.66\n"),
        step(4, 140, [keys("python3 /app/evaluate.py > /app/eval2.log 2>&1 &\n")], ""),
        step(5, 200, [keys("cat /app/eval.log\n")], "Composite Score: 0.66\n"),  # the older log: not this run's
    ]
    result = analyse_rollout(steps, spec, None)
    assert result.steps[0].metric.value == 0.66
    assert result.steps[3].metric.status == "unparseable"
    assert [point.step_id for point in result.curve] == [3]  # where the agent read the log


def test_linked_observations_of_other_harnesses():
    # mini-swe-agent style: one call per step, results linked to their call.
    spec = TaskSpec(name="t", metric="score", direction="higher")
    steps = [
        ParsedStep(
            step_id=1, timestamp=T0, source="agent",
            tool_calls=[
                ParsedToolCall("a", "bash", {"command": "cat /app/old_results.txt"}),
                ParsedToolCall("b", "bash", {"command": "python eval.py"}),
            ],
            observations=[ParsedObservation("a", "score: 0.1\n"), ParsedObservation("b", "score: 0.3\n")],
        ),
        ParsedStep(
            step_id=2, timestamp=T0 + timedelta(seconds=5), source="agent",
            tool_calls=[ParsedToolCall("c", "str_replace_based_edit_tool", {"command": "create", "path": "/app/x.py", "file_text": "x\n"})],
            observations=[ParsedObservation("c", "File created")],
        ),
    ]
    result = analyse_rollout(steps, spec, None)
    assert result.steps[0].kinds == ["benchmark", "inspect"]
    assert result.steps[0].metric.value == 0.3  # the evaluation's own output, not the cat
    assert result.steps[1].kinds == ["edit"] and result.steps[1].edited_files == ["/app/x.py"]
    assert result.budget_used_fraction is None  # no budget known


def test_task_complete_flag_on_the_step_is_a_submit():
    done = step(1, 0, [keys("ls\n")], "")
    done.extra = {"task_complete": True}
    result = analyse_rollout([done], TaskSpec(name="t"), None)
    assert result.steps[0].kinds == ["inspect", "submit"]


def test_empty_rollout():
    result = analyse_rollout([], TaskSpec(name="t"), None)
    assert (result.steps, result.curve, result.n_benchmark_calls, result.best_metric) == ([], [], 0, None)


FRAGMENTS = [
    "cat > /app/f.py <<'EOF'\n", "EOF\n", "sed -i 's/a/b/' f.py\n", "sed -i '", "python3 -c \"", "open('f.py','w').write(",
    "&& ", "| tee f.py ", "\n", "echo x > f.py", "root@h:/app# cat f.py\n", "score: 1", '{"score": ', "}", "\\\n",
    "python3 /app/evaluate.py", " 2>&1 ", "C-c", "$(", ")", "'", '"', "cd ..; ", "a", "\x1b[31m", "\r",
]
SHELLISH = st.one_of(
    st.text(alphabet=st.sampled_from(list("abc/.-_ =:'\"\\|&;<>()$`#\n\t{}[]*0123456789EOF")), max_size=80),
    st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(SHELLISH, SHELLISH), max_size=6))
def test_any_keystrokes_and_output_are_analysed_without_error(pairs):
    spec = TaskSpec(name="t", metric="score", direction="lower", benchmark_pattern="(", metric_pattern="[",
                    instruction="`python3 /app/evaluate.py`")
    steps = [step(i + 1, i, [keys(typed)], shown) for i, (typed, shown) in enumerate(pairs)]
    result = analyse_rollout(steps, spec, None)
    assert len(result.steps) == len(steps)
    for analysis, parsed in zip(result.steps, steps):
        assert len(analysis.call_kinds) == len(parsed.tool_calls)
        assert analysis.kinds
