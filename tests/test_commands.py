"""Every management command of the project: one that names a benchmark version owns `--version`.

`import_results FILE --version 1.1` once printed Django's version and
exited 0, importing nothing. A new command must be listed in one set or the
other here, so that its `--version` is decided, not inherited.
"""
from __future__ import annotations

import argparse

import pytest
from django.core.management import get_commands, load_command_class

PROJECT_APPS = ("tasks", "evaluations", "trajectories")
# Commands that name no benchmark version: Django's --version (its own version) is theirs.
VERSIONLESS = {"reap_rollouts", "run_stub_llm", "classify_failures", "load_demo", "regrade", "analyze_rollouts"}  # regrade --task VERSION/NAME
# Commands that name one: --version is the benchmark version.
VERSIONED = {"build_boards", "compare_entries", "evaluate", "generate_synthetic", "import_humans", "import_inspect",
             "import_results", "import_tasks", "import_trials", "reanalyse_rollouts"}


def project_commands() -> dict[str, str]:
    return {name: app for name, app in get_commands().items() if app in PROJECT_APPS}


def version_action(name: str, app: str) -> argparse.Action:
    parser = load_command_class(app, name).create_parser("manage.py", name)
    (action,) = [a for a in parser._actions if "--version" in a.option_strings]
    return action


def test_every_command_is_classified():
    assert set(project_commands()) == VERSIONLESS | VERSIONED


@pytest.mark.parametrize("name", sorted(VERSIONED))
def test_a_command_that_names_a_benchmark_version_owns_version(name):
    action = version_action(name, project_commands()[name])
    assert not isinstance(action, argparse._VersionAction), f"{name} --version prints Django's version"
    assert action.dest == "version"
    parser = load_command_class(project_commands()[name], name).create_parser("manage.py", name)
    required = [a for a in parser._actions if a.required or (not a.option_strings and a.nargs is None)]
    given = [word for a in required for word in ([a.option_strings[0], "x"] if a.option_strings else ["x"])]
    parsed = parser.parse_args([*given, "--version", "1.1"])
    assert parsed.version == "1.1"


@pytest.mark.parametrize("name", sorted(VERSIONLESS))
def test_the_others_keep_djangos(name):
    assert isinstance(version_action(name, project_commands()[name]), argparse._VersionAction)
