"""config lint: a valid config has no finding; the same config with one rule broken is flagged by exactly that
rule (hypothesis, over generated configs: flows, classifiers, PHS, aggregates with Low Latency, MESPs); the
issue's three cases; lines, byte offsets, sections; the same checks in encode, build and verify."""

import json
import subprocess
import sys

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hfcprov.config import ConfigTree, Tlv, content_items, encode, parse_text
from hfcprov.config.lint import (
    RULES,
    _encode_parsed,
    encode_checked,
    encode_checked_many,
    lint,
    lint_config,
    lint_items,
)
from hfcprov.config.text import render_text
from hfcprov.errors import HfcprovError

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def flow(code: int, ref: int | None, *, asf: int | None = None, mesp: int | None = None, rate: int = 10_000_000,
         min_rate: int | None = None, peak: int | None = None, buffer: tuple | None = None,
         burst: int | None = None) -> Tlv:
    """A service flow; an upstream one carries a Max Traffic Burst that lets the default profile's upstream
    carry its rate (100 ms of it) unless ``burst`` says otherwise (0: none, the DOCSIS default 3044 B)."""
    if burst is None and code == 24:
        burst = max(3044, rate // 80)
    kids = ([Tlv(1, ref)] if ref is not None else []) + [Tlv(6, 7), Tlv(8, rate)] + ([Tlv(9, burst)] if burst else [])
    if min_rate is not None:
        kids.append(Tlv(10, min_rate))
    if peak is not None:
        kids.append(Tlv(27, peak))
    if buffer is not None:
        kids.append(Tlv(35, None, [Tlv(k, v) for k, v in zip((1, 2, 3), buffer) if v is not None]))
    if asf is not None:
        kids.append(Tlv(36, asf))
    if mesp is not None:
        kids.append(Tlv(37, mesp))
    return Tlv(code, None, kids)


def classifier(code: int, ref: int | None, sf_ref: int | None) -> Tlv:
    kids = ([Tlv(1, ref)] if ref is not None else []) + ([Tlv(3, sf_ref)] if sf_ref is not None else [])
    return Tlv(code, None, kids + [Tlv(5, 64)])


@st.composite
def valid_configs(draw):
    """A config every rule accepts: unique references, each classifier and PHS rule naming what exists, each
    aggregate with members (a Low Latency one with exactly two, its LL flow one of them), rates and buffers
    in order, privacy on."""
    refs = iter(range(1, 1000))
    tlvs = [Tlv(3, 1), Tlv(18, draw(st.integers(1, 16)))]
    flows = {24: [], 25: []}
    mesps = [draw(st.integers(1, 200))] if draw(st.booleans()) else []
    tlvs += [Tlv(72, None, [Tlv(1, m)]) for m in mesps]
    asfs = {70: [], 71: []}
    for code, asf_code in ((24, 70), (25, 71)):
        for _ in range(draw(st.integers(1, 3))):
            ref = next(refs)
            rate = draw(st.integers(1_000_000, 100_000_000))
            lo = draw(st.integers(0, 65535))
            hi = lo + draw(st.integers(0, 65535))
            buffer = draw(st.sampled_from([None, (lo, None, hi), (lo, (lo + hi) // 2, hi), (None, lo, None)]))
            tlvs.append(flow(code, ref, rate=rate, min_rate=draw(st.sampled_from([None, rate // 2, rate])),
                             peak=draw(st.sampled_from([None, rate, rate * 2])), buffer=buffer,
                             mesp=draw(st.sampled_from([None, *mesps]))))
            flows[code].append(ref)
        if draw(st.booleans()) and len(flows[code]) >= 2:  # a Low Latency aggregate of the first two flows
            asf = next(refs)
            pair = flows[code][:2]
            for t in tlvs:
                if t.code == code and t.get(1) in pair:
                    t.children.append(Tlv(36, asf))
            ll = draw(st.sampled_from(pair))
            if draw(st.booleans()):  # the Immediate AQM where MULPI puts it: the aggregate's low-latency flow
                next(t for t in tlvs if t.code == code and t.get(1) == ll).children.append(Tlv(40, None, [Tlv(3, 2)]))
            tlvs.append(Tlv(asf_code, None, [Tlv(1, asf), Tlv(8, 50_000_000), Tlv(42, None, [Tlv(1, ll)])]))
            asfs[asf_code].append(asf)
    classifiers = []
    for code, sf_code in ((22, 24), (23, 25)):
        for _ in range(draw(st.integers(0, 3))):
            ref = next(refs)
            tlvs.append(classifier(code, ref, draw(st.sampled_from(flows[sf_code]))))
            classifiers.append(ref)
    if classifiers and draw(st.booleans()):
        tlvs.append(Tlv(26, None, [Tlv(1, draw(st.sampled_from(classifiers))),
                                   Tlv(3, draw(st.sampled_from(flows[24] + flows[25])))]))
    if draw(st.booleans()):
        tlvs += [Tlv(29, 1), Tlv(17, None, [Tlv(1, 10)])]
    order = draw(st.permutations(range(len(tlvs))))
    return ConfigTree([tlvs[i] for i in order]), {"flows": flows, "asfs": asfs, "classifiers": classifiers,
                                                   "mesps": mesps, "next": next(refs)}


def _first(tree: ConfigTree, code: int) -> Tlv:
    return next(t for t in tree.tlvs if t.code == code)


# rule -> how to break it in a valid config, touching nothing any other rule reads; None: not applicable
def _break(rule: str, tree: ConfigTree, facts: dict, draw) -> bool:
    new = 200  # above every reference a valid config drew (at most ~20), within ClassifierRef 1..255
    up, down = facts["flows"][24], facts["flows"][25]
    tlvs = tree.tlvs
    if rule == "sf-ref-missing":
        tlvs.append(flow(24, None))
    elif rule == "sf-ref-duplicate":
        tlvs.append(flow(25, draw(st.sampled_from(up + down))))
    elif rule == "classifier-ref-duplicate":
        if not facts["classifiers"]:
            return False
        tlvs.append(classifier(22, draw(st.sampled_from(facts["classifiers"])), up[0]))
    elif rule == "classifier-no-flow":
        tlvs.append(classifier(23, new, None))
    elif rule == "classifier-flow-missing":
        tlvs.append(classifier(22, new, draw(st.sampled_from([new + 1, *down]))))  # nowhere, or downstream
    elif rule == "phs-classifier-missing":
        tlvs.append(Tlv(26, None, [Tlv(1, 250), Tlv(3, up[0])]))
    elif rule == "phs-flow-missing":
        if not facts["classifiers"]:
            return False
        tlvs.append(Tlv(26, None, [Tlv(1, facts["classifiers"][0]), Tlv(3, new)]))
    elif rule == "asf-ref-duplicate":
        if not facts["asfs"][70]:
            return False
        tlvs.append(Tlv(70, None, [Tlv(1, facts["asfs"][70][0]), Tlv(8, 1_000_000)]))
    elif rule == "asf-missing":
        tlvs.append(flow(24, new, asf=new + 1))
    elif rule == "asf-no-members":
        tlvs.append(Tlv(71, None, [Tlv(1, new), Tlv(8, 1_000_000)]))
    elif rule == "lld-members":
        if not facts["asfs"][70]:
            return False
        tlvs.append(flow(24, new, asf=facts["asfs"][70][0]))  # a third member of a Low Latency aggregate
    elif rule == "iaqm-alone":  # a flow in no Low Latency aggregate asking for the Immediate AQM
        tlvs.append(Tlv(24, None, [Tlv(1, new), Tlv(6, 7), Tlv(8, 10_000_000), Tlv(9, 100_000),  # a burst that
                                   Tlv(40, None, [Tlv(3, 2)])]))  # does not cap the rate (burst-caps-rate)
    elif rule == "mesp-missing":
        tlvs.append(flow(25, new, mesp=255 if 255 not in facts["mesps"] else 254))
    elif rule == "rate-min-over-max":
        tlvs.append(flow(24, new, rate=1_000_000, min_rate=5_000_000))
    elif rule == "rate-peak-under-max":
        tlvs.append(flow(25, new, rate=5_000_000, peak=1_000_000))
    elif rule == "buffer-min-over-max":
        tlvs.append(flow(24, new, buffer=(9000, None, 3000)))
    elif rule == "buffer-target-clamped":
        tlvs.append(flow(24, new, buffer=(None, 70000, 60000)))
    elif rule == "required":
        tree.tlvs = [t for t in tlvs if t.code != 3]
    elif rule == "bpi-unused":
        tree.tlvs = [t for t in tlvs if t.code not in (17, 29)] + [Tlv(29, 0), Tlv(17, None, [Tlv(1, 10)])]
    elif rule == "bpi-conflict":
        tree.tlvs = [t for t in tlvs if t.code not in (17, 29)] + [Tlv(29, 0), Tlv(4, None, [Tlv(1, 1), Tlv(7, 1)])]
    elif rule == "burst-caps-rate":  # the DOCSIS default burst, 3044 B, at 50 Mb/s on DOCSIS 3.1's 2 ms MAPs
        tlvs.append(flow(24, new, rate=50_000_000, burst=0))
    elif rule == "rate-over-upstream":  # beyond one OFDMA channel's 664 Mb/s of frames
        tlvs.append(flow(24, new, rate=1_000_000_000, burst=12_500_000))
    elif rule == "emic-shared-43":
        tlvs.append(Tlv(43, None, [Tlv(8, b"\xff\xff\xff"), Tlv(6, None, [Tlv(1, 1), Tlv(2, b"\x10")]), Tlv(1, 7)]))
    else:
        return False  # mic, mta-delimiters and version have tests of their own
    return True


@SETTINGS
@given(valid_configs(), st.sampled_from(sorted(RULES)), st.data())
def test_a_valid_config_with_one_rule_broken_is_flagged_by_exactly_that_rule(config, rule, data):
    tree, facts = config
    assert lint(tree) == [] and lint_items(content_items(tree.tlvs)) == [], [str(f) for f in lint(tree)]
    assume(_break(rule, tree, facts, data.draw))
    found = {f.rule for f in lint(tree)}
    assert found == {rule}, [str(f) for f in lint(tree)]
    assert {f.rule for f in lint_items(content_items(tree.tlvs))} == {rule}  # the bulk path agrees
    # a text form of the same file names the same rule, on a line
    text_tree = parse_text(render_text(tree), "x.cfg", lines=True)
    from hfcprov.config.lint import locate
    located = locate(lint(text_tree), text_tree, "x.cfg")
    assert {f.rule for f in located} == {rule}
    assert all(f.line is not None for f in located if f.at)


ISSUE = """Main {
  NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 1000000; }
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 1000000;
                  MinReservedRate 5000000; }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; }
  UsPacketClass { ClassifierRef 1; ServiceFlowRef 9; RulePriority 64; }
}
"""


def test_the_issues_three_cases_each_flagged_with_line_path_and_section(tmp_path):
    src = tmp_path / "modem.cfg"
    src.write_text(ISSUE)
    found = lint_config(src)
    assert [(f.rule, f.line, f.path) for f in found] == [
        ("sf-ref-duplicate", 4, "24.1"), ("rate-min-over-max", 5, "24.10"), ("classifier-flow-missing", 7, "22.3")]
    assert str(found[1]).startswith(f"{src}:5, TLV 24.10: service flow 24[1] (ref 1): MinReservedRate 5000000 exceeds")
    assert found[1].section == "MULPIv3.0-I24 Annex C.2.2.7.4" and "C.2.1.4.3" in str(found[2])
    binary = tmp_path / "modem.cm"
    binary.write_bytes(encode(parse_text(ISSUE), b"secret"))
    by_offset = lint_config(binary)
    assert [f.rule for f in by_offset] == [f.rule for f in found]
    data = binary.read_bytes()
    for f in by_offset:  # each offset is the TLV the path names
        assert data[f.offset] == int(f.path.rsplit(".", 1)[1])


def test_mic_version_and_mta_rules(tmp_path):
    bare = tmp_path / "bare.cm"
    bare.write_bytes(encode(parse_text("Main { NetworkAccess 1; ClassOfService { ClassID 1; } }")))
    assert [f.message for f in lint_config(bare)] == ["no CMTS MIC (TLV 7): a CMTS refuses the modem's registration"]
    tree = parse_text("Main { NetworkAccess 1; ClassOfService { ClassID 1; } LowLatencyDisable 1;"
                      " UsPacketClass { ClassifierRef 1; ServiceFlowId 7; } }")
    assert lint(tree) == []
    assert [(f.rule, f.path) for f in lint(tree, version="3.0")] == [("version", "91")]
    assert {f.path for f in lint(tree, version="1.0")} == {"91", "22"}
    assert lint(tree, version="3.1") == []
    mta = parse_text("Main { MtaConfigDelimiter 1; SnmpMibObject 1.3.6.1.2.1.1.4.0 Integer 1; }")
    assert [f.rule for f in lint(mta)] == ["mta-delimiters"]


def test_encode_warns_and_refuses_with_strict_build_and_verify_too(tmp_path):
    from hfcprov.tiers.bulk import build

    src = tmp_path / "modem.cfg"
    src.write_text(ISSUE)
    key = tmp_path / "key"
    key.write_text("secret")
    key.chmod(0o600)  # a secret others can read is warned about too: here only the lint findings count
    run = [sys.executable, "-m", "hfcprov", "config", "encode", str(src), "--secret-file", str(key),
           "-o", str(tmp_path / "out.cm")]
    ok = subprocess.run(run, capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stderr.count("hfcprov: warning:") == 3 and "rate-min-over-max" in ok.stderr
    strict = subprocess.run(run[:-2] + ["-o", str(tmp_path / "strict.cm"), "--strict"], capture_output=True, text=True)
    assert strict.returncode == 1 and not (tmp_path / "strict.cm").exists() and "Traceback" not in strict.stderr
    lint_run = subprocess.run([sys.executable, "-m", "hfcprov", "config", "lint", str(src), "--json"],
                              capture_output=True, text=True)
    assert lint_run.returncode == 1 and [f["rule"] for f in json.loads(lint_run.stdout)] == [
        "sf-ref-duplicate", "rate-min-over-max", "classifier-flow-missing"]
    verify = subprocess.run([sys.executable, "-m", "hfcprov", "config", "verify", str(tmp_path / "out.cm"),
                             "--secret-file", str(key)], capture_output=True, text=True)
    assert verify.returncode == 0 and verify.stderr.count("hfcprov: warning:") == 3
    verify_strict = subprocess.run(verify.args + ["--strict"], capture_output=True, text=True)
    assert verify_strict.returncode == 1
    # build: a template that repeats a mistake across an inventory says so per row
    template = tmp_path / "t.j2"
    template.write_text(ISSUE)
    inventory = tmp_path / "modems.csv"
    inventory.write_text("mac\n001122334455\n001122334466\n")
    summary = build(inventory, tmp_path / "built", template)
    assert summary.built == 2 and len(summary.warnings) == 6 and not summary.failed
    strict_summary = build(inventory, tmp_path / "strict-built", template, lint_strict=True)
    assert len(strict_summary.failed) == 2 and strict_summary.built == 0


def test_encode_checked_lints_the_bulk_path_and_the_whole_parse_alike():
    data, problems = encode_checked(ISSUE, "a.cfg", b"k")
    assert data == encode(parse_text(ISSUE), b"k")
    assert [(p.rule, p.line) for p in problems] == [("sf-ref-duplicate", 4), ("rate-min-over-max", 5),
                                                    ("classifier-flow-missing", 7)]
    warned = encode_checked("Main { NetworkAccess 1; GenericTLV TlvCode 3 TlvLength 2 TlvValue 0x0001; }", "b.cfg")[1]
    assert "written as given" in str(warned[0]) and warned[0].line == 1


GOOD = "Main { NetworkAccess 1; MaxCPE 3; }\n"
POOL = [
    GOOD,
    GOOD.replace("3", "4"),
    ISSUE,  # findings
    ("Main { NetworkAccess 1; UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; "
     "MaxRateSustained 50000000; } }\n"),  # a warning-severity finding (the burst caps the rate)
    "Main { NetworkAccess 1; MaxCPE ; }\n",  # a syntax error
    "Main { NetworkAccess 1; NoSuchTlv 3; }\n",  # an unknown name
    "Main { NetworkAccess 1; GenericTLV TlvCode 3 TlvLength 2 TlvValue 0x0001; }\n",  # a reading warning
    "NetworkAccess: 1\nMaxCPE: 2\n",  # YAML: the whole parse
    '{"NetworkAccess": 1}',  # JSON: the whole parse
]


def _outcome(text, source, secret, plant):
    """The whole parse's result (the path that reads any form), or its error as (type, message)."""
    try:
        return _encode_parsed(text, source, secret, False, None, None, None, True, plant)
    except HfcprovError as err:
        return (type(err), str(err))


@settings(max_examples=60, deadline=None)
@given(picks=st.lists(st.tuples(st.integers(0, len(POOL) - 1), st.sampled_from([None, b"k", b"other"]),
                                st.sampled_from(["a.cfg", "b.cfg"])), max_size=8),
       plant=st.booleans())
def test_encode_checked_many_gives_each_text_what_the_whole_parse_gives_it(picks, plant):
    """Many texts a stage at a time (a build's chunk, and encode_checked's one): each result is the text's
    own, file and problems (their lines and the source they name), or the error, as the whole parse of that
    text alone gives them."""
    jobs = [(POOL[k], source, secret) for k, secret, source in picks]
    many = encode_checked_many(jobs, plant=plant)
    assert len(many) == len(jobs)
    for (text, source, secret), got in zip(jobs, many):
        want = _outcome(text, source, secret, plant)
        if isinstance(got, HfcprovError):
            got = (type(got), str(got))
        else:
            got = (got[0], [(str(p), getattr(p, "line", None)) for p in got[1]])
            want = (want[0], [(str(p), getattr(p, "line", None)) for p in want[1]]) if not isinstance(want[0], type) \
                else want
        assert got == want


BURST = """Main {
  NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 50000000; }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 200000000; }
}
"""


def test_a_burst_that_caps_the_tier_is_a_warning_that_strict_leaves_a_warning(tmp_path):
    """The DOCSIS default Max Traffic Burst (3044 B) lets a 50 Mb/s upstream flow carry about 12 Mb/s on a
    request-grant upstream with 2 ms MAPs (the CMTS grants at most the burst per MAP): a CMTS accepts the file,
    so lint says it as a warning, on the line of the flow, naming the profile, and --strict does not refuse it."""
    src = tmp_path / "tier.cfg"
    src.write_text(BURST)
    (finding,) = lint_config(src)
    assert (finding.rule, finding.severity, finding.line, finding.path) == ("burst-caps-rate", "warning", 3, "24.9")
    assert "docsis3.1's" in finding.message and "at least 26000 B" in finding.message
    assert "[burst-caps-rate, warning;" in str(finding)
    # the profile decides: DOCSIS 3.0's SC-QAM MAPs cap it too; a burst of two MAPs at the rate does not
    assert [f.rule for f in lint_config(src, version="3.0")] == ["burst-caps-rate"]
    fitted = tmp_path / "fitted.cfg"
    fitted.write_text(BURST.replace("MaxRateSustained 50000000;", "MaxRateSustained 50000000; MaxTrafficBurst 26000;"))
    assert lint_config(fitted) == [] and lint_config(fitted, profile="docsis3.1:map_interval=1ms") == []
    lint_run = subprocess.run([sys.executable, "-m", "hfcprov", "config", "lint", str(src), "--json"],
                              capture_output=True, text=True)
    assert lint_run.returncode == 0, lint_run.stderr
    assert [(f["rule"], f["severity"]) for f in json.loads(lint_run.stdout)] == [("burst-caps-rate", "warning")]
    bad = subprocess.run([sys.executable, "-m", "hfcprov", "config", "lint", str(src), "--profile", "docsis9"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "unknown modem profile" in bad.stderr and "Traceback" not in bad.stderr
    # verify --strict (the plant rules run) keeps it a warning; a one-file encode leaves it to lint (its imports)
    (tmp_path / "secret").write_text("s3cret\n")
    (tmp_path / "secret").chmod(0o600)  # only the lint findings count here (an open secret file is warned about)
    encoded = subprocess.run([sys.executable, "-m", "hfcprov", "config", "encode", str(src), "--strict",
                              "--secret-file", str(tmp_path / "secret"), "-o", str(tmp_path / "tier.cm")],
                             capture_output=True, text=True)
    assert encoded.returncode == 0 and "warning" not in encoded.stderr, encoded.stderr
    strict = subprocess.run([sys.executable, "-m", "hfcprov", "config", "verify", str(tmp_path / "tier.cm"),
                             "--strict", "--secret-file", str(tmp_path / "secret")], capture_output=True, text=True)
    assert strict.returncode == 0, strict.stderr
    assert strict.stderr.count("hfcprov: warning:") == 1 and "burst-caps-rate, warning" in strict.stderr
    from hfcprov.tiers.bulk import build

    template = tmp_path / "t.j2"
    template.write_text(BURST)
    inventory = tmp_path / "modems.csv"
    inventory.write_text("mac\n001122334455\n")
    summary = build(inventory, tmp_path / "built", template, lint_strict=True)
    assert summary.built == 1 and not summary.failed and len(summary.warnings) == 1
