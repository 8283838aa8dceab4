"""tasks.images: the mirror map, the Dockerfile's FROM rewritten in a copy, and a failed build in one line (issue 44)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tasks import images
from tasks.images import ImageMirrorError, MirrorMap

CI_MIRRORS = Path(__file__).resolve().parents[2] / "scripts" / "standins" / "mirrors.txt"


@pytest.mark.parametrize("reference, normal", [
    ("ubuntu:22.04", "docker.io/library/ubuntu:22.04"),
    ("ubuntu", "docker.io/library/ubuntu:latest"),
    ("docker.io/library/ubuntu:22.04", "docker.io/library/ubuntu:22.04"),
    ("nvidia/cuda:12.4.1-devel-ubuntu22.04", "docker.io/nvidia/cuda:12.4.1-devel-ubuntu22.04"),
    ("localhost/autolab-site-base:bookworm", "localhost/autolab-site-base:bookworm"),
    ("registry.example:5000/python:3.11-slim", "registry.example:5000/python:3.11-slim"),
    ("mirror.local/library/python", "mirror.local/library/python:latest"),
    ("python@sha256:abc", "docker.io/library/python@sha256:abc"),
])
def test_normalize(reference, normal):
    assert images.normalize(reference) == normal


MAP = MirrorMap.parse("""
# stand-ins
ubuntu:22.04 = localhost/standin-ubuntu:bookworm
python:3.*-slim = registry.example:5000/python:3.11-slim, golang:1.22-bookworm=localhost/go:1.22
""")


@pytest.mark.parametrize("reference, target", [
    ("ubuntu:22.04", "localhost/standin-ubuntu:bookworm"),
    ("docker.io/library/ubuntu:22.04", "localhost/standin-ubuntu:bookworm"),
    ("ubuntu:24.04", None),
    ("python:3.11-slim", "registry.example:5000/python:3.11-slim"),
    ("python:3.11.9-slim", "registry.example:5000/python:3.11-slim"),
    ("python:3.12-slim", "registry.example:5000/python:3.11-slim"),
    ("python:3.12", None),
    ("golang:1.22-bookworm", "localhost/go:1.22"),
    ("localhost/standin-ubuntu:bookworm", None),
])
def test_the_first_pair_that_matches_names_the_target(reference, target):
    assert MAP.target(reference) == target


@pytest.mark.parametrize("text, error", [
    ("ubuntu:22.04", "line 1: 'ubuntu:22.04' is not SOURCE = TARGET"),
    ("ubuntu:22.04 =", "is not SOURCE = TARGET"),
    ("\n= localhost/x", "line 2:"),
    ("ubuntu:22.04 = localhost/a b", "is not SOURCE = TARGET"),
    ("python:* = localhost/python:*", "has a wildcard"),
])
def test_a_map_that_cannot_be_read_says_which_line(text, error):
    with pytest.raises(ImageMirrorError, match=error):
        MirrorMap.parse(text)


def test_the_setting_is_pairs_or_a_file(tmp_path):
    assert MirrorMap.from_environment({}) == MirrorMap()
    inline = MirrorMap.from_environment({images.MIRRORS_VARIABLE: "ubuntu:22.04=localhost/u"})
    assert inline.target("ubuntu:22.04") == "localhost/u"
    path = tmp_path / "mirrors.txt"
    path.write_text("ubuntu:22.04 = localhost/u\n")
    from_file = MirrorMap.from_environment({images.MIRRORS_VARIABLE: str(path)})
    assert from_file.target("ubuntu:22.04") == "localhost/u" and str(path) in from_file.origin
    with pytest.raises(ImageMirrorError, match="cannot be read"):
        MirrorMap.from_environment({images.MIRRORS_VARIABLE: str(tmp_path / "absent.txt")})


def test_the_ci_map_reads_and_maps_the_cpu_tasks_base_images():
    if not CI_MIRRORS.exists():
        pytest.skip("scripts/standins/mirrors.txt is not in this checkout")
    mirrors = MirrorMap.parse(CI_MIRRORS.read_text())
    for reference in ("ubuntu:22.04", "python:3.11-slim", "python:3.12-slim", "python:3.11.9-slim"):
        assert mirrors.target(reference), reference
    assert mirrors.target("nvidia/cuda:12.4.1-devel-ubuntu22.04") is None


DOCKERFILE = """\
# syntax=docker/dockerfile:1
ARG BASE=ubuntu:22.04
FROM --platform=linux/amd64 ${BASE} AS build
RUN apt-get update && apt-get install -y --no-install-recommends \\
        gcc make=4.3-4.1 \\
        linux-tools-generic \\
    && rm -rf /var/lib/apt/lists/*
RUN python3 -c "import x; \\
from ubuntu:22.04 import y"
RUN cat <<'EOF' > /tmp/notes
FROM ubuntu:22.04
EOF
FROM build
FROM python:3.11-slim
RUN pip install numpy --index-url https://download.pytorch.org/whl/cpu && curl -sSf https://astral.sh/uv | sh
"""


def test_only_the_image_word_of_a_from_line_changes():
    mirrored, pairs = images.mirrored_dockerfile(DOCKERFILE, MAP)
    assert pairs == [("ubuntu:22.04", "localhost/standin-ubuntu:bookworm"),
                     ("python:3.11-slim", "registry.example:5000/python:3.11-slim")]
    before, after = DOCKERFILE.splitlines(), mirrored.splitlines()
    changed = [(old, new) for old, new in zip(before, after) if old != new]
    assert changed == [
        ("FROM --platform=linux/amd64 ${BASE} AS build",
         "FROM --platform=linux/amd64 localhost/standin-ubuntu:bookworm AS build"),
        ("FROM python:3.11-slim", "FROM registry.example:5000/python:3.11-slim"),
    ]
    # A continued line and a heredoc's body are no instructions, whatever they read.
    assert images.mirrored_dockerfile(DOCKERFILE, MirrorMap()) == (DOCKERFILE, [])


def test_what_the_dockerfile_asks_for():
    assert images.base_images(DOCKERFILE) == ["ubuntu:22.04", "python:3.11-slim"]
    assert images.apt_packages(DOCKERFILE) == ["gcc", "make", "linux-tools-generic"]
    assert images.download_hosts(DOCKERFILE) == ["download.pytorch.org", "astral.sh"]


@pytest.mark.parametrize("files, expected", [
    ({"go.mod": "module m\n\ngo 1.22\n"}, []),
    ({"go.mod": "module m\n\nrequire github.com/x/y v1.0.0\n"}, ["Go modules"]),
    ({"go.mod": "module m\nrequire (\n\tgithub.com/x/y v1\n)\n", "vendor/modules.txt": ""}, []),
    ({"Cargo.toml": "[package]\nname = \"a\"\n\n[dependencies]\n\n[profile.release]\nlto = true\n"}, []),
    ({"Cargo.toml": "[package]\nname = \"a\"\n[dependencies]\nrand = \"0.8\"\n"}, ["Rust crates"]),
    ({"Cargo.toml": "[package]\nname = \"a\"\n[dev-dependencies]\ncriterion = \"0.5\"\n"}, ["Rust crates"]),
])
def test_dependency_downloads(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert [what.split(" (")[0] for _, what in images.dependency_downloads(tmp_path)] == expected


PODMAN_APT = """STEP 2/9: RUN apt-get update && apt-get install -y tmux gcc linux-tools-generic
Reading package lists...
E: Unable to locate package linux-tools-generic
Error: building at STEP "RUN apt-get ...": while running runtime: exit status 100
"""
DOCKER_PULL = ("Command failed: docker-compose -p x build. Stdout: Step 1/12 : FROM python:3.11-slim\n"
               "ERROR: Service 'main' failed to build: Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup "
               "registry-1.docker.io: no such host")
PODMAN_PULL = ("Command failed: podman-compose --in-pod=false -p x build. STEP 1/12: FROM python:3.11-slim\n"
               "Resolving \"python\" using unqualified-search registries\nTrying to pull docker.io/library/python:3.11-slim...\n"
               "Error: creating build container: initializing source docker://python:3.11-slim: pinging conta")


@pytest.mark.parametrize("output, says", [
    (PODMAN_APT, "apt found no package linux-tools-generic in the archive of localhost/standin"),
    ("E: Package 'python3.12' has no installation candidate", "apt found no package python3.12"),
    # Docker's classic builder (compose v1), colours and all.
    ("\x1b[91mE\x1b[0m\x1b[91m: \x1b[0m\x1b[91mUnable to locate package linux-tools-generic\x1b[0m\x1b[91m\n"
     "Service 'main' failed to build : Build failed", "apt found no package linux-tools-generic in"),
    (PODMAN_PULL, "the base image docker.io/library/python:3.11-slim could not be pulled"),
    (DOCKER_PULL, "the base image python:3.11-slim could not be pulled"),
    ("ERROR: No matching distribution found for torch==2.2.2", "pip found no distribution for torch==2.2.2"),
    ("step 3\nmake: *** [Makefile:4: solve] Error 1\n", "make: *** [Makefile:4: solve] Error 1"),
    ("", "no output"),
])
def test_a_failed_build_comes_down_to_one_line(output, says):
    line = images.build_failure(output, ["localhost/standin"])
    assert says in line
    assert "\n" not in line and len(line) < 400 and line.startswith("building the task's image failed: ")


@pytest.mark.shared
def test_every_real_task_names_its_base_images_and_none_is_python_code(real_tasks_dir):
    """AutoLab v1.1's Dockerfiles (heredocs of Python included) each build FROM one published image."""
    for dockerfile in sorted(real_tasks_dir.glob("*/environment/Dockerfile")):
        text = dockerfile.read_text()
        found = images.base_images(text)
        assert len(found) == 1 and ":" in found[0], (dockerfile.parent.parent.name, found)
        digest = hashlib.sha256(text.encode()).hexdigest()
        mirrored, pairs = images.mirrored_dockerfile(text, MirrorMap.parse(f"{found[0]} = localhost/x:y"))
        assert pairs == [(found[0], "localhost/x:y")] and mirrored.count("localhost/x:y") == 1
        assert hashlib.sha256(dockerfile.read_bytes()).hexdigest() == digest  # the task's file is untouched
