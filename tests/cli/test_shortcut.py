"""The click-free path for plain per-file invocations (hfcprov.cli.shortcut).

Its table is generated from the click commands, so it cannot drift from them; the parser must either
produce exactly the call click makes, or hand the invocation to click. Both are checked here: the
table against a fresh generation, the calls against click's on generated command lines, and whole
processes (output files, stdout, stderr, exit status) against the click path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hfcprov import cli
from hfcprov.cli import config_files, root, shortcut, shortcut_gen

ROOT = Path(__file__).resolve().parents[2]

GOOD = """Main {
  NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 10000000; }
}
"""
BAD = "Main {\n  NetworkAccess 1;\n  MaxRateSustained;\n}\n"


def test_the_table_is_what_the_click_commands_generate():
    fresh = shortcut_gen.table_source(shortcut_gen.build_table())
    assert shortcut_gen.TABLE_FILE.read_text() == fresh, \
        "hfcprov/cli/shortcut_table.py is stale: run `python -m hfcprov.cli.shortcut_gen`"


def test_the_generator_refuses_what_the_parser_cannot_copy():
    import click

    @click.group()
    @shortcut.runs()
    def top():
        pass

    @top.command()
    @click.option("--n", type=float)
    @shortcut.runs(print)
    def odd(n):
        pass

    with pytest.raises(shortcut_gen.Unsupported, match="type"):
        shortcut_gen.build_table(top, plain=[("odd",)])

    @top.command()
    def unmarked():
        pass

    with pytest.raises(shortcut_gen.Unsupported, match="not marked"):
        shortcut_gen.build_table(top, plain=[("unmarked",)])


# --- the calls: click's and the shortcut's, on generated command lines -------------------------

TARGETS = ("hfcprov.cli:set_verbosity", "hfcprov.cli.config_files:encode_files",
           "hfcprov.cli.config_files:decode_files", "hfcprov.cli.build_files:build_files")


@pytest.fixture
def recorded(monkeypatch):
    """Replace the targets with recorders; returns the list of (target, params) they saw."""
    seen = []
    for target in TARGETS:
        module, _, name = target.partition(":")

        def record(_target=target, **params):
            seen.append((_target, params))

        monkeypatch.setattr(sys.modules[module] if module in sys.modules else __import__(module, fromlist=[name]),
                            name, record)
    return seen


def click_calls(args, seen):
    """What the click root calls for ``args`` ([] if click refuses them: usage error, help)."""
    del seen[:]
    try:
        root.run(list(args))
    except SystemExit:
        return []
    return list(seen)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "good.txt").write_text(GOOD)
    (tmp_path / "folder").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


WORDS = ["config", "encode", "decode", "good.txt", "missing.txt", "folder", "out.cm", "na", "eu", "xx",
         "text", "yaml", "-o", "--output", "--secret-file", "--mta", "--hash", "--strict", "--mib-dir",
         "--format", "--names", "--c-tool", "-v", "-q", "--verbose", "-h", "--help", "--version", "--", "-",
         "-oout.cm", "--output=out.cm", "--hash=na", "-vq", "--mt", "tlvs"]


OPTIONS = {
    "encode": [["-o", "out.cm"], ["--output", "folder"], ["--mta"], ["--strict"], ["--hash", "na"], ["--hash", "eu"],
               ["--hash", "xx"], ["--secret-file", "good.txt"], ["--secret-file", "folder"], ["--mib-dir", "folder"],
               ["--mib-dir", "missing"], ["--mib-dir", "good.txt"]],
    "decode": [["-o", "out.cfg"], ["--output", "folder"], ["--format", "yaml"], ["--format", "json"], ["--names"],
               ["--c-tool"], ["--strict"], ["--secret-file", "good.txt"], ["--mib-dir", "folder"]],
}


REFUSED = (["--hash", "xx"], ["--secret-file", "folder"], ["--mib-dir", "good.txt"])  # click refuses these values


def well_formed(command, valid=False):
    """``command``'s sources and options in any order (each option's value kept after it); ``valid``:
    only what click accepts (existing files or none, good choices, encode's -o)."""
    sources = st.sampled_from(["good.txt", "good.txt", "missing.txt"] + ([] if valid else ["folder"]))
    options = [o for o in OPTIONS[command] if not (valid and o in REFUSED)]
    chunks = st.tuples(st.lists(sources, min_size=1, max_size=3), st.lists(st.sampled_from(options), max_size=4),
                       st.just(True) if valid and command == "encode" else st.booleans())
    return chunks.flatmap(lambda t: st.permutations([[src] for src in t[0]] + t[1] + [["-o", "out.cm"]] * t[2])) \
        .map(lambda parts: ["config", command, *sum(parts, [])])


def plain_lines():
    """Well-formed lines (so the shortcut has something to take), some with a stray word, and arbitrary
    tokens."""
    top = st.sampled_from([[], ["-v"], ["-q"], ["-v", "-v"]])
    body = st.sampled_from(["encode", "decode"]).flatmap(well_formed)
    stray = st.lists(st.sampled_from(WORDS), min_size=1, max_size=1)
    return st.one_of(st.builds(lambda t, b: t + b, top, body), st.builds(lambda t, b, w: t + b + w, top, body, stray),
                     st.lists(st.sampled_from(WORDS), max_size=8))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=plain_lines())
def test_the_shortcut_calls_what_click_calls_or_leaves_it_to_click(workdir, recorded, args):
    plain = shortcut.plain_call(args)
    if plain is None:
        return  # click's own run: nothing to compare
    del recorded[:]
    plain()
    ours = list(recorded)
    assert ours == click_calls(args, recorded), args


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.builds(lambda top, body: top + body, st.sampled_from([[], ["-v"], ["-q"], ["-q", "-v", "--verbose"]]),
                      st.sampled_from(["encode", "decode"]).flatmap(lambda c: well_formed(c, valid=True))))
def test_every_plain_line_click_accepts_takes_the_shortcut(workdir, recorded, args):
    plain = shortcut.plain_call(args)
    assert plain is not None, args
    del recorded[:]
    plain()
    assert list(recorded) == click_calls(args, recorded), args


@pytest.mark.parametrize("args", [
    ["config", "encode", "good.txt", "-o", "out.cm"],
    ["-v", "config", "encode", "--strict", "good.txt", "--output", "out.cm", "--mib-dir", "folder"],
    ["-q", "config", "encode", "good.txt", "missing.txt", "-o", "folder"],
    ["config", "encode", "--mta", "--hash", "eu", "good.txt", "-o", "out.cm"],
    ["config", "decode", "good.txt"],
    ["config", "decode", "--format", "json", "good.txt", "-o", "out.json"],
])
def test_plain_invocations_take_the_shortcut(workdir, recorded, args):
    plain = shortcut.plain_call(args)
    assert plain is not None
    plain()
    assert recorded[-1] == click_calls(args, recorded)[-1]


@pytest.mark.parametrize("args", [
    ["config", "encode", "good.txt", "-o", "out.cm", "--help"],
    ["config", "encode", "good.txt"],                       # -o missing
    ["config", "encode", "-o", "out.cm"],                   # no source
    ["config", "encode", "folder", "-o", "out.cm"],         # a folder as source: click's message
    ["config", "encode", "good.txt", "-oout.cm"],
    ["config", "encode", "good.txt", "--output=out.cm"],
    ["config", "encode", "good.txt", "-o", "out.cm", "--hash", "xx"],
    ["config", "encode", "good.txt", "-o", "-"],
    ["config", "encode", "--", "good.txt", "-o", "out.cm"],
    ["--version"],
    ["config", "verify", "good.txt"],
    ["config", "encode", "good.txt", "-o", "out.cm", "--unknown"],
])
def test_anything_unusual_goes_to_click(workdir, args):
    assert shortcut.plain_call(args) is None


BUILD_WORDS = ["-i", "good.txt", "-o", "out", "--inventory", "--out", "-t", "res-50x5", "--jobs", "-j", "2", "0",
               "300", "+2", "--keep-going", "--fail-fast", "--progress", "--no-progress", "--json", "--strict",
               "--mkdir", "--pattern", "{mac}.bin", "--secret-file", "--no-cmts-mic", "--cmts-column", "cmts", "-q"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.lists(st.sampled_from(BUILD_WORDS), max_size=10).map(lambda words: ["build", "-i", "good.txt", *words]))
def test_a_build_line_calls_what_click_calls_or_goes_to_click(workdir, recorded, args):
    """--x/--no-x switches (the last one given wins) and --jobs's integer range, as click reads them."""
    plain = shortcut.plain_call(args)
    if plain is None:
        return
    del recorded[:]
    plain()
    assert list(recorded) == click_calls(args, recorded), args


@pytest.mark.parametrize("args, expected", [
    (["build", "-i", "m.csv", "-o", "out"], {"jobs": None, "keep_going": True, "progress": None}),
    (["build", "-i", "m.csv", "-o", "out", "-j", "2", "--fail-fast", "--no-progress"],
     {"jobs": 2, "keep_going": False, "progress": False}),
    (["build", "--fail-fast", "-i", "m.csv", "--keep-going", "-o", "out", "--progress", "--jobs", "256"],
     {"jobs": 256, "keep_going": True, "progress": True}),
])
def test_plain_builds_take_the_shortcut(workdir, recorded, args, expected):
    plain = shortcut.plain_call(args)
    assert plain is not None
    plain()
    (target, params), = [call for call in recorded if call[0].endswith("build_files")]
    assert {k: params[k] for k in expected} == expected
    assert recorded == click_calls(args, recorded)


@pytest.mark.parametrize("jobs", ["0", "257", "+2", " 2", "2.0", "1_0", "two"])
def test_a_jobs_value_click_may_refuse_goes_to_click(workdir, jobs):
    assert shortcut.plain_call(["build", "-i", "m.csv", "-o", "out", "-j", jobs]) is None


def test_shell_completion_goes_to_click(workdir, monkeypatch):
    monkeypatch.setenv("_HFCPROV_COMPLETE", "bash_complete")
    assert shortcut.plain_call(["config", "encode", "good.txt", "-o", "out.cm"]) is None


# --- whole processes: the shortcut against the click path ---------------------------------------

CLICK_PATH = "import sys; from hfcprov.cli import finish, root; finish(lambda: root.run(sys.argv[1:]))"


def run(tmp_path, argv, via_click):
    code = CLICK_PATH if via_click else "import sys; from hfcprov.cli import main; main()"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("_HFCPROV_COMPLETE", None)
    res = subprocess.run([sys.executable, "-c", code, *argv], cwd=tmp_path, env=env, capture_output=True,
                         timeout=120)
    files = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    return res.returncode, res.stdout, res.stderr, files


def fresh_folder(base: Path, name: str) -> Path:
    folder = base / name
    folder.mkdir()
    (folder / "good.txt").write_text(GOOD)
    (folder / "bad.txt").write_text(BAD)
    (folder / "plain").write_text("a regular file, so plain/x.cm cannot be created\n")
    (folder / "outdir").mkdir()
    from hfcprov.config import encode, read_config

    data = bytearray(encode(read_config(folder / "good.txt")))
    data[2] ^= 1  # NetworkAccess 0: the CM MIC no longer matches (a warning on a lenient read)
    (folder / "damaged.cm").write_bytes(bytes(data))
    return folder


@pytest.mark.parametrize("argv", [
    ["config", "encode", "good.txt", "-o", "one.cm"],
    ["config", "encode", "bad.txt", "-o", "one.cm"],
    ["config", "encode", "missing.txt", "-o", "one.cm"],
    ["config", "encode", "good.txt", "-o", "plain/one.cm"],
    ["config", "encode", "good.txt", "bad.txt", "-o", "outdir"],
    ["config", "encode", "good.txt", "good.txt", "-o", "outdir"],
    ["config", "encode", "--mta", "good.txt", "-o", "one.cm"],
    ["config", "encode", "--mta", "--secret-file", "good.txt", "good.txt", "-o", "one.cm"],
    ["config", "encode", "good.txt", "-o", "one.cm", "--help"],
    ["config", "decode", "good.txt"],
    ["config", "decode", "damaged.cm"],
    ["config", "encode", "damaged.cm", "-o", "re.cm"],
    ["config", "decode", "--strict", "damaged.cm"],
    ["config", "decode", "--format", "yaml", "good.txt", "bad.txt"],
    ["config", "decode", "--format", "json", "good.txt", "-o", "plain/x.json"],
    ["-q", "config", "decode", "missing.txt"],
], ids=lambda argv: " ".join(argv))
def test_the_shortcut_and_click_leave_the_same_files_output_and_status(tmp_path, argv):
    via_shortcut = run(fresh_folder(tmp_path, "a"), argv, via_click=False)
    via_click = run(fresh_folder(tmp_path, "b"), argv, via_click=True)
    assert b"Traceback" not in via_shortcut[2]
    assert via_shortcut == via_click


BUILD_INVENTORY = "mac,tier,us_rate\n000000000001,res-50x5,5M\n000000000002,res-50x5,six\nxx,res-50x5,5M\n"


def without_times(result):
    """A build's process result without what differs between two runs: its timing and the manifest's salt."""
    import json
    import re

    status, stdout, stderr, files = result
    stdout = re.sub(rb"in [0-9.]+ s( \([0-9.]+ files/s\))?", b"in T s", stdout)
    stdout = re.sub(rb'"seconds": [0-9.]+', b'"seconds": T', stdout).replace(b"/b/", b"/a/")
    for name in [n for n in files if n.endswith("manifest.json")]:
        data = json.loads(files[name])
        data.pop("salt", None)
        for entry in data["entries"]:
            entry.pop("inputs")
        files[name] = data
    return status, stdout, stderr.replace(b"/b/", b"/a/"), files


@pytest.mark.parametrize("argv", [
    ["build", "-i", "m.csv", "-o", "out", "--secret-file", "good.txt", "-j", "1"],
    ["build", "-i", "m.csv", "-o", "out", "--fail-fast", "--json", "--no-progress"],
    ["build", "-i", "m.csv", "-o", "out", "--no-cmts-mic", "--secret-file", "good.txt"],
    ["build", "-i", "m.csv", "-o", "plain/out"],
    ["build", "-i", "missing.csv", "-o", "out"],
    ["-q", "build", "-i", "m.csv", "-o", "out", "--strict", "--jobs", "2"],
], ids=lambda argv: " ".join(argv))
def test_a_build_through_the_shortcut_is_the_build_through_click(tmp_path, argv):
    results = []
    for name, via_click in (("a", False), ("b", True)):
        folder = fresh_folder(tmp_path, name)
        (folder / "m.csv").write_text(BUILD_INVENTORY)
        results.append(without_times(run(folder, [str(folder / a) if a in ("m.csv", "missing.csv") else a
                                                  for a in argv], via_click=via_click)))
    assert b"Traceback" not in results[0][2]
    assert results[0] == results[1]


def test_a_binary_file_round_trips_through_the_shortcut(tmp_path):
    folder = fresh_folder(tmp_path, "a")
    assert run(folder, ["config", "encode", "good.txt", "-o", "one.cm"], via_click=False)[0] == 0
    status, out, err, _ = run(folder, ["config", "decode", "one.cm"], via_click=False)
    assert status == 0 and b"MaxRateSustained 10000000;" in out and err == b""


def test_echo_is_click_echo_for_plain_text_and_asks_click_otherwise(capsys):
    import click

    for text in ("plain", "caf\u00e9", "\x1b[31mred\x1b[0m", ""):
        for err in (False, True):
            cli.echo(text, err=err)
            ours = capsys.readouterr()
            click.echo(text, err=err)
            assert ours == capsys.readouterr()
    cli.echo("no newline", nl=False)
    assert capsys.readouterr().out == "no newline"
    assert config_files.FORMATS  # the click options read their choices from there
