"""The emulated modem's SNMP agent on an IPv6 address (no root: ::1): snmpsim binds it, the start-up
wait sees it in /proc/net/udp6, and hfcprov's client reads the modem's data from it."""

import socket

import pytest

from hfcprov.snmp import oids
from hfcprov.snmp.agentdata import modem_snmprec
from hfcprov.snmp.client import Credentials, SnmpClient, run
from hfcprov.snmp.simagent import SnmpSimAgent, write_endpoint_data
from hfcprov.udpstat import udp_sockets
from tests.support import has_ipv6_loopback

pytestmark = pytest.mark.skipif(not has_ipv6_loopback(), reason="no IPv6 loopback (::1) on this host")


def test_udp6_table_lists_an_ipv6_socket_by_its_address():
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
        s.bind(("::1", 0))
        port = s.getsockname()[1]
        assert ("::1", port) in {(u.address, u.port) for u in udp_sockets("/proc/net/udp6")}


@pytest.mark.slow
def test_snmpsim_agent_answers_on_an_ipv6_endpoint(tmp_path):
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
        s.bind(("::1", 0))
        port = s.getsockname()[1]
    write_endpoint_data(tmp_path, "public", [modem_snmprec([], "emulated v6 modem", "v6.cm")])
    with SnmpSimAgent(tmp_path, [("0:0::1", port)]):  # any spelling of the address: compared canonically

        async def get():
            client = SnmpClient(Credentials(), timeout=1.0, retries=2)
            try:
                return await client.get("::1", port, [oids.SYS_DESCR, oids.CONFIG_FILE])
            finally:
                client.close()

        got = run(get())
    assert got == {oids.SYS_DESCR: b"emulated v6 modem", oids.CONFIG_FILE: b"v6.cm"}
