"""The GPUs a task needs, the ones a machine has, and the one rule between them.

A task asks for GPUs in task.toml's [environment]: `gpus = N` and
`gpu_types = ["H100"]` (or a singular `gpu_type = "L40S"`, as AutoLab's
flux2_klein_lora has it). A machine's GPUs are what nvidia-smi lists, by
index; without nvidia-smi, its /dev/nvidia0, /dev/nvidia1, ... devices,
whose type nothing here can tell.

`gpu_shortfall` is the rule, read by the docker backend's task check
(which the preflight and the runner's pre-run check call) and by
import_tasks' report. A container gets its GPUs through Docker's NVIDIA
device request, which hands it the machine's first N GPUs (indices 0 to
N-1) whatever else uses them: so those N must be of a type the task
accepts. What the container engine needs besides (the NVIDIA Container
Toolkit) is the backend's own check (evaluations.sandbox.backends).

Plain Python, no Django.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .taskdir import read_gpus


@dataclass(frozen=True)
class GpuNeed:
    """What a task asks for: how many GPUs, of which types (any type when none is named)."""

    count: int
    types: tuple[str, ...] = ()

    @classmethod
    def from_stored(cls, gpus: int, gpu_type: str) -> GpuNeed:
        """From a Task row's `gpus` and `gpu_type` ("H100, A100": how the registry joins several types)."""
        return cls(int(gpus or 0), tuple(kind.strip() for kind in (gpu_type or "").split(",") if kind.strip()))

    def __str__(self) -> str:
        plural = "s" if self.count != 1 else ""
        if not self.types:
            return f"{self.count} GPU{plural}"
        return f"{self.count} x {' or '.join(self.types)} GPU{plural}"

    def accepts(self, name: str) -> bool:
        """Whether a GPU of this name (nvidia-smi's, "NVIDIA H100 80GB HBM3") is of a type the task accepts.

        A type matches when its words appear in the name in order: "H100"
        and "A100-80GB" match "NVIDIA A100-SXM4-80GB" and "NVIDIA H100 ...",
        but "L40" is not "L40S".
        """
        if not self.types:
            return True
        words = _words(name)
        return any(_in_order(_words(kind), words) for kind in self.types)


def task_gpu_need(task_dir: Path | str) -> GpuNeed:
    """What a task folder's task.toml asks for (TaskDirError when it cannot be read)."""
    gpus, gpu_type = read_gpus(Path(task_dir))
    return GpuNeed.from_stored(gpus, gpu_type)


@dataclass(frozen=True)
class HostGpus:
    """A machine's GPUs by index: nvidia-smi's names, "" for a device nothing could name; and how that was found."""

    names: tuple[str, ...]
    detail: str = ""

    def __str__(self) -> str:
        how = f" ({self.detail})" if self.detail else ""
        if not self.names:
            return f"no GPU{how}"
        plural = "s" if len(self.names) != 1 else ""
        if not any(self.names):
            return f"{len(self.names)} GPU{plural} of unknown type{how}"
        return f"{len(self.names)} GPU{plural}: " + ", ".join(name or "unknown type" for name in self.names)


def detect_host_gpus(dev: Path = Path("/dev")) -> HostGpus:
    """This machine's NVIDIA GPUs: nvidia-smi's list, else the /dev/nvidiaN device files."""
    devices = sorted(path.name for path in dev.glob("nvidia*") if re.fullmatch(r"nvidia\d+", path.name))
    unnamed = tuple("" for _ in devices)
    files = f"{len(devices)} /dev/nvidia* device{'s' if len(devices) != 1 else ''}"
    smi = shutil.which("nvidia-smi")
    if smi is None:
        if not devices:
            return HostGpus((), "nvidia-smi is not installed and there is no /dev/nvidia* device")
        return HostGpus(unnamed, f"nvidia-smi is not installed; {files}")
    try:
        listed = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return HostGpus(unnamed, f"nvidia-smi failed ({exc}); {files}")
    if listed.returncode != 0:
        said = " ".join((listed.stderr or listed.stdout).split())[:200] or "no output"
        return HostGpus(unnamed, f"nvidia-smi failed (exit code {listed.returncode}: {said}); {files}")
    return HostGpus(tuple(line.strip() for line in listed.stdout.splitlines() if line.strip()))


def gpu_shortfall(need: GpuNeed, host: HostGpus, where: str = "this machine") -> str:
    """Why `host` cannot give a task what it needs ("" when it can), naming both: one readable reason."""
    if need.count <= 0:
        return ""
    given = host.names[:need.count]
    if len(given) < need.count:
        return f"needs {need}, and {where} has {host}"
    if not need.types:
        return ""
    if not all(need.accepts(name) for name in given if name):
        first = f" (a container is given the first {need.count})" if len(host.names) > need.count else ""
        return f"needs {need}, and {where} has {host}{first}"
    if not all(given):
        return f"needs {need}, and {where} has {host}: without nvidia-smi its type cannot be told"
    return ""


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _in_order(wanted: list[str], words: list[str]) -> bool:
    """Every wanted word among `words`, in the same order (others may come between)."""
    rest = iter(words)
    return bool(wanted) and all(word in rest for word in wanted)
