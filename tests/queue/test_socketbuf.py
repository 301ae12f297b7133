"""Cohen & Ramanathan 1998, section V.B: the socket-buffer limit behind a CM with a small buffer."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.queue.socketbuf import SocketBufferError, socket_buffer_limit


def test_papers_case_gives_19_kb():
    # 10 KB CM buffer (seven packets), 25 Mb/s HFC downstream, 10 Mb/s 10Base-T, one connection
    r = socket_buffer_limit(cm_buffer=10 * 1024, downstream=25e6, lan=10e6, connections=1, mss=1460)
    assert r.cm_packets == 7
    assert r.limit_packets == pytest.approx(1 + 7 * 25 / 15)
    assert round(r.limit_bytes / 1000) == 19


def test_no_drop_variant_is_stricter():
    r = socket_buffer_limit(10 * 1024, 25e6, 10e6, 1, 1460)
    # C >= (B-1)*15/25 + 1  ->  B = 1 + 6*25/15 = 11
    assert r.lossless_packets == pytest.approx(11)
    assert r.lossless_bytes < r.limit_bytes


def test_three_connections_share_the_cm_buffer():
    one = socket_buffer_limit(10 * 1024, 25e6, 10e6, 1, 1460)
    three = socket_buffer_limit(10 * 1024, 25e6, 10e6, 3, 1460)
    # C >= (B*n - 1)*f  ->  B*n = C/f + 1
    assert three.limit_packets * 3 == pytest.approx(one.limit_packets)


def test_fast_lan_means_no_limit():
    r = socket_buffer_limit(10 * 1024, 10e6, 100e6, 1, 1460)
    assert r.limit_packets is None and r.setting_bytes is None


@given(
    st.integers(min_value=1500, max_value=10**7),
    st.floats(min_value=1e6, max_value=1e10),
    st.floats(min_value=0.01, max_value=0.99),
    st.integers(min_value=1, max_value=50),
)
def test_limit_is_exactly_where_the_cm_overflows_by_one_packet(cm, down, lan_share, n):
    r = socket_buffer_limit(cm, down, down * lan_share, n, 1460)
    # The paper's inequality holds with equality at the limit, and the setting never exceeds it.
    assert r.cm_packets == pytest.approx((r.limit_packets * n - 1) * r.fill_fraction)
    assert r.setting_segments <= r.limit_packets + 1e-9
    bigger = socket_buffer_limit(cm * 2, down, down * lan_share, n, 1460)
    assert bigger.limit_packets >= r.limit_packets


def test_bad_inputs_raise_user_errors():
    with pytest.raises(SocketBufferError):
        socket_buffer_limit(0, 25e6, 10e6)
    with pytest.raises(SocketBufferError):
        socket_buffer_limit(10240, 25e6, 10e6, connections=0)
