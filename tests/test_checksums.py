"""autolab_site.checksums.tree_checksum: what changes a folder's checksum."""
from autolab_site.checksums import tree_checksum


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
