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
