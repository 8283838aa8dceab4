"""Step kinds: real terminus-2 keystrokes and other harnesses' calls, by table."""
from __future__ import annotations

import pytest

from tasks.spec import TaskSpec
from trajectories.analysis.benchmark_commands import (
    benchmark_commands_from_instruction,
    evaluator_scripts_from_instruction,
    matcher_for,
)
from trajectories.reading.parsed import ParsedToolCall
from trajectories.analysis.step_kinds import RULES, Context, StepKind, call_kinds, union

from .real_trials import GROK, OPUS, keystrokes

# The flux2_klein_lora task names its local evaluation in a table row.
FLUX2 = TaskSpec(
    name="flux2_klein_lora",
    metric="composite_quality",
    direction="higher",
    instruction="| Local eval | `python3 /app/evaluate.py` |\n\nRunning `bash /app/train.sh` as shipped does not produce a LoRA.",
)


def kinds_of(keys: str, spec: TaskSpec = FLUX2) -> list[str]:
    call = ParsedToolCall("c1", "bash_command", {"keystrokes": keys, "duration": 1.0})
    return call_kinds(call, Context(benchmark=matcher_for(spec)))


# Keystrokes copied verbatim from the shared opus4.6 and grok4.20 flux2_klein_lora trajectories.
REAL_KEYSTROKES = [
    ("cat /app/train.sh\n", ["inspect"]),
    ("cat /app/evaluate.py\n", ["inspect"]),  # reading the benchmark is not running it
    ("ls -la /data/concept | head -20\n", ["inspect"]),
    ("nvidia-smi\n", ["inspect"]),
    ("du -sh /models/dit/flux2-klein-base-9b.safetensors\n", ["inspect"]),
    ("wc -l /opt/musubi-tuner/src/musubi_tuner/flux_2_train_network.py\n", ["inspect"]),
    ("sed -n '1,50p' /opt/musubi-tuner/src/musubi_tuner/hv_train_network.py\n", ["inspect"]),
    ("grep -A5 -B5 'TEXT_ENC=' /app/train.sh\n", ["inspect"]),
    ("head -100 /opt/musubi-tuner/src/musubi_tuner/networks/lora_flux_2.py\n", ["inspect"]),
    ("ps aux | grep -E '(python|accelerate)' || true\n", ["inspect"]),
    ("python /opt/musubi-tuner/src/musubi_tuner/flux_2_train_network.py --help 2>&1 | head -120\n", ["inspect"]),
    (
        "# Check if there are cached files from a previous run with wrong model_version\n"
        "find /data/concept/ -name '*.npz' -o -name '*.safetensors' 2>/dev/null | head -20\n",
        ["inspect"],
    ),
    (
        "cat > /app/dataset.toml << 'EOF'\n[general]\nresolution = 1024\ncaption_extension = \".txt\"\n"
        "batch_size = 1\nenable_bucket = true\n\n[[datasets]]\nimage_directory = \"/data/concept\"\nnum_repeats = 10\nEOF\n",
        ["edit"],
    ),
    (
        "sed -i 's|TEXT_ENC=/models/text_encoder|TEXT_ENC=/models/text_encoder/model-00001-of-00004.safetensors|' /app/train.sh\n",
        ["edit"],
    ),
    ("sed -i '/--cache_latents/d' /app/train.sh\n", ["edit"]),
    ("sed -i 's/max_train_epochs 20/max_train_epochs 8/' /app/train.sh\n", ["edit"]),
    ("sed -i '/--max_train_epochs 2/a \\    --max_train_steps 40 \\' /app/train.sh\n", ["edit"]),
    ("python3 /app/evaluate.py\n", ["benchmark"]),
    ("python3 /app/evaluate.py --lora_path /app/output/lora.safetensors 2>&1 | tee /app/eval.log\n", ["benchmark"]),
    ("", ["wait"]),
    ("C-c", ["wait"]),
    ("C-c\n", ["wait"]),
    ("sleep 5\n", ["wait"]),
    ("wait\n", ["wait"]),
    ("chmod +x /app/train.sh\n", ["other"]),
    ("rm -rf /app/output/*\n", ["other"]),
    ("pkill -9 -f 'accelerate launch' || true\n", ["other"]),
    ("bash /app/train.sh\n", ["other"]),  # training, not the task's evaluation
    ("cd /app && bash train.sh 2>&1 | tee /app/train.log &\n", ["other"]),  # tee into a log is not an edit
    ("bash /app/train.sh 2>&1 | tee /app/train.log &\n", ["other"]),
]


@pytest.mark.parametrize("keys,expected", REAL_KEYSTROKES, ids=[repr(keys[:40]) for keys, _ in REAL_KEYSTROKES])
def test_real_terminus_keystrokes(keys, expected):
    assert kinds_of(keys) == expected


def test_table_keystrokes_are_really_in_the_shared_trajectories(shared_trials_dir):
    typed = set(keystrokes(shared_trials_dir / OPUS)) | set(keystrokes(shared_trials_dir / GROK))
    missing = [keys for keys, _ in REAL_KEYSTROKES if keys not in typed]
    assert missing == []


def test_every_real_call_gets_a_kind(shared_trials_dir):
    valid = {kind.value for kind in StepKind}
    for trial in (OPUS, GROK):
        for keys in keystrokes(shared_trials_dir / trial):
            kinds = kinds_of(keys)
            assert kinds and set(kinds) <= valid, keys


# Several commands in one keystroke string, and other harnesses' commands.
ATTN = "Time it locally with `make && ./attn`."
COMBINED = [
    ("make && ./attn\n", ATTN, ["benchmark", "build"]),
    ("make\n", ATTN, ["build"]),
    ("./attn\n", ATTN, ["benchmark"]),
    ("cd /app && make -j4 && ./attn 2>&1 | tail -5\n", ATTN, ["benchmark", "build"]),
    ("gcc -O3 -march=native -o solve solve.c main.c\n", "", ["build"]),
    ("nvcc -O3 -arch=sm_90 solve.cu -o ntt\n", "", ["build"]),
    ("pip install numpy\n", "", ["build"]),
    ("python3 -m pip install -e .\n", "", ["build"]),
    ("cargo build --release\n", "", ["build"]),
    ("python setup.py build_ext --inplace\n", "", ["build"]),
    ("pip list | grep torch\n", "", ["inspect"]),
    ("git diff\n", "", ["inspect"]),
    ("git status && git log --oneline | head\n", "", ["inspect"]),
    ("python3 -c \"import torch; print(torch.__version__)\"\n", "", ["inspect"]),
    ("python3 -c \"open('/app/solve.py','w').write('x = 1\\n')\"\n", "", ["edit"]),
    ("python3 - <<'EOF'\nfrom pathlib import Path\nPath('/app/solve.py').write_text('pass\\n')\nEOF\n", "", ["edit"]),
    ("echo 'CFLAGS=-O3' >> /app/config.mk\n", "", ["edit"]),
    ("python3 - <<'EOF'\nimport torch\nprint(torch.cuda.is_available())\nEOF\n", "", ["inspect"]),
    ("cp /app/solve.c /app/solve_backup.c\n", "", ["other"]),
    ("cp /app/solve.c /tmp/solve.c\n", "", ["other"]),
    ("echo done\n", "", ["other"]),
    ("tee /app/solve.c <<'EOF'\nint main(void) { return 0; }\nEOF\n", "", ["edit"]),
    ("cp /tmp/solve_v2.c /app/solve.c && make\n", "", ["edit", "build"]),
    ("patch -p1 < /tmp/fix.diff\n", "", ["edit"]),
    ("python3 /app/evaluate_local.py && sleep 2\n", "", ["benchmark", "wait"]),
    ("python /app/bench.py --n 10\n", "", ["benchmark"]),
    ("./benchmark.sh\n", "", ["benchmark"]),
    ("python3 score.py\n", "", ["benchmark"]),
    ("less /app/evaluate_local.py\n", "", ["inspect"]),
    ("vim /app/evaluate_local.py\n", "", ["other"]),
    ("timeout 600 python3 /app/main.py --family periodic_clean\n", "", ["other"]),
    ("python3 /app/main.py\n", "## Evaluation\n\n```bash\npython3 /app/main.py                      # full suite\n```\n", ["benchmark"]),
    ("tail -f /app/train.log\n", "", ["wait"]),
    ("for i in 1 2 3; do python3 /app/evaluate.py; done\n", "| Local eval | `python3 /app/evaluate.py` |", ["benchmark"]),
    ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n", "", ["submit"]),
]


@pytest.mark.parametrize("keys,instruction,expected", COMBINED, ids=[repr(row[0][:40]) for row in COMBINED])
def test_combined_and_generic_commands(keys, instruction, expected):
    spec = TaskSpec(name="t", instruction=instruction)
    assert kinds_of(keys, spec) == expected


def test_task_regex_is_tried_first_and_may_span_commands():
    spec = TaskSpec(name="hash_join", benchmark_pattern=r"make\s*&&\s*\./bench_join")
    assert kinds_of("cd /app && make && ./bench_join\n", spec) == ["benchmark", "build"]
    # The regex is the task's word: a run of another binary is not a benchmark.
    assert kinds_of("./other_binary\n", spec) == ["other"]


def test_task_regex_does_not_make_reading_a_benchmark():
    spec = TaskSpec(name="t", benchmark_pattern=r"evaluate\.py")
    assert kinds_of("python3 /app/evaluate.py\n", spec) == ["benchmark"]
    assert kinds_of("cat /app/evaluate.py\n", spec) == ["inspect"]


def test_explicit_task_toml_commands():
    spec = TaskSpec(name="t", benchmark_commands=("make -C /app && /app/ntt_bench",))
    assert kinds_of("/app/ntt_bench --trials 5\n", spec) == ["benchmark"]
    assert kinds_of("make -C /app\n", spec) == ["build"]


# Calls of other harnesses: (function, arguments, expected kinds).
TOOL_CALLS = [
    ("mark_task_complete", {}, ["submit"]),
    ("task_complete", {}, ["submit"]),
    ("submit", {"answer": "done"}, ["submit"]),
    ("bash", {"command": "python3 /app/evaluate.py"}, ["benchmark"]),
    ("execute", {"command": "cat /app/solve.c"}, ["inspect"]),
    ("bash", {"command": ["bash", "-lc", "make && ./attn"]}, ["build"]),
    ("str_replace_based_edit_tool", {"command": "view", "path": "/app/solve.c"}, ["inspect"]),
    ("str_replace_based_edit_tool", {"command": "create", "path": "/app/solve.c", "file_text": "int x;\n"}, ["edit"]),
    ("str_replace_based_edit_tool", {"command": "str_replace", "path": "/app/solve.c", "old_str": "a", "new_str": "b"}, ["edit"]),
    ("str_replace_based_edit_tool", {"command": "insert", "path": "/app/solve.c", "insert_line": 3, "new_str": "b"}, ["edit"]),
    ("edit", {"path": "/app/solve.py", "old_str": "x = 1", "new_str": "x = 2"}, ["edit"]),
    ("write_file", {"path": "/app/solve.py", "content": "print(1)\n"}, ["edit"]),
    ("apply_patch", {"input": "*** Begin Patch\n*** Update File: /app/solve.py\n@@\n-x = 1\n+x = 2\n*** End Patch"}, ["edit"]),
    ("web_search", {"query": "flash attention"}, ["other"]),
]


@pytest.mark.parametrize("function,arguments,expected", TOOL_CALLS, ids=[row[0] + str(i) for i, row in enumerate(TOOL_CALLS)])
def test_other_harness_calls(function, arguments, expected):
    call = ParsedToolCall("c1", function, arguments)
    assert call_kinds(call, Context(benchmark=matcher_for(TaskSpec(name="t")))) == expected


@pytest.mark.parametrize(
    "keystrokes,duration,expected",
    [("q", 15.0, ["wait"]), ("y", 0.5, ["other"]), ("Escape", 0.1, ["wait"]), ("ls\n", 30.0, ["inspect"])],
)
def test_keys_without_enter(keystrokes, duration, expected):
    call = ParsedToolCall("c1", "bash_command", {"keystrokes": keystrokes, "duration": duration})
    assert call_kinds(call, Context(benchmark=matcher_for(FLUX2))) == expected


def test_step_kinds_are_the_union_and_other_only_alone():
    assert union([["inspect"], ["other"], ["edit"]]) == ["edit", "inspect"]
    assert union([["other"], ["other"]]) == ["other"]
    assert union([]) == []


def test_one_table_covers_every_kind_but_other():
    assert {rule.kind for rule in RULES} == set(StepKind) - {StepKind.OTHER}


INSTRUCTIONS = [
    ("| Local eval | `python3 /app/evaluate_local.py` |\n| Training entrypoint | `bash /app/train.sh` |", ["python3 /app/evaluate_local.py"]),
    ("## Evaluation\n\n```bash\npython3 /app/main.py                      # full suite\n```\n", ["python3 /app/main.py"]),
    ("The score is the runtime of `make && ./attn` on the fixed input.", ["make && ./attn"]),
    ("Running `bash /app/train.sh` as shipped does not produce a working LoRA.", []),
    ("Edit `/app/solve.c` only. Do not modify `Makefile`.", []),
    ("## Rules\n\n```c\nint vliw_schedule(const VliwOp *ops);\n```\n", []),
    ("Train with `bash /app/train.sh`; this is how the run is scored by the verifier.", ["bash /app/train.sh"]),
]


@pytest.mark.parametrize("text,expected", INSTRUCTIONS)
def test_benchmark_commands_from_instruction(text, expected):
    assert benchmark_commands_from_instruction(text) == expected


def test_benchmark_commands_of_the_real_instructions(shared_tasks_dir):
    found = {
        folder.name: benchmark_commands_from_instruction((folder / "instruction.md").read_text())
        for folder in sorted(shared_tasks_dir.iterdir())
        if (folder / "instruction.md").exists()
    }
    assert found["flux2_klein_lora"] == ["python3 /app/evaluate.py"]
    assert found["grpo_multisource"] == ["python3 /app/evaluate_local.py"]
    assert found["scaling_law"] == ["python3 /app/evaluate_local.py"]
    assert found["adaptive_compression"][0] == "python3 /app/main.py"
    # Tasks whose instruction names no command get none; never a training script.
    assert found["hash_join"] == []
    assert all("train.sh" not in command for commands in found.values() for command in commands)


# AutoLab's file tables name the local evaluator as a file only (discover_sorting, fredkin_sort_network, resnet_bit_flip).
EVALUATOR_SCRIPTS = [
    ("| `solve.py` | **Edit this file only** |\n| `main.py` | Local verifier (read-only) |", ["main.py"]),
    ("| `circuit.txt` | **Edit this file only** |\n| `main.py` | Simulator/verifier (read-only) |", ["main.py"]),
    ("| `main.py` | Harness: selects sample, calls `find_bit_flips`, evaluates full test set (read-only) |\n"
     "| `train_model.py` | Training script run once at build time (read-only) |", ["main.py"]),
    ("| `/app/main.py`      | Read-only — local evaluator |", ["main.py"]),
    # A compiled harness is no script; the program it builds is what runs.
    ("| `main.c`  | Program generator + correctness checker (read-only) |", []),
    # Prose naming a file beside the word benchmark: not the evaluator (count_primes' starter).
    ("the benchmark times the untouched starter (`/app/starter.py`) on the same input", []),
    # The file to edit is the solution, whatever its row says of the verifier.
    ("| `/app/solve.py` | **Edit**: the verifier imports it |", []),
    # A command is for benchmark_commands_from_instruction, not a file name.
    ("| Local eval | `python3 /app/evaluate_local.py` |", []),
    ("```\n| `main.py` | Local verifier |\n```\n", []),
]


@pytest.mark.parametrize("text,expected", EVALUATOR_SCRIPTS)
def test_evaluator_scripts_from_instruction(text, expected):
    assert evaluator_scripts_from_instruction(text) == expected


SORTING = TaskSpec(
    name="discover_sorting",
    metric="comparator_count",
    direction="lower",
    instruction="| File | Role |\n|------|------|\n| `solve.py` | **Edit this file only** |\n"
    "| `main.py` | Local verifier (read-only) |\n",
)


@pytest.mark.parametrize(
    "keys,expected",
    [
        ("python3 /app/main.py --verify\n", ["benchmark"]),
        ("cd /app && python3 main.py --verify 2>&1 | tail -3\n", ["benchmark"]),
        ("cat /app/main.py\n", ["inspect"]),  # reading the verifier is not running it
        ("python3 /app/solve.py\n", ["other"]),  # the solution itself, run: not the verifier
    ],
)
def test_a_file_tables_local_verifier_is_a_benchmark_call(keys, expected):
    assert kinds_of(keys, SORTING) == expected


def test_the_real_tasks_that_name_only_their_verifiers_file(real_tasks_dir):
    found = {
        folder.name: evaluator_scripts_from_instruction((folder / "instruction.md").read_text())
        for folder in sorted(real_tasks_dir.iterdir())
        if (folder / "instruction.md").exists()
    }
    assert {name: scripts for name, scripts in found.items() if scripts} == {
        "adaptive_compression": ["main.py"],
        "discover_sorting": ["main.py"],
        "fredkin_sort_network": ["main.py"],
        "resnet_bit_flip": ["main.py"],
    }
