"""Probes go only to the target named: broadcast, multicast and unspecified targets are refused."""

import pytest

from hfcprov.probe.errors import ProbeError
from hfcprov.probe.target import check_target


@pytest.mark.parametrize("target", ["255.255.255.255", "224.0.0.1", "239.1.2.3", "0.0.0.0"])
def test_broadcast_multicast_and_unspecified_are_refused(target):
    with pytest.raises(ProbeError) as err:
        check_target(target)
    assert target in str(err.value) and "one host only" in str(err.value)


def test_subnet_broadcast_of_a_local_interface_is_refused():
    from hfcprov.probe.target import _local_broadcasts

    for bcast in _local_broadcasts():
        with pytest.raises(ProbeError):
            check_target(bcast)


def test_unicast_host_is_accepted_and_names_resolve():
    assert check_target("127.0.0.1") == "127.0.0.1"
    assert check_target("localhost") == "127.0.0.1"


def test_unresolvable_name_is_one_clear_error():
    with pytest.raises(ProbeError, match="cannot resolve"):
        check_target("no-such-host.invalid")
