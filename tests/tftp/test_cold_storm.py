"""A cold server (nothing rendered yet) survives a burst of modems asking for dynamic files.

The client side is what modems do: 1 s retransmission timeout, 5 retries, so a modem
whose file is not ready within ~6 s gives up. A server that builds one file per modem
on threads under the GIL cannot serve a few hundred of them in that time; one that
builds each distinct config once and lets the other modems wait for it can.
"""

from __future__ import annotations

import io
import socket
import threading
import time

import pytest

from hfcprov.config import decode, encode
from hfcprov.tftp import TftpServer, dynamic, fetch_many
from hfcprov.tftp.dynamic import ConfigFileBuilder, load_dynamic
from hfcprov.tftp.protocol import TftpErrors
from hfcprov.tiers import load_inventory, render_tree

from .helpers import REPO, RawClient, records, shipped_tiers, wait_idle

TIERS = ("res-50x5", "res-100x10", "business-voice")
SLOW = 0.25  # seconds per parse + encode: 300 modems one by one on 4 threads would take ~19 s

# Configs of 1-3 KB, one per 'filler' value, like a site's tiers with a few override sets.
FILLER_TIER = (REPO / "bench" / "padded-tier.j2").read_text()


def _mac(i: int) -> str:
    return f"00:10:95:01:{i >> 8 & 255:02x}:{i & 255:02x}"


def _name(i: int) -> str:
    return _mac(i).replace(":", "") + ".cm"


@pytest.fixture
def tiers(tmp_path):
    folder = shipped_tiers(tmp_path / "tiers", filler=FILLER_TIER,
                           bogus="Main {\n  NetworkAccess 1;\n  NoSuchTlv 7;\n}\n")
    (tmp_path / "root").mkdir()
    return folder


@pytest.fixture
def slow_builds(monkeypatch):
    """Every parse + encode takes SLOW seconds longer, as on a loaded box with big configs.

    Returns (started, gate): ``started`` is set as a build begins; a build waits for ``gate``
    (open unless a test closes it) before its SLOW seconds."""
    real = dynamic._prepare
    started, gate = threading.Event(), threading.Event()
    gate.set()

    def slow(*args):
        started.set()
        gate.wait(60)
        time.sleep(SLOW)  # the build's cost, simulated (what the burst is about): not a synchronisation
        return real(*args)

    monkeypatch.setattr(dynamic, "_prepare", slow)
    return started, gate


def test_cold_burst_of_300_modems_all_complete_with_slow_builds(tiers, slow_builds):
    n = 300
    inv = tiers.parent / "inventory.csv"
    # 3 tiers x 2 MaxCPE settings = 6 distinct configs among 300 modems (only TLV 19/20 and MICs differ)
    inv.write_text("mac,tier,max_cpe\n" + "".join(f"{_mac(i)},{TIERS[i % 3]},{(i // 3) % 2 + 1}\n" for i in range(n)))
    builder = ConfigFileBuilder(inv, tiers, processes=0)
    with TftpServer(tiers.parent / "root", dynamic=builder) as srv:
        got = fetch_many("127.0.0.1", srv.port, [_name(i) for i in range(n)], timeout=1.0, retries=5)
    failed = [f for f in got if not f.ok]
    assert not failed, f"{len(failed)} of {n} modems failed, first: {failed[0].error}"
    assert builder.builds == 6
    # each modem still gets its own file: its row's MaxCPE, TLV 20 = its address
    for i in (0, 1, 3, 299):
        tree = decode(got[i].data)
        assert tree.find("18")[0].value == (i // 3) % 2 + 1
        assert tree.find("20")[0].value == "127.0.0.1"


def test_cold_burst_through_worker_processes(tiers):
    n, variants = 200, 25
    inv = tiers.parent / "inventory.csv"
    inv.write_text("mac,tier,filler\n" + "".join(f"{_mac(i)},filler,{30 + 7 * (i % variants)}\n" for i in range(n)))
    spec = tiers.parent / "dyn.yaml"
    spec.write_text("inventory: inventory.csv\ntemplates: tiers\nprocesses: 2\ntimestamp: false\n")
    builder = load_dynamic(spec)
    with TftpServer(tiers.parent / "root", dynamic=builder) as srv:
        got = fetch_many("127.0.0.1", srv.port, [_name(i) for i in range(n)])
    assert [f.filename for f in got if not f.ok] == []
    assert builder.builds == variants
    row = next(r for r in load_inventory(inv) if r["mac"] == _mac(37).replace(":", ""))
    tree = render_tree(tiers / "filler.j2", row)
    tree.set_top(20, "127.0.0.1")
    assert got[37].data == encode(tree, None)  # built in a worker, byte for byte the codec's file


def test_modems_share_a_build_only_when_the_template_cannot_tell_them_apart(tiers):
    """A template that reads the MAC gets one build per modem; one that does not, one per tier."""
    (tiers / "permac.j2").write_text('Main {\n{% include "_common.j2" %}\n  CpeMacAddress {{ mac|mac_colon }};\n}\n')
    (tiers / "dyninc.j2").write_text('Main {\n{% include inc %}\n}\n')  # cannot be analysed: keyed by row
    inv = tiers.parent / "inventory.csv"
    inv.write_text("mac,tier,inc,ip\n" + "".join(
        f"{_mac(i)},{tier},_common.j2,10.0.0.{i}\n" for i, tier in enumerate(["permac"] * 3 + ["res-50x5"] * 3
                                                                             + ["dyninc"] * 2)))
    builder = ConfigFileBuilder(inv, tiers, processes=0, timestamp=False)
    files = [builder(_name(i), "10.9.9.9") for i in range(8)]
    assert builder.builds == 3 + 1 + 2
    assert [decode(f).find("14")[0].value for f in files[:3]] == [_mac(i) for i in range(3)]
    assert files[3] == files[4] == files[5]


def test_parse_error_in_a_worker_process_is_one_line_for_that_modem(tiers):
    inv = tiers.parent / "inventory.csv"
    inv.write_text(f"mac,tier\n{_mac(1)},bogus\n{_mac(2)},res-50x5\n")
    log = io.StringIO()
    builder = ConfigFileBuilder(inv, tiers, processes=2)
    with TftpServer(tiers.parent / "root", dynamic=builder, log=log) as srv:
        bad, good = fetch_many("127.0.0.1", srv.port, [_name(1), _name(2)])
        wait_idle(srv)
    assert bad.error_code == TftpErrors.NotDefined and good.ok
    (rec,) = [r for r in records(log.getvalue()) if r["file"] == _name(1)]
    assert rec["result"] == "generate-error"
    assert "bogus.j2" in rec["detail"] and "NoSuchTlv" in rec["detail"] and "\n" not in rec["detail"]


def test_resent_rrq_while_building_joins_the_pending_build(tiers, slow_builds):
    """A modem that resends its RRQ during the build gets one transfer, not a second build or TID."""
    inv = tiers.parent / "inventory.csv"
    inv.write_text(f"mac,tier\n{_mac(1)},res-50x5\n")
    log = io.StringIO()
    builder = ConfigFileBuilder(inv, tiers, processes=0)
    started, gate = slow_builds
    gate.clear()  # the build waits until the modem has resent
    with TftpServer(tiers.parent / "root", dynamic=builder, log=log) as srv:
        c = RawClient(srv.port)
        try:
            c.rrq(_name(1))
            assert started.wait(30)  # its build is running
            c.rrq(_name(1))  # same port, same file: the retransmission of a modem tired of waiting
            gate.set()
            opcode, block, payload, _ = c.recv()
            assert (opcode, block) == (3, 1) and len(payload) < 512
            first_tid = c.tid
            c.ack(1)
            with pytest.raises(socket.timeout):
                c.recv(timeout=SLOW * 3)  # no second DATA 1 from another transfer
            assert c.tid == first_tid
        finally:
            c.close()
        wait_idle(srv)
    assert builder.builds == 1
    assert [r["result"] for r in records(log.getvalue())] == ["ok"]
