"""``hfcprov config``: encode, decode, verify, diff DOCSIS config files; list the TLV dictionary."""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

import click

from hfcprov.cli import config_files, shortcut
from hfcprov.cli.config_files import FORMATS
from hfcprov.errors import HfcprovError

MIB_DIR = click.option("--mib-dir", "mib_dirs", multiple=True, type=click.Path(file_okay=False),
                       help="Also resolve OID names from the MIB files in this folder (repeatable).")
STRICT = click.option("--strict", is_flag=True, help="Binary input: refuse odd fields and a wrong or missing CM MIC"
                                                     " instead of warning.")


@click.group()
@shortcut.runs()
def config():
    """Encode, decode, verify and diff DOCSIS config files (text, YAML, JSON or binary)."""


@config.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", required=True, help="Output file, or a directory for several inputs.")
@click.option("--secret-file", type=click.Path(dir_okay=False), help="CMTS shared secret (adds the CMTS MIC).")
@click.option("--no-cmts-mic", "no_cmts_mic", is_flag=True,
              help="Without --secret-file: the files are meant to have no CMTS MIC (no warning).")
@click.option("--mta", is_flag=True, help="PacketCable MTA file (also chosen when the first TLV is MtaConfigDelimiter).")
@click.option("--hash", "mta_hash", type=click.Choice(["na", "eu"]),
              help="MTA file: add the configuration hash (PacketCable pktcMtaDevProvConfigHash, or Euro-PacketCable).")
@MIB_DIR
@STRICT
@shortcut.runs(config_files.encode_files)
def encode():
    """Build binary config files from text/YAML/JSON (or re-encode binary) SOURCES."""


@config.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--secret-file", type=click.Path(dir_okay=False), help="Verify both MICs with this shared secret.")
@click.option("-o", "--output", "out", help="Write here (a directory for several inputs) instead of stdout.")
@click.option("--names", is_flag=True, help="Text form: show SNMP OIDs by their MIB names (from mibs/).")
@click.option("--c-tool", "c_tool", is_flag=True,
              help="Text form: write what the docsis C tool reads (String/HexString, IPAddress, ObjectID, addr/port).")
@MIB_DIR
@STRICT
@shortcut.runs(config_files.decode_files)
def decode():
    """Show config FILES (binary or any text form) as text, YAML or JSON.

    Binary files are decoded leniently: a field that does not fit its type is shown as a GenericTLV
    and named in a warning (byte offset, TLV path), as is a wrong or missing CM MIC."""


@config.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--secret-file", type=click.Path(dir_okay=False),
              help="CMTS shared secret (CM files): also check the CMTS MIC.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON list: per file, its kind (cm or mta), ok, and the error if not ok.")
def verify(files, secret_file, as_json):
    """Check the CM MIC and CMTS MIC of binary FILES; of an MTA file, its delimiters and configuration hash.

    Without --secret-file the CM MIC is checked (as a modem does) and the CMTS MIC is reported as not checked."""
    import json

    from hfcprov.config import ConfigError, verify_cm_mic
    from hfcprov.config import verify as verify_bytes
    from hfcprov.config.mta import is_mta, verify_mta

    secret = config_files.secret(secret_file)
    failed, results = [], []
    for f in files:
        try:
            data = Path(f).read_bytes()
        except OSError as err:
            raise HfcprovError(f"{f}: cannot read: {err.strerror}") from None
        result = {"file": f, "kind": "mta" if is_mta(data) else "cm", "ok": False}
        results.append(result)
        try:
            if result["kind"] == "mta":
                result["config_hash"] = verify_mta(data)
                result["ok"] = True
                if not as_json:
                    click.echo(f"{f}: OK (MTA file, configuration hash {result['config_hash']})")
                continue
            if secret is None:  # what a modem checks; the CMTS MIC needs the CMTS's secret
                verify_cm_mic(data)
                result.update(ok=True, cm_mic="ok", cmts_mic="not checked")
                if not as_json:
                    click.echo(f"{f}: CM MIC OK; CMTS MIC not checked (no --secret-file)")
                continue
            verify_bytes(data, secret)
            result.update(ok=True, cm_mic="ok", cmts_mic="ok")
            if not as_json:
                click.echo(f"{f}: OK (CM MIC and CMTS MIC)")
        except ConfigError as err:
            result["error"] = str(err)
            failed.append(f"{f}: {err}")
    if as_json:
        click.echo(json.dumps(results, indent=2))
    if failed:
        if len(failed) > 1 or len(files) > 1:
            for line in failed[:-1]:
                click.echo(f"hfcprov: error: {line}", err=True)
        raise HfcprovError(failed[-1])


@config.command()
@click.argument("a", type=click.Path(dir_okay=False))
@click.argument("b", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help='Print {"a", "b", "same", "differences": [...]} instead.')
def diff(a, b, as_json):
    """Semantic differences between two configs (any forms), by TLV path. Exit 1 if they differ."""
    import json

    from hfcprov.config.diff import diff_trees

    lines = diff_trees(config_files.read(a), config_files.read(b))
    if as_json:
        click.echo(json.dumps({"a": a, "b": b, "same": not lines, "differences": lines}, indent=2))
    for line in [] if as_json else lines:
        click.echo(line)
    if lines:
        sys.exit(1)  # like diff(1); SystemExit passes through the CLI root untouched


@config.command()
@click.argument("pattern", required=False)
def tlvs(pattern):
    """List the TLV dictionary (path, name, type, length, range, spec); PATTERN filters by name or path."""
    from hfcprov.config.dictionary import ROOT, tlv_line

    for spec in ROOT.walk():
        line = tlv_line(spec)
        if pattern and not _matches(pattern, spec, line):
            continue
        click.echo(line)


def _matches(pattern: str, spec, line: str) -> bool:
    p = pattern.lower()
    if any(ch in p for ch in "*?["):
        return fnmatch.fnmatch(spec.name.lower(), p) or fnmatch.fnmatch(spec.path, p)
    return p in spec.name.lower() or spec.path == p or spec.path.startswith(p + ".") or \
        any(p in a.lower() for a in spec.aliases)
