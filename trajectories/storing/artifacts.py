"""A rollout's trial files in the storage every web server and worker shares.

A trial runs on one worker host, but its pages are served by others: when
a trial ends (or while it runs, for the logs people watch), its folder's
files are copied to Django's `artifacts` storage (`STORAGES["artifacts"]`:
a folder by default, an S3-compatible bucket in production), under
`rollouts/<trial name>/<path in the trial folder>`. The site reads a
rollout's files only from there, and only the ones listed in
`Rollout.artifacts` (path, size, whether it was cut), never by a path a
request names.

Links, special files and hard links in the trial folder are never followed
(it is written by the agent's sandbox, or brought by whoever imports it); a file larger than ARTIFACT_FILE_LIMIT
keeps its head and tail and says so.

The files are stored as the trial wrote them (a regrade runs the verifier
on them again), so what a page or a download shows of one goes through
the `shown_*` readers and `log_tails`, which mask secrets
(autolab_site.masking): text a line at a time, a binary file byte for byte
(each secret covered by as many `*`, so that its size and layout hold).
Views read no stored file otherwise (tests/test_no_secret_leaves.py).
"""
from __future__ import annotations

import io
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import storages

from autolab_site.checksums import tree_checksum
from autolab_site.masking import mask_chunks, mask_text
from autolab_site.safe_files import UnsafePath, read_file, read_tail

from trajectories.models import Rollout
from trajectories.reading.trial_tabs import SNIFF_BYTES, is_text, whole_lines

# Bigger files keep their first and last half of this (a 12-hour training log).
ARTIFACT_FILE_LIMIT = 64 * 1024 * 1024
CUT_MARK = b"\n[... cut by autolab-site: the middle of this file was not kept ...]\n"
# Files of a trial folder that are ours or Harbor's bookkeeping, not the trial's.
SKIPPED = ("lock.json",)


@dataclass(frozen=True)
class ArtifactFile:
    path: str  # relative to the trial folder, POSIX
    size: int  # bytes in the trial folder
    cut: bool = False  # only the head and tail were kept


def storage():
    return storages["artifacts"]


def storage_name(trial_name: str, relative: str) -> str:
    return f"rollouts/{trial_name}/{relative}"


def file_limit() -> int:
    return int(getattr(settings, "AUTOLAB_ARTIFACT_FILE_LIMIT", ARTIFACT_FILE_LIMIT))


def trial_files(folder: Path) -> list[str]:
    """The regular files of a trial folder (relative, sorted), links, special files and hard links left out."""
    names: set[str] = set()
    tree_checksum(folder, names=names, hard_links=[])
    return sorted(name for name in names if name.rpartition("/")[2] not in SKIPPED)


def _content(folder: Path, relative: str, size: int, limit: int) -> tuple[bytes, bool]:
    if size <= limit:
        return read_file(folder, relative), False
    half = limit // 2
    return read_file(folder, relative, limit=half) + CUT_MARK + read_tail(folder, relative, half), True


def store_files(rollout: Rollout, folder: Path, relatives: list[str] | None = None) -> list[ArtifactFile]:
    """Copy a trial folder's files (or those named) to the shared storage; update the rollout's list.

    Files already stored with the same size are not sent again, so a
    running trial's logs can be stored every few seconds at little cost.
    """
    folder = Path(folder)
    known = {entry["path"]: entry for entry in rollout.artifacts or []}
    limit = file_limit()
    target = storage()
    for relative in relatives if relatives is not None else trial_files(folder):
        try:
            size = os.lstat(folder / relative).st_size
            if relative in known and known[relative]["size"] == size and not known[relative].get("cut"):
                continue
            data, cut = _content(folder, relative, size, limit)
        except (OSError, UnsafePath):
            continue
        name = storage_name(rollout.trial_name, relative)
        if target.exists(name):
            target.delete(name)
        target.save(name, ContentFile(data))
        known[relative] = asdict(ArtifactFile(relative, size, cut))
    listing = sorted(known.values(), key=lambda entry: entry["path"])
    if listing != (rollout.artifacts or []):
        Rollout.objects.filter(pk=rollout.pk).update(artifacts=listing)
        rollout.artifacts = listing
    return [ArtifactFile(**entry) for entry in listing]


def store_tail(rollout: Rollout, relative: str, data: bytes, size: int) -> None:
    """Store the last bytes of a file that is still growing (a running trial's log), replacing the last tail."""
    target = storage()
    name = storage_name(rollout.trial_name, relative)
    if target.exists(name):
        target.delete(name)
    target.save(name, ContentFile(data))
    known = {entry["path"]: entry for entry in rollout.artifacts or []}
    known[relative] = asdict(ArtifactFile(relative, size, cut=len(data) < size))
    rollout.artifacts = sorted(known.values(), key=lambda entry: entry["path"])
    Rollout.objects.filter(pk=rollout.pk).update(artifacts=rollout.artifacts)


# The logs a rollout page shows as they grow: the trial's log and terminus-2's terminal pane.
LOG_FILES = ("trial.log", "agent/terminus_2.pane")


def log_tails(rollout: Rollout, size: int = 16 * 1024) -> dict[str, str]:
    """The tails of the rollout's stored logs, by file: whole lines, secrets masked (shown_tail)."""
    return {name: found[0] for name in LOG_FILES if (found := shown_tail(rollout, name, size)) is not None}


def listed(rollout: Rollout, relative: str) -> ArtifactFile | None:
    for entry in rollout.artifacts or []:
        if entry["path"] == relative:
            return ArtifactFile(**entry)
    return None


def open_artifact(rollout: Rollout, relative: str):
    """The stored file (a binary file object), or None when the rollout has no such file."""
    if listed(rollout, relative) is None:
        return None
    try:
        return storage().open(storage_name(rollout.trial_name, relative), "rb")
    except (FileNotFoundError, OSError):
        return None


def head(rollout: Rollout, relative: str, size: int) -> bytes | None:
    """The first `size` bytes of a stored file, or None when the rollout has no such file."""
    handle = open_artifact(rollout, relative)
    if handle is None:
        return None
    with handle:
        try:
            return handle.read(size)
        except OSError:
            return None


def tail_bytes(rollout: Rollout, relative: str, size: int) -> tuple[bytes, bool] | None:
    """The last `size` bytes of a stored file and whether its start was left out, or None."""
    handle = open_artifact(rollout, relative)
    if handle is None:
        return None
    with handle:
        try:
            end = handle.size
            handle.seek(max(end - size, 0))
            return handle.read(), end > size
        except (AttributeError, OSError, io.UnsupportedOperation):
            data = handle.read()
            return data[-size:], len(data) > size


# -- What pages and downloads show of a stored file: masked ------------------------------------------

# Bytes read from storage at a time when a file is served whole.
SERVED_CHUNK = 256 * 1024


def shown_head(rollout: Rollout, relative: str, size: int) -> tuple[str | None, int] | None:
    """(the text of a stored file's first `size` bytes, masked, or None when it is binary; the bytes read), or None."""
    data = head(rollout, relative, size)
    if data is None:
        return None
    if not is_text(data[:SNIFF_BYTES]):
        return None, len(data)
    if len(data) == size and b"\n" in data:
        # The file goes on: its last line, cut, could show the start of a secret the rule cannot recognise yet.
        data = data[: data.rfind(b"\n") + 1]
    return mask_text(data.decode("utf-8", "replace")), len(data)


def shown_tail(rollout: Rollout, relative: str, size: int) -> tuple[str, bool] | None:
    """(the end of a stored text file, whole lines, masked; whether its start was left out), or None."""
    found = tail_bytes(rollout, relative, size)
    if found is None:
        return None
    data, cut = found
    return mask_text(whole_lines(data, cut)), cut


def shown_file(rollout: Rollout, relative: str):
    """(the stored file's bytes with secrets masked, a piece at a time; whether it is text), or None.

    Text (what trial_tabs.is_text makes of its first bytes) is masked a line
    at a time; anything else is read a byte a character (Latin-1) and each
    secret in it covered by as many `*`: a binary keeps its size, and what
    it stores plainly (a pickle's strings, a log inside an archive that is
    not compressed) loses its secrets. What is compressed cannot be read,
    and is served as stored.
    """
    handle = open_artifact(rollout, relative)
    if handle is None:
        return None
    try:
        first = handle.read(SERVED_CHUNK)
    except OSError:
        handle.close()
        return None
    text = is_text(first[:SNIFF_BYTES])

    def pieces():
        try:
            yield first
            while piece := handle.read(SERVED_CHUNK):
                yield piece
        finally:
            handle.close()

    masked = mask_chunks(pieces()) if text else mask_chunks(pieces(), same_length=True, encoding="latin-1")
    return masked, text


def delete_files(rollout: Rollout) -> None:
    target = storage()
    for entry in rollout.artifacts or []:
        name = storage_name(rollout.trial_name, entry["path"])
        if target.exists(name):
            target.delete(name)


@dataclass(frozen=True)
class Restored:
    """What `restore_files` wrote into a folder, and the files it could not give back whole."""

    written: tuple[str, ...]
    cut: tuple[str, ...]  # stored as head and tail only (over the size limit)
    missing: tuple[str, ...]  # listed, but gone from the storage


def restore_files(rollout: Rollout, folder: Path, wanted) -> Restored:
    """Write the rollout's stored files that `wanted(path)` selects back into `folder` (a fresh host folder of ours).

    Paths come from the rollout's own listing, never from a request, and are
    written below `folder` without following links (safe_files.write_file).
    A cut file is not written: half a file is not the recorded output. The
    storage keeps bytes, not modes: a script (`#!`) comes back executable,
    everything else as a plain file.
    """
    from autolab_site.safe_files import write_file

    written, cut, missing = [], [], []
    for entry in rollout.artifacts or []:
        relative = entry["path"]
        if not wanted(relative):
            continue
        if entry.get("cut"):
            cut.append(relative)
            continue
        handle = open_artifact(rollout, relative)
        if handle is None:
            missing.append(relative)
            continue
        with handle:
            data = handle.read()
        write_file(folder, relative, data, mode=0o755 if data.startswith(b"#!") else 0o644)
        written.append(relative)
    return Restored(tuple(written), tuple(cut), tuple(missing))


def stored_json(rollout: Rollout, relative: str, limit: int = 1 << 20):
    """A small stored JSON file of the rollout (a manifest), decoded; None when it is missing, too big or not JSON."""
    import json

    entry = listed(rollout, relative)
    if entry is None or entry.cut or entry.size > limit:
        return None
    handle = open_artifact(rollout, relative)
    if handle is None:
        return None
    with handle:
        try:
            return json.loads(handle.read(limit + 1))
        except ValueError:
            return None
