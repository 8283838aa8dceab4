"""autolab_site.checksums.tree_checksum: what changes a folder's checksum."""
import os

from autolab_site.checksums import tree_checksum

# The checksum of the tree in test_checksum_format_is_stable, computed before
# the walk moved from Path.rglob to os.scandir.
PINNED = "9b753dd29a530d322f7c1b89f469bb94bcff1f2bac7de1d321c9af08d5578a8d"


def make(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("hello")
    (tmp_path / "y.txt").write_text("world")
    return tmp_path


def test_same_content_same_checksum_and_edits_or_renames_change_it(tmp_path):
    root = make(tmp_path)
    first = tree_checksum(root)
    assert tree_checksum(root) == first
    (root / "y.txt").write_text("World")
    edited = tree_checksum(root)
    assert edited != first
    (root / "y.txt").rename(root / "z.txt")
    assert tree_checksum(root) not in (first, edited)


def test_skipped_files_and_links_are_not_content(tmp_path):
    root = make(tmp_path)
    first = tree_checksum(root, lambda relative: relative.endswith(".lock"))
    (root / "run.lock").write_text("changes every time")
    (root / "outside").symlink_to("/etc/hostname")
    assert tree_checksum(root, lambda relative: relative.endswith(".lock")) == first
    assert tree_checksum(root) != first  # without the skip, the lock file counts


def test_linked_folders_are_not_followed_and_hidden_files_count(tmp_path):
    (tmp_path / "root").mkdir()
    root = make(tmp_path / "root")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "z.txt").write_text("not ours")
    first = tree_checksum(root)
    (root / "a" / "linked").symlink_to(outside, target_is_directory=True)
    assert tree_checksum(root) == first
    (root / "a" / ".hidden").write_text("ours")
    assert tree_checksum(root) != first


def test_checksum_format_is_stable(tmp_path):
    """Stored checksums must keep matching: relative path, NUL, bytes, NUL, in path order."""
    root = make(tmp_path)
    (root / "a.b").write_text("sorts before a/x.txt")
    (root / "a" / "big.bin").write_bytes(bytes(range(256)) * 5000)
    assert tree_checksum(root) == PINNED


def test_a_file_too_large_to_keep_gives_its_own_digest_and_the_same_checksum(tmp_path):
    import hashlib

    root = make(tmp_path)
    kept: dict[str, bytes] = {}
    plain = tree_checksum(root, keep=lambda relative: True, kept=kept)
    assert kept == {"a/x.txt": b"hello", "y.txt": b"world"}
    kept, digests = {}, {}
    checksum = tree_checksum(
        root, keep=lambda relative: True, kept=kept,
        digest_instead=lambda relative, size: relative == "y.txt" and size == 5, digests=digests,
    )
    assert checksum == plain
    assert kept == {"a/x.txt": b"hello"} and digests == {"y.txt": hashlib.sha256(b"world").hexdigest()}


def test_hard_links_are_listed_apart_when_asked_and_left_out(tmp_path):
    root = tmp_path / "trial"
    root.mkdir()
    (root / "a.txt").write_text("a")
    outside = tmp_path / "secret_key"
    outside.write_text("the site's key")
    os.link(outside, root / "key.txt")
    names: set[str] = set()
    hard_links: list[str] = []
    kept: dict[str, bytes] = {}
    checksum = tree_checksum(root, names=names, hard_links=hard_links, keep=lambda relative: True, kept=kept)
    assert names == {"a.txt"} and hard_links == ["key.txt"] and list(kept) == ["a.txt"]
    (root / "key.txt").unlink()
    assert tree_checksum(root) == checksum  # the hard link never counted
    os.link(outside, root / "key.txt")
    plain: set[str] = set()
    tree_checksum(root, names=plain)
    assert plain == {"a.txt", "key.txt"}  # a walk that does not ask (a task folder's) keeps it
