"""Sealed grading: what `tasks.sealing.seal` makes of a task, and a real trial on every backend under it.

The trial's oracle leaves its work in /app and marks the places it was
root in (/tmp, /root, /var/tmp), and rewrites the benchmark the instruction
says not to edit; the verifier scores 1.0 only when the work is there, no
mark is and the benchmark is the image's own: its root is fresh, only what
was carried over reached it, and not the read-only file the agent changed.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import uuid
from pathlib import Path

import pytest
from harbor.models.task.config import TaskConfig, VerifierEnvironmentMode

from tasks.sealing import CannotSeal, seal, seal_task_dir

from evaluations.tests.container_helpers import SANDBOX_CLASS, require_engine
from evaluations.tests.runner_helpers import EVERY_BACKEND
from evaluations.tests.sandbox_helpers import TINY_TASK, require_sandbox

DOCKERFILE = "FROM localhost/autolab-site-base:bookworm\nWORKDIR /work\nCOPY app/ /work/\n"


def task_dir(tmp_path: Path, toml: str, dockerfile: str | None = DOCKERFILE, test_sh: str = "") -> Path:
    folder = tmp_path / f"task_{uuid.uuid4().hex[:6]}"
    (folder / "environment" / "app").mkdir(parents=True)
    if dockerfile is not None:
        (folder / "environment" / "Dockerfile").write_text(dockerfile)
    (folder / "tests").mkdir()
    (folder / "tests" / "test.sh").write_text(test_sh or "#!/bin/bash\necho '{\"reward\": 0}' > /logs/verifier/reward.json\n")
    (folder / "task.toml").write_text('version = "1.0"\n' + toml)
    return folder


# (what the task declares, its Dockerfile, what its verifier reads) -> (carried, warnings that must appear)
CASES = [
    ("nothing: the Dockerfile's WORKDIR is carried", "", DOCKERFILE, "", ["/work"], []),
    ("[environment] workdir wins", '[environment]\nworkdir = "/srv/job"\n', DOCKERFILE, "", ["/srv/job"], []),
    ("declared artifacts are kept as they are",
     '[[artifacts]]\nsource = "/work/out"\n[[artifacts]]\nsource = "/logs/agent/log.jsonl"\n', DOCKERFILE,
     "cat /logs/agent/log.jsonl", ["/work/out", "/logs/agent/log.jsonl"], []),
    ("a shared verifier is overridden, and says so", '[verifier]\nenvironment_mode = "shared"\n', DOCKERFILE, "",
     ["/work"], ['declares [verifier] environment_mode = "shared"']),
    ("a verifier reading /logs/agent without carrying it is warned about", "", DOCKERFILE,
     "python3 - <<'PY'\nopen('/logs/agent/score_log.jsonl')\nPY", ["/work"], ["reads /logs/agent"]),
]


@pytest.mark.parametrize("about, toml, dockerfile, reads, carried, warnings", CASES, ids=[c[0] for c in CASES])
def test_seal_gives_every_task_a_separate_verifier(tmp_path, about, toml, dockerfile, reads, carried, warnings):
    folder = task_dir(tmp_path, toml, dockerfile, f"#!/bin/bash\n{reads}\n")
    sealing = seal_task_dir(folder)
    assert sealing.config.verifier.environment_mode == VerifierEnvironmentMode.SEPARATE
    assert sealing.carried == carried
    for expected in warnings:
        assert any(expected in warning for warning in sealing.warnings), sealing.warnings
    assert len(sealing.warnings) == len(warnings), sealing.warnings


def test_a_task_with_nothing_to_carry_cannot_be_sealed(tmp_path):
    folder = task_dir(tmp_path, "", dockerfile="FROM localhost/autolab-site-base:bookworm\n")
    with pytest.raises(CannotSeal, match=r"declares no \[\[artifacts\]\] and has no workspace"):
        seal_task_dir(folder)


def test_every_step_of_a_multi_step_task_is_sealed(tmp_path):
    config = TaskConfig.model_validate_toml(
        'version = "1.0"\n[[steps]]\nname = "one"\n[steps.verifier]\nenvironment_mode = "shared"\n'
        '[[steps]]\nname = "two"\n'
    )
    sealed = seal(task_dir(tmp_path, ""), config).config
    assert [step.verifier.environment_mode for step in sealed.steps] == [VerifierEnvironmentMode.SEPARATE] * 2


def test_import_warns_about_what_a_sealed_version_cannot_honour(db, tmp_path):
    from tasks.models import BenchmarkVersion
    from tasks.services import import_tasks

    root = tmp_path / "tasks"
    shutil.copytree(TINY_TASK, root / "tiny_sum")
    toml = root / "tiny_sum" / "task.toml"
    toml.write_text(toml.read_text().replace("[verifier]\n", '[verifier]\nenvironment_mode = "shared"\n'))
    sealed = import_tasks(root, version="sealed")
    assert BenchmarkVersion.objects.get(name="sealed").sealed_grading
    (result,) = sealed.results
    assert result.outcome == "imported" and "environment_mode = \"shared\"" in result.warnings[0]
    assert result.as_dict()["warnings"] == result.warnings
    BenchmarkVersion.objects.create(name="legacy", sealed_grading=False)
    (legacy,) = import_tasks(root, version="legacy").results
    assert legacy.warnings == []


FRESH_ROOT_TASK_SOLVE = """#!/bin/bash
cat > /app/sum.py <<'PY'
import sys
n = int(sys.argv[1])
print(n * (n + 1) // 2)
PY
echo agent > /tmp/agent-was-here; echo agent > /root/agent-was-here; echo agent > /var/tmp/agent-was-here
# The instruction says not to edit bench.py: the verifier must get the image's own.
echo 'print("runtime_seconds: 0.000001")' > /app/bench.py
"""

FRESH_ROOT_TASK_TEST = """#!/bin/bash
python3 - <<'PY'
import json, os
marks = [p for p in ("/tmp/agent-was-here", "/root/agent-was-here", "/var/tmp/agent-was-here") if os.path.exists(p)]
work = os.path.exists("/app/sum.py") and "n * (n + 1)" in open("/app/sum.py").read()
bench = open("/app/bench.py").read() == open("/orig/bench.py").read()
json.dump({"reward": 1.0 if work and bench and not marks else 0.0, "marks": marks, "work": work, "bench": bench,
           "uid": os.getuid()}, open("/logs/verifier/reward.json", "w"))
PY
"""


def fresh_root_task(tmp_path: Path) -> Path:
    task = tmp_path / "fresh_root"
    shutil.copytree(TINY_TASK, task)
    (task / "solution" / "solve.sh").write_text(FRESH_ROOT_TASK_SOLVE)
    (task / "tests" / "test.sh").write_text(FRESH_ROOT_TASK_TEST)
    return task


@pytest.mark.parametrize("backend", EVERY_BACKEND)
def test_the_sealed_verifier_runs_in_a_fresh_root_with_what_was_carried(tmp_path, backend):
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig as TrialTask
    from harbor.models.trial.config import TrialConfig, VerifierConfig

    from evaluations.sandbox.sealing import SealedTrial

    if backend == "bubblewrap":
        require_sandbox()
        import_path = "evaluations.sandbox.bubblewrap:BubblewrapEnvironment"
    else:
        require_engine(backend)
        import_path = f"evaluations.sandbox.containers:{SANDBOX_CLASS[backend]}"
    config = TrialConfig(
        task=TrialTask(path=fresh_root_task(tmp_path)),
        trials_dir=tmp_path / "trials",
        trial_name=f"fresh_root__{uuid.uuid4().hex[:6]}",
        agent=AgentConfig(name="oracle"),
        environment=EnvironmentConfig(import_path=import_path, kwargs={"sandbox_root": str(tmp_path / "sandboxes")}),
        verifier=VerifierConfig(import_path="evaluations.running.verifier:TolerantVerifier"),
    )

    async def run():
        trial = await SealedTrial.create(config)
        return await trial.run()

    result = asyncio.run(run())
    fields = json.loads((tmp_path / "trials" / config.trial_name / "verifier" / "reward.json").read_text())
    assert result.exception_info is None, result.exception_info
    assert fields == {"reward": 1.0, "marks": [], "work": True, "bench": True, "uid": 0}
    assert result.verifier_environment_mode == "separate"
    assert list((tmp_path / "sandboxes").iterdir()) == []
