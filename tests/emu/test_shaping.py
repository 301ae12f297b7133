"""Queue planning from service flows: Buffer Control rules, rejection, tc arguments."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.emu.shaping import FRAME, NO_LIMIT, FlowRejected, ModemModel, plan
from hfcprov.model import BufferControl, ServiceFlow

MODEL = ModemModel(max_buffer=256 * 1024, default_buffer=48 * 1024)


def flow(**buf):
    return ServiceFlow(direction="upstream", ref=1, max_sustained_rate=2e6, path="24[0]", buffer=BufferControl(**buf))


def test_flow_becomes_an_htb_class_with_its_rate_and_burst_and_a_bfifo_of_its_target_buffer():
    p = plan(flow(target=16384), MODEL)
    klass, leaf = p.tc_args("rf", classid="1:2", handle="11:")
    assert klass[:10] == ["tc", "class", "replace", "dev", "rf", "parent", "1:", "classid", "1:2", "htb"]
    assert klass[klass.index("rate") + 1] == klass[klass.index("ceil") + 1] == "2000000bit"
    assert klass[klass.index("burst") + 1] == klass[klass.index("cburst") + 1] == "3044"
    assert leaf == ["tc", "qdisc", "replace", "dev", "rf", "parent", "1:2", "handle", "11:", "bfifo", "limit", "16384"]
    assert p.buffer == 16384


def test_peak_rate_caps_the_leaf_with_a_one_frame_bucket():
    f = ServiceFlow(direction="upstream", max_sustained_rate=2e6, peak_rate=5e6, buffer=BufferControl(target=9000))
    _, leaf = plan(f, MODEL).tc_args("rf")
    assert leaf[9:] == ["tbf", "rate", "5000000bit", "burst", str(FRAME + 64), "limit", "9000"]


def test_no_buffer_control_gets_the_modem_default():
    assert plan(flow(), MODEL).buffer == 48 * 1024


def test_target_is_clamped_into_min_max_and_to_what_the_modem_supports():
    assert plan(flow(minimum=8000, target=4000, maximum=20000), MODEL).buffer == 8000
    assert plan(flow(target=90000, maximum=20000), MODEL).buffer == 20000
    assert plan(flow(target=10 * 1024 * 1024), MODEL).buffer == 256 * 1024


def test_minimum_above_what_the_modem_supports_rejects_the_flow_with_the_reason():
    with pytest.raises(FlowRejected) as err:
        plan(flow(minimum=512 * 1024, target=600000), MODEL)
    msg = str(err.value)
    assert "24[0]" in msg and "MinimumBuffer 524288" in msg and "262144" in msg and "rejected" in msg


def test_rate_zero_means_no_rate_limit_only_a_byte_queue():
    p = plan(ServiceFlow(direction="downstream", max_sustained_rate=0, buffer=BufferControl(target=30000)), MODEL)
    assert p.rate_bps is None
    klass, leaf = p.tc_args("lan")
    assert klass[klass.index("rate") + 1] == NO_LIMIT
    assert leaf[9:] == ["bfifo", "limit", "30000"]


@given(st.one_of(st.none(), st.integers(0, 4 << 20)), st.one_of(st.none(), st.integers(0, 4 << 20)),
       st.one_of(st.none(), st.integers(0, 4 << 20)))
def test_buffer_is_inside_every_bound_or_the_flow_is_refused(lo, target, hi):
    try:
        p = plan(flow(minimum=lo, target=target, maximum=hi), MODEL)
    except FlowRejected:
        assert (lo is not None and lo > MODEL.max_buffer) or (lo is not None and hi is not None and lo > hi)
        return
    assert FRAME <= p.buffer <= max(MODEL.max_buffer, FRAME)
    if lo is not None:
        assert p.buffer >= lo
    if hi is not None and (lo is None or lo <= hi):
        assert p.buffer <= max(hi, FRAME)
