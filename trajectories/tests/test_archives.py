"""Safe extraction of uploaded archives, and importing trials from them."""
from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from trajectories.storing.archives import ArchiveError, extract_archive, is_archive, safe_target
from trajectories.models import Rollout
from trajectories.services import import_path

from .trialdata import make_task, make_trial


def add_bytes(tar: tarfile.TarFile, name: str, data: bytes = b"x") -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def make_tar(path: Path, build) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        build(tar)
    return path


def make_zip(path: Path, entries: list[tuple[str, bytes, int | None]]) -> Path:
    with zipfile.ZipFile(path, "w") as zipped:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            if mode is not None:
                info.external_attr = mode << 16
            zipped.writestr(info, data)
    return path


def test_archive_suffixes():
    assert is_archive("a.tar.gz") and is_archive("A.TGZ") and is_archive("b.zip") and is_archive("c.tar")
    assert not is_archive("d.json") and not is_archive("e.gz")


def test_plain_tar_extracts(tmp_path):
    archive = make_tar(tmp_path / "ok.tar.gz", lambda tar: (add_bytes(tar, "job/t1/config.json", b"{}"), add_bytes(tar, "./job/t1/agent/x", b"abc")))
    out = tmp_path / "out"
    out.mkdir()
    extract_archive(archive, out)
    assert (out / "job/t1/config.json").read_bytes() == b"{}"
    assert (out / "job/t1/agent/x").read_bytes() == b"abc"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../evil.txt", "leaving the archive"),
        ("job/../../evil.txt", "leaving the archive"),
        ("/etc/evil.txt", "absolute path"),
        ("C:/evil.txt", "absolute path"),
        ("..\\evil.txt", "leaving the archive"),
    ],
)
def test_traversal_is_refused_in_tar(tmp_path, name, message):
    archive = make_tar(tmp_path / "bad.tar.gz", lambda tar: add_bytes(tar, name))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ArchiveError, match=message):
        extract_archive(archive, out)
    assert not (tmp_path / "evil.txt").exists()


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE])
def test_links_are_refused_in_tar(tmp_path, kind):
    def build(tar):
        info = tarfile.TarInfo("job/link")
        info.type = kind
        info.linkname = "/etc/passwd"
        tar.addfile(info)

    archive = make_tar(tmp_path / "link.tar.gz", build)
    with pytest.raises(ArchiveError, match="link refused"):
        extract_archive(archive, tmp_path)


def test_device_files_are_refused_in_tar(tmp_path):
    def build(tar):
        info = tarfile.TarInfo("job/dev")
        info.type = tarfile.CHRTYPE
        tar.addfile(info)

    archive = make_tar(tmp_path / "dev.tar.gz", build)
    with pytest.raises(ArchiveError, match="special file"):
        extract_archive(archive, tmp_path)


def test_zip_traversal_and_symlinks_are_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ArchiveError, match="leaving the archive"):
        extract_archive(make_zip(tmp_path / "a.zip", [("../evil.txt", b"x", None)]), out)
    with pytest.raises(ArchiveError, match="link"):
        extract_archive(make_zip(tmp_path / "b.zip", [("job/link", b"/etc/passwd", stat.S_IFLNK | 0o777)]), out)
    assert not (tmp_path / "evil.txt").exists()


def test_size_and_count_limits(tmp_path, settings):
    archive = make_tar(tmp_path / "big.tar.gz", lambda tar: [add_bytes(tar, f"f{i}", b"y" * 1000) for i in range(5)])
    with pytest.raises(ArchiveError, match="more than 3 entries"):
        extract_archive(archive, tmp_path / ".", max_files=3)
    settings.AUTOLAB_ARCHIVE_MAX_BYTES = 2500
    (tmp_path / "o").mkdir()
    with pytest.raises(ArchiveError, match="more than 2500 bytes"):
        extract_archive(archive, tmp_path / "o")


def test_corrupt_and_unsupported_archives(tmp_path):
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(b"not a tarball")
    with pytest.raises(ArchiveError, match="bad.tar.gz: unreadable archive"):
        extract_archive(bad, tmp_path)
    other = tmp_path / "x.rar"
    other.write_bytes(b"")
    with pytest.raises(ArchiveError, match="not a supported archive"):
        extract_archive(other, tmp_path)


def test_safe_target_keeps_paths_inside(tmp_path):
    assert safe_target(tmp_path, "a/b/c.txt") == tmp_path / "a" / "b" / "c.txt"
    assert safe_target(tmp_path, "./") is None


@pytest.mark.django_db
@pytest.mark.parametrize("suffix", ["tar.gz", "zip"])
def test_import_from_archive(tmp_path, suffix):
    make_task("demo_task")
    jobs = tmp_path / "jobs"
    make_trial(jobs / "job-1", "lib__demo_task__one")
    make_trial(jobs / "job-1", "lib__demo_task__two")
    archive = tmp_path / f"jobs.{suffix}"
    if suffix == "zip":
        with zipfile.ZipFile(archive, "w") as zipped:
            for file in sorted(jobs.rglob("*")):
                zipped.write(file, file.relative_to(tmp_path).as_posix())
    else:
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(jobs, arcname="jobs")
    report = import_path(archive)
    assert report.ok, report.as_dict()
    assert report.counts["created"] == 2
    rollout = Rollout.objects.get(trial_name="lib__demo_task__one")
    assert rollout.source_path == f"jobs.{suffix}:jobs/job-1/lib__demo_task__one"
    # The same trials from the folder are the same content: unchanged.
    assert import_path(jobs).counts["unchanged"] == 2


@pytest.mark.django_db
def test_import_refuses_an_evil_archive_and_stores_nothing(tmp_path):
    make_task("demo_task")
    folder = make_trial(tmp_path / "jobs", "lib__demo_task__one")

    def build(tar):
        tar.add(folder, arcname="lib__demo_task__one")
        add_bytes(tar, "../../evil.txt")

    report = import_path(make_tar(tmp_path / "evil.tar.gz", build))
    assert not report.ok
    assert "evil.tar.gz" in report.errors[0] and "leaving the archive" in report.errors[0]
    assert not Rollout.objects.exists()


# -- Declared sizes and counts are checked before anything is extracted ---------


def zip_bomb(path: Path, declared: int) -> Path:
    """A small zip whose one member inflates to `declared` bytes of zeros."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        with zipped.open("job/trial/agent/trajectory.json", "w", force_zip64=True) as member:
            chunk = b"\0" * (1 << 20)
            for _ in range(declared // len(chunk)):
                member.write(chunk)
    return path


def test_a_zip_declaring_too_much_is_refused_before_anything_is_written(tmp_path):
    archive = zip_bomb(tmp_path / "bomb.zip", 8 << 20)
    assert archive.stat().st_size < 100_000
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(ArchiveError, match="declares 8388608 bytes uncompressed, over the limit of 1048576"):
        extract_archive(archive, dest, max_bytes=1 << 20)
    assert list(dest.rglob("*")) == []


def test_a_zip_declaring_too_many_entries_is_refused_before_anything_is_written(tmp_path):
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for n in range(20):
            zipped.writestr(f"job/t{n}.txt", "x")
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(ArchiveError, match="declares 20 entries, over the limit of 10"):
        extract_archive(archive, dest, max_files=10)
    assert list(dest.rglob("*")) == []


@pytest.mark.parametrize("suffix, mode", [(".tar", "w"), (".tar.gz", "w:gz")])
def test_a_tar_over_its_limits_is_refused_before_anything_is_written(tmp_path, suffix, mode):
    many = tmp_path / f"many{suffix}"
    with tarfile.open(many, mode) as tar:
        for n in range(20):
            info = tarfile.TarInfo(f"job/t{n}.txt")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(ArchiveError, match="more than 10 entries"):
        extract_archive(many, dest, max_files=10)
    assert list(dest.rglob("*")) == []
    big = tmp_path / f"big{suffix}"
    with tarfile.open(big, mode) as tar:
        for n in range(3):
            info = tarfile.TarInfo(f"job/t{n}.bin")
            info.size = 600_000
            tar.addfile(info, io.BytesIO(b"\0" * info.size))
    with pytest.raises(ArchiveError, match="declares more than 1048576 bytes uncompressed"):
        extract_archive(big, dest, max_bytes=1 << 20)
    assert list(dest.rglob("*")) == []
