"""Every service flow is applied and the classifiers steer packets into them.

Unit part: the TLV 22/23 reading, the range-to-u32 split (hypothesis) and the
rule order. Root part: a modem booted from a file with two upstream flows, a
2 Mb/s best-effort primary with 64 KiB and a 256 kb/s 'voice' flow with 4 KiB
that a UDP destination-port classifier feeds. UDP to that port sees the voice
flow's rate and queue (one-way delay near 4 KiB / 256 kb/s), TCP bulk at the
same time sees the primary's rate; the tc classes and filters are the file's.
"""

import socket
import statistics
import struct
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.config import encode, parse_text
from hfcprov.emu import classify, netns
from hfcprov.emu.topology import ADDR
from hfcprov.model import ServiceFlow, classifiers, service_flows
from hfcprov.probe.capture import SO_TIMESTAMPNS
from tests.emu import tcview
from tests.support import host_priority

VOICE_PORT = 5060
CONFIG = f"""Main {{
  NetworkAccess 1;
  UsServiceFlow {{ UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 2000000; MaxTrafficBurst 3044;
                  BufferControl {{ TargetBuffer 65536; }} }}
  UsServiceFlow {{ UsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 256000; MaxTrafficBurst 1600;
                  BufferControl {{ TargetBuffer 4096; }} }}
  DsServiceFlow {{ DsServiceFlowRef 3; QosParamSetType 7; MaxRateSustained 10000000; }}
  DsServiceFlow {{ DsServiceFlowRef 4; QosParamSetType 7; MaxRateSustained 1000000;
                  BufferControl {{ TargetBuffer 8192; }} }}
  UsPacketClass {{ ClassifierRef 1; ServiceFlowRef 2; RulePriority 64;
                  IpPacketClassifier {{ IpProto 17; DstPortStart {VOICE_PORT}; DstPortEnd {VOICE_PORT}; }} }}
  UsPacketClass {{ ClassifierRef 2; ServiceFlowRef 9; RulePriority 32; IpPacketClassifier {{ IpProto 6; }} }}
  DsPacketClass {{ ClassifierRef 3; ServiceFlowRef 4; IpPacketClassifier {{ IpTos 0xb8b8fc;
                  IpSrcAddr {ADDR["srv"]}; IpSrcMask 255.255.255.255; }} }}
}}"""


# -- without root -----------------------------------------------------------------------------
def test_classifiers_are_read_from_the_file():
    cls = classifiers(parse_text(CONFIG))
    assert [c.path for c in cls] == ["22[0]", "22[1]", "23[0]"]
    voice = cls[0]
    assert (voice.direction, voice.sf_ref, voice.priority, voice.protocol) == ("upstream", 2, 64, 17)
    assert voice.dst_ports == (VOICE_PORT, VOICE_PORT) and voice.src_ports is None and voice.tos is None
    ef = cls[2]
    assert (ef.direction, ef.sf_ref, ef.tos, ef.src) == ("downstream", 4, (0xB8, 0xB8, 0xFC), (0x0A0A0302, 0xFFFFFFFF))
    assert ef.protocol == classify.ANY_PROTOCOL and ef.dst is None


def test_ip_criteria_map_to_u32_matches():
    tree = parse_text("""Main { UsPacketClass { ClassifierRef 1; ServiceFlowRef 1;
        IpPacketClassifier { IpTos 0x203cfc; IpSrcAddr 10.10.1.0; IpSrcMask 255.255.255.0;
                             IpDstAddr 10.10.3.2; SrcPortStart 1024; SrcPortEnd 2047; DstPortStart 80; DstPortEnd 80; } } }""")
    (c,) = classifiers(tree)
    matches = classify.u32_matches(c)
    assert len(matches) == 2  # no IpProto but ports: TCP or UDP, each one block per range
    for m, proto in zip(matches, ("6", "17")):
        text = " ".join(m)
        assert "match u32 0xa0a0100 0xffffff00 at 12" in text and "match u32 0xa0a0302 0xffffffff at 16" in text
        assert f"match u8 {proto} 0xff at 9" in text and "match u8 0x05 0x0f at 0" in text
        assert "match u16 0x400 0xfc00 at 20" in text and "match u16 0x50 0xffff at 22" in text
        assert "match u8 0x20 0xe0 at 1" in text  # ToS 0x20..0x3c under mask 0xfc: top 3 bits 001


@given(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255), st.integers(0, 255))
def test_range_blocks_cover_exactly_the_masked_range(lo, hi, care, x):
    blocks = classify.range_blocks(lo, hi, 8, care)
    inside = any(x & m == v for v, m in blocks)
    assert inside == (lo <= (x & care) <= hi)


@given(st.integers(0, 65535), st.integers(0, 65535))
def test_a_port_range_needs_at_most_two_blocks_per_bit(lo, hi):
    lo, hi = min(lo, hi), max(lo, hi)
    blocks = classify.range_blocks(lo, hi, 16)
    assert 1 <= len(blocks) <= 30
    assert sum(65536 - m for _, m in blocks) == hi - lo + 1  # disjoint: sizes add up


def test_rule_priority_orders_filters_and_classifiers_of_missing_flows_are_refused():
    up = [ServiceFlow(direction="upstream", ref=1), ServiceFlow(direction="upstream", ref=2)]
    cls = [classify.Classifier("upstream", "22[0]", ref=1, sf_ref=2, priority=5, protocol=17),
           classify.Classifier("upstream", "22[1]", ref=2, sf_ref=1, priority=200, protocol=6),
           classify.Classifier("upstream", "22[2]", ref=3, sf_ref=7, priority=250, protocol=6),
           classify.Classifier("upstream", "22[3]", ref=4, sf_ref=2, active=False),
           classify.Classifier("upstream", "22[4]", ref=5, sf_ref=2, dst_ports=(90, 80))]
    steering, refused = classify.steer({"upstream": up}, cls)
    assert [(s.classifier.path, s.prio, s.band) for s in steering] == [("22[1]", 1, 0), ("22[0]", 2, 1)]
    assert len(refused) == 3
    assert "22[2]" in refused[0] and "ServiceFlowRef 7" in refused[0]
    assert any("22[3]" in r and "inactive" in r for r in refused)
    assert any("22[4]" in r and "DstPortStart 90 > DstPortEnd 80" in r for r in refused)


# -- root: real queues, real packets ----------------------------------------------------------
def _udp_blast(src, dst, seconds, bps, payload, out):
    """Send UDP at ``bps`` (wire bits: payload + 42 B of headers) carrying the send time."""
    gap = (payload + 42) * 8 / bps
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        src.sendto(struct.pack("!d", time.time()).ljust(payload, b"\0"), dst)
        n += 1
        time.sleep(max(0.0, start + n * gap - time.monotonic()))  # pacing the source, not a synchronisation
    out["sent"] = n


def _udp_sink(sock, until, out):
    """(kernel receive time, send time, payload bytes): the kernel's stamp, so a reader
    starved of CPU for a moment does not add its lag to the measured queue delay."""
    got = []
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.settimeout(0.2)
    while time.monotonic() < until:
        try:
            data, anc, _, _ = sock.recvmsg(2048, 64)
        except TimeoutError:
            continue
        stamp = next((struct.unpack("qq", d[:16]) for lvl, typ, d in anc
                      if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS), None)
        received = stamp[0] + stamp[1] / 1e9 if stamp else time.time()
        got.append((received, struct.unpack("!d", data[:8])[0], len(data)))
    out["got"] = got


def _tcp_bulk(sock, until):
    chunk = b"x" * 65536
    try:
        while time.monotonic() < until:
            sock.send(chunk)
    except OSError:
        pass


def _tcp_sink(conn, until, out):
    got = []
    conn.settimeout(0.2)
    while time.monotonic() < until:
        try:
            data = conn.recv(65536)
        except TimeoutError:
            continue
        if not data:
            break
        got.append((time.monotonic(), len(data)))
    out["got"] = got


@pytest.mark.root
@pytest.mark.slow
def test_udp_to_the_classified_port_gets_the_voice_flow_and_tcp_bulk_the_primary(lab_factory, tmp_path):
    (tmp_path / "two.cm").write_bytes(encode(parse_text(CONFIG)))
    lab = lab_factory()
    applied = lab.boot(tmp_path, "two.cm")
    assert applied["status"] == "operational"

    # the kernel's queues and filters are the file's
    flows = [f for f in service_flows(parse_text(CONFIG)) if f.direction == "upstream"]
    classes = tcview.classes(lab, "rf")
    assert sorted(classes) == ["1:1", "1:2"]
    for classid, f in zip(("1:1", "1:2"), flows):
        assert classes[classid]["rate"] == classes[classid]["ceil"] == f.max_sustained_rate
        assert classes[classid]["burst"] == f.max_traffic_burst
        assert tcview.leaf(lab, "rf", classid) ["options"]["limit"] == f.buffer.target
    assert tcview.qdiscs(lab, "rf")[0]["options"]["default"] == "0x1"  # unclassified: the primary flow
    (flt,) = tcview.filters(lab, "rf")
    assert flt["flowid"] == "1:2"
    assert "00110000/00ff0000 at 8" in flt["matches"]  # IP protocol 17
    assert f"0000{VOICE_PORT:04x}/0000ffff at 20" in flt["matches"]  # destination port
    # the classifier of a flow the file never provisions is refused and logged
    assert any("22[1]" in r and "ServiceFlowRef 9" in r for r in applied["rejected"])
    assert "22[1]" in (lab.state_dir / "modem.log").read_text()
    # downstream: the second flow's class, fed by DSCP EF (ToS 0xb8 under mask 0xfc) from the server
    ds = tcview.classes(lab, "lan")
    assert ds["1:2"]["rate"] == 1e6 and tcview.leaf(lab, "lan", "1:2")["options"]["limit"] == 8192
    (ds_flt,) = tcview.filters(lab, "lan")
    assert ds_flt["flowid"] == "1:2"
    assert sorted(ds_flt["matches"]) == sorted(["0a0a0302/ffffffff at 12", "00b80000/00fc0000 at 0"])

    # traffic: UDP at 4x the voice rate to its port, TCP bulk at the same time
    seconds, settle = 5.0, 1.5
    with netns.entered(lab.ns("srv")):
        usink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        usink.bind((ADDR["srv"], VOICE_PORT))
        listener = socket.create_server((ADDR["srv"], 0))
    port = listener.getsockname()[1]
    with netns.entered(lab.ns("cpe")):
        usrc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        tsrc = socket.create_connection((ADDR["srv"], port), timeout=5)
    conn, _ = listener.accept()
    start = time.monotonic()
    until = start + seconds + 1.0
    wall = time.time() - start  # monotonic -> wall clock, for the kernel's receive stamps
    u_out, u_sent, t_out = {}, {}, {}
    window = (start + settle, start + seconds)
    threads = [threading.Thread(target=_udp_sink, args=(usink, until, u_out)),
               threading.Thread(target=_tcp_sink, args=(conn, until, t_out)),
               threading.Thread(target=_udp_blast, args=(usrc, (ADDR["srv"], VOICE_PORT), seconds, 1_024_000, 200, u_sent)),
               threading.Thread(target=_tcp_bulk, args=(tsrc, start + seconds))]
    sent, read_at = [], []
    with host_priority():  # the hosts' threads inherit it: a busy machine must not starve the sources
        for t in threads:
            t.start()
        # what each class sent in the steady window, counted by the kernel (frames incl. Ethernet header,
        # as htb counts them against the rate); a reader that falls behind cannot skew it
        for at in window:
            time.sleep(max(0.0, at - time.monotonic()))  # a timer: the window's edges, not a synchronisation
            sent.append({c: tcview.leaf(lab, "rf", c, stats=True)["bytes"] for c in ("1:1", "1:2")})
            read_at.append(time.monotonic())
        for t in threads:
            t.join(timeout=seconds + 10)
    for s in (usink, listener, usrc, tsrc, conn):
        s.close()

    span = read_at[1] - read_at[0]  # when the counters were read, however late
    rate = {c: (sent[1][c] - sent[0][c]) * 8 / span for c in ("1:1", "1:2")}
    assert abs(rate["1:2"] - 256_000) <= 0.05 * 256_000, rate  # the voice flow: UDP at 4x its rate
    assert abs(rate["1:1"] - 2e6) <= 0.05 * 2e6, rate  # the primary: TCP bulk fills it
    udp = [(r, s, n) for r, s, n in u_out["got"] if window[0] + wall <= r < window[1] + wall]
    assert len(udp) * 242 * 8 / (window[1] - window[0]) > 0.9 * 256_000, len(udp)  # what the class sent got through
    # the voice queue: 4 KiB at 256 kb/s is 128 ms (16 frames of 242 B fit: 121 ms); the
    # primary's 64 KiB would be seconds at this rate, or 262 ms at 2 Mb/s
    delay = statistics.median(r - s for r, s, _ in udp)
    assert 0.8 * 0.128 <= delay <= 1.15 * 0.128, delay
    assert sum(n for _, n in t_out["got"]) * 8 / seconds > 0.7 * 2e6  # the TCP bytes did arrive
    voice = tcview.leaf(lab, "rf", "1:2", stats=True)
    assert voice["drops"] > 0  # the small queue overflowed: the UDP excess was dropped there
