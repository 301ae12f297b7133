"""The jinja2 environment: StrictUndefined, unit filters, includes, errors naming template, line and variable."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hfcprov.tiers.templates import SHIPPED, TemplateError, render_text, template_digest

MAC = {"mac": "001122aabbcc"}


def test_every_shipped_tier_renders_with_defaults():
    tiers = sorted(p for p in SHIPPED.glob("*.j2") if not p.name.startswith("_"))
    assert len(tiers) >= 6
    for t in tiers:
        text = render_text(t, MAC)
        assert text.lstrip().startswith("Main {") and "NetworkAccess 1;" in text


def test_filters_turn_engineer_units_into_tlv_integers(tmp_path):
    t = tmp_path / "t.j2"
    t.write_text("{{ r|bps }} {{ b|bytes }} {{ l|us }} {{ mac|mac_colon }} {{ advise_buffer('5M', '40ms') }}")
    out = render_text(t, {"r": "5Mbps", "b": "64KiB", "l": "10ms", "mac": "001122aabbcc"})
    assert out == "5000000 65536 10000 00:11:22:aa:bb:cc 32768"


def test_remembered_filters_still_tell_values_apart(tmp_path):
    """Filter results are remembered across renders; a bool is still refused after 1 was converted,
    and a list still gets the filter's own error."""
    t = tmp_path / "t.j2"
    t.write_text("{{ r|bps }} {{ b|bytes }}")
    assert render_text(t, {"r": 1, "b": 1}) == "1 1"
    assert render_text(t, {"r": "2M", "b": "2K"}) == "2000000 2048"
    with pytest.raises(TemplateError, match="bad rate True"):
        render_text(t, {"r": True, "b": 1})
    with pytest.raises(TemplateError, match=r"bad size \['1'\]"):
        render_text(t, {"r": 1, "b": ["1"]})


def test_overrides_reach_the_text():
    text = render_text("res-100x10", {**MAC, "us_rate": "12M", "us_buffer": "48K", "max_cpe": 2})
    assert "MaxRateSustained 12000000;" in text and "TargetBuffer 49152;" in text and "MaxCPE 2;" in text


def test_undefined_variable_names_template_line_and_variable(tmp_path):
    t = tmp_path / "tier.j2"
    t.write_text("Main {\n  NetworkAccess 1;\n  MaxCPE {{ cpe_limit }};\n}\n")
    with pytest.raises(TemplateError) as err:
        render_text(t, MAC)
    msg = str(err.value)
    assert "tier.j2 line 3" in msg and "cpe_limit" in msg and "\n" not in msg


def test_undefined_inside_an_included_template_names_that_template(tmp_path):
    (tmp_path / "_part.j2").write_text("\n\nMaxCPE {{ missing_var }};\n")
    t = tmp_path / "tier.j2"
    t.write_text('Main {\n{% include "_part.j2" %}\n}\n')
    with pytest.raises(TemplateError, match=r"_part\.j2 line 3: undefined variable: 'missing_var'"):
        render_text(t, MAC)


def test_syntax_error_names_line(tmp_path):
    t = tmp_path / "bad.j2"
    t.write_text("Main {\n  MaxCPE {{ max_cpe \n}\n")
    with pytest.raises(TemplateError, match=r"bad\.j2 line \d+: template syntax error"):
        render_text(t, MAC)


def test_bad_unit_in_a_variable_names_line_and_value(tmp_path):
    with pytest.raises(TemplateError) as err:
        render_text("res-50x5", {**MAC, "us_rate": "fast"})
    assert "bad rate 'fast'" in str(err.value) and ".j2 line" in str(err.value)


def test_unknown_template_lists_shipped_tiers():
    with pytest.raises(TemplateError, match="res-100x10"):
        render_text("no-such-tier", MAC)


def test_site_template_includes_the_shipped_common_block(tmp_path):
    t = tmp_path / "site.j2"
    t.write_text('Main {\n{% include "_common.j2" %}\n}\n')
    assert "MaxCPE 4;" in render_text(t, MAC)


def test_digest_follows_includes(tmp_path):
    (tmp_path / "_part.j2").write_text("MaxCPE 1;\n")
    t = tmp_path / "tier.j2"
    t.write_text('Main {\n{% include "_part.j2" %}\n}\n')
    before = template_digest(t)
    assert template_digest(t) == before
    (tmp_path / "_part.j2").write_text("MaxCPE 2;\n")
    assert template_digest(t) != before


def test_none_means_tier_default_but_zero_is_a_value():
    text = render_text("res-100x10", {**MAC, "us_rate": None, "network_access": 0, "max_cpe": None})
    assert "MaxRateSustained 10000000;" in text  # the tier's upstream default
    assert "NetworkAccess 0;" in text and "MaxCPE 4;" in text


def test_template_reads_follows_includes_and_gives_up_on_dynamic_ones(tmp_path):
    from hfcprov.tiers.templates import template_reads

    (tmp_path / "_base.j2").write_text("Main { MaxCPE {{ cpe }}; {{ body }} }\n")
    (tmp_path / "tier.j2").write_text('{% set body = "" %}{% include "_base.j2" %} {{ us_rate|bps }}\n')
    (tmp_path / "dyn.j2").write_text("{% include which %}\n")
    (tmp_path / "broken.j2").write_text("{% if %}\n")
    assert template_reads(tmp_path / "tier.j2") == {"cpe", "body", "us_rate"}
    assert template_reads(tmp_path / "dyn.j2") is None  # which file it reads depends on the row
    assert template_reads(tmp_path / "broken.j2") is None  # the render will report the syntax error


RESIDENTIAL = ("res-50x5", "res-100x10", "res-300x20", "res-1000x50")
overrides = st.fixed_dictionaries({}, optional={
    "us_rate": st.sampled_from(["3M", "12Mbps", "750k", "fast"]), "ds_rate": st.sampled_from(["40M", "1G", "0"]),
    "us_burst": st.sampled_from(["10K", "3044"]), "ds_burst": st.sampled_from(["100K", "1MiB"]),
    "us_buffer": st.sampled_from(["48K", "0"]), "ds_buffer": st.sampled_from(["1M", "9"]),
    "us_peak": st.sampled_from(["20M", "", None]), "ds_peak": st.sampled_from(["300M", None]),
    "max_cpe": st.sampled_from([2, "16"]), "privacy": st.sampled_from([0, 1]), "network_access": st.just(0),
    "rtt": st.sampled_from(["100ms", "5ms", "bad"]), "aqm": st.sampled_from(["docsis-pie", "lld", "none", None]),
    "profile": st.sampled_from(["docsis3.1", "docsis3.0-4ch", "docsis3.1-highsplit", "nonsense", None]),
    "sw_admin_status": st.just(3), "snmp_objects": st.sampled_from(['1.3.6.1.2.1.1.6.0 String "x"', "a|b", ""]),
})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tier=st.sampled_from(RESIDENTIAL), row=overrides)
def test_residential_tiers_render_what_the_flows_macros_render(tmp_path, tier, row):
    """_residential.j2 writes the flows out for speed; _flows.j2's residential macro (upstream, downstream,
    _common.j2) is the reference: the same text for every row, and an error wherever it has one."""
    import re

    us, ds, ub, db = re.search(r'= "([^"]+)", "([^"]+)", "([^"]+)", "([^"]+)" %}',
                               (SHIPPED / f"{tier}.j2").read_text()).groups()
    reference = tmp_path / f"ref-{tier}.j2"
    reference.write_text(f'{{% import "_flows.j2" as sf with context %}}\n'
                         f'{{{{ sf.residential("{us}", "{ds}", "{ub}", "{db}") }}}}\n')

    def rendered(template):
        try:
            return render_text(template, {**MAC, **row})
        except TemplateError:
            return TemplateError

    assert rendered(tier) == rendered(reference)


@pytest.mark.parametrize("tier, row", [
    ("lld-100x10", {"profile": 1}),  # a YAML inventory's number where a profile name belongs
    ("res-100x10", {"snmp_objects": 5}),  # a number where a list or "OID TYPE VALUE|..." belongs
])
def test_a_value_of_the_wrong_kind_is_one_line_naming_the_template(tier, row):
    with pytest.raises(TemplateError) as err:
        render_text(SHIPPED / f"{tier}.j2", {"mac": "001122334455", **row})
    message = str(err.value)
    assert "\n" not in message and ".j2 line " in message, message
