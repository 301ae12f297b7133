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
    parse_rate,
)

RATE_SUFFIXES = {"": 1, "bps": 1, "k": 1e3, "K": 1e3, "kbps": 1e3, "M": 1e6, "Mbps": 1e6, "Mb/s": 1e6,
                 "Mbit/s": 1e6, "G": 1e9, "Gbps": 1e9}
SIZE_SUFFIXES = {"": 1, "B": 1, "K": 1024, "KB": 1024, "KiB": 1024, "k": 1024, "M": 1024**2, "MiB": 1024**2,
                 "G": 1024**3}
TIME_SUFFIXES = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


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


@pytest.mark.parametrize("text, s", [("40ms", 0.04), ("0.04s", 0.04), ("500us", 5e-4), ("2", 2.0), ("100 ms", 0.1)])
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
