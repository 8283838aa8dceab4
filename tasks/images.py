"""A task's base images on a worker that cannot pull them: the mirror map, and what a build's failure means.

A real task's Dockerfile builds `FROM ubuntu:22.04` or `FROM python:3.11-slim`;
a worker with no registry (air-gapped, or offline like CI) finds neither.
Operators answer this with a mirror map: an image reference mapped to one
in the engine's local store or in a private registry. Ours is the worker
setting `AUTOLAB_IMAGE_MIRRORS` (`MIRRORS_VARIABLE`), applied at build time
to a copy of the Dockerfile kept outside the task directory, so the task's
files and its published checksum stay what the benchmark shipped.

A substitution changes what a timed task measures (another libc, another
compiler), so every one made is recorded on the rollout and shown on its
page (`Substitution`): nobody should mistake a stand-in run for the
published environment.

Also here, because they read the same Dockerfile: the packages a
Dockerfile asks apt for (a stand-in's archive may lack one:
`linux-tools-generic` is Ubuntu's), whether a Go or Rust build downloads
dependencies, and the one readable line a failed image build comes down to.

Django-free; what the engine has (image ids, a stand-in's package list) is
asked in tasks.worker_images.
"""
from __future__ import annotations

import fnmatch
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tasks.dockerfile import HEREDOC, logical_lines, substitute

MIRRORS_VARIABLE = "AUTOLAB_IMAGE_MIRRORS"
DEFAULT_REGISTRY = "docker.io"


class ImageMirrorError(ValueError):
    """A mirror map that cannot be read, with the line at fault."""


def normalize(reference: str) -> str:
    """An image reference as the engine resolves it: `ubuntu:22.04` is `docker.io/library/ubuntu:22.04`.

    The first path component is a registry when it has a dot or a colon or
    is `localhost`; otherwise the image is Docker Hub's, and a name with no
    slash is in its `library`. A reference with neither tag nor digest is
    `:latest`.
    """
    reference = reference.strip()
    name, at, digest = reference.partition("@")
    first, slash, _rest = name.partition("/")
    if not slash or not ("." in first or ":" in first or first == "localhost"):
        name = f"{DEFAULT_REGISTRY}/{name if slash else 'library/' + name}"
    last = name.rsplit("/", 1)[-1]
    if not at and ":" not in last:
        name += ":latest"
    return name + (at + digest if at else "")


def registry_of(reference: str) -> str:
    """The registry host an image comes from (`docker.io`, `localhost`, `registry.example:5000`)."""
    return normalize(reference).split("/", 1)[0]


def is_local(reference: str) -> bool:
    """An image that only ever lives in the engine's own store (built or loaded there, never pulled)."""
    return registry_of(reference) == "localhost"


@dataclass(frozen=True)
class Mirror:
    source: str  # a normalised reference, fnmatch globs allowed
    target: str  # the reference the engine builds from instead

    def matches(self, reference: str) -> bool:
        return fnmatch.fnmatchcase(normalize(reference), self.source)


@dataclass(frozen=True)
class MirrorMap:
    mirrors: tuple[Mirror, ...] = ()
    origin: str = ""  # where it was read from (the setting, or its file), for messages

    @classmethod
    def parse(cls, text: str, origin: str = MIRRORS_VARIABLE) -> MirrorMap:
        """`SOURCE = TARGET` pairs, one a line or separated by commas; `#` starts a comment."""
        mirrors = []
        for number, line in enumerate(text.splitlines(), start=1):
            for pair in line.split("#", 1)[0].split(","):
                if not pair.strip():
                    continue
                source, equals, target = pair.partition("=")
                if not equals or not source.strip() or not target.strip() or " " in target.strip():
                    raise ImageMirrorError(f"{origin}, line {number}: {pair.strip()!r} is not SOURCE = TARGET")
                if any(char in target for char in "*?["):
                    raise ImageMirrorError(f"{origin}, line {number}: the target {target.strip()!r} has a wildcard")
                mirrors.append(Mirror(source=normalize(source), target=target.strip()))
        return cls(tuple(mirrors), origin)

    @classmethod
    def from_environment(cls, environ: dict[str, str] | None = None) -> MirrorMap:
        """The worker's map: the setting's pairs, or the file it names."""
        value = (os.environ if environ is None else environ).get(MIRRORS_VARIABLE, "").strip()
        if not value:
            return cls()
        if "=" not in value:
            path = Path(value)
            try:
                return cls.parse(path.read_text(), origin=f"{MIRRORS_VARIABLE} file {path}")
            except OSError as exc:
                raise ImageMirrorError(f"{MIRRORS_VARIABLE} names {path}, which cannot be read ({exc.strerror})") from None
        return cls.parse(value)

    def target(self, reference: str) -> str | None:
        """What the engine builds from instead of `reference` (the first pair that matches), or None."""
        for mirror in self.mirrors:
            if mirror.matches(reference):
                return mirror.target
        return None


@dataclass(frozen=True)
class Substitution:
    """One FROM the worker changed: what the task asks for, what was built instead."""

    requested: str  # as the Dockerfile writes it
    used: str  # the mirror's target
    image_id: str = ""  # the target's id in the engine's store when the build started ("" if unknown)
    stand_in_for: str = ""  # the stand-in's own label, when it has one (scripts/build-standin-images.sh)

    def as_dict(self) -> dict[str, str]:
        return {"requested": self.requested, "used": self.used, "image_id": self.image_id,
                "stand_in_for": self.stand_in_for}


# -- the Dockerfile ------------------------------------------------------------------


_FROM = re.compile(r"^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$", re.IGNORECASE)


def base_images(text: str) -> list[str]:
    """The images a Dockerfile builds FROM, in order; build stages it names itself and `scratch` left out."""
    variables: dict[str, str] = {}
    stages: set[str] = set()
    found: list[str] = []
    for instruction, arguments in logical_lines(text):
        if instruction == "ARG":
            name, _, default = arguments.partition("=")
            variables.setdefault(name.strip(), substitute(default.strip().strip('"'), variables))
        elif instruction == "FROM":
            words = [word for word in arguments.split() if not word.startswith("--")]
            if not words:
                continue
            image = substitute(words[0], variables)
            if len(words) >= 3 and words[1].upper() == "AS":
                stages.add(words[2].lower())
            if image.lower() not in stages and image != "scratch" and image not in found:
                found.append(image)
    return found


def mirrored_dockerfile(text: str, mirrors: MirrorMap) -> tuple[str, list[tuple[str, str]]]:
    """The Dockerfile with each mapped FROM image replaced, and the (requested, used) pairs; unchanged when none maps.

    Only the image word of a FROM line changes: its flags (`--platform`),
    its stage name and every other line stay byte for byte. A FROM written
    with a build argument is matched after the argument's default.
    """
    variables: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    lines = text.splitlines(keepends=True)
    continued = False  # the line before ended with a backslash: this one is no instruction
    heredoc: list[str] = []  # the terminators of open heredocs: their bodies are no instructions either
    for index, line in enumerate(lines):
        stripped = line.strip()
        if heredoc:
            if stripped == heredoc[0]:
                heredoc.pop(0)
            continue
        starts = not continued
        continued = stripped.endswith("\\") or (continued and stripped.startswith("#"))
        heredoc = [match.group(2) for match in HEREDOC.finditer(stripped)]
        if not starts:
            continue
        if stripped.upper().startswith("ARG "):
            name, _, default = stripped[4:].partition("=")
            variables.setdefault(name.strip(), substitute(default.strip().strip('"'), variables))
            continue
        match = _FROM.match(line.rstrip("\r\n"))
        if not match:
            continue
        requested = substitute(match.group(3), variables)
        target = mirrors.target(requested)
        if target is None:
            continue
        ending = line[len(line.rstrip("\r\n")):]
        lines[index] = f"{match.group(1)}{match.group(2)}{target}{match.group(4)}{ending}"
        if (requested, target) not in pairs:
            pairs.append((requested, target))
    return "".join(lines), pairs


_APT_INSTALL = re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*install\b(.*)")


def apt_packages(text: str) -> list[str]:
    """The packages the Dockerfile's RUN lines install with apt-get (or apt), version pins dropped."""
    packages: list[str] = []
    for instruction, arguments in logical_lines(text):
        if instruction != "RUN":
            continue
        for command in re.split(r"&&|\|\||;|\|", arguments):
            match = _APT_INSTALL.search(command)
            if not match:
                continue
            try:
                words = shlex.split(match.group(1))
            except ValueError:
                words = match.group(1).split()
            for word in words:
                if word.startswith("-") or "$" in word:
                    continue
                name = word.split("=", 1)[0]
                if name and name not in packages:
                    packages.append(name)
    return packages


# The registry each language's build downloads its dependencies from, unless vendored.
DEPENDENCY_HOSTS = {"Go": "proxy.golang.org", "Rust": "index.crates.io"}


def dependency_downloads(environment_dir: Path) -> list[tuple[str, str]]:
    """What a Go or Rust build here fetches from the network (no vendored copy): (language, what), in that order."""
    found = []
    go_mod = environment_dir / "go.mod"
    if go_mod.is_file() and not (environment_dir / "vendor").is_dir():
        if re.search(r"^\s*require\b", go_mod.read_text(errors="replace"), re.MULTILINE):
            found.append(("Go", "Go modules (go.mod requires modules, with no vendor/ folder)"))
    cargo = environment_dir / "Cargo.toml"
    if cargo.is_file() and not (environment_dir / "vendor").is_dir():
        text = cargo.read_text(errors="replace")
        section = re.search(r"^\[(?:dev-|build-)?dependencies\]\s*$(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
        if section and re.search(r"^\s*[A-Za-z0-9_-]+\s*=", section.group(1), re.MULTILINE):
            found.append(("Rust", "Rust crates (Cargo.toml has dependencies, with no vendor/ folder)"))
    return found


_URL_HOST = re.compile(r"\bhttps?://([A-Za-z0-9.-]+)(?::\d+)?")


def download_hosts(text: str) -> list[str]:
    """The hosts the Dockerfile's RUN lines name in a URL (pip's --index-url, curl, wget), in order."""
    hosts: list[str] = []
    for instruction, arguments in logical_lines(text):
        if instruction == "RUN":
            for host in _URL_HOST.findall(arguments):
                if host not in hosts:
                    hosts.append(host)
    return hosts


# -- a failed build, in one line ------------------------------------------------------------

_MISSING_PACKAGE = (
    re.compile(r"E: Unable to locate package (\S+)"),
    re.compile(r"E: Package '([^']+)' has no installation candidate"),
    re.compile(r"E: Couldn't find any package by (?:glob|regex) '([^']+)'"),
)
# What an engine prints when a base image cannot be fetched (podman, Docker's classic builder, BuildKit).
_PULL_FAILED = re.compile(
    r"Trying to pull |pull access denied|manifest for \S+ not found|manifest unknown|pinging container registry"
    r"|initializing source docker://|failed to resolve source metadata|(?:Get|Head) \"https://[^\"]+/v2/"
)
_PULLED_IMAGE = (
    re.compile(r"Trying to pull (\S+?)\.\.\."),
    re.compile(r"pull access denied for ([^,\s]+)"),
    re.compile(r"manifest for (\S+) not found"),
    re.compile(r"initializing source docker://(\S+?):\s"),
    re.compile(r"(?:STEP|Step) 1/\d+\s*:\s*FROM\s+(?:--\S+\s+)*(\S+)"),
)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PIP_MISSING = re.compile(r"No matching distribution found for (\S+)")
_ERROR_LINE = re.compile(r"\b(error|failed|fatal|cannot|could not|unable)\b", re.IGNORECASE)


def build_failure(output: str, base: list[str] | None = None) -> str:
    """The one readable line a failed image build's output comes down to (the image, the package), for the operator.

    `base` is what the build ran FROM (after the mirror map), to name the
    archive a package is missing from.
    """
    images = ", ".join(base or []) or "its base image"
    output = _ANSI.sub("", output)  # Docker's classic builder colours a RUN step's stderr
    for pattern in _MISSING_PACKAGE:
        missing = sorted({match.group(1) for match in pattern.finditer(output)})
        if missing:
            return (f"building the task's image failed: apt found no package {', '.join(missing)} in the archive of "
                    f"{images} (a stand-in's archive may lack a package of the published image's)")
    if _PULL_FAILED.search(output):
        named = (pattern.search(output) for pattern in _PULLED_IMAGE)
        image = next((match.group(1) for match in named if match), images)
        return (f"building the task's image failed: the base image {image} could not be pulled (no registry "
                f"reachable from this worker): load it into the engine or map it in {MIRRORS_VARIABLE}")
    match = _PIP_MISSING.search(output)
    if match:
        return f"building the task's image failed: pip found no distribution for {match.group(1)} (is its index reachable from the build?)"
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if _ERROR_LINE.search(line) and not line.lower().startswith(("usage", "warn"))]
    last = (errors or lines or ["no output"])[-1]
    return f"building the task's image failed: {last[:300]}"
