"""Time of Day (RFC 868): the count on the wire, the server over UDP and TCP, IPv4 and IPv6, and the CLI."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.boot.tod import RFC868_OFFSET, TimeServer, TimeServerError, query_time, rfc868_time, unix_time
from tests.support import free_udp_port, has_ipv6_loopback

FIXED = 1_700_000_000  # a clock the test controls: the answer must be exactly this


@given(st.integers(min_value=0, max_value=(1 << 32) - RFC868_OFFSET - 1))
def test_rfc868_count_round_trips_through_unix_time(now):
    assert rfc868_time(now) == now + RFC868_OFFSET
    assert unix_time(rfc868_time(now)) == now


def test_rfc868_wraps_like_the_32_bit_field():
    assert rfc868_time(0) == 2_208_988_800  # 1970-01-01 is 2,208,988,800 s after 1900-01-01 (RFC 868)
    wrapped = rfc868_time((1 << 32) - RFC868_OFFSET + 5)  # 2036-02-07: the field wraps
    assert wrapped == 5 and unix_time(wrapped) == (1 << 32) - RFC868_OFFSET + 5


@pytest.mark.parametrize("proto", ["udp", "tcp"])
def test_server_answers_ipv4_and_ipv6_on_one_dual_stack_socket(proto):
    if not has_ipv6_loopback():
        pytest.skip("needs IPv6 on lo")
    with TimeServer("::", 0, clock=lambda: FIXED) as tod:
        assert query_time("127.0.0.1", tod.port, proto=proto) == FIXED + RFC868_OFFSET
        assert query_time("::1", tod.port, proto=proto) == FIXED + RFC868_OFFSET
    assert tod.answered[proto] == 2


def test_server_only_speaks_the_protocols_asked_for():
    with TimeServer("127.0.0.1", 0, tcp=False, clock=lambda: FIXED) as tod:
        assert query_time("127.0.0.1", tod.port) == FIXED + RFC868_OFFSET
        with pytest.raises(TimeServerError, match="tcp"):
            query_time("127.0.0.1", tod.port, proto="tcp", timeout=0.5)
    with pytest.raises(TimeServerError, match="UDP, TCP or both"):
        TimeServer(udp=False, tcp=False)


def test_a_busy_port_is_one_clear_error():
    with TimeServer("127.0.0.1", 0) as tod:
        with pytest.raises(TimeServerError, match=f"cannot listen on 127.0.0.1:{tod.port}"):
            TimeServer("127.0.0.1", tod.port).start()


def test_no_answer_is_a_clear_error():
    with pytest.raises(TimeServerError, match="no answer"):
        query_time("127.0.0.1", free_udp_port(), timeout=0.2, tries=2)


def test_log_names_each_client(tmp_path):
    log = tmp_path / "tod.log"
    with TimeServer("127.0.0.1", 0, log=str(log)) as tod:
        query_time("127.0.0.1", tod.port, bind="127.0.0.7")
    assert '"client":"127.0.0.7","proto":"udp"' in log.read_text()


def _serve(args):
    proc = subprocess.Popen([sys.executable, "-m", "hfcprov", *args], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()  # printed once listening
    return proc, line


@pytest.mark.parametrize("command", [["tod", "serve", "--listen", "127.0.0.1:0"],
                                     ["tftp", "serve", "--root", ".", "--listen", "127.0.0.1:0", "--log", "/dev/null",
                                      "--tod", "127.0.0.1:0"]])
def test_cli_serves_time_until_signalled(command, tmp_path):
    proc, line = _serve(command)
    try:
        port = int(re.search(r"time on 127\.0\.0\.1:(\d+)", line).group(1))
        before = int(time.time())
        got = unix_time(query_time("127.0.0.1", port))
        assert before <= got <= int(time.time())
        out = subprocess.run([sys.executable, "-m", "hfcprov", "tod", "get", f"127.0.0.1:{port}", "--tcp"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "UTC (RFC 868" in out.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=30)[1]
    assert proc.returncode == 0, rest
