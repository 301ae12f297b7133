"""hfcprov.fileio without pathlib: the same target spelling and the same errors as pathlib gave."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.errors import OutputError
from hfcprov.fileio import atomic_write, posix_path


@given(st.lists(st.sampled_from(["", ".", "..", "a", "b.cm", "/", "//", "///", " "]), max_size=6).map("/".join))
def test_a_target_is_spelled_as_pathlib_spells_it(path):
    assert posix_path(path) == str(PurePosixPath(path))
    assert posix_path(Path(path)) == str(Path(path))


@pytest.mark.parametrize("target", ["one.cm", "./one.cm", "sub//deep/one.cm", "sub/./one.cm/"])
def test_atomic_write_makes_the_folders_and_leaves_only_the_file(tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    assert atomic_write(target, b"abc") == target
    assert Path(target).read_bytes() == b"abc"
    assert sorted(p.name for p in Path(posix_path(target)).parent.iterdir()) == [Path(target).name]


@pytest.mark.parametrize("target", ["plain/one.cm", "plain/sub/one.cm", "folder"])
def test_a_failed_write_names_what_pathlib_named(tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain").write_text("a regular file\n")
    (tmp_path / "folder").mkdir()
    with pytest.raises(OutputError) as caught:
        atomic_write(target, b"abc")
    try:  # what the pathlib version did first: make the parent folder
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        expected = None
    except OSError as err:
        expected = OutputError(Path(target), err)
    if expected is not None:
        assert str(caught.value) == str(expected)
    assert str(caught.value).startswith(f"{target}: cannot write: ")
    assert not [p for p in tmp_path.rglob(".*") if p.is_file()]  # no temporary file left


@pytest.mark.parametrize("folder", ["out", "out/deep"])
def test_a_write_in_a_folder_is_atomic_writes(tmp_path, monkeypatch, folder):
    """``atomic_write_in(folder, name)`` (the bulk build's) writes what ``atomic_write(folder/name)`` writes,
    with its mode, leaves no temporary file, and fails naming the same path."""
    from hfcprov.fileio import atomic_write_in

    monkeypatch.chdir(tmp_path)
    assert atomic_write_in(folder, "one.cm", b"abc", mode=0o640, durable=False) == f"{folder}/one.cm"
    assert Path(folder, "one.cm").read_bytes() == b"abc"
    assert Path(folder, "one.cm").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in Path(folder).iterdir()) == ["one.cm"]
    Path(folder, "dir.cm").mkdir()
    with pytest.raises(OutputError) as caught:
        atomic_write_in(folder, "dir.cm", b"abc")
    with pytest.raises(OutputError) as plain:
        atomic_write(f"{folder}/dir.cm", b"abc")
    import re

    def unnumbered(err):  # the temporary names differ by their serial number only
        return re.sub(r"\.\d+\.tmp", ".N.tmp", str(err))

    assert unnumbered(caught.value) == unnumbered(plain.value)
    assert str(caught.value).startswith(f"{folder}/dir.cm: cannot write: ")
    assert sorted(p.name for p in Path(folder).iterdir()) == ["dir.cm", "one.cm"]
