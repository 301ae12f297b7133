"""The proof a point needs after its reset, on scripted polls (a virtual clock: no waiting)."""

from __future__ import annotations

import pytest

from hfcprov.lab.proof import Expected, PointFailed, PointUnreachable, Seen, wait_until_proven

EXPECTED = Expected(mac="001122334455", host="10.1.0.50", file="001122334455.cm", server="10.1.0.2")


def good(at, uptime, **kw):
    values = dict(answered=True, uptime=uptime, status=12, file="001122334455.cm", server="10.1.0.2",
                  cmts_status="operational(8)", cmts_online=True, cmts_address="10.1.0.50")
    values.update(kw)
    return Seen(at=at, **values)


def run(script, with_cmts=True, timeout=30.0):
    """Run the wait on a virtual clock; ``script(at)`` answers each poll."""
    now = [0.0]
    polls = []

    def poll(at):
        polls.append(at)
        return script(at)

    seen = wait_until_proven(poll, EXPECTED, with_cmts, timeout, 2.0, started=0.0, clock=lambda: now[0],
                             sleep=lambda s: now.__setitem__(0, now[0] + s))
    return seen, polls


def test_old_values_before_the_reboot_do_not_count():
    # answers at once with everything right but its old uptime, then goes down, then comes back
    def script(at):
        if at < 4:
            return good(at, uptime=5000.0)
        if at < 10:
            return Seen(at=at, error="timeout", cmts_status="initialRanging(2)", cmts_online=False)
        return good(at, uptime=at - 9)

    seen, polls = run(script)
    assert seen.at == 10.0 and polls[:2] == [0.0, 2.0]


def test_a_modem_whose_uptime_never_restarts_is_proven_by_the_cmts_re_registering():
    def script(at):
        online = not 4 <= at < 8
        return good(at, uptime=5000.0 + at, cmts_online=online,
                    cmts_status="operational(8)" if online else "startDhcpv4(11)")

    seen, _ = run(script)
    assert seen.at == 8.0
    with pytest.raises(PointFailed, match="not rebooted: sysUpTime 5030 s at 30 s after the reset"):
        run(script, with_cmts=False)


@pytest.mark.parametrize("change, finding", [
    ({"status": 1}, "docsIfCmStatusValue other(1), not operational(12)"),
    ({"file": "gold.cm"}, "docsDevServerConfigFile 'gold.cm', not the published '001122334455.cm'"),
    ({"server": "10.9.9.9"}, "loaded from TFTP server 10.9.9.9, not 10.1.0.2"),
    ({"cmts_address": "10.1.0.99"}, "the CMTS lists it at 10.1.0.99, not 10.1.0.50"),
    ({"cmts_status": "accessDenied(7)", "cmts_online": False}, "the CMTS lists it accessDenied(7)"),
])
def test_each_finding_fails_the_point_by_name(change, finding):
    with pytest.raises(PointFailed) as info:
        run(lambda at: good(at, uptime=at / 2, **change))
    msg = str(info.value)
    assert msg.startswith("modem 001122334455 (10.1.0.50): not proven back on the new file within 30 s")
    assert finding in msg and not isinstance(info.value, PointUnreachable)


def test_a_modem_that_never_answers_is_unreachable_and_one_that_fell_silent_is_not():
    with pytest.raises(PointUnreachable, match="no SNMP answer in the 30 s after the reset"):
        run(lambda at: Seen(at=at, error="no SNMP answer in 2 s x 2 tries"))
    with pytest.raises(PointFailed, match=r"silent since 2 s") as info:
        run(lambda at: good(at, uptime=9999.0) if at < 3 else Seen(at=at, error="timeout"), with_cmts=False)
    assert not isinstance(info.value, PointUnreachable)
