"""Property tests of the unit parser: every quantity is parsed once at the edge, so it must be right."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hfcprov.errors import HfcprovError, UnitError
from hfcprov.units import (
    format_bytes,
    format_duration,
    format_rate,
    parse_bytes,
    parse_duration,
    parse_host_port,
    parse_link_rate,
    parse_port,
    parse_rate,
    parse_rtt,
)

RATE_SUFFIXES = {"": 1, "bps": 1, "k": 1e3, "K": 1e3, "kbps": 1e3, "M": 1e6, "Mbps": 1e6, "Mb/s": 1e6,
                 "Mbit/s": 1e6, "G": 1e9, "Gbps": 1e9}
SIZE_SUFFIXES = {"": 1, "B": 1, "K": 1024, "KB": 1024, "KiB": 1024, "k": 1024, "M": 1024**2, "MiB": 1024**2,
                 "G": 1024**3}
TIME_SUFFIXES = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


@pytest.mark.parametrize(
    "text, bps",
    [("5M", 5e6), ("5Mbps", 5e6), ("5 Mb/s", 5e6), ("5000000", 5e6), ("1.5G", 1.5e9), ("500k", 5e5), (25e6, 25e6)],
)
def test_rates_as_engineers_write_them(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    "text, n", [("64K", 65536), ("64KiB", 65536), ("64KB", 65536), ("65536", 65536), ("1.5M", 1572864), ("24576", 24576)]
)
def test_sizes_as_engineers_write_them(text, n):
    assert parse_bytes(text) == n
    assert isinstance(parse_bytes(text), int)


@pytest.mark.parametrize("text, s", [("40ms", 0.04), ("0.04s", 0.04), ("500us", 5e-4), ("2s", 2.0), ("100 ms", 0.1), ("0", 0.0), (2, 2.0)])
def test_durations_as_engineers_write_them(text, s):
    assert parse_duration(text) == pytest.approx(s)


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(sorted(RATE_SUFFIXES)))
def test_rate_integer_with_any_suffix(n, suffix):
    assert parse_rate(f"{n}{suffix}") == pytest.approx(n * RATE_SUFFIXES[suffix])


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(sorted(SIZE_SUFFIXES)))
def test_size_integer_with_any_suffix(n, suffix):
    assert parse_bytes(f"{n}{suffix}") == n * SIZE_SUFFIXES[suffix]


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(sorted(TIME_SUFFIXES)))
def test_duration_integer_with_any_suffix(n, suffix):
    assert parse_duration(f"{n}{suffix}") == pytest.approx(n * TIME_SUFFIXES[suffix])


@given(st.floats(min_value=0, max_value=1e12, allow_nan=False))
def test_rate_round_trips_through_its_own_format(bps):
    # format_rate keeps 6 significant digits
    assert parse_rate(format_rate(bps).replace(" ", "")) == pytest.approx(bps, rel=1e-5, abs=1e-3)


@given(st.integers(min_value=0, max_value=2**40))
def test_size_round_trips_through_its_own_format(n):
    text = format_bytes(n)
    assert parse_bytes(text.replace(" ", "")) == n


@given(st.floats(min_value=1e-6, max_value=1e4, allow_nan=False))
def test_duration_round_trips_through_its_own_format(s):
    assert parse_duration(format_duration(s).replace(" ", "")) == pytest.approx(s, rel=5e-3)


@given(st.text(max_size=12))
@example("1e400")
@example("1e400K")
@example("-5M")
@example("nan")
@example("inf")
@example("5MBps")
def test_any_text_parses_or_raises_one_unit_error(text):
    """Garbage never escapes as a traceback: it is a number >= 0 or a UnitError (an HfcprovError)."""
    for parse in (parse_rate, parse_bytes, parse_duration):
        try:
            value = parse(text)
        except UnitError as err:
            assert repr(text) in str(err) and "\n" not in str(err)
        else:
            assert math.isfinite(value) and value >= 0


@given(st.one_of(st.floats(), st.integers(min_value=-(10**400), max_value=10**400)))
def test_any_number_parses_or_raises_one_unit_error(x):
    for parse in (parse_rate, parse_bytes, parse_duration):
        try:
            value = parse(x)
        except HfcprovError:
            pass
        else:
            assert math.isfinite(value) and value >= 0


@pytest.mark.parametrize("bad", ["5X", "fast", "", "5 Mbps/s", "40 fortnights", "-1"])
def test_bad_units_name_the_text(bad):
    with pytest.raises(UnitError, match="bad"):
        parse_rate(bad)


def test_fractional_bytes_rejected():
    with pytest.raises(UnitError, match="whole number"):
        parse_bytes("1.5")


def test_zero_duration_reads_as_zero_seconds():
    # Point names show "rtt 0 s" for a campaign without added delay, not "0 us".
    assert format_duration(0) == "0 s"


@pytest.mark.parametrize("text, hint", [("40", "did you mean 40ms? (or 40s)"), (" 2.5 ", "did you mean 2.5ms?")])
def test_a_time_without_its_unit_is_refused_with_a_hint(text, hint):
    with pytest.raises(UnitError) as err:
        parse_duration(text)
    assert hint in str(err.value) and "needs its unit" in str(err.value)


@given(st.integers(min_value=1, max_value=10**6))
def test_any_bare_nonzero_time_text_is_refused(n):
    with pytest.raises(UnitError, match=f"did you mean {n}ms"):
        parse_duration(str(n))


def test_implausible_rtt_and_rate_are_refused():
    assert parse_rtt("10s") == 10.0 and parse_rtt("0") == 0.0
    with pytest.raises(UnitError, match=r"over 10 s\); did you mean 40ms\?"):
        parse_rtt("40s")
    assert parse_link_rate("1k") == 1000.0
    with pytest.raises(UnitError, match=r"under 1 kb/s\); did you mean 5M\?"):
        parse_link_rate("5")
    with pytest.raises(UnitError, match="plausible link rate"):
        parse_link_rate(0)


@pytest.mark.parametrize("text, expected", [
    ("127.0.0.1:69", ("127.0.0.1", 69)), ("modem.example", ("modem.example", 161)),
    ("[2001:db8::1]:1161", ("2001:db8::1", 1161)), ("2001:db8::1", ("2001:db8::1", 161)), (":65535", ("", 65535)),
])
def test_host_port(text, expected):
    assert parse_host_port(text, 161) == expected


@pytest.mark.parametrize("text", ["127.0.0.1:99999", "127.0.0.1:0", "h:-1", "h:x", "[::1]x"])
def test_ports_outside_1_to_65535_are_refused(text):
    with pytest.raises(UnitError, match="bad address"):
        parse_host_port(text, 69)


def test_port_zero_only_for_a_listener():
    assert parse_port("0", any_port=True) == 0
    with pytest.raises(UnitError, match="1..65535"):
        parse_port("0")
    assert parse_host_port("0.0.0.0:0", 69, any_port=True) == ("0.0.0.0", 0)


@pytest.mark.parametrize("yaml_text, message", [
    ("rtt: 30", "grid.rtt: bad duration '30': a time needs its unit: did you mean 30ms?"),
    ("rtt: [40ms, 100]", "grid.rtt[1]: bad duration '100': a time needs its unit: did you mean 100ms?"),
    ("rtt: 30s", "grid.rtt: bad RTT '30s'"),
    ("upstream_rate: 5", "grid.upstream_rate: bad rate 5: 5 b/s is not a plausible link rate"),
])
def test_campaign_yaml_values_go_through_the_same_parsers(yaml_text, message):
    from hfcprov.lab.spec import CampaignError, parse_campaign

    grid = {"upstream_rate": "2M", "buffer": "16KiB", "rtt": "40ms"}
    key = yaml_text.split(":")[0]
    lines = [f"  {k}: {v}" for k, v in grid.items() if k != key] + [f"  {yaml_text}"]
    with pytest.raises(CampaignError) as err:
        parse_campaign("grid:\n" + "\n".join(lines) + "\n")
    assert message in str(err.value)


def test_campaign_defaults_still_apply():
    from hfcprov.lab.spec import parse_campaign

    camp = parse_campaign("grid: {upstream_rate: 2M, buffer: 16KiB}\ntraffic: {warmup: 0}\n")
    assert camp.points()[0].rtt == pytest.approx(0.04)
