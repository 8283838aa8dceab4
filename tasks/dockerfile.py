"""Read a task's Dockerfile into a plan the host sandbox can carry out.

The bubblewrap backend has no image builder: it lays the task's files out on
the host and runs the agent with the host's own tools. That is only honest
for Dockerfiles that need nothing beyond those tools, so this module accepts
FROM (noted), WORKDIR, COPY/ADD of local files, ENV, ARG and simple RUN
steps, ignores instructions that only matter to a container runtime (CMD,
EXPOSE, LABEL, ...), and returns a reason for everything else ("RUN installs
packages with apt-get"), which the environment reports as
"needs a container backend: <reason>" before a trial starts.
"""
from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Instructions that only configure a container runtime; the sandbox has none.
IGNORED = {"CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "MAINTAINER", "VOLUME", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}

# Host directories bound read-only into every sandbox: a task cannot put files there.
HOST_BOUND = ("/usr", "/etc", "/proc", "/dev", "/sys", "/bin", "/sbin", "/lib", "/lib64")

# RUN steps that fetch from the network or install system packages.
NEEDS_CONTAINER_PATTERNS: list[tuple[str, str]] = [
    (r"\bapt(-get)?\s", "installs system packages with apt"),
    (r"\b(apk|yum|dnf|zypper|pacman)\s", "installs system packages"),
    (r"\b(pip3?|python3?\s+-m\s+pip)\s+install\b(?!.*--no-index)", "installs Python packages from the network (pip install)"),
    (r"\buv\s+(pip\s+install|sync|add)\b", "installs Python packages from the network (uv)"),
    (r"\b(conda|mamba|micromamba)\s", "installs packages with conda"),
    (r"\b(npm|yarn|pnpm)\s+(install|ci|add)\b", "installs Node packages from the network"),
    (r"\b(curl|wget)\s", "downloads files from the network"),
    (r"\bgit\s+clone\b", "clones a repository from the network"),
    (r"\b(cargo|go|gem)\s+(install|get)\b", "installs packages from the network"),
    (r"\badd-apt-repository\b", "adds package repositories"),
    (r"\bnvidia-smi\b|\bnvcc\b", "needs a GPU toolchain"),
]


@dataclass
class CopyStep:
    sources: list[str]  # relative to the build context, globs allowed
    dest: str  # absolute path in the sandbox
    chmod: str = ""
    extract: bool = False  # ADD of a local archive


@dataclass
class RunStep:
    command: str
    workdir: str
    env: dict[str, str]


@dataclass
class BuildPlan:
    base_image: str = ""
    workdir: str = "/"
    env: dict[str, str] = field(default_factory=lambda: {"PATH": DEFAULT_PATH})
    # COPY/ADD and RUN in Dockerfile order, plus every WORKDIR to create.
    steps: list[CopyStep | RunStep] = field(default_factory=list)
    workdirs: list[str] = field(default_factory=list)
    # Why the sandbox cannot build this Dockerfile; empty when it can.
    unsupported: list[str] = field(default_factory=list)


HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def logical_lines(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuations joined and comments dropped.

    A heredoc (`RUN python3 <<'EOF'` ... `EOF`, BuildKit's syntax, which
    real tasks use) belongs to its instruction, lines and all: a body line
    that reads `from pathlib import Path` is Python, not a FROM.
    """
    lines: list[tuple[str, str]] = []
    pending = ""
    raw_lines = text.splitlines()
    index = 0

    def finish(logical: str) -> None:
        nonlocal index
        instruction, _, rest = logical.strip().partition(" ")
        rest = rest.strip()
        for match in HEREDOC.finditer(rest):
            body = []
            while index < len(raw_lines) and raw_lines[index].strip() != match.group(2):
                body.append(raw_lines[index])
                index += 1
            index += 1  # the terminator
            rest += "\n" + "\n".join(body) + "\n" + match.group(2)
        lines.append((instruction.upper(), rest))

    while index < len(raw_lines):
        raw = raw_lines[index]
        index += 1
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # comment lines inside a continued instruction
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        pending += stripped
        if pending.strip():
            finish(pending)
        pending = ""
    if pending.strip():
        finish(pending)
    return lines


_VAR = re.compile(r"\$(?:\{(\w+)(?::-([^}]*))?\}|(\w+))")


def substitute(value: str, variables: dict[str, str]) -> str:
    """Expand $VAR, ${VAR} and ${VAR:-default} the way Docker does in ENV/COPY/WORKDIR."""

    def replace(match: re.Match) -> str:
        name = match.group(1) or match.group(3)
        default = match.group(2)
        found = variables.get(name)
        if found:
            return found
        return default if default is not None else ""

    return _VAR.sub(replace, value)


def parse_env(arguments: str, variables: dict[str, str]) -> dict[str, str]:
    """`ENV A=1 B="two words"` or the legacy `ENV A one value`."""
    if "=" not in arguments.split(" ", 1)[0]:
        key, _, value = arguments.partition(" ")
        return {key: substitute(value.strip(), variables)}
    result: dict[str, str] = {}
    for token in shlex.split(arguments):
        key, _, value = token.partition("=")
        result[key] = substitute(value, {**variables, **result})
    return result


def split_arguments(arguments: str) -> list[str]:
    """JSON-array form (`["a", "b"]`) or whitespace-separated words."""
    if arguments.startswith("["):
        try:
            parsed = json.loads(arguments)
            if isinstance(parsed, list):
                return [str(item) for item in parsed]
        except ValueError:
            pass
    return shlex.split(arguments)


def under_host_bound(path: str) -> bool:
    pure = PurePosixPath(path)
    return any(pure == PurePosixPath(bound) or pure.is_relative_to(bound) for bound in HOST_BOUND)


def run_step_problem(command: str) -> str | None:
    for pattern, reason in NEEDS_CONTAINER_PATTERNS:
        if re.search(pattern, command):
            return f"RUN {reason}: {command[:80]}"
    return None


def resolve_dir(current: str, path: str) -> str:
    return str(PurePosixPath(current) / path) if not path.startswith("/") else str(PurePosixPath(path))


def parse_dockerfile(text: str, build_args: dict[str, str] | None = None) -> BuildPlan:
    plan = BuildPlan()
    variables: dict[str, str] = dict(build_args or {})
    n_from = 0
    for instruction, arguments in logical_lines(text):
        if instruction == "FROM":
            n_from += 1
            words = arguments.split()
            plan.base_image = substitute(words[0], variables) if words else ""
            if n_from > 1 or any(word.upper() == "AS" for word in words[1:]):
                plan.unsupported.append("multi-stage build (several FROM / FROM ... AS)")
        elif instruction == "ARG":
            name, _, default = arguments.partition("=")
            variables.setdefault(name.strip(), substitute(default.strip().strip('"'), variables))
        elif instruction == "ENV":
            values = parse_env(arguments, {**variables, **plan.env})
            plan.env.update(values)
        elif instruction == "WORKDIR":
            plan.workdir = resolve_dir(plan.workdir, substitute(arguments.strip().strip('"'), {**variables, **plan.env}))
            if under_host_bound(plan.workdir):
                plan.unsupported.append(f"WORKDIR {plan.workdir} is a host system directory")
            plan.workdirs.append(plan.workdir)
        elif instruction in ("COPY", "ADD"):
            words = split_arguments(arguments) if not arguments.startswith("--") else None
            if words is None:
                flags: list[str] = []
                rest = arguments
                while rest.startswith("--"):
                    flag, _, rest = rest.partition(" ")
                    flags.append(flag)
                    rest = rest.strip()
                words = split_arguments(rest)
            else:
                flags = []
            if any(flag.startswith("--from") for flag in flags):
                plan.unsupported.append(f"{instruction} --from (multi-stage build)")
                continue
            if len(words) < 2:
                plan.unsupported.append(f"malformed {instruction} {arguments}")
                continue
            env_vars = {**variables, **plan.env}
            sources = [substitute(word, env_vars) for word in words[:-1]]
            dest = substitute(words[-1], env_vars)
            absolute = resolve_dir(plan.workdir, dest)
            if dest.endswith("/"):
                absolute += "/"
            if instruction == "ADD" and any(re.match(r"^[a-z]+://", source) for source in sources):
                plan.unsupported.append(f"ADD from a URL: {' '.join(sources)}")
                continue
            if under_host_bound(absolute.rstrip("/") or "/"):
                plan.unsupported.append(f"{instruction} into host system directory {absolute}")
                continue
            chmod = next((flag.split("=", 1)[1] for flag in flags if flag.startswith("--chmod=")), "")
            extract = instruction == "ADD" and any(
                source.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")) for source in sources
            )
            plan.steps.append(CopyStep(sources=sources, dest=absolute, chmod=chmod, extract=extract))
        elif instruction == "RUN":
            command = arguments
            if command.startswith("--"):
                plan.unsupported.append(f"RUN with BuildKit flags: {command[:60]}")
                continue
            if command.startswith("["):
                command = shlex.join(split_arguments(command))
            problem = run_step_problem(command)
            if problem:
                plan.unsupported.append(problem)
                continue
            plan.steps.append(RunStep(command=command, workdir=plan.workdir, env=dict(plan.env)))
        elif instruction == "USER":
            user = arguments.split(":")[0].strip()
            if user not in ("root", "0"):
                plan.unsupported.append(f"USER {user} (the sandbox runs tasks as root)")
        elif instruction == "ONBUILD":
            plan.unsupported.append("ONBUILD")
        elif instruction in IGNORED:
            continue
        else:
            plan.unsupported.append(f"unknown instruction {instruction}")
    if n_from == 0:
        plan.unsupported.append("no FROM instruction")
    return plan
