"""A Harbor job folder built from ../shared's real trials, as Harbor 0.26 writes it, and ways to spoil it."""
from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile

TASK = "musubi-tuner__flux2_klein_lora"
DIGEST = "8d43ec4f2d0602a819b961da9112e6df69bcae4c51c9cd1d37f6ba071d01b894"


def lock_for(trial_dir: Path, *, mode: str = "separate", multiplier: float = 1.0, digest: str = DIGEST) -> dict:
    config = json.loads((trial_dir / "config.json").read_text())
    return {
        "schema_version": 2,
        "task": {"name": TASK, "type": "local", "digest": f"sha256:{digest}", "source": None, "path": config["task"]["path"]},
        "install_only": False,
        "timeout_multiplier": multiplier,
        "agent": {**config["agent"], "skills": []},
        "environment": config["environment"],
        "verifier": {"disable": False, "environment_mode": mode},
        "harbor": {"version": "0.26.0", "commit": "0123abcd"},
    }


def job_folder(shared_trials_dir: Path, dest: Path, *, mode: str = "separate", multiplier: float = 1.0,
               digest: str = DIGEST, drop_trajectory: bool = False, forged_reward: float | None = None) -> Path:
    """A job folder of the shared trials (each with lock.json, graded in `mode`), spoilt as asked."""
    job = dest / "job-2026-04-27"
    for source in sorted(shared_trials_dir.iterdir()):
        trial = job / source.name
        shutil.copytree(source, trial)
        (trial / "lock.json").write_text(json.dumps(lock_for(trial, mode=mode, multiplier=multiplier, digest=digest)))
        result = json.loads((trial / "result.json").read_text())
        result["verifier_environment_mode"] = mode
        result["task_checksum"] = digest
        if forged_reward is not None:
            # The agent wrote its own reward where a shared verifier reads it.
            result["verifier_result"] = {"rewards": {"reward": forged_reward}}
            (trial / "verifier" / "reward.txt").write_text(str(forged_reward))
            (trial / "verifier" / "reward.json").write_text(json.dumps({"reward": forged_reward}))
        (trial / "result.json").write_text(json.dumps(result))
        if multiplier != 1.0:
            config = json.loads((trial / "config.json").read_text())
            config["timeout_multiplier"] = multiplier
            (trial / "config.json").write_text(json.dumps(config))
        if drop_trajectory:
            shutil.rmtree(trial / "agent")
    return job


def tar_gz(folder: Path, name: str = "job.tar.gz") -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/gzip")


def traversal_tar() -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        data = b"planted"
        info = tarfile.TarInfo("job/../../evil.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return SimpleUploadedFile("job.tar.gz", buffer.getvalue(), content_type="application/gzip")


def zip_bomb(declared: int) -> SimpleUploadedFile:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        with zipped.open("job/trial/agent/trajectory.json", "w", force_zip64=True) as member:
            chunk = b"\0" * (1 << 20)
            for _ in range(declared // len(chunk)):
                member.write(chunk)
    return SimpleUploadedFile("job.zip", buffer.getvalue(), content_type="application/zip")
