"""Bulk builds over real files: every shipped tier, decoded back, values where the inventory put them."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hfcprov.tiers import template_for
from hfcprov.tiers.bulk import BuildError, _template_for, build, read_manifest
from hfcprov.tiers.inventory import InventoryError
from hfcprov.tiers.templates import SHIPPED, TemplateError
from hfcprov.config import decode
from hfcprov.model import service_flows

SECRET = b"lab-shared-secret"
TIERS = sorted(p.stem for p in SHIPPED.glob("*.j2") if not p.name.startswith("_"))


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def flows_by_dir(data: bytes, secret=SECRET):
    flows = service_flows(decode(data, secret))
    return [f for f in flows if f.direction == "upstream"], [f for f in flows if f.direction == "downstream"]


@pytest.fixture
def inventory(tmp_path):
    rows = ["mac,tier,us_rate,ds_rate,us_buffer,ds_buffer,max_cpe"]
    for i, tier in enumerate(TIERS, 1):
        rows.append(f"00:10:95:00:00:{i:02x},{tier},{i + 1}M,{10 * i}Mbps,{8 * i}K,{100 * i}KiB,{i}")
    return write(tmp_path / "modems.csv", "\n".join(rows) + "\n")


def test_every_shipped_tier_builds_and_decodes_to_the_inventory_values(tmp_path, inventory):
    assert {"res-50x5", "res-100x10", "res-300x20", "res-1000x50", "business-voice", "docsis10-cos"} <= set(TIERS)
    out = tmp_path / "out"
    summary = build(inventory, out, secret=SECRET)
    assert summary.failed == [] and summary.built == len(TIERS)
    for i, tier in enumerate(TIERS, 1):
        data = (out / f"00109500000{i:x}.cm").read_bytes()
        up, down = flows_by_dir(data)  # decode verifies the CM and CMTS MICs with the secret
        if tier == "docsis10-cos":
            # DOCSIS 1.0 class of service: rates only, no Buffer Control
            assert up[0].max_sustained_rate == (i + 1) * 1e6 and down[0].max_sustained_rate == 10 * i * 1e6
            continue
        assert up[0].max_sustained_rate == (i + 1) * 1e6
        assert up[0].buffer.target == 8 * i * 1024
        assert down[0].max_sustained_rate == 10 * i * 1e6
        assert down[0].buffer.target == 100 * i * 1024
        if tier == "business-voice":
            ugs = [f for f in up if f.scheduling_type == 6]
            assert len(ugs) == 1 and ugs[0].buffer.target == 4096
        tree = decode(data, SECRET)
        assert tree.find("18")[0].value == i  # MaxCPE override


def test_defaults_come_from_the_tier_and_the_advisor(tmp_path):
    inv = write(tmp_path / "m.yaml", "- {mac: '00:00:00:00:00:01', tier: res-100x10}\n")
    out = tmp_path / "out"
    build(inv, out)
    up, down = flows_by_dir((out / "000000000001.cm").read_bytes(), None)
    assert up[0].max_sustained_rate == 10e6 and down[0].max_sustained_rate == 100e6
    assert up[0].buffer.target == 65536  # advisor: the ladder size holding the BDP of 10 Mb/s at 40 ms


def test_manifest_lists_every_file_with_its_hash(tmp_path, inventory):
    import hashlib

    out = tmp_path / "out"
    build(inventory, out, secret=SECRET)
    data = json.loads((out / "manifest.json").read_text())
    assert len(data["entries"]) == len(TIERS)
    for e in data["entries"]:
        body = (out / e["file"]).read_bytes()
        assert e["sha256"] == hashlib.sha256(body).hexdigest() and e["size"] == len(body)
        assert e["tier"] in TIERS
    csv_lines = (out / "manifest.csv").read_text().splitlines()
    assert csv_lines[0] == "mac,file,sha256,size,tier" and len(csv_lines) == len(TIERS) + 1
    assert SECRET.decode() not in (out / "manifest.json").read_text()


def test_rebuild_is_incremental(tmp_path):
    tdir = tmp_path / "tiers"
    shutil.copytree(SHIPPED, tdir)
    inv = write(tmp_path / "m.csv", "mac,tier,us_rate\n000000000001,res-50x5,5M\n000000000002,res-50x5,6M\n")
    out = tmp_path / "out"
    assert build(inv, out, template=tdir, secret=SECRET).built == 2
    stat = {p.name: p.stat().st_ino for p in out.glob("*.cm")}

    again = build(inv, out, template=tdir, secret=SECRET)
    assert (again.built, again.unchanged) == (0, 2)
    assert {p.name: p.stat().st_ino for p in out.glob("*.cm")} == stat  # not rewritten

    write(inv, "mac,tier,us_rate\n000000000001,res-50x5,5M\n000000000002,res-50x5,7M\n")
    one = build(inv, out, template=tdir, secret=SECRET)
    assert (one.built, one.unchanged) == (1, 1)
    assert (out / "000000000001.cm").stat().st_ino == stat["000000000001.cm"]

    # an included template changes -> every file that uses it is rebuilt
    common = tdir / "_common.j2"
    common.write_text(common.read_text().replace("default(4)", "default(5)"))
    assert build(inv, out, template=tdir, secret=SECRET).built == 2
    assert decode((out / "000000000001.cm").read_bytes()).find("18")[0].value == 5

    # a new secret changes the CMTS MIC -> rebuilt
    assert build(inv, out, template=tdir, secret=b"another").built == 2

    # a file damaged on disk is rebuilt even though its inputs did not change
    (out / "000000000002.cm").write_bytes(b"junk")
    fixed = build(inv, out, template=tdir, secret=b"another")
    assert (fixed.built, fixed.unchanged) == (1, 1)
    decode((out / "000000000002.cm").read_bytes(), b"another")


def test_bad_rows_are_named_and_skipped_and_nothing_built_is_lost(tmp_path):
    out = tmp_path / "out"
    inv = write(tmp_path / "m.csv", "mac,tier,us_rate\n000000000001,res-50x5,5M\n000000000002,res-50x5,6M\n")
    build(inv, out)
    good = (out / "000000000002.cm").read_bytes()
    write(inv, "mac,tier,us_rate\n"
               "000000000001,res-50x5,5M\n"
               "000000000002,res-50x5,six\n"  # now bad: the old file must stay
               "nonsense,res-50x5,5M\n"
               "000000000004,res-9000x1,5M\n"
               "000000000005,res-50x5,8M\n")
    s = build(inv, out)
    messages = [m for _, m in s.failed]
    assert any(m.startswith("m.csv line 3: ") and "bad rate 'six'" in m and ".j2 line" in m for m in messages)
    assert any(m.startswith("m.csv line 4: bad MAC") for m in messages)
    assert any(m.startswith("m.csv line 5: ") and "res-9000x1" in m for m in messages)
    assert len(messages) == 3
    assert (out / "000000000005.cm").exists()
    assert (out / "000000000002.cm").read_bytes() == good
    assert "000000000002.cm" in read_manifest(out)

    with pytest.raises(BuildError, match="m.csv line 3"):
        build(inv, out, strict=True)
    assert (out / "000000000005.cm").exists() and (out / "000000000002.cm").read_bytes() == good


def test_parallel_build_gives_the_same_bytes(tmp_path):
    rows = ["mac,tier,us_rate"] + [f"0000000001{i:02x},res-100x10,{i % 7 + 1}M" for i in range(40)]
    inv = write(tmp_path / "m.csv", "\n".join(rows) + "\n")
    build(inv, tmp_path / "one", secret=SECRET, jobs=1)
    s = build(inv, tmp_path / "two", secret=SECRET, jobs=2)
    assert s.built == 40
    for p in (tmp_path / "one").glob("*.cm"):
        assert (tmp_path / "two" / p.name).read_bytes() == p.read_bytes()
    assert (tmp_path / "one" / "manifest.csv").read_text() == (tmp_path / "two" / "manifest.csv").read_text()


def test_parallel_build_lets_its_workers_exit(tmp_path, monkeypatch):
    """A finished build tells its workers to exit instead of killing them: killing one that holds the
    task queue's lock can leave the pool's join waiting forever (a bench's site build once hung so)."""
    import multiprocessing.pool

    codes = []
    join = multiprocessing.pool.Pool.join

    def recording_join(self):
        join(self)
        codes.extend(p.exitcode for p in self._pool)

    monkeypatch.setattr(multiprocessing.pool.Pool, "join", recording_join)
    rows = ["mac,tier,us_rate"] + [f"0000000001{i:02x},res-100x10,{i % 7 + 1}M" for i in range(40)]
    s = build(write(tmp_path / "m.csv", "\n".join(rows) + "\n"), tmp_path / "out", secret=SECRET, jobs=2)
    assert s.built == 40
    assert codes == [0, 0]  # both workers joined, each ended by its own exit (not -SIGTERM)


def test_file_pattern_and_single_template(tmp_path):
    t = write(tmp_path / "site.j2", 'Main {\n{% include "_common.j2" %}\n}\n')
    inv = write(tmp_path / "m.csv", "mac,site\n000000000001,north\n")
    build(inv, tmp_path / "out", template=t, pattern="{site}-{mac}.bin")
    assert (tmp_path / "out" / "north-000000000001.bin").exists()
    s = build(inv, tmp_path / "out2", template=t, pattern="{region}.bin")
    assert "names {region}" in s.failed[0][1]
    s = build(inv, tmp_path / "out3", template=t, pattern="../{mac}")
    assert "not a plain file name" in s.failed[0][1]


def test_cli_build_summary_bad_row_and_strict(tmp_path):
    inv = write(tmp_path / "m.csv", "mac,tier\n000000000001,res-50x5\nxx,res-50x5\n")
    secret = write(tmp_path / "secret", SECRET.decode() + "\n")
    cmd = [sys.executable, "-m", "hfcprov", "build", "--inventory", str(inv), "--out", str(tmp_path / "o"),
           "--secret-file", str(secret), "--jobs", "2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, r.stderr  # a failed row is never a success, good rows or not
    assert "1 built, 0 unchanged, 1 failed of 2" in r.stdout
    assert "bad row: m.csv line 3: bad MAC address 'xx'" in r.stderr and "Traceback" not in r.stderr
    assert SECRET.decode() not in r.stdout + r.stderr
    decode((tmp_path / "o" / "000000000001.cm").read_bytes(), SECRET)
    r = subprocess.run(cmd + ["--strict"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3 and "m.csv line 3" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_build_exit_status_and_keep_going(tmp_path):
    inv = write(tmp_path / "m.csv", "mac,tier\nxx,res-50x5\n000000000001,res-50x5\nyy,nosuchtier\n")
    cmd = [sys.executable, "-m", "hfcprov", "build", "-i", str(inv), "--json"]
    r = subprocess.run(cmd + ["-o", str(tmp_path / "a")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3 and "Traceback" not in r.stderr
    s = json.loads(r.stdout)
    assert (s["built"], len(s["failed"]), s["not_built"], s["stopped"]) == (1, 2, 0, False)
    assert s["failed"][0]["row"] == "m.csv line 2" and "bad MAC" in s["failed"][0]["error"]
    r = subprocess.run(cmd + ["-o", str(tmp_path / "b"), "--fail-fast"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3
    s = json.loads(r.stdout)
    assert s["built"] == 0 and s["stopped"] and s["not_built"] + len(s["failed"]) == 3
    assert not list((tmp_path / "b").glob("*.cm"))
    # every row bad: still 3, not 0
    bad = write(tmp_path / "bad.csv", "mac,tier\n000000000001,nosuchtier\n")
    r = subprocess.run([sys.executable, "-m", "hfcprov", "build", "-i", str(bad), "-o", str(tmp_path / "c")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 3 and "0 built" in r.stdout
    good = write(tmp_path / "good.csv", "mac,tier\n000000000001,res-50x5\n")
    r = subprocess.run([sys.executable, "-m", "hfcprov", "build", "-i", str(good), "-o", str(tmp_path / "d")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_example_inventory_builds(tmp_path):
    s = build(Path(__file__).resolve().parents[2] / "examples" / "inventory.csv", tmp_path / "out")
    assert s.failed == [] and s.built == 7


def test_one_shipped_tier_for_rows_without_tier(tmp_path):
    inv = write(tmp_path / "m.csv", "mac,us_rate\n000000000001,15M\n")
    s = build(inv, tmp_path / "out", template="res-300x20")
    assert s.built == 1
    up, down = flows_by_dir((tmp_path / "out" / "000000000001.cm").read_bytes(), None)
    assert up[0].max_sustained_rate == 15e6 and down[0].max_sustained_rate == 300e6
    assert read_manifest(tmp_path / "out")["000000000001.cm"].tier == "res-300x20"


def test_a_missing_tier_column_is_one_error_naming_the_columns_and_leaves_no_folder(tmp_path):
    # issue 27: `teir` gave one "no tier" error per row (10,000 lines for a node) and made the folder
    rows = "".join(f"0000000000{i:02x},res-50x5\n" for i in range(1, 40))
    inv = write(tmp_path / "m.csv", "mac,teir\n" + rows)
    with pytest.raises(InventoryError) as err:
        build(inv, tmp_path / "out")
    message = str(err.value)
    assert "\n" not in message and "no 'tier' column" in message
    assert "columns found: mac, teir" in message and "'teir' meant to be 'tier'" in message
    assert not (tmp_path / "out").exists()
    yaml_inv = write(tmp_path / "m.yaml", "- {mac: '000000000001', ipaddr: 10.0.0.1}\n")
    with pytest.raises(InventoryError, match=r"no 'tier' column .*columns found: mac, ipaddr\)$"):
        build(yaml_inv, tmp_path / "out")


def test_an_interrupted_build_keeps_what_it_built(tmp_path):
    rows = ["mac,tier"] + [f"0000000002{i:02x},res-50x5" for i in range(10)]
    inv = write(tmp_path / "m.csv", "\n".join(rows) + "\n")

    def stop_after_four(done, total):
        if done == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build(inv, tmp_path / "out", progress=stop_after_four)
    assert len(read_manifest(tmp_path / "out")) == 4
    s = build(inv, tmp_path / "out")
    assert (s.unchanged, s.built) == (4, 6)


def test_template_for_picks_the_tier_file_and_names_the_tiers_it_has(tmp_path):
    assert template_for({"tier": "res-100x10"}) == SHIPPED / "res-100x10.j2"
    assert template_for({"tier": "res-100x10"}, "res-50x5") == SHIPPED / "res-50x5.j2"  # one template for all
    (tmp_path / "gold.j2").write_text("Main { NetworkAccess 1; }\n")
    assert template_for({"tier": "gold"}, tmp_path) == (tmp_path / "gold.j2").resolve()
    with pytest.raises(TemplateError, match=r"no template for tier 'silver' in .* \(tiers: .*gold.*res-50x5"):
        template_for({"tier": "silver"}, tmp_path)
    # issue 27: a site folder adds tiers to the shipped ones instead of hiding them, and may replace one
    assert template_for({"tier": "res-50x5"}, tmp_path) == SHIPPED / "res-50x5.j2"
    (tmp_path / "res-50x5.j2").write_text("Main { NetworkAccess 0; }\n")
    assert template_for({"tier": "res-50x5"}, tmp_path) == (tmp_path / "res-50x5.j2").resolve()
    with pytest.raises(TemplateError, match=r"did you mean res-50x5\?"):
        template_for({"tier": "res-50x6"}, tmp_path)
    with pytest.raises(BuildError, match="no tier"):
        template_for({"mac": "001122334455"})
    assert _template_for is template_for  # the older private name still works


def test_rows_rendering_the_same_text_get_the_same_file_and_others_their_own(tmp_path):
    inv = write(tmp_path / "m.csv", "mac,tier,us_rate\n000000000001,res-50x5,5M\n000000000002,res-50x5,5M\n"
                                    "000000000003,res-50x5,6M\n")
    out = tmp_path / "out"
    assert build(inv, out, secret=SECRET).built == 3
    one, two, three = ((out / f"00000000000{i}.cm").read_bytes() for i in (1, 2, 3))
    assert one == two and one != three
    assert [f.max_sustained_rate for f in flows_by_dir(three)[0]] == [6_000_000]


def test_an_inventory_that_cannot_be_read_leaves_no_output_folder(tmp_path):
    out = tmp_path / "cm"
    with pytest.raises(InventoryError, match="nosuch.csv: cannot read inventory"):
        build(tmp_path / "nosuch.csv", out)
    assert not out.exists()


def test_a_manifest_entry_is_written_as_json_dumps_writes_it():
    """The manifest's entry lines, formatted straight for speed, are ``json.dumps(entry.__dict__)``."""
    import json

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from hfcprov.tiers.bulk import Entry, _entry_json

    text = st.text(max_size=12)

    @settings(max_examples=300, deadline=None)
    @given(text, text, text, st.one_of(st.integers(0, 2**40), st.booleans()), text, text)
    def check(mac, file, sha, size, tier, inputs):
        e = Entry(mac, file, sha, size, tier, inputs)
        assert _entry_json(e) == json.dumps(e.__dict__)
        assert json.loads(_entry_json(e)) == e.__dict__

    check()
