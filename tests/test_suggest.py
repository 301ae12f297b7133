from hypothesis import given
from hypothesis import strategies as st

from hfcprov.suggest import close_names, did_you_mean

TLVS = ["MaxRateSustained", "MaxTrafficBurst", "MinReservedRate", "TargetBuffer", "NetworkAccess"]


def test_a_typo_names_the_intended_word():
    assert did_you_mean("MaxRateSustaind", TLVS) == "; did you mean MaxRateSustained?"
    assert close_names("teir", ["mac", "tier", "ip"]) == ["tier"]
    assert close_names("targetbuffer", TLVS) == ["TargetBuffer"]  # case is not a typo


def test_nothing_close_gives_no_hint():
    assert did_you_mean("zzz", TLVS) == ""


@given(st.sampled_from(TLVS), st.integers(0, 30))
def test_one_dropped_letter_is_always_found(name, at):
    at %= len(name)
    assert name in close_names(name[:at] + name[at + 1 :], TLVS)
