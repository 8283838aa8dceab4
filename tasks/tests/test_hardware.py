"""tasks.hardware: the GPUs a task needs against the ones a machine has (one rule, a table of cases),
how a machine's GPUs are found, and what import_tasks says of the real GPU tasks on a machine without them."""
from __future__ import annotations

import os
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tasks.hardware import GpuNeed, HostGpus, detect_host_gpus, gpu_shortfall, task_gpu_need
from tasks.models import Task
from tasks.services import import_tasks

# AutoLab v1.1's 11 GPU tasks (all in ../shared/autolab-v1.1/tasks): one GPU each, of this type.
REAL_GPU_TASKS = {
    "data_select_ifeval": "H100",
    "flux2_klein_lora": "L40S",  # spelled `gpu_type = "L40S"`, singular
    "grpo_multisource": "L40S",
    "huffman_canonical_decode_cuda": "H100",
    "icp_correspondence_step_cuda": "H100",
    "llm_online_serving": "H100",
    "moving_mnist_world_model": "H100",
    "msm_pippenger_bls12_381_cuda": "H100",
    "multilingual_ocr": "L40S",
    "ntt_butterfly_cuda": "H100",
    "scaling_law": "H100",
}

H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-80GB"
L40S = "NVIDIA L40S"

# (count, types, the machine's GPUs by index ("" when nvidia-smi could not name one), what the rule says)
RULE = [
    (0, (), (), ""),
    (0, ("H100",), (), ""),
    (1, ("H100",), (H100,), ""),
    (1, ("L40S",), (L40S,), ""),
    (1, ("H100", "A100"), (A100,), ""),
    (1, ("A100-80GB",), (A100,), ""),  # the type's words in the name, in order
    (1, ("h100",), (H100,), ""),
    (1, (), (A100,), ""),
    (1, (), ("",), ""),  # any type: a device is enough
    (2, ("H100",), (H100, H100, A100), ""),
    (1, ("H100",), (), "needs 1 x H100 GPU, and this machine has no GPU (none found)"),
    (1, ("L40",), (L40S,), f"needs 1 x L40 GPU, and this machine has 1 GPU: {L40S}"),
    (1, ("H100",), (A100, H100), f"needs 1 x H100 GPU, and this machine has 2 GPUs: {A100}, {H100} "
                                 "(a container is given the first 1)"),
    (2, ("H100",), (H100,), f"needs 2 x H100 GPUs, and this machine has 1 GPU: {H100}"),
    (1, ("H100", "A100"), (L40S,), f"needs 1 x H100 or A100 GPU, and this machine has 1 GPU: {L40S}"),
    (3, (), (H100, H100), f"needs 3 GPUs, and this machine has 2 GPUs: {H100}, {H100}"),
    (1, ("H100",), ("",), "needs 1 x H100 GPU, and this machine has 1 GPU of unknown type (none found): "
                          "without nvidia-smi its type cannot be told"),
]


@pytest.mark.parametrize("count, types, names, expected", RULE)
def test_the_rule(count, types, names, expected):
    assert gpu_shortfall(GpuNeed(count, types), HostGpus(names, "none found")) == expected


def test_a_need_reads_as_the_registry_stores_it():
    assert GpuNeed.from_stored(1, "H100, A100") == GpuNeed(1, ("H100", "A100"))
    assert GpuNeed.from_stored(0, "") == GpuNeed(0, ())
    assert str(GpuNeed(1, ("L40S",))) == "1 x L40S GPU" and str(GpuNeed(2, ())) == "2 GPUs"


def fake_nvidia_smi(folder: Path, output: str, code: int = 0) -> Path:
    """An nvidia-smi that answers the query as the real one does, on a machine of the test's making."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "nvidia-smi"
    lines = "".join(f'echo "{line}"\n' for line in output.splitlines())
    script.write_text(f"#!/bin/sh\n{lines}exit {code}\n")
    script.chmod(0o755)
    return folder


def test_gpus_are_found_by_nvidia_smi_else_by_their_device_files(tmp_path, monkeypatch):
    dev = tmp_path / "dev"
    dev.mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    none = detect_host_gpus(dev)
    assert none.names == ()
    assert str(none) == "no GPU (nvidia-smi is not installed and there is no /dev/nvidia* device)"

    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"):
        (dev / name).touch()
    devices = detect_host_gpus(dev)
    assert devices.names == ("", "")
    assert str(devices) == "2 GPUs of unknown type (nvidia-smi is not installed; 2 /dev/nvidia* devices)"

    monkeypatch.setenv("PATH", str(fake_nvidia_smi(tmp_path / "bin", f"{H100}\n{A100}")))
    found = detect_host_gpus(dev)
    assert found.names == (H100, A100) and str(found) == f"2 GPUs: {H100}, {A100}"

    monkeypatch.setenv("PATH", str(fake_nvidia_smi(tmp_path / "broken", "NVIDIA-SMI has failed because it "
                                                   "couldn't communicate with the NVIDIA driver.", code=9)))
    broken = detect_host_gpus(dev)
    assert broken.names == ("", "")
    assert "nvidia-smi failed (exit code 9: NVIDIA-SMI has failed because it couldn't communicate" in broken.detail


def this_machine_has_no_gpu() -> bool:
    paths = os.environ.get("PATH", "").split(os.pathsep)
    smi = any((Path(folder) / "nvidia-smi").exists() for folder in paths)
    return not smi and not list(Path("/dev").glob("nvidia[0-9]*"))


@pytest.mark.shared
def test_the_real_gpu_tasks_read_with_their_count_and_type(real_tasks_dir):
    needs = {folder.name: task_gpu_need(folder) for folder in sorted(real_tasks_dir.iterdir())}
    assert {name: need for name, need in needs.items() if need.count} == {
        name: GpuNeed(1, (kind,)) for name, kind in REAL_GPU_TASKS.items()
    }


@pytest.mark.shared
@pytest.mark.django_db
def test_import_names_each_gpu_task_this_machine_cannot_run_and_imports_it_all_the_same(real_tasks_dir):
    if not this_machine_has_no_gpu():
        pytest.skip("this machine has a GPU: the import has nothing to say of it")
    report = import_tasks(real_tasks_dir, version="1.1")
    assert report.ok and report.counts["imported"] == len(report.results) == 33
    stored = {task.name: (task.gpus, task.gpu_type) for task in Task.objects.filter(gpus__gt=0)}
    assert stored == {name: (1, kind) for name, kind in REAL_GPU_TASKS.items()}
    for result in report.results:
        notes = [warning for warning in result.warnings if "GPU" in warning]
        if result.name not in REAL_GPU_TASKS:
            assert notes == [], result.name
            continue
        assert notes == [
            f"needs 1 x {REAL_GPU_TASKS[result.name]} GPU, and this machine has no GPU (nvidia-smi is not installed "
            "and there is no /dev/nvidia* device): its rollouts run on a worker of the gpu queue that has it"
        ], result.name

    out = StringIO()
    call_command("import_tasks", str(real_tasks_dir / "scaling_law"), "--version", "1.1", stdout=out)
    assert out.getvalue().splitlines()[:2] == [
        "scaling_law: unchanged, model_development, perplexity (lower is better), 25 → 18, 12 h, 1 x H100",
        "  warning: needs 1 x H100 GPU, and this machine has no GPU (nvidia-smi is not installed and there is "
        "no /dev/nvidia* device): its rollouts run on a worker of the gpu queue that has it",
    ]


# -- one rule: a guard that fails when a second reader of the machine's GPUs, or a second judge, appears --------

GPU_READERS = {"tasks/hardware.py"}
GPU_JUDGES = {"tasks/hardware.py", "tasks/services.py", "evaluations/sandbox/backends.py"}


def test_only_tasks_hardware_reads_the_machines_gpus_and_two_modules_apply_its_rule():
    from tests.test_status_writers import project_sources

    # Running nvidia-smi (its query), or listing the /dev/nvidiaN devices: reading this machine's GPUs.
    readers = {path for path, source in project_sources()
               if "--query-gpu" in source or 'which("nvidia-smi")' in source or 'glob("nvidia' in source}
    judges = {path for path, source in project_sources() if "gpu_shortfall(" in source}
    assert readers == GPU_READERS
    assert judges == GPU_JUDGES

