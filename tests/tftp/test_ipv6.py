"""IPv6 end to end on ::1: the server on [::1] and dual-stack [::], v4-mapped clients, and dynamic files
stamped with TLV 59 (the modem's IPv6 address, MULPI) for IPv6 clients where IPv4 ones get TLV 20."""

from __future__ import annotations

import io
import socket
import subprocess
import sys

import pytest

from hfcprov.config import decode, encode, verify
from hfcprov.tftp import TftpServer, fetch, fetch_many
from hfcprov.tftp.dynamic import load_dynamic
from hfcprov.tftp.server import TftpServerError
from hfcprov.tiers import load_inventory, render_tree
from tests.support import has_ipv6_loopback

from .helpers import REPO, records, wait_idle
from .test_dynamic import SECRET, site  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(not socket.has_ipv6, reason="no IPv6 in this Python")


if not has_ipv6_loopback():
    pytest.skip("::1 is not configured on this machine", allow_module_level=True)


def test_server_on_ipv6_loopback(root):
    log = io.StringIO()
    with TftpServer(root, host="::1", log=log) as srv:
        assert srv.host == "::1"
        assert fetch("::1", srv.port, "gold.cm", {"windowsize": 4}) == (root / "gold.cm").read_bytes()
        wait_idle(srv)
    (rec,) = records(log.getvalue())
    assert rec["result"] == "ok" and rec["client"].startswith("[::1]:")


def test_dual_stack_serves_ipv4_and_ipv6_clients(root):
    log = io.StringIO()
    with TftpServer(root, host="::", log=log) as srv:
        v4, v6 = fetch_many("127.0.0.1", srv.port, ["two.cm"])[0], fetch_many("::1", srv.port, ["big.bin"])[0]
        wait_idle(srv)
    assert v4.data == (root / "two.cm").read_bytes() and v6.data == (root / "big.bin").read_bytes()
    clients = sorted(r["client"].rsplit(":", 1)[0] for r in records(log.getvalue()))
    assert clients == ["127.0.0.1", "[::1]"]  # the v4-mapped client logged as IPv4


def test_dynamic_file_gets_tlv59_for_ipv6_and_tlv20_for_ipv4(site):  # noqa: F811
    with TftpServer(site / "root", host="::", dynamic=load_dynamic(site / "dyn.yaml")) as srv:
        v6 = fetch("::1", srv.port, "001095000002.cm")
        v4 = fetch("127.0.0.1", srv.port, "001095000002.cm")
    for data in (v4, v6):
        verify(data, SECRET)  # both MICs cover the stamped TLVs
    t6, t4 = decode(v6), decode(v4)
    assert [t.value for t in t6.find("59")] == ["::1"] and t6.find("20") == []
    assert [t.value for t in t4.find("20")] == ["127.0.0.1"] and t4.find("59") == []
    # byte for byte what the codec writes for the same tree with TLV 19 and 59 set
    row = next(r for r in load_inventory(site / "inventory.csv") if r["mac"] == "001095000002")
    tree = render_tree(site / "tiers" / "res-100x10.j2", row)
    tree.set_top(19, t6.find("19")[0].value)
    tree.set_top(59, "::1")
    assert v6 == encode(tree, SECRET)


def test_each_family_gets_its_own_framing_once(site):  # noqa: F811
    """A file is framed for the family of the modem asking (its TLV 20 or 59 hole): an IPv6 request after
    an IPv4 one builds once more, and every later request of either family is served from memory."""
    builder = load_dynamic(site / "dyn.yaml")
    with TftpServer(site / "root", host="::", dynamic=builder) as srv:
        first = fetch("127.0.0.1", srv.port, "001095000002.cm")
        assert builder.builds == 1
        v6 = fetch("::1", srv.port, "001095000002.cm")
        assert builder.builds == 2
        again = [fetch("127.0.0.1", srv.port, "001095000002.cm"), fetch("::1", srv.port, "001095000002.cm")]
        assert builder.builds == 2
    assert [t.value for t in decode(v6).find("59")] == ["::1"]
    assert [decode(d).find("20")[0].value for d in (first, again[0])] == ["127.0.0.1"] * 2
    assert decode(again[1]).find("59")[0].value == "::1"


def test_warm_frames_each_family_asked_for(site):  # noqa: F811
    builder = load_dynamic(site / "dyn.yaml")
    assert builder.warm((4, 6)) == 2  # modems with their files, in both framings: 2 builds each
    built = builder.builds
    assert built == 4
    with TftpServer(site / "root", host="::", dynamic=builder) as srv:
        fetch("::1", srv.port, "001095000002.cm")
        fetch("127.0.0.1", srv.port, "001095000002.cm")
    assert builder.builds == built  # both framings were ready


@pytest.mark.parametrize("host, families", [("::", (4, 6)), ("::1", (6,)), ("127.0.0.1", (4,)),
                                            ("0.0.0.0", (4,)), ("::ffff:127.0.0.1", (4,))])
def test_a_server_knows_which_families_its_clients_are(root, host, families):
    """What --warm frames files for: both families on the dual-stack any-address, one elsewhere."""
    try:
        srv = TftpServer(root, host=host).start()
    except TftpServerError as err:
        pytest.skip(f"cannot listen on {host} here: {err}")
    try:
        assert srv.client_families == families
    finally:
        srv.stop()


def test_cli_listens_on_bracketed_ipv6(root):
    proc = subprocess.Popen([sys.executable, "-m", "hfcprov", "tftp", "serve", "--root", str(root),
                             "--listen", "[::1]:0"], cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert "serving" in line and "[::1]:" in line, line
        port = int(line.rsplit(":", 1)[1].split()[0])
        got = subprocess.run([sys.executable, "-m", "hfcprov", "tftp", "get", f"[::1]:{port}", "gold.cm"],
                             cwd=REPO, capture_output=True, timeout=30, check=False)
        assert got.returncode == 0, got.stderr
        assert got.stdout == (root / "gold.cm").read_bytes()
    finally:
        proc.terminate()
        proc.wait(10)
