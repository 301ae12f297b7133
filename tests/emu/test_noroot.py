"""Without root, the emulated modem says so in one line; nothing is created."""

import pytest

from hfcprov.cli import main
from hfcprov.emu import netns, topology


def test_up_without_root_is_one_clear_error_and_builds_nothing(monkeypatch, capsys):
    before = netns.list_names("hfemu-")
    monkeypatch.setattr(topology.os, "geteuid", lambda: 1000)
    with pytest.raises(topology.EmuError, match="needs root"):
        topology.up(prefix="hfemu-noroot")
    with pytest.raises(SystemExit) as done:
        main(["emu", "up", "--prefix", "hfemu-noroot"])
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs root" in err
    assert netns.list_names("hfemu-") == before
