"""Dynamic config files: tier template + inventory, TLV 19/20 per request, MICs, errors per client."""

from __future__ import annotations

import io
import os
import time

import pytest

from hfcprov.config import ConfigError, decode, encode, verify
from hfcprov.tftp import TftpServer, fetch, fetch_many
from hfcprov.boot.tod import RFC868_OFFSET
from hfcprov.tftp.dynamic import (
    ConfigFileBuilder,
    DynamicConfigError,
    load_dynamic,
    tftp_timestamp,
)
from hfcprov.tftp.protocol import TftpErrors
from hfcprov.tftp.provider import MISS, Provider
from hfcprov.tiers import load_inventory, render_tree
from tests.support import wait_for

from .helpers import records, shipped_tiers, wait_idle

SECRET = b"hfc-shared-secret"

BROKEN_TIER = """Main {
  NetworkAccess 1;
  MaxCPE {{ no_such_variable }};
}
"""


@pytest.fixture
def site(tmp_path):
    """An inventory over the shipped tiers plus a site template that is broken on purpose."""
    shipped_tiers(tmp_path / "tiers", broken=BROKEN_TIER)
    inv = tmp_path / "inventory.csv"
    inv.write_text("mac,tier,ip,max_cpe\n"
                   "00:10:95:00:00:01,res-50x5,127.0.0.21,\n"
                   "00:10:95:00:00:02,res-100x10,127.0.0.22,2\n"
                   "00:10:95:00:00:03,broken,127.0.0.23,\n")
    (tmp_path / "secret.txt").write_bytes(SECRET + b"\r\n")
    (tmp_path / "root").mkdir()
    (tmp_path / "dyn.yaml").write_text("inventory: inventory.csv\ntemplates: tiers\nsecret_file: secret.txt\n")
    return tmp_path


def _expected(site, mac: str, tier: str, stamp: int, ip: str) -> bytes:
    """What a correct server sends: the bulk build's tree plus TLV 19/20, encoded with the secret."""
    row = next(r for r in load_inventory(site / "inventory.csv") if r["mac"] == mac)
    tree = render_tree(site / "tiers" / f"{tier}.j2", row)
    tree.set_top(19, stamp)
    tree.set_top(20, ip)
    return encode(tree, SECRET)


def test_dynamic_file_is_the_built_config_plus_tlv19_tlv20_with_valid_mics(site):
    import tftpy

    with TftpServer(site / "root", dynamic=load_dynamic(site / "dyn.yaml")) as srv:
        before = tftp_timestamp()
        out = io.BytesIO()
        tftpy.TftpClient("127.0.0.1", srv.port).download("001095000002.cm", out, timeout=2)
        ours = fetch("127.0.0.1", srv.port, "001095000001.cm", {"blksize": 1024})
        after = tftp_timestamp()
    data = out.getvalue()
    verify(data, SECRET)  # CM MIC and CMTS MIC both cover the inserted TLVs
    verify(ours, SECRET)
    tree = decode(data)
    (stamp,) = tree.find("19")
    (addr,) = tree.find("20")
    assert before <= stamp.value <= after and addr.value == "127.0.0.1"
    assert data == _expected(site, "001095000002", "res-100x10", stamp.value, "127.0.0.1")
    assert ours == _expected(site, "001095000001", "res-50x5", decode(ours).find("19")[0].value, "127.0.0.1")
    with pytest.raises(ConfigError, match="CMTS MIC"):
        verify(data, b"wrong secret")


def test_key_by_client_ip(site):
    builder = ConfigFileBuilder(site / "inventory.csv", site / "tiers", key="ip", secret=SECRET)
    with TftpServer(site / "root", host="0.0.0.0", dynamic=builder) as srv:
        (a,) = fetch_many("127.0.0.1", srv.port, ["anything.cm"], bind="127.0.0.22")
        (b,) = fetch_many("127.0.0.1", srv.port, ["anything.cm"], bind="127.0.0.99")
    assert a.ok and decode(a.data).find("20")[0].value == "127.0.0.22"
    assert decode(a.data).find("18")[0].value == 2  # MaxCPE override of that modem's row
    assert b.error_code == TftpErrors.FileNotFound


def test_template_error_answers_that_modem_only(site):
    log = io.StringIO()
    with TftpServer(site / "root", dynamic=load_dynamic(site / "dyn.yaml"), log=log) as srv:
        bad, good, missing = fetch_many("127.0.0.1", srv.port, ["001095000003.cm", "001095000001.cm", "0000.cm"])
        again = fetch("127.0.0.1", srv.port, "001095000002.cm")
        wait_idle(srv)
    assert bad.error_code == TftpErrors.NotDefined and "cannot build" in bad.error
    assert good.ok and missing.error_code == TftpErrors.FileNotFound and again
    recs = {r["file"]: r for r in records(log.getvalue())}
    failed = recs["001095000003.cm"]
    assert failed["result"] == "generate-error"
    assert "broken.j2 line 3" in failed["detail"] and "no_such_variable" in failed["detail"]
    assert SECRET.decode() not in log.getvalue()


def test_static_file_wins_over_dynamic(site):
    (site / "root" / "001095000001.cm").write_bytes(b"prebuilt")
    with TftpServer(site / "root", dynamic=load_dynamic(site / "dyn.yaml")) as srv:
        assert fetch("127.0.0.1", srv.port, "001095000001.cm") == b"prebuilt"


def test_inventory_edit_is_picked_up(site):
    with TftpServer(site / "root", dynamic=load_dynamic(site / "dyn.yaml")) as srv:
        (f,) = fetch_many("127.0.0.1", srv.port, ["00109500000a.cm"])
        assert f.error_code == TftpErrors.FileNotFound
        inv = site / "inventory.csv"
        inv.write_text(inv.read_text() + "00:10:95:00:00:0a,res-300x20,,\n")
        os.utime(inv, (time.time() + 5, time.time() + 5))
        # the builder looks at the inventory at most once a second: the server's answer is the event
        (f,) = wait_for(lambda: [g for g in fetch_many("127.0.0.1", srv.port, ["00109500000a.cm"]) if g.ok], 30,
                        "the server to serve the modem added to the inventory")
        assert decode(f.data).find("20")


def test_dynamic_burst_all_complete(site):
    names = ["001095000001.cm", "001095000002.cm"] * 150
    with TftpServer(site / "root", dynamic=load_dynamic(site / "dyn.yaml")) as srv:
        got = fetch_many("127.0.0.1", srv.port, names)
    assert all(f.ok for f in got)
    assert sum(f.retransmits for f in got) == 0


@pytest.mark.parametrize("text, message", [
    ("inventory: nope.csv\n", "nope.csv"),
    ("inventory: inventory.csv\nkey: mac\n", "key must be 'filename' or 'ip'"),
    ("inventory: inventory.csv\ntemplate: x\n", "unknown key 'template'"),
    ("templates: tiers\n", "'inventory' is required"),
    ("inventory: [unclosed\n", "not valid YAML"),
    ("inventory: inventory.csv\nfilename: '{serial}.cm'\n", "names {serial}"),
    ("inventory: inventory.csv\nsecret_file: none.txt\n", "secret"),
])
def test_bad_dynamic_yaml_is_one_clear_error(site, text, message):
    from hfcprov.errors import HfcprovError

    p = site / "bad.yaml"
    p.write_text(text)
    with pytest.raises(HfcprovError, match=message.replace("{", r"\{").replace("[", r"\[")) as err:
        load_dynamic(p)
    assert "\n" not in str(err.value)


def test_builder_repr_hides_secret(site):
    assert SECRET.decode() not in repr(load_dynamic(site / "dyn.yaml"))


def test_tftp_timestamp_is_rfc868():
    assert tftp_timestamp(0) == RFC868_OFFSET
    assert tftp_timestamp(1_700_000_000) == 1_700_000_000 + RFC868_OFFSET
    assert tftp_timestamp(2**32) == (2**32 + RFC868_OFFSET) % 2**32  # wraps in 2036 like the field


@pytest.mark.parametrize("secret", [SECRET, None])
@pytest.mark.parametrize("tier", ["res-50x5", "business-voice", "docsis10-cos"])
def test_stamped_file_equals_set_top_then_encode(site, tier, secret):
    """The per-request stamp (TLV 19/20 + both MICs) is byte-identical to the codec's encode."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from hfcprov.config import content_items
    from hfcprov.tftp.dynamic import StampedFile

    tree = render_tree(site / "tiers" / f"{tier}.j2", {"mac": "001095000001"})
    f = StampedFile(content_items(tree.tlvs), secret, True, True)

    @settings(max_examples=40, deadline=None)
    @given(st.integers(0, 2**32 - 1), st.ip_addresses(v=4).map(str))
    def check(stamp, ip):
        tree.set_top(19, stamp)
        tree.set_top(20, ip)
        assert f.build(stamp, ip) == encode(tree, secret)

    check()


def test_warm_renders_every_modem_and_skips_broken_ones(site):
    b = load_dynamic(site / "dyn.yaml")
    assert b.warm() == 2  # the 'broken' tier is left for its modem to be told about


def test_submit_nowait_answers_only_from_memory(site):
    inv = site / "inventory.csv"
    inv.write_text(inv.read_text() + "00:10:95:00:00:09,no-such-tier,127.0.0.29,\n")
    builder = load_dynamic(site / "dyn.yaml")
    name, ip = "001095000001.cm", "127.0.0.21"
    # every tier's template and variables were learned with the inventory: a cold storm's first modem is
    # answered from the loop, not handed to a thread
    first = builder.submit_nowait(name, ip)
    assert first is not None and not isinstance(first, bytes)  # a future: its build is on its way
    built = first.result()
    again = builder.submit_nowait(name, ip)  # built now: the bytes themselves, nothing to wait on
    assert isinstance(again, bytes)
    assert decode(again, SECRET).find("20")[0].value == ip
    verify(again, SECRET)  # raises if a MIC is wrong
    assert len(again) == len(built)
    assert builder.submit_nowait("00109500ffff.cm", ip).result() is None  # no such modem: known from memory
    assert builder.submit_nowait("001095000009.cm", ip) is None  # no template for its tier: a thread reports it
    with pytest.raises(Exception, match="no template for tier 'no-such-tier'"):
        builder.submit("001095000009.cm", ip).result()
    builder._checked -= 2.0  # the inventory and templates are due their once-a-second check
    assert builder.submit_nowait(name, ip) is None


def test_a_tier_added_by_an_inventory_edit_is_learned_at_reload(site):
    builder = load_dynamic(site / "dyn.yaml")
    inv = site / "inventory.csv"
    inv.write_text(inv.read_text() + "00:10:95:00:00:05,business-voice,127.0.0.25,\n")
    os.utime(inv, (time.time() + 5, time.time() + 5))
    builder._checked -= 2.0
    assert builder.submit("001095000001.cm", "127.0.0.21").result()  # reloads: the edit is read
    assert builder.submit_nowait("001095000005.cm", "127.0.0.25").result()


class _LoopProvider(Provider):
    """Answers with the bytes, with a future another thread completes later, or with a miss;
    records the thread that asked (the server's loop: the provider must never block it)."""

    def __init__(self, mode):
        self.mode = mode
        self.threads = []

    def request(self, filename, client_ip):
        import concurrent.futures
        import threading

        self.threads.append(threading.current_thread().name)
        if self.mode == "miss" or filename != "a.cm":
            return MISS
        data = filename.encode() * 100
        if self.mode == "bytes":
            return data
        f = concurrent.futures.Future()
        threading.Timer(0.2, f.set_result, (data,)).start()  # the build finishes after request returned
        return f


@pytest.mark.parametrize("mode", ["bytes", "future", "miss"])
def test_server_asks_the_provider_from_its_loop(tmp_path, mode):
    provider = _LoopProvider(mode)
    with TftpServer(tmp_path, dynamic=provider) as srv:
        if mode == "miss":
            (got,) = fetch_many("127.0.0.1", srv.port, ["a.cm"])
            assert got.error_code == TftpErrors.FileNotFound
        else:
            assert fetch("127.0.0.1", srv.port, "a.cm") == b"a.cm" * 100
    assert provider.threads == [f"tftp-{srv.port}"]  # asked once, from the loop's own thread


def test_a_plain_callable_runs_on_a_thread_and_may_block(tmp_path):
    import threading

    seen, release = [], threading.Event()

    def slow(filename, client_ip):
        seen.append(threading.current_thread().name)
        release.wait(60)  # blocks until the static file has come
        return io.BytesIO(b"x" * 700) if filename == "slow.cm" else None

    (tmp_path / "static.cm").write_bytes(b"s" * 10)
    with TftpServer(tmp_path, dynamic=slow) as srv:
        got = {}
        t = threading.Thread(target=lambda: got.update(slow=fetch_many("127.0.0.1", srv.port, ["slow.cm"])[0]))
        t.start()
        static = fetch("127.0.0.1", srv.port, "static.cm")  # answered while the slow build still blocks
        assert static == b"s" * 10 and t.is_alive()
        release.set()
        t.join(60)
        assert got["slow"].ok and got["slow"].data == b"x" * 700
    assert seen and all(name.startswith("tftp-build") for name in seen)


def test_submit_nowait_never_builds_in_the_callers_thread(site):
    """With in-thread builds (processes: 0) a build would run in the server's loop: nowait declines it."""
    inv = site / "inventory.csv"
    inv.write_text(inv.read_text() + "00:10:95:00:00:04,res-50x5,127.0.0.24,3\n")  # same tier, other MaxCPE
    yaml_path = site / "inthread.yaml"
    yaml_path.write_text((site / "dyn.yaml").read_text() + "processes: 0\n")
    builder = load_dynamic(yaml_path)
    name, ip = "001095000001.cm", "127.0.0.21"
    builder.submit(name, ip).result()  # the tier's template and variables are known now
    assert builder.builds == 1
    assert builder.submit_nowait("001095000004.cm", "127.0.0.24") is None  # its own file: a new build
    assert builder.builds == 1
    assert isinstance(builder.submit_nowait(name, ip), bytes)  # built already: answered from memory


def test_stamping_any_tree_equals_set_top_then_encode():
    """Whatever the content (TLV 19/20 absent, once or repeated, any TLVs around them), the stamped
    file is the codec's file for the tree with set_top(19), set_top(20) (IPv4) or set_top(59) (IPv6)."""
    from hypothesis import HealthCheck, assume, given, settings
    from hypothesis import strategies as st

    from hfcprov.config import Tlv, content_items
    from hfcprov.tftp.dynamic import StampedFile
    from tests.config.strategies import trees

    stamps = st.lists(st.sampled_from([Tlv(19, 5), Tlv(20, "10.0.0.9"), Tlv(19, 7), Tlv(59, "2001:db8::9")]),
                      max_size=3)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(trees(), stamps, st.data(), st.one_of(st.none(), st.binary(min_size=1, max_size=8)),
           st.booleans(), st.booleans())
    def check(tree, extra, data, secret, ts, ma):
        for node in extra:
            tree.tlvs.insert(data.draw(st.integers(0, len(tree.tlvs))), node)
        try:
            items = content_items(tree.tlvs)
        except ConfigError:
            assume(False)  # a drawn value too big for one TLV
        family = data.draw(st.sampled_from([4, 6]))
        f = StampedFile(items, secret, ts, ma, family)
        stamp, ip = data.draw(st.integers(0, 2**32 - 1)), data.draw(st.ip_addresses(v=family).map(str))
        if ts:
            tree.set_top(19, stamp)
        if ma:
            tree.set_top(20 if family == 4 else 59, ip)
        assert f.build(stamp if ts else None, ip if ma else None) == encode(tree, secret)

    check()


def test_a_build_the_pool_refuses_answers_every_waiting_modem(site, monkeypatch):
    """Whatever the pool raises when handed a build, the modems waiting for that build get the error
    at once; none is left waiting (a graceful stop would wait for them forever)."""
    from hfcprov.tftp import dynamic

    builder = load_dynamic(site / "dyn.yaml")

    class Refusing:
        processes, broken = builder.processes, None

        def submit(self, *args, **kwargs):
            raise TypeError("refused")

    monkeypatch.setattr(dynamic, "_POOL", Refusing())
    monkeypatch.setattr(dynamic, "_worker_pool", lambda processes, niceness=None: dynamic._POOL)
    builder.processes = builder.processes or 1
    futures = [builder.submit("001095000001.cm", "127.0.0.21") for _ in range(3)]
    for f in futures:
        with pytest.raises(TypeError, match="refused"):
            f.result(timeout=5)
    assert not builder._pending


def test_a_slow_inventory_reload_does_not_hold_up_the_loops_requests(site, monkeypatch):
    """The loop asks submit_nowait while a thread re-reads an edited (here: slow, 3 s) inventory: the
    answer comes at once; the new state is prepared outside the lock the loop's requests take."""
    import threading

    builder = load_dynamic(site / "dyn.yaml")
    real_index = builder._index
    reading, finish = threading.Event(), threading.Event()

    def slow_index():
        reading.set()
        finish.wait(60)  # the re-read lasts until the test has had its answer
        return real_index()

    monkeypatch.setattr(builder, "_index", slow_index)
    builder._stamp = None  # the files "changed": the next reload re-reads them
    reload = threading.Thread(target=builder._reload, kwargs={"force": True})
    reload.start()
    assert reading.wait(30)  # the reload is reading the inventory now
    builder._checked = time.monotonic()  # a request that got past the once-a-second check
    answers = []
    ask = threading.Thread(target=lambda: answers.append(builder.submit_nowait("001095000002.cm", "127.0.0.22")))
    ask.start()  # not built yet: a build is started
    ask.join(30)
    answered = not ask.is_alive()  # while the reload still reads: it did not wait for its lock
    finish.set()
    reload.join()
    ask.join()
    assert answered and answers[0] is not None


def test_a_bad_processes_value_names_the_file_once(site):
    from hfcprov.errors import HfcprovError

    p = site / "bad.yaml"
    p.write_text("inventory: inventory.csv\nprocesses: -2\n")
    with pytest.raises(HfcprovError) as err:
        load_dynamic(p)
    assert str(err.value) == f"{p}: processes must be a whole number 0 or more, not -2"


def test_niceness_key_sets_the_build_workers_priority(site):
    (site / "n3.yaml").write_text((site / "dyn.yaml").read_text() + "niceness: 3\n")
    assert load_dynamic(site / "n3.yaml").niceness == 3
    (site / "bad.yaml").write_text((site / "dyn.yaml").read_text() + "niceness: 40\n")
    with pytest.raises(DynamicConfigError, match="niceness must be a whole number 0..19"):
        load_dynamic(site / "bad.yaml")


def _edited(path, text: str) -> None:
    """``path`` rewritten with ``text`` and a later mtime (what an operator's edit leaves)."""
    path.write_text(text)
    later = time.time() + 5
    os.utime(path, (later, later))


@pytest.mark.parametrize("processes", [1, 0])
def test_a_template_edit_reaches_builds_whose_templates_are_compiled_once(site, processes):
    """Workers compile each template once (``hfcprov build``'s renderers), for the files as the builder
    last read them: an edited tier is what the next build renders, not the function compiled before."""
    builder = ConfigFileBuilder(site / "inventory.csv", site / "tiers", secret=SECRET, processes=processes)
    try:
        before = decode(builder.submit("001095000001.cm", "127.0.0.21").result(30))
        assert before.find("18")[0].value == 4  # res-50x5 through _residential.j2: MaxCPE's default
        tier = site / "tiers" / "res-50x5.j2"
        _edited(tier, tier.read_text().replace('{% extends "_residential.j2" %}',
                                               '{% set max_cpe = 9 %}\n{% extends "_residential.j2" %}'))
        after = wait_for(lambda: [t for t in [decode(builder.submit("001095000001.cm", "127.0.0.21").result(30))]
                                  if t.find("18")[0].value == 9], 30, "a build of the edited template")
        assert after
    finally:
        builder.close()


def test_an_edit_of_a_template_included_beside_the_one_template_is_picked_up(site):
    """``templates: one.j2`` for every modem: the templates beside it that it includes are watched too."""
    (site / "one").mkdir()
    (site / "one" / "_part.j2").write_text("  MaxCPE 3;\n")
    (site / "one" / "one.j2").write_text('Main {\n  NetworkAccess 1;\n{% include "_part.j2" %}\n}\n')
    builder = ConfigFileBuilder(site / "inventory.csv", site / "one" / "one.j2", processes=1)
    try:
        assert decode(builder.submit("001095000001.cm", "127.0.0.21").result(30)).find("18")[0].value == 3
        _edited(site / "one" / "_part.j2", "  MaxCPE 7;\n")
        wait_for(lambda: decode(builder.submit("001095000001.cm", "127.0.0.21").result(30)).find("18")[0].value == 7,
                 30, "a build with the edited include")
    finally:
        builder.close()


def test_the_thread_that_checks_the_files_is_started_with_the_server_not_by_a_request(site):
    """The first request after a quiet second goes to a thread of the builder's: the server's start makes
    it, so a storm's first modem does not wait in the loop for a thread (and its module) to start."""
    import threading

    def checkers():  # other tests' builders may still have theirs
        return sum(t.name.startswith("tftp-reload") for t in threading.enumerate())

    builder = load_dynamic(site / "dyn.yaml")
    try:
        before = checkers()
        with TftpServer(site / "root", dynamic=builder):
            assert checkers() == before + 1
    finally:
        builder.close()
