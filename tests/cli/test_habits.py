"""Issue 27, item 4: habits a lab engineer brings from flent, iperf3 and net-snmp, kept.

Real processes, as a user runs them. Each test names the habit it guards.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def hfcprov(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "hfcprov", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


# -- exit statuses: usage 2, error 1, failed rows 3, drift 4 -------------------------------------------------


def test_a_bad_option_value_is_usage_whoever_checks_it():
    # issue 27: `--rtt 40` (hfcprov's own check) exited 1 where `--format xml` (click's) exits 2
    ours = hfcprov("buffer", "advise", "--rate", "10M", "--rtt", "40")
    clicks = hfcprov("snmp", "audit", "--inventory", EXAMPLES / "inventory.csv", "--format", "xml")
    assert ours.returncode == clicks.returncode == 2
    assert "'--rtt'" in ours.stderr and "did you mean 40ms?" in ours.stderr
    assert len(ours.stderr.strip().splitlines()) == 1 and "Traceback" not in ours.stderr


def test_the_exit_statuses_never_share_a_meaning():
    from hfcprov import cli

    codes = [cli.EXIT_OK, cli.EXIT_ERROR, cli.EXIT_USAGE, cli.EXIT_FAILED, cli.EXIT_DRIFT, cli.EXIT_INTERRUPTED]
    assert codes == [0, 1, 2, 3, 4, 130]
    epilog = hfcprov("--help").stdout
    assert "drift" in epilog and "\n    4 " in epilog


def test_an_option_mistake_of_the_shortcut_path_is_usage_too(tmp_path):
    # `config encode` runs without click; its own option check exits 2 all the same
    r = hfcprov("config", "encode", EXAMPLES / "buffer-control.cfg", "--mta", "--secret-file", EXAMPLES /
                "inventory.csv", "-o", tmp_path / "x.cm")
    assert r.returncode == 2 and "--secret-file is for CM files" in r.stderr
    assert not (tmp_path / "x.cm").exists()


# -- -o into a folder that does not exist ----------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["config", "encode", EXAMPLES / "buffer-control.cfg", "-o", "{out}/x.cm"],
    ["config", "decode", EXAMPLES / "buffer-control.cfg", "-o", "{out}/x.txt"],
    ["sim", "run", EXAMPLES / "sim-upstream.yaml", "--set", "duration=6s", "--out", "{out}/r.json"],
    ["build", "-i", EXAMPLES / "inventory.csv", "-o", "{out}/cm"],
])
def test_an_output_folder_that_does_not_exist_is_an_error_unless_mkdir(tmp_path, args):
    # issue 27: `config encode -o nosuchdir/x.cm` made the folder tree (a typo in /srv/tftp makes a new tree)
    out = tmp_path / "srv" / "tfpt"
    filled = [str(a).replace("{out}", str(out)) for a in args]
    r = hfcprov(*filled, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "does not exist (--mkdir creates it)" in r.stderr and str(out) in r.stderr
    assert not (tmp_path / "srv").exists()
    made = hfcprov(*filled, "--mkdir", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert out.is_dir()


def test_build_and_campaign_make_their_own_folder_as_documented(tmp_path):
    # `build -o DIR` makes DIR, and `campaign run -d out/x.db` out/ (README's main job on a fresh clone)
    r = hfcprov("build", "-i", EXAMPLES / "inventory.csv", "-o", "cm", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "(0 files/s)" not in r.stdout and "files/s" in r.stdout
    (tmp_path / "tiny.yaml").write_text("grid: {upstream_rate: 2M, buffer: 16K}\ntraffic: {duration: 1s, warmup: 0s}\n")
    r = hfcprov("campaign", "run", "tiny.yaml", "-d", "out/t.db", "-o", "out/t.html", "-j", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "t.html").exists()
    deep = hfcprov("campaign", "run", "tiny.yaml", "-d", "a/b/t.db", cwd=tmp_path)
    assert deep.returncode == 1 and "folder a/b does not exist" in deep.stderr and not (tmp_path / "a").exists()


def test_build_never_says_0_files_per_second():
    from types import SimpleNamespace

    from hfcprov.cli.build_cmd import files_per_second

    assert files_per_second(SimpleNamespace(built=1, unchanged=0, seconds=4.0)) == " (0.25 files/s)"
    assert files_per_second(SimpleNamespace(built=3, unchanged=1, seconds=2.0)) == " (2 files/s)"
    assert files_per_second(SimpleNamespace(built=5000, unchanged=0, seconds=2.0)) == " (2500 files/s)"
    assert files_per_second(SimpleNamespace(built=0, unchanged=0, seconds=0.5)) == ""


# -- the probe: its own port, one meaning of --rate, one --listen form ---------------------------------------


def test_the_probe_does_not_default_to_iperf3s_port():
    from hfcprov.probe import DEFAULT_PORT
    from hfcprov.probe.run import ProbeSpec

    assert DEFAULT_PORT != 5201 and ProbeSpec(target="x").port == DEFAULT_PORT
    assert f"default {DEFAULT_PORT}" in hfcprov("probe", "run", "--help").stdout
    assert f"0.0.0.0:{DEFAULT_PORT}" in hfcprov("probe", "responder", "--help").stdout


def test_rate_is_a_bit_rate_and_the_probe_pace_is_interval():
    # issue 27: `probe run --rate 2M` failed as not a float (it was probes per second)
    r = hfcprov("probe", "run", "--target", "127.0.0.1", "--rate", "20")
    assert r.returncode == 2 and "not a plausible link rate" in r.stderr and "did you mean 20M?" in r.stderr
    r = hfcprov("probe", "run", "--target", "127.0.0.1", "--interval", "20")
    assert r.returncode == 2 and "did you mean 20ms?" in r.stderr
    helps = {cmd: hfcprov(*cmd.split(), "--help").stdout for cmd in ("probe run", "buffer advise", "snmp reset")}
    assert "--rate RATE" in helps["probe run"] and "--interval DURATION" in helps["probe run"]
    assert "--rate RATE" in helps["buffer advise"]
    assert "--rate" not in helps["snmp reset"] and "--per-second N" in helps["snmp reset"]


def test_every_server_listens_the_same_way():
    from hfcprov.cli import probe_cmd, tftp_cmd
    from hfcprov.cli.options import ListenAddress

    for command in (tftp_cmd.serve, probe_cmd.responder):
        (listen,) = [p for p in command.params if p.name == "listen"]
        assert isinstance(listen.type, ListenAddress)
    bad = hfcprov("probe", "responder", "--listen", "127.0.0.1:99999")
    assert bad.returncode == 2 and "out of range" in bad.stderr


def test_one_declaration_each_for_json_secret_file_and_jobs():
    # issue 24 item 4: --secret-file was declared 4 times with 4 help texts, --jobs with two defaults
    from hfcprov.cli import root

    seen: dict[str, set] = {"--secret-file": set(), "--jobs": set(), "--json": set()}
    defaults = set()

    def walk(command):
        for p in command.params:
            for opt in getattr(p, "opts", []):
                if opt in seen:
                    seen[opt].add(p.help.endswith("as JSON on stdout (for scripts).") if opt == "--json" else p.help)
                    if opt == "--jobs":
                        defaults.add(p.default)
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    for name in root.COMMANDS:
        walk(root.cli.get_command(None, name))
    assert len(seen["--secret-file"]) == 1 and len(seen["--jobs"]) == 1 and defaults == {None}
    assert seen["--json"] == {True}  # every --json flag prints JSON on stdout, said the same way


# -- did you mean ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args, hint", [
    (["cmapaign"], "Did you mean 'campaign'?"),
    (["campaign", "rn"], "Did you mean 'run'?"),
    (["buffer", "advise", "--rat", "5M"], "'--rate'"),
    (["sim", "run", EXAMPLES / "sim-upstream.yaml", "--set", "rtts=40ms"], "did you mean rtt?"),
])
def test_a_typo_gets_a_did_you_mean(args, hint):
    r = hfcprov(*args)
    assert r.returncode in (1, 2) and hint in r.stderr and "Traceback" not in r.stderr


def test_a_misspelt_campaign_key_gets_a_did_you_mean(tmp_path):
    spec = tmp_path / "c.yaml"
    spec.write_text("grid: {upstream_rate: 1M, bufer: 16K}\n")
    r = hfcprov("campaign", "run", spec, "-d", tmp_path / "c.db")
    assert r.returncode == 1 and "grid.bufer: unknown key" in r.stderr and "did you mean buffer?" in r.stderr


# -- comparisons of files: before / after, --json with the table's names ------------------------------------


@pytest.fixture
def two_files(tmp_path):
    text = (EXAMPLES / "buffer-control.cfg").read_text()
    bigger = tmp_path / "bigger.cfg"
    bigger.write_text(text.replace("TargetBuffer 32768;", "TargetBuffer 262144;")
                      .replace("MaximumBuffer 65536;", "MaximumBuffer 524288;"))
    return EXAMPLES / "buffer-control.cfg", bigger


def test_sim_run_compares_two_config_files_side_by_side(two_files):
    a, b = two_files
    args = ["sim", "run", "--config", a, "--compare", b, "--docsis-version", "3.0", "--set", "duration=6s",
            "--set", "warmup=2s"]
    r = hfcprov(*args)
    assert r.returncode == 0, r.stderr
    lines = {line.split()[0]: line.split()[1:] for line in r.stdout.splitlines() if line and line[0] != " "}
    assert lines["buffer_bytes"][:2] == ["32768", "262144"]
    j = json.loads(hfcprov(*args, "--json").stdout)
    assert j["columns"] == [str(a), str(b)] and set(j["rows"]) <= set(lines)  # the table's names
    before, after = j["rows"]["rtt_loaded_p50_ms"]
    assert after > 1.5 * before  # 256 KiB of drop-tail at 5 Mb/s holds far more delay (White et al.)


def test_buffer_advise_compares_two_config_files(two_files):
    a, b = two_files
    r = hfcprov("buffer", "advise", "--config", a, "--compare", b, "--rtt", "40ms", "--docsis-version", "3.0",
                "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert rows["target_buffer_bytes"] == [32768, 262144] and rows["rate_mbps"] == [5.0, 5.0]
    assert rows["advised_target_bytes"][0] == rows["advised_target_bytes"][1]  # one tier, one advice
    assert rows["latency_under_load_ms"][1] > 5 * rows["latency_under_load_ms"][0]
    text = hfcprov("buffer", "advise", "--config", a, "--compare", b, "--rtt", "40ms", "--docsis-version", "3.0")
    assert "latency_under_load_ms" in text.stdout and "+700%" in text.stdout


# -- examples work from an installed wheel ------------------------------------------------------------------


def test_every_example_reads_outside_the_checkout(tmp_path):
    # issue 27: examples/tftp-dynamic.yaml said `templates: ../templates`, which exists only in a checkout
    from hfcprov.lab.spec import load_campaign
    from hfcprov.tftp.dynamic import load_dynamic

    copied = shutil.copytree(EXAMPLES, tmp_path / "elsewhere" / "examples")
    campaigns = [p for p in copied.glob("*.yaml") if "\ntarget:" in p.read_text()]
    assert len(campaigns) >= 4
    for p in campaigns:
        camp = load_campaign(p)
        assert camp.template is None or Path(camp.template).is_file(), p
    dynamic = load_dynamic(copied / "tftp-dynamic.yaml")
    try:
        assert dynamic is not None
    finally:
        getattr(dynamic, "close", lambda: None)()
    for p in copied.iterdir():
        assert "../" not in p.read_text().split("#")[0], p


# -- inventories and tiers ----------------------------------------------------------------------------------


def test_build_with_a_misspelt_tier_column_is_one_line_and_no_folder(tmp_path):
    inv = tmp_path / "node.csv"
    inv.write_text("mac,teir\n" + "".join(f"0011223344{i:02x},res-50x5\n" for i in range(50)))
    r = hfcprov("build", "-i", inv, "-o", tmp_path / "cm")
    assert r.returncode == 1 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr  # was one "no tier" line per row
    assert "no 'tier' column" in r.stderr and "columns found: mac, teir" in r.stderr
    assert not (tmp_path / "cm").exists()


def test_build_with_a_site_folder_keeps_the_shipped_tiers(tmp_path):
    # issue 27: `build -t mytiers` hid the shipped tiers (a row asking for res-50x5 failed)
    site = tmp_path / "mytiers"
    site.mkdir()
    (site / "gold.j2").write_text("Main { NetworkAccess 1; MaxCPE 8; }\n")
    inv = tmp_path / "m.csv"
    inv.write_text("mac,tier\n001122334401,gold\n001122334402,res-50x5\n")
    r = hfcprov("build", "-i", inv, "-o", tmp_path / "cm", "-t", site)
    assert r.returncode == 0, r.stderr
    assert "2 built" in r.stdout
