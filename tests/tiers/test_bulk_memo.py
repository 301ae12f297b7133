"""What a bulk build remembers between rows, and its manifest's secret fingerprints: every file is the plain
render of its row, encoded, whatever rows came before; warnings name their own row; the manifest's
fingerprint of a secret is salted per folder and tells nothing the files do not."""

import hashlib
import hmac
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hfcprov.config import decode
from hfcprov.config.lint import encode_checked
from hfcprov.tiers.bulk import build, read_manifest, secret_fingerprint
from hfcprov.tiers.templates import render_text, rendered_name, template_reads

SECRET = b"memo-shared-secret"

# A site folder whose tier reads some columns itself, some through an include, some through a macro
# imported with context, and none through a macro imported without context (it sees only its arguments).
SITE = {
    "tier.j2": (
        '{% import "_with.j2" as w with context %}{% from "_plain.j2" import flow %}'
        "Main {\n"
        '{% include "_common.j2" %}\n'
        "{{ w.cpe_line() }}\n"
        "{{ flow(1, up|default('1M')) }}\n"
        "{% if extra is defined %}    SnmpMibObject 1.3.6.1.2.1.1.6.0 String \"{{ extra }}\";\n{% endif %}"
        "}\n"
    ),
    "_common.j2": "    NetworkAccess {{ access|default(1) }};\n",
    "_with.j2": "{% macro cpe_line() %}    MaxCPE {{ cpe|default(2) }};{% endmacro %}",
    "_plain.j2": (
        "{% macro flow(ref, rate) %}    UsServiceFlow {\n        UsServiceFlowRef {{ ref }};\n"
        "        QosParamSetType 7;\n        MaxRateSustained {{ rate|bps }};\n    }\n"
        "    DsServiceFlow {\n        DsServiceFlowRef 2;\n        QosParamSetType 7;\n    }{% endmacro %}"
    ),
}


def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir(exist_ok=True)
    for name, text in SITE.items():
        (folder / name).write_text(text)
    return folder


def test_template_reads_counts_includes_and_context_imports_not_plain_imports(tmp_path):
    reads = template_reads(site(tmp_path) / "tier.j2")
    assert {"access", "cpe", "up", "extra"} <= reads
    assert "rate" not in reads and "ref" not in reads  # the plain macro's parameters, not the row's


row_values = st.fixed_dictionaries({
    "access": st.sampled_from([None, "0", "1"]),
    "cpe": st.sampled_from([None, "1", "3"]),
    "up": st.sampled_from([None, "1M", "2M", "2000000"]),
    "extra": st.sampled_from([None, "a", "b"]),
    "unused": st.sampled_from([None, "x", "y"]),  # read by nothing: rows differing only here share a file
})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(row_values, min_size=1, max_size=12))
def test_every_file_is_its_rows_plain_render_encoded(tmp_path, rows):
    """Rows render once per distinct set of the values their template reads and encode once per text: the
    bytes are still, row by row, what rendering that row alone and encoding it give."""
    tmp_path = Path(tempfile.mkdtemp(dir=tmp_path))  # one folder per example
    folder = site(tmp_path)
    header = ["mac", "access", "cpe", "up", "extra", "unused"]
    lines = [",".join(header)]
    for i, values in enumerate(rows):
        lines.append(",".join([f"0000000000{i:02x}"] + [values[h] or "" for h in header[1:]]))
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    summary = build(tmp_path / "m.csv", out, template=folder / "tier.j2", secret=SECRET)
    assert summary.failed == [] and summary.built == len(rows)
    for i, values in enumerate(rows):
        variables = {"mac": f"0000000000{i:02x}", **{k: v for k, v in values.items() if v is not None}}
        text = render_text(folder / "tier.j2", variables)
        expected, _ = encode_checked(text, "plain", SECRET)
        assert (out / f"0000000000{i:02x}.cm").read_bytes() == expected


def test_a_warning_names_its_own_rows_text_when_rows_share_a_file(tmp_path):
    # two flows with the same reference: config lint flags it in both rows, each naming its own text
    (tmp_path / "dup.j2").write_text(
        "Main {\n    NetworkAccess 1;\n"
        "    UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; }\n"
        "    UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; }\n"
        "    DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; }\n}\n")
    (tmp_path / "m.csv").write_text("mac\n000000000001\n000000000002\n")
    s = build(tmp_path / "m.csv", tmp_path / "out", template=tmp_path / "dup.j2", secret=SECRET)
    assert s.built == 2
    by_row = {where: message for where, message in s.warnings}
    assert "rendered for 000000000001" in by_row["m.csv line 2"]
    assert "rendered for 000000000002" in by_row["m.csv line 3"]
    assert rendered_name(tmp_path / "dup.j2", {"mac": "000000000002"}) == "dup.j2 rendered for 000000000002"


def test_a_column_named_like_a_template_global_is_a_value_like_any_other(tmp_path):
    (tmp_path / "g.j2").write_text("Main {\n    NetworkAccess 1;\n    MaxCPE {{ range }};\n"
                                   "    UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; }\n"
                                   "    DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; }\n}\n")
    (tmp_path / "m.csv").write_text("mac,range\n000000000001,3\n000000000002,5\n")
    build(tmp_path / "m.csv", tmp_path / "out", template=tmp_path / "g.j2")
    assert [decode((tmp_path / "out" / f"00000000000{i}.cm").read_bytes()).find("18")[0].value
            for i in (1, 2)] == [3, 5]


def test_the_manifest_fingerprints_secrets_with_a_salt_of_its_folder(tmp_path):
    inv = tmp_path / "m.csv"
    inv.write_text("mac,tier\n000000000001,res-50x5\n")
    one, two = tmp_path / "one", tmp_path / "two"
    build(inv, one, secret=SECRET)
    build(inv, two, secret=SECRET)
    data = json.loads((one / "manifest.json").read_text())
    salt = bytes.fromhex(data["salt"])
    assert len(salt) == 16 and salt != bytes.fromhex(json.loads((two / "manifest.json").read_text())["salt"])
    # the same secret in two folders: no input hash in common, so manifests do not tell equal secrets apart
    assert read_manifest(one)["000000000001.cm"].inputs != read_manifest(two)["000000000001.cm"].inputs
    # a salted HMAC keyed by the secret: no cheaper to test a guess against than the file's own CMTS MIC
    assert secret_fingerprint(SECRET, salt) == hmac.new(SECRET, b"hfcprov build manifest\0" + salt,
                                                        hashlib.sha256).hexdigest()
    assert secret_fingerprint(None, salt) == "none"
    assert SECRET.hex() not in (one / "manifest.json").read_text()
    # the salt stays with the folder: the next build is incremental
    again = build(inv, one, secret=SECRET)
    assert (again.built, again.unchanged) == (0, 1)
    assert json.loads((one / "manifest.json").read_text())["salt"] == data["salt"]


def test_a_manifest_from_before_salts_rebuilds_without_rewriting_equal_files(tmp_path):
    inv = tmp_path / "m.csv"
    inv.write_text("mac,tier\n000000000001,res-50x5\n")
    out = tmp_path / "out"
    build(inv, out, secret=SECRET)
    data = json.loads((out / "manifest.json").read_text())
    del data["salt"]
    (out / "manifest.json").write_text(json.dumps(data))
    inode = (out / "000000000001.cm").stat().st_ino
    s = build(inv, out, secret=SECRET)
    assert s.built == 1 and (out / "000000000001.cm").stat().st_ino == inode  # same bytes: not rewritten
    assert "salt" in json.loads((out / "manifest.json").read_text())


BAD_WHEN_ODD = ("Main {\n    NetworkAccess 1;\n    MaxCPE {{ '' if cpe == 'bad' else cpe }};\n"
                "    UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; }\n"
                "    DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; }\n}\n")


def test_a_row_that_fails_in_a_chunk_fails_alone_and_each_error_names_its_row(tmp_path):
    """Rows go through render, encode and write a chunk at a time: a row whose text cannot be read fails
    with its own name even when another row of the chunk renders the same text, and the rows around it
    are built."""
    (tmp_path / "t.j2").write_text(BAD_WHEN_ODD)
    (tmp_path / "m.csv").write_text("mac,cpe\n000000000001,2\n000000000002,bad\n000000000003,bad\n000000000004,3\n")
    s = build(tmp_path / "m.csv", tmp_path / "out", template=tmp_path / "t.j2", secret=SECRET)
    assert (s.built, [where for where, _ in s.failed]) == (2, ["m.csv line 3", "m.csv line 4"])
    assert "rendered for 000000000002" in s.failed[0][1] and "rendered for 000000000003" in s.failed[1][1]
    assert sorted(p.name for p in (tmp_path / "out").glob("*.cm")) == ["000000000001.cm", "000000000004.cm"]


def test_a_stop_at_a_bad_row_writes_nothing_after_it_in_its_chunk(tmp_path):
    (tmp_path / "t.j2").write_text(BAD_WHEN_ODD)
    (tmp_path / "m.csv").write_text("mac,cpe\n000000000001,2\n000000000002,bad\n000000000003,3\n")
    s = build(tmp_path / "m.csv", tmp_path / "out", template=tmp_path / "t.j2", secret=SECRET, keep_going=False)
    assert (s.built, len(s.failed), s.stopped, s.not_built) == (1, 1, True, 1)
    assert [p.name for p in (tmp_path / "out").glob("*.cm")] == ["000000000001.cm"]
    assert list(read_manifest(tmp_path / "out")) == ["000000000001.cm"]
