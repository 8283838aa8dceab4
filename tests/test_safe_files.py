"""autolab_site.safe_files: no read, copy or write follows a link planted below a root."""
from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from autolab_site.safe_files import (
    TAR_SLACK,
    UnsafePath,
    copy_file,
    copy_tar,
    copy_tree,
    find_links,
    read_file,
    read_tail,
    remove_files,
    shift_owners,
    write_file,
)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A host file outside every root, that no operation may change or reveal."""
    path = tmp_path / "host" / "secret.txt"
    path.parent.mkdir()
    path.write_text("host secret\n")
    return path


def planted(tmp_path: Path, victim: Path) -> Path:
    """A sandbox-controlled folder with a file, a folder and every kind of trap."""
    root = tmp_path / "sandbox"
    (root / "agent" / "sub").mkdir(parents=True)
    (root / "agent" / "note.txt").write_text("agent note\n")
    (root / "agent" / "sub" / "deep.txt").write_text("deep\n")
    (root / "agent" / "exit-code.txt").symlink_to(victim)
    (root / "agent" / "hostdir").symlink_to(victim.parent, target_is_directory=True)
    os.mkfifo(root / "agent" / "pipe")
    return root


def test_copy_tree_copies_files_and_refuses_links_and_special_files(tmp_path, victim):
    root = planted(tmp_path, victim)
    target = tmp_path / "trial"
    report = copy_tree(root, target)
    assert sorted(report.copied) == ["agent/note.txt", "agent/sub/deep.txt"]
    assert sorted(r.split(":")[0] for r in report.refused) == ["agent/exit-code.txt", "agent/hostdir", "agent/pipe"]
    assert find_links(target) == []
    assert (target / "agent" / "note.txt").read_text() == "agent note\n"
    assert victim.read_text() == "host secret\n"


def test_copy_tree_replaces_a_link_at_the_target_instead_of_writing_through_it(tmp_path, victim):
    source = tmp_path / "staging"
    source.mkdir()
    (source / "exit-code.txt").write_text("0")
    target = tmp_path / "trial"
    target.mkdir()
    (target / "exit-code.txt").symlink_to(victim)
    copy_tree(source, target)
    assert victim.read_text() == "host secret\n"
    assert not (target / "exit-code.txt").is_symlink()
    assert (target / "exit-code.txt").read_text() == "0"


def test_copy_tree_keeps_what_the_host_wrote(tmp_path):
    source, target = tmp_path / "staging", tmp_path / "trial"
    source.mkdir()
    target.mkdir()
    (source / "trajectory.json").write_text("forged by the sandbox")
    (source / "pane.txt").write_text("screen")
    (target / "trajectory.json").write_text("written by the host")
    report = copy_tree(source, target, keep=lambda relative: relative == "trajectory.json")
    assert report.kept == ["trajectory.json"] and report.copied == ["pane.txt"]
    assert (target / "trajectory.json").read_text() == "written by the host"


def test_copy_tree_enters_no_linked_folder_on_either_side(tmp_path, victim):
    root = tmp_path / "rootfs"
    root.mkdir()
    (root / "app").symlink_to(victim.parent, target_is_directory=True)
    with pytest.raises(UnsafePath):
        copy_tree(root, tmp_path / "out", source_relative="app")
    with pytest.raises(UnsafePath):
        copy_tree(tmp_path / "out", root, target_relative="app/x")
    assert sorted(os.listdir(victim.parent)) == ["secret.txt"]


def test_copy_tree_stops_at_its_size_limit(tmp_path):
    source = tmp_path / "staging"
    source.mkdir()
    (source / "a.log").write_bytes(b"x" * 600)
    (source / "b.log").write_bytes(b"y" * 600)
    report = copy_tree(source, tmp_path / "trial", max_bytes=1000)
    assert report.copied == ["a.log"]
    assert report.refused == ["b.log: past the copy's size limit"]
    assert not (tmp_path / "trial" / "b.log").exists()
    assert [p.name for p in (tmp_path / "trial").iterdir()] == ["a.log"]  # no partial file left


@pytest.mark.parametrize("relative", ["agent/exit-code.txt", "agent/hostdir/secret.txt", "agent/pipe", "../host/secret.txt"])
def test_reads_refuse_links_anywhere_below_the_root(tmp_path, victim, relative):
    root = planted(tmp_path, victim)
    with pytest.raises(UnsafePath):
        read_file(root, relative)
    with pytest.raises(UnsafePath):
        read_tail(root, relative, 5)


def test_reads_of_regular_files(tmp_path, victim):
    root = planted(tmp_path, victim)
    assert read_file(root, "agent/sub/deep.txt") == b"deep\n"
    assert read_file(root, "agent/note.txt", limit=5) == b"agent"
    assert read_tail(root, "agent/note.txt", 5) == b"note\n"


def test_write_file_replaces_a_planted_link_and_refuses_a_linked_folder(tmp_path, victim):
    root = planted(tmp_path, victim)
    write_file(root, "agent/exit-code.txt", b"0")
    assert victim.read_text() == "host secret\n"
    assert read_file(root, "agent/exit-code.txt") == b"0"
    with pytest.raises(UnsafePath):
        write_file(root, "agent/hostdir/secret.txt", b"pwned")
    assert victim.read_text() == "host secret\n"


def test_copy_file_refuses_a_link_as_source_and_below_the_target(tmp_path, victim):
    root = planted(tmp_path, victim)
    with pytest.raises(UnsafePath):
        copy_file(root / "agent" / "exit-code.txt", tmp_path / "out", "x")
    with pytest.raises(UnsafePath):
        copy_file(root / "agent" / "note.txt", root, "agent/hostdir/secret.txt")
    assert victim.read_text() == "host secret\n"
    copy_file(root / "agent" / "note.txt", tmp_path / "out", "a/b.txt")
    assert (tmp_path / "out" / "a" / "b.txt").read_text() == "agent note\n"


def test_find_links(tmp_path, victim):
    assert find_links(planted(tmp_path, victim)) == ["agent/exit-code.txt", "agent/hostdir", "agent/pipe"]


def test_reads_refuse_a_hard_link_to_a_file_outside_the_root(tmp_path, victim):
    """A second name of a host file (local root or its owner made it) is refused as a symlink is (issue 43)."""
    root = planted(tmp_path, victim)
    os.link(victim, root / "agent" / "shadow")
    for read in (lambda: read_file(root, "agent/shadow"), lambda: read_tail(root, "agent/shadow", 5)):
        with pytest.raises(UnsafePath, match="hard link"):
            read()
    assert read_file(root, "agent/note.txt") == b"agent note\n"


def tar_stream(entries: list[tuple[str, bytes | str | None, int]]) -> io.BytesIO:
    """A tar archive in memory: (name, content | link target | None for a folder, mode)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, content, mode in entries:
            info = tarfile.TarInfo(name)
            info.mode = mode
            if content is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            elif isinstance(content, str):
                info.type = tarfile.SYMTYPE if not content.startswith("hard:") else tarfile.LNKTYPE
                info.linkname = content.removeprefix("hard:")
                archive.addfile(info)
            else:
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
        fifo = tarfile.TarInfo("./agent/pipe")
        fifo.type = tarfile.FIFOTYPE
        archive.addfile(fifo)
    buffer.seek(0)
    return buffer


def test_copy_tar_writes_files_and_folders_and_refuses_the_rest(tmp_path, victim):
    stream = tar_stream([
        ("./", None, 0o755),
        ("./agent/", None, 0o777),
        ("./agent/note.txt", b"agent note\n", 0o644),
        ("./agent/sub/deep.txt", b"deep\n", 0o600),
        ("./agent/bash", b"#!/bin/sh\n", 0o6755),
        ("./agent/exit-code.txt", str(victim), 0o777),
        ("./agent/hard", f"hard:{victim}", 0o644),
        ("../host/secret.txt", b"pwned", 0o644),
        ("/etc/evil", b"pwned", 0o644),
    ])
    target = tmp_path / "trial"
    report = copy_tar(stream, target)
    assert sorted(report.copied) == ["agent/bash", "agent/note.txt", "agent/sub/deep.txt"]
    refused = sorted(entry.split(":")[0] for entry in report.refused)
    assert refused == ["../host/secret.txt", "/etc/evil", "agent/exit-code.txt", "agent/hard", "agent/pipe"]
    assert find_links(target) == [] and victim.read_text() == "host secret\n"
    assert (target / "agent" / "note.txt").read_text() == "agent note\n"
    assert (target / "agent" / "bash").stat().st_mode & 0o7777 == 0o755  # no setuid or setgid bit survives
    assert report.written == len("agent note\n") + len("deep\n") + len("#!/bin/sh\n") and not report.over_limit


class EndlessTar(io.RawIOBase):
    """A tar stream announcing a 4 GiB file of zeros, made as it is read (what `cp` of a sparse file sends)."""

    def __init__(self):
        header = tarfile.TarInfo("./big")
        header.size = 4 << 30
        self.header = header.tobuf(format=tarfile.GNU_FORMAT)
        self.sent = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        size = len(buffer)
        chunk = self.header[self.sent:self.sent + size]
        chunk += bytes(size - len(chunk))
        buffer[:size] = chunk
        self.sent += size
        return size


def test_copy_tar_stops_reading_at_its_limit_and_leaves_nothing_partial(tmp_path):
    stream = EndlessTar()
    report = copy_tar(stream, tmp_path / "trial", max_bytes=1 << 20)
    assert report.over_limit and report.copied == []
    assert stream.sent <= (1 << 20) + TAR_SLACK
    assert list((tmp_path / "trial").iterdir()) == []


def test_copy_tar_limit_counts_every_file(tmp_path):
    stream = tar_stream([("a.log", b"x" * 600, 0o644), ("b.log", b"y" * 600, 0o644)])
    report = copy_tar(stream, tmp_path / "trial", max_bytes=1000)
    assert report.copied == ["a.log"] and report.over_limit
    remove_files(tmp_path / "trial", report.copied)
    assert list((tmp_path / "trial").iterdir()) == []


def test_shift_owners_gives_host_files_to_the_shifted_ids_and_follows_no_link(tmp_path, victim):
    root = planted(tmp_path, victim)
    os.chown(root / "agent" / "note.txt", 1000, 1000)
    os.chown(root / "agent" / "sub" / "deep.txt", 1_000_005, 1_000_005)  # shifted already
    shift_owners(root, "agent", 1_000_000, 65536)
    owners = {path.relative_to(root).as_posix(): (path.lstat().st_uid, path.lstat().st_gid)
              for path in (root / "agent").rglob("*")}
    assert owners == {
        "agent/note.txt": (1_001_000, 1_001_000),
        "agent/sub": (1_000_000, 1_000_000),
        "agent/sub/deep.txt": (1_000_005, 1_000_005),
        "agent/exit-code.txt": (1_000_000, 1_000_000),  # the link itself
        "agent/hostdir": (1_000_000, 1_000_000),
        "agent/pipe": (1_000_000, 1_000_000),
    }
    assert (root / "agent").stat().st_uid == 1_000_000 and root.stat().st_uid == 0
    assert victim.stat().st_uid == 0 and victim.parent.stat().st_uid == 0
