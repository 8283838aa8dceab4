"""A step kind is named through trajectories.analysis.step_kinds, never re-spelled.

The explorer, the failure rules and the judge's digest once each wrote
"benchmark", "edit", "submit" as strings of their own: a kind renamed in
`StepKind` would have left them comparing against a word no step carries,
silently. This reads every module's source (ast) and fails on a string
literal equal to a kind's value anywhere but step_kinds.py. The same words
mean other things elsewhere (a container engine's `build`, the Inspect
harness): those uses are listed below, each with its reason, by the function
(or class) they stand in.
"""
from __future__ import annotations

import ast

from tests.test_status_writers import project_sources
from trajectories.analysis.step_kinds import StepKind

OWNER = "trajectories/analysis/step_kinds.py"
KINDS = frozenset(kind.value for kind in StepKind)

# (module, enclosing function or class, or "<module>") -> (the words it may write, why they are no step kind).
NOT_KINDS: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("evaluations/management/commands/evaluate.py", "Command.handle"): (frozenset({"wait"}), "the --wait option"),
    ("evaluations/sandbox/bubblewrap.py", "BubblewrapEnvironment.__init__"): (frozenset({"build"}), "the sandbox's phase"),
    ("evaluations/sandbox/bubblewrap.py", "BubblewrapEnvironment.start"): (frozenset({"build"}), "the sandbox's phase"),
    ("evaluations/sandbox/containers.py", "OfflineCompose._mirrored_build"): (frozenset({"build"}), "a compose file's key"),
    ("evaluations/sandbox/containers.py", "OfflineCompose._run_docker_compose_command"): (frozenset({"build"}), "compose's subcommand"),
    ("evaluations/sandbox/containers.py", "OfflineCompose._inspect"): (frozenset({"inspect"}), "the engine's subcommand"),
    ("evaluations/sandbox/containers.py", "OfflineCompose._used_bytes"): (frozenset({"inspect"}), "the engine's subcommand"),
    ("evaluations/sandbox/containers.py", "DockerSandbox._run_docker_compose_command"): (frozenset({"build"}), "compose's subcommand"),
    ("tasks/admin.py", "BenchmarkVersionAdmin"): (frozenset({"benchmark"}), "a model field"),
    ("tasks/management/commands/import_tasks.py", "Command.handle"): (frozenset({"benchmark"}), "the --benchmark option"),
    ("tasks/models.py", "BenchmarkVersion.Meta"): (frozenset({"benchmark"}), "a model field"),
    ("tasks/services.py", "import_tasks"): (frozenset({"benchmark"}), "a model field"),
    ("tasks/services.py", "ensure_version"): (frozenset({"benchmark"}), "a model field"),
    ("tasks/worker_images.py", "image_id"): (frozenset({"inspect"}), "the engine's subcommand"),
    ("tasks/worker_images.py", "image_label"): (frozenset({"inspect"}), "the engine's subcommand"),
    ("trajectories/analysis/benchmark_commands.py", "_command_invocations"): (frozenset({"build"}), "cargo's subcommand"),
    ("trajectories/analysis/tool_vocabulary.py", "<module>"): (frozenset({"submit", "wait", "other"}), "a tool's role, which step_kinds reads"),
    ("trajectories/failures/rules.py", "detect_build_failed"): (frozenset({"build"}), "a verifier's detail field"),
    ("trajectories/failures/service.py", "filter_options"): (frozenset({"benchmark"}), "a model field"),
    ("trajectories/reading/inspect_log.py", "<module>"): (frozenset({"inspect", "submit"}), "the Inspect harness, and its answer tool"),
    ("trajectories/reading/inspect_log.py", "_sample_folder"): (frozenset({"inspect"}), "the Inspect harness's config key"),
    ("trajectories/reading/inspect_log.py", "read_log"): (frozenset({"inspect"}), "the Inspect harness's config key (its epoch reducer)"),
    ("trajectories/storing/inspect_import.py", "import_inspect_log"): (frozenset({"inspect"}), "the Inspect harness's config key"),
}


class _Literals(ast.NodeVisitor):
    """Every string constant but a docstring, with the qualified name of the function or class around it."""

    def __init__(self, words: frozenset[str]) -> None:
        self.words = words
        self.scope: list[str] = []
        self.found: list[tuple[int, str, str]] = []
        self.docstrings: set[int] = set()

    def _enter(self, node) -> None:
        self._note_docstring(node)
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _enter

    def visit_Module(self, node: ast.Module) -> None:
        self._note_docstring(node)
        self.generic_visit(node)

    def _note_docstring(self, node) -> None:
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            self.docstrings.add(id(node.body[0].value))

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value in self.words and id(node) not in self.docstrings:
            self.found.append((node.lineno, ".".join(self.scope) or "<module>", node.value))


def literals(source: str, words: frozenset[str]) -> list[tuple[int, str, str]]:
    """(line, enclosing scope, word) for each string literal in `words`."""
    visitor = _Literals(words)
    visitor.visit(ast.parse(source))
    return visitor.found


def respelled_kinds() -> list[str]:
    problems = []
    for relative, source in project_sources():
        if relative == OWNER:
            continue
        for line, scope, word in literals(source, KINDS):
            allowed, _ = NOT_KINDS.get((relative, scope), (frozenset(), ""))
            if word not in allowed:
                problems.append(f"{relative}:{line} ({scope}): {word!r}: use StepKind")
    return problems


def test_no_step_kind_is_spelled_outside_step_kinds():
    assert respelled_kinds() == []


def test_every_allowed_use_is_still_there():
    """An entry whose code has gone is removed, so that the list says only what holds."""
    seen = set()
    for relative, source in project_sources():
        seen |= {(relative, scope) for _, scope, word in literals(source, KINDS) if (relative, scope) in NOT_KINDS}
    assert set(NOT_KINDS) - seen == set()


def test_the_scan_finds_a_respelled_kind():
    source = (
        '"""A docstring saying edit is no use of a kind."""\n'
        "WAITS = frozenset({'wait'})\n"
        "def f(step):\n"
        "    '''benchmark'''\n"
        "    return 'edit' in step.kinds\n"
        "class C:\n"
        "    def g(self):\n"
        "        return f'{self.k or \"other\"}'\n"
    )
    assert literals(source, KINDS) == [(2, "<module>", "wait"), (5, "f", "edit"), (8, "C.g", "other")]
