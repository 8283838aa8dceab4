"""trajectories.analysis.shell: splitting agents' shell text into simple commands.

Step kinds and edit replay read these results, so each rule has a row here:
a regression in the splitter or in `strip_wrappers` fails in this module,
not only (or not at all) in the analysis tests downstream.
"""
from __future__ import annotations

import pytest

from trajectories.analysis.shell import split_commands, strip_wrappers, tokenise

# (words, what is left once the prefixes are dropped)
WRAPPER_CASES = [
    (["python", "x.py"], ["python", "x.py"]),
    (["timeout", "600", "python", "x.py"], ["python", "x.py"]),
    (["timeout", "-s", "KILL", "60", "make"], ["make"]),
    (["timeout", "--signal", "TERM", "-k", "5", "1h", "./bench"], ["./bench"]),
    (["timeout", "--preserve-status", "10", "pytest"], ["pytest"]),
    (["sudo", "python3", "run.py"], ["python3", "run.py"]),
    (["sudo", "-E", "nice", "-n", "10", "python3", "run.py"], ["python3", "run.py"]),
    (["FOO=1", "BAR=2", "python"], ["python"]),
    (["env", "-i", "CUDA_VISIBLE_DEVICES=0", "python", "t.py"], ["python", "t.py"]),
    (["nohup", "python", "train.py"], ["python", "train.py"]),
    (["time", "./bench"], ["./bench"]),
    (["stdbuf", "-oL", "python", "x.py"], ["python", "x.py"]),
    (["exec", "bash"], ["bash"]),
    (["do", "echo", "$i"], ["echo", "$i"]),
    (["then", "make"], ["make"]),
    (["!", "grep", "x"], ["grep", "x"]),
    (["sudo", "timeout", "30", "env", "X=1", "nohup", "python"], ["python"]),
    ([], []),
    (["timeout"], []),
]


@pytest.mark.parametrize("words, expected", WRAPPER_CASES)
def test_strip_wrappers(words, expected):
    assert strip_wrappers(words) == expected


def texts(source: str) -> list[str]:
    return [command.text for command in split_commands(source)]


# (shell text, the commands' texts)
SPLIT_CASES = [
    ("cd /app && make && ./bench", ["cd /app", "make", "./bench"]),
    ("make || echo failed", ["make", "echo failed"]),
    ("a; b ;c", ["a", "b", "c"]),
    ("a\nb\n\n  c  \n", ["a", "b", "c"]),
    ("python train.py &\nsleep 5", ["python train.py", "sleep 5"]),
    ('echo "a; b && c"', ['echo "a; b && c"']),
    ("echo 'x || y'", ["echo 'x || y'"]),
    ("echo $(cd /tmp && ls)", ["echo $(cd /tmp && ls)"]),
    ("ls # a comment; not a command", ["ls"]),
    ("python3 x.py 2>&1 | tee log", ["python3 x.py 2>&1 | tee log"]),
]


@pytest.mark.parametrize("source, expected", SPLIT_CASES)
def test_split_commands(source, expected):
    assert texts(source) == expected


def test_a_backslash_newline_continues_the_command():
    (command,) = split_commands("python train.py \\\n  --epochs 3")
    assert command.stages == [["python", "train.py", "--epochs", "3"]]


def test_a_heredoc_body_belongs_to_its_command_and_is_never_split():
    source = "cat > /app/x.py <<'EOF'\nimport os; print(1) && 2\nrm -rf /\nEOF\npython /app/x.py"
    first, second = split_commands(source)
    assert first.text == "cat > /app/x.py <<'EOF'"
    assert first.heredoc == "import os; print(1) && 2\nrm -rf /\n"
    assert first.heredoc_delimiter == "EOF"
    assert first.output_files == [(">", "/app/x.py")]
    assert second.program == "python"


def test_a_dash_heredoc_strips_leading_tabs_of_its_lines():
    first, second = split_commands("cat <<-END > f\n\tbody\n\tEND\nls")
    assert first.heredoc == "body\n"
    assert second.text == "ls"


def test_stages_and_redirects_of_a_pipeline():
    (command,) = split_commands("FOO=1 timeout 60 python3 bench.py > out.txt 2>&1 | tee -a log.txt")
    assert command.stages == [["FOO=1", "timeout", "60", "python3", "bench.py"], ["tee", "-a", "log.txt"]]
    assert command.redirects == [(">", "out.txt"), ("2>&", "1")]
    assert command.program == "python3"
    assert command.words == ["python3", "bench.py"]
    assert command.stage_words()[1] == ["tee", "-a", "log.txt"]
    assert command.output_files == [(">", "out.txt")]


def test_output_files_leave_out_devices_and_descriptors():
    (command,) = split_commands("make > /dev/null 2>&1 >> build.log")
    assert command.output_files == [(">>", "build.log")]


def test_program_drops_its_directory():
    (command,) = split_commands("/usr/bin/python3 -c 'print(1)'")
    assert command.program == "python3"


def test_start_is_the_offset_of_each_command():
    source = "cd /app && make"
    offsets = [command.start for command in split_commands(source)]
    assert [source[offset:].split()[0] for offset in offsets] == ["cd", "make"]


# (one command's text, its tokens as (word, is_operator))
TOKEN_CASES = [
    ('echo "a b" > out.txt', [("echo", False), ("a b", False), (">", True), ("out.txt", False)]),
    ("echo 'it''s'", [("echo", False), ("its", False)]),
    (r"echo a\ b", [("echo", False), ("a b", False)]),
    ("grep x f|wc -l", [("grep", False), ("x", False), ("f", False), ("|", True), ("wc", False), ("-l", False)]),
    ("cmd >>log 2>err", [("cmd", False), (">>", True), ("log", False), ("2>", True), ("err", False)]),
]


@pytest.mark.parametrize("source, expected", TOKEN_CASES)
def test_tokenise(source, expected):
    assert tokenise(source) == expected


def test_unterminated_quotes_stay_in_one_forgiving_command():
    (command,) = split_commands('echo "never closed; ls')
    assert command.program == "echo"
